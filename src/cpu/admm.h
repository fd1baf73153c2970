/* SPDX-License-Identifier: BSD-3-Clause */
/* AO-ADMM's update of one factor on the CPU (Huang, Sidiropoulos & Liavas,
 * "A flexible and efficient algorithmic framework for constrained matrix
 * and tensor factorization", IEEE TSP 2016, alg. 1; Smith, Beri & Karypis,
 * ICPP 2017): the constrained least-squares problem
 *     min_H 1/2 ||X_(n) - H W^T||^2 + r(H)
 * with M = X_(n) W (the MTTKRP) and V = W^T W (the Hadamard product of the
 * other Grams, a ridge l2 already on its diagonal), split as H = Ht:
 *     rho = trace(V) / R, one inverse of V + rho I, then repeatedly
 *     Ht = (M + rho (H + U)) (V + rho I)^-1
 *     H  = prox_{r/rho}(Ht - U)
 *     U  = U + H - Ht
 * until ||H - Ht|| <= tol ||H|| (primal) and ||H - H_before|| <= tol
 * max(||U||, tol ||H||) (dual; Huang et al.'s relative residuals, the dual
 * one's scale kept from vanishing: where no constraint is active U is 0 or
 * rounding noise, and the test would wait for noise to fall below noise),
 * or max_inner iterations. U is the scaled dual variable, kept by
 * the caller from one outer iteration to the next (warm start).
 * Deterministic: each inner iteration is one pass over row blocks whose
 * number depends only on I and R (the dense.c rule), the residual sums are
 * per block and added in order, so any thread count gives the same bits. */
#ifndef TF_CPU_ADMM_H
#define TF_CPU_ADMM_H
#include <stdint.h>

#include "tenfold.h"

typedef struct tf_admm_mode {
    int cold;           /* no warm start: H and U are set here (H = M V^-1, U = 0) */
    int nonneg;         /* r includes the indicator of H >= 0 (projection)      */
    double l1;          /* r includes l1 ||H||_1 (soft threshold at l1 / rho)   */
    uint32_t max_inner; /* >= 1                                                 */
    double tol;         /* relative residuals                                   */
    /* Several processes holding the rows of one factor between them: sums
     * x[0..n) over them (the residual terms), else NULL. */
    tf_status (*allreduce_sum)(double *x, uint64_t n);
} tf_admm_mode;

/* H and U (I x R, row-major) in place: H in the warm start (unless cold),
 * out the update; M (I x R) the MTTKRP rows, V (R x R) the normal matrix.
 * Non-negativity alone first tries the least-squares solution M V^-1: with
 * no negative entry it is the update, exactly (U = 0, no iteration). A cold
 * start begins at that solution. *inner: the inner iterations run;
 * *used_pinv: the least-squares solve fell back to the pseudo-inverse. A
 * non-finite V or update is TF_ERR_NUMERIC. */
tf_status tf_dense_admm(const double *M, double *H, double *U, uint64_t I, uint64_t R, const double *V,
                        const tf_admm_mode *o, int threads, uint32_t *inner, int *used_pinv);
#endif
