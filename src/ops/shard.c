/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (shard.h). */
#include "ops/shard.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

/* Non-zeros per row of `mode` (atomic counts: a per-thread histogram of a
 * 20M-row mode would cost more than the pass). */
static tf_status row_counts(const tf_tensor *X, uint32_t mode, uint64_t **out)
{
    const uint64_t I = X->dims[mode];
    uint64_t *count = NULL;
    TF_TRY(TF_CALLOC(count, I ? I : 1, "non-zeros per row"));
    const uint32_t *ind = X->ind[mode];
#pragma omp parallel for num_threads(tf_resolve_threads(0)) schedule(static) if (X->nnz > 100000)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) {
#pragma omp atomic update relaxed
        count[ind[k]]++;
    }
    *out = count;
    return TF_OK;
}

tf_status tf_shard_rows(const tf_tensor *X, uint32_t mode, int size, uint64_t *row_lo, double *imbalance)
{
    const uint64_t I = X->dims[mode];
    uint64_t *count = NULL;
    TF_TRY(row_counts(X, mode, &count));
    /* part r takes rows while its share stays at most the running target
     * (r+1)/size of the non-zeros, and one more where that lands closer */
    uint64_t row = 0, seen = 0, prev = 0, most = 0;
    row_lo[0] = 0;
    for (int r = 0; r < size; ++r) {
        if (r + 1 < size) {
            const uint64_t target = (uint64_t)((unsigned __int128)X->nnz * (unsigned)(r + 1) / (unsigned)size);
            while (row < I && seen + count[row] <= target) seen += count[row++];
            if (row < I && seen < target && 2 * (target - seen) > count[row]) seen += count[row++];
            row_lo[r + 1] = row;
        } else {
            seen = X->nnz;
            row_lo[size] = I;
        }
        if (seen - prev > most) most = seen - prev;
        prev = seen;
    }
    tf_free(count);
    if (imbalance) imbalance[0] = X->nnz ? (double)most * size / (double)X->nnz - 1.0 : 0.0;
    return TF_OK;
}

tf_status tf_shard_tensor(const tf_tensor *X, uint32_t mode, uint64_t lo, uint64_t hi, tf_tensor *out)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) n += X->ind[mode][k] >= lo && X->ind[mode][k] < hi;
    TF_TRY(tf_tensor_alloc(out, X->order, X->dims, n));
    uint64_t at = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const uint32_t i = X->ind[mode][k];
        if (i < lo || i >= hi) continue;
        for (uint32_t m = 0; m < X->order; ++m) out->ind[m][at] = X->ind[m][k];
        out->vals[at++] = X->vals[k];
    }
    return TF_OK;
}

/* The part (among first..first+count-1) that owns row i, or -1. */
static inline int owner(const uint64_t *row_lo, int first, int count, uint64_t i)
{
    if (i < row_lo[first] || i >= row_lo[first + count]) return -1;
    int a = first, b = first + count - 1; /* the last part whose row_lo <= i */
    while (a < b) {
        const int c = (a + b + 1) / 2;
        if (row_lo[c] <= i) a = c;
        else b = c - 1;
    }
    return a - first;
}

tf_status tf_shard_split(const tf_tensor *X, uint32_t mode, const uint64_t *row_lo, int first, int count,
                         tf_tensor *out)
{
    memset(out, 0, (size_t)count * sizeof *out);
    const int T = tf_resolve_threads(0);
    const uint64_t nnz = X->nnz;
    uint64_t *at = NULL; /* [thread][part]: counts, then where each thread writes */
    TF_TRY(TF_CALLOC(at, (uint64_t)T * count, "shard offsets"));
    const uint32_t *ind = X->ind[mode];
    /* T fixed blocks of the non-zeros, the same in both passes whatever
     * threads OpenMP gives */
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = nnz * (uint64_t)t / (uint64_t)T, k1 = nnz * (uint64_t)(t + 1) / (uint64_t)T;
        uint64_t *c = at + (uint64_t)t * count;
        for (uint64_t k = k0; k < k1; ++k) {
            const int p = owner(row_lo, first, count, ind[k]);
            if (p >= 0) c[p]++;
        }
    }
    tf_status s = TF_OK;
    for (int p = 0; p < count && s == TF_OK; ++p) {
        uint64_t n = 0;
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * count + p];
            at[(uint64_t)t * count + p] = n;
            n += c;
        }
        uint64_t dims[TF_MAX_ORDER];
        memcpy(dims, X->dims, X->order * sizeof *dims);
        const uint64_t rows = row_lo[first + p + 1] - row_lo[first + p];
        dims[mode] = rows ? rows : 1;
        s = tf_tensor_alloc(&out[p], X->order, dims, n);
    }
    if (s != TF_OK) {
        for (int p = 0; p < count; ++p) tf_tensor_free(&out[p]);
        tf_free(at);
        return s;
    }
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = nnz * (uint64_t)t / (uint64_t)T, k1 = nnz * (uint64_t)(t + 1) / (uint64_t)T;
        uint64_t *w = at + (uint64_t)t * count;
        for (uint64_t k = k0; k < k1; ++k) {
            const int p = owner(row_lo, first, count, ind[k]);
            if (p < 0) continue;
            tf_tensor *o = &out[p];
            const uint64_t j = w[p]++;
            for (uint32_t m = 0; m < X->order; ++m) o->ind[m][j] = X->ind[m][k];
            o->ind[mode][j] -= (uint32_t)row_lo[first + p];
            o->vals[j] = X->vals[k];
        }
    }
    tf_free(at);
    return TF_OK;
}

static void set_parts_free(tf_shard_set *set)
{
    for (int i = 0; i < set->count; ++i) tf_tensor_free(&set->part[i]);
}

static tf_status set_split(void *user, uint32_t mode, tf_tensor *out)
{
    tf_shard_set *set = user;
    set_parts_free(set);
    TF_TRY(tf_shard_split(set->X, mode, set->row_lo[mode], set->first, set->count, set->part));
    memcpy(out, set->part, (size_t)set->count * sizeof *out);
    return TF_OK;
}

tf_status tf_shard_set_make(tf_shard_set *set, const tf_tensor *X, int parts, int first, int count,
                            const struct tf_dist *dist, tf_shards *sh)
{
    memset(set, 0, sizeof *set);
    memset(sh, 0, sizeof *sh);
    if (count < 1 || count > TF_MAX_GPUS || first < 0 || first + count > parts)
        return tf_fail(TF_ERR_ARG, "shards: parts %d..%d of %d", first, first + count - 1, parts);
    set->X = X;
    set->first = first;
    set->count = count;
    for (uint32_t m = 0; m < X->order; ++m) {
        tf_status s = TF_ALLOC(set->row_lo[m], (uint64_t)parts + 1, "shard rows");
        double imb = 0.0;
        if (s == TF_OK) s = tf_shard_rows(X, m, parts, set->row_lo[m], &imb);
        if (s != TF_OK) {
            tf_shard_set_free(set);
            return s;
        }
        if (imb > set->imbalance) set->imbalance = imb;
        sh->row_lo[m] = set->row_lo[m];
    }
    sh->parts = parts;
    sh->first = first;
    sh->count = count;
    sh->split = set_split;
    sh->user = set;
    sh->dist = dist;
    return TF_OK;
}

void tf_shard_set_free(tf_shard_set *set)
{
    set_parts_free(set);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_free(set->row_lo[m]);
        set->row_lo[m] = NULL;
    }
    set->count = 0;
}
