/* SPDX-License-Identifier: BSD-3-Clause */
/* Small dense kernels of GPU CP-ALS (the cuBLAS / cuSOLVER calls are in
 * gpu/cpd/backend.cu). Matrices as on the CPU: factors row-major I x R, Grams and
 * their Hadamard products R x R symmetric (both triangles filled).
 *
 * Reductions over rows are deterministic: rows are cut into a number of
 * slabs that depends only on I (tf_gpu_slabs), each slab reduced by one
 * thread block in a fixed order, and the slab partials (double) combined in
 * order by one kernel. Values are T (float or double); sums are double. */
#ifndef TF_GPU_CPD_DENSE_CUH
#define TF_GPU_CPD_DENSE_CUH
#include <stdint.h>

#include "gpu/runtime/check.cuh"

/* Scalars of one iteration step that come back to the host in one copy. */
struct tf_gpu_scalars {
    double inner;        /* <X, K> from the last fit_terms              */
    double knorm2;       /* ||K||^2                                     */
    double diag_min;     /* smallest / largest diagonal of the Cholesky */
    double diag_max;     /*   factor (a condition estimate)             */
    int info;            /* potrf / syevd info                          */
    int nonfinite;       /* set by any kernel that met NaN / Inf        */
    unsigned pinv;       /* small-rank solves that took the pseudo-inverse (running count) */
};

/* Number of row slabs for reductions over I rows (partials: slabs x R doubles). */
uint32_t tf_gpu_slabs(uint64_t I);

/* V = elementwise product of G[k], k < n, k != skip (all ones if none);
 * sets sc->nonfinite if V has a non-finite entry. */
template <typename T>
tf_status tf_gpu_hadamard(const T *const *G, uint32_t n, uint32_t skip, uint32_t R, T *V,
                          tf_gpu_scalars *sc, cudaStream_t st);
/* Copies the upper triangle (column-major, as syrk writes it) to the lower. */
template <typename T>
tf_status tf_gpu_symmetrize(T *G, uint32_t R, cudaStream_t st);
/* lambda[r] = 2-norm of column r (max_norm 0) or max(max|A(:,r)|, 1);
 * columns with lambda > 0 divided by it; non-finite columns set sc->nonfinite. */
template <typename T>
tf_status tf_gpu_normalize(T *A, uint64_t I, uint32_t R, int max_norm, T *lambda, T *inv,
                           double *partial, tf_gpu_scalars *sc, cudaStream_t st);
/* sc->inner = sum_r w[r] s_0[r] ... s_{ns-1}[r] sum_i A(i,r) B(i,r) (the s_k
 * are the deferred column scales of the small-rank path; ns may be 0). */
template <typename T>
tf_status tf_gpu_weighted_inner(const T *A, const T *B, uint64_t I, uint32_t R, const T *w,
                                const T *const *s, uint32_t ns, double *partial, tf_gpu_scalars *sc,
                                cudaStream_t st);
/* A(i, r) *= s[r] for every row. */
template <typename T>
tf_status tf_gpu_scale_columns(T *A, uint64_t I, uint32_t R, const T *s, cudaStream_t st);
/* sc->knorm2 = x^T V x. */
template <typename T>
tf_status tf_gpu_quadratic(const T *V, const T *x, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st);
/* sc->diag_min / diag_max = smallest / largest |L(i,i)|. */
template <typename T>
tf_status tf_gpu_diag_range(const T *L, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st);
/* Qs = Q diag(1/w) with eigenvalues w <= rcond * max|w| dropped (as zero). */
template <typename T>
tf_status tf_gpu_pinv_scale(const T *Q, const T *w, uint32_t R, double rcond, T *Qs, cudaStream_t st);
/* Small-rank path (R <= TF_GPU_SMALL_RANK): normalisation is deferred. A
 * factor is kept as computed (A_raw) with a column scale vector s (A =
 * A_raw diag(s)); nothing rewrites a factor just to scale it. MTTKRP with
 * raw factors gives M_raw = M diag(1 / P), P = product of the other modes'
 * scales, so the solve uses W' = diag(P) V^-1: A_raw = M_raw W'.
 *
 * tf_gpu_small_solve: one thread block forms V = Hadamard of G[k], k !=
 * skip (into V) and, by Gauss-Jordan elimination in shared memory
 * (double), V^-1; sc->info = potrf's info, sc->diag_min / diag_max = the
 * range of the Cholesky diagonal (square roots of the pivots). If V is not
 * positive definite enough (info != 0 or (min/max)^2 <= rcond) the same
 * block computes the pseudo-inverse instead (cyclic Jacobi eigensolver,
 * eigenvalues <= rcond * max|w| dropped; jq: R*R doubles of scratch) and
 * counts it in sc->pinv: no host round trip either way. W = diag(P) times
 * the (pseudo-)inverse, with P from scales[k], k != skip (NULL: all ones).
 * The caller then forms A_raw = M W with one gemm. */
