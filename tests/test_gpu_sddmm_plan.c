/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans on the GPU: each plan built from a copy of S that is freed
 * before it runs, then runs with new A and B every time, each result
 * checked against the float64 reference (<= 1e-12 of every entry's
 * rounding scale in fp64, <= 1e-5 in fp32) in an output poisoned with NaN
 * first: host arrays (and, when the one-shot tf_sddmm chose the same
 * kernel, bit-equal to it); A, B and P in GPU memory (cudaMalloc, as a
 * user's program has them) read and written in place; rows padded to
 * ld > K with NaN in the padding; data one element off 16-byte alignment;
 * the caller's own stream; managed A, host B, device P; pinned host P.
 * Every scheme (auto, row, sm-l2, sm-sm, cuSPARSE) in fp64 and fp32, K = 1,
 * 7, 32, 33, 100, 128. Then the bad inputs: GPU arrays of the wrong
 * precision, memory that says host but is GPU memory and the reverse, a
 * misaligned GPU P, GPU arrays on a CPU plan, a plan after free (debug
 * builds), each a one-line TF_ERR_ARG, the plan still right afterwards.
 * --quick: small cases only (for compute-sanitizer). Exits 77 without a GPU. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "sddmm_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Compares n values of prec at host p with the reference. */
static void check_p(const char *what, const char *how, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                    const tf_sddmm_opts *o, const void *p, tf_precision prec, const double *ref, double *tmp)
{
    dt_doubles(p, prec, S->nnz, tmp);
    const double tol = o->precision == TF_DOUBLE ? 1e-12 : 1e-5;
    const double err = st_max_err(S, A, B, o, tmp, ref);
    CHECKF(err <= tol, "%s (%s): K=%llu algo=%d prec=%d op=%d beta=%g: error %.3g > %.1g", what, how,
           (unsigned long long)A->cols, (int)o->algo, (int)o->precision, (int)o->op, o->beta, err, tol);
}

static int same_kernel(const tf_sddmm_info *a, const tf_sddmm_info *b)
{
    return a->algo == b->algo && a->tile_i == b->tile_i && a->tile_j == b->tile_j && a->tile_k == b->tile_k &&
           a->vwarp == b->vwarp && a->nper == b->nper && a->a_regs == b->a_regs && a->blocks == b->blocks;
}

static void check_plan(const char *what, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_rng *rng, int runs)
{
    tf_sddmm_plan *plan = st_plan_from_copy(what, S, K, o);
    if (!plan) return;
    tf_sddmm_info info;
    CHECK_OK(tf_sddmm_plan_info(plan, &info));
    CHECK(info.backend == TF_BACKEND_GPU);
    if (o->algo != TF_SDDMM_ALGO_AUTO) CHECK(info.algo == o->algo);
    const tf_precision pr = o->precision;
    const size_t w = pr == TF_SINGLE ? 4 : 8;
    const uint64_t M = S->rows, N = S->cols, nnz = S->nnz, ldp = K + 3;
    double *ref = NULL, *tmp = NULL, *P = NULL, *one = NULL;
    unsigned char *hp = NULL;
    CHECK_OK(TF_ALLOC(ref, nnz, "ref"));
    CHECK_OK(TF_ALLOC(tmp, nnz, "tmp"));
    CHECK_OK(TF_ALLOC(P, nnz, "P"));
    CHECK_OK(TF_ALLOC(one, nnz, "one-shot P"));
    CHECK_OK(TF_ALLOC(hp, nnz * 8, "P from the GPU"));
    dt_gpu_arr dA = dt_gpu_new(M * ldp * w, TF_TEST_DEVICE), dB = dt_gpu_new(N * ldp * w, TF_TEST_DEVICE);
    dt_gpu_arr dP = dt_gpu_new(nnz * w, TF_TEST_DEVICE), mA = dt_gpu_new(M * K * w, TF_TEST_MANAGED);
    dt_gpu_arr pinned = dt_gpu_new(nnz * 8, TF_TEST_PINNED);
    void *stream = NULL;
    CHECK_OK(tf_test_gpu_stream(&stream));
    for (int r = 0; r < runs; ++r) {
        tf_matrix A = tt_random_dense(rng, M, K), B = tt_random_dense(rng, N, K);
        CHECK_OK(tf_sddmm_reference(S, &A, &B, o->op, o->alpha, o->beta, ref));
        /* host arrays */
        const tf_dense ha = tf_dense_host(&A), hb = tf_dense_host(&B);
        const tf_dense hP = dt_dense(P, nnz, 1, 0, TF_DOUBLE, TF_MEMORY_AUTO);
        st_poison(P, nnz);
        CHECK_OK(tf_sddmm_plan_run(plan, &ha, &hb, &hP, NULL));
        check_p(what, "host arrays", S, &A, &B, o, P, TF_DOUBLE, ref, tmp);
        tf_sddmm_info oinfo;
        st_poison(one, nnz);
        CHECK_OK(tf_sddmm(S, &A, &B, o, one, &oinfo));
        check_p(what, "one-shot", S, &A, &B, o, one, TF_DOUBLE, ref, tmp);
        if (same_kernel(&info, &oinfo)) CHECKF(!memcmp(one, P, nnz * 8), "%s: plan and one-shot differ", what);
        /* GPU arrays in the kernels' layout (read in place when K fills 16 bytes), memory told by the pointer */
        dt_gpu_put(&dA, &A, K, pr, 0);
        dt_gpu_put(&dB, &B, K, pr, 0);
        CHECK_OK(tf_test_gpu_fill(dP.data, 0xff, nnz * w)); /* NaN */
        tf_dense da = dt_dense(dA.data, M, K, 0, pr, TF_MEMORY_AUTO), db = dt_dense(dB.data, N, K, K, pr, TF_MEMORY_AUTO);
        tf_dense dp = dt_dense(dP.data, nnz, 1, 1, pr, TF_MEMORY_AUTO);
        CHECK_OK(tf_sddmm_plan_run(plan, &da, &db, &dp, NULL));
        CHECK_OK(tf_test_gpu_get(hp, dP.data, nnz * w));
        check_p(what, "GPU arrays", S, &A, &B, o, hp, pr, ref, tmp);
        /* rows padded with NaN, said to be GPU memory, on the caller's stream */
        dt_gpu_put(&dA, &A, ldp, pr, 0);
        dt_gpu_put(&dB, &B, ldp, pr, 0);
        CHECK_OK(tf_test_gpu_fill(dP.data, 0xff, nnz * w));
        da = dt_dense(dA.data, M, K, ldp, pr, TF_MEMORY_DEVICE);
        db = dt_dense(dB.data, N, K, ldp, pr, TF_MEMORY_DEVICE);
        dp.memory = TF_MEMORY_DEVICE;
        const tf_sddmm_run_opts ro = {stream, NULL, 0};
        CHECK_OK(tf_sddmm_plan_run(plan, &da, &db, &dp, &ro));
        CHECK_OK(tf_test_gpu_stream_wait(stream));
        CHECK_OK(tf_test_gpu_get(hp, dP.data, nnz * w));
        check_p(what, "padded GPU arrays, own stream", S, &A, &B, o, hp, pr, ref, tmp);
        /* one element off 16-byte alignment; P in pinned host memory */
        dt_gpu_put(&dA, &A, K, pr, w);
        dt_gpu_put(&dB, &B, K, pr, w);
        da = dt_dense(dA.data, M, K, K, pr, TF_MEMORY_AUTO);
        db = dt_dense(dB.data, N, K, K, pr, TF_MEMORY_AUTO);
        dt_poison_as(pinned.data, pr, nnz);
        const tf_dense pp = dt_dense(pinned.data, nnz, 1, 1, pr, TF_MEMORY_AUTO);
        CHECK_OK(tf_sddmm_plan_run(plan, &da, &db, &pp, NULL));
        check_p(what, "misaligned GPU arrays, pinned P", S, &A, &B, o, pinned.data, pr, ref, tmp);
        /* managed A, host B (of the plan's precision), GPU P */
        dt_gpu_put(&mA, &A, K, pr, 0);
        void *hb2 = dt_host_values(&B, K, pr);
        const tf_dense ma = dt_dense(mA.data, M, K, K, pr, TF_MEMORY_AUTO);
        const tf_dense hb_ = dt_dense(hb2, N, K, K, pr, TF_MEMORY_HOST);
        CHECK_OK(tf_test_gpu_fill(dP.data, 0xff, nnz * w));
        dp.memory = TF_MEMORY_AUTO;
        CHECK_OK(tf_sddmm_plan_run(plan, &ma, &hb_, &dp, NULL));
        CHECK_OK(tf_test_gpu_get(hp, dP.data, nnz * w));
        check_p(what, "managed A, host B, GPU P", S, &A, &B, o, hp, pr, ref, tmp);
        tf_free(hb2);
        tf_matrix_free(&A);
        tf_matrix_free(&B);
    }
    double t[2];
    tf_matrix A = tt_random_dense(rng, M, K), B = tt_random_dense(rng, N, K);
    const tf_dense ha = tf_dense_host(&A), hb = tf_dense_host(&B);
    CHECK_OK(tf_sddmm_plan_time(plan, &ha, &hb, 1, 2, t));
    CHECK(t[0] > 0 && t[1] > 0);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_test_gpu_stream_free(stream);
    dt_gpu_del(&dA);
    dt_gpu_del(&dB);
    dt_gpu_del(&dP);
    dt_gpu_del(&mA);
    dt_gpu_del(&pinned);
    tf_free(ref);
    tf_free(tmp);
    tf_free(P);
    tf_free(one);
    tf_free(hp);
    tf_sddmm_plan_free(plan);
}

static void random_cases(int quick)
{
    tf_rng rng;
    tf_rng_seed(&rng, 6701);
    const struct { uint64_t M, N, nnz; int hot; } shapes[] = {
        {1, 1, 1, 0}, {7, 3, 12, 0}, {300, 200, 4000, 1}, {1000, 37, 6000, 1}, {50, 2000, 9000, 0}};
    const uint64_t Ks[] = {1, 7, 32, 33, 100, 128};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        if (quick && shapes[si].nnz > 4000) continue;
        tf_csr S = st_random_csr(&rng, shapes[si].M, shapes[si].N, shapes[si].nnz, shapes[si].hot);
        for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
            if (quick && Ks[ki] > 33) continue;
            for (size_t ai = 0; ai < ST_GPU_ALGOS; ++ai)
                for (int prec = 0; prec < 2; ++prec) {
                    const tf_sddmm_algo algo = st_gpu_algos[ai];
                    tf_sddmm_opts o = st_gpu_opts(algo, prec);
                    if (algo != TF_SDDMM_ALGO_CUSPARSE && (ki + ai) % 2) { /* cuSPARSE: sampling only */
                        o.op = TF_SDDMM_SCALE;
                        o.alpha = -1.5;
                        o.beta = 0.75;
                    }
                    if (algo == TF_SDDMM_ALGO_ROW && ki % 3 == 1) { /* one fixed configuration */
                        o.vwarp = 4;
                        o.nper = 5;
                        o.a_regs = -1;
                    }
                    check_plan("random", &S, Ks[ki], &o, &rng, algo == TF_SDDMM_ALGO_AUTO ? 3 : 2);
                }
        }
        tf_csr_free(&S);
    }
}


