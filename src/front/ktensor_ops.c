/* SPDX-License-Identifier: BSD-3-Clause */
/* Kruskal tensor helpers (issue 43): the model at the non-zeros (on the
 * CPU, or on a GPU through tf_model_values_ex), the inner product with a
 * sparse tensor and the norm from the Grams. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "seams/model_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "cpu/apr_phi.h"
#include "cpu/blas_threads.h"
#include "cpu/dense.h"
#include "cpu/model_values.h"
#include "front/device_choice.h"

/* K alone: order, rank, factors of dims[m] x rank with data. */
static tf_status check_ktensor(const char *fn, const tf_ktensor *K)
{
    if (K->order < TF_MIN_ORDER || K->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "%s: the ktensor's order %u is outside %d..%d", fn, K->order, TF_MIN_ORDER,
                       TF_MAX_ORDER);
    if (K->rank == 0) return tf_fail(TF_ERR_ARG, "%s: the ktensor has rank 0 (expected at least 1)", fn);
    for (uint32_t m = 0; m < K->order; ++m) {
        const tf_matrix *A = &K->factors[m];
        if (A->rows != K->dims[m] || A->cols != K->rank)
            return tf_fail(TF_ERR_ARG, "%s: factor %u is %llu x %llu, expected %llu x %llu (dims x rank)", fn, m + 1,
                           (unsigned long long)A->rows, (unsigned long long)A->cols,
                           (unsigned long long)K->dims[m], (unsigned long long)K->rank);
        if (!A->data) return tf_fail(TF_ERR_ARG, "%s: factor %u has no data", fn, m + 1);
    }
    return TF_OK;
}

/* X valid and K of X's order and dims. */
static tf_status check_pair(const char *fn, const tf_tensor *X, const tf_ktensor *K)
{
    TF_TRY(tf_tensor_validate(X));
    TF_TRY(check_ktensor(fn, K));
    if (K->order != X->order)
        return tf_fail(TF_ERR_ARG, "%s: the ktensor has order %u, the tensor %u", fn, K->order, X->order);
    for (uint32_t m = 0; m < X->order; ++m)
        if (K->dims[m] != X->dims[m])
            return tf_fail(TF_ERR_ARG, "%s: mode %u has length %llu in the ktensor, %llu in the tensor", fn, m + 1,
                           (unsigned long long)K->dims[m], (unsigned long long)X->dims[m]);
    return TF_OK;
}

tf_status tf_model_values(const tf_tensor *X, const tf_ktensor *K, double *out)
{
    if (!X || !K || !out) return tf_fail(TF_ERR_ARG, "tf_model_values: X, K and out must not be NULL");
    TF_TRY(check_pair("tf_model_values", X, K));
    return tf_cpu_model_values(X, K, 0, out, NULL);
}

void tf_model_opts_default(tf_model_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = TF_BACKEND_AUTO;
    o->precision = TF_DOUBLE;
}

static tf_status check_model_opts(const tf_model_opts *o)
{
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_model_values_ex: unknown backend %d", (int)o->backend);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "tf_model_values_ex: unknown precision %d", (int)o->precision);
    if (o->threads < 0)
        return tf_fail(TF_ERR_ARG, "tf_model_values_ex: threads %d is negative (0: the default)", o->threads);
    return TF_OK;
}

tf_status tf_model_values_ex(const tf_tensor *X, const tf_ktensor *K, const tf_model_opts *o, double *out)
{
    tf_model_opts d;
    if (!o) {
        tf_model_opts_default(&d);
        o = &d;
    }
    if (o->info) memset(o->info, 0, sizeof *o->info);
    if (!X || !K || !out) return tf_fail(TF_ERR_ARG, "tf_model_values_ex: X, K and out must not be NULL");
    TF_TRY(check_model_opts(o));
    TF_TRY(check_pair("tf_model_values_ex", X, K));
    tf_backend be = tf_choose_backend(o->context, o->backend, 1);
    char note[sizeof o->info->note] = "";
    tf_status s = TF_OK;
    if (be == TF_BACKEND_GPU && X->nnz > 0) {
        /* borrows the options' context, or a private one for this call */
        tf_model_opts go = *o;
        tf_context *own = NULL;
        s = tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, &own);
        if (s == TF_OK) s = tf_cuda_model_values(X, K, &go, out);
        tf_context_free(own);
        /* under auto, a problem the GPU cannot hold runs on the CPU, which says why */
        if (tf_gpu_fallback(s, o->backend, note, sizeof note)) {
            be = TF_BACKEND_CPU;
            s = TF_OK;
        }
    }
    if (s == TF_OK && be == TF_BACKEND_CPU) s = tf_cpu_model_values(X, K, o->threads, out, NULL);
    if (o->info) {
        o->info->backend = be;
        snprintf(o->info->note, sizeof o->info->note, "%s", note);
    }
    return s;
}

