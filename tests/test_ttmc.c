/* SPDX-License-Identifier: BSD-3-Clause */
/* TTMc on the CPU against a plain float64 reference (every non-zero times
 * every column of the Kronecker product, nothing memoised): fresh random
 * tensors of order 2..5 (3 and 4 most) with empty slices and one heavy
 * fibre, random ranks 1..5 per mode, every mode, 1..3 threads (the same
 * bits for every count), the slice path and the short-mode chunks forced,
 * the output poisoned with NaN before each run; the column order against
 * the Tensor Toolbox's by one hand-written case; argument errors; then
 * enron-igraphdata (3 modes) and uber-apr14 (4 modes) from the shared data. */
#include <string.h>

#include "seams/tucker.h"
#include "core/alloc.h"
#include "realdata.h"
#include "spttm_test_util.h"

/* Y (I_n x C) by the definition: for every non-zero and every column c
 * (r_k decoded, the lowest mode fastest), x prod U_k(i_k, r_k). */
static double *reference(const tf_tensor *X, uint32_t n, const tf_matrix *U, uint64_t *cols)
{
    const uint32_t N = X->order;
    uint64_t C = 1;
    for (uint32_t k = 0; k < N; ++k)
        if (k != n) C *= U[k].cols;
    double *Y = calloc(X->dims[n] * C + 1, sizeof *Y);
    for (uint64_t z = 0; z < X->nnz; ++z) {
        double *y = Y + (uint64_t)X->ind[n][z] * C;
        for (uint64_t c = 0; c < C; ++c) {
            uint64_t rest = c;
            double p = X->vals[z];
            for (uint32_t k = 0; k < N; ++k) {
                if (k == n) continue;
                const uint64_t r = rest % U[k].cols;
                rest /= U[k].cols;
                p *= U[k].data[(uint64_t)X->ind[k][z] * U[k].cols + r];
            }
            y[c] += p;
        }
    }
    *cols = C;
    return Y;
}

/* |Y - ref| within tol of the sum of |terms| (the same Y with |x| and |U|). */
static double worst_error(const tf_tensor *X, uint32_t n, const tf_matrix *U, const double *Y, const double *ref)
{
    tf_tensor Xa;
    tf_matrix Ua[TF_MAX_ORDER];
    CHECK_OK(tf_tensor_copy(X, &Xa));
    for (uint64_t z = 0; z < X->nnz; ++z) Xa.vals[z] = fabs(X->vals[z]);
    for (uint32_t k = 0; k < X->order; ++k) {
        Ua[k] = U[k];
        if (k == n) continue;
        CHECK_OK(tf_matrix_alloc(&Ua[k], U[k].rows, U[k].cols));
        for (uint64_t e = 0; e < U[k].rows * U[k].cols; ++e) Ua[k].data[e] = fabs(U[k].data[e]);
    }
    uint64_t C;
    double *mag = reference(&Xa, n, Ua, &C);
    double worst = 0.0;
    for (uint64_t e = 0; e < X->dims[n] * C; ++e) {
        if (!isfinite(Y[e])) return INFINITY;
        const double d = fabs(Y[e] - ref[e]) / (mag[e] > 0 ? mag[e] : 1.0);
        if (d > worst) worst = d;
    }
    free(mag);
    for (uint32_t k = 0; k < X->order; ++k)
        if (k != n) tf_matrix_free(&Ua[k]);
    tf_tensor_free(&Xa);
    return worst;
}

/* The kernel on a poisoned Y, through the internal entry point, for every
 * thread count: equal to the reference, and the same bits for each count. */
