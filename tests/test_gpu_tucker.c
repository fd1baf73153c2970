/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse Tucker on one GPU (src/gpu/tucker) against float64 references and
 * the CPU backend:
 * - the TTMc pass alone (tests/hooks/tucker_check.cu: Y and the pass's edge
 *   rows poisoned with NaN first) against a plain float64 loop over the
 *   non-zeros and against the CPU's tf_ttmc, every entry: orders 3 and 4, a
 *   mode of length 1 (one row across every chunk), a mode of 3 (rows across
 *   many chunks), modes with empty rows, products of the other ranks from 1
 *   to 600 (one lane group of 1..256 columns, and slabs of 256), and the
 *   bundled uber-apr14 (4 modes, 416,744 non-zeros);
 * - whole HOOI runs from the same start on the GPU and the CPU: the fit of
 *   every iteration within 1e-10, the factors' subspaces equal (r -
 *   ||U_cpu^T U_gpu||_F^2 within 1e-8) and, where the vectors themselves
 *   agree (signs fixed alike), the cores within 1e-7; both Grams (Y Y^T, Y^T Y) forced and
 *   by the sizes; random tensors of 3 and 4 modes, uber-apr14 and the
 *   shared tensors ($TF_TEST_DATA: enron-igraphdata, when there);
 * - what the GPU lacks or cannot hold: the subspace method forced on the
 *   GPU is TF_ERR_UNAVAILABLE and runs on the CPU under auto; a context
 *   whose limit holds nothing fails with TF_ERR_NOMEM naming it, and runs
 *   on the CPU under auto, saying why;
 * - with 2 GPUs present, every run also on both (per mode each GPU owns a
 *   range of rows of Y_(n), its non-zeros cut out of the tensor sorted by
 *   the mode on that GPU -- and, for the small random tensors, out of the
 *   host's sort, tuning.fcoo_build 1): the same checks against the CPU.
 * --quick: the small cases only. Exits 77 without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hooks/tucker_check.h"
#include "kt_test_util.h"
#include "realdata.h"
#include "spttm_test_util.h"
#include "tenfold.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* ------------------------------------------------------------ TTMc */

static uint64_t cols_of(const tf_tensor *X, uint32_t n, const tf_matrix *U)
{
    uint64_t C = 1;
    for (uint32_t k = 0; k < X->order; ++k)
        if (k != n) C *= U[k].cols;
    return C;
}

/* The plain float64 Y_(n) and the sums of |terms| per entry. */
static void ref_ttmc(const tf_tensor *X, uint32_t n, const tf_matrix *U, double *ref, double *mag)
{
    const uint64_t C = cols_of(X, n, U), len = X->dims[n] * C;
    memset(ref, 0, len * sizeof *ref);
    memset(mag, 0, len * sizeof *mag);
    for (uint64_t j = 0; j < X->nnz; ++j) {
        double *y = ref + (uint64_t)X->ind[n][j] * C, *m = mag + (uint64_t)X->ind[n][j] * C;
        for (uint64_t c = 0; c < C; ++c) {
            uint64_t rest = c;
            double v = X->vals[j];
            for (uint32_t k = 0; k < X->order; ++k) {
                if (k == n) continue;
                v *= U[k].data[(uint64_t)X->ind[k][j] * U[k].cols + rest % U[k].cols];
                rest /= U[k].cols;
            }
            y[c] += v;
            m[c] += fabs(v);
        }
    }
}

/* Random factors (the mode n's too: not read) in [-1, 1). */
static void random_factors(tf_rng *rng, const tf_tensor *X, const uint64_t *R, tf_matrix *U)
{
    for (uint32_t k = 0; k < X->order; ++k) {
        CHECK_OK(tf_matrix_alloc(&U[k], X->dims[k], R[k]));
        for (uint64_t e = 0; e < X->dims[k] * R[k]; ++e) U[k].data[e] = 2.0 * tf_rng_uniform(rng) - 1.0;
    }
}

/* Every mode's GPU TTMc against the loop and tf_ttmc; returns the edge rows seen. */
static uint64_t check_ttmc(const char *what, const tf_tensor *X, const uint64_t *R, tf_rng *rng)
{
    tf_matrix U[TF_MAX_ORDER];
    random_factors(rng, X, R, U);
    uint64_t edges = 0;
    for (uint32_t n = 0; n < X->order; ++n) {
        const uint64_t C = cols_of(X, n, U), len = X->dims[n] * C;
        double *ref = malloc(len * sizeof *ref), *mag = malloc(len * sizeof *mag), *got = kt_poisoned(len);
        ref_ttmc(X, n, U, ref, mag);
        uint64_t e = 0;
        const tf_status s = tf_gpu_check_ttmc(X, n, U, got, &e);
        CHECKF(s == TF_OK, "%s mode %u: %s", what, n + 1, tf_last_error());
        edges += e;
        tf_ttmc_opts o;
        tf_ttmc_opts_default(&o);
        o.backend = TF_BACKEND_CPU;
        tf_matrix cpu;
        CHECK_OK(tf_ttmc(X, n, U, &o, &cpu));
        uint64_t bad = 0;
        for (uint64_t i = 0; s == TF_OK && i < len; ++i) {
            if (!kt_close(got[i], ref[i], mag[i], 1e-12) || !kt_close(got[i], cpu.data[i], mag[i], 1e-12)) {
                if (bad++ < 3)
                    CHECKF(0, "%s mode %u: Y(%llu, %llu) is %.17g, the loop %.17g, tf_ttmc %.17g", what, n + 1,
                           (unsigned long long)(i / C), (unsigned long long)(i % C), got[i], ref[i], cpu.data[i]);
            }
        }
        CHECKF(bad == 0, "%s mode %u: %llu of %llu entries of Y differ", what, n + 1, (unsigned long long)bad,
               (unsigned long long)len);
        /* the same bits on a second run, and through tf_ttmc on the GPU */
        double *again = kt_poisoned(len);
        if (s == TF_OK && tf_gpu_check_ttmc(X, n, U, again, &e) == TF_OK)
            CHECKF(memcmp(again, got, len * sizeof *got) == 0, "%s mode %u: a second run differs", what, n + 1);
        tf_ttmc_info info;
        o.backend = TF_BACKEND_GPU;
        o.info = &info;
        tf_matrix gpu;
        const tf_status sg = tf_ttmc(X, n, U, &o, &gpu);
        CHECKF(sg == TF_OK && info.backend == TF_BACKEND_GPU, "%s mode %u: tf_ttmc on the GPU: %s", what, n + 1,
               tf_last_error());
        if (sg == TF_OK) {
            CHECKF(s != TF_OK || memcmp(gpu.data, got, len * sizeof *got) == 0,
                   "%s mode %u: tf_ttmc on the GPU differs from the pass", what, n + 1);
            tf_matrix_free(&gpu);
        }
        tf_matrix_free(&cpu);
        free(ref);
        free(mag);
        free(got);
        free(again);
    }
    for (uint32_t k = 0; k < X->order; ++k) tf_matrix_free(&U[k]);
    return edges;
}

static void ttmc_cases(tf_rng *rng, int quick)
{
    static const struct {
        uint32_t order;
        uint64_t dims[4], nnz, ranks[4];
        int hot;
    } cases[] = {
        {3, {40, 30, 20}, 900, {2, 3, 4}, -1},
        {3, {1, 300, 200}, 5000, {1, 5, 3}, -1},    /* one row: across every chunk */
        {3, {3, 500, 400}, 20000, {2, 16, 16}, -1}, /* C = 256 on mode 1: one group a block */
        {3, {500, 3, 400}, 20000, {20, 3, 30}, 1},  /* C = 600: slabs of 256 */
        {3, {2000, 60, 50}, 3000, {4, 1, 1}, -1},   /* C = 1 on mode 1; empty rows */
        {4, {30, 1, 25, 20}, 4000, {3, 1, 4, 2}, -1},
        {4, {50, 40, 30, 6}, 30000, {4, 5, 3, 2}, 0},
        {3, {100000, 40, 30}, 2000, {3, 4, 5}, -1}, /* mostly empty rows */
    };
    uint64_t edges = 0;
    for (size_t i = 0; i < COUNT(cases); ++i) {
        if (quick && cases[i].nnz > 5000) continue;
        tf_tensor X = sp_random_tensor(rng, cases[i].order, cases[i].dims, cases[i].nnz, cases[i].hot);
        char what[64];
        snprintf(what, sizeof what, "TTMc case %zu", i + 1);
        edges += check_ttmc(what, &X, cases[i].ranks, rng);
        tf_tensor_free(&X);
    }
    CHECKF(edges > 0, "no case had rows across the chunks of the pass");
    if (quick) return;
    tf_tensor X;
    if (kt_read_uber(&X)) {
        const uint64_t R[] = {3, 4, 5, 6};
        check_ttmc("TTMc uber-apr14", &X, R, rng);
        tf_tensor_free(&X);
    }
}

/* ------------------------------------------------------------ HOOI */

/* r - ||U_a^T U_b||_F^2 (0 when the column spaces are equal), and in
 * *column the largest 1 - |u_a,j . u_b,j| (0 when the vectors are too). */
static double subspace_gap(const tf_matrix *A, const tf_matrix *B, double *column)
{
    double fro = 0.0;
    *column = 0.0;
    for (uint64_t i = 0; i < A->cols; ++i)
        for (uint64_t j = 0; j < B->cols; ++j) {
            double s = 0.0;
            for (uint64_t r = 0; r < A->rows; ++r) s += A->data[r * A->cols + i] * B->data[r * B->cols + j];
            fro += s * s;
            if (i == j && 1.0 - fabs(s) > *column) *column = 1.0 - fabs(s);
        }
    return fabs((double)A->cols - fro);
}

/* From the same (random) start: the CPU and the GPU (of ctx: NULL one, or
 * several), every fit within 1e-10, the subspaces and cores alike. */
static void compare_on(const char *what, const tf_tensor *X, const uint64_t *ranks, tf_tucker_svd svd, uint32_t iters,
                       tf_context *ctx)
{
    tf_tucker_opts o;
    tf_tucker_opts_default(&o);
    memcpy(o.ranks, ranks, X->order * sizeof *ranks);
    o.max_iters = iters;
    o.tol = 0;
    o.svd = svd;
    tf_ttensor Tc, Tg;
    tf_tucker_report rc, rg;
    o.backend = TF_BACKEND_CPU;
    tf_status s = tf_tucker(X, &o, &Tc, &rc);
    CHECKF(s == TF_OK, "%s on the CPU: %s", what, tf_last_error());
    if (s != TF_OK) return;
    o.backend = TF_BACKEND_GPU;
    o.context = ctx;
    s = tf_tucker(X, &o, &Tg, &rg);
    CHECKF(s == TF_OK, "%s on the GPU: %s", what, tf_last_error());
    if (s != TF_OK) {
        tf_ttensor_free(&Tc);
        tf_tucker_report_free(&rc);
        return;
    }
    CHECKF(rg.backend == TF_BACKEND_GPU && !strncmp(rg.plan, ctx ? "2 GPUs" : "GPU", ctx ? 6 : 3), "%s: ran on %s (%s)",
           what, tf_backend_name(rg.backend), rg.plan);
    CHECKF(rg.iters == rc.iters, "%s: %u iterations on the GPU, %u on the CPU", what, rg.iters, rc.iters);
    for (uint32_t i = 0; i < rg.iters && i < rc.iters; ++i)
        CHECKF(fabs(rg.iterations[i].fit - rc.iterations[i].fit) <= 1e-10,
               "%s: iteration %u: fit %.15g on the GPU, %.15g on the CPU", what, i + 1, rg.iterations[i].fit,
               rc.iterations[i].fit);
    int same_vectors = 1;
    for (uint32_t m = 0; m < X->order; ++m) {
        CHECKF(rg.svd_method[m] == rc.svd_method[m], "%s mode %u: method %d on the GPU, %d on the CPU", what, m + 1,
               (int)rg.svd_method[m], (int)rc.svd_method[m]);
        double column = 0.0;
        const double gap = subspace_gap(&Tc.factors[m], &Tg.factors[m], &column);
        CHECKF(gap <= 1e-8, "%s mode %u: r - ||U_cpu^T U_gpu||_F^2 is %.3g (the subspaces differ)", what, m + 1, gap);
        if (column > 1e-8) same_vectors = 0; /* a rotation inside a (near-)repeated singular value */
    }
    /* the core, where the vectors themselves agree (signs fixed alike) */
    uint64_t core = 1;
    double gmax = 0.0, dmax = 0.0;
    for (uint32_t m = 0; m < X->order; ++m) core *= ranks[m];
    for (uint64_t e = 0; e < core; ++e) {
        gmax = fmax(gmax, fabs(Tc.core[e]));
        dmax = fmax(dmax, fabs(Tc.core[e] - Tg.core[e]));
    }
    if (same_vectors)
        CHECKF(dmax <= 1e-7 * (gmax > 1.0 ? gmax : 1.0), "%s: the cores differ by %.3g (largest entry %.3g)", what,
               dmax, gmax);
    else
        printf("%s: vectors rotated within a repeated singular value; the core not compared\n", what);
    tf_ttensor_free(&Tc);
    tf_ttensor_free(&Tg);
    tf_tucker_report_free(&rc);
    tf_tucker_report_free(&rg);
}

/* The context of GPUs 0 and 1 (NULL with fewer than 2); host_sort: the
 * sorted copies made by the host's sort (tuning.fcoo_build 1), not the
 * device's. */
static tf_context *two_gpus_x(int host_sort)
{
    if (tf_gpu_count() < 2) return NULL;
    tf_context_opts co;
    tf_context_opts_default(&co);
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    if (host_sort) tuning.fcoo_build = 1;
    co.tuning = &tuning;
    co.backend = TF_BACKEND_GPU;
    co.ndevices = 2;
    co.devices[0] = 0, co.devices[1] = 1;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    return ctx;
}

static tf_context *two_gpus(void) { return two_gpus_x(0); }

/* On one GPU, and on two where there are: each GPU's rows of every mode
 * cut out of the order sorted on the device, and (host_too) out of the
 * host's sort. */
static void compare_runs_x(const char *what, const tf_tensor *X, const uint64_t *ranks, tf_tucker_svd svd,
                           uint32_t iters, int host_too)
{
    compare_on(what, X, ranks, svd, iters, NULL);
    for (int host = 0; host <= host_too; ++host) {
        tf_context *two = two_gpus_x(host);
        if (!two) break;
        char w[160];
        snprintf(w, sizeof w, "%s, 2 GPUs%s", what, host ? ", the host's sort" : "");
        compare_on(w, X, ranks, svd, iters, two);
        tf_context_free(two);
    }
}

static void compare_runs(const char *what, const tf_tensor *X, const uint64_t *ranks, tf_tucker_svd svd, uint32_t iters)
{
    compare_runs_x(what, X, ranks, svd, iters, 0);
}

static void run_cases(tf_rng *rng, int quick)
{
    const uint64_t d3[] = {60, 50, 40}, r3[] = {4, 3, 5};
    const uint64_t d4[] = {30, 25, 1, 20}, r4[] = {3, 2, 1, 4};
    tf_tensor X = sp_random_tensor(rng, 3, d3, 3000, -1);
    compare_runs_x("random 3-mode", &X, r3, TF_TUCKER_SVD_AUTO, 6, 1);
    compare_runs("random 3-mode, Y Y^T", &X, r3, TF_TUCKER_SVD_ROW_GRAM, 4);
    compare_runs("random 3-mode, Y^T Y", &X, r3, TF_TUCKER_SVD_COL_GRAM, 4);
    tf_tensor_free(&X);
    /* a long mode: its Gram Y^T Y in pieces of rows (on an H200, 55 of 18
     * rows and 10 left over on one GPU; about 27 on each of two) */
    const uint64_t dl[] = {1000, 12, 10}, rl[] = {3, 3, 3};
    X = sp_random_tensor(rng, 3, dl, 4000, -1);
    compare_runs("random 1000 x 12 x 10, Y^T Y in pieces", &X, rl, TF_TUCKER_SVD_COL_GRAM, 4);
    tf_tensor_free(&X);
    X = sp_random_tensor(rng, 4, d4, 2500, -1);
    compare_runs_x("random 4-mode", &X, r4, TF_TUCKER_SVD_AUTO, 6, 1);
    compare_runs("random 4-mode, Y Y^T", &X, r4, TF_TUCKER_SVD_ROW_GRAM, 4);
    tf_tensor_free(&X);
    if (quick) return;
    const uint64_t db[] = {3000, 400, 300}, rb[] = {16, 16, 16}; /* C = 256 */
    X = sp_random_tensor(rng, 3, db, 200000, 0);
    compare_runs("random 3000 x 400 x 300, ranks 16", &X, rb, TF_TUCKER_SVD_AUTO, 4);
    tf_tensor_free(&X);
    if (kt_read_uber(&X)) {
        const uint64_t ru[] = {5, 5, 8, 8};
        compare_runs("uber-apr14 5,5,8,8", &X, ru, TF_TUCKER_SVD_AUTO, 5);
        tf_tensor_free(&X);
    }
}

static void on_shared(const char *name, const char *path, tf_tensor *X, void *user)
{
    (void)path;
    (void)user;
    if (strstr(name, "enron") == NULL || X->order != 3) return;
    const uint64_t r[] = {5, 5, 8};
    compare_runs(name, X, r, TF_TUCKER_SVD_AUTO, 4);
}

/* ------------------------------------------------- refusals, fallbacks */

static void limits(tf_rng *rng)
{
    const uint64_t d[] = {5000, 5000, 20}, r[] = {20, 20, 20};
    tf_tensor X = sp_random_tensor(rng, 3, d, 20000, -1);
    tf_tucker_opts o;
    tf_tucker_opts_default(&o);
    memcpy(o.ranks, r, sizeof r);
    o.max_iters = 2;
    o.svd = TF_TUCKER_SVD_SUBSPACE;
    o.backend = TF_BACKEND_GPU;
    tf_ttensor T;
    tf_tucker_report rep;
    CHECK_FAILS(tf_tucker(&X, &o, &T, &rep), TF_ERR_UNAVAILABLE, "by the subspace method are not on the GPU yet");
    o.backend = TF_BACKEND_AUTO;
    tf_status s = tf_tucker(&X, &o, &T, &rep);
    CHECKF(s == TF_OK && rep.backend == TF_BACKEND_CPU && strstr(rep.note, "subspace"),
           "subspace under auto: %s, on %s, note '%s'", tf_status_name(s), tf_backend_name(rep.backend), rep.note);
    if (s == TF_OK) {
        tf_ttensor_free(&T);
        tf_tucker_report_free(&rep);
    }
    /* a device limit that holds nothing */
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.memory_limit = 4096;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    o.svd = TF_TUCKER_SVD_AUTO;
    o.ranks[0] = o.ranks[1] = 4, o.ranks[2] = 3;
    o.context = ctx;
    o.backend = TF_BACKEND_GPU;
    CHECK_FAILS(tf_tucker(&X, &o, &T, &rep), TF_ERR_NOMEM, "do not fit the");
    o.backend = TF_BACKEND_AUTO;
    s = tf_tucker(&X, &o, &T, &rep);
    CHECKF(s == TF_OK && rep.backend == TF_BACKEND_CPU && strstr(rep.note, "running on the CPU"),
           "no room under auto: %s, on %s, note '%s'", tf_status_name(s), tf_backend_name(rep.backend), rep.note);
    if (s == TF_OK) {
        tf_ttensor_free(&T);
        tf_tucker_report_free(&rep);
    }
    tf_context_free(ctx);
    /* auto without a context: the GPU */
    o.context = NULL;
    s = tf_tucker(&X, &o, &T, &rep);
    CHECKF(s == TF_OK && rep.backend == TF_BACKEND_GPU && rep.note[0] == 0, "auto: %s, on %s (%s), note '%s'",
           tf_status_name(s), tf_backend_name(rep.backend), rep.plan, rep.note);
    if (s == TF_OK) {
        tf_ttensor_free(&T);
        tf_tucker_report_free(&rep);
    }
    /* two GPUs: the subspace method refused there too */
    if ((ctx = two_gpus()) != NULL) {
        o.context = ctx;
        o.svd = TF_TUCKER_SVD_SUBSPACE;
        o.backend = TF_BACKEND_GPU;
        CHECK_FAILS(tf_tucker(&X, &o, &T, &rep), TF_ERR_UNAVAILABLE, "by the subspace method are not on the GPU yet");
        tf_context_free(ctx);
    }
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_tucker", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_tucker"));
    ttmc_cases(&rng, quick);
    run_cases(&rng, quick);
    if (!quick) {
        static const char *const suffixes[] = {".tns", ".tns.xz", NULL};
        tf_for_each_data_file("test_gpu_tucker", suffixes, on_shared, NULL);
        limits(&rng);
    }
    return tf_test_finish("test_gpu_tucker");
}
