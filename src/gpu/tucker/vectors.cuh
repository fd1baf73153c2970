/* SPDX-License-Identifier: BSD-3-Clause */
/* The leading left singular vectors of Y_(n) on one GPU
 * (src/gpu/tucker/vectors.cu): the Gram by cuBLAS syrk, its eigenvectors by
 * cuSOLVER syevd, for the Gram of the columns U = Y V orthonormalised by
 * geqrf / orgqr, then the CPU's sign rule (each column's first
 * largest-magnitude entry positive). Row-major Y (I x C) and U (I x r). */
#ifndef TF_GPU_TUCKER_VECTORS_CUH
#define TF_GPU_TUCKER_VECTORS_CUH
#include <stdint.h>

#include "gpu/runtime/gpu_dev.cuh"

extern "C" {
#include "tenfold.h"
}

/* The device work of the leading vectors, sized for every mode of a run. */
struct tf_gpu_lead {
    tf_gpu_dev *dev = nullptr; /* borrowed */
    double *G = nullptr;       /* the Gram (n x n), then its eigenvectors */
    double *w = nullptr;       /* its eigenvalues                          */
    double *V = nullptr;       /* COL_GRAM: the leading right vectors (C x r, column-major) */
    double *Q = nullptr;       /* COL_GRAM: Y V, then Q of its QR (I x r, column-major)      */
    double *tau = nullptr;
    double *work = nullptr;
    int *info = nullptr;
    int lwork = 0;
    ~tf_gpu_lead();
};

/* Device doubles the leading vectors of Y (I x C, r of them) by method m
 * (ROW_GRAM or COL_GRAM) need, without the solver's workspace. */
uint64_t tf_gpu_lead_doubles(uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m);
/* Allocates the work for the largest of `count` problems (I[k], C[k],
 * r[k], method m[k]) and the cuSOLVER workspace they need. */
tf_status tf_gpu_lead_alloc(tf_gpu_lead *L, tf_gpu_dev *dev, uint32_t count, const uint64_t *I, const uint64_t *C,
                            const uint64_t *r, const tf_tucker_svd *m);
/* U (device, I x r row-major) <- the r leading left singular vectors of Y
 * (device, I x C row-major) by method m, signs fixed; waits for the solver. */
tf_status tf_gpu_lead_run(tf_gpu_lead *L, const double *Y, uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m,
                          double *U);
#endif