static void bad_inputs(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 6702);
    tf_csr S = st_random_csr(&rng, 60, 40, 500, 1);
    const uint64_t K = 8, M = S.rows, N = S.cols, nnz = S.nnz;
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.precision = TF_SINGLE;
    tf_sddmm_plan *plan = NULL;
    CHECK_OK(tf_sddmm_plan_build(&S, K, &o, &plan));
    tf_matrix A = tt_random_dense(&rng, M, K), B = tt_random_dense(&rng, N, K);
    dt_gpu_arr fA = dt_gpu_new(M * K * 4, TF_TEST_DEVICE), dA = dt_gpu_new(M * K * 8, TF_TEST_DEVICE);
    dt_gpu_arr fB = dt_gpu_new(N * K * 4, TF_TEST_DEVICE), fP = dt_gpu_new(nnz * 8, TF_TEST_DEVICE);
    dt_gpu_put(&fA, &A, K, TF_SINGLE, 0);
    dt_gpu_put(&dA, &A, K, TF_DOUBLE, 0);
    dt_gpu_put(&fB, &B, K, TF_SINGLE, 0);
    const tf_dense a = dt_dense(fA.data, M, K, K, TF_SINGLE, TF_MEMORY_AUTO);
    const tf_dense b = dt_dense(fB.data, N, K, K, TF_SINGLE, TF_MEMORY_AUTO);
    const tf_dense p = dt_dense(fP.data, nnz, 1, 1, TF_SINGLE, TF_MEMORY_AUTO);
    double *P = NULL, *ref = NULL;
    CHECK_OK(TF_ALLOC(P, nnz, "P"));
    CHECK_OK(TF_ALLOC(ref, nnz, "ref"));
    tf_dense x = a;
    x.data = dA.data; /* doubles in GPU memory for a float plan */
    x.precision = TF_DOUBLE;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &x, &b, &p, NULL), TF_ERR_ARG,
                "A is GPU memory of doubles; this plan computes in float");
    x = a;
    x.memory = TF_MEMORY_HOST;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &x, &b, &p, NULL), TF_ERR_ARG, "A is GPU memory, but its memory says TF_MEMORY_HOST");
    tf_dense hP = dt_dense(P, nnz, 1, 1, TF_DOUBLE, TF_MEMORY_DEVICE);
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &hP, NULL), TF_ERR_ARG, "P is not GPU memory");
    x = p;
    x.data = (unsigned char *)fP.data + 2;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, "not aligned");
    /* the plan is still right, and no CUDA error was left behind */
    hP.memory = TF_MEMORY_HOST;
    st_poison(P, nnz);
    CHECK_OK(tf_sddmm_plan_run(plan, &a, &b, &hP, NULL));
    CHECK_OK(tf_sddmm_reference(&S, &A, &B, o.op, o.alpha, o.beta, ref));
    CHECK(st_max_err(&S, &A, &B, &o, P, ref) <= 1e-5);
    tf_sddmm_plan_free(plan);
