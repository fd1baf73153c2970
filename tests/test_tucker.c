/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse Tucker (tf_tucker, HOOI): a planted tensor of low multilinear rank
 * (sparse factors, so the tensor is sparse) recovered to fit >= 0.99 from
 * the HOSVD and from random starts; on random tensors: orthonormal factors,
 * the core equal to X x_1 U_1^T .. x_N U_N^T by a float64 loop over the
 * non-zeros, the fit equal to pyttb's formula on it, fits that never fall,
 * the three ways to the leading vectors (Gram of the rows, of the columns,
 * subspace iteration) giving the same fits, 1 and 3 threads the same, a
 * given start, dimorder; the report, callback and stop flag; argument,
 * GPU and memory errors; the factor set files (STEM.mode<N>.mat,
 * STEM.core.tensor) written and read back. */
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "spttm_test_util.h"
#include "test_paths.h"

/* Planted: factor n's column r is non-zero on `support` rows of its own
 * (disjoint), the core dense random; X = G x_n U_n has its non-zeros on the
 * product of the supports. */
static tf_tensor planted(tf_rng *rng, uint32_t N, const uint64_t *dims, const uint64_t *ranks, uint64_t support)
{
    tf_matrix U[TF_MAX_ORDER];
    uint64_t core = 1, nnz = 1;
    for (uint32_t n = 0; n < N; ++n) {
        CHECK_OK(tf_matrix_alloc(&U[n], dims[n], ranks[n]));
        memset(U[n].data, 0, dims[n] * ranks[n] * sizeof(double));
        for (uint64_t r = 0; r < ranks[n]; ++r)
            for (uint64_t s = 0; s < support; ++s) U[n].data[(r * support + s) * ranks[n] + r] = 0.5 + tf_rng_uniform(rng);
        core *= ranks[n];
        nnz *= ranks[n] * support;
    }
    double *G = malloc(core * sizeof *G);
    for (uint64_t e = 0; e < core; ++e) G[e] = tf_rng_uniform(rng) * 2.0 - 1.0;
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, N, dims, nnz));
    uint64_t z = 0;
    uint64_t idx[TF_MAX_ORDER] = {0}; /* rows 0 .. ranks*support - 1 of every mode */
    for (;;) {
        double v = 0.0;
        for (uint64_t g = 0; g < core; ++g) {
            uint64_t rest = g;
            double p = G[g];
            for (uint32_t n = 0; n < N; ++n) {
                p *= U[n].data[idx[n] * ranks[n] + rest % ranks[n]];
                rest /= ranks[n];
            }
            v += p;
        }
        for (uint32_t n = 0; n < N; ++n) X.ind[n][z] = (uint32_t)idx[n];
        X.vals[z++] = v;
        uint32_t n = 0;
        while (n < N && ++idx[n] == ranks[n] * support) idx[n++] = 0;
        if (n == N) break;
    }
    X.nnz = z;
    CHECK_OK(tf_tensor_canonicalize(&X, NULL, NULL));
    for (uint32_t n = 0; n < N; ++n) tf_matrix_free(&U[n]);
    free(G);
    return X;
}

/* core(r) = sum over the non-zeros of x prod U_n(i_n, r_n), mode 1 fastest. */
static double *core_reference(const tf_tensor *X, const tf_ttensor *T)
{
    uint64_t core = 1;
    for (uint32_t n = 0; n < X->order; ++n) core *= T->ranks[n];
    double *G = calloc(core, sizeof *G);
    for (uint64_t z = 0; z < X->nnz; ++z)
        for (uint64_t g = 0; g < core; ++g) {
            uint64_t rest = g;
            double p = X->vals[z];
            for (uint32_t n = 0; n < X->order; ++n) {
                p *= T->factors[n].data[(uint64_t)X->ind[n][z] * T->ranks[n] + rest % T->ranks[n]];
                rest /= T->ranks[n];
            }
            G[g] += p;
        }
    return G;
}

/* The result's invariants: orthonormal factors, each column's largest entry
 * positive, the core against the reference, the fit by pyttb's formula. */
