/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion's row solves on the CPU (the kernel of ALS on observed
 * entries): for every row i of mode n, the normal equations of its slice
 * (sum h h^T + l2 I) a = sum x h, h the product of the other factors' rows
 * at each entry, built in blocks of entries and solved by Cholesky. Rows
 * go to threads whole, each summed in its entries' order, so the thread
 * count changes no bit. */
#ifndef TF_CPU_COMPLETE_ROWS_H
#define TF_CPU_COMPLETE_ROWS_H
#include "tenfold.h"

typedef struct tf_complete_rows_in {
    const tf_tensor *X;      /* the entries, grouped by their mode-`mode` index       */
    const uint64_t *ptr;     /* row i's entries are [ptr[i], ptr[i+1]), dims+1 offsets */
    uint32_t mode;
    uint64_t rows;           /* the rows solved: the mode's length, or a rank's range  */
    uint64_t first;          /* the label of row 0 (a rank's first row; the message)   */
    const double *A[TF_MAX_ORDER]; /* the factors (A[mode] not read)                    */
    uint64_t R;
    double l2;               /* >= 0                                                   */
    double *row_sse;         /* NULL, or rows doubles: row i's sum over its entries of
                                (x - <a_i, h>)^2 with its new a_i (after the last mode's
                                update, the model's squared error on them)             */
    int threads;             /* resolved (>= 1)                                        */
} tf_complete_rows_in;

/* out (rows x R, row-major; may not alias the other factors) <- every
 * row's solution. A system that is not positive definite is TF_ERR_NUMERIC
 * naming the mode and the first such row (out then partly written). */
tf_status tf_cpu_complete_rows(const tf_complete_rows_in *in, double *out);
/* The sum of in->row_sse in row order (the same bits for any thread count). */
double tf_cpu_complete_rows_sse(const tf_complete_rows_in *in);

/* Solves (G) a = b in place for an R x R symmetric positive definite G of
 * which the lower triangle (row-major, G[r * R + s], s <= r) is read and
 * overwritten by its Cholesky factor; b becomes a. Returns 0, or 1 + the
 * first column whose pivot is not above 64 eps times its diagonal entry
 * (rounding level: a singular system) or not finite. */
uint64_t tf_cholesky_solve(double *G, double *b, uint64_t R);
#endif
