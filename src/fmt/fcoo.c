/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO builder: sort by the output mode, keep product-mode indices, and
 * derive the head bits, segments and partition start flags. */
#include "fmt/fcoo.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/radix.h"

void tf_fcoo_free(tf_fcoo *f)
{
    if (!f) return;
    for (uint32_t j = 0; j < TF_MAX_ORDER; ++j) tf_free(f->pind[j]);
    tf_free(f->vals);
    tf_free(f->head);
    tf_free(f->start);
    tf_free(f->part_seg);
    tf_free(f->seg_row);
    tf_free(f->spare);
    memset(f, 0, sizeof *f);
}

static uint64_t words32(uint64_t bits) { return (bits + 31) / 32; }

uint64_t tf_fcoo_bytes(const tf_fcoo *f, uint32_t value_bytes)
{
    return f->nnz * ((uint64_t)(f->order - 1) * sizeof(uint32_t) + value_bytes) +
           words32(f->nnz) * 4 + words32(f->nparts) * 4 + f->nparts * 4 + f->nseg * 4;
}

uint64_t tf_fcoo_bytes_estimate(const tf_tensor *X, uint32_t mode, uint32_t part_nnz,
                                uint32_t value_bytes)
{
    uint64_t nparts = part_nnz ? (X->nnz + part_nnz - 1) / part_nnz : 0;
    uint64_t nseg = X->nnz < X->dims[mode] ? X->nnz : X->dims[mode];
    return X->nnz * ((uint64_t)(X->order - 1) * sizeof(uint32_t) + value_bytes) +
           words32(X->nnz) * 4 + words32(nparts) * 4 + nparts * 4 + nseg * 4;
}

/* Heads before each of C chunks of the head words (chunk c: words
 * nw*c/C .. nw*(c+1)/C - 1); base has C + 1 entries, base[C] = all heads.
 * The passes over the flags split the words this way, so each walks its
 * chunk in parallel knowing the segment it starts in. */
static void chunk_heads(const uint32_t *head, uint64_t nw, int C, uint64_t *base)
{
#pragma omp parallel for num_threads(C) schedule(static, 1)
    for (int c = 0; c < C; ++c) {
        uint64_t h = 0;
        for (uint64_t w = nw * (uint64_t)c / (uint64_t)C; w < nw * (uint64_t)(c + 1) / (uint64_t)C; ++w)
            h += (uint64_t)__builtin_popcount(head[w]);
        base[c + 1] = h;
    }
    base[0] = 0;
    for (int c = 0; c < C; ++c) base[c + 1] += base[c];
}

static int flag_chunks(uint64_t nw) { return nw < 4096 ? 1 : tf_default_threads(); }

/* Start flags and partition segments for partitions of part_nnz
 * non-zeros (they begin at word boundaries: the heads before a partition
 * are those of the words before it). */
static tf_status cut_partitions(const tf_fcoo *f, uint32_t part_nnz, uint64_t nparts, uint32_t **start_out,
                                uint32_t **part_seg_out)
{
    const uint64_t nw = words32(f->nnz), wpp = part_nnz / 32;
    const int C = flag_chunks(nw);
    uint32_t *start = NULL, *part_seg = NULL;
    uint64_t *base = NULL;
    tf_status s = TF_ALLOC(start, words32(nparts), "F-COO start flags");
    if (s == TF_OK) s = TF_ALLOC(part_seg, nparts, "F-COO partition segments");
    if (s == TF_OK) s = TF_ALLOC(base, (uint64_t)C + 1, "F-COO head counts");
    if (s != TF_OK) {
        tf_free(start);
        tf_free(part_seg);
        return s;
    }
    chunk_heads(f->head, nw, C, base);
#pragma omp parallel for num_threads(C) schedule(static, 1)
    for (int c = 0; c < C; ++c) {
        uint64_t heads = base[c];
        for (uint64_t w = nw * (uint64_t)c / (uint64_t)C; w < nw * (uint64_t)(c + 1) / (uint64_t)C; ++w) {
            if (w % wpp == 0) part_seg[w / wpp] = (uint32_t)(heads + (f->head[w] & 1u) - 1);
            heads += (uint64_t)__builtin_popcount(f->head[w]);
        }
    }
    const int64_t nsw = (int64_t)words32(nparts);
#pragma omp parallel for num_threads(C) schedule(static)
    for (int64_t sw = 0; sw < nsw; ++sw) {
        uint32_t bits = 0;
        for (uint64_t p = (uint64_t)sw * 32; p < nparts && p < (uint64_t)sw * 32 + 32; ++p)
            bits |= (f->head[p * wpp] & 1u) << (p & 31);
        start[sw] = bits;
    }
    tf_free(base);
    *start_out = start;
    *part_seg_out = part_seg;
    return TF_OK;
}

/* Head bits, segment rows, start bits and partition segments from the
 * sorted output indices `oi`. */
