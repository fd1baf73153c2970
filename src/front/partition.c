/* SPDX-License-Identifier: BSD-3-Clause */
/* The partitioner (partition.h): the cuts of rows among a run's parts,
 * the relabeling of the longest-first schedule, and the shards. */
#include "front/partition.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "fmt/row_counts.h"
#include "seams/dist.h"

/* Blocks of light rows per part's share under longest-first: a block of
 * consecutive rows closes before it passes 1/LPT_BLOCKS of the share or
 * 1/LPT_BLOCKS of a part's rows, so the last blocks placed leave the
 * largest part within about 1/LPT_BLOCKS of the mean (a row heavier than
 * that is a block alone), and there are a few thousand blocks per part at
 * most to sort. */
#define LPT_BLOCKS 256

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

/* Row i's label in the run (map NULL: its own). */
static inline uint32_t label(const uint32_t *map, uint32_t i)
{
    return map ? map[i] : i;
}

/* Block t of T of n items starts here (the blocks of both passes of a
 * count-then-scatter must be the same whatever threads OpenMP gives). */
static inline uint64_t block_lo(uint64_t n, int t, int T)
{
    return (uint64_t)((unsigned __int128)n * (unsigned)t / (unsigned)T);
}

/* ---------------------------------------------------------- the schedules */

/* The last row boundary b in [lo, rows] with prefix[b] <= target (lo if none). */
static uint64_t last_at_or_below(const uint64_t *prefix, uint64_t lo, uint64_t rows, uint64_t target)
{
    uint64_t a = lo, b = rows;
    while (a < b) {
        const uint64_t c = a + (b - a + 1) / 2;
        if (prefix[c] <= target) a = c;
        else b = c - 1;
    }
    return a;
}

uint64_t tf_partition_contiguous(const uint64_t *prefix, uint64_t rows, int parts, uint64_t *row_lo)
{
    const uint64_t nnz = prefix[rows];
    uint64_t most = 0;
    row_lo[0] = 0;
    for (int r = 0; r < parts; ++r) {
        uint64_t row = rows;
        if (r + 1 < parts) {
            const uint64_t target = (uint64_t)((unsigned __int128)nnz * (unsigned)(r + 1) / (unsigned)parts);
            row = last_at_or_below(prefix, row_lo[r], rows, target);
            if (row < rows && prefix[row] < target && 2 * (target - prefix[row]) > prefix[row + 1] - prefix[row])
                ++row; /* the next boundary is closer */
        }
        row_lo[r + 1] = row;
        const uint64_t share = prefix[row] - prefix[row_lo[r]];
        if (share > most) most = share;
    }
    return most;
}

/* Block id: consecutive rows [lo, the next block's lo) and their non-zeros. */
typedef struct lpt_block {
    uint64_t lo, nnz, id;
} lpt_block;

/* The blocks of rows 0..rows-1 (longest-first's items) into b (NULL:
 * only counted); returns how many. */
static uint64_t lpt_blocks(const uint64_t *prefix, uint64_t rows, int parts, lpt_block *b)
{
    const uint64_t nnz = prefix[rows], per = (uint64_t)LPT_BLOCKS * (unsigned)parts;
    const uint64_t cap = nnz / per ? nnz / per : 1, row_cap = rows / per ? rows / per : 1;
    uint64_t n = 0;
    for (uint64_t i = 0; i < rows;) {
        uint64_t j = i + 1;
        while (j < rows && j - i < row_cap && prefix[j + 1] - prefix[i] <= cap) ++j;
        if (b) b[n] = (lpt_block){i, prefix[j] - prefix[i], n};
        ++n;
        i = j;
    }
    return n;
}

