/* SPDX-License-Identifier: BSD-3-Clause */
#include "fmt/row_counts.h"

#include <string.h>

#include "core/parallel.h"

/* Rows a thread counts privately before it adds to the shared counts: a
 * direct-mapped cache of (row, count) by the row's low bits, 48 KB (L1/L2).
 * A skewed mode's hot rows stay in it and reach the shared counts once per
 * eviction instead of once per non-zero, so the threads no longer queue on
 * their cache lines (plain atomics: one contended add per non-zero); rows
 * seen once cost one atomic add, as before. */
#define ROW_CACHE 4096

void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count)
{
    const uint64_t I = X->dims[m], nnz = X->nnz;
    memset(count, 0, I * sizeof *count);
    int T = tf_resolve_threads(threads);
    if ((uint64_t)T > nnz / 65536 + 1) T = (int)(nnz / 65536 + 1); /* small inputs: one thread */
    const uint32_t *ind = X->ind[m];
#pragma omp parallel num_threads(T)
    {
        uint32_t row[ROW_CACHE];
        uint64_t hits[ROW_CACHE];
        for (int s = 0; s < ROW_CACHE; ++s) hits[s] = 0, row[s] = 0;
#pragma omp for schedule(static)
        for (uint64_t k = 0; k < nnz; ++k) {
            const uint32_t i = ind[k], s = i & (ROW_CACHE - 1);
            if (row[s] == i) {
                ++hits[s];
                continue;
            }
            if (hits[s]) {
#pragma omp atomic
                count[row[s]] += hits[s];
            }
            row[s] = i;
            hits[s] = 1;
        }
        for (int s = 0; s < ROW_CACHE; ++s)
            if (hits[s]) {
#pragma omp atomic
                count[row[s]] += hits[s];
            }
    }
}
