/* SPDX-License-Identifier: BSD-3-Clause */
#include "fmt/row_counts.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

/* Rows a thread counts privately before it adds to the shared counts: a
 * direct-mapped cache of (row, count) by the row's low bits, 48 KB (L1/L2).
 * A skewed mode's hot rows stay in it and reach the shared counts once per
 * eviction instead of once per non-zero, so the threads no longer queue on
 * their cache lines (plain atomics: one contended add per non-zero); rows
 * seen once cost one atomic add, as before. */
#define ROW_CACHE 4096

/* The cached count of rows of mode m into count (zeroed by the caller);
 * with slot (one entry per block of 2^shift rows), only the rows of blocks
 * with a slot >= 0 are counted, row i at slot[i >> shift] 2^shift + the
 * row's place in its block. */
static void count_cached(const tf_tensor *X, uint32_t m, int T, const int32_t *slot, uint32_t shift, uint64_t *count)
{
    const uint64_t nnz = X->nnz;
    const uint32_t *ind = X->ind[m], mask = (uint32_t)((1ull << shift) - 1);
#pragma omp parallel num_threads(T)
    {
        uint32_t row[ROW_CACHE];
        uint64_t hits[ROW_CACHE];
        for (int s = 0; s < ROW_CACHE; ++s) hits[s] = 0, row[s] = 0;
#pragma omp for schedule(static)
        for (uint64_t k = 0; k < nnz; ++k) {
            uint32_t i = ind[k];
            if (slot) {
                const int32_t b = slot[i >> shift];
                if (b < 0) continue;
                i = ((uint32_t)b << shift) | (i & mask);
            }
            const uint32_t s = i & (ROW_CACHE - 1);
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

/* The team model's team for a pass over one index array (a streamed
 * index and a cached count: a few units each); small inputs run on one
 * thread, and the counts, integers, do not depend on the team. */
static int team(const tf_tensor *X, int threads)
{
    return tf_team_for_work(threads, X->nnz / 65536 + 1, 4 * X->nnz);
}

void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count)
{
    memset(count, 0, X->dims[m] * sizeof *count);
    count_cached(X, m, team(X, threads), NULL, 0, count);
}

uint64_t tf_row_blocks(const tf_tensor *X, uint32_t m, uint32_t shift)
{
    return (X->dims[m] + (1ull << shift) - 1) >> shift;
}

tf_status tf_count_row_blocks(const tf_tensor *X, uint32_t m, uint32_t shift, int threads, uint64_t *count)
{
    const uint64_t nb = tf_row_blocks(X, m, shift), nnz = X->nnz;
    const int T = team(X, threads);
    uint64_t *own = NULL; /* [thread][block] */
    TF_TRY(TF_CALLOC(own, (uint64_t)T * (nb ? nb : 1), "non-zeros per block of rows"));
    const uint32_t *ind = X->ind[m];
#pragma omp parallel num_threads(T)
    {
        uint64_t *c = own + (uint64_t)tf_thread_id() * nb;
#pragma omp for schedule(static)
        for (uint64_t k = 0; k < nnz; ++k) ++c[ind[k] >> shift];
    }
    for (uint64_t b = 0; b < nb; ++b) { /* integers: the same sums on any team */
        uint64_t n = 0;
        for (int t = 0; t < T; ++t) n += own[(uint64_t)t * nb + b];
        count[b] = n;
    }
    tf_free(own);
    return TF_OK;
}

void tf_count_rows_of_blocks(const tf_tensor *X, uint32_t m, uint32_t shift, const int32_t *slot, int slots,
                             int threads, uint64_t *count)
{
    memset(count, 0, ((uint64_t)slots << shift) * sizeof *count);
    count_cached(X, m, team(X, threads), slot, shift, count);
}