/* Heaviest first; ties in row order (a total order: the same on every rank). */
static int heavier_first(const void *a, const void *b)
{
    const lpt_block *x = a, *y = b;
    if (x->nnz != y->nnz) return x->nnz > y->nnz ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A part's load under longest-first: fewer non-zeros, then fewer rows, then
 * the lower part comes first. */
typedef struct lpt_part {
    uint64_t nnz, rows;
    int part;
} lpt_part;

static inline int lighter(const lpt_part *a, const lpt_part *b)
{
    if (a->nnz != b->nnz) return a->nnz < b->nnz;
    if (a->rows != b->rows) return a->rows < b->rows;
    return a->part < b->part;
}

/* The binary min-heap h[0..n) with h[i] possibly heavier than its children. */
static void sift_down(lpt_part *h, int n, int i)
{
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && lighter(&h[c + 1], &h[c])) ++c;
        if (!lighter(&h[c], &h[i])) return;
        const lpt_part t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

tf_status tf_partition_longest_first(const uint64_t *prefix, uint64_t rows, int parts, uint64_t *row_lo,
                                     uint32_t *relabel, uint64_t *most)
{
    if (parts < 1) return tf_fail(TF_ERR_ARG, "partition: %d parts", parts);
    const uint64_t nb = lpt_blocks(prefix, rows, parts, NULL);
    lpt_block *b = NULL, *sorted = NULL;
    lpt_part *heap = NULL;
    int *part_of = NULL; /* per block, in row order */
    uint64_t *next = NULL;
    tf_status s = TF_ALLOC(b, nb ? nb : 1, "longest-first blocks");
    if (s == TF_OK) s = TF_ALLOC(sorted, nb ? nb : 1, "longest-first order");
    if (s == TF_OK) s = TF_ALLOC(part_of, nb ? nb : 1, "longest-first assignment");
    if (s == TF_OK) s = TF_ALLOC(heap, (uint64_t)parts, "longest-first loads");
    if (s == TF_OK) s = TF_ALLOC(next, (uint64_t)parts, "longest-first labels");
    if (s != TF_OK) goto done;
    lpt_blocks(prefix, rows, parts, b);
    memcpy(sorted, b, nb * sizeof *b);
    qsort(sorted, nb, sizeof *sorted, heavier_first);
    for (int p = 0; p < parts; ++p) heap[p] = (lpt_part){0, 0, p}; /* a heap already */
    for (uint64_t k = 0; k < nb; ++k) { /* each block to the lightest part */
        const uint64_t id = sorted[k].id, end = id + 1 < nb ? b[id + 1].lo : rows;
        part_of[id] = heap[0].part;
        heap[0].nnz += sorted[k].nnz;
        heap[0].rows += end - sorted[k].lo;
        sift_down(heap, parts, 0);
    }
    uint64_t m = 0;
    for (int p = 0; p < parts; ++p) {
        next[heap[p].part] = heap[p].rows; /* rows per part, for now */
        if (heap[p].nnz > m) m = heap[p].nnz;
    }
    row_lo[0] = 0;
    for (int p = 0; p < parts; ++p) {
        row_lo[p + 1] = row_lo[p] + next[p];
        next[p] = row_lo[p];
    }
    if (relabel) /* each part's rows in their order, one range */
        for (uint64_t k = 0; k < nb; ++k) {
            const uint64_t end = k + 1 < nb ? b[k + 1].lo : rows;
            for (uint64_t i = b[k].lo; i < end; ++i) relabel[i] = (uint32_t)next[part_of[k]]++;
        }
    *most = m;
done:
    tf_free(b);
    tf_free(sorted);
    tf_free(part_of);
    tf_free(heap);
    tf_free(next);
    return s;
}

tf_status tf_partition_cut(const uint64_t *prefix, uint64_t rows, int parts, int schedule, uint64_t *row_lo,
                           uint32_t **relabel, int *used, double *imbalance)
{
    *relabel = NULL;
    const uint64_t nnz = prefix[rows];
    uint64_t most = tf_partition_contiguous(prefix, rows, parts, row_lo), most_l = 0;
    *used = TF_PARTITION_CONTIGUOUS;
    if (schedule != TF_PARTITION_CONTIGUOUS && parts > 1) {
        uint64_t *lo = NULL;
        TF_TRY(TF_ALLOC(lo, (uint64_t)parts + 1, "longest-first rows"));
        tf_status s = tf_partition_longest_first(prefix, rows, parts, lo, NULL, &most_l);
        /* auto: only for a clear gain, more than 2 % of the mean part */
        const int take = schedule == TF_PARTITION_LONGEST_FIRST ||
                         (most_l < most && (double)(most - most_l) * parts > 0.02 * (double)nnz);
        if (s == TF_OK && take) s = TF_ALLOC(*relabel, rows ? rows : 1, "relabeled rows");
        if (s == TF_OK && take) s = tf_partition_longest_first(prefix, rows, parts, row_lo, *relabel, &most_l);
        tf_free(lo);
        if (s != TF_OK) {
            tf_free(*relabel);
            *relabel = NULL;
            return s;
        }
        if (take) {
            *used = TF_PARTITION_LONGEST_FIRST;
            most = most_l;
            uint64_t i = 0; /* the identity (the heavy rows happened to fall in order): no map */
            while (i < rows && (*relabel)[i] == i) ++i;
            if (i == rows) {
                tf_free(*relabel);
                *relabel = NULL;
            }
        }
    }
    *imbalance = nnz ? (double)most * parts / (double)nnz - 1.0 : 0.0;
    return TF_OK;
}

/* ----------------------------------------------------- a run's partition */

/* Counts summed over the ranks, as doubles (exact below 2^53). */
static tf_status sum_counts(const tf_dist *sum, uint64_t *count, uint64_t n)
{
    if (!sum) return TF_OK;
    double *c = NULL;
    TF_TRY(TF_ALLOC(c, n ? n : 1, "non-zeros per row"));
    for (uint64_t i = 0; i < n; ++i) c[i] = (double)count[i];
    const tf_status s = sum->allreduce_sum(c, n);
    for (uint64_t i = 0; s == TF_OK && i < n; ++i) count[i] = (uint64_t)c[i];
    tf_free(c);
    return s;
}

/* prefix[0..I]: the running sum of the non-zeros per row of `mode` (with
 * sum, over the ranks' parts). Counted by tf_count_rows (a small cache per
 * thread, then atomic adds: a per-thread histogram of a 20M-row mode would
 * cost more than the pass). */
static tf_status row_prefix(const tf_tensor *X, uint32_t mode, const tf_dist *sum, uint64_t **out)
{
    const uint64_t I = X->dims[mode];
    uint64_t *prefix = NULL;
    TF_TRY(TF_CALLOC(prefix, I + 1, "non-zeros per row"));
    uint64_t *count = prefix + 1;
    tf_count_rows(X, mode, 0, count);
    const tf_status s = sum_counts(sum, count, I);
    for (uint64_t i = 0; i < I; ++i) prefix[i + 1] += prefix[i];
    if (s != TF_OK) {
        tf_free(prefix);
        return s;
    }
    *out = prefix;
    return TF_OK;
}

/* count[p]: part p's non-zeros, from the rows' prefix sums (in the
 * caller's labels) and the cut (in the run's). */
static void part_counts(const uint64_t *prefix, uint64_t rows, const uint64_t *row_lo, const uint32_t *relabel,
                        int parts, uint64_t *count)
{
    if (!relabel) {
        for (int p = 0; p < parts; ++p) count[p] = prefix[row_lo[p + 1]] - prefix[row_lo[p]];
        return;
    }
    for (uint64_t i = 0; i < rows; ++i) {
        const int p = owner(row_lo, 0, parts, relabel[i]);
        if (p >= 0) count[p] += prefix[i + 1] - prefix[i];
    }
}

/* Blocks of rows for the block-wise cut: about QUICK_BLOCKS per mode (a
 * thread's private table of them stays in cache). */
#define QUICK_BLOCKS 8192

/* The contiguous cut of a mode without every row's count: the non-zeros per
 * block of 2^shift rows (one streaming pass, no atomics), then the rows of
 * only the blocks where a part's target falls (a second pass). The cut of
 * the "items" -- a whole block, or one row of those blocks -- is the
 * row-wise cut (tf_partition_contiguous): its boundaries fall in those
 * blocks, each rounding compares a row there, and the blocks between hold
 * no boundary. *done 0 (nothing set) when it cannot decide: longest-first
 * asked for, or AUTO where the cut misses the mean by more than the 2 %
 * that longest-first would have to win by (then every row is counted), or
 * when the boundary blocks would hold too many rows. Rows, boundaries and
 * parts' non-zeros are those of the row-wise path. */
static tf_status quick_cut(const tf_tensor *X, uint32_t m, int parts, int schedule, const tf_dist *sum,
                           tf_partition *pt, int *done)
{
    *done = 0;
    const uint64_t I = X->dims[m];
    if (schedule == TF_PARTITION_LONGEST_FIRST && parts > 1) return TF_OK;
    uint32_t shift = 0;
    while ((I >> shift) > QUICK_BLOCKS) ++shift;
    const uint64_t nb = tf_row_blocks(X, m, shift), B = 1ull << shift;
    if (((uint64_t)parts << shift) > (I > 4 ? I / 4 : 1) && shift) return TF_OK;
    uint64_t *C = NULL, *fine = NULL, *pp = NULL, *real = NULL, *plo = NULL;
    int32_t *slot = NULL;
    tf_status s = TF_CALLOC(C, nb + 1, "non-zeros per block of rows");
    if (s == TF_OK) s = TF_ALLOC(slot, nb ? nb : 1, "boundary blocks");
    if (s == TF_OK) s = TF_ALLOC(plo, (uint64_t)parts + 1, "block-wise cut");
    if (s == TF_OK) s = tf_count_row_blocks(X, m, shift, 0, C + 1);
    if (s == TF_OK) s = sum_counts(sum, C + 1, nb);
    if (s != TF_OK) goto out;
    for (uint64_t b = 0; b < nb; ++b) C[b + 1] += C[b];
    const uint64_t nnz = C[nb];
    /* the block where each part's target falls: the last with C[b] <= target */
    int slots = 0;
    for (uint64_t b = 0; b < nb; ++b) slot[b] = -1;
    for (int r = 1; r < parts && nb; ++r) {
        const uint64_t target = (uint64_t)((unsigned __int128)nnz * (unsigned)r / (unsigned)parts);
        uint64_t b = last_at_or_below(C, 0, nb, target);
        if (b >= nb) b = nb - 1;
        if (slot[b] < 0) slot[b] = slots++;
    }
    s = TF_ALLOC(fine, ((uint64_t)slots << shift) + 1, "rows of the boundary blocks");
    if (s == TF_OK && slots) tf_count_rows_of_blocks(X, m, shift, slot, slots, 0, fine);
    if (s == TF_OK) s = sum_counts(sum, fine, (uint64_t)slots << shift);
    /* the items' prefix sums and where each item boundary lies among the rows */
    const uint64_t items = nb + (uint64_t)slots * (B - 1) + 1;
    if (s == TF_OK) s = TF_ALLOC(pp, items + 1, "block-wise prefix");
    if (s == TF_OK) s = TF_ALLOC(real, items + 1, "block-wise rows");
    if (s != TF_OK) goto out;
    uint64_t n = 0;
    pp[0] = 0;
    real[0] = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        const uint64_t lo = b << shift, hi = lo + B < I ? lo + B : I;
        if (slot[b] < 0) {
            pp[n + 1] = C[b + 1];
            real[++n] = hi;
            continue;
        }
        const uint64_t *f = fine + ((uint64_t)slot[b] << shift);
        for (uint64_t i = lo; i < hi; ++i, ++n) {
            pp[n + 1] = pp[n] + f[i - lo];
            real[n + 1] = i + 1;
        }
    }
    const uint64_t most = tf_partition_contiguous(pp, n, parts, plo);
    /* AUTO: longest-first's largest part is at least the mean, so it cannot
     * win by 2 % of it when this cut is within 1.9 % (the margin: rounding) */
    if (schedule == TF_PARTITION_AUTO && parts > 1 && (double)most * parts - (double)nnz > 0.019 * (double)nnz)
        goto out;
    for (int p = 0; p <= parts; ++p) pt->row_lo[m][p] = real[plo[p]];
    for (int p = 0; p < parts; ++p) pt->nnz[m][p] = pp[plo[p + 1]] - pp[plo[p]];
    pt->relabel[m] = NULL;
    pt->schedule[m] = TF_PARTITION_CONTIGUOUS;
    pt->imbalance[m] = nnz ? (double)most * parts / (double)nnz - 1.0 : 0.0;
    *done = 1;
out:
    tf_free(C);
    tf_free(slot);
    tf_free(fine);
    tf_free(pp);
    tf_free(real);
    tf_free(plo);
    return s;
}

