/* Test entries to GPU CP-ALS's dense kernels (internal; tests only): host
 * doubles in, host doubles out, every device output poisoned (NaN) before
 * the kernel runs. Without the CUDA backend they fail with
 * TF_ERR_UNAVAILABLE. */
#ifndef TF_CUDA_DENSE_CHECK_H
#define TF_CUDA_DENSE_CHECK_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fused apply + Gram pass (tf_gpu_apply_gram, rank 32) in precision
 * prec: M (I x 32, row-major) and W (32 x 32) converted to it; returns
 * A = M W (I x 32), lambda, the new column scales s (32 each) and G (the
 * Gram of A diag(s), 32 x 32) as doubles, and whether a kernel flagged a
 * non-finite value. norm: 1 (2-norm) or 2 (max-norm). */
tf_status tf_gpu_check_apply_gram(tf_precision prec, const double *M, uint64_t I, const double *W, int norm,
                                  double *A, double *lambda, double *s, double *G, int *nonfinite);

#ifdef __cplusplus
}
#endif
#endif