#define TF_GPU_SMALL_RANK 64
template <typename T>
tf_status tf_gpu_small_solve(const T *const *G, const T *const *scales, uint32_t n, uint32_t skip, uint32_t R,
                             double rcond, T *V, T *W, double *jq, tf_gpu_scalars *sc, cudaStream_t st);
/* tf_gpu_gram(A, I, R, norm, ..., s, lambda, G[g]) of a short factor (mode
 * g) and then tf_gpu_small_solve(G, scales, n, skip, ...) with its new
 * Gram and scale, in one block (one launch, no global round trip between
 * them): the small-rank sweep's side stream, where the two launches
 * outlasted the short MTTKRPs they run beside. R <= 32, 1 <= I <=
 * TF_GPU_GRAM_SOLVE_MAX_ROWS, norm 1 or 2; g != skip. Same results as the
 * two calls up to the order of the Gram's sums (its lambda from the
 * max-norm is the same). */
#define TF_GPU_GRAM_SOLVE_MAX_ROWS 65536
/* CP-ALS uses it up to this many rows: one block takes ~2700 cycles per 64
 * rows of Gram (H200), so at ~512 rows the two launches cost as much. */
#define TF_GPU_GRAM_SOLVE_ROWS 256
template <typename T>
tf_status tf_gpu_gram_solve(const T *A, uint64_t I, uint32_t g, int norm, T *s, T *lambda, const T *const *G,
                            const T *const *scales, uint32_t n, uint32_t skip, uint32_t R, double rcond, T *V, T *W,
                            double *jq, tf_gpu_scalars *sc, cudaStream_t st);
/* Small-rank Gram in one read of A_raw, deterministic: each of
 * tf_gpu_gram_slabs(I) row slabs is reduced into gpart (the slab's R x R
 * Gram partial and its column max |a|; tf_gpu_gram_partial_count doubles
 * in all); the slabs are summed in order (graw: R*R doubles of scratch)
 * and, with norm = 1 (2-norm) or 2 (max(max|a|, 1)), lambda and the new
 * scale s = 1 / lambda are set (1 for a zero column), as the CPU's
 * normalisation of A would; with norm = 0 s is kept. Either way G =
 * diag(s) G_raw diag(s), the Gram of the scaled factor. Non-finite values
 * set sc->nonfinite. With few slabs the last block to finish sums and
 * scales (one launch; counter: one unsigned, zero before the first call,
 * left zero); else two more small kernels do. */
uint32_t tf_gpu_gram_slabs(uint64_t I);
/* Doubles of gpart for I rows and rank R. */
uint64_t tf_gpu_gram_partial_count(uint64_t I, uint32_t R);
template <typename T>
tf_status tf_gpu_gram(const T *A, uint64_t I, uint32_t R, int norm, double *gpart, double *graw, unsigned *counter,
                      T *s, T *lambda, T *G, tf_gpu_scalars *sc, cudaStream_t st);
/* The end of tf_gpu_gram for S slab partials in gpart (R x R Grams, then
 * the column maxima): sums, lambda, s and G as described there (two small
 * launches). */
template <typename T>
tf_status tf_gpu_gram_finish(const double *gpart, uint32_t S, uint32_t R, int norm, double *graw, T *s, T *lambda,
                             T *G, tf_gpu_scalars *sc, cudaStream_t st);
/* A = M W and then tf_gpu_gram(A, ...) in one read of M (R == 32; gpart,
 * graw, norm, s, lambda, G as for tf_gpu_gram; src/gpu/cpd/apply_gram.cu):
 * for long factors, where a separate Gram pass reads A again beside the
 * next MTTKRP. In float the product is formed by 3xTF32 MMAs (float
 * accumulators, about fp32 accuracy), in double by FP64 MMAs; the Gram of
 * the stored A is summed in double either way. */
