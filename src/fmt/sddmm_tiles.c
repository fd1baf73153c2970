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

/* Growable arrays of the builder: entries (rloc, col, pos) and groups. */
typedef struct builder {
    tf_sddmm_tiles *t;
    uint64_t ecap, gcap, rcap;
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

/* First row of chunk t of T (chunks of about nnz / T non-zeros, whole rows). */
static uint64_t chunk_row(const tf_csr *S, int t, int T)
{
    const uint64_t want = (uint64_t)((double)S->nnz * t / T);
    uint64_t lo = 0, hi = S->rows; /* the first row i with rowptr[i] >= want */
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (S->rowptr[mid] < want) lo = mid + 1;
        else hi = mid;
    }
    return t == T ? S->rows : lo;
}

/* Two passes over the non-zeros, O(nnz + panels): a counting sort by panel
 * (stable: chunks of whole rows in order, so each panel holds its non-zeros
 * row by row, in column order within a row; the chunks count and scatter on
 * threads) writes every entry's CSR position, column, value and row; then one walk
 * over the rows in that order cuts the groups.
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
    if (s == TF_OK) s = TF_ALLOC(t->pos, S->nnz + 1, "SDDMM positions");
    if (s == TF_OK) s = TF_ALLOC(t->vals, S->nnz + 1, "SDDMM values in tile order");
    if (s == TF_OK) s = TF_ALLOC(erow, S->nnz + 1, "SDDMM rows of the entries");
    if (s != TF_OK) goto done;
    for (int c = 0; c <= T; ++c) rlo[c] = chunk_row(S, c, T);
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
                t->pos[e] = k;
                t->col[e] = S->colind[k];
                t->vals[e] = S->vals[k];
                erow[e] = (uint32_t)i;
            }
    }
    builder b = {.t = t}; /* b.ne: the entry being placed (open_group reads it) */
    for (uint64_t p = 0; p < npanels && s == TF_OK; ++p) {
        int open = 0;
        uint64_t prev_row = UINT64_MAX;
        for (const uint64_t end = start[p + 1]; b.ne < end; ++b.ne) {
            const uint64_t e = b.ne;
            const uint32_t row = erow[e];
            int row_added = row == prev_row; /* a new row of the panel is not in the group yet */
            if (!open || b.nnz_in_group == max_nnz || (!row_added && b.rows_in_group == max_rows)) {
                s = open_group(&b, (uint32_t)(p * tile_j));
                open = 1;
                row_added = 0;
            }
            if (s == TF_OK && !row_added) s = add_row(&b, row);
            if (s != TF_OK) break;
            prev_row = row;
            t->rloc[e] = (uint16_t)(b.rows_in_group - 1);
            ++b.nnz_in_group;
        }
    }
    if (s == TF_OK && b.ng == 0) s = open_group(&b, 0); /* keeps the arrays non-NULL */
    if (s != TF_OK) goto done;
    if (t->nnz == 0) b.ng = 0;
    t->ngroups = b.ng;
    t->nrows = b.nr;
    t->group_nnz[b.ng] = (uint32_t)b.ne;
    t->group_rows[b.ng] = (uint32_t)b.nr;
done:
    tf_free(hist);
    tf_free(start);
    tf_free(rlo);
    tf_free(erow);
    if (s != TF_OK) tf_sddmm_tiles_free(t);
    return s;
}
