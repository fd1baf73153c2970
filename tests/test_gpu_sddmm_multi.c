/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans over two GPUs (src/gpu/sddmm/plan.cu): the panels tile S's
 * rows and non-zeros, each within half its heaviest row of nnz / 2, on the
 * context's GPUs in its order; then, for new A and B on every run, the
 * result in an output poisoned with NaN first equals the float64 reference
 * (<= 1e-12 of every entry's rounding scale in fp64, <= 1e-5 in fp32) and
 * the one-GPU plan's (twice that) with A, B and P
 *   - on the host (one host thread per GPU);
 *   - whole on GPU 0, and whole on GPU 1 (read in place by that GPU's
 *     panel, copied peer-to-peer to and from the other), also on the
 *     caller's stream of the plan's first GPU;
 *   - per GPU (tf_sddmm_run_opts.parts): each panel's rows of A (or all of
 *     A), all of B and its slice of P (or all of P) on its own GPU;
 * and tf_sddmm_plan_time_panels gives every panel's time and a whole no
 * shorter than any. fp64 and fp32; K 1, 32, 33, 128; schemes auto, row,
 * sm-l2 and cuSPARSE; the GPUs listed 0,1 and 1,0; patterns: random with a
 * hot row, a row of 40 % of the non-zeros where the halves meet, a single
 * row (panel 0 empty). The one-shot tf_sddmm on the two-GPU context too.
 * Bad input: wrong nparts, parts and A together, a part of the wrong shape,
 * a part's array on the other GPU, a stream of the second GPU, K = 0, a
 * panel number past the last -- one-line TF_ERR_ARG each, the plan still
 * right afterwards. Exits 77 with fewer than two GPUs; --quick (or
 * TF_TEST_QUICK=1) runs a subset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "hooks/device_memory.h"
#include "sddmm_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static tf_context *make_context(int ngpus, int reverse)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = ngpus;
    for (int i = 0; i < ngpus; ++i) co.devices[i] = reverse ? ngpus - 1 - i : i;
    tf_context *c = NULL;
    CHECK_OK(tf_context_create(&co, &c));
    return c;
}

/* bytes of device memory on GPU dev (16 spare). */
static void *dev_alloc(int dev, size_t bytes)
{
    void *p = NULL;
    CHECK_OK(tf_test_gpu_set_device(dev));
    CHECK_OK(tf_test_gpu_alloc(&p, bytes + 16, TF_TEST_DEVICE));
    return p;
}

static void dev_free(void *p) { tf_test_gpu_free(p, TF_TEST_DEVICE); }

/* Rows lo .. lo + rows - 1 of m as prec values (ld = cols) into GPU memory of dev (new). */
static void *dev_rows(int dev, const tf_matrix *m, uint64_t lo, uint64_t rows, tf_precision prec)
{
    const size_t w = prec == TF_SINGLE ? 4 : 8;
    const tf_matrix view = {rows, m->cols, m->data + lo * m->cols};
    void *d = dev_alloc(dev, rows * m->cols * w);
    void *h = dt_host_values(&view, m->cols, prec);
    CHECK_OK(tf_test_gpu_set_device(dev));
    CHECK_OK(tf_test_gpu_put(d, h, rows * m->cols * w));
    tf_free(h);
    return d;
}

/* n values of NaN at GPU memory p of dev. */
static void dev_poison(int dev, void *p, uint64_t n, size_t w)
{
    CHECK_OK(tf_test_gpu_set_device(dev));
    CHECK_OK(tf_test_gpu_fill(p, 0xff, n * w));
}

/* n values of prec from GPU memory of dev into doubles at out. */
static void dev_get(int dev, const void *p, uint64_t n, tf_precision prec, double *out)
{
    const size_t w = prec == TF_SINGLE ? 4 : 8;
    unsigned char *h = NULL;
    CHECK_OK(TF_ALLOC(h, n * w + 1, "P from a GPU"));
    CHECK_OK(tf_test_gpu_set_device(dev));
    CHECK_OK(tf_test_gpu_get(h, p, n * w));
    dt_doubles(h, prec, n, out);
    tf_free(h);
}