tf_status tf_partition_make(tf_partition *pt, const tf_tensor *X, int parts, int schedule, const struct tf_dist *sum)
{
    memset(pt, 0, sizeof *pt);
    if (parts < 1 || (sum && parts != sum->size))
        return tf_fail(TF_ERR_ARG, "partition: %d parts%s", parts, sum ? " of a distributed input (one per rank)" : "");
    if ((unsigned)schedule > TF_PARTITION_LONGEST_FIRST)
        return tf_fail(TF_ERR_ARG, "partition: unknown schedule %d", schedule);
    pt->order = X->order;
    pt->parts = parts;
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        uint64_t *prefix = NULL;
        int done = 0;
        s = TF_ALLOC(pt->row_lo[m], (uint64_t)parts + 1, "partition rows");
        if (s == TF_OK) s = TF_CALLOC(pt->nnz[m], (uint64_t)parts, "non-zeros per part");
        if (s == TF_OK) s = quick_cut(X, m, parts, schedule, sum, pt, &done);
        if (s == TF_OK && done) {
            if (pt->imbalance[m] > pt->worst) pt->worst = pt->imbalance[m];
            continue;
        }
        if (s == TF_OK) s = row_prefix(X, m, sum, &prefix);
        if (s == TF_OK)
            s = tf_partition_cut(prefix, X->dims[m], parts, schedule, pt->row_lo[m], &pt->relabel[m],
                                 &pt->schedule[m], &pt->imbalance[m]);
        if (s == TF_OK) part_counts(prefix, X->dims[m], pt->row_lo[m], pt->relabel[m], parts, pt->nnz[m]);
        tf_free(prefix);
        if (s == TF_OK && pt->imbalance[m] > pt->worst) pt->worst = pt->imbalance[m];
    }
    if (s != TF_OK) tf_partition_free(pt);
    return s;
}

