/* SPDX-License-Identifier: BSD-3-Clause */
/* BLCO (blocked linearised coordinates, Nguyen et al.; thesis ch. 4): one
 * mode-agnostic copy of the tensor.
 *
 * 1. ALTO-style linearisation: the bits of all mode indices are interleaved
 *    level by level from the least significant bit (level l takes bit l of
 *    every mode that has more than l bits, modes in order), so the line
 *    length is the sum of the per-mode bit counts. Non-zeros are sorted by
 *    this ALTO index, which keeps them close in every mode at once.
 * 2. Blocking: the ALTO positions >= 64 are the top bits of the longest
 *    modes; they form the block key, and a block is a run of non-zeros with
 *    one key, split further so no block exceeds max_block_nnz.
 * 3. Re-encoding: inside a block the remaining (<= 64) bits are stored as
 *    contiguous per-mode fields, so the GPU decodes mode m with one shift
 *    and one mask:  idx_m = ((lin >> field_shift[m]) & mask) | block_base[m].
 *
 * Built on the host (CPU-testable); src/gpu/engine/blco.cu uploads it. */
#ifndef TF_FMT_BLCO_H
#define TF_FMT_BLCO_H
#include <stdint.h>

#include "tenfold.h"

#define TF_BLCO_DEFAULT_MAX_BLOCK (1ULL << 27)

/* Bit layout derived from the shape alone. */
typedef struct tf_blco_layout {
    uint32_t order;
    uint32_t alto_bits;                   /* sum of mode_bits                  */
    uint32_t mode_bits[TF_MAX_ORDER];     /* bits of mode m: ceil(log2 dims[m]) */
    uint32_t field_bits[TF_MAX_ORDER];    /* low bits of mode m kept in lin    */
    uint32_t field_shift[TF_MAX_ORDER];   /* where the field starts in lin      */
    uint8_t alto_pos[TF_MAX_ORDER][32];   /* ALTO position of bit l of mode m   */
} tf_blco_layout;

typedef struct tf_blco {
    tf_blco_layout lay;
    uint64_t nnz;
    uint64_t dims[TF_MAX_ORDER];
    uint64_t max_block_nnz;
    uint64_t nblocks;
    uint64_t *block_start;   /* nblocks + 1 offsets into lin/vals                   */
    uint32_t *block_base;    /* nblocks x order: upper bits of mode m, already shifted */
    uint64_t *lin;           /* nnz re-encoded indices, in ALTO order               */
    double *vals;            /* nnz                                                  */
} tf_blco;

void tf_blco_layout_init(uint32_t order, const uint64_t *dims, tf_blco_layout *lay);
/* max_block_nnz 0 -> TF_BLCO_DEFAULT_MAX_BLOCK. */
tf_status tf_blco_build(const tf_tensor *X, uint64_t max_block_nnz, tf_blco *out);
void tf_blco_free(tf_blco *b);
/* Bytes of the arrays with values of `value_bytes` each. */
uint64_t tf_blco_bytes(const tf_blco *b, uint32_t value_bytes);
/* Upper bound from the shape alone, for the default block size (every
 * non-zero its own block when the line needs more than 64 bits). */
uint64_t tf_blco_bytes_estimate(const tf_tensor *X, uint32_t value_bytes);

/* Batching map for one launch over all blocks: tile t covers non-zeros
 * [t*tile_nnz, min((t+1)*tile_nnz, nnz)); *tile_block (ntiles entries) gets
 * the block holding the tile's first non-zero. */
tf_status tf_blco_tiles(const tf_blco *b, uint32_t tile_nnz, uint64_t *ntiles,
                        uint64_t **tile_block);

/* The mask of a field of `bits` bits (bits may be 0 or 64). */
static inline uint64_t tf_blco_mask(uint32_t bits)
{
    return bits ? ~0ULL >> (64 - bits) : 0;
}
/* Index of mode m of non-zero k, which lies in block blk. */
static inline uint32_t tf_blco_decode(const tf_blco *b, uint64_t blk, uint64_t k, uint32_t m)
{
    uint32_t bits = b->lay.field_bits[m];
    uint64_t f = bits ? (b->lin[k] >> b->lay.field_shift[m]) & tf_blco_mask(bits) : 0;
    return (uint32_t)f | b->block_base[blk * b->lay.order + m];
}
#endif
