/* SPDX-License-Identifier: BSD-3-Clause */
/* BLCO builder: ALTO keys (up to 4 x 64 bits), a stable LSD sort over the
 * key words, blocking by the bits above 64, and the shift/mask re-encoding. */
#include "fmt/blco.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/radix.h"

static uint32_t bits_for(uint64_t n) /* bits to represent 0..n-1 */
{
    uint32_t b = 0;
    while (b < 64 && ((n - 1) >> b)) ++b;
    return b;
}

void tf_blco_layout_init(uint32_t order, const uint64_t *dims, tf_blco_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    if (order > 8) order = 8; /* positions are 8-bit: at most 8 modes x 32 bits */
    lay->order = order;
    uint32_t maxb = 0;
    for (uint32_t m = 0; m < order; ++m) {
        lay->mode_bits[m] = bits_for(dims[m]);
        if (lay->mode_bits[m] > maxb) maxb = lay->mode_bits[m];
    }
    uint32_t pos = 0;
    for (uint32_t l = 0; l < maxb; ++l)
        for (uint32_t m = 0; m < order; ++m)
            if (l < lay->mode_bits[m]) {
                lay->alto_pos[m][l] = (uint8_t)pos;
                if (pos < 64) lay->field_bits[m]++;
                ++pos;
            }
    lay->alto_bits = pos;
    uint32_t shift = 0;
    for (uint32_t m = 0; m < order; ++m) {
        /* An empty field at the very top would sit at 64: keep the shift legal. */
        lay->field_shift[m] = shift < 64 ? shift : 63;
        shift += lay->field_bits[m];
    }
}

void tf_blco_free(tf_blco *b)
{
    if (!b) return;
    tf_free(b->block_start);
    tf_free(b->block_base);
    tf_free(b->lin);
    tf_free(b->vals);
    memset(b, 0, sizeof *b);
}

uint64_t tf_blco_bytes(const tf_blco *b, uint32_t value_bytes)
{
    return b->nnz * (sizeof(uint64_t) + value_bytes) + (b->nblocks + 1) * sizeof(uint64_t) +
           b->nblocks * b->lay.order * sizeof(uint32_t);
}

uint64_t tf_blco_bytes_estimate(const tf_tensor *X, uint32_t value_bytes)
{
    if (X->order > 8) return UINT64_MAX;
    tf_blco_layout lay;
    tf_blco_layout_init(X->order, X->dims, &lay);
    uint64_t nblocks = lay.alto_bits > 64 ? X->nnz : 1 + X->nnz / TF_BLCO_DEFAULT_MAX_BLOCK;
    return X->nnz * (sizeof(uint64_t) + value_bytes) + (nblocks + 1) * sizeof(uint64_t) +
           nblocks * X->order * sizeof(uint32_t);
}

/* spread[m][byte][v]: the contribution of value v in byte `byte` of the
 * index of mode m to ALTO key word w. */
typedef uint64_t spread_table[TF_MAX_ORDER][4][256];

static void fill_spread(const tf_blco_layout *lay, uint32_t w, spread_table tab)
{
    for (uint32_t m = 0; m < lay->order; ++m)
        for (uint32_t byte = 0; byte < 4; ++byte)
            for (uint32_t v = 0; v < 256; ++v) {
                uint64_t word = 0;
                for (uint32_t bit = 0; bit < 8; ++bit) {
                    uint32_t l = byte * 8 + bit;
                    if (!((v >> bit) & 1u) || l >= lay->mode_bits[m]) continue;
                    uint32_t p = lay->alto_pos[m][l];
                    if (p / 64 == w) word |= 1ULL << (p % 64);
                }
                tab[m][byte][v] = word;
            }
}

/* *perm: the non-zeros of X in ALTO order (stable): LSD over the key's
 * 64-bit words, each sorted with the permutation so far (32 bytes per
 * non-zero of scratch). */
static tf_status alto_order(const tf_tensor *X, const tf_blco_layout *lay, uint64_t **perm_out)
{
    const uint64_t n = X->nnz;
    const int64_t nn = (int64_t)n;
    uint64_t *perm = NULL, *keys = NULL, *kbuf = NULL, *pbuf = NULL;
    spread_table *tab = NULL;
    *perm_out = NULL;
    tf_status s = TF_ALLOC(perm, n, "BLCO permutation");
    if (s == TF_OK) s = TF_ALLOC(keys, n, "BLCO sort keys");
    if (s == TF_OK) s = TF_ALLOC(kbuf, n, "BLCO sort keys");
    if (s == TF_OK) s = TF_ALLOC(pbuf, n, "BLCO permutation");
    if (s == TF_OK) s = TF_ALLOC(tab, 1, "BLCO spread table");
    if (s != TF_OK) goto done;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
    for (int64_t k = 0; k < nn; ++k) perm[k] = (uint64_t)k;
    const uint32_t nwords = (lay->alto_bits + 63) / 64;
    for (uint32_t w = 0; w < nwords; ++w) { /* least significant word first */
        uint32_t wbits = lay->alto_bits - 64 * w < 64 ? lay->alto_bits - 64 * w : 64;
        fill_spread(lay, w, *tab);
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
        for (int64_t k = 0; k < nn; ++k) {
            uint64_t key = 0, p = perm[k];
            for (uint32_t m = 0; m < X->order; ++m) {
                uint32_t i = X->ind[m][p];
                key |= (*tab)[m][0][i & 255] | (*tab)[m][1][(i >> 8) & 255] |
                       (*tab)[m][2][(i >> 16) & 255] | (*tab)[m][3][i >> 24];
            }
            keys[k] = key;
        }
        if ((s = tf_radix_sort_pairs(&keys, &perm, &kbuf, &pbuf, n, (int)wbits)) != TF_OK) goto done;
    }
done:
    tf_free(keys); tf_free(kbuf); tf_free(pbuf); tf_free(tab);
    if (s != TF_OK) { tf_free(perm); perm = NULL; }
    *perm_out = perm;
    return s;
}