void tf_partition_free(tf_partition *pt)
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_free(pt->row_lo[m]);
        tf_free(pt->relabel[m]);
        tf_free(pt->nnz[m]);
    }
    memset(pt, 0, sizeof *pt);
}

int tf_partition_relabels(const tf_partition *pt)
{
    for (uint32_t m = 0; m < pt->order; ++m)
        if (pt->relabel[m]) return 1;
    return 0;
}

void tf_partition_rows_in(const uint32_t *relabel, uint64_t rows, uint64_t cols, const double *src, double *dst)
{
#pragma omp parallel for num_threads(tf_resolve_threads(0)) schedule(static) if (rows * cols > 100000)
    for (int64_t i = 0; i < (int64_t)rows; ++i)
        memcpy(dst + (uint64_t)label(relabel, (uint32_t)i) * cols, src + (uint64_t)i * cols, cols * sizeof *dst);
}

void tf_partition_rows_out(const uint32_t *relabel, uint64_t rows, uint64_t cols, const double *src, double *dst)
{
#pragma omp parallel for num_threads(tf_resolve_threads(0)) schedule(static) if (rows * cols > 100000)
    for (int64_t i = 0; i < (int64_t)rows; ++i)
        memcpy(dst + (uint64_t)i * cols, src + (uint64_t)label(relabel, (uint32_t)i) * cols, cols * sizeof *dst);
}

/* ------------------------------------------------------------------ shards */

/* One split: parts first..first+count-1 of `mode`, labels mapped by map[]
 * (entries NULL: kept), the mode index shifted down by row_lo or not. */
typedef struct split_job {
    const tf_tensor *X;
    const uint32_t *map[TF_MAX_ORDER];
    uint32_t mode, prev;
    const uint64_t *row_lo, *prev_lo; /* prev_lo NULL: no pairs */
    int first, count, shift;
} split_job;

/* Which of the outputs non-zero k goes to, or -1. */
static inline int target(const split_job *j, uint64_t k)
{
    const tf_tensor *X = j->X;
    const int p = owner(j->row_lo, j->first, j->count, label(j->map[j->mode], X->ind[j->mode][k]));
    if (p < 0 || !j->prev_lo) return p;
    const uint64_t i = label(j->map[j->prev], X->ind[j->prev][k]);
    return 2 * p + !((i >= j->prev_lo[j->first + p]) & (i < j->prev_lo[j->first + p + 1]));
}

/* One pass of a count-then-scatter by target over T fixed blocks of the
 * non-zeros lo..hi-1 (the same blocks in both passes whatever threads
 * OpenMP gives): out NULL: at[t nout + q] (zeroed by the caller) counts the
 * non-zeros of block t that go to output q; else each is written to out[q]
 * at at[t nout + q]++, in the run's labels (the mode shifted with j->shift). */
static void pass_range(const split_job *j, uint64_t lo, uint64_t hi, int T, int nout, uint64_t *at, tf_tensor *out)
{
    const tf_tensor *X = j->X;
    const uint64_t n = hi - lo;
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t k0 = lo + block_lo(n, t, T), k1 = lo + block_lo(n, t + 1, T);
        uint64_t *w = at + (uint64_t)t * nout;
        for (uint64_t k = k0; k < k1; ++k) {
            const int q = target(j, k);
            if (q < 0) continue;
            const uint64_t i = w[q]++;
            if (!out) continue;
            tf_tensor *o = &out[q];
            for (uint32_t m = 0; m < X->order; ++m) o->ind[m][i] = label(j->map[m], X->ind[m][k]);
            if (j->shift) o->ind[j->mode][i] -= (uint32_t)j->row_lo[j->first + (j->prev_lo ? q / 2 : q)];
            o->vals[i] = X->vals[k];
        }
    }
}

/* pass_range over all the non-zeros. */
static void pass(const split_job *j, int T, int nout, uint64_t *at, tf_tensor *out)
{
    pass_range(j, 0, j->X->nnz, T, nout, at, out);
}

static tf_status split(const split_job *j, tf_tensor *out)
{
    const tf_tensor *X = j->X;
    const int nout = j->prev_lo ? 2 * j->count : j->count;
    memset(out, 0, (size_t)nout * sizeof *out);
    /* the team model (a non-zero's indices and value read and written: a
     * streamed element counts as several units); small shards get a small
     * team, and the parts do not depend on it */
    const int T = tf_team_for_work(0, X->nnz / 65536 + 1, X->nnz * (8ull * X->order + 16));
    uint64_t *at = NULL; /* [thread][out]: counts, then where each thread writes */
    TF_TRY(TF_CALLOC(at, (uint64_t)T * nout, "shard offsets"));
    pass(j, T, nout, at, NULL);
    tf_status s = TF_OK;
    for (int q = 0; q < nout && s == TF_OK; ++q) {
        uint64_t n = 0;
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * nout + q];
            at[(uint64_t)t * nout + q] = n;
            n += c;
        }
        const int p = j->prev_lo ? q / 2 : q;
        uint64_t dims[TF_MAX_ORDER];
        memcpy(dims, X->dims, X->order * sizeof *dims);
        const uint64_t rows = j->row_lo[j->first + p + 1] - j->row_lo[j->first + p];
        if (j->shift) dims[j->mode] = rows ? rows : 1;
        s = tf_tensor_alloc(&out[q], X->order, dims, n);
    }
    if (s == TF_OK) pass(j, T, nout, at, out);
    else
        for (int q = 0; q < nout; ++q) tf_tensor_free(&out[q]);
    tf_free(at);
    return s;
}