static void check_result(const char *what, const tf_tensor *X, const tf_ttensor *T, const tf_tucker_report *rep)
{
    for (uint32_t n = 0; n < X->order; ++n) {
        const tf_matrix *U = &T->factors[n];
        double worst = 0.0;
        for (uint64_t a = 0; a < U->cols; ++a) {
            double big = 0.0, at = 0.0;
            for (uint64_t i = 0; i < U->rows; ++i)
                if (fabs(U->data[i * U->cols + a]) > big) big = fabs(U->data[i * U->cols + a]), at = U->data[i * U->cols + a];
            CHECKF(at > 0.0, "%s: factor %u column %llu: largest entry negative", what, n + 1, (unsigned long long)a);
            for (uint64_t b = 0; b < U->cols; ++b) {
                double d = 0.0;
                for (uint64_t i = 0; i < U->rows; ++i) d += U->data[i * U->cols + a] * U->data[i * U->cols + b];
                d -= a == b;
                if (fabs(d) > worst) worst = fabs(d);
            }
        }
        CHECKF(worst < 1e-10, "%s: factor %u not orthonormal (%.2g)", what, n + 1, worst);
    }
    double *G = core_reference(X, T);
    uint64_t core = 1;
    for (uint32_t n = 0; n < X->order; ++n) core *= T->ranks[n];
    double worst = 0.0, g2 = 0.0, scale = 0.0;
    for (uint64_t g = 0; g < core; ++g) scale = fmax(scale, fabs(G[g]));
    for (uint64_t g = 0; g < core; ++g) {
        worst = fmax(worst, fabs(G[g] - T->core[g]));
        g2 += T->core[g] * T->core[g];
    }
    CHECKF(worst <= 1e-10 * scale, "%s: core differs from X x U^T by %.3g (scale %.3g)", what, worst, scale);
    const double nx2 = tf_tensor_norm2(X);
    const double fit = 1.0 - sqrt(fabs(nx2 - g2)) / sqrt(nx2);
    CHECKF(fabs(fit - rep->fit) < 1e-10, "%s: fit %.15g, from the core %.15g", what, rep->fit, fit);
    /* never falling, to the rounding of sqrt(| ||X||^2 - ||G||^2 |): about 1e-8 once the fit is near 1 */
    for (uint32_t i = 1; i < rep->iters; ++i)
        CHECKF(rep->iterations[i].fit >= rep->iterations[i - 1].fit - 1e-7, "%s: fit fell at iteration %u", what,
               i + 1);
    free(G);
}

static void planted_recovery(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 123);
    const uint64_t dims3[] = {60, 50, 40}, ranks3[] = {3, 2, 4};
    const uint64_t dims4[] = {30, 25, 20, 15}, ranks4[] = {2, 3, 2, 2};
    for (int c = 0; c < 2; ++c) {
        const uint32_t N = c ? 4 : 3;
        tf_tensor X = planted(&rng, N, c ? dims4 : dims3, c ? ranks4 : ranks3, c ? 3 : 4);
        for (int init = 0; init < 2; ++init) {
            tf_tucker_opts o;
            tf_tucker_opts_default(&o);
            o.backend = TF_BACKEND_CPU; /* the GPU: test_gpu_tucker */
            memcpy(o.ranks, c ? ranks4 : ranks3, N * sizeof(uint64_t));
            o.init = init ? TF_TUCKER_INIT_HOSVD : TF_TUCKER_INIT_RANDOM;
            o.tol = 1e-10;
            tf_ttensor T;
            tf_tucker_report rep;
            CHECK_OK(tf_tucker(&X, &o, &T, &rep));
            char what[64];
            snprintf(what, sizeof what, "planted order %u, %s start", N, init ? "HOSVD" : "random");
            CHECKF(rep.fit >= 0.99, "%s: fit %.6f", what, rep.fit);
            CHECKF(rep.fit >= 1 - 1e-6, "%s: fit %.12f (exact rank)", what, rep.fit);
            check_result(what, &X, &T, &rep);
            printf("%s: fit %.12f after %u iterations\n", what, rep.fit, rep.iters);
            tf_ttensor_free(&T);
            tf_tucker_report_free(&rep);
        }
        tf_tensor_free(&X);
    }
}

static int calls;
static volatile int stop_flag;
static void on_iter(const tf_tucker_iter *it, void *user)
{
    (void)user;
    ++calls;
    if (it->iter == 3) stop_flag = 1;
}

