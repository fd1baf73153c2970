/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by test_ktensor_ops.c, test_tensor_ops.c and
 * test_gpu_model_values.c: the seed of a run (fresh each run unless
 * TF_TEST_SEED says one; printed, so a failure can be replayed), the
 * bundled real tensor, random ktensors and the float64 reference of the
 * model at a non-zero, and a comparison of one value with its reference
 * within a bound relative to the sum of the magnitudes of its terms. */
#ifndef TF_TESTS_KT_TEST_UTIL_H
#define TF_TESTS_KT_TEST_UTIL_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "core/alloc.h"
#include "core/rng.h"
#include "tenfold.h"

static inline uint64_t kt_seed(const char *name)
{
    const char *env = getenv("TF_TEST_SEED");
    uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    printf("%s: seed %llu (TF_TEST_SEED=%llu replays this run)\n", name, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* |got - want| <= tol * mag (mag: the sum of the terms' magnitudes, >= |want|);
 * NaN or infinity fails. */
static inline int kt_close_at(const char *file, int line, double got, double want, double mag, double tol)
{
    const double bound = tol * (mag > fabs(want) ? mag : fabs(want)) + 1e-300;
    tf_t_margin(file, line, isfinite(got) ? got - want : INFINITY, bound);
    return isfinite(got) && fabs(got - want) <= bound;
}
#define kt_close(got, want, mag, tol) kt_close_at(__FILE__, __LINE__, (got), (want), (mag), (tol))

/* The bundled uber-apr14 tensor (data/uber-apr14.tns.xz): 30 x 24 x 659 x 1086, 416,744 non-zeros. */
static inline int kt_read_uber(tf_tensor *X)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/uber-apr14.tns.xz", TF_REPO_DATA);
    tf_status s = tf_read_tensor(path, 0, X, NULL);
    CHECKF(s == TF_OK, "reading %s: %s", path, tf_last_error());
    return s == TF_OK;
}

/* A random ktensor of X's shape: factors in [-1, 1), lambda in [0.5, 2) or NULL. */
static inline tf_ktensor kt_random_ktensor(tf_rng *rng, uint32_t order, const uint64_t *dims, uint64_t R,
                                           int with_lambda)
{
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, order, dims, R));
    for (uint32_t m = 0; m < order; ++m)
        for (uint64_t e = 0; e < dims[m] * R; ++e) K.factors[m].data[e] = tf_rng_uniform(rng) * 2.0 - 1.0;
    for (uint64_t r = 0; r < R; ++r) K.lambda[r] = 0.5 + 1.5 * tf_rng_uniform(rng);
    if (!with_lambda) {
        tf_free(K.lambda);
        K.lambda = NULL;
    }
    return K;
}

static inline double kt_lambda(const tf_ktensor *K, uint64_t r) { return K->lambda ? K->lambda[r] : 1.0; }

/* m_j and sum_r |term| for non-zero j, plain float64 loops. */
static inline double kt_ref_model(const tf_tensor *X, const tf_ktensor *K, uint64_t j, double *mag)
{
    double m = 0.0, a = 0.0;
    for (uint64_t r = 0; r < K->rank; ++r) {
        double p = kt_lambda(K, r);
        for (uint32_t n = 0; n < X->order; ++n) p *= K->factors[n].data[(uint64_t)X->ind[n][j] * K->rank + r];
        m += p;
        a += fabs(p);
    }
    *mag = a;
    return m;
}

/* A NaN-filled array of n doubles (the outputs a call must overwrite). */
static inline double *kt_poisoned(uint64_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    for (uint64_t i = 0; i < n; ++i) p[i] = NAN;
    return p;
}
/* A random GCP test tensor: nnz coordinates uniform over dims (repeats
 * add up), values in [0.5, 2.5), counts 1..5 for the Poisson losses, ones
 * for the Bernoulli ones (tests/test_gcp.c, test_gpu_gcp.c). */
