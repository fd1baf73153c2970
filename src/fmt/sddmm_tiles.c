/* SPDX-License-Identifier: BSD-3-Clause */
/* Column panels and thread-block groups for the GPU SDDMM (see the header). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
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
    t->tile_j = tile_j;
    t->max_rows = max_rows;
    t->max_nnz = max_nnz;
    t->nnz = S->nnz;
    uint64_t *cur = NULL; /* per row: next CSR entry not yet placed (panels go left to right) */
    tf_status s = TF_ALLOC(cur, S->rows + 1, "SDDMM row cursors");
    if (s == TF_OK) s = TF_ALLOC(t->rloc, S->nnz + 1, "SDDMM local rows");
    if (s == TF_OK) s = TF_ALLOC(t->col, S->nnz + 1, "SDDMM columns");
    if (s == TF_OK) s = TF_ALLOC(t->pos, S->nnz + 1, "SDDMM positions");
    if (s != TF_OK) goto done;
    for (uint64_t i = 0; i < S->rows; ++i) cur[i] = S->rowptr[i];
    builder b = {.t = t};
    for (uint64_t c0 = 0; c0 < S->cols && s == TF_OK; c0 += tile_j) {
        const uint64_t c1 = c0 + tile_j;
        int open = 0;
        for (uint64_t i = 0; i < S->rows && s == TF_OK; ++i) {
            uint64_t k = cur[i];
            const uint64_t end = S->rowptr[i + 1];
            if (k >= end || S->colind[k] >= c1) continue;
            int row_added = 0;
            for (; k < end && S->colind[k] < c1 && s == TF_OK; ++k) {
                if (!open || b.nnz_in_group == max_nnz || (!row_added && b.rows_in_group == max_rows)) {
                    s = open_group(&b, (uint32_t)c0);
                    open = 1;
                    row_added = 0;
                }
                if (s == TF_OK && !row_added) {
                    s = add_row(&b, (uint32_t)i);
                    row_added = 1;
                }
                if (s != TF_OK) break;
                t->rloc[b.ne] = (uint16_t)(b.rows_in_group - 1);
                t->col[b.ne] = S->colind[k];
                t->pos[b.ne] = k;
                ++b.ne;
                ++b.nnz_in_group;
            }
            cur[i] = k;
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
    tf_free(cur);
    if (s != TF_OK) tf_sddmm_tiles_free(t);
    return s;
}