/* The panels tile S in order, on the context's GPUs, each within half its
 * heaviest row of the balanced share. */
static void check_panels(const char *what, tf_sddmm_plan *plan, const tf_csr *S, int reverse)
{
    tf_sddmm_info info;
    CHECK_OK(tf_sddmm_plan_info(plan, &info));
    CHECKF(info.panels == 2 && info.backend == TF_BACKEND_GPU, "%s: %u panels on backend %d", what, info.panels,
           (int)info.backend);
    uint64_t heaviest = 0;
    for (uint64_t i = 0; i < S->rows; ++i)
        if (S->rowptr[i + 1] - S->rowptr[i] > heaviest) heaviest = S->rowptr[i + 1] - S->rowptr[i];
    tf_sddmm_panel q[2];
    CHECK_OK(tf_sddmm_plan_panel(plan, 0, &q[0]));
    CHECK_OK(tf_sddmm_plan_panel(plan, 1, &q[1]));
    int ok = q[0].row_lo == 0 && q[0].row_hi == q[1].row_lo && q[1].row_hi == S->rows && q[0].nnz_lo == 0 &&
             q[1].nnz_hi == S->nnz;
    for (int g = 0; g < 2; ++g) {
        ok &= q[g].device == (reverse ? 1 - g : g);
        ok &= q[g].nnz_lo == S->rowptr[q[g].row_lo] && q[g].nnz_hi == S->rowptr[q[g].row_hi];
        ok &= q[g].nnz_hi == q[g].nnz_lo || (q[g].info.backend == TF_BACKEND_GPU && q[g].build_ms > 0);
    }
    const double half = (double)S->nnz / 2.0;
    ok &= (double)q[0].nnz_hi <= half + heaviest / 2.0 + 0.5 && (double)q[0].nnz_hi >= half - heaviest / 2.0 - 0.5;
    CHECKF(ok, "%s: panels rows %llu..%llu..%llu nnz %llu|%llu on GPUs %d,%d (heaviest row %llu)", what,
           (unsigned long long)q[0].row_lo, (unsigned long long)q[0].row_hi, (unsigned long long)q[1].row_hi,
           (unsigned long long)(q[0].nnz_hi - q[0].nnz_lo), (unsigned long long)(q[1].nnz_hi - q[1].nnz_lo),
           q[0].device, q[1].device, (unsigned long long)heaviest);
}

typedef struct check_ctx {
    const char *what;
    const tf_csr *S;
    const tf_matrix *A, *B;
    const tf_sddmm_opts *o;
    const double *ref, *one; /* the float64 reference, the one-GPU plan's result */
    double *tmp;
} check_ctx;

static void check_vals(const check_ctx *c, const char *how, const double *P)
{
    const double tol = c->o->precision == TF_DOUBLE ? 1e-12 : 1e-5;
    const double err = st_max_err(c->S, c->A, c->B, c->o, P, c->ref);
    const double err1 = st_max_err(c->S, c->A, c->B, c->o, P, c->one);
    CHECKF(err <= tol && err1 <= 2 * tol, "%s (%s): K=%llu algo=%d prec=%d op=%d: error %.3g (one GPU: %.3g) > %.1g",
           c->what, how, (unsigned long long)c->A->cols, (int)c->o->algo, (int)c->o->precision, (int)c->o->op, err,
           err1, tol);
}

