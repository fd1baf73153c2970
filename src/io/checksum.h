/* SPDX-License-Identifier: BSD-3-Clause */
/* Fast 64-bit checksum of the binary format: four multiply-xorshift lanes
 * over 8-byte words (near memory speed), over 1 MiB blocks hashed in
 * parallel and folded in order, so the value does not depend on threads. */
#ifndef TF_IO_CHECKSUM_H
#define TF_IO_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* Hash of p[0..n) chained onto `seed` (the previous section's hash). */
uint64_t tf_checksum(const void *p, uint64_t n, uint64_t seed, int threads);

/* Loads bytes [off, off+n) of a section into dst; returns 0 or an errno. */
typedef int (*tf_fill_fn)(const void *ctx, uint64_t off, void *dst, uint64_t n);
/* Same hash, but each block is first loaded by fill (in parallel), so a
 * reader hashes data while it is still in cache. *err gets a fill error. */
uint64_t tf_checksum_fill(void *p, uint64_t n, uint64_t seed, int threads, tf_fill_fn fill,
                          const void *ctx, int *err);
#endif