/* Random tensors: the invariants, the methods, threads, starts, dimorder. */
static void random_runs(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 2024);
    const uint64_t dims3[] = {40, 9, 30}, ranks3[] = {4, 3, 5};
    const uint64_t dims4[] = {12, 5, 16, 8}, ranks4[] = {3, 2, 4, 3};
    for (int c = 0; c < 2; ++c) {
        const uint32_t N = c ? 4 : 3;
        tf_tensor X = sp_random_tensor(&rng, N, c ? dims4 : dims3, c ? 700 : 900, -1);
        tf_tucker_opts o;
        tf_tucker_opts_default(&o);
        o.backend = TF_BACKEND_CPU; /* the GPU: test_gpu_tucker */
        memcpy(o.ranks, c ? ranks4 : ranks3, N * sizeof(uint64_t));
        o.max_iters = 8;
        o.tol = 0;
        tf_ttensor base;
        tf_tucker_report rb;
        CHECK_OK(tf_tucker(&X, &o, &base, &rb));
        CHECK(rb.iters == 8 && !rb.converged && rb.backend == TF_BACKEND_CPU && rb.y_bytes > 0);
        check_result(c ? "random order 4" : "random order 3", &X, &base, &rb);
        /* every way to the leading vectors, 1 and 3 threads: the same fits */
        for (int m = TF_TUCKER_SVD_ROW_GRAM; m <= TF_TUCKER_SVD_SUBSPACE; ++m)
            for (int threads = 1; threads <= 3; threads += 2) {
                tf_tucker_opts p = o;
                p.svd = (tf_tucker_svd)m;
                p.threads = threads;
                tf_ttensor T;
                tf_tucker_report r;
                CHECK_OK(tf_tucker(&X, &p, &T, &r));
                double worst = 0.0;
                for (uint32_t i = 0; i < r.iters && i < rb.iters; ++i)
                    worst = fmax(worst, fabs(r.iterations[i].fit - rb.iterations[i].fit));
                CHECKF(r.iters == rb.iters && worst < 1e-10, "order %u svd %d threads %d: fits differ by %.3g", N, m,
                       threads, worst);
                CHECK(r.svd_method[0] == (tf_tucker_svd)m);
                tf_ttensor_free(&T);
                tf_tucker_report_free(&r);
            }
        /* a given start: the random one, drawn as the library draws it, continues alike */
        {
            tf_matrix f[TF_MAX_ORDER];
            memset(f, 0, sizeof f);
            tf_rng r2;
            tf_rng_seed(&r2, o.seed);
            for (uint32_t m = 1; m < N; ++m) {
                CHECK_OK(tf_matrix_alloc(&f[m], X.dims[m], o.ranks[m]));
                for (uint64_t e = 0; e < X.dims[m] * o.ranks[m]; ++e) f[m].data[e] = tf_rng_uniform(&r2);
            }
            tf_tucker_opts p = o;
            p.init = TF_TUCKER_INIT_GIVEN;
            p.init_factors = f;
            tf_ttensor T;
            tf_tucker_report r;
            CHECK_OK(tf_tucker(&X, &p, &T, &r));
            CHECKF(r.iters == rb.iters && r.fit == rb.fit, "given start: fit %.17g, random %.17g", r.fit, rb.fit);
            tf_ttensor_free(&T);
            tf_tucker_report_free(&r);
            /* dimorder: another order, another run, the same invariants */
            uint32_t order[TF_MAX_ORDER];
            for (uint32_t m = 0; m < N; ++m) order[m] = N - 1 - m;
            p = o;
            p.dimorder = order;
            CHECK_OK(tf_tucker(&X, &p, &T, &r));
            check_result("dimorder reversed", &X, &T, &r);
            tf_ttensor_free(&T);
            tf_tucker_report_free(&r);
            for (uint32_t m = 0; m < N; ++m) tf_matrix_free(&f[m]);
        }
        /* callback and stop flag */
        {
            tf_tucker_opts p = o;
            p.callback = on_iter;
            p.stop = &stop_flag;
            calls = 0;
            stop_flag = 0;
            tf_ttensor T;
            tf_tucker_report r;
            CHECK_OK(tf_tucker(&X, &p, &T, &r));
            CHECK(calls == 3 && r.iters == 3 && r.stopped && T.core);
            tf_ttensor_free(&T);
            tf_tucker_report_free(&r);
        }
        tf_ttensor_free(&base);
        tf_tucker_report_free(&rb);
        tf_tensor_free(&X);
    }
}

