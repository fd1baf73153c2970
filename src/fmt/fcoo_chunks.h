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
 * so a decoder may always read two). Either index layout comes with values
 * as T or packed:
 *
 * Values in fewer bits where that is exact (TF_FCOO_PACK_VALUES): in the
 * value type T the device uses (float or double), value q is
 * TF_FCOO_VALUE(T, field q, min, 2^exp), the fields `vbits` wide and packed
 * back to back like the high parts (a spare word ends them). The code
 * comes from the values (all of them: every mode has the same), and is used
 * only where every value decodes to itself bit for bit (checked when the
 * chunks are made) and it takes fewer bits than T: counts 1..1000 take 10
 * bits in fp64 and fp32; the generator's uniform doubles (k * 2^-53) 53 in
 * fp64; values with a full significand, zeros of either sign, NaN or
 * infinities, or magnitudes more than 2^62 apart stay as T.
 *
 * The GPU unpacks a chunk into the plain layout before its kernel runs.
 * Each array is aligned to TF_FCOO_CHUNK_ALIGN bytes; plain values are in
 * the value type the device uses (4 or 8 bytes). Segment numbers in
 * part_seg stay those of the whole copy (seg_row is not chunked). Plain C,
 * built without CUDA (the decoders below also compile for the device);
 * src/gpu/engine/fcoo_stream.cu streams the chunks. */
#ifndef TF_FMT_FCOO_CHUNKS_H
#define TF_FMT_FCOO_CHUNKS_H
#include <stdint.h>

#include "fmt/fcoo.h"

#define TF_FCOO_CHUNK_ALIGN 256u

/* tf_fcoo_chunks_pack's `pack`: what may be packed (where it saves bytes) */
#define TF_FCOO_PACK_KEYS 1
#define TF_FCOO_PACK_VALUES 2

#ifdef __CUDACC__
#define TF_FCOO_HD static inline __host__ __device__
#else
#define TF_FCOO_HD static inline
#endif

/* Field q of `bits` bits (1..64) packed back to back from bit 0 of words w,
 * little-endian. Reads the field's first word and the next, and a third
 * where the field reaches into it (bits > 33): one spare word after the
 * last field's last word is enough. */
TF_FCOO_HD uint64_t tf_fcoo_field(const uint32_t *w, uint64_t q, uint32_t bits)
{
    const uint64_t at = q * bits, i = at >> 5;
    const uint32_t sh = (uint32_t)(at & 31);
    uint64_t x = ((uint64_t)w[i] | (uint64_t)w[i + 1] << 32) >> sh;
    if (sh + bits > 64) x |= (uint64_t)w[i + 2] << (64 - sh);
    return bits >= 64 ? x : x & ((1ull << bits) - 1);
}

/* A packed value field as a value of type T (float or double): exact for
 * every field of a copy whose code was accepted. */
#define TF_FCOO_VALUE(T, field, min, scale) ((T)((int64_t)(field) + (min)) * (T)(scale))

typedef struct tf_fcoo_value_code {
    uint32_t vbits; /* bits per value; 0: values stored as T        */
    int32_t exp;    /* scale 2^exp                                   */
    int64_t min;    /* the smallest value / 2^exp (an integer)       */
} tf_fcoo_value_code;

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
    tf_fcoo_value_code vcode;      /* values packed where vcode.vbits > 0   */
    uint32_t hi_bits;              /* packed: bits of a key past its low word (0..32) */
    uint32_t shift[TF_MAX_ORDER];  /* packed: where product mode j's index starts in the key */
    uint32_t bits[TF_MAX_ORDER];   /* packed: its bits                       */
    uint64_t nnz, nparts, chunk_parts, nchunks;
    uint64_t *part_off;      /* nchunks + 1: chunk c holds partitions [part_off[c], part_off[c+1]) */
    uint64_t *off;           /* nchunks + 1 byte offsets of the chunks in the copy */
    uint64_t first;          /* data holds chunks [first, nchunks) (0: all)        */
    unsigned char *data;     /* off[nchunks] - off[first] bytes                    */
    uint64_t max_bytes;      /* the largest chunk                              */
} tf_fcoo_chunks;