#define TF_GPU_APPLY_GRAM_RANK 32
#define TF_GPU_APPLY_GRAM_ROWS 65536 /* CP-ALS uses it above this many rows */
template <typename T>
tf_status tf_gpu_apply_gram(const T *M, uint64_t I, uint32_t R, const T *W, T *A, int norm, double *gpart,
                            double *graw, T *s, T *lambda, T *G, tf_gpu_scalars *sc, cudaStream_t st);
/* The pass of tf_gpu_apply_gram alone: A = M W and gpart's slab partials
 * (tf_gpu_gram_slabs(I) of them: Grams, with norm 2 the column maxima) in
 * tf_gpu_gram_fit's layout; with fit also the fit's dot products of M and
 * the stored A per column (the last mode of a CP-ALS iteration: then
 * tf_gpu_gram_fit_finish ends it, without reading A or M again). */
template <typename T>
tf_status tf_gpu_apply_gram_partials(const T *M, uint64_t I, uint32_t R, const T *W, T *A, int norm, int fit,
                                     double *gpart, cudaStream_t st);
/* tf_gpu_gram (into s, lambda, G) and then the fit terms of
 * tf_gpu_fit_terms(M, A, I, R, lambda, scales, Gs, n) (Gs includes G, scales
 * includes s), with the dot products of M and A formed in the Gram's pass
 * over A: one launch when the Gram takes one, else three (counter as for
 * tf_gpu_gram; gpart: tf_gpu_gram_partial_count(I, R) doubles). */
template <typename T>
tf_status tf_gpu_gram_fit(const T *A, const T *M, uint64_t I, uint32_t R, int norm, double *gpart, double *graw,
                          unsigned *counter, T *s, T *lambda, T *G, const T *const *scales, const T *const *Gs,
                          uint32_t n, tf_gpu_scalars *sc, cudaStream_t st);
/* The end of tf_gpu_gram_fit for S slab partials in gpart (Grams, column
 * maxima, the fit's dot products): the Gram's sum, then one block for
 * lambda, s, G and both fit terms (two small launches). */
template <typename T>
tf_status tf_gpu_gram_fit_finish(const double *gpart, uint32_t S, uint32_t R, int norm, double *graw, T *s,
                                 T *lambda, T *G, const T *const *scales, const T *const *Gs, uint32_t n,
                                 tf_gpu_scalars *sc, cudaStream_t st);
/* Both fit terms in one launch: sc->inner as tf_gpu_weighted_inner(A, B,
 * I, R, w, scales, n) and sc->knorm2 = w^T (Hadamard of G[0..n-1]) w as
 * tf_gpu_hadamard + tf_gpu_quadratic give (the same products; the dot
 * partials are summed by the whole block, in a different fixed order);
 * partial: tf_gpu_slabs(I) * R doubles; counter as for tf_gpu_gram;
 * R <= TF_GPU_SMALL_RANK. */
template <typename T>
tf_status tf_gpu_fit_terms(const T *A, const T *B, uint64_t I, uint32_t R, const T *w, const T *const *scales,
                           const T *const *G, uint32_t n, double *partial, unsigned *counter, tf_gpu_scalars *sc,
                           cudaStream_t st);
/* A = M W (row-major I x R, R <= TF_GPU_SMALL_RANK) in one launch, for
 * short single-precision factors (TF_GPU_APPLY_ROWS rows or fewer): there
 * cuBLAS's sgemm takes two launches (split-K); measured on an H200 for
 * uber-apr14, R = 32: 3.7 us against 4.1 + 2.0 us. In double cuBLAS's
 * tensor-core dgemm (one launch, ~3 us) beats it (4.5 us). */
#define TF_GPU_APPLY_ROWS 65536
template <typename T>
tf_status tf_gpu_small_apply(const T *M, uint64_t I, uint32_t R, const T *W, T *A, cudaStream_t st);
/* x[0..n-1] = v. */
template <typename T>
tf_status tf_gpu_fill(T *x, uint64_t n, T v, cudaStream_t st);
#endif
