/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense helpers of CP-ALS on the CPU (BLAS/LAPACK + OpenMP).
 *
 * Matrices are row-major I x R (a factor or an MTTKRP output) or R x R
 * (symmetric: Grams, their Hadamard products). A row-major I x R matrix is a
 * column-major R x I matrix, so BLAS/LAPACK see the transpose without copies.
 *
 * Determinism: every reduction over rows is split into a number of slabs
 * that depends only on I and R (never on the thread count), each slab is
 * reduced by one thread, and the slab partials are added in order. The same
 * inputs therefore give bit-identical results with any number of threads.
 * The fused ALS step (tf_dense_als_step) uses the same slabs, blocks and
 * row accumulator (tf_dense_acc_rows) as the separate steps, so it gives
 * their bits with two passes over the factor instead of four to six. */
#ifndef TF_CPU_DENSE_H
#define TF_CPU_DENSE_H
#include <stddef.h>
#include <stdint.h>

#include "seams/cpd.h"
#include "tenfold.h"

/* ---- Fortran BLAS/LAPACK (LP64: INTEGER = int). The trailing size_t
 * arguments are the hidden lengths of CHARACTER arguments (gfortran ABI). */
void dsyrk_(const char *uplo, const char *trans, const int *n, const int *k, const double *alpha,
            const double *a, const int *lda, const double *beta, double *c, const int *ldc,
            size_t luplo, size_t ltrans);
void dgemm_(const char *transa, const char *transb, const int *m, const int *n, const int *k,
            const double *alpha, const double *a, const int *lda, const double *b, const int *ldb,
            const double *beta, double *c, const int *ldc, size_t lta, size_t ltb);
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t luplo);
void dpotri_(const char *uplo, const int *n, double *a, const int *lda, int *info, size_t luplo);
void dpotrs_(const char *uplo, const int *n, const int *nrhs, const double *a, const int *lda, double *b,
             const int *ldb, int *info, size_t luplo);
void dpocon_(const char *uplo, const int *n, const double *a, const int *lda, const double *anorm,
             double *rcond, double *work, int *iwork, int *info, size_t luplo);
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w,
             double *work, const int *lwork, int *iwork, const int *liwork, int *info,
             size_t ljobz, size_t luplo);

/* Ranks up to TF_MAX_RANK (LAPACK workspaces are int-sized); the singular
 * threshold is TF_DENSE_PINV_RCOND of seams/cpd.h. */
/* Rows per slab unit of a reduction and most rows per BLAS call. */
#define TF_DENSE_BLOCK 2048u

/* Slabs of a reduction over I rows whose per-slab partial holds `partial`
 * doubles (a function of I and partial alone: at most 64, and at most
 * 32 MiB of partials), and the first row of slab s of S (slab sizes differ
 * by at most one row; slab S begins at I). */
uint64_t tf_dense_slab_count(uint64_t I, uint64_t partial);
static inline uint64_t tf_dense_slab_begin(uint64_t I, uint64_t S, uint64_t s)
{
    return I / S * s + (s < I % S ? s : I % S);
}

/* A column reduction's step over rows [0, n) of A (row-major n x R) into
 * its partial p (R): p[r] += A(i,r) * B(i,r) (TF_DENSE_ACC_DOT), += |A(i,r)|
 * (TF_DENSE_ACC_ABS, B unused) or p[r] = max(p[r], |A(i,r)|), NaN-sticky
 * (TF_DENSE_ACC_MAX), row by row. Every column reduction here goes through
 * it (one compiled loop: the same bits in every pass that calls it). */
enum { TF_DENSE_ACC_DOT = 0, TF_DENSE_ACC_ABS = 1, TF_DENSE_ACC_MAX = 2 };
void tf_dense_acc_rows(double *p, const double *A, const double *B, uint64_t n, uint64_t R, int kind);

/* G (R x R, both triangles) = A^T A, A row-major I x R. */
tf_status tf_dense_gram(const double *A, uint64_t I, uint64_t R, int threads, double *G);

/* V = elementwise product of G[k] (R x R) over k = 0..n-1, k != skip
 * (skip >= n: all of them). V = all ones when no matrix takes part. */
void tf_dense_hadamard(const double *const *G, uint32_t n, uint32_t skip, uint64_t R, double *V);

