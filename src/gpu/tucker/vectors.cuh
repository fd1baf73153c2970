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
    double *part = nullptr;    /* COL_GRAM: the Gram's pieces (tf_gpu_gram_scratch) */
    double *work = nullptr;
    int *info = nullptr;
    int lwork = 0;
    ~tf_gpu_lead();
};

/* Device doubles the leading vectors of Y (I x C, r of them) by method m
 * (ROW_GRAM or COL_GRAM) need, without the solver's workspace. */
uint64_t tf_gpu_lead_doubles(const tf_gpu_dev *dev, uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m);
/* Allocates the work for the largest of `count` problems (I[k], C[k],
 * r[k], method m[k]) and the cuSOLVER workspace they need. */
tf_status tf_gpu_lead_alloc(tf_gpu_lead *L, tf_gpu_dev *dev, uint32_t count, const uint64_t *I, const uint64_t *C,
                            const uint64_t *r, const tf_tucker_svd *m);
/* The steps, for a backend whose Y lies in parts (several GPUs):
 * - tf_gpu_gram: G (device) <- Y Y^T (ROW_GRAM, I x I) or Y^T Y (COL_GRAM,
 *   C x C) of Y (device, I x C row-major) on dev, at least the upper
 *   triangle; COL_GRAM over many rows in pieces of rows side by side, their
 *   products summed in order, in scratch (tf_gpu_gram_scratch doubles;
 *   NULL or 0 of them: one syrk);
 * - tf_gpu_times_v: Q (device, I x r column-major) <- Y V, V (C x r
 *   column-major) on dev;
 * - tf_gpu_lead_eig: from the Gram in L->G (n x n): ROW_GRAM U (I x r
 *   row-major) <- its r leading eigenvectors, signs fixed; COL_GRAM L->V
 *   (C x r column-major) <- them;
 * - tf_gpu_lead_qr: U (I x r row-major) <- L->Q (I x r column-major, Y V)
 *   orthonormalised (geqrf / orgqr), signs fixed.
 * The solver's steps wait for it (its info). */
uint64_t tf_gpu_gram_scratch(const tf_gpu_dev *dev, uint64_t I, uint64_t C, tf_tucker_svd m);
tf_status tf_gpu_gram(tf_gpu_dev *dev, const double *Y, uint64_t I, uint64_t C, tf_tucker_svd m, double *G,
                      double *scratch);
tf_status tf_gpu_times_v(tf_gpu_dev *dev, const double *Y, uint64_t I, uint64_t C, const double *V, uint64_t r,
                         double *Q);
tf_status tf_gpu_lead_eig(tf_gpu_lead *L, uint64_t n, uint64_t r, tf_tucker_svd m, double *U);
tf_status tf_gpu_lead_qr(tf_gpu_lead *L, uint64_t I, uint64_t r, double *U);
/* U (device, I x r row-major) <- the r leading left singular vectors of Y
 * (device, I x C row-major) by method m, signs fixed: the steps above. */
tf_status tf_gpu_lead_run(tf_gpu_lead *L, const double *Y, uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m,
                          double *U);
#endif
