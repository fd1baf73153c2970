/* SPDX-License-Identifier: BSD-3-Clause */
/* The row counts of fmt/row_counts.h (the several-GPU Tucker's cut of the
 * rows) against a plain loop on 1, 2 and 8 threads, the output poisoned
 * first: orders 2-5, 0 and 1 non-zero, a mode of length 1, a heavy row
 * (contended adds), inputs large enough for several threads, modes longer
 * than a thread's row cache (its evictions). */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "fmt/row_counts.h"
#include "tenfold.h"

int main(void)
{
    tf_rng r;
    tf_rng_seed(&r, 41);
    static const struct {
        uint32_t order;
        uint64_t dims[5], nnz;
        int heavy;
    } cases[] = {
        {2, {7, 5}, 1, 0},          {3, {4, 1, 9}, 0, 0},          {3, {50, 40, 30}, 3000, 0},
        {2, {1000, 3}, 400000, 1},  {4, {30, 20, 10, 5}, 200000, 0}, {5, {9, 7, 5, 3, 11}, 300000, 1},
        {3, {100000, 9000, 5}, 500000, 1}, /* more rows than a thread's cache: evictions, a hot row */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        tf_tensor X;
        CHECK_OK(tf_tensor_alloc(&X, cases[c].order, cases[c].dims, cases[c].nnz));
        for (uint64_t k = 0; k < X.nnz; ++k) {
            for (uint32_t d = 0; d < X.order; ++d)
                X.ind[d][k] = cases[c].heavy && tf_rng_uniform(&r) < 0.6 ? (uint32_t)(X.dims[d] / 2)
                                                                        : (uint32_t)tf_rng_below(&r, X.dims[d]);
            X.vals[k] = 1.0;
        }
        for (uint32_t m = 0; m < X.order; ++m) {
            const uint64_t I = X.dims[m];
            uint64_t *cnt = malloc(I * sizeof *cnt), *ref = calloc(I, sizeof *ref);
            for (uint64_t k = 0; k < X.nnz; ++k) ++ref[X.ind[m][k]];
            for (int t = 1; t <= 8; t *= (t == 1 ? 2 : 4)) {
                memset(cnt, 0xab, I * sizeof *cnt);
                tf_count_rows(&X, m, t, cnt);
                CHECKF(!memcmp(cnt, ref, I * sizeof *cnt), "case %zu: row counts of mode %u on %d threads", c, m + 1,
                       t);
            }
            free(cnt);
            free(ref);
        }
        tf_tensor_free(&X);
    }
    return tf_test_finish("test_row_counts");
}