/* The job of parts first..first+count-1 of `mode` under pt. */
static split_job job_of(const tf_tensor *X, const tf_partition *pt, int relabel, uint32_t mode, int pairs, int first,
                        int count, int shift)
{
    split_job j;
    memset(&j, 0, sizeof j);
    j.X = X;
    for (uint32_t m = 0; relabel && m < X->order; ++m) j.map[m] = pt->relabel[m];
    j.mode = mode;
    j.prev = (mode + X->order - 1) % X->order;
    j.row_lo = pt->row_lo[mode];
    j.prev_lo = pairs ? pt->row_lo[j.prev] : NULL;
    j.first = first;
    j.count = count;
    j.shift = shift;
    return j;
}

static tf_status check_parts(const tf_tensor *X, const tf_partition *pt, uint32_t mode, int first, int count)
{
    if (!X || !pt || mode >= pt->order || X->order != pt->order || count < 1 || first < 0 ||
        first + count > pt->parts)
        return tf_fail(TF_ERR_ARG, "partition: parts %d..%d of %d, mode %u", first, first + count - 1,
                       pt ? pt->parts : 0, mode + 1);
    return TF_OK;
}

tf_status tf_partition_shard(const tf_tensor *X, const tf_partition *pt, uint32_t mode, int part, tf_tensor *out)
{
    TF_TRY(check_parts(X, pt, mode, part, 1));
    const split_job j = job_of(X, pt, 1, mode, 0, part, 1, 0);
    return split(&j, out);
}

tf_status tf_partition_split(const tf_tensor *X, const tf_partition *pt, int relabel, uint32_t mode, int pairs,
                             int first, int count, tf_tensor *out)
{
    TF_TRY(check_parts(X, pt, mode, first, count));
    const split_job j = job_of(X, pt, relabel, mode, pairs, first, count, 1);
    return split(&j, out);
}

/* An exchange moves `groups` blocks between each pair of ranks: one (the
 * destination's shard), or two with pairs (its non-zeros whose previous
 * index is one of its rows of that mode, then the others: out[0], out[1]).
 * The sender tells them apart while it packs (pass with prev_lo), so the
 * receiver gets each straight into its own output, with no split after.
 * Counts and offsets of group g and rank r are at [g P + r].
 *
 * Over several ranks it goes in rounds (exchange_rounds): round c packs
 * and sends the records of chunk c of the part (consecutive non-zeros), so
 * the send buffer holds one chunk's records for the others, never the whole
 * remote share. A destination's block is its records in the part's order,
 * so the chunks' pieces, one after the other, are that block: the result
 * is the one-shot exchange's. */

/* The send buffer's bound when the ranks' table sets none (pack_bytes 0):
 * a few B/nnz of a 10M-non-zero part; a round's collectives cost far less
 * than packing and moving its tens of MB. */
#define EXCHANGE_PACK ((uint64_t)32 << 20)

/* recv_n[c GP + g P + r]: how many non-zeros of group g rank r sends this
 * one in round c, from every rank's send_n laid out alike (`rounds`
 * records of 8 groups bytes between each pair of ranks, in one
 * all-to-all). */
static tf_status exchange_counts(const tf_dist *d, int groups, uint64_t rounds, const uint64_t *send_n,
                                 uint64_t *recv_n)
{
    const int P = d->size;
    const uint64_t GP = (uint64_t)groups * P, per = rounds * groups; /* a rank's record of counts: per u64 */
    uint64_t *one = NULL, *by_rank = NULL, got = 0;
    void *n = NULL;
    TF_TRY(TF_ALLOC(one, (uint64_t)P, "exchange counts"));
    tf_status s = TF_ALLOC(by_rank, P * per + 1, "exchange counts");
    for (int r = 0; s == TF_OK && r < P; ++r) { /* records per rank: its groups' counts, round by round */
        one[r] = rounds;
        for (uint64_t c = 0; c < rounds; ++c)
            for (int g = 0; g < groups; ++g) by_rank[r * per + c * groups + g] = send_n[c * GP + (uint64_t)g * P + r];
    }
    if (s == TF_OK) s = d->alltoall_records(by_rank, one, 8u * (uint32_t)groups, d->round_bytes, &n, &got);
    if (s == TF_OK && got != P * rounds)
        s = tf_fail(TF_ERR_IO, "exchange: %llu counts from %d ranks", (unsigned long long)got, P);
    for (int r = 0; s == TF_OK && r < P; ++r)
        for (uint64_t c = 0; c < rounds; ++c)
            for (int g = 0; g < groups; ++g)
                recv_n[c * GP + (uint64_t)g * P + r] = ((const uint64_t *)n)[r * per + c * groups + g];
    tf_free(n);
    tf_free(by_rank);
    tf_free(one);
    return s;
}

/* An exchange's bookkeeping (the whole exchange's, or one round's), per
 * group g and rank r (at [g P + r]): send_n non-zeros of this part go to
 * r, recv_n come from r; the others' blocks start at base[g] + send_at of
 * the send arrays (group g's blocks together from base[g], in rank order;
 * this rank's own is not sent: send_at[g P + me] unused) and land at
 * recv_at of output g, in rank order. */
typedef struct exchange_plan {
    uint64_t *send_n, *recv_n, *send_at, *recv_at;
    uint64_t base[2];  /* group g's first record in the send arrays */
    uint64_t remote;   /* non-zeros sent to others, all groups */
    uint64_t total[2]; /* received into output g in all (own included) */
    int groups;
} exchange_plan;

static void exchange_plan_free(exchange_plan *x)
{
    tf_free(x->send_n); /* one block: the four arrays */
    memset(x, 0, sizeof *x);
}

static tf_status exchange_plan_alloc(exchange_plan *x, int groups, int P)
{
    const uint64_t GP = (uint64_t)groups * P;
    memset(x, 0, sizeof *x);
    x->groups = groups;
    TF_TRY(TF_CALLOC(x->send_n, 4 * GP, "exchange counts"));
    x->recv_n = x->send_n + GP;
    x->send_at = x->send_n + 2 * GP;
    x->recv_at = x->send_n + 3 * GP;
    return TF_OK;
}

/* send_n[g P + r] += the non-zeros the counting pass's at[t groups P +
 * groups r + g] (pass's outputs: group g of rank r) send there. */