static tf_status build_flags(tf_fcoo *f, const uint32_t *oi)
{
    const uint64_t n = f->nnz, nw = words32(n);
    const int64_t nwi = (int64_t)nw;
    const int C = flag_chunks(nw);
    if (!f->head) TF_TRY(TF_ALLOC(f->head, nw, "F-COO head bits"));
    uint64_t nseg = 0;
#pragma omp parallel for num_threads(C) schedule(static) reduction(+ : nseg)
    for (int64_t w = 0; w < nwi; ++w) {
        const uint64_t k0 = (uint64_t)w * 32, k1 = k0 + 32 < n ? k0 + 32 : n;
        uint32_t bits = 0;
        for (uint64_t k = k0; k < k1; ++k) bits |= (uint32_t)(k == 0 || oi[k] != oi[k - 1]) << (k - k0);
        f->head[w] = bits;
        nseg += (uint64_t)__builtin_popcount(bits);
    }
    f->nseg = nseg;
    uint64_t *base = NULL;
    TF_TRY(TF_ALLOC(f->seg_row, nseg, "F-COO segment rows"));
    TF_TRY(TF_ALLOC(base, (uint64_t)C + 1, "F-COO head counts"));
    chunk_heads(f->head, nw, C, base);
#pragma omp parallel for num_threads(C) schedule(static, 1)
    for (int c = 0; c < C; ++c) {
        uint64_t sg = base[c];
        for (uint64_t w = nw * (uint64_t)c / (uint64_t)C; w < nw * (uint64_t)(c + 1) / (uint64_t)C; ++w)
            for (uint32_t b = f->head[w]; b; b &= b - 1)
                f->seg_row[sg++] = oi[w * 32 + (uint64_t)__builtin_ctz(b)];
    }
    tf_free(base);
    f->nparts = (n + f->part_nnz - 1) / f->part_nnz;
    return cut_partitions(f, f->part_nnz, f->nparts, &f->start, &f->part_seg);
}

/* Arrays f already holds (a rebuild) are reused; keep: the sorted output
 * indices stay in f->spare. */
static tf_status build(const tf_tensor *X, uint32_t mode, tf_fcoo *f, int keep)
{
    const uint32_t N = X->order;
    const uint64_t n = X->nnz;
    uint32_t mo[TF_MAX_ORDER], *cols[TF_MAX_ORDER];
    mo[0] = mode;
    for (uint32_t m = 0, j = 0; m < N; ++m)
        if (m != mode) { f->pmodes[j] = m; mo[1 + j] = m; ++j; }
    tf_status s = TF_OK;
    uint32_t *oi = f->spare; /* the sorted output indices, for the flags */
    f->spare = NULL;
    for (uint32_t j = 0; j + 1 < N && s == TF_OK; ++j)
        if (!f->pind[j]) s = TF_ALLOC(f->pind[j], n, "F-COO indices");
    if (s == TF_OK && !f->vals) s = TF_ALLOC(f->vals, n, "F-COO values");
    if (s == TF_OK && !oi) s = TF_ALLOC(oi, n, "F-COO output indices");
    if (s == TF_OK) {
        cols[0] = oi;
        for (uint32_t j = 0; j + 1 < N; ++j) cols[1 + j] = f->pind[j];
        s = tf_radix_sort_into(X, mo, N, cols, f->vals, 0);
    }
#ifdef TF_RADIX_TIMING
    extern double tf_radix_t[8];
    double t0 = tf_wtime();
#endif
    if (s == TF_OK) s = build_flags(f, oi);
#ifdef TF_RADIX_TIMING
    tf_radix_t[5] += tf_wtime() - t0;
#endif
    if (keep) f->spare = oi;
    else tf_free(oi);
    return s;
}

tf_status tf_fcoo_repartition(tf_fcoo *f, uint32_t part_nnz)
{
    if (part_nnz < 32 || part_nnz % 32)
        return tf_fail(TF_ERR_ARG, "F-COO: partition size %u is not a positive multiple of 32",
                       part_nnz);
    if (part_nnz == f->part_nnz) return TF_OK;
    const uint64_t nparts = (f->nnz + part_nnz - 1) / part_nnz;
    uint32_t *start = NULL, *part_seg = NULL;
    TF_TRY(cut_partitions(f, part_nnz, nparts, &start, &part_seg));
    tf_free(f->start);
    tf_free(f->part_seg);
    f->start = start;
    f->part_seg = part_seg;
    f->nparts = nparts;
    f->part_nnz = part_nnz;
    return TF_OK;
}

/* Rows to clear among segments [s0, s1) -- the empty rows before each,
 * from `next`, the row of each that a partition boundary without a head
 * cuts, and the empty rows after the last up to `end` -- written to r
 * when r is not NULL; returns how many. Partitions are walked from the
 * first whose segment is s0 or later (p >= 1). */