/* P whole in GPU memory of dev: poisoned, run, checked. */
static void run_whole_on(const check_ctx *c, tf_sddmm_plan *plan, int dev, void *stream)
{
    const tf_csr *S = c->S;
    const tf_precision pr = c->o->precision;
    const size_t w = pr == TF_SINGLE ? 4 : 8;
    const uint64_t K = c->A->cols;
    void *dA = dev_rows(dev, c->A, 0, S->rows, pr), *dB = dev_rows(dev, c->B, 0, S->cols, pr);
    void *dP = dev_alloc(dev, S->nnz * w);
    dev_poison(dev, dP, S->nnz, w);
    const tf_dense a = dt_dense(dA, S->rows, K, K, pr, TF_MEMORY_AUTO);
    const tf_dense b = dt_dense(dB, S->cols, K, 0, pr, TF_MEMORY_DEVICE);
    const tf_dense p = dt_dense(dP, S->nnz, 1, 1, pr, TF_MEMORY_AUTO);
    tf_sddmm_run_opts ro = {stream, NULL, 0};
    CHECK_OK(tf_sddmm_plan_run(plan, &a, &b, &p, stream ? &ro : NULL));
    if (stream) {
        CHECK_OK(tf_test_gpu_set_device(dev));
        CHECK_OK(tf_test_gpu_stream_wait(stream));
    }
    dev_get(dev, dP, S->nnz, pr, c->tmp);
    char how[64];
    snprintf(how, sizeof how, "A, B, P on GPU %d%s", dev, stream ? ", own stream" : "");
    check_vals(c, how, c->tmp);
    dev_free(dA);
    dev_free(dB);
    dev_free(dP);
}

/* Per-GPU operands: panel g's rows of A (all of A when whole_a), all of B,
 * its slice of P (all of P when whole_p) on its own GPU; run, then timed. */
static void run_parts(const check_ctx *c, tf_sddmm_plan *plan, int whole_a, int whole_p)
{
    const tf_csr *S = c->S;
    const tf_precision pr = c->o->precision;
    const size_t w = pr == TF_SINGLE ? 4 : 8;
    const uint64_t K = c->A->cols;
    tf_sddmm_part_operands parts[2];
    void *mem[2][3];
    tf_sddmm_panel q[2];
    for (int g = 0; g < 2; ++g) {
        CHECK_OK(tf_sddmm_plan_panel(plan, (uint32_t)g, &q[g]));
        const int dev = q[g].device;
        const uint64_t rows = whole_a ? S->rows : q[g].row_hi - q[g].row_lo;
        const uint64_t np = whole_p ? S->nnz : q[g].nnz_hi - q[g].nnz_lo;
        mem[g][0] = dev_rows(dev, c->A, whole_a ? 0 : q[g].row_lo, rows, pr);
        mem[g][1] = dev_rows(dev, c->B, 0, S->cols, pr);
        mem[g][2] = dev_alloc(dev, np * w);
        dev_poison(dev, mem[g][2], np, w);
        parts[g].A = dt_dense(mem[g][0], rows, K, K, pr, TF_MEMORY_DEVICE);
        parts[g].B = dt_dense(mem[g][1], S->cols, K, K, pr, TF_MEMORY_AUTO);
        parts[g].P = dt_dense(mem[g][2], np, 1, 1, pr, TF_MEMORY_DEVICE);
    }
    const tf_sddmm_run_opts ro = {NULL, parts, 2};
    CHECK_OK(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro));
    st_poison(c->tmp, S->nnz);
    for (int g = 0; g < 2; ++g) {
        const uint64_t n = q[g].nnz_hi - q[g].nnz_lo;
        const size_t off = whole_p ? q[g].nnz_lo * w : 0;
        if (n) dev_get(q[g].device, (unsigned char *)mem[g][2] + off, n, pr, c->tmp + q[g].nnz_lo);
    }
    char how[64];
    snprintf(how, sizeof how, "per-GPU operands%s%s", whole_a ? ", all of A" : "", whole_p ? ", all of P" : "");
    check_vals(c, how, c->tmp);
    /* timed per panel on the same operands */
    double t[3], part[6];
    CHECK_OK(tf_sddmm_plan_time_panels(plan, NULL, NULL, &ro, 1, 3, t, part));
    int ok = 1;
    for (int r = 0; r < 3; ++r)
        for (int g = 0; g < 2; ++g) {
            const int busy = q[g].nnz_hi > q[g].nnz_lo;
            ok &= busy ? part[r * 2 + g] > 0 && t[r] + 0.005 >= part[r * 2 + g] : part[r * 2 + g] == 0;
        }
    CHECKF(ok, "%s: timed panels %.4f %.4f whole %.4f", c->what, part[0], part[1], t[0]);
    for (int g = 0; g < 2; ++g)
        for (int k = 0; k < 3; ++k) dev_free(mem[g][k]);
}