/* A (I x R) = M * pinv(V) for symmetric positive semi-definite V (R x R);
 * A and M must not overlap. When V is numerically positive definite
 * (dpotrf succeeds, dpocon's reciprocal condition > TF_DENSE_PINV_RCOND) its
 * inverse comes from the Cholesky factor (dpotri); otherwise the
 * pseudo-inverse comes from a symmetric eigendecomposition (dsyevd) with
 * small eigenvalues dropped. *used_pinv tells which ran. Either way the
 * rows are multiplied by the R x R matrix with blocked dgemm: dpotrs on a
 * 16 x 2M right-hand side ran ~10x slower in OpenBLAS (its trsm is not
 * tuned for tiny R). A non-finite V is TF_ERR_NUMERIC. */
tf_status tf_dense_solve(const double *M, double *A, uint64_t I, uint64_t R, const double *V,
                         int threads, int *used_pinv);

/* P = V^-1 (both triangles) for symmetric positive semi-definite V (R x R):
 * from the Cholesky factor, or the pseudo-inverse when V is not numerically
 * positive definite (*used_pinv = 1), as tf_dense_solve decides. */
tf_status tf_dense_inverse(const double *V, uint64_t R, double *P, int *used_pinv);

/* A (rows x R) = M * P for symmetric P (R x R): one BLAS call, for the
 * row blocks of tf_dense_blas_rows inside an OpenMP loop whose team came
 * from tf_dense_blas_team. */
void tf_dense_apply_block(const double *P, const double *M, double *A, uint64_t rows, uint64_t R);
/* Rows per BLAS call at rank R (one BLAS thread per call). */
uint64_t tf_dense_blas_rows(uint64_t R);
/* *nt = threads for a loop of `units` pieces and `work` multiply-adds that
 * calls BLAS from every thread (fewer where the BLAS library's per-thread
 * work buffers do not fit; an error when none does). */
tf_status tf_dense_blas_team(int threads, uint64_t units, uint64_t work, int *nt);

/* The most threads a dense step on I rows of rank R takes, of `threads`
 * (0 = the default): fewer when the rows are few. */
int tf_dense_team(uint64_t I, uint64_t R, int threads);

/* The column norms of tf_dense_normalize (CP-ALS takes the 2-norm on its
 * first iteration and the max norm after it, CP-APR the 1-norm). */
enum { TF_DENSE_NORM2 = 0, TF_DENSE_NORM_MAX = 1, TF_DENSE_NORM1 = 2 };

/* lambda[r] = the norm of column r: its 2-norm (TF_DENSE_NORM2),
 * max(max_i |A(i,r)|, 1) (TF_DENSE_NORM_MAX) or sum_i |A(i,r)|
 * (TF_DENSE_NORM1); each column with lambda[r] > 0 is divided by it (zero
 * columns stay zero). A non-finite column is TF_ERR_NUMERIC. */
tf_status tf_dense_normalize(double *A, uint64_t I, uint64_t R, int norm, int threads, double *lambda);

/* One CP-ALS mode update in two passes over the rows (CP-ALS on one
 * process; the steps one by one read and write the factor four to six
 * times): A = M pinv(V) with the column norms `norm` of the new rows taken
 * as each row block leaves the solve (lambda), then per row block the
 * columns divided by lambda (zero columns left), G = A^T A, and when inner
 * is not NULL *inner = sum_r lambda_r sum_i M(i,r) A(i,r) of the scaled A
 * (the fit's inner product: M is this mode's MTTKRP). The same bits as
 * tf_dense_solve, tf_dense_normalize, tf_dense_gram and
 * tf_dense_weighted_inner(M, A, lambda) in turn, on any number of threads. */
tf_status tf_dense_als_step(const double *M, double *A, uint64_t I, uint64_t R, const double *V, int norm,
                            int threads, double *lambda, double *G, double *inner, int *used_pinv);

/* tf_dense_normalize then tf_dense_gram (the same bits), the scaling and
 * the Gram in one pass over the rows: the steps after a solve whose rows
 * came from elsewhere (CPU ranks: after the rows' exchange). */
tf_status tf_dense_normalize_gram(double *A, uint64_t I, uint64_t R, int norm, int threads, double *lambda,
                                  double *G);

/* out[r] = sum_i |A(i,r)| (deterministic for any thread count). */
tf_status tf_dense_column_abs_sums(const double *A, uint64_t I, uint64_t R, int threads, double *out);

/* sum_r w[r] * sum_i A(i,r) B(i,r), A and B row-major I x R. */
tf_status tf_dense_weighted_inner(const double *A, const double *B, uint64_t I, uint64_t R,
                                  const double *w, int threads, double *result);

/* x^T V x for V (R x R). */
double tf_dense_quadratic(const double *V, const double *x, uint64_t R);

/* sum_k x[k]^2 (deterministic for any thread count). */
tf_status tf_dense_sumsq(const double *x, uint64_t n, int threads, double *result);
#endif
