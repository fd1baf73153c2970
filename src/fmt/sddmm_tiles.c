/* SPDX-License-Identifier: BSD-3-Clause */
/* Column panels and thread-block groups for the GPU SDDMM (see the header). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "fmt/sddmm_tiles.h"

void tf_sddmm_tiles_free(tf_sddmm_tiles *t)
{
    if (!t) return;
    tf_free(t->group_nnz);
    tf_free(t->group_rows);
    tf_free(t->group_col0);
    tf_free(t->rows);
    tf_free(t->rloc);
    tf_free(t->col);
    tf_free(t->pos);
    tf_free(t->vals);
    memset(t, 0, sizeof *t);
}

uint32_t tf_sddmm_model_tile_j(const tf_csr *S, uint64_t K, size_t value_bytes, uint64_t l2_bytes)
{
    const double cells = (double)S->rows * (double)S->cols;
    const double rho = cells > 0 ? (double)S->nnz / cells : 1.0;
    const double l2_elems = (double)l2_bytes / (double)value_bytes;
    double tj = sqrt(l2_elems / (3.0 * (rho > 0 ? rho : 1e-300)));
    const double cap = 0.75 * (double)l2_bytes / ((double)(K ? K : 1) * (double)value_bytes);
    if (tj > cap) tj = cap;
    if (tj > (double)S->cols) tj = (double)S->cols;
    uint64_t t = (uint64_t)tj;
    t = (t + 31) / 32 * 32;
    if (t < 32) t = 32;
    if (t > UINT32_MAX) t = UINT32_MAX;
    return (uint32_t)t;
}

/* One part of the walk (a range of panels): its groups and active rows in
 * growable arrays of its own (t), the entries' rloc written in place. */
typedef struct builder {
    tf_sddmm_tiles *t;
    uint64_t gcap, rcap;
    uint64_t ne, ng, nr;
    uint32_t rows_in_group, nnz_in_group;
} builder;

static tf_status open_group(builder *b, uint32_t col0)
{
    tf_sddmm_tiles *t = b->t;
    if (b->ng + 2 > b->gcap) {
        b->gcap = b->gcap * 2 + 16;
        TF_TRY(TF_REALLOC(t->group_nnz, b->gcap, "SDDMM group offsets"));
        TF_TRY(TF_REALLOC(t->group_rows, b->gcap, "SDDMM group rows"));
        TF_TRY(TF_REALLOC(t->group_col0, b->gcap, "SDDMM group columns"));
    }
    t->group_nnz[b->ng] = (uint32_t)b->ne;
    t->group_rows[b->ng] = (uint32_t)b->nr;
    t->group_col0[b->ng] = col0;
    ++b->ng;
    b->rows_in_group = b->nnz_in_group = 0;
    return TF_OK;
}

static tf_status add_row(builder *b, uint32_t row)
{
    if (b->nr + 1 > b->rcap) {
        b->rcap = b->rcap * 2 + 64;
        TF_TRY(TF_REALLOC(b->t->rows, b->rcap, "SDDMM active rows"));
    }
    b->t->rows[b->nr++] = row;
    ++b->rows_in_group;
    return TF_OK;
}

/* First item of part t of T over n items with offsets off[0..n] (rows with
 * rowptr, panels with their starts): the first i with off[i] >= about
 * off[n] t / T, so the parts hold about equal shares; part T starts at n. */