/* runs runs of the one- and two-GPU plans with new A and B each time. */
static void check_runs(const char *what, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int reverse,
                       tf_sddmm_plan *p1, tf_sddmm_plan *p2, tf_rng *rng, int runs)
{
    const uint64_t nnz = S->nnz;
    double *ref = NULL, *P1 = NULL, *P = NULL, *tmp = NULL;
    CHECK_OK(TF_ALLOC(ref, nnz, "ref"));
    CHECK_OK(TF_ALLOC(P1, nnz, "P one GPU"));
    CHECK_OK(TF_ALLOC(P, nnz, "P"));
    CHECK_OK(TF_ALLOC(tmp, nnz, "tmp"));
    void *stream = NULL;
    CHECK_OK(tf_test_gpu_set_device(reverse ? 1 : 0)); /* the plan's first GPU */
    CHECK_OK(tf_test_gpu_stream(&stream));
    for (int r = 0; r < runs; ++r) {
        tf_matrix A = tt_random_dense(rng, S->rows, K), B = tt_random_dense(rng, S->cols, K);
        CHECK_OK(tf_sddmm_reference(S, &A, &B, o->op, o->alpha, o->beta, ref));
        const tf_dense ha = tf_dense_host(&A), hb = tf_dense_host(&B);
        const tf_dense h1 = dt_dense(P1, nnz, 1, 0, TF_DOUBLE, TF_MEMORY_HOST);
        const tf_dense hp = dt_dense(P, nnz, 1, 0, TF_DOUBLE, TF_MEMORY_AUTO);
        st_poison(P1, nnz);
        CHECK_OK(tf_sddmm_plan_run(p1, &ha, &hb, &h1, NULL));
        const check_ctx c = {what, S, &A, &B, o, ref, P1, tmp};
        check_vals(&c, "one GPU, host arrays", P1);
        st_poison(P, nnz);
        CHECK_OK(tf_sddmm_plan_run(p2, &ha, &hb, &hp, NULL));
        check_vals(&c, "host arrays", P);
        run_whole_on(&c, p2, r % 2, NULL);
        run_whole_on(&c, p2, 1 - r % 2, NULL);
        run_whole_on(&c, p2, reverse ? 1 : 0, stream);
        run_parts(&c, p2, r % 2, r % 3 == 1);
        if (r == 0) { /* the one-shot call on the two-GPU context */
            tf_sddmm_info info;
            st_poison(P, nnz);
            CHECK_OK(tf_sddmm(S, &A, &B, o, P, &info));
            CHECK(info.panels == 2);
            check_vals(&c, "one-shot tf_sddmm", P);
        }
        tf_matrix_free(&A);
        tf_matrix_free(&B);
    }
    tf_test_gpu_stream_free(stream);
    tf_free(ref);
    tf_free(P1);
    tf_free(P);
    tf_free(tmp);
}

static void check_multi(const char *what, const tf_csr *S, uint64_t K, tf_sddmm_opts o, int reverse, tf_rng *rng,
                        int runs)
{
    tf_context *one = make_context(1, 0), *two = make_context(2, reverse);
    o.context = one;
    tf_sddmm_plan *p1 = st_plan_from_copy(what, S, K, &o);
    o.context = two;
    tf_sddmm_plan *p2 = st_plan_from_copy(what, S, K, &o);
    if (p1 && p2) {
        check_panels(what, p2, S, reverse);
        check_runs(what, S, K, &o, reverse, p1, p2, rng, runs);
    }
    tf_sddmm_plan_free(p1);
    tf_sddmm_plan_free(p2);
    tf_context_free(one);
    tf_context_free(two);
}

