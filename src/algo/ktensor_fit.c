/* SPDX-License-Identifier: BSD-3-Clause */
/* Fit of a Kruskal tensor, computed directly from its definition:
 * ||X - K||^2 = ||X||^2 + ||K||^2 - 2<X,K>, with <X,K> summed over the
 * non-zeros of X and ||K||^2 from plain-loop Grams. Shares nothing with the
 * CP-ALS driver, so the tests can check the driver's fit with it. */
#include <math.h>

#include "core/alloc.h"
#include "core/error.h"

static tf_status check_shapes(const tf_tensor *X, const tf_ktensor *K)
{
    if (K->order != X->order)
        return tf_fail(TF_ERR_ARG, "tf_ktensor_fit: K has order %u, X order %u", K->order, X->order);
    if (K->rank == 0 || !K->lambda) return tf_fail(TF_ERR_ARG, "tf_ktensor_fit: K has no components");
    for (uint32_t m = 0; m < X->order; ++m)
        if (!K->factors[m].data || K->factors[m].rows != X->dims[m] || K->factors[m].cols != K->rank)
            return tf_fail(TF_ERR_ARG, "tf_ktensor_fit: factor %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)K->factors[m].rows,
                           (unsigned long long)K->factors[m].cols, (unsigned long long)X->dims[m],
                           (unsigned long long)K->rank);
    return TF_OK;
}

/* ||K||^2 = sum_{r,s} lambda_r lambda_s prod_m (A_m^T A_m)(r,s). */
static tf_status model_norm2(const tf_ktensor *K, double *out)
{
    const uint64_t R = K->rank;
    double *H = NULL;
    TF_TRY(TF_ALLOC(H, R * R, "ktensor fit Hadamard"));
    for (uint64_t e = 0; e < R * R; ++e) H[e] = 1.0;
    for (uint32_t m = 0; m < K->order; ++m) {
        const tf_matrix *A = &K->factors[m];
        for (uint64_t r = 0; r < R; ++r)
            for (uint64_t s = 0; s < R; ++s) {
                double g = 0.0;
                for (uint64_t i = 0; i < A->rows; ++i) g += A->data[i * R + r] * A->data[i * R + s];
                H[r * R + s] *= g;
            }
    }
    double acc = 0.0;
    for (uint64_t r = 0; r < R; ++r)
        for (uint64_t s = 0; s < R; ++s) acc += K->lambda[r] * K->lambda[s] * H[r * R + s];
    tf_free(H);
    *out = acc;
    return TF_OK;
}

tf_status tf_ktensor_fit(const tf_tensor *X, const tf_ktensor *K, double *fit)
{
    if (!X) return tf_fail(TF_ERR_ARG, "tf_ktensor_fit: X is NULL");
    if (!K) return tf_fail(TF_ERR_ARG, "tf_ktensor_fit: K is NULL");
    if (!fit) return tf_fail(TF_ERR_ARG, "tf_ktensor_fit: fit is NULL");
    TF_TRY(tf_tensor_validate(X));
    TF_TRY(check_shapes(X, K));
    const uint64_t R = K->rank;
    /* The fit is scale-invariant: fit(X, K) = fit(2^-e X, 2^-e K), with e
     * the exponent of the largest |value|, so squares of values near the
     * ends of the double range neither under- nor overflow. The scaled
     * copy of lambda is exact (a power of two). */
    double amax = 0.0;
    for (uint64_t k = 0; k < X->nnz; ++k) amax = fmax(amax, fabs(X->vals[k]));
    if (amax == 0.0)
        return tf_fail(TF_ERR_ARG, "ktensor fit: the tensor is zero, so the fit is undefined");
    const int e = ilogb(amax);
    tf_ktensor Ks = *K;
    double *lambda = NULL;
    TF_TRY(TF_ALLOC(lambda, R, "ktensor fit weights"));
    for (uint64_t r = 0; r < R; ++r) lambda[r] = ldexp(K->lambda[r], -e);
    Ks.lambda = lambda;
    double normx2 = 0.0, inner = 0.0, normk2 = 0.0;
#pragma omp parallel for num_threads(tf_default_threads()) reduction(+ : normx2, inner) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) {
        double v = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            double p = lambda[r];
            for (uint32_t m = 0; m < X->order; ++m)
                p *= K->factors[m].data[(uint64_t)X->ind[m][k] * R + r];
            v += p;
        }
        const double x = ldexp(X->vals[k], -e);
        normx2 += x * x;
        inner += x * v;
    }
    tf_status s = model_norm2(&Ks, &normk2);
    tf_free(lambda);
    TF_TRY(s);
    double res = normx2 + normk2 - 2.0 * inner;
    *fit = 1.0 - sqrt(res > 0.0 ? res : 0.0) / sqrt(normx2);
    if (!isfinite(*fit)) return tf_fail(TF_ERR_NUMERIC, "ktensor fit: the ktensor has non-finite values");
    return TF_OK;
}
