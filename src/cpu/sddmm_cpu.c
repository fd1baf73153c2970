/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP SDDMM over CSR: the non-zeros are cut into equal ranges (not equal
 * row ranges, so one heavy row cannot serialise the run); each range finds
 * its first row by binary search and walks its rows, one vectorised dot
 * product per non-zero. TF_SINGLE works on float copies of A and B. */
#include <string.h>

#include "backend/sddmm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

/* Row holding non-zero k: the last i with rowptr[i] <= k. */
static uint64_t row_of(const tf_csr *S, uint64_t k)
{
    uint64_t lo = 0, hi = S->rows; /* rowptr[lo] <= k < rowptr[hi] */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (S->rowptr[mid] <= k) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* One kernel per value type T (dot products accumulate in T). */
#define TF_DEFINE_SDDMM_KERNEL(T, NAME)                                                              \
    static void NAME(const tf_csr *S, const T *A, const T *B, uint64_t K, const tf_sddmm_opts *o,     \
                     double *P, int threads)                                                        \
    {                                                                                               \
        const uint64_t nnz = S->nnz;                                                                \
        const int64_t nchunks = (int64_t)threads * 8;                                               \
        _Pragma("omp parallel for schedule(dynamic, 1) num_threads(threads)")                       \
        for (int64_t c = 0; c < nchunks; ++c) {                                                     \
            const uint64_t k0 = nnz * (uint64_t)c / (uint64_t)nchunks;                              \
            const uint64_t k1 = nnz * (uint64_t)(c + 1) / (uint64_t)nchunks;                        \
            if (k0 >= k1) continue;                                                                 \
            uint64_t i = row_of(S, k0);                                                             \
            for (uint64_t k = k0; k < k1; ++k) {                                                    \
                while (S->rowptr[i + 1] <= k) ++i;                                                  \
                const T *a = A + i * K, *b = B + (uint64_t)S->colind[k] * K;                        \
                T d = 0;                                                                            \
                _Pragma("omp simd reduction(+ : d)")                                                \
                for (uint64_t t = 0; t < K; ++t) d += a[t] * b[t];                                  \
                P[k] = tf_sddmm_combine(o->op, o->alpha, o->beta, (double)d, S->vals[k]);           \
            }                                                                                       \
        }                                                                                           \
    }

TF_DEFINE_SDDMM_KERNEL(double, sddmm_f64)
TF_DEFINE_SDDMM_KERNEL(float, sddmm_f32)

static tf_status to_float(const tf_matrix *m, float **out)
{
    const uint64_t n = m->rows * m->cols;
    TF_TRY(TF_ALLOC(*out, n ? n : 1, "float copy of a dense matrix"));
    for (uint64_t k = 0; k < n; ++k) (*out)[k] = (float)m->data[k];
    return TF_OK;
}

tf_status tf_cpu_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                       double *P)
{
    const int threads = tf_resolve_threads(o->threads);
    if (o->precision == TF_DOUBLE) {
        sddmm_f64(S, A->data, B->data, A->cols, o, P, threads);
        return TF_OK;
    }
    float *a = NULL, *b = NULL;
    tf_status s = to_float(A, &a);
    if (s == TF_OK) s = to_float(B, &b);
    if (s == TF_OK) sddmm_f32(S, a, b, A->cols, o, P, threads);
    tf_free(a);
    tf_free(b);
    return s;
}
