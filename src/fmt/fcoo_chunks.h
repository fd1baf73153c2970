/* SPDX-License-Identifier: BSD-3-Clause */
/* One mode's F-COO copy (fcoo.h) cut into chunks for streaming through a
 * GPU: a chunk is consecutive partitions (a multiple of 32, so its head and
 * start bits begin on a word; the last may hold the rest), and all its
 * arrays lie in one contiguous block of the buffer, so one copy moves it.
 * Chunks are chunk_parts partitions, the last one the rest (part_off keeps
 * the ranges, so other cuts stay possible).
 *
 * Fewer bytes on the bus: where the product modes' index bits add up to at
 * most 64 (and less than 4 bytes each), a non-zero's product indices are packed into one key (mode
 * pmodes[order-2] in the lowest bits, each earlier one above it), stored as
 * a 32-bit low word and, past 32 bits, a high part of exactly the bits
 * left (hi_bits, 1..32), packed back to back in 32-bit words:
 *
 *   packed: key low words | key high bits   | values | head | start | part_seg
 *   plain:  pind[0] .. pind[order-2]        | values | head | start | part_seg
 *
 * (the 20M-non-zero skewed tensor, dims 2M x 1M x 200k: keys of 38-41 bits,
 * 4.75-5.125 bytes instead of 8; high bits of non-zero q are bits
 * [q*hi_bits, (q+1)*hi_bits) of the high words, which end with a spare word
 * so a decoder may always read two). The GPU unpacks a chunk into the plain layout before its
 * kernel runs. Each array is aligned to TF_FCOO_CHUNK_ALIGN bytes; values
 * are in the value type the device uses (4 or 8 bytes). Segment numbers in
 * part_seg stay those of the whole copy (seg_row is not chunked). Plain C,
 * built without CUDA; src/gpu/mttkrp/fcoo_stream.cu streams the chunks. */
#ifndef TF_FMT_FCOO_CHUNKS_H
#define TF_FMT_FCOO_CHUNKS_H
#include <stdint.h>

#include "fmt/fcoo.h"

#define TF_FCOO_CHUNK_ALIGN 256u

/* Where chunk c's arrays start (bytes from the chunk's start). */
typedef struct tf_fcoo_chunk_layout {
    uint64_t nnz, parts;                     /* of this chunk                    */
    uint64_t pind[TF_MAX_ORDER];             /* plain: pind[j], j < order - 1    */
    uint64_t lo, hi;                         /* packed: key low words, high parts */
    uint64_t vals, head, start, part_seg;
    uint64_t bytes;                          /* the chunk, padding included      */
} tf_fcoo_chunk_layout;

typedef struct tf_fcoo_chunks {
    uint32_t order, value_bytes, part_nnz;
    int packed;                    /* 1: product indices packed in keys     */
    uint32_t hi_bits;              /* packed: bits of a key past its low word (0..32) */
    uint32_t shift[TF_MAX_ORDER];  /* packed: where product mode j's index starts in the key */
    uint32_t bits[TF_MAX_ORDER];   /* packed: its bits                       */
    uint64_t nnz, nparts, chunk_parts, nchunks;
    uint64_t *part_off;      /* nchunks + 1: chunk c holds partitions [part_off[c], part_off[c+1]) */
    uint64_t *off;           /* nchunks + 1 byte offsets of the chunks in data */
    unsigned char *data;     /* off[nchunks] bytes                             */
    uint64_t max_bytes;      /* the largest chunk                              */
} tf_fcoo_chunks;

/* Layout of chunk c (c < nchunks), as stored. */
void tf_fcoo_chunk_layout_of(const tf_fcoo_chunks *k, uint64_t c, tf_fcoo_chunk_layout *lay);
/* The plain layout of a chunk of nnz non-zeros in parts partitions (what a
 * packed chunk is unpacked into); its bytes. */
uint64_t tf_fcoo_chunk_plain(uint32_t order, uint32_t value_bytes, uint64_t nnz, uint64_t parts,
                             tf_fcoo_chunk_layout *lay);
/* Packs f into chunks of chunk_parts partitions (a multiple of 32, >= 32),
 * values converted to value_bytes (4: float, 8: double), product indices
 * packed where they fit 64 bits and pack != 0; threads over the chunks. f
 * is not changed. */
tf_status tf_fcoo_chunks_pack(const tf_fcoo *f, uint64_t chunk_parts, uint32_t value_bytes, int pack,
                              tf_fcoo_chunks *out);
void tf_fcoo_chunks_free(tf_fcoo_chunks *k);
#endif