tf_status tf_ktensor_innerprod(const tf_tensor *X, const tf_ktensor *K, double *out)
{
    if (!X || !K || !out) return tf_fail(TF_ERR_ARG, "tf_ktensor_innerprod: X, K and out must not be NULL");
    TF_TRY(check_pair("tf_ktensor_innerprod", X, K));
    return tf_cpu_model_values(X, K, 0, NULL, out);
}

tf_status tf_ktensor_norm(const tf_ktensor *K, double *out)
{
    if (!K || !out) return tf_fail(TF_ERR_ARG, "tf_ktensor_norm: K and out must not be NULL");
    TF_TRY(check_ktensor("tf_ktensor_norm", K));
    const uint64_t R = K->rank;
    if (R > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "tf_ktensor_norm: rank %llu is above %u (the R x R Grams)", (unsigned long long)R,
                       TF_MAX_RANK);
    double *G = NULL, *V = NULL, *ones = NULL;
    TF_TRY(TF_ALLOC(G, R * R, "ktensor norm Gram"));
    tf_status s = TF_ALLOC(V, R * R, "ktensor norm Hadamard product");
    if (s == TF_OK && !K->lambda) s = TF_ALLOC(ones, R, "ktensor norm weights");
    if (s == TF_OK) {
        if (ones)
            for (uint64_t r = 0; r < R; ++r) ones[r] = 1.0;
        for (uint64_t e = 0; e < R * R; ++e) V[e] = 1.0;
        const int blas = tf_blas_threads_pin_single(); /* BLAS inside OpenMP loops (cpu/dense.h) */
        for (uint32_t m = 0; s == TF_OK && m < K->order; ++m) {
            s = tf_dense_gram(K->factors[m].data, K->factors[m].rows, R, 0, G);
            for (uint64_t e = 0; s == TF_OK && e < R * R; ++e) V[e] *= G[e];
        }
        tf_blas_threads_restore(blas);
    }
    if (s == TF_OK) {
        const double q = tf_dense_quadratic(V, K->lambda ? K->lambda : ones, R);
        *out = sqrt(fabs(q));
    }
    tf_free(G);
    tf_free(V);
    tf_free(ones);
    return s;
}

tf_status tf_ktensor_fixsigns(tf_ktensor *K)
{
    if (!K) return tf_fail(TF_ERR_ARG, "tf_ktensor_fixsigns: K must not be NULL");
    if (K->order < TF_MIN_ORDER || K->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "tf_ktensor_fixsigns: the ktensor's order %u is outside %d..%d", K->order,
                       TF_MIN_ORDER, TF_MAX_ORDER);
    const uint64_t R = K->rank;
    for (uint32_t m = 0; m < K->order; ++m) {
        const tf_matrix *A = &K->factors[m];
        if (A->rows != K->dims[m] || A->cols != R || (A->rows && !A->data))
            return tf_fail(TF_ERR_ARG, "tf_ktensor_fixsigns: factor %u is %llu x %llu%s, expected %llu x %llu", m + 1,
                           (unsigned long long)A->rows, (unsigned long long)A->cols, A->data ? "" : " without data",
                           (unsigned long long)K->dims[m], (unsigned long long)R);
    }
    if (R == 0) return TF_OK;
    /* per column: the largest magnitude so far, whether it is negative,
     * whether a NaN was seen (np.argmax picks the first NaN, whose sign is
     * not negative); then per mode and column the sign to multiply by */
    double *big = NULL, *sign = NULL;
    int *neg = NULL, *nan = NULL;
    TF_TRY(TF_ALLOC(big, R, "fixsigns column maxima"));
    tf_status s = TF_ALLOC(sign, (uint64_t)K->order * R, "fixsigns signs");
    if (s == TF_OK) s = TF_ALLOC(neg, (uint64_t)K->order * R, "fixsigns negative columns");
    if (s == TF_OK) s = TF_ALLOC(nan, R, "fixsigns NaN columns");
    for (uint32_t m = 0; s == TF_OK && m < K->order; ++m) {
        const double *A = K->factors[m].data;
        int *ng = neg + (uint64_t)m * R;
        for (uint64_t r = 0; r < R; ++r) big[r] = -1.0, ng[r] = 0, nan[r] = 0;
        /* row by row (row-major factors), branch-free so it vectorises over
         * the columns; strictly larger wins, so the first of ties stays */
        for (uint64_t i = 0; i < K->factors[m].rows; ++i) {
            const double *row = A + i * R;
            for (uint64_t r = 0; r < R; ++r) {
                const double b = fabs(row[r]);
                const int gt = b > big[r];
                big[r] = gt ? b : big[r];
                ng[r] = gt ? row[r] < 0.0 : ng[r];
                nan[r] |= b != b;
            }
        }
        for (uint64_t r = 0; r < R; ++r) ng[r] &= !nan[r];
    }
    if (s == TF_OK)
        for (uint64_t r = 0; r < R; ++r) {
            uint32_t k = 0;
            for (uint32_t m = 0; m < K->order; ++m) k += (uint32_t)neg[(uint64_t)m * R + r];
            uint32_t left = 2 * (k / 2); /* the first `left` negative ones, in mode order */
            for (uint32_t m = 0; m < K->order; ++m) {
                const int flip = neg[(uint64_t)m * R + r] && left > 0;
                left -= (uint32_t)flip;
                sign[(uint64_t)m * R + r] = flip ? -1.0 : 1.0;
            }
        }
    for (uint32_t m = 0; s == TF_OK && m < K->order; ++m) {
        const double *sg = sign + (uint64_t)m * R;
        uint64_t r = 0;
        while (r < R && sg[r] > 0) ++r;
        if (r == R) continue; /* nothing to flip in this factor */
        double *A = K->factors[m].data;
        for (uint64_t i = 0; i < K->factors[m].rows; ++i)
            for (uint64_t c = 0; c < R; ++c) A[i * R + c] *= sg[c];
    }
    tf_free(big);
    tf_free(sign);
    tf_free(neg);
    tf_free(nan);
    return s;
}