#ifndef NDEBUG
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &hP, NULL), TF_ERR_ARG, "the plan was freed");
#endif
    /* GPU arrays on a CPU plan */
    o.backend = TF_BACKEND_CPU;
    CHECK_OK(tf_sddmm_plan_build(&S, K, &o, &plan));
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &hP, NULL), TF_ERR_ARG, "A points to memory of GPU 0");
    tf_sddmm_plan_free(plan);
    dt_gpu_del(&fA);
    dt_gpu_del(&dA);
    dt_gpu_del(&fB);
    dt_gpu_del(&fP);
    tf_free(P);
    tf_free(ref);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_csr_free(&S);
}

/* tf_sddmm_plan_build_once: under auto the row scheme with nothing timed,
 * runs equal to the reference (fp64, poisoned P) and, bit for bit, to a tuned
 * plan forced to the same configuration; a forced algorithm is honoured. */
static void build_once(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 6703);
    tf_csr S = st_random_csr(&rng, 300, 200, 6000, 1);
    const uint64_t K = 33, nnz = S.nnz;
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    tf_sddmm_plan *plan = NULL, *forced = NULL;
    CHECK_OK(tf_sddmm_plan_build_once(&S, K, &o, &plan));
    tf_sddmm_info info;
    CHECK_OK(tf_sddmm_plan_info(plan, &info));
    CHECK(info.backend == TF_BACKEND_GPU && info.algo == TF_SDDMM_ALGO_ROW);
    tf_sddmm_opts f = o; /* the same configuration, forced, through the tuned build */
    f.algo = TF_SDDMM_ALGO_ROW, f.vwarp = info.vwarp, f.nper = info.nper, f.a_regs = info.a_regs ? 1 : -1;
    CHECK_OK(tf_sddmm_plan_build(&S, K, &f, &forced));
    tf_matrix A = tt_random_dense(&rng, S.rows, K), B = tt_random_dense(&rng, S.cols, K);
    double *P = NULL, *Q = NULL, *ref = NULL;
    CHECK_OK(TF_ALLOC(P, nnz, "P"));
    CHECK_OK(TF_ALLOC(Q, nnz, "Q"));
    CHECK_OK(TF_ALLOC(ref, nnz, "ref"));
    CHECK_OK(tf_sddmm_reference(&S, &A, &B, o.op, o.alpha, o.beta, ref));
    st_poison(P, nnz);
    st_poison(Q, nnz);
    const tf_dense a = tf_dense_host(&A), b = tf_dense_host(&B);
    const tf_dense p = {P, nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST}, q = {Q, nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    CHECK_OK(tf_sddmm_plan_run(plan, &a, &b, &p, NULL));
    CHECK_OK(tf_sddmm_plan_run(forced, &a, &b, &q, NULL));
    CHECK(st_max_err(&S, &A, &B, &o, P, ref) <= 1e-12);
    CHECK(memcmp(P, Q, nnz * sizeof *P) == 0);
    tf_sddmm_plan_free(plan);
    tf_sddmm_plan_free(forced);
    o.algo = TF_SDDMM_ALGO_SM_L2; /* a forced algorithm stays what it is */
    CHECK_OK(tf_sddmm_plan_build_once(&S, K, &o, &plan));
    CHECK_OK(tf_sddmm_plan_info(plan, &info));
    CHECK(info.algo == TF_SDDMM_ALGO_SM_L2);
    tf_sddmm_plan_free(plan);
    tf_free(P), tf_free(Q), tf_free(ref);
    tf_matrix_free(&A), tf_matrix_free(&B);
    tf_csr_free(&S);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_sddmm_plan", "no GPU");
    build_once();
    random_cases(quick);
    bad_inputs();
    return tf_test_finish("test_gpu_sddmm_plan");
}
