/* SPDX-License-Identifier: BSD-3-Clause */
/* The model at the non-zeros (cpu/model_values.h): one pass, blocks of
 * TF_MODEL_BLOCK non-zeros over the threads, a length-R row of products per
 * thread. */
#include "cpu/model_values.h"

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

/* The pass: out (may be NULL) gets m_j; *sum (may be NULL) gets sum_j x_j
 * m_j, or with squares sum_j (x_j - m_j)^2. */
static tf_status model_pass(const tf_tensor *X, const tf_ktensor *K, int threads, double *out, double *dot,
                            int squares)
{
    const uint64_t nnz = X->nnz, R = K->rank;
    const uint32_t N = X->order;
    const uint64_t nb = (nnz + TF_MODEL_BLOCK - 1) / TF_MODEL_BLOCK;
    int nt = tf_resolve_threads(threads);
    if ((uint64_t)nt > nb) nt = nb ? (int)nb : 1;
    const uint64_t stride = (R + 7) & ~(uint64_t)7; /* a thread's row on cache lines of its own */
    double *rows = NULL, *part = NULL, *ones = NULL;
    TF_TRY(TF_ALLOC(rows, (uint64_t)nt * stride, "model values rows"));
    tf_status s = dot ? TF_ALLOC(part, nb ? nb : 1, "model values partial sums") : TF_OK;
    const double *lambda = K->lambda;
    if (s == TF_OK && !lambda) {
        s = TF_ALLOC(ones, R, "model values weights");
        if (s == TF_OK)
            for (uint64_t r = 0; r < R; ++r) ones[r] = 1.0;
        lambda = ones;
    }
    if (s != TF_OK) {
        tf_free(rows);
        tf_free(part);
        tf_free(ones);
        return s;
    }
    const double *A[TF_MAX_ORDER];
    for (uint32_t n = 0; n < N; ++n) A[n] = K->factors[n].data;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *acc = rows + (uint64_t)tf_thread_id() * stride;
#pragma omp for schedule(dynamic, 1)
        for (int64_t b = 0; b < (int64_t)nb; ++b) {
            const uint64_t k0 = (uint64_t)b * TF_MODEL_BLOCK;
            const uint64_t k1 = k0 + TF_MODEL_BLOCK < nnz ? k0 + TF_MODEL_BLOCK : nnz;
            double sum = 0.0;
            for (uint64_t k = k0; k < k1; ++k) {
                const double *a0 = A[0] + (uint64_t)X->ind[0][k] * R;
                for (uint64_t r = 0; r < R; ++r) acc[r] = lambda[r] * a0[r];
                for (uint32_t n = 1; n < N; ++n) {
                    const double *an = A[n] + (uint64_t)X->ind[n][k] * R;
                    for (uint64_t r = 0; r < R; ++r) acc[r] *= an[r];
                }
                double m = 0.0;
                for (uint64_t r = 0; r < R; ++r) m += acc[r];
                if (out) out[k] = m;
                if (squares) {
                    const double e = X->vals[k] - m;
                    sum += e * e;
                } else {
                    sum += X->vals[k] * m;
                }
            }
            if (part) part[b] = sum;
        }
    }
    if (dot) {
        double d = 0.0;
        for (uint64_t b = 0; b < nb; ++b) d += part[b];
        *dot = d;
    }
    tf_free(rows);
    tf_free(part);
    tf_free(ones);
    return TF_OK;
}

tf_status tf_cpu_model_values(const tf_tensor *X, const tf_ktensor *K, int threads, double *out, double *dot)
{
    return model_pass(X, K, threads, out, dot, 0);
}

tf_status tf_cpu_model_sse(const tf_tensor *X, const tf_ktensor *K, int threads, double *sse)
{
    return model_pass(X, K, threads, NULL, sse, 1);
}
