/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM internals shared by the front end (src/ops/sddmm.c), the CPU kernels
 * and the CUDA backend (src/gpu/sddmm;
 * CPU-only builds link src/gpu/none, which reports no GPU). */
#ifndef TF_BACKEND_SDDMM_BACKENDS_H
#define TF_BACKEND_SDDMM_BACKENDS_H
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* P[k] from the dot product d of row i of A and row j of B (S[k] at (i, j)). */
static inline double tf_sddmm_combine(tf_sddmm_op op, double alpha, double beta, double d, double s)
{
    const double sampled = op == TF_SDDMM_SCALE ? d * s : d;
    return beta == 0.0 ? alpha * sampled : alpha * sampled + beta * s;
}

/* OpenMP kernel (nnz-balanced over CSR rows, vectorised dot products); float
 * arithmetic when o->precision is TF_SINGLE. Shapes are checked by the caller. */
tf_status tf_cpu_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                       double *P);

/* CUDA backend: prepares S (tiles), uploads A, B, runs `warmup` untimed and
 * max(reps, 1) timed runs (times_ms may be NULL), downloads P of the last
 * run. Shapes are checked and K, nnz > 0. */
tf_status tf_cuda_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                        double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info);

#ifdef __cplusplus
}
#endif
#endif
