/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by test_spttm.c and test_gpu_spttm.c: random tensors with one
 * long fibre per mode and empty slices, and the comparison of a semi-sparse
 * result with the float64 reference. */
#ifndef TF_TESTS_SPTTM_TEST_UTIL_H
#define TF_TESTS_SPTTM_TEST_UTIL_H
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "core/rng.h"
#include "tenfold.h"
#include "test_random.h"

/* Random canonical tensor; hot_mode >= 0: half the non-zeros share every
 * index but the one of hot_mode (one long fibre for SpTTM on hot_mode). */
static inline tf_tensor sp_random_tensor(tf_rng *rng, uint32_t order, const uint64_t *dims, uint64_t nnz,
                                         int hot_mode)
{
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, order, dims, nnz));
    uint32_t hot[TF_MAX_ORDER];
    for (uint32_t m = 0; m < order; ++m) hot[m] = tt_draw_sparse_index(rng, dims[m]);
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < order; ++m)
            X.ind[m][k] = hot_mode >= 0 && (int)m != hot_mode && k % 2 == 0 ? hot[m] : tt_draw_sparse_index(rng, dims[m]);
        X.vals[k] = tf_rng_uniform(rng) * 2.0 - 1.0;
        if (X.vals[k] == 0.0) X.vals[k] = 0.5;
    }
    CHECK_OK(tf_tensor_canonicalize(&X, NULL, NULL));
    return X;
}

/* Same shape and fibre indices as the reference, and the largest
 * |Y - ref| / (sum over the fibre of |x| |U|) within tol; every value finite. */
static inline int sp_same(const char *what, const tf_tensor *X, const tf_matrix *U, const tf_semisparse *Y,
                          const tf_semisparse *ref, double tol)
{
    if (Y->nfibers != ref->nfibers || Y->mode != ref->mode || Y->order != ref->order) {
        CHECKF(0, "%s: %llu fibres, reference has %llu", what, (unsigned long long)Y->nfibers,
               (unsigned long long)ref->nfibers);
        return 0;
    }
    for (uint32_t m = 0; m < Y->order; ++m) {
        if (Y->dims[m] != ref->dims[m]) { CHECKF(0, "%s: dims[%u] differ", what, m); return 0; }
        if (m == Y->mode) continue;
        for (uint64_t f = 0; f < Y->nfibers; ++f)
            if (Y->ind[m][f] != ref->ind[m][f]) {
                CHECKF(0, "%s: fibre %llu mode %u index %u, reference %u", what, (unsigned long long)f, m + 1,
                       Y->ind[m][f], ref->ind[m][f]);
                return 0;
            }
    }
    /* scale: sum over the fibre of |x| |U| (the reference of |X| and |U|),
     * the error bound of any summation order; a single term's size, as
     * before, let long fibres of cancelling terms fail in fp32 (ego-twitter,
     * R 16: 1.1e-5 in one run of an atomic-order-dependent sum) */
    tf_tensor Xa;
    tf_matrix Ua;
    tf_semisparse mag;
    CHECK_OK(tf_tensor_copy(X, &Xa));
    CHECK_OK(tf_matrix_alloc(&Ua, U->rows, U->cols));
    for (uint64_t k = 0; k < X->nnz; ++k) Xa.vals[k] = fabs(X->vals[k]);
    for (uint64_t k = 0; k < U->rows * U->cols; ++k) Ua.data[k] = fabs(U->data[k]);
    CHECK_OK(tf_spttm_reference(&Xa, Y->mode, &Ua, &mag));
    const uint64_t R = Y->dims[Y->mode];
    double worst = 0.0;
    for (uint64_t k = 0; k < Y->nfibers * R; ++k) {
        if (!isfinite(Y->vals[k])) { worst = INFINITY; break; }
        const double e = fabs(Y->vals[k] - ref->vals[k]) / (mag.vals[k] > 0 ? mag.vals[k] : 1.0);
        if (e > worst) worst = e;
    }
    tf_semisparse_free(&mag);
    tf_matrix_free(&Ua);
    tf_tensor_free(&Xa);
    CHECKF(worst <= tol, "%s: mode %u R %llu: error %.3g > %.1g", what, Y->mode + 1, (unsigned long long)R, worst,
           tol);
    return worst <= tol;
}
#endif