static void send_counts(const uint64_t *at, int T, int groups, int P, uint64_t *send_n)
{
    const uint64_t GP = (uint64_t)groups * P;
    for (int t = 0; t < T; ++t)
        for (uint64_t q = 0; q < GP; ++q) send_n[q % groups * P + q / groups] += at[t * GP + q];
}

/* x's offsets from its counts: base, send_at, remote, total, and recv_at
 * from `from` (a round's: where the earlier rounds left each block) or,
 * from NULL, each output's blocks one after the other. */
static void exchange_layout(exchange_plan *x, int P, int me, const uint64_t *from)
{
    x->remote = 0;
    for (int g = 0; g < x->groups; ++g) {
        x->base[g] = x->remote;
        x->total[g] = 0;
        for (int r = 0; r < P; ++r) {
            const uint64_t i = (uint64_t)g * P + r;
            x->recv_at[i] = from ? from[i] : x->total[g];
            x->total[g] += x->recv_n[i];
            x->send_at[i] = x->remote - x->base[g];
            if (r != me) x->remote += x->send_n[i];
        }
    }
}

/* The plan of a one-shot exchange from the counting pass's at (T blocks). */
static tf_status exchange_plan_make(const tf_dist *d, int groups, const uint64_t *at, int T, exchange_plan *x)
{
    TF_TRY(exchange_plan_alloc(x, groups, d->size));
    send_counts(at, T, groups, d->size, x->send_n);
    const tf_status s = exchange_counts(d, groups, 1, x->send_n, x->recv_n);
    if (s == TF_OK) exchange_layout(x, d->size, d->rank, NULL);
    else exchange_plan_free(x);
    return s;
}

/* Output g of this rank, sized by the plan (dims as the split's with shift). */
static tf_status exchange_outputs(const tf_tensor *part, const tf_partition *pt, uint32_t mode, int rank, int shift,
                                  const exchange_plan *x, tf_tensor *out)
{
    uint64_t dims[TF_MAX_ORDER];
    memcpy(dims, part->dims, part->order * sizeof *dims);
    const uint64_t rows = pt->row_lo[mode][rank + 1] - pt->row_lo[mode][rank];
    if (shift) dims[mode] = rows ? rows : 1;
    tf_status s = TF_OK;
    for (int g = 0; g < x->groups && s == TF_OK; ++g) s = tf_tensor_alloc(&out[g], part->order, dims, x->total[g]);
    return s;
}

/* The send arrays' SoA view: values first (8-byte aligned), then each index
 * array, x->remote items each. */
static tf_tensor exchange_away(const exchange_plan *x, uint32_t N, unsigned char *send)
{
    tf_tensor away;
    memset(&away, 0, sizeof away);
    away.order = N;
    away.vals = (double *)(void *)send;
    for (uint32_t m = 0; m < N; ++m) away.ind[m] = (uint32_t *)(void *)(send + x->remote * (8 + 4 * (uint64_t)m));
    return away;
}

/* Where each thread's block of the part writes (the scatter's at[], see
 * pass, whose output q = groups r + g): its non-zeros for this rank
 * straight into out[g] after those of the blocks before it, the others'
 * into the send arrays likewise; view[q] the arrays output q goes to. */
static void exchange_targets(const tf_dist *d, const exchange_plan *x, int T, uint32_t N, tf_tensor *out,
                             unsigned char *send, tf_tensor *view, uint64_t *at)
{
    const int G = x->groups;
    const uint64_t GP = (uint64_t)G * d->size;
    const tf_tensor away = exchange_away(x, N, send);
    for (uint64_t q = 0; q < GP; ++q) {
        const int r = (int)(q / G), g = (int)(q % G);
        const uint64_t i = (uint64_t)g * d->size + r;
        view[q] = r == d->rank ? out[g] : away;
        uint64_t w = r == d->rank ? x->recv_at[i] : x->base[g] + x->send_at[i];
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * GP + q];
            at[(uint64_t)t * GP + q] = w;
            w += c;
        }
    }
}

/* The others' blocks of each group (MPI): from the send arrays to theirs,
 * and theirs straight into out[g]'s arrays, values and every index at once. */
static tf_status exchange_move(const tf_dist *d, const exchange_plan *x, uint32_t N, unsigned char *send,
                               tf_tensor *out)
{
    if (d->size == 1) return TF_OK;
    if (!d->alltoall_arrays) return tf_fail(TF_ERR_UNAVAILABLE, "exchange: the ranks' table has no alltoall_arrays");
    const tf_tensor away = exchange_away(x, N, send);
    tf_status s = TF_OK;
    for (int g = 0; g < x->groups && s == TF_OK; ++g) {
        const uint64_t b = x->base[g], i = (uint64_t)g * d->size;
        const void *from[TF_MAX_ORDER + 1];
        void *to[TF_MAX_ORDER + 1];
        uint32_t bytes[TF_MAX_ORDER + 1];
        from[0] = away.vals + b;
        to[0] = out[g].vals;
        bytes[0] = sizeof *out[g].vals;
        for (uint32_t m = 0; m < N; ++m) {
            from[m + 1] = away.ind[m] + b;
            to[m + 1] = out[g].ind[m];
            bytes[m + 1] = sizeof *out[g].ind[m];
        }
        s = d->alltoall_arrays((int)N + 1, from, to, bytes, x->send_n + i, x->send_at + i, x->recv_n + i,
                               x->recv_at + i, d->round_bytes);
    }
    return s;
}

/* The one-shot exchange (one process: nothing to send): counted, then
 * scattered by destination, this rank's own straight into out. */
