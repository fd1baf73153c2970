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
 * their cache lines (plain atomics: one contended add per non-zero). */
#define ROW_CACHE 4096
/* Row groups of the large inputs' first step (below). */
#define GROUPS 1024
/* Inputs from which the indices are grouped first. */
#define GROUP_FROM (1ull << 24)

/* count[ind[k]] += 1 for k in [0, n), on T threads (the cache above). */
static void count_cached(const uint32_t *ind, uint64_t n, int T, uint64_t *count)
{
#pragma omp parallel num_threads(T)
    {
        uint32_t row[ROW_CACHE];
        uint64_t hits[ROW_CACHE];
        for (int s = 0; s < ROW_CACHE; ++s) hits[s] = 0, row[s] = 0;
#pragma omp for schedule(static)
        for (uint64_t k = 0; k < n; ++k) {
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

/* Block t of T of n items (the same blocks in both passes). */
static inline uint64_t block_lo(uint64_t n, int t, int T)
{
    return (uint64_t)((unsigned __int128)n * (unsigned)t / (unsigned)T);
}

/* The indices of a large input into tmp grouped by their high bits (GROUPS
 * groups of 2^shift rows): a count pass and a scatter pass, each a read of
 * the indices in order. Counting tmp then touches one group's rows at a
 * time (a table slice in the caches), where counting the indices as they
 * come makes one cache miss in a 20M-row table per non-zero. */
static tf_status group_rows(const uint32_t *ind, uint64_t n, uint64_t rows, int T, uint32_t *tmp)
{
    int shift = 0;
    while (((rows - 1) >> shift) >= GROUPS) ++shift;
    uint64_t *at = NULL; /* [thread][group]: counts, then where the thread writes */
    TF_TRY(TF_CALLOC(at, (uint64_t)T * GROUPS, "row groups"));
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        uint64_t *h = at + (uint64_t)t * GROUPS;
        for (uint64_t k = block_lo(n, t, T), e = block_lo(n, t + 1, T); k < e; ++k) ++h[ind[k] >> shift];
    }
    uint64_t total = 0;
    for (uint64_t g = 0; g < GROUPS; ++g)
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * GROUPS + g];
            at[(uint64_t)t * GROUPS + g] = total;
            total += c;
        }
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        uint64_t *o = at + (uint64_t)t * GROUPS;
        for (uint64_t k = block_lo(n, t, T), e = block_lo(n, t + 1, T); k < e; ++k) tmp[o[ind[k] >> shift]++] = ind[k];
    }
    tf_free(at);
    return TF_OK;
}

/* Threads for n non-zeros (small inputs: one). */
static int team_for(int threads, uint64_t nnz)
{
    int T = tf_resolve_threads(threads);
    if ((uint64_t)T > nnz / 65536 + 1) T = (int)(nnz / 65536 + 1);
    return T;
}

tf_status tf_count_rows_grouped(const tf_tensor *X, uint32_t m, int threads, uint64_t *count)
{
    const uint64_t I = X->dims[m], nnz = X->nnz;
    const int T = team_for(threads, nnz);
    memset(count, 0, I * sizeof *count);
    if (!nnz) return TF_OK;
    uint32_t *tmp = NULL;
    TF_TRY(TF_ALLOC(tmp, nnz, "row-grouped indices"));
    const tf_status s = group_rows(X->ind[m], nnz, I, T, tmp);
    if (s == TF_OK) count_cached(tmp, nnz, T, count);
    tf_free(tmp);
    return s;
}

void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count)
{
    const uint64_t I = X->dims[m], nnz = X->nnz;
    if (nnz >= GROUP_FROM && I > (uint64_t)ROW_CACHE * 16) {
        if (tf_count_rows_grouped(X, m, threads, count) == TF_OK) return;
        tf_clear_error(); /* no room for the grouped copy: count in place */
    }
    memset(count, 0, I * sizeof *count);
    count_cached(X->ind[m], nnz, team_for(threads, nnz), count);
}
