/* SPDX-License-Identifier: BSD-3-Clause */
/* CSF construction: radix-sort the non-zeros by the level order straight
 * into the per-level index arrays, then find where each level's nodes
 * start in two parallel passes over them (count node starts per thread,
 * fill). */
#include "fmt/csf.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/radix.h"

void tf_csf_default_order(const tf_tensor *X, uint32_t root, uint32_t *mo)
{
    uint32_t n = 0;
    mo[n++] = root;
    for (uint32_t m = 0; m < X->order; ++m)
        if (m != root) mo[n++] = m;
    /* insertion sort of mo[1..] by (length, mode): stable, order <= 16 */
    for (uint32_t i = 2; i < n; ++i) {
        uint32_t v = mo[i], j = i;
        while (j > 1 && X->dims[mo[j - 1]] > X->dims[v]) { mo[j] = mo[j - 1]; --j; }
        mo[j] = v;
    }
}

void tf_csf_free(tf_csf *c)
{
    if (!c) return;
    for (uint32_t l = 0; l < TF_MAX_ORDER; ++l) {
        tf_free(c->fptr[l]);
        tf_free(c->fids[l]);
    }
    tf_free(c->vals);
    memset(c, 0, sizeof *c);
}

uint64_t tf_csf_bytes(const tf_csf *c)
{
    uint64_t b = c->nnz * sizeof(double);
    for (uint32_t l = 0; l < c->order; ++l) {
        b += c->nodes[l] * sizeof(uint32_t);
        if (l < c->flat) b += (c->nodes[l] + 1) * sizeof(uint64_t);
    }
    return b;
}

void tf_csf_leaf_path(const tf_csf *c, uint64_t z, uint64_t *path)
{
    for (uint32_t l = c->flat; l < c->order; ++l) path[l] = z;
    for (int l = (int)c->flat - 1; l >= 0; --l) {
        /* last node n with fptr[l][n] <= child; fptr[l][0] = 0 <= child */
        const uint64_t *fp = c->fptr[l], child = path[l + 1];
        uint64_t lo = 0, hi = c->nodes[l]; /* answer in [lo, hi) */
        while (hi - lo > 1) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (fp[mid] <= child) lo = mid;
            else hi = mid;
        }
        path[l] = lo;
    }
}

static uint64_t chunk_start(uint64_t nnz, int t, int T)
{
    return nnz * (uint64_t)t / (uint64_t)T;
}

/* First level at which non-zero k differs from k-1 in the sorted index
 * arrays (0 for k = 0; order-1 for a repeated coordinate, which still makes
 * a new leaf). A node of level l starts at k iff first_diff(k) <= l. */
static uint8_t first_diff(uint32_t *const *sidx, uint32_t order, uint64_t k)
{
    if (k == 0) return 0;
    for (uint32_t l = 0; l + 1 < order; ++l)
        if (sidx[l][k] != sidx[l][k - 1]) return (uint8_t)l;
    return (uint8_t)(order - 1);
}

tf_status tf_csf_build(const tf_tensor *X, const uint32_t *mode_order, double flat_ratio,
                       int threads, tf_csf *c)
{
    const uint32_t N = X->order;
    const uint64_t nnz = X->nnz;
    memset(c, 0, sizeof *c);
    c->order = N;
    c->nnz = nnz;
    for (uint32_t l = 0; l < N; ++l) {
        c->mode_order[l] = mode_order[l];
        c->dims[l] = X->dims[mode_order[l]];
    }
    const int T = nnz < 4096 ? 1 : (threads > 0 ? threads : 1);
    uint64_t *counts = NULL;
    uint32_t *sidx[TF_MAX_ORDER] = {0};
    uint8_t *diff = NULL;
    tf_status s = TF_ALLOC(c->vals, nnz, "CSF values");
    for (uint32_t l = 0; s == TF_OK && l < N; ++l) s = TF_ALLOC(sidx[l], nnz, "CSF sorted indices");
    if (s == TF_OK) s = TF_ALLOC(diff, nnz, "CSF node starts");
    if (s == TF_OK) s = TF_CALLOC(counts, (uint64_t)(T + 1) * N, "CSF node counts");
    if (s != TF_OK) goto fail;

    s = tf_radix_sort_into(X, mode_order, N, sidx, c->vals, T);
    if (s != TF_OK) goto fail;
    /* The passes split the non-zeros into T fixed chunks (whatever team
     * size OpenMP gives), so that the per-chunk counts of the first pass
     * match the chunks the second pass fills. */
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t lo = chunk_start(nnz, t, T), hi = chunk_start(nnz, t + 1, T);
        uint64_t *cnt = counts + (uint64_t)(t + 1) * N;
        for (uint64_t k = lo; k < hi; ++k) {
            uint8_t d = first_diff(sidx, N, k);
            diff[k] = d;
            for (uint32_t l = d; l < N; ++l) cnt[l]++;
        }
    }
    /* exclusive prefix over threads: counts[t*N + l] = first node of thread t */
    for (int t = 1; t <= T; ++t)
        for (uint32_t l = 0; l < N; ++l) counts[(uint64_t)t * N + l] += counts[(uint64_t)(t - 1) * N + l];
    for (uint32_t l = 0; l < N; ++l) c->nodes[l] = counts[(uint64_t)T * N + l];
    c->flat = N - 1;
    for (uint32_t l = 1; l + 1 < N; ++l)
        if ((double)c->nodes[l] >= flat_ratio * (double)nnz) { c->flat = l; break; }
    const uint32_t flat = c->flat;
    for (uint32_t l = flat; l < N; ++l) c->nodes[l] = nnz;
    for (uint32_t l = 0; s == TF_OK && l < flat; ++l) {
        s = TF_ALLOC(c->fids[l], c->nodes[l], "CSF node indices");
        if (s == TF_OK) s = TF_ALLOC(c->fptr[l], c->nodes[l] + 1, "CSF node pointers");
    }
    if (s != TF_OK) goto fail;

#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t lo = chunk_start(nnz, t, T), hi = chunk_start(nnz, t + 1, T);
        uint64_t next[TF_MAX_ORDER];
        memcpy(next, counts + (uint64_t)t * N, N * sizeof *next);
        for (uint64_t k = lo; k < hi; ++k) {
            /* levels ascending, so next[l+1] is still the child that starts here */
            for (uint32_t l = diff[k]; l < flat; ++l) {
                const uint64_t node = next[l]++;
                c->fids[l][node] = sidx[l][k];
                c->fptr[l][node] = l + 1 == flat ? k : next[l + 1];
            }
        }
    }
    for (uint32_t l = 0; l < flat; ++l) c->fptr[l][c->nodes[l]] = c->nodes[l + 1];
    for (uint32_t l = flat; l < N; ++l) { /* per-non-zero levels are the sorted indices */
        c->fids[l] = sidx[l];
        sidx[l] = NULL;
    }

fail:
    for (uint32_t l = 0; l < N; ++l) tf_free(sidx[l]);
    tf_free(diff);
    tf_free(counts);
    if (s != TF_OK) tf_csf_free(c);
    return s;
}