static tf_status exchange_whole(const split_job *j, const tf_partition *pt, const tf_dist *d, int G, int T,
                                tf_tensor *out)
{
    const tf_tensor *part = j->X;
    const uint32_t N = part->order;
    const int nout = G * d->size;
    uint64_t *at = NULL;
    unsigned char *send = NULL;
    tf_tensor *view = NULL;
    exchange_plan x;
    memset(&x, 0, sizeof x);
    tf_status s = TF_CALLOC(at, (uint64_t)T * nout, "exchange offsets");
    if (s == TF_OK) s = TF_ALLOC(view, (uint64_t)nout, "exchange targets");
    if (s == TF_OK) pass(j, T, nout, at, NULL); /* counted */
    if (s == TF_OK) s = exchange_plan_make(d, G, at, T, &x);
    if (s == TF_OK) s = exchange_outputs(part, pt, j->mode, d->rank, j->shift, &x, out);
    if (s == TF_OK) s = tf_alloc((void **)&send, x.remote ? x.remote : 1, 8 + 4 * (uint64_t)N, "non-zeros to send");
    if (s == TF_OK) { /* scattered by destination, in the run's labels: this rank's own into out */
        exchange_targets(d, &x, T, N, out, send, view, at);
        pass(j, T, nout, at, view);
        s = exchange_move(d, &x, N, send, out);
    }
    exchange_plan_free(&x);
    tf_free(send);
    tf_free(view);
    tf_free(at);
    return s;
}

/* The rounds of an exchange over several ranks: chunk c of the part is its
 * non-zeros [c chunk, (c + 1) chunk); every rank takes part in `rounds`
 * rounds (the most chunks of any rank's part; the others' send nothing). */
typedef struct exchange_rounds {
    uint64_t chunk, rounds;
    uint64_t *at;              /* [c][t][q]: the counting pass's per chunk (pass's outputs) */
    uint64_t *send_n, *recv_n; /* [c][g P + r]: per round, as exchange_plan's */
    uint64_t most;             /* the largest round's records for the others: the send buffer */
} exchange_rounds;

static void exchange_rounds_free(exchange_rounds *rs)
{
    tf_free(rs->at);
    tf_free(rs->send_n);
    tf_free(rs->recv_n);
    memset(rs, 0, sizeof *rs);
}

/* The chunk and the rounds, agreed by the ranks: at most pack_bytes of
 * records a round whatever goes where (a chunk's records for the others
 * are fewer than its non-zeros). */
static tf_status rounds_agree(const tf_dist *d, uint64_t nnz, uint32_t N, exchange_rounds *rs)
{
    if (!d->allreduce_u64) return tf_fail(TF_ERR_UNAVAILABLE, "exchange: the ranks' table has no allreduce_u64");
    const uint64_t cap = d->pack_bytes ? d->pack_bytes : EXCHANGE_PACK, rec = 8 + 4 * (uint64_t)N;
    rs->chunk = cap / rec ? cap / rec : 1;
    rs->rounds = (nnz + rs->chunk - 1) / rs->chunk;
    if (!rs->rounds) rs->rounds = 1; /* one round, empty where every part is */
    return d->allreduce_u64(&rs->rounds, 1, TF_RANKS_MAX);
}

/* Each chunk counted (its T blocks' non-zeros per output), its counts per
 * destination, and every rank's for this one from the exchange of counts. */
static tf_status rounds_count(const split_job *j, const tf_dist *d, int G, int T, exchange_rounds *rs)
{
    const uint64_t nnz = j->X->nnz, nout = (uint64_t)G * d->size, R = rs->rounds;
    TF_TRY(TF_CALLOC(rs->at, R * T * nout, "exchange offsets"));
    TF_TRY(TF_CALLOC(rs->send_n, R * nout, "exchange counts"));
    TF_TRY(TF_ALLOC(rs->recv_n, R * nout, "exchange counts"));
    for (uint64_t c = 0; c < R; ++c) {
        const uint64_t lo = c * rs->chunk < nnz ? c * rs->chunk : nnz, hi = lo + rs->chunk < nnz ? lo + rs->chunk : nnz;
        uint64_t *sn = rs->send_n + c * nout, away = 0;
        pass_range(j, lo, hi, T, (int)nout, rs->at + c * T * nout, NULL);
        send_counts(rs->at + c * T * nout, T, G, d->size, sn);
        for (uint64_t i = 0; i < nout; ++i) away += i % d->size == (uint64_t)d->rank ? 0 : sn[i];
        if (away > rs->most) rs->most = away;
    }
    return exchange_counts(d, G, R, rs->send_n, rs->recv_n);
}

/* The whole exchange's plan (outputs' sizes, each block's place in them):
 * the rounds' counts summed. */
static tf_status rounds_plan(const tf_dist *d, int G, const exchange_rounds *rs, exchange_plan *x)
{
    const uint64_t nout = (uint64_t)G * d->size;
    TF_TRY(exchange_plan_alloc(x, G, d->size));
    for (uint64_t c = 0; c < rs->rounds; ++c)
        for (uint64_t i = 0; i < nout; ++i) {
            x->send_n[i] += rs->send_n[c * nout + i];
            x->recv_n[i] += rs->recv_n[c * nout + i];
        }
    exchange_layout(x, d->size, d->rank, NULL);
    return TF_OK;
}

/* Round c: chunk c scattered (this rank's own straight into out, the
 * others' into the send buffer) and moved; y is the round's plan, whose
 * blocks land at `done`, where the earlier rounds left them (advanced). */
static tf_status rounds_one(const split_job *j, const tf_dist *d, exchange_rounds *rs, uint64_t c, int T,
                            exchange_plan *y, uint64_t *done, unsigned char *send, tf_tensor *view, tf_tensor *out)
{
    const uint64_t nnz = j->X->nnz, nout = (uint64_t)y->groups * d->size;
    const uint64_t lo = c * rs->chunk < nnz ? c * rs->chunk : nnz, hi = lo + rs->chunk < nnz ? lo + rs->chunk : nnz;
    uint64_t *at = rs->at + c * T * nout;
    memcpy(y->send_n, rs->send_n + c * nout, nout * sizeof *y->send_n);
    memcpy(y->recv_n, rs->recv_n + c * nout, nout * sizeof *y->recv_n);
    exchange_layout(y, d->size, d->rank, done);
    exchange_targets(d, y, T, j->X->order, out, send, view, at);
    pass_range(j, lo, hi, T, (int)nout, at, view);
    for (uint64_t i = 0; i < nout; ++i) done[i] += y->recv_n[i];
    return exchange_move(d, y, j->X->order, send, out);
}

/* The exchange over several ranks in rounds (see above): the send buffer
 * holds one round's records for the others at most. */
