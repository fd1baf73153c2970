/* Small dense kernels of GPU CP-ALS (the cuBLAS / cuSOLVER calls are in
 * cpd_cuda.cu). Matrices as on the CPU: factors row-major I x R, Grams and
 * their Hadamard products R x R symmetric (both triangles filled).
 *
 * Reductions over rows are deterministic: rows are cut into a number of
 * slabs that depends only on I (tf_gpu_slabs), each slab reduced by one
 * thread block in a fixed order, and the slab partials (double) combined in
 * order by one kernel. Values are T (float or double); sums are double. */
#ifndef TF_CUDA_DENSE_CUDA_CUH
#define TF_CUDA_DENSE_CUDA_CUH
#include <stdint.h>

#include "cuda/check.cuh"

/* Scalars of one iteration step that come back to the host in one copy. */
struct tf_gpu_scalars {
    double inner;        /* <X, K> from the last fit_terms              */
    double knorm2;       /* ||K||^2                                     */
    double diag_min;     /* smallest / largest diagonal of the Cholesky */
    double diag_max;     /*   factor (a condition estimate)             */
    int info;            /* potrf / syevd info                          */
    int nonfinite;       /* set by any kernel that met NaN / Inf        */
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
/* sc->inner = sum_r w[r] sum_i A(i,r) B(i,r). */
template <typename T>
tf_status tf_gpu_weighted_inner(const T *A, const T *B, uint64_t I, uint32_t R, const T *w,
                                double *partial, tf_gpu_scalars *sc, cudaStream_t st);
/* sc->knorm2 = x^T V x. */
template <typename T>
tf_status tf_gpu_quadratic(const T *V, const T *x, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st);
/* sc->diag_min / diag_max = smallest / largest |L(i,i)|. */
template <typename T>
tf_status tf_gpu_diag_range(const T *L, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st);
/* Qs = Q diag(1/w) with eigenvalues w <= rcond * max|w| dropped (as zero). */
template <typename T>
tf_status tf_gpu_pinv_scale(const T *Q, const T *w, uint32_t R, double rcond, T *Qs, cudaStream_t st);
/* Small-rank solve (R <= TF_GPU_SMALL_RANK), replacing potrf + potrs:
 * one thread block forms V = Hadamard of G[k], k != skip (into V, for the
 * pseudo-inverse fallback) and, by Gauss-Jordan elimination in shared
 * memory (double), W = V^-1 (as T) when V is positive definite;
 * sc->info = potrf's info, sc->diag_min / diag_max = the range of the
 * Cholesky diagonal (square roots of the elimination's pivots). The caller
 * then forms A = M W with one gemm (no M -> A copy, no triangular solves). */
#define TF_GPU_SMALL_RANK 64
template <typename T>
tf_status tf_gpu_small_cholesky(const T *const *G, uint32_t n, uint32_t skip, uint32_t R, T *V,
                                T *W, tf_gpu_scalars *sc, cudaStream_t st);
/* Small-rank Gram G = A^T A (R <= TF_GPU_SMALL_RANK), deterministic:
 * tf_gpu_gram_partials reduces each of tf_gpu_gram_slabs(I) row slabs into
 * gpart (tf_gpu_gram_partial_count doubles), scaling A's columns by inv first (and
 * writing A back) when inv is not NULL: normalisation and Gram in one pass;
 * tf_gpu_gram_finish sums the slabs in order into G (both triangles). */
uint32_t tf_gpu_gram_slabs(uint64_t I);
/* Doubles of gpart for I rows and rank R. */
uint64_t tf_gpu_gram_partial_count(uint64_t I, uint32_t R);
template <typename T>
tf_status tf_gpu_gram_partials(T *A, uint64_t I, uint32_t R, const T *inv, double *gpart,
                               cudaStream_t st);
template <typename T>
tf_status tf_gpu_gram_finish(const double *gpart, uint64_t I, uint32_t R, T *G, cudaStream_t st);
/* lambda and inv of tf_gpu_normalize without scaling A (gram_partials does it). */
template <typename T>
tf_status tf_gpu_normalize_partials(const T *A, uint64_t I, uint32_t R, int max_norm, T *lambda, T *inv,
                                    double *partial, tf_gpu_scalars *sc, cudaStream_t st);
/* x[0..n-1] = v. */
template <typename T>
tf_status tf_gpu_fill(T *x, uint64_t n, T v, cudaStream_t st);
#endif
