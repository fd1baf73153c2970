/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entries to GPU CP-ALS's dense kernels (internal; tests only): host
 * doubles in, host doubles out, every device output poisoned (NaN) before
 * the kernel runs. Without the CUDA backend they fail with
 * TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_DENSE_CHECK_H
#define TF_TESTS_HOOKS_DENSE_CHECK_H
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

/* The previous mode's Gram fused with the next solve (tf_gpu_gram_solve,
 * R <= 32): mode g's factor A (I x R) with norm 1 or 2 gives lambda, s
 * and its Gram Gg as tf_gpu_check_gram does; then the solve of mode skip
 * as tf_gpu_check_small_solve, with mode g's Gram and scale those just
 * formed (mode g's entries of the stacked G and scales are not read). */
tf_status tf_gpu_check_gram_solve(tf_precision prec, const double *A, uint64_t I, uint32_t g, int norm, const double *G,
                                  const double *scales, uint32_t n, uint32_t skip, uint32_t R, double rcond,
                                  double *lambda, double *s, double *Gg, double *V, double *W, int *info,
                                  unsigned *pinv, int *nonfinite);

/* The small-rank apply (tf_gpu_small_apply: short factors, R <= 64) in
 * precision prec: A = M W (M, A: I x R row-major; W: R x R). */
tf_status tf_gpu_check_small_apply(tf_precision prec, const double *M, uint64_t I, uint32_t R, const double *W,
                                   double *A);

/* The fit terms (tf_gpu_fit_terms) of A and B (I x R, R <= 64), weights w
 * (R), n stacked scale vectors and n stacked R x R Grams:
 * inner = sum_r w_r prod_k scales_k[r] sum_i A_ir B_ir and
 * knorm2 = w^T (Hadamard product of the Grams) w. */
tf_status tf_gpu_check_fit_terms(tf_precision prec, const double *A, const double *B, uint64_t I, uint32_t R,
                                 const double *w, const double *scales, const double *G, uint32_t n, double *inner,
                                 double *knorm2, int *nonfinite);

/* The last mode's Gram with the fit terms (tf_gpu_gram_fit, one launch
 * when the Gram has few slabs): the Gram of A (I x R) with norm 1 or 2
 * gives lambda, s and Gn as tf_gpu_check_gram does; then the fit terms of
 * M (I x R) and A with weights lambda, the n - 1 given scale vectors and
 * Grams (stacked) and s and Gn as mode n's. */
tf_status tf_gpu_check_gram_fit(tf_precision prec, const double *A, const double *M, uint64_t I, uint32_t R, int norm,
                                const double *scales, const double *G, uint32_t n, double *lambda, double *s,
                                double *Gn, double *inner, double *knorm2, int *nonfinite);

/* The last mode's fused pass (tf_gpu_apply_gram_partials with the fit's
 * dot products, then tf_gpu_gram_fit_finish; rank 32): A = M W (M: I x
 * 32, W: 32 x 32) returned, then lambda, s, Gn and the fit terms as
 * tf_gpu_check_gram_fit gives them for that A. */
tf_status tf_gpu_check_apply_gram_fit(tf_precision prec, const double *M, uint64_t I, const double *W, int norm,
                                      const double *scales, const double *G, uint32_t n, double *A, double *lambda,
                                      double *s, double *Gn, double *inner, double *knorm2, int *nonfinite);

#ifdef __cplusplus
}
#endif
#endif
