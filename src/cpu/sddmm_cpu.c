/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU backend's SDDMM plan. The OpenMP kernel: the non-zeros are cut
 * into equal ranges (not equal row ranges, so one heavy row cannot
 * serialise the run); each range finds its first row by binary search and
 * walks its rows, one vectorised dot product per non-zero. TF_SINGLE plans
 * compute the dot products in float, on the caller's float arrays or on
 * float copies of double ones (kept in the plan, made on first use). */
#include <string.h>

#include "seams/sddmm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

struct tf_sddmm_cpu {
    tf_csr S;       /* a copy, or the caller's (borrowed) */
    int own;        /* S is a copy: freed with the plan */
    uint64_t K;
    tf_sddmm_opts o;
    int threads;
    float *a32, *b32; /* TF_SINGLE with double A / B: float copies (rows x K) */
};

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

/* One kernel per value type T of A and B (dot products accumulate in T)
 * and type TP of P. */
#define TF_DEFINE_SDDMM_KERNEL(T, TP, NAME)                                                          \
    static void NAME(const tf_csr *S, const T *A, uint64_t lda, const T *B, uint64_t ldb, uint64_t K, \
                     const tf_sddmm_opts *o, TP *P, int threads)                                    \
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
                const T *a = A + i * lda, *b = B + (uint64_t)S->colind[k] * ldb;                    \
                T d = 0;                                                                            \
                _Pragma("omp simd reduction(+ : d)")                                                \
                for (uint64_t t = 0; t < K; ++t) d += a[t] * b[t];                                  \
                P[k] = (TP)tf_sddmm_combine(o->op, o->alpha, o->beta, (double)d, S->vals[k]);       \
            }                                                                                       \
        }                                                                                           \
    }

TF_DEFINE_SDDMM_KERNEL(double, double, sddmm_f64)
TF_DEFINE_SDDMM_KERNEL(float, double, sddmm_f32)
TF_DEFINE_SDDMM_KERNEL(float, float, sddmm_f32_f32)

static uint64_t ld_of(const tf_dense *m) { return m->ld ? m->ld : m->cols; }

/* The float values of m (rows x K): its own when it holds floats, else a
 * copy in *buf (rows x K, made on first use). *ld gets their row stride. */
static tf_status floats_of(const tf_dense *m, uint64_t K, int threads, float **buf, const float **out, uint64_t *ld)
{
    if (m->precision == TF_SINGLE) {
        *out = (const float *)m->data;
        *ld = ld_of(m);
        return TF_OK;
    }
    const uint64_t n = m->rows * K;
    if (!*buf) TF_TRY(TF_ALLOC(*buf, n > 0 ? n : 1, "float copy of a dense operand"));
    const double *src = (const double *)m->data;
    const uint64_t lds = ld_of(m), rows = m->rows;
    float *dst = *buf;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t k = 0; k < K; ++k) dst[i * K + k] = (float)src[i * lds + k];
    *out = dst;
    *ld = K;
    return TF_OK;
}

tf_status tf_cpu_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int borrow,
                                  tf_sddmm_cpu **out)
{
    *out = NULL;
    tf_sddmm_cpu *c = NULL;
    TF_TRY(TF_CALLOC(c, 1, "CPU SDDMM plan"));
    c->K = K;
    c->o = *o;
    c->threads = tf_resolve_threads(o->threads);
    if (borrow) {
        c->S = *S;
    } else {
        tf_status s = tf_csr_alloc(&c->S, S->rows, S->cols, S->nnz);
        if (s != TF_OK) {
            tf_free(c);
            return s;
        }
        c->own = 1;
        memcpy(c->S.rowptr, S->rowptr, (S->rows + 1) * sizeof *S->rowptr);
        if (S->nnz) {
            memcpy(c->S.colind, S->colind, S->nnz * sizeof *S->colind);
            memcpy(c->S.vals, S->vals, S->nnz * sizeof *S->vals);
        }
    }
    *out = c;
    return TF_OK;
}

tf_status tf_cpu_sddmm_plan_run(tf_sddmm_cpu *c, const tf_dense *A, const tf_dense *B, const tf_dense *P)
{
    const tf_csr *S = &c->S;
    const tf_sddmm_opts *o = &c->o;
    if (o->algo == TF_SDDMM_ALGO_REFERENCE) {
        if (A->precision != TF_DOUBLE || B->precision != TF_DOUBLE || P->precision != TF_DOUBLE ||
            ld_of(A) != c->K || ld_of(B) != c->K)
            return tf_fail(TF_ERR_ARG, "SDDMM reference: A, B and P must hold doubles, A and B with ld = K = %llu",
                           (unsigned long long)c->K);
        const tf_matrix a = {A->rows, A->cols, (double *)A->data}, b = {B->rows, B->cols, (double *)B->data};
        return tf_sddmm_reference(S, &a, &b, o->op, o->alpha, o->beta, (double *)P->data);
    }
    if (o->precision == TF_DOUBLE) {
        sddmm_f64(S, (const double *)A->data, ld_of(A), (const double *)B->data, ld_of(B), c->K, o,
                  (double *)P->data, c->threads);
        return TF_OK;
    }
    const float *a, *b;
    uint64_t lda, ldb;
    TF_TRY(floats_of(A, c->K, c->threads, &c->a32, &a, &lda));
    TF_TRY(floats_of(B, c->K, c->threads, &c->b32, &b, &ldb));
    if (P->precision == TF_SINGLE) sddmm_f32_f32(S, a, lda, b, ldb, c->K, o, (float *)P->data, c->threads);
    else sddmm_f32(S, a, lda, b, ldb, c->K, o, (double *)P->data, c->threads);
    return TF_OK;
}

void tf_cpu_sddmm_plan_free(tf_sddmm_cpu *c)
{
    if (!c) return;
    if (c->own) tf_csr_free(&c->S);
    tf_free(c->a32);
    tf_free(c->b32);
    tf_free(c);
}