static inline void kt_gcp_tensor(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t nnz, int loss, tf_tensor *X)
{
    CHECK_OK(tf_tensor_alloc(X, N, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < N; ++m) X->ind[m][k] = (uint32_t)tf_rng_below(rng, dims[m]);
        double v = 0.5 + 2.0 * tf_rng_uniform(rng);
        if (loss == TF_GCP_POISSON || loss == TF_GCP_POISSON_LOG) v = (double)(1 + tf_rng_below(rng, 5));
        X->vals[k] = v;
    }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL)); /* repeated coordinates add up: then the ones */
    if (loss == TF_GCP_BERNOULLI_ODDS || loss == TF_GCP_BERNOULLI_LOGIT)
        for (uint64_t k = 0; k < X->nnz; ++k) X->vals[k] = 1.0;
}

/* Random ratings-like entries for completion tests (tests/test_complete.c,
 * test_gpu_complete.c): values in [-2, 3); empty: no row i % 4 == 0 of mode
 * 1 has entries; heavy: half of them in row 1 of mode 1 (a long row). */
static inline void kt_complete_entries(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t nnz, int empty,
                                       int heavy, tf_tensor *X)
{
    CHECK_OK(tf_tensor_alloc(X, N, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < N; ++m) {
            uint32_t i;
            do i = (uint32_t)tf_rng_below(rng, dims[m]);
            while (m == 0 && empty && i % 4 == 0);
            X->ind[m][k] = i;
        }
        if (heavy && tf_rng_uniform(rng) < 0.5) X->ind[0][k] = 1;
        X->vals[k] = tf_rng_uniform(rng) * 5.0 - 2.0;
    }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL));
}

/* X's entries cut three ways (about 80 / 10 / 10 %, at random). */
static inline void kt_split3(tf_rng *rng, const tf_tensor *X, tf_tensor *sets)
{
    uint64_t n[3] = {0, 0, 0};
    uint8_t *to = malloc(X->nnz ? X->nnz : 1);
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const double u = tf_rng_uniform(rng);
        to[k] = u < 0.8 ? 0 : u < 0.9 ? 1 : 2;
        ++n[to[k]];
    }
    for (int s = 0; s < 3; ++s) CHECK_OK(tf_tensor_alloc(&sets[s], X->order, X->dims, n[s]));
    uint64_t at[3] = {0, 0, 0};
    for (uint64_t k = 0; k < X->nnz; ++k) {
        tf_tensor *S = &sets[to[k]];
        for (uint32_t m = 0; m < X->order; ++m) S->ind[m][at[to[k]]] = X->ind[m][k];
        S->vals[at[to[k]]++] = X->vals[k];
    }
    free(to);
}

/* Solves the n x n system M x = b in place of b (M overwritten) by
 * Gaussian elimination with partial pivoting: the float64 reference of the
 * row solves (tests/test_complete.c, test_cp_apr_pdnr.c); 0 when singular. */
static inline int kt_ref_solve(double *M, double *b, uint64_t n)
{
    for (uint64_t c = 0; c < n; ++c) {
        uint64_t p = c;
        for (uint64_t r = c + 1; r < n; ++r)
            if (fabs(M[r * n + c]) > fabs(M[p * n + c])) p = r;
        if (M[p * n + c] == 0.0) return 0;
        if (p != c) {
            for (uint64_t k = 0; k < n; ++k) {
                const double t = M[c * n + k];
                M[c * n + k] = M[p * n + k];
                M[p * n + k] = t;
            }
            const double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        for (uint64_t r = c + 1; r < n; ++r) {
            const double f = M[r * n + c] / M[c * n + c];
            for (uint64_t k = c; k < n; ++k) M[r * n + k] -= f * M[c * n + k];
            b[r] -= f * b[c];
        }
    }
    for (uint64_t c = n; c-- > 0;) {
        double s = b[c];
        for (uint64_t k = c + 1; k < n; ++k) s -= M[c * n + k] * b[k];
        b[c] = s / M[c * n + c];
    }
    return 1;
}

#endif