static void errors(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 5);
    const uint64_t dims[] = {10, 8, 6};
    tf_tensor X = sp_random_tensor(&rng, 3, dims, 80, -1);
    tf_tucker_opts o;
    tf_tucker_opts_default(&o);
    o.backend = TF_BACKEND_CPU; /* the GPU: test_gpu_tucker */
    tf_ttensor T;
    o.ranks[0] = 2, o.ranks[1] = 2;
    CHECK_FAILS(tf_tucker(&X, &o, &T, NULL), TF_ERR_ARG, "the rank of mode 3 is 0, expected 1..6");
    o.ranks[2] = 2, o.ranks[3] = 2;
    CHECK_FAILS(tf_tucker(&X, &o, &T, NULL), TF_ERR_ARG, "4 ranks given for a tensor of 3 modes");
    o.ranks[3] = 0, o.ranks[0] = 11;
    CHECK_FAILS(tf_tucker(&X, &o, &T, NULL), TF_ERR_ARG, "the rank of mode 1 is 11, expected 1..10");
    o.ranks[0] = 5;
    CHECK_FAILS(tf_tucker(&X, &o, &T, NULL), TF_ERR_ARG, "more than the product of the other ranks (4)");
    o.ranks[0] = 2;
    tf_tucker_opts p = o;
    p.backend = TF_BACKEND_GPU;
    if (tf_gpu_count() == 0) /* a GPU runs it where there is one (test_gpu_tucker) */
        CHECKF(tf_tucker(&X, &p, &T, NULL) != TF_OK &&
                   (strstr(tf_last_error(), "GPU") != NULL || strstr(tf_last_error(), "CUDA") != NULL),
               "--device gpu without a GPU: %s", tf_last_error());
    p = o;
    p.memory_limit = 1000;
    CHECK_FAILS(tf_tucker(&X, &p, &T, NULL), TF_ERR_NOMEM, "Y_(1) is 10 x 4 doubles");
    p = o;
    p.size = 0;
    CHECK_FAILS(tf_tucker(&X, &p, &T, NULL), TF_ERR_ARG, "tf_tucker_opts.size is 0");
    p = o;
    p.init = TF_TUCKER_INIT_GIVEN;
    CHECK_FAILS(tf_tucker(&X, &p, &T, NULL), TF_ERR_ARG, "init_factors is NULL");
    uint32_t bad[3] = {0, 0, 1};
    p = o;
    p.dimorder = bad;
    CHECK_FAILS(tf_tucker(&X, &p, &T, NULL), TF_ERR_ARG, "dimorder is not a permutation");
    p = o;
    p.distributed_input = 1; /* a part of X, but no ranks to sum the parts over */
    CHECK_FAILS(tf_tucker(&X, &p, &T, NULL), TF_ERR_ARG, "distributed_input needs a distributed context");
    CHECK(T.core == NULL);
    tf_tensor_free(&X);
}

/* The factor set: written, read back by the manifest's reader, the core file's format. */
static void files(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 11);
    const uint64_t dims[] = {9, 7, 5}, ranks[] = {2, 3, 2};
    tf_tensor X = sp_random_tensor(&rng, 3, dims, 120, -1);
    tf_tucker_opts o;
    tf_tucker_opts_default(&o);
    o.backend = TF_BACKEND_CPU; /* the GPU: test_gpu_tucker */
    memcpy(o.ranks, ranks, sizeof ranks);
    tf_ttensor T;
    CHECK_OK(tf_tucker(&X, &o, &T, NULL));
    char stem[4096];
    snprintf(stem, sizeof stem, "%s/test_tucker_set", TF_TEST_TMP);
    CHECK_OK(tf_ttensor_write(stem, &T));
    tf_matrix f[TF_MAX_ORDER];
    uint32_t n = 0;
    CHECK_OK(tf_factor_files_read(stem, f, &n));
    CHECK(n == 3);
    for (uint32_t m = 0; m < n && m < 3; ++m) {
        CHECK(f[m].rows == dims[m] && f[m].cols == ranks[m]);
        double worst = 0.0;
        for (uint64_t e = 0; e < dims[m] * ranks[m]; ++e) worst = fmax(worst, fabs(f[m].data[e] - T.factors[m].data[e]));
        CHECKF(worst < 1e-15, "factor %u read back differs by %.3g", m + 1, worst);
        tf_matrix_free(&f[m]);
    }
    char path[4200];
    snprintf(path, sizeof path, "%s.core.tensor", stem);
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL);
    if (fp) {
        char word[32];
        unsigned N = 0, r[3] = {0};
        CHECK(fscanf(fp, "%31s %u %u %u %u", word, &N, &r[0], &r[1], &r[2]) == 5);
        CHECK(!strcmp(word, "tensor") && N == 3 && r[0] == 2 && r[1] == 3 && r[2] == 2);
        double worst = 0.0, v;
        int count = 0;
        while (fscanf(fp, "%lf", &v) == 1) {
            if (count < 12) worst = fmax(worst, fabs(v - T.core[count]));
            ++count;
        }
        CHECKF(count == 12 && worst < 1e-15, "core file: %d values, error %.3g", count, worst);
        fclose(fp);
    }
    snprintf(path, sizeof path, "%s.set", stem);
    CHECK(access(path, F_OK) == 0);
    tf_ttensor_free(&T);
    tf_tensor_free(&X);
}

int main(void)
{
    errors();
    planted_recovery();
    random_runs();
    files();
    return tf_test_finish("test_tucker");
}