/* Where chunk c (first <= c < nchunks) lies in k's data. */
static inline unsigned char *tf_fcoo_chunk_data(const tf_fcoo_chunks *k, uint64_t c)
{
    return k->data + (k->off[c] - k->off[k->first]);
}

/* Layout of chunk c (c < nchunks), as stored. */
void tf_fcoo_chunk_layout_of(const tf_fcoo_chunks *k, uint64_t c, tf_fcoo_chunk_layout *lay);
/* The plain layout of a chunk of nnz non-zeros in parts partitions (what a
 * packed chunk is unpacked into); its bytes. */
uint64_t tf_fcoo_chunk_plain(uint32_t order, uint32_t value_bytes, uint64_t nnz, uint64_t parts,
                             tf_fcoo_chunk_layout *lay);
/* Packs f into chunks of chunk_parts partitions (a multiple of 32, >= 32),
 * values converted to value_bytes (4: float, 8: double); `pack` (flags
 * TF_FCOO_PACK_*): product indices packed where they fit 64 bits, values
 * packed where that is exact and saves bits; threads over the chunks. f is
 * not changed. */
tf_status tf_fcoo_chunks_pack(const tf_fcoo *f, uint64_t chunk_parts, uint32_t value_bytes, int pack,
                              tf_fcoo_chunks *out);
/* The same chunks planned before the copy exists, from its shape alone:
 * everything tf_fcoo_chunks_pack gives but the bytes (data NULL), for a
 * copy of nnz non-zeros of a tensor of lengths dims whose product modes
 * are pmodes (the other modes, ascending), partitions of part_nnz, and the
 * values' code vc (tf_fcoo_value_code_of of every value: each mode's copy
 * holds the same values; NULL or vbits 0: values as value_bytes). Only the
 * TF_FCOO_PACK_KEYS bit of `pack` counts here. So a streaming engine can
 * decide what stays on the device before any mode is sorted, and keep on
 * the host only the chunks it streams (tf_fcoo_chunks_fill_range). */
tf_status tf_fcoo_chunks_plan(uint32_t order, const uint64_t *dims, const uint32_t *pmodes, uint64_t nnz,
                              uint32_t part_nnz, uint64_t chunk_parts, uint32_t value_bytes, int pack,
                              const tf_fcoo_value_code *vc, tf_fcoo_chunks *out);
/* Chunks [c0, c1) of f (the copy k was planned for) packed into dst, which
 * holds their off[c1] - off[c0] bytes (zeroed here chunk by chunk, by the
 * thread that fills it); threads over the chunks. */
void tf_fcoo_chunks_fill_range(const tf_fcoo *f, const tf_fcoo_chunks *k, uint64_t c0, uint64_t c1,
                               unsigned char *dst);
/* The same from a piece of the copy: f's pind, vals and head hold the
 * mode's non-zeros from position `base` on (a multiple of 32, at or before
 * chunk c0's first; through chunk c1 - 1's last), its start and part_seg
 * the whole mode's partitions (fcoo_pieces.h builds a copy this way). */
void tf_fcoo_chunks_fill_range_at(const tf_fcoo *f, uint64_t base, const tf_fcoo_chunks *k, uint64_t c0, uint64_t c1,
                                  unsigned char *dst);
void tf_fcoo_chunks_free(tf_fcoo_chunks *k);
/* The value code of n values as value_bytes (4: each converted to float),
 * vbits 0 where no code is exact for all of them or saves bits. */
void tf_fcoo_value_code_of(const double *vals, uint64_t n, uint32_t value_bytes, tf_fcoo_value_code *vc);
#endif