static uint64_t rows_to_clear(const tf_fcoo *f, uint64_t s0, uint64_t s1, uint64_t next, uint64_t end, uint32_t *r)
{
    uint64_t k = 0, lo = 1, hi = f->nparts; /* p: first partition >= 1 with part_seg[p] >= s0 */
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (f->part_seg[mid] < s0) lo = mid + 1;
        else hi = mid;
    }
    uint64_t p = lo;
    for (uint64_t sg = s0; sg < s1; ++sg) {
        const uint64_t row = f->seg_row[sg];
        if (r) while (next < row) r[k++] = (uint32_t)next++; /* empty rows before it */
        else k += row - next;
        /* partitions starting inside this segment without a head: it continues */
        int crosses = 0;
        while (p < f->nparts && f->part_seg[p] <= sg) {
            if (f->part_seg[p] == sg && !((f->start[p >> 5] >> (p & 31)) & 1u)) crosses = 1;
            ++p;
        }
        if (crosses) {
            if (r) r[k] = (uint32_t)row;
            ++k;
        }
        next = row + 1;
    }
    if (r) while (next < end) r[k++] = (uint32_t)next++;
    else k += end > next ? end - next : 0;
    return k;
}

tf_status tf_fcoo_zero_rows(const tf_fcoo *f, uint64_t max_rows, uint32_t **rows, uint64_t *n)
{
    *rows = NULL;
    *n = 0;
    const uint64_t len = f->dims[f->mode];
    if (len - f->nseg > max_rows) { /* the empty rows alone are too many */
        *n = len - f->nseg;
        return TF_OK;
    }
    /* at most: the empty rows plus one row per partition boundary */
    const uint64_t cap = len - f->nseg + f->nparts;
    if (cap == 0) return TF_OK;
    /* C chunks of the segments, counted then filled in parallel; chunk c
     * starts at its first segment's row (chunk 0 at row 0) and ends where
     * the next one starts (the last at len) */
    int C = f->nseg + f->nparts < (1u << 16) ? 1 : tf_default_threads();
    if ((uint64_t)C > f->nseg) C = f->nseg ? (int)f->nseg : 1;
    uint64_t *cnt = NULL;
    TF_TRY(TF_ALLOC(cnt, (uint64_t)C + 1, "F-COO rows to clear (counts)"));
#define CHUNK_SEG(c) (f->nseg * (uint64_t)(c) / (uint64_t)C)
#define CHUNK_ROW(c) ((c) == 0 ? 0 : (c) == C ? len : (uint64_t)f->seg_row[CHUNK_SEG(c)])
#pragma omp parallel for num_threads(C) schedule(static, 1)
    for (int c = 0; c < C; ++c)
        cnt[c + 1] = rows_to_clear(f, CHUNK_SEG(c), CHUNK_SEG(c + 1), CHUNK_ROW(c), CHUNK_ROW(c + 1), NULL);
    cnt[0] = 0;
    for (int c = 0; c < C; ++c) cnt[c + 1] += cnt[c];
    const uint64_t k = cnt[C];
    uint32_t *r = NULL;
    tf_status s = TF_OK;
    if (k > 0 && k <= max_rows && (s = TF_ALLOC(r, k, "F-COO rows to clear")) == TF_OK) {
#pragma omp parallel for num_threads(C) schedule(static, 1)
        for (int c = 0; c < C; ++c)
            rows_to_clear(f, CHUNK_SEG(c), CHUNK_SEG(c + 1), CHUNK_ROW(c), CHUNK_ROW(c + 1), r + cnt[c]);
    }
#undef CHUNK_SEG
#undef CHUNK_ROW
    tf_free(cnt);
    *rows = r;
    *n = k;
    return s;
}

static tf_status check_args(const tf_tensor *X, uint32_t mode, uint32_t part_nnz)
{
    if (mode >= X->order)
        return tf_fail(TF_ERR_ARG, "F-COO: mode %u is outside 1..%u", mode + 1, X->order);
    if (part_nnz < 32 || part_nnz % 32)
        return tf_fail(TF_ERR_ARG, "F-COO: partition size %u is not a positive multiple of 32",
                       part_nnz);
    return TF_OK;
}

static void set_shape(const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *f)
{
    f->order = X->order;
    f->mode = mode;
    f->nnz = X->nnz;
    f->part_nnz = part_nnz;
    memcpy(f->dims, X->dims, sizeof f->dims);
}

tf_status tf_fcoo_build(const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *out)
{
    memset(out, 0, sizeof *out);
    TF_TRY(check_args(X, mode, part_nnz));
    set_shape(X, mode, part_nnz, out);
    tf_status s = build(X, mode, out, 0);
    if (s != TF_OK) tf_fcoo_free(out);
    return s;
}

tf_status tf_fcoo_rebuild(const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *f)
{
    tf_status s = check_args(X, mode, part_nnz);
    if (s != TF_OK) {
        tf_fcoo_free(f);
        return s;
    }
    if (f->order != X->order || f->nnz != X->nnz) { /* nothing to reuse */
        tf_fcoo_free(f);
    } else { /* the per-non-zero arrays stay; what depends on the mode goes */
        tf_free(f->start);
        tf_free(f->part_seg);
        tf_free(f->seg_row);
        f->start = f->part_seg = f->seg_row = NULL;
        f->nseg = f->nparts = 0;
    }
    set_shape(X, mode, part_nnz, f);
    s = build(X, mode, f, 1);
    if (s != TF_OK) tf_fcoo_free(f);
    return s;
}