static void check_mode(const char *what, const tf_tensor *X, uint32_t n, const tf_matrix *U)
{
    uint64_t C;
    double *ref = reference(X, n, U, &C);
    const uint64_t IC = X->dims[n] * C;
    double *Y = malloc((IC + 1) * sizeof *Y), *first = malloc((IC + 1) * sizeof *first);
    int want[TF_MAX_ORDER] = {0};
    want[n] = 1;
    for (int threads = 1; threads <= 3; ++threads) {
        tf_cpu_ttmc *p = NULL;
        CHECK_OK(tf_cpu_ttmc_create(X, want, threads, &p));
        for (uint64_t e = 0; e < IC; ++e) Y[e] = NAN;
        CHECK_OK(tf_cpu_ttmc_run(p, n, U, Y));
        const double err = worst_error(X, n, U, Y, ref);
        CHECKF(err <= 1e-13, "%s: mode %u, C %llu, %d threads: error %.3g", what, n + 1, (unsigned long long)C, threads,
               err);
        if (threads == 1) memcpy(first, Y, IC * sizeof *Y);
        else CHECKF(!memcmp(first, Y, IC * sizeof *Y), "%s: mode %u: %d threads differ from 1", what, n + 1, threads);
        tf_cpu_ttmc_free(p);
    }
    free(Y);
    free(first);
    free(ref);
}

static void random_factors(tf_rng *rng, const tf_tensor *X, uint64_t rmax, tf_matrix *U)
{
    for (uint32_t k = 0; k < X->order; ++k) U[k] = tt_random_dense(rng, X->dims[k], 1 + tf_rng_below(rng, rmax));
}

static void free_factors(const tf_tensor *X, tf_matrix *U)
{
    for (uint32_t k = 0; k < X->order; ++k) tf_matrix_free(&U[k]);
}

static void random_cases(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4711);
    static const uint64_t dims3[] = {30, 7, 45}, dims4[] = {12, 3, 20, 9}, dims2[] = {40, 25},
                          dims5[] = {6, 5, 4, 7, 3};
    struct { uint32_t order; const uint64_t *dims; uint64_t nnz; } cases[] = {
        {3, dims3, 900}, {3, dims3, 40}, {4, dims4, 1200}, {4, dims4, 60}, {2, dims2, 300}, {5, dims5, 500}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        for (int rep = 0; rep < 3; ++rep) {
            tf_tensor X = sp_random_tensor(&rng, cases[c].order, cases[c].dims, cases[c].nnz,
                                           (int)tf_rng_below(&rng, cases[c].order + 1) - 1);
            tf_matrix U[TF_MAX_ORDER];
            random_factors(&rng, &X, 5, U);
            char what[64];
            snprintf(what, sizeof what, "order %u, %llu nnz, draw %d", X.order, (unsigned long long)X.nnz, rep);
            for (uint32_t n = 0; n < X.order; ++n) {
                check_mode(what, &X, n, U);
                /* the other path of each mode: chunks forced, then none */
                tf_cpu_ttmc_set_chunking((uint64_t)1 << 24, 5);
                check_mode(what, &X, n, U);
                tf_cpu_ttmc_set_chunking(0, 0);
                check_mode(what, &X, n, U);
                tf_cpu_ttmc_set_chunking((uint64_t)1 << 24, 0);
            }
            free_factors(&X, U);
            tf_tensor_free(&X);
        }
    }
}

/* The column order by hand: X 2 x 2 x 2 with one non-zero X(1,1,0) = 2
 * (0-based), U_0 = [1 2; 3 4] (2 x 2), U_2 = [5 6 7; 8 9 10] (2 x 3): Y_(1)
 * row 1, column r_0 + 2 r_2, is 2 U_0(1, r_0) U_2(0, r_2). */
static void column_order(void)
{
    tf_tensor X;
    const uint64_t dims[] = {2, 2, 2};
    CHECK_OK(tf_tensor_alloc(&X, 3, dims, 1));
    X.ind[0][0] = 1, X.ind[1][0] = 1, X.ind[2][0] = 0, X.vals[0] = 2.0;
    double u0[] = {1, 2, 3, 4}, u2[] = {5, 6, 7, 8, 9, 10};
    tf_matrix U[3] = {{2, 2, u0}, {0, 0, NULL}, {2, 3, u2}};
    tf_matrix Y;
    CHECK_OK(tf_ttmc(&X, 1, U, NULL, &Y));
    CHECK(Y.rows == 2 && Y.cols == 6);
    const double want[6] = {2 * 3 * 5, 2 * 4 * 5, 2 * 3 * 6, 2 * 4 * 6, 2 * 3 * 7, 2 * 4 * 7};
    for (int c = 0; c < 6; ++c) CHECKF(Y.data[6 + c] == want[c] && Y.data[c] == 0.0, "column %d", c);
    tf_matrix_free(&Y);
    tf_tensor_free(&X);
}

