/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP SpTTM over fibres: each fibre (non-zeros sharing the index tuple
 * of the other modes, consecutive in fibre order) produces one dense
 * output row, sum over its non-zeros of value * U(i_n, :), in one pass and
 * without atomics. Dynamic scheduling absorbs skewed fibre lengths. */
#include "seams/spttm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

#define TF_DEFINE_SPTTM_KERNEL(T, NAME)                                                              \
    static void NAME(const tf_tensor *X, const tf_fibres *F, const T *U, uint64_t R, double *Y,        \
                     int threads, T *scratch)                                                       \
    {                                                                                               \
        const uint32_t *ix = X->ind[F->mode];                                                       \
        const int64_t nf = (int64_t)F->nfibers;                                                     \
        _Pragma("omp parallel num_threads(threads)")                                                \
        {                                                                                           \
            T *acc = scratch + (uint64_t)tf_thread_id() * R;                                        \
            _Pragma("omp for schedule(dynamic, 16)")                                                \
            for (int64_t f = 0; f < nf; ++f) {                                                      \
                for (uint64_t r = 0; r < R; ++r) acc[r] = 0;                                        \
                for (uint64_t k = F->fptr[f]; k < F->fptr[f + 1]; ++k) {                            \
                    const uint64_t p = F->perm[k];                                                  \
                    const T v = (T)X->vals[p];                                                      \
                    const T *u = U + (uint64_t)ix[p] * R;                                           \
                    _Pragma("omp simd")                                                             \
                    for (uint64_t r = 0; r < R; ++r) acc[r] += v * u[r];                            \
                }                                                                                   \
                double *y = Y + (uint64_t)f * R;                                                    \
                for (uint64_t r = 0; r < R; ++r) y[r] = (double)acc[r];                             \
            }                                                                                       \
        }                                                                                           \
    }

TF_DEFINE_SPTTM_KERNEL(double, spttm_f64)
TF_DEFINE_SPTTM_KERNEL(float, spttm_f32)

tf_status tf_cpu_spttm(const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o,
                       double *Y)
{
    const int threads = tf_resolve_threads(o->threads);
    const uint64_t R = U->cols;
    if (o->precision == TF_DOUBLE) {
        double *scratch = NULL;
        TF_TRY(TF_ALLOC(scratch, (uint64_t)threads * R, "SpTTM row accumulators"));
        spttm_f64(X, F, U->data, R, Y, threads, scratch);
        tf_free(scratch);
        return TF_OK;
    }
    float *u = NULL, *scratch = NULL;
    const uint64_t n = U->rows * R;
    tf_status s = TF_ALLOC(u, n, "float copy of U");
    if (s == TF_OK) s = TF_ALLOC(scratch, (uint64_t)threads * R, "SpTTM row accumulators");
    if (s == TF_OK) {
        for (uint64_t k = 0; k < n; ++k) u[k] = (float)U->data[k];
        spttm_f32(X, F, u, R, Y, threads, scratch);
    }
    tf_free(u);
    tf_free(scratch);
    return s;
}
