/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's row-wise projected damped Newton step on the CPU (pyttb's
 * tt_cp_apr_pdnr, Hansen, Plantenga & Kolda 2015): for mode n, every row i
 * of B = A_n diag(lambda) is its own subproblem -- minimise
 * f(b) = sum_r b_r - sum_j x_j log <b, pi_j> over b >= 0, j the row's
 * non-zeros, pi_j their Khatri-Rao rows of the other factors -- solved by
 * at most max_inner projected Newton steps (two-metric projection, a
 * damped Hessian over the free variables solved by Cholesky, an Armijo
 * line search, a multiplicative step where it fails). The other factors do
 * not change during the mode, so the rows are independent: OpenMP over
 * rows, each row's numbers the same for any thread count. */
#ifndef TF_CPU_APR_NEWTON_H
#define TF_CPU_APR_NEWTON_H
#include "seams/cp_apr.h"
#include "tenfold.h"

typedef struct tf_apr_newton_in {
    const tf_tensor *S;       /* the non-zeros, grouped by mode `mode` in increasing
                                 index order; every index in [row_lo, row_hi)    */
    uint32_t mode;
    const double *const *A;   /* every factor (row-major, R columns); A[mode] unused */
    uint64_t R;
    uint64_t row_lo, row_hi;  /* B's rows to solve                                */
    int threads;              /* 0 = default                                      */
} tf_apr_newton_in;

/* Rows [row_lo, row_hi) of B (row 0 at B, R columns) solved in place; a
 * row without non-zeros becomes 0 (pyttb). st: the largest first-step KKT
 * violation max_r |min(b_r, 1 - phi_r)| over the rows (NaN-sticky), the
 * steps, the rows changed and the objective evaluations, summed. */
tf_status tf_cpu_apr_newton(const tf_apr_newton_in *in, const tf_apr_newton_params *p, double *B,
                            tf_apr_newton_stats *st);

/* One row subproblem (the kernel's, exposed for the tests): b (R) solved in
 * place from the row's J non-zeros x and their Khatri-Rao rows pi (J x R,
 * row-major); ws holds 2 J + R (R + 6) doubles and R uint32s' worth more
 * (tf_apr_newton_ws_doubles). Returns the steps taken; *kkt0 the first
 * step's KKT violation, *changed 1 when b moved, *evals the objective
 * evaluations. */
uint32_t tf_apr_newton_row(const double *x, const double *pi, uint64_t J, uint64_t R, const tf_apr_newton_params *p,
                           double *b, double *ws, double *kkt0, int *changed, uint64_t *evals);
uint64_t tf_apr_newton_ws_doubles(uint64_t J, uint64_t R);
#endif
