/* SPDX-License-Identifier: BSD-3-Clause */
/* SpTTM internals shared by the front end (src/front/spttm.c), the CPU kernel and
 * the CUDA backend (src/gpu/spttm;
 * CPU-only builds link src/gpu/none, which reports no GPU). */
#ifndef TF_SEAMS_SPTTM_BACKENDS_H
#define TF_SEAMS_SPTTM_BACKENDS_H
#include "seams/cuda_table.h"
#include "fmt/spttm_fibres.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Y (F->nfibers x U->cols, row-major) = one dense row per fibre; OpenMP over
 * fibres; float arithmetic when o->precision is TF_SINGLE. */
tf_status tf_cpu_spttm(const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o,
                       double *Y);

/* The CUDA backend (src/gpu/spttm, F-COO; the rows' format:
 * seams/cuda_table.h): tf_cuda_spttm builds and uploads once, runs
 * `warmup` untimed and max(reps, 1) timed runs (times_ms may be NULL),
 * downloads Y. nnz > 0. */
#define TF_CUDA_SPTTM_API(ROW)                                                                                     \
    ROW(MAY_LOAD, tf_status, tf_cuda_spttm,                                                                        \
        (const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o, double *Y,            \
         int warmup, int reps, double *times_ms),                                                                  \
        (X, F, U, o, Y, warmup, reps, times_ms), , tf_cuda_unavailable("GPU SpTTM needs"))
TF_CUDA_SPTTM_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
