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

/* The small-rank Gram (tf_gpu_gram) of A (I x R, R <= 64) in precision
 * prec: norm 1 / 2 as above, 0 keeps the scales s_in; returns lambda (not
 * written with norm 0), s and G = diag(s) A^T A diag(s). */
tf_status tf_gpu_check_gram(tf_precision prec, const double *A, uint64_t I, uint32_t R, int norm, const double *s_in,
                            double *lambda, double *s, double *G, int *nonfinite);

/* The small-rank solve (tf_gpu_small_solve) of n Grams G (n stacked R x R)
 * and column scales (n stacked R-vectors), mode skip left out: V = the
 * Hadamard product of the others, P the product of their scales, W =
 * diag(P) V^-1 (or the pseudo-inverse); with the solve's potrf-style info
 * and its count of pseudo-inverses (pinv). */
tf_status tf_gpu_check_small_solve(tf_precision prec, const double *G, const double *scales, uint32_t n,
                                   uint32_t skip, uint32_t R, double rcond, double *V, double *W, int *info,
                                   unsigned *pinv, int *nonfinite);

#ifdef __cplusplus
}
#endif
#endif
