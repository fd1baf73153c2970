/* SPDX-License-Identifier: BSD-3-Clause */
/* Fast 64-bit checksum of the binary format: four multiply-xorshift lanes
 * over 8-byte words (near memory speed), over 1 MiB blocks hashed in
 * parallel and folded in order, so the value does not depend on threads. */
#ifndef TF_IO_CHECKSUM_H
#define TF_IO_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

#define TF_CHECKSUM_BLOCK (1u << 20) /* bytes of a block */

/* Hash of p[0..n) chained onto `seed` (the previous section's hash). */
uint64_t tf_checksum(const void *p, uint64_t n, uint64_t seed, int threads);

/* Loads bytes [off, off+n) of a section into dst; returns 0 or an errno. */
typedef int (*tf_fill_fn)(const void *ctx, uint64_t off, void *dst, uint64_t n);
/* Same hash, but each block is first loaded by fill (in parallel), so a
 * reader hashes data while it is still in cache. *err gets a fill error. */
uint64_t tf_checksum_fill(void *p, uint64_t n, uint64_t seed, int threads, tf_fill_fn fill,
                          const void *ctx, int *err);

/* The same hash in pieces, for readers that hold a section in parts (MPI
 * ranks reading a file at their offsets): a section of n bytes is blocks b
 * = 0, 1, ... of TF_CHECKSUM_BLOCK bytes (the last shorter), and
 *   h = tf_checksum_start(seed, n); for each b in order:
 *   h = tf_checksum_fold(h, tf_checksum_block(block b, its bytes, b))
 * equals tf_checksum(section, n, seed). */
uint64_t tf_checksum_start(uint64_t seed, uint64_t n);
uint64_t tf_checksum_block(const void *p, uint64_t n, uint64_t b);
uint64_t tf_checksum_fold(uint64_t h, uint64_t block_hash);
#endif