static tf_status exchange_in_rounds(const split_job *j, const tf_partition *pt, const tf_dist *d, int G, int T,
                                    tf_tensor *out)
{
    const uint32_t N = j->X->order;
    const uint64_t nout = (uint64_t)G * d->size;
    exchange_rounds rs;
    exchange_plan x, y;
    memset(&rs, 0, sizeof rs);
    memset(&x, 0, sizeof x);
    memset(&y, 0, sizeof y);
    unsigned char *send = NULL;
    tf_tensor *view = NULL;
    uint64_t *done = NULL;
    tf_status s = rounds_agree(d, j->X->nnz, N, &rs);
    if (s == TF_OK) s = rounds_count(j, d, G, T, &rs);
    if (s == TF_OK) s = rounds_plan(d, G, &rs, &x);
    if (s == TF_OK) s = exchange_outputs(j->X, pt, j->mode, d->rank, j->shift, &x, out);
    if (s == TF_OK) s = exchange_plan_alloc(&y, G, d->size);
    if (s == TF_OK) s = TF_ALLOC(view, nout, "exchange targets");
    if (s == TF_OK) s = TF_ALLOC(done, nout, "exchange offsets");
    if (s == TF_OK) s = tf_alloc((void **)&send, rs.most ? rs.most : 1, 8 + 4 * (uint64_t)N, "non-zeros to send");
    if (s == TF_OK) memcpy(done, x.recv_at, nout * sizeof *done);
    for (uint64_t c = 0; s == TF_OK && c < rs.rounds; ++c) s = rounds_one(j, d, &rs, c, T, &y, done, send, view, out);
    exchange_rounds_free(&rs);
    exchange_plan_free(&x);
    exchange_plan_free(&y);
    tf_free(send);
    tf_free(view);
    tf_free(done);
    return s;
}

/* This rank's rows of `mode` from every rank's part: out[0] (pairs 0), or
 * out[0] and out[1] split by the previous mode (pairs 1, shift on), as
 * tf_partition_split of the gathered shard gives. */
static tf_status exchange(const tf_tensor *part, const tf_partition *pt, uint32_t mode, const tf_dist *d, int shift,
                          int pairs, tf_tensor *out)
{
    const int G = pairs ? 2 : 1;
    memset(out, 0, (size_t)G * sizeof *out);
    if (pt->parts != d->size) return tf_fail(TF_ERR_ARG, "partition: %d parts over %d ranks", pt->parts, d->size);
    TF_TRY(check_parts(part, pt, mode, 0, d->size));
    const int P = d->size, T = tf_resolve_threads(0);
    /* a non-zero's target: its rank, and with pairs its half there */
    const split_job j = job_of(part, pt, 1, mode, pairs, 0, P, shift);
    const tf_status s = P == 1 ? exchange_whole(&j, pt, d, G, T, out) : exchange_in_rounds(&j, pt, d, G, T, out);
    if (s != TF_OK)
        for (int g = 0; g < G; ++g) tf_tensor_free(&out[g]);
    return s;
}

tf_status tf_partition_exchange(const tf_tensor *part, const tf_partition *pt, uint32_t mode, const tf_dist *d,
                                int shift, tf_tensor *out)
{
    return exchange(part, pt, mode, d, shift, 0, out);
}

tf_status tf_partition_exchange_pairs(const tf_tensor *part, const tf_partition *pt, uint32_t mode, const tf_dist *d,
                                      tf_tensor *out)
{
    return exchange(part, pt, mode, d, 1, 1, out);
}

static void set_shards_free(tf_partition_shards *set)
{
    for (int i = 0; i < (set->pairs ? 2 : 1) * set->count; ++i) tf_tensor_free(&set->shard[i]);
}

static tf_status set_split(void *user, uint32_t mode, tf_tensor *out)
{
    tf_partition_shards *set = user;
    set_shards_free(set);
    if (set->input_part) /* this rank's rows of mode from every rank's part, split as they land */
        TF_TRY(set->pairs ? tf_partition_exchange_pairs(set->X, set->pt, mode, set->dist, set->shard)
                          : tf_partition_exchange(set->X, set->pt, mode, set->dist, 1, set->shard));
    else
        TF_TRY(tf_partition_split(set->X, set->pt, 1, mode, set->pairs, set->first, set->count, set->shard));
    memcpy(out, set->shard, (size_t)(set->pairs ? 2 : 1) * set->count * sizeof *out);
    return TF_OK;
}

tf_status tf_partition_shards_make(tf_partition_shards *set, const tf_tensor *X, const tf_partition *pt, int first,
                                   int count, int pairs, const struct tf_dist *dist, int input_part, tf_shards *sh)
{
    memset(set, 0, sizeof *set);
    memset(sh, 0, sizeof *sh);
    const int parts = pt->parts;
    if (count < 1 || count > TF_MAX_GPUS || first < 0 || first + count > parts || X->order != pt->order)
        return tf_fail(TF_ERR_ARG, "shards: parts %d..%d of %d", first, first + count - 1, parts);
    if (dist && input_part && (count != 1 || parts != dist->size || first != dist->rank))
        return tf_fail(TF_ERR_ARG, "shards of a distributed input: one part per rank, the rank's own");
    set->X = X;
    set->pt = pt;
    set->first = first;
    set->count = count;
    set->pairs = pairs != 0;
    set->dist = dist;
    set->input_part = dist && input_part;
    for (uint32_t m = 0; m < X->order; ++m) {
        sh->row_lo[m] = pt->row_lo[m];
        sh->relabel[m] = pt->relabel[m];
        sh->nnz[m] = pt->nnz[m];
    }
    sh->whole = set->input_part ? NULL : X; /* a rank's part: the rows' owners gather it (split) */
    sh->parts = parts;
    sh->first = first;
    sh->count = count;
    sh->split = set_split;
    sh->pairs = set->pairs;
    sh->user = set;
    sh->dist = dist;
    return TF_OK;
}

void tf_partition_shards_free(tf_partition_shards *set)
{
    set_shards_free(set);
    set->count = 0;
}
