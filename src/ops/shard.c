/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (shard.h). */
#include "ops/shard.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "backend/dist.h"

/* The part (among first..first+count-1) that owns row i, or -1. */
static inline int owner(const uint64_t *row_lo, int first, int count, uint64_t i)
{
    if (i < row_lo[first] || i >= row_lo[first + count]) return -1;
    if (count <= 8) { /* a few GPUs: count the boundaries at or below i, without branches
                         (the index of an unsorted mode makes a search's branches a coin toss) */
        int a = 0;
        for (int c = 1; c < count; ++c) a += i >= row_lo[first + c];
        return a;
    }
    int a = first, b = first + count - 1; /* the last part whose row_lo <= i */
    while (a < b) {
        const int c = (a + b + 1) / 2;
        if (row_lo[c] <= i) a = c;
        else b = c - 1;
    }
    return a - first;
}

/* Block t of T of n items starts here (the blocks of both passes of a
 * count-then-scatter must be the same whatever threads OpenMP gives). */
static inline uint64_t block_lo(uint64_t n, int t, int T)
{
    return (uint64_t)((unsigned __int128)n * (unsigned)t / (unsigned)T);
}

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

/* The cut of rows 0..I-1 with count[] non-zeros (nnz in all) into size
 * ranges: part r takes rows while its share stays at most the running
 * target (r+1)/size of the non-zeros, and one more where that lands closer. */
static void cut_rows(const uint64_t *count, uint64_t I, uint64_t nnz, int size, uint64_t *row_lo, double *imbalance)
{
    uint64_t row = 0, seen = 0, prev = 0, most = 0;
    row_lo[0] = 0;
    for (int r = 0; r < size; ++r) {
        if (r + 1 < size) {
            const uint64_t target = (uint64_t)((unsigned __int128)nnz * (unsigned)(r + 1) / (unsigned)size);
            while (row < I && seen + count[row] <= target) seen += count[row++];
            if (row < I && seen < target && 2 * (target - seen) > count[row]) seen += count[row++];
            row_lo[r + 1] = row;
        } else {
            seen = nnz;
            row_lo[size] = I;
        }
        if (seen - prev > most) most = seen - prev;
        prev = seen;
    }
    if (imbalance) imbalance[0] = nnz ? (double)most * size / (double)nnz - 1.0 : 0.0;
}

/* The last row boundary b in [lo, rows] with rowptr[b] <= target (rowptr[lo] <= target). */
static uint64_t last_at_or_below(const uint64_t *rowptr, uint64_t lo, uint64_t rows, uint64_t target)
{
    uint64_t a = lo, b = rows;
    while (a < b) {
        const uint64_t c = a + (b - a + 1) / 2;
        if (rowptr[c] <= target) a = c;
        else b = c - 1;
    }
    return a;
}

void tf_shard_rowptr(const uint64_t *rowptr, uint64_t rows, int size, uint64_t *row_lo, double *imbalance)
{
    const uint64_t nnz = rowptr[rows];
    uint64_t most = 0;
    row_lo[0] = 0;
    for (int r = 0; r < size; ++r) {
        uint64_t row = rows;
        if (r + 1 < size) {
            const uint64_t target = (uint64_t)((unsigned __int128)nnz * (unsigned)(r + 1) / (unsigned)size);
            row = last_at_or_below(rowptr, row_lo[r], rows, target);
            if (row < rows && rowptr[row] < target && 2 * (target - rowptr[row]) > rowptr[row + 1] - rowptr[row])
                ++row; /* the next boundary is closer */
        }
        row_lo[r + 1] = row;
        const uint64_t share = rowptr[row] - rowptr[row_lo[r]];
        if (share > most) most = share;
    }
    if (imbalance) imbalance[0] = nnz ? (double)most * size / (double)nnz - 1.0 : 0.0;
}

tf_status tf_shard_rows(const tf_tensor *X, uint32_t mode, int size, uint64_t *row_lo, double *imbalance)
{
    uint64_t *count = NULL;
    TF_TRY(row_counts(X, mode, &count));
    cut_rows(count, X->dims[mode], X->nnz, size, row_lo, imbalance);
    tf_free(count);
    return TF_OK;
}