/* rows x cols with `per` non-zeros in every row but `heavy`, which has `big`. */
static tf_csr heavy_row(tf_rng *rng, uint64_t rows, uint64_t cols, uint64_t per, uint64_t heavy, uint64_t big)
{
    const uint64_t dims[2] = {rows, cols};
    tf_tensor T;
    CHECK_OK(tf_tensor_alloc(&T, 2, dims, (rows - 1) * per + big));
    uint64_t k = 0;
    for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t j = 0; j < (i == heavy ? big : per); ++j, ++k) {
            T.ind[0][k] = (uint32_t)i;
            T.ind[1][k] = (uint32_t)(i == heavy ? j : tt_draw_sparse_index(rng, cols));
            T.vals[k] = tf_rng_uniform(rng) + 0.5;
        }
    CHECK_OK(tf_tensor_canonicalize(&T, NULL, NULL));
    tf_csr S;
    CHECK_OK(tf_csr_from_coo(&T, &S));
    tf_tensor_free(&T);
    return S;
}

static void cases(int quick)
{
    tf_rng rng;
    tf_rng_seed(&rng, 7301);
    tf_csr S[4];
    const char *names[4] = {"random, hot row", "a row of 40 % where the halves meet", "one row (panel 0 empty)",
                            "wide"};
    S[0] = st_random_csr(&rng, 300, 200, 4000, 1);
    S[1] = heavy_row(&rng, 1001, 4000, 3, 500, 2000); /* 3000 + 2000: the middle lands in row 500 */
    S[2] = st_random_csr(&rng, 1, 64, 40, 0);
    S[3] = st_random_csr(&rng, 50, 2000, 9000, 0);
    const uint64_t Ks[] = {1, 32, 33, 128};
    const tf_sddmm_algo algos[] = {TF_SDDMM_ALGO_AUTO, TF_SDDMM_ALGO_ROW, TF_SDDMM_ALGO_SM_L2, TF_SDDMM_ALGO_CUSPARSE};
    for (int si = 0; si < 4; ++si)
        for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
            if (quick && (Ks[ki] > 33 || si == 3)) continue;
            for (int prec = 0; prec < 2; ++prec) {
                const tf_sddmm_algo algo = algos[(si + ki + (size_t)prec) % COUNT(algos)];
                tf_sddmm_opts o = st_gpu_opts(algo, prec);
                if (algo != TF_SDDMM_ALGO_CUSPARSE && ki % 2) { /* cuSPARSE: sampling only */
                    o.op = TF_SDDMM_SCALE;
                    o.alpha = -1.5;
                    o.beta = 0.75;
                }
                check_multi(names[si], &S[si], Ks[ki], o, (int)(ki + (size_t)prec) % 2, &rng, quick ? 2 : 3);
            }
        }
    for (int si = 0; si < 4; ++si) tf_csr_free(&S[si]);
}