static void errors(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 7);
    const uint64_t dims[] = {10, 8, 6};
    tf_tensor X = sp_random_tensor(&rng, 3, dims, 50, -1);
    tf_matrix U[3];
    random_factors(&rng, &X, 3, U);
    tf_matrix Y = {0};
    CHECK_FAILS(tf_ttmc(&X, 3, U, NULL, &Y), TF_ERR_ARG, "mode 4 is outside 1..3");
    tf_matrix bad = U[2];
    U[2].rows = 5;
    CHECK_FAILS(tf_ttmc(&X, 0, U, NULL, &Y), TF_ERR_ARG, "factor 3 is 5 x");
    U[2] = bad;
    tf_ttmc_opts o;
    tf_ttmc_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    if (tf_gpu_count() == 0) /* one GPU runs it where there is one (test_gpu_tucker) */
        CHECK(tf_ttmc(&X, 0, U, &o, &Y) != TF_OK && Y.data == NULL);
    CHECK_FAILS(tf_ttmc(NULL, 0, U, NULL, &Y), TF_ERR_ARG, "X is NULL");
    CHECK(Y.data == NULL);
    /* the public call equals the internal one */
    tf_ttmc_info info;
    tf_ttmc_opts_default(&o);
    o.info = &info;
    CHECK_OK(tf_ttmc(&X, 2, U, &o, &Y));
    CHECK(info.backend == TF_BACKEND_CPU && Y.rows == 6);
    uint64_t C;
    double *ref = reference(&X, 2, U, &C);
    CHECK(Y.cols == C && worst_error(&X, 2, U, Y.data, ref) <= 1e-13);
    free(ref);
    tf_matrix_free(&Y);
    /* no non-zero: Y all zeros */
    tf_tensor E;
    CHECK_OK(tf_tensor_alloc(&E, 3, dims, 0));
    CHECK_OK(tf_ttmc(&E, 1, U, NULL, &Y));
    int zeros = Y.rows == 8 && Y.data != NULL;
    for (uint64_t e = 0; zeros && e < Y.rows * Y.cols; ++e) zeros = Y.data[e] == 0.0;
    CHECK(zeros);
    tf_matrix_free(&Y);
    tf_tensor_free(&E);
    free_factors(&X, U);
    tf_tensor_free(&X);
}

static void on_file(const char *name, const char *path, tf_tensor *X, void *user)
{
    (void)path;
    (void)user;
    tf_rng rng;
    tf_rng_seed(&rng, 99);
    tf_matrix U[TF_MAX_ORDER];
    for (uint32_t k = 0; k < X->order; ++k) U[k] = tt_random_dense(&rng, X->dims[k], X->order == 3 ? 4 + k : 3);
    for (uint32_t n = 0; n < X->order; ++n) {
        const double t0 = tf_wtime();
        check_mode(name, X, n, U);
        printf("%-24s mode %u: checked (%.2f s)\n", name, n + 1, tf_wtime() - t0);
    }
    free_factors(X, U);
}

int main(void)
{
    column_order();
    errors();
    random_cases();
    static const char *const files[] = {"enron-igraphdata.tns.xz", "uber-apr14.tns.xz"};
    for (int f = 0; f < 2; ++f) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", tf_test_data_dir(), files[f]);
        tf_tensor X;
        if (tf_read_tensor(path, 0, &X, NULL) != TF_OK) {
            printf("test_ttmc: %s: %s: real-data part skipped\n", path, tf_last_error());
            continue;
        }
        on_file(files[f], path, &X, NULL);
        tf_tensor_free(&X);
    }
    return tf_test_finish("test_ttmc");
}