tf_status tf_shard_rows_dist(const tf_tensor *part, uint32_t mode, const tf_dist *d, uint64_t *row_lo,
                             double *imbalance)
{
    const uint64_t I = part->dims[mode];
    uint64_t *count = NULL;
    double *c = NULL;
    TF_TRY(row_counts(part, mode, &count));
    tf_status s = TF_ALLOC(c, I ? I : 1, "non-zeros per row");
    /* summed over the ranks as doubles: exact below 2^53 */
    for (uint64_t i = 0; s == TF_OK && i < I; ++i) c[i] = (double)count[i];
    if (s == TF_OK) s = d->allreduce_sum(c, I);
    uint64_t nnz = 0;
    for (uint64_t i = 0; s == TF_OK && i < I; ++i) nnz += count[i] = (uint64_t)c[i];
    if (s == TF_OK) cut_rows(count, I, nnz, d->size, row_lo, imbalance);
    tf_free(c);
    tf_free(count);
    return s;
}

tf_status tf_shard_exchange(const tf_tensor *part, uint32_t mode, const uint64_t *row_lo, const tf_dist *d,
                            tf_tensor *out)
{
    memset(out, 0, sizeof *out);
    const uint32_t N = part->order;
    const uint32_t rec = 4 * N + 8; /* N indices, then the value */
    const int P = d->size, T = tf_resolve_threads(0);
    const uint64_t nnz = part->nnz;
    uint64_t *at = NULL, *send_n = NULL;
    unsigned char *buf = NULL;
    tf_status s = TF_CALLOC(at, (uint64_t)T * P, "exchange offsets");
    if (s == TF_OK) s = TF_CALLOC(send_n, (uint64_t)P, "exchange counts");
    if (s == TF_OK) s = tf_alloc((void **)&buf, nnz ? nnz : 1, rec, "non-zeros to send");
    if (s != TF_OK) goto done;
    /* T fixed blocks, counted then scattered by destination rank */
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = block_lo(nnz, t, T), k1 = block_lo(nnz, t + 1, T);
        for (uint64_t k = k0; k < k1; ++k) at[(uint64_t)t * P + owner(row_lo, 0, P, part->ind[mode][k])]++;
    }
    uint64_t total = 0;
    for (int r = 0; r < P; ++r)
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * P + r];
            at[(uint64_t)t * P + r] = total;
            total += c;
            send_n[r] += c;
        }
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = block_lo(nnz, t, T), k1 = block_lo(nnz, t + 1, T);
        for (uint64_t k = k0; k < k1; ++k) {
            const int r = owner(row_lo, 0, P, part->ind[mode][k]);
            unsigned char *o = buf + at[(uint64_t)t * P + r]++ * rec;
            for (uint32_t m = 0; m < N; ++m) memcpy(o + 4 * m, &part->ind[m][k], 4);
            memcpy(o + 4 * N, &part->vals[k], 8);
        }
    }
    void *got = NULL;
    uint64_t n = 0;
    s = d->alltoall_records(buf, send_n, rec, d->round_bytes, &got, &n);
    tf_free(buf);
    buf = NULL;
    if (s == TF_OK) s = tf_tensor_alloc(out, N, part->dims, n);
    if (s == TF_OK) {
        const unsigned char *g = got;
#pragma omp parallel for num_threads(T) schedule(static)
        for (int64_t k = 0; k < (int64_t)n; ++k) {
            const unsigned char *r = g + (uint64_t)k * rec;
            for (uint32_t m = 0; m < N; ++m) memcpy(&out->ind[m][k], r + 4 * m, 4);
            memcpy(&out->vals[k], r + 4 * N, 8);
        }
    }
    tf_free(got);
done:
    tf_free(buf);
    tf_free(at);
    tf_free(send_n);
    return s;
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


/* Which of the out tensors of tf_shard_split non-zero k goes to, or -1. */
static inline int target(const tf_tensor *X, uint32_t mode, const uint64_t *row_lo, uint32_t prev,
                         const uint64_t *prev_lo, int first, int count, uint64_t k)
{
    const int p = owner(row_lo, first, count, X->ind[mode][k]);
    if (p < 0 || !prev_lo) return p;
    const uint64_t j = X->ind[prev][k];
    return 2 * p + !((j >= prev_lo[first + p]) & (j < prev_lo[first + p + 1]));
}

