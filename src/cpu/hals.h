/* SPDX-License-Identifier: BSD-3-Clause */
/* HALS's update of one non-negative factor on the CPU (hierarchical ALS:
 * Cichocki & Phan, "Fast local algorithms for large scale nonnegative
 * matrix and tensor factorizations", IEICE 2009; Gillis & Glineur 2012), as
 * tensorly's hals_nnls runs it inside non_negative_parafac_hals: the
 * non-negative least-squares problem
 *     min_{A >= 0} 1/2 ||X_(n) - A W^T||^2 + l1 sum(A) + l2/2 ||A||^2
 * with M = X_(n) W (the MTTKRP) and V = W^T W (the Hadamard product of the
 * other Grams), by sweeps over the columns r = 0..R-1, each column solved
 * exactly with the others fixed (Gauss-Seidel: a column sees the columns
 * before it as this sweep left them):
 *     A(:,r) <- max(0, (M(:,r) - A V(:,r) + V(r,r) A(:,r) - l1) / (V(r,r) + l2))
 * (tensorly's numerator; a column with V(r,r) = 0 is left as it is), until
 * a sweep changes A by less than tol times the first sweep's change (both
 * squared Frobenius norms; tensorly's early stop) or after max_inner sweeps.
 * Row i of A depends only on row i of A, M and on V, so rows are updated in
 * blocks, independently; each sweep is one pass over the blocks, whose
 * number depends only on I and R, and the squared changes are summed per
 * block and added in order: any thread count gives the same bits. */
#ifndef TF_CPU_HALS_H
#define TF_CPU_HALS_H
#include <stdint.h>

#include "tenfold.h"

typedef struct tf_hals_mode {
    uint32_t max_inner; /* sweeps at most, >= 1                             */
    double tol;         /* stop when a sweep's squared change is < tol times
                           the first sweep's (0: max_inner sweeps)          */
    double l1;          /* >= 0: subtracted from the numerator             */
    double l2;          /* >= 0: added to the denominator V(r,r)           */
    /* Several processes holding the rows of one factor between them: sums
     * x[0..n) over them (the sweeps' changes), else NULL. */
    tf_status (*allreduce_sum)(double *x, uint64_t n);
} tf_hals_mode;

/* A (I x R, row-major) <- the HALS update from the start A0 (may be A
 * itself); M (I x R) the MTTKRP rows, V (R x R) the normal matrix without
 * the ridge. *inner: the sweeps run. A non-finite V, M or update is
 * TF_ERR_NUMERIC. */
tf_status tf_dense_hals(const double *M, const double *A0, double *A, uint64_t I, uint64_t R, const double *V,
                        const tf_hals_mode *o, int threads, uint32_t *inner);

/* Rows per block of tf_dense_hals at rank R (the block's columns stay in
 * the first levels of the cache). */
uint64_t tf_hals_block_rows(uint64_t R);
#endif
