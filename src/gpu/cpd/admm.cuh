/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels of AO-ADMM on the GPU (admm.cu; the update of src/cpu/admm.c
 * with the same steps and stop rule, see there): the R x R set-up in double
 * (V with its ridge, rho, the scales, V + rho I), the warm start, the
 * least-squares test, and per inner iteration the right-hand side, the
 * proximal step with its residual sums, and the stop test. The loop that
 * drives them over one GPU or several is tf_gpu_admm_update (backend.cu).
 *
 * The inner iterations are queued in batches without waiting: every kernel
 * of an iteration first reads the state's `stop` (set by an earlier test),
 * and an iteration queued after the stop changes nothing (its gemm writes
 * scratch only), so the host reads the state once per batch and the count
 * of iterations equals the CPU's. Several GPUs: each writes its residual
 * sums into its row of a table (parts x TF_GPU_ADMM_TERMS doubles), the
 * rows are all-gathered (the executor's exchange), and every GPU adds them
 * in row order, so all take the same decision. Values are T (float or
 * double); sums, the R x R work and the scales are double. */
#ifndef TF_GPU_CPD_ADMM_CUH
#define TF_GPU_CPD_ADMM_CUH
#include <stdint.h>

#include "gpu/cpd/dense.cuh"

/* Residual terms of one part: ||H - Ht||^2, ||H - H_before||^2, ||H||^2,
 * ||U||^2 (admm.c's PRIMAL, DUAL, HNORM, UNORM); the least-squares test
 * uses the first for "a negative entry". */
#define TF_GPU_ADMM_TERMS 4

/* The device state of one mode update (one per GPU). */
struct tf_gpu_admm_state {
    double rho;     /* trace(V) / R (1 where V is 0)                          */
    double t;       /* the soft threshold l1 / rho                            */
    unsigned iters; /* inner iterations run                                   */
    int stop;       /* set: iterations queued after it change nothing         */
    int neg;        /* the least-squares solution has a negative entry (any GPU) */
    int diverged;   /* a residual sum was not finite, or V + rho I's Cholesky failed */
    int info;       /* potrf's info for V + rho I                             */
};

/* Doubles of the partial sums buffer of tf_gpu_admm_prox (any I, R). */
uint64_t tf_gpu_admm_partial_count();

/* V (R x R, double) = Hadamard product of G[k], k < n, k != skip, in mode
 * order, l2 added to its diagonal; Vc = a copy (the Cholesky's input); X =
 * the identity (potrs's right-hand side). A non-finite V sets
 * sc->nonfinite. */
template <typename T>
tf_status tf_gpu_admm_normal(const T *const *G, uint32_t n, uint32_t skip, uint32_t R, double l2, double *V,
                             double *Vc, double *X, tf_gpu_scalars *sc, cudaStream_t st);
/* The state reset for a new update: rho = trace(V) / R (1 where it is not
 * positive but finite), t = l1 / rho, nothing run; p[r] = product of
 * scales[k][r], k < n, k != skip (the deferred column scales M is short
 * of: M diag(p) is the true MTTKRP). */
template <typename T>
tf_status tf_gpu_admm_begin(const double *V, const T *const *scales, uint32_t n, uint32_t skip, uint32_t R,
                            double l1, double *p, tf_gpu_admm_state *s, cudaStream_t st);
/* L = V + rho I (rho from s), X = the identity. */
tf_status tf_gpu_admm_shift(const double *V, uint32_t R, const tf_gpu_admm_state *s, double *L, double *X,
                            cudaStream_t st);
/* W = diag(p) X in T (row-major; p NULL: no scaling). */
template <typename T>
tf_status tf_gpu_admm_fold(const double *X, const double *p, uint32_t R, T *W, cudaStream_t st);
/* Warm start (I rows): H = H diag(s) diag(lambda) -- the normalised factor
 * A_raw diag(s) times the current weights -- and U = U diag(lambda). */
template <typename T>
tf_status tf_gpu_admm_warm(T *H, T *U, uint64_t I, uint32_t R, const T *s, const T *lambda, cudaStream_t st);
/* row[0] = 1 if an entry of S (I x R) is below 0, else 0; row[1..] = 0. */
template <typename T>
tf_status tf_gpu_admm_negative(const T *S, uint64_t I, uint32_t R, double *row, cudaStream_t st);
/* After the least-squares pass (its rows gathered into table, parts
 * rows): s->neg = some part has a negative entry; with project_only and no
 * negative entry the update is done (s->stop). */
tf_status tf_gpu_admm_decide(const double *table, uint32_t parts, int project_only, tf_gpu_admm_state *s,
                             cudaStream_t st);
/* Per entry, as s->neg says: U = 0 where cold or no negative entry; H =
 * max(S, 0) where project_only and no negative entry (S may be H). */
template <typename T>
tf_status tf_gpu_admm_settle(T *H, T *U, const T *S, uint64_t I, uint32_t R, int cold, int project_only,
                             const tf_gpu_admm_state *s, cudaStream_t st);
/* One inner iteration's right-hand side B = M diag(p) + rho (H + U)
 * (nothing once s->stop). */
template <typename T>
tf_status tf_gpu_admm_rhs(const T *M, const double *p, const T *H, const T *U, uint64_t I, uint32_t R,
                          const tf_gpu_admm_state *s, T *B, cudaStream_t st);
/* After Ht = B (V + rho I)^-1: H = prox(Ht - U), U += H - Ht, and this
 * part's residual sums into row (TF_GPU_ADMM_TERMS doubles; partial:
 * tf_gpu_admm_partial_count doubles of scratch); deterministic (a fixed
 * grid for I and R, sums in a fixed order). Nothing once s->stop. */
template <typename T>
tf_status tf_gpu_admm_prox(const T *Ht, T *H, T *U, uint64_t I, uint32_t R, int nonneg,
                           const tf_gpu_admm_state *s, double *partial, double *row, cudaStream_t st);
/* The largest rank of tf_gpu_admm_inner: (V + rho I)^-1 in double in one
 * block's shared memory (128 KiB at 128). */
#define TF_GPU_ADMM_FUSED_RANK 128
/* rhs, Ht = B W and prox in one kernel (R <= TF_GPU_ADMM_FUSED_RANK; W =
 * (V + rho I)^-1, row-major, T): the same values as tf_gpu_admm_rhs, the
 * gemm and tf_gpu_admm_prox, up to the order of Ht's sums; counter: a zeroed
 * unsigned of this GPU (the last block's count; it resets it). */
template <typename T>
tf_status tf_gpu_admm_inner(const T *M, const double *p, T *H, T *U, uint64_t I, uint32_t R, const T *W, int nonneg,
                            const tf_gpu_admm_state *s, double *partial, unsigned *counter, double *row,
                            cudaStream_t st);
/* The stop test over the table's parts rows, added in row order (nothing
 * once s->stop): iters += 1; diverged (and stop) on a non-finite sum or a
 * failed Cholesky; stop when sqrt(primal) <= tol ||H|| and sqrt(dual) <=
 * tol max(||U||, tol ||H||), or at max_inner. */
tf_status tf_gpu_admm_test(const double *table, uint32_t parts, double tol, uint32_t max_inner,
                           tf_gpu_admm_state *s, cudaStream_t st);
/* U = U diag(1 / lambda) where lambda > 0 (the dual follows its factor's
 * normalisation). */
template <typename T>
tf_status tf_gpu_admm_unscale(T *U, uint64_t I, uint32_t R, const T *lambda, cudaStream_t st);
#endif