static uint64_t part_start(const uint64_t *off, uint64_t n, int t, int T)
{
    if (t == T) return n;
    const uint64_t want = (uint64_t)((double)off[n] * t / T);
    uint64_t lo = 0, hi = n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (off[mid] < want) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Cuts panels [p0, p1) into groups (entries from start[p0] on, their rows
 * in erow), appending to b's arrays and writing rloc. A group never spans
 * two panels, so parts of the walk over disjoint panel ranges give, put
 * together in order, what one walk over all gives. */
static tf_status walk_panels(builder *b, const uint64_t *start, const uint32_t *erow, uint16_t *rloc,
                             uint64_t p0, uint64_t p1, uint32_t tile_j, uint32_t max_rows, uint32_t max_nnz)
{
    b->ne = start[p0];
    for (uint64_t p = p0; p < p1; ++p) {
        int open = 0;
        uint64_t prev_row = UINT64_MAX;
        for (const uint64_t end = start[p + 1]; b->ne < end; ++b->ne) {
            const uint64_t e = b->ne;
            const uint32_t row = erow[e];
            int row_added = row == prev_row; /* a new row of the panel is not in the group yet */
            if (!open || b->nnz_in_group == max_nnz || (!row_added && b->rows_in_group == max_rows)) {
                TF_TRY(open_group(b, (uint32_t)(p * tile_j)));
                open = 1;
                row_added = 0;
            }
            if (!row_added) TF_TRY(add_row(b, row));
            prev_row = row;
            rloc[e] = (uint16_t)(b->rows_in_group - 1);
            ++b->nnz_in_group;
        }
    }
    return TF_OK;
}

/* The walk on W threads over panel ranges of about equal non-zeros, then
 * the parts' groups and rows put together in order (group_rows shifted by
 * the rows of the parts before). */
static tf_status walk(tf_sddmm_tiles *t, const uint64_t *start, uint64_t npanels, const uint32_t *erow, int W)
{
    tf_sddmm_tiles *part = NULL;
    builder *bs = NULL;
    tf_status s = TF_CALLOC(part, (uint64_t)W, "SDDMM walk parts");
    if (s == TF_OK) s = TF_CALLOC(bs, (uint64_t)W, "SDDMM walk parts");
    if (s != TF_OK) goto done;
    tf_status ps[64];
#pragma omp parallel for num_threads(W) schedule(static, 1)
    for (int w = 0; w < W; ++w) {
        bs[w].t = &part[w];
        ps[w] = walk_panels(&bs[w], start, erow, t->rloc, part_start(start, npanels, w, W),
                            part_start(start, npanels, w + 1, W), t->tile_j, t->max_rows, t->max_nnz);
    }
    uint64_t ng = 0, nr = 0;
    for (int w = 0; w < W; ++w) {
        if (ps[w] != TF_OK && s == TF_OK) /* said again here: messages are per thread */
            s = tf_fail(ps[w], "SDDMM tiles: out of host memory for the groups of walk part %d of %d", w + 1, W);
        ng += bs[w].ng;
        nr += bs[w].nr;
    }
    if (s != TF_OK) goto done;
    /* + 1: the end offsets; at least one group's slots, so the arrays are never NULL */
    s = TF_ALLOC(t->group_nnz, ng + 2, "SDDMM group offsets");
    if (s == TF_OK) s = TF_ALLOC(t->group_rows, ng + 2, "SDDMM group rows");
    if (s == TF_OK) s = TF_ALLOC(t->group_col0, ng + 2, "SDDMM group columns");
    if (s == TF_OK) s = TF_ALLOC(t->rows, nr + 1, "SDDMM active rows");
    if (s != TF_OK) goto done;
    t->group_col0[0] = 0;
    uint64_t g0 = 0, r0 = 0;
    for (int w = 0; w < W; ++w) {
        const builder *b = &bs[w];
        if (b->ng) {
            memcpy(t->group_nnz + g0, part[w].group_nnz, b->ng * sizeof *t->group_nnz);
            memcpy(t->group_col0 + g0, part[w].group_col0, b->ng * sizeof *t->group_col0);
            for (uint64_t g = 0; g < b->ng; ++g) t->group_rows[g0 + g] = (uint32_t)(r0 + part[w].group_rows[g]);
        }
        if (b->nr) memcpy(t->rows + r0, part[w].rows, b->nr * sizeof *t->rows);
        g0 += b->ng;
        r0 += b->nr;
    }
    t->ngroups = ng;
    t->nrows = nr;
    t->group_nnz[ng] = (uint32_t)t->nnz;
    t->group_rows[ng] = (uint32_t)nr;
done:
    for (int w = 0; part && w < W; ++w) tf_sddmm_tiles_free(&part[w]);
    tf_free(part);
    tf_free(bs);
    return s;
}

/* Two passes over the non-zeros, O(nnz + panels): a counting sort by panel
 * (stable: chunks of whole rows in order, so each panel holds its non-zeros
 * row by row, in column order within a row; the chunks count and scatter on
 * threads) writes every entry's CSR position, column, value and row; then a
 * walk over the rows in that order cuts the groups (on threads over ranges
 * of panels: a group never spans two).
 * (Scanning every row once per panel instead cost panels x rows: an 8M x 8M
 * matrix in SM-SM's 450-column panels took hours.) */
tf_status tf_sddmm_tiles_build(const tf_csr *S, uint32_t tile_j, uint32_t max_rows, uint32_t max_nnz,
                               tf_sddmm_tiles *t)
{
    memset(t, 0, sizeof *t);
    if (S->nnz >= UINT32_MAX)
        return tf_fail(TF_ERR_RANGE, "GPU SDDMM handles up to 2^32 - 2 non-zeros, S has %llu (use the CPU backend)",
                       (unsigned long long)S->nnz);
    if (tile_j == 0 || max_rows == 0 || max_rows > 65535 || max_nnz == 0)
        return tf_fail(TF_ERR_ARG, "SDDMM tiles: tile_j %u, max_rows %u (1..65535), max_nnz %u must be positive",
                       tile_j, max_rows, max_nnz);
    if (S->rows > UINT32_MAX)
        return tf_fail(TF_ERR_RANGE, "SDDMM tiles: %llu rows exceed 32-bit row numbers", (unsigned long long)S->rows);
    t->tile_j = tile_j;
    t->max_rows = max_rows;
    t->max_nnz = max_nnz;
    t->nnz = S->nnz;
    const uint64_t npanels = S->cols ? (S->cols + tile_j - 1) / tile_j : 1;
    /* threads: one per ~1M non-zeros, and their counts within 8M words */
    int T = tf_resolve_threads(0);
    if ((uint64_t)T > S->nnz / (1u << 20) + 1) T = (int)(S->nnz / (1u << 20) + 1);
    if ((uint64_t)T * npanels > (1u << 23)) T = (int)((1u << 23) / npanels > 1 ? (1u << 23) / npanels : 1);
    const uint64_t stride = (npanels + 7) / 8 * 8; /* a chunk's counters on cache lines of their own */
    uint64_t *hist = NULL, *start = NULL, *rlo = NULL; /* counts, then slots; panel starts; chunk rows */
    uint32_t *erow = NULL;                             /* each entry's row, in tile order */
    tf_status s = TF_CALLOC(hist, (uint64_t)T * stride, "SDDMM panel counts");
    if (s == TF_OK) s = TF_ALLOC(start, npanels + 1, "SDDMM panel offsets");
    if (s == TF_OK) s = TF_ALLOC(rlo, (uint64_t)T + 1, "SDDMM row chunks");
    if (s == TF_OK) s = TF_ALLOC(t->rloc, S->nnz + 1, "SDDMM local rows");
    if (s == TF_OK) s = TF_ALLOC(t->col, S->nnz + 1, "SDDMM columns");
    if (s == TF_OK) s = TF_ALLOC(t->pos, S->nnz + 1, "SDDMM positions"); /* < 2^32: checked above */
    if (s == TF_OK) s = TF_ALLOC(t->vals, S->nnz + 1, "SDDMM values in tile order");
    if (s == TF_OK) s = TF_ALLOC(erow, S->nnz + 1, "SDDMM rows of the entries");
    if (s != TF_OK) goto done;
    for (int c = 0; c <= T; ++c) rlo[c] = part_start(S->rowptr, S->rows, c, T);
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int c = 0; c < T; ++c) {
        uint64_t *h = hist + (uint64_t)c * stride;
        for (uint64_t k = S->rowptr[rlo[c]]; k < S->rowptr[rlo[c + 1]]; ++k) ++h[S->colind[k] / tile_j];
    }
    start[npanels] = tf_bucket_offsets_strided(hist, stride, start, npanels, T); /* a stable scatter */
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int c = 0; c < T; ++c) {
        uint64_t *next = hist + (uint64_t)c * stride;
        for (uint64_t i = rlo[c]; i < rlo[c + 1]; ++i)
            for (uint64_t k = S->rowptr[i]; k < S->rowptr[i + 1]; ++k) {
                const uint64_t e = next[S->colind[k] / tile_j]++;
                t->pos[e] = (uint32_t)k;
                t->col[e] = S->colind[k];
                t->vals[e] = S->vals[k];
                erow[e] = (uint32_t)i;
            }
    }
    {
        /* walk parts: one per ~64K non-zeros, at most one per panel and thread */
        int W = tf_resolve_threads(0);
        if (W > 64) W = 64;
        if ((uint64_t)W > S->nnz / 65536 + 1) W = (int)(S->nnz / 65536 + 1);
        if ((uint64_t)W > npanels) W = (int)npanels;
        s = walk(t, start, npanels, erow, W);
    }
done:
    tf_free(hist);
    tf_free(start);
    tf_free(rlo);
    tf_free(erow);
    if (s != TF_OK) tf_sddmm_tiles_free(t);
    return s;
}