tf_status tf_shard_split(const tf_tensor *X, uint32_t mode, const uint64_t *row_lo, uint32_t prev,
                         const uint64_t *prev_lo, int first, int count, tf_tensor *out)
{
    const int nout = prev_lo ? 2 * count : count;
    memset(out, 0, (size_t)nout * sizeof *out);
    const int T = tf_resolve_threads(0);
    const uint64_t nnz = X->nnz;
    uint64_t *at = NULL; /* [thread][out]: counts, then where each thread writes */
    TF_TRY(TF_CALLOC(at, (uint64_t)T * nout, "shard offsets"));
    /* T fixed blocks of the non-zeros, the same in both passes whatever
     * threads OpenMP gives */
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = block_lo(nnz, t, T), k1 = block_lo(nnz, t + 1, T);
        uint64_t *c = at + (uint64_t)t * nout;
        for (uint64_t k = k0; k < k1; ++k) {
            const int q = target(X, mode, row_lo, prev, prev_lo, first, count, k);
            if (q >= 0) c[q]++;
        }
    }
    tf_status s = TF_OK;
    for (int q = 0; q < nout && s == TF_OK; ++q) {
        uint64_t n = 0;
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * nout + q];
            at[(uint64_t)t * nout + q] = n;
            n += c;
        }
        const int p = prev_lo ? q / 2 : q;
        uint64_t dims[TF_MAX_ORDER];
        memcpy(dims, X->dims, X->order * sizeof *dims);
        const uint64_t rows = row_lo[first + p + 1] - row_lo[first + p];
        dims[mode] = rows ? rows : 1;
        s = tf_tensor_alloc(&out[q], X->order, dims, n);
    }
    if (s != TF_OK) {
        for (int q = 0; q < nout; ++q) tf_tensor_free(&out[q]);
        tf_free(at);
        return s;
    }
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = block_lo(nnz, t, T), k1 = block_lo(nnz, t + 1, T);
        uint64_t *w = at + (uint64_t)t * nout;
        for (uint64_t k = k0; k < k1; ++k) {
            const int q = target(X, mode, row_lo, prev, prev_lo, first, count, k);
            if (q < 0) continue;
            const int p = prev_lo ? q / 2 : q;
            tf_tensor *o = &out[q];
            const uint64_t j = w[q]++;
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
    for (int i = 0; i < (set->pairs ? 2 : 1) * set->count; ++i) tf_tensor_free(&set->part[i]);
}

static tf_status set_split(void *user, uint32_t mode, tf_tensor *out)
{
    tf_shard_set *set = user;
    set_parts_free(set);
    const uint32_t prev = (mode + set->X->order - 1) % set->X->order;
    const tf_tensor *src = set->X;
    tf_tensor mine;
    memset(&mine, 0, sizeof mine);
    if (set->input_part) { /* this rank's rows of mode from every rank's part */
        TF_TRY(tf_shard_exchange(set->X, mode, set->row_lo[mode], set->dist, &mine));
        src = &mine;
    }
    tf_status s = tf_shard_split(src, mode, set->row_lo[mode], prev, set->pairs ? set->row_lo[prev] : NULL, set->first,
                                 set->count, set->part);
    tf_tensor_free(&mine);
    TF_TRY(s);
    memcpy(out, set->part, (size_t)(set->pairs ? 2 : 1) * set->count * sizeof *out);
    return TF_OK;
}

tf_status tf_shard_set_make(tf_shard_set *set, const tf_tensor *X, int parts, int first, int count, int pairs,
                            const struct tf_dist *dist, int input_part, tf_shards *sh)
{
    memset(set, 0, sizeof *set);
    memset(sh, 0, sizeof *sh);
    if (count < 1 || count > TF_MAX_GPUS || first < 0 || first + count > parts)
        return tf_fail(TF_ERR_ARG, "shards: parts %d..%d of %d", first, first + count - 1, parts);
    set->X = X;
    set->first = first;
    set->count = count;
    set->pairs = pairs != 0;
    set->dist = dist;
    set->input_part = dist && input_part;
    if (set->input_part && (count != 1 || parts != dist->size))
        return tf_fail(TF_ERR_ARG, "shards of a distributed input: one part per rank");
    for (uint32_t m = 0; m < X->order; ++m) {
        tf_status s = TF_ALLOC(set->row_lo[m], (uint64_t)parts + 1, "shard rows");
        double imb = 0.0;
        if (s == TF_OK)
            s = set->input_part ? tf_shard_rows_dist(X, m, dist, set->row_lo[m], &imb)
                                : tf_shard_rows(X, m, parts, set->row_lo[m], &imb);
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
    sh->pairs = set->pairs;
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