/* Upper (block-key) bits of mode m. */
static uint32_t upper(const tf_blco_layout *lay, uint32_t m, uint32_t i)
{
    return (uint32_t)((uint64_t)i >> lay->field_bits[m]);
}

/* Counts blocks: a new block starts where the upper bits change or the
 * current block is full. */
static uint64_t count_blocks(const tf_tensor *X, const tf_blco_layout *lay, const uint64_t *perm,
                             uint64_t maxb, uint64_t *block_start)
{
    uint64_t nb = 0, run = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        int fresh = k == 0 || run == maxb;
        if (!fresh && lay->alto_bits > 64)
            for (uint32_t m = 0; m < X->order; ++m)
                if (upper(lay, m, X->ind[m][perm[k]]) != upper(lay, m, X->ind[m][perm[k - 1]])) {
                    fresh = 1;
                    break;
                }
        if (fresh) {
            if (block_start) block_start[nb] = k;
            ++nb;
            run = 0;
        }
        ++run;
    }
    if (block_start) block_start[nb] = X->nnz;
    return nb;
}

static tf_status build(const tf_tensor *X, tf_blco *b)
{
    const tf_blco_layout *lay = &b->lay;
    const uint32_t N = X->order;
    uint64_t *perm = NULL;
    TF_TRY(alto_order(X, lay, &perm));
    tf_status s = TF_OK;
    b->nblocks = count_blocks(X, lay, perm, b->max_block_nnz, NULL);
    s = TF_ALLOC(b->block_start, b->nblocks + 1, "BLCO block offsets");
    if (s == TF_OK) s = TF_ALLOC(b->block_base, b->nblocks * N, "BLCO block bases");
    if (s == TF_OK) s = TF_ALLOC(b->lin, X->nnz, "BLCO indices");
    if (s == TF_OK) s = TF_ALLOC(b->vals, X->nnz, "BLCO values");
    if (s != TF_OK) { tf_free(perm); return s; }
    count_blocks(X, lay, perm, b->max_block_nnz, b->block_start);
    for (uint64_t blk = 0; blk < b->nblocks; ++blk) {
        uint64_t p = perm[b->block_start[blk]];
        for (uint32_t m = 0; m < N; ++m)
            b->block_base[blk * N + m] =
                lay->field_bits[m] >= 32
                    ? 0
                    : upper(lay, m, X->ind[m][p]) << lay->field_bits[m];
    }
    const int64_t nn = (int64_t)X->nnz;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
    for (int64_t k = 0; k < nn; ++k) {
        uint64_t p = perm[k], lin = 0;
        for (uint32_t m = 0; m < N; ++m) {
            uint64_t field = (uint64_t)X->ind[m][p] & tf_blco_mask(lay->field_bits[m]);
            if (lay->field_bits[m]) lin |= field << lay->field_shift[m];
        }
        b->lin[k] = lin;
        b->vals[k] = X->vals[p];
    }
    tf_free(perm);
    return TF_OK;
}

tf_status tf_blco_build(const tf_tensor *X, uint64_t max_block_nnz, tf_blco *out)
{
    memset(out, 0, sizeof *out);
    if (X->order > 8)
        return tf_fail(TF_ERR_UNAVAILABLE, "BLCO supports tensors of order 2..8, this one has order %u",
                       X->order);
    tf_blco_layout_init(X->order, X->dims, &out->lay);
    out->nnz = X->nnz;
    memcpy(out->dims, X->dims, sizeof out->dims);
    out->max_block_nnz = max_block_nnz ? max_block_nnz : TF_BLCO_DEFAULT_MAX_BLOCK;
    tf_status s = build(X, out);
    if (s != TF_OK) tf_blco_free(out);
    return s;
}

tf_status tf_blco_tiles(const tf_blco *b, uint32_t tile_nnz, uint64_t *ntiles, uint64_t **tile_block)
{
    *tile_block = NULL;
    *ntiles = 0;
    if (tile_nnz == 0) return tf_fail(TF_ERR_ARG, "BLCO: tile size must be positive");
    uint64_t nt = (b->nnz + tile_nnz - 1) / tile_nnz;
    TF_TRY(TF_ALLOC(*tile_block, nt, "BLCO tile map"));
    uint64_t blk = 0;
    for (uint64_t t = 0; t < nt; ++t) {
        uint64_t first = t * tile_nnz;
        while (b->block_start[blk + 1] <= first) ++blk;
        (*tile_block)[t] = blk;
    }
    *ntiles = nt;
    return TF_OK;
}