static void bad_inputs(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 7302);
    tf_csr S = st_random_csr(&rng, 80, 50, 700, 1);
    const uint64_t K = 8;
    tf_context *two = make_context(2, 0);
    tf_sddmm_opts o = st_gpu_opts(TF_SDDMM_ALGO_AUTO, 0);
    o.context = two;
    tf_sddmm_plan *plan = NULL;
    CHECK_FAILS(tf_sddmm_plan_build(&S, 0, &o, &plan), TF_ERR_ARG, "K = 0");
    CHECK_OK(tf_sddmm_plan_build(&S, K, &o, &plan));
    tf_sddmm_panel q[2], x;
    CHECK_OK(tf_sddmm_plan_panel(plan, 0, &q[0]));
    CHECK_OK(tf_sddmm_plan_panel(plan, 1, &q[1]));
    CHECK_FAILS(tf_sddmm_plan_panel(plan, 2, &x), TF_ERR_ARG, "panel 2 of a plan of 2 panels");
    tf_matrix A = tt_random_dense(&rng, S.rows, K), B = tt_random_dense(&rng, S.cols, K);
    tf_sddmm_part_operands parts[2];
    void *mem[2][3];
    for (int g = 0; g < 2; ++g) {
        const uint64_t rows = q[g].row_hi - q[g].row_lo, np = q[g].nnz_hi - q[g].nnz_lo;
        mem[g][0] = dev_rows(g, &A, q[g].row_lo, rows, TF_DOUBLE);
        mem[g][1] = dev_rows(g, &B, 0, S.cols, TF_DOUBLE);
        mem[g][2] = dev_alloc(g, np * 8);
        parts[g].A = dt_dense(mem[g][0], rows, K, K, TF_DOUBLE, TF_MEMORY_AUTO);
        parts[g].B = dt_dense(mem[g][1], S.cols, K, K, TF_DOUBLE, TF_MEMORY_AUTO);
        parts[g].P = dt_dense(mem[g][2], np, 1, 1, TF_DOUBLE, TF_MEMORY_AUTO);
    }
    const tf_dense ha = tf_dense_host(&A), hb = tf_dense_host(&B);
    tf_sddmm_run_opts ro = {NULL, parts, 1};
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "ro->nparts is 1; the plan has 2 panels");
    ro.nparts = 2;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &ha, NULL, NULL, &ro), TF_ERR_ARG, "not both");
    tf_sddmm_part_operands bad[2] = {parts[0], parts[1]};
    ro.parts = bad;
    bad[1].A.rows = S.rows + 1; /* neither the panel's rows nor all of A */
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "parts[1].A has");
    bad[1] = parts[1];
    bad[0].B.cols = K + 1;
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "parts[0].B has 9 columns, expected 8");
    bad[0] = parts[0];
    bad[1].P.rows = 3;
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "parts[1].P has 3 rows");
    bad[1] = parts[1];
    bad[1].B = parts[0].B; /* GPU 0's B for the panel of GPU 1 */
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG,
                "parts[1].B is memory of GPU 0; panel 1 runs on GPU 1");
    bad[1] = parts[1];
    bad[0].P.precision = TF_SINGLE;
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "parts[0].P holds floats");
    ro.parts = NULL;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &ha, &hb, NULL, &ro), TF_ERR_ARG, "ro->nparts is 2 but ro->parts is NULL");
    /* a stream of the second GPU */
    void *stream = NULL;
    CHECK_OK(tf_test_gpu_set_device(1));
    CHECK_OK(tf_test_gpu_stream(&stream));
    double *P = NULL, *ref = NULL;
    CHECK_OK(TF_ALLOC(P, S.nnz, "P"));
    CHECK_OK(TF_ALLOC(ref, S.nnz, "ref"));
    const tf_dense hp = dt_dense(P, S.nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST);
    const tf_sddmm_run_opts rs = {stream, NULL, 0};
    CHECK_FAILS(tf_sddmm_plan_run(plan, &ha, &hb, &hp, &rs), TF_ERR_ARG, "ro->stream is a stream of GPU 1");
    /* still right */
    CHECK_OK(tf_sddmm_reference(&S, &A, &B, o.op, o.alpha, o.beta, ref));
    st_poison(P, S.nnz);
    CHECK_OK(tf_sddmm_plan_run(plan, &ha, &hb, &hp, NULL));
    CHECK(st_max_err(&S, &A, &B, &o, P, ref) <= 1e-12);
    ro.parts = parts;
    for (int g = 0; g < 2; ++g) dev_poison(g, mem[g][2], q[g].nnz_hi - q[g].nnz_lo, 8);
    CHECK_OK(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro));
    st_poison(P, S.nnz);
    for (int g = 0; g < 2; ++g) dev_get(g, mem[g][2], q[g].nnz_hi - q[g].nnz_lo, TF_DOUBLE, P + q[g].nnz_lo);
    CHECK(st_max_err(&S, &A, &B, &o, P, ref) <= 1e-12);
    tf_test_gpu_stream_free(stream);
    for (int g = 0; g < 2; ++g)
        for (int k = 0; k < 3; ++k) dev_free(mem[g][k]);
    tf_sddmm_plan_free(plan);
    tf_context_free(two);
    tf_free(P);
    tf_free(ref);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_csr_free(&S);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() < 2) return tf_test_skip("test_gpu_sddmm_multi", "fewer than two CUDA devices");
    if (!tf_test_nccl_ok()) /* the caller's arrays name physical GPUs */
        return tf_test_skip("test_gpu_sddmm_multi", "TF_TEST_GPUS: logical GPUs on one physical GPU");
    cases(quick);
    bad_inputs();
    return tf_test_finish("test_gpu_sddmm_multi");
}
