/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold binary tensor format, version 1 (all fields little-endian):
 *
 *   offset  size    field
 *   0       8       magic "TENFOLD\0"
 *   8       4       version (1)
 *   12      4       order N (2..16)
 *   16      4       index width in bytes (4)
 *   20      4       value width in bytes (8, IEEE double)
 *   24      8       nnz
 *   32      8*N     dims
 *   32+8N   8       checksum
 *   40+8N           payload: N index arrays (nnz x u32 each, 0-based, in
 *                   mode order), then nnz values (f64)
 *
 * checksum = tf_checksum chained over the header bytes before it, then
 * each index array, then the values, so a flipped bit anywhere is found.
 * Readers check every field, the exact file length, the checksum, and
 * that every index is below its dim. */
#ifndef TF_IO_BIN_FORMAT_H
#define TF_IO_BIN_FORMAT_H

#include <stdint.h>

#include "tenfold.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the tenfold binary format code assumes a little-endian host"
#endif

#define TF_BIN_MAGIC "TENFOLD"  /* plus its terminating NUL: 8 bytes */
#define TF_BIN_MAGIC_LEN 8
#define TF_BIN_VERSION 1u
#define TF_BIN_FIXED_BYTES 32u  /* header bytes before dims */
#define TF_BIN_HEADER_MAX (TF_BIN_FIXED_BYTES + 8u * TF_MAX_ORDER + 8u)

static inline uint64_t tf_bin_header_bytes(uint32_t order)
{
    return TF_BIN_FIXED_BYTES + 8ull * order + 8;
}

/* Checksum of a tensor under header bytes hdr[0 .. 32+8N). */
uint64_t tf_bin_checksum(const unsigned char *hdr, const tf_tensor *t, int threads);

tf_status tf_bin_write(const char *path, const tf_tensor *t);
#endif