tf_status tf_cp_apr_loglik(const tf_tensor *X, const tf_ktensor *K, int threads, double *out)
{
    if (!X || !K || !out) return tf_fail(TF_ERR_ARG, "tf_cp_apr_loglik: X, K and out must not be NULL");
    *out = 0.0;
    TF_TRY(check_pair("tf_cp_apr_loglik", X, K));
    if (threads < 0) return tf_fail(TF_ERR_ARG, "tf_cp_apr_loglik: threads %d is negative", threads);
    const uint64_t R = K->rank;
    for (uint32_t m = 0; m < K->order; ++m) /* a Poisson model is >= 0 */
        for (uint64_t e = 0; e < K->dims[m] * R; ++e)
            if (!(K->factors[m].data[e] >= 0.0))
                return tf_fail(TF_ERR_ARG, "tf_cp_apr_loglik: factor %u has %g at row %llu, column %llu (a Poisson "
                               "model's entries are >= 0)", m + 1, K->factors[m].data[e],
                               (unsigned long long)(e / R + 1), (unsigned long long)(e % R + 1));
    for (uint64_t r = 0; K->lambda && r < R; ++r)
        if (!(K->lambda[r] >= 0.0))
            return tf_fail(TF_ERR_ARG, "tf_cp_apr_loglik: lambda %llu is %g (a Poisson model's weights are >= 0)",
                           (unsigned long long)r + 1, K->lambda[r]);
    const double *A[TF_MAX_ORDER];
    for (uint32_t m = 0; m < K->order; ++m) A[m] = K->factors[m].data;
    const tf_apr_phi_in in = {X, 0, NULL, A, R, 0.0, 0, 0, threads, NULL, NULL};
    double data = 0.0, *sums = NULL, *prod = NULL;
    TF_TRY(tf_cpu_apr_logdot(&in, K->lambda, &data));
    TF_TRY(TF_ALLOC(sums, 2 * R, "log-likelihood column sums"));
    prod = sums + R;
    tf_status s = TF_OK;
    for (uint64_t r = 0; r < R; ++r) prod[r] = K->lambda ? K->lambda[r] : 1.0;
    /* the sum of all of K's entries: sum_r lambda_r prod_n (column sum r of A_n) */
    for (uint32_t m = 0; m < K->order && s == TF_OK; ++m) {
        s = tf_dense_column_abs_sums(K->factors[m].data, K->dims[m], R, threads, sums);
        for (uint64_t r = 0; s == TF_OK && r < R; ++r) prod[r] *= sums[r];
    }
    double model = 0.0;
    for (uint64_t r = 0; r < R; ++r) model += prod[r];
    tf_free(sums);
    if (s == TF_OK) *out = data - model;
    return s;
}
