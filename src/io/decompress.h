/* SPDX-License-Identifier: BSD-3-Clause */
/* Decompression of xz (liblzma, multi-threaded decoder where available)
 * and gzip (zlib), streamed. Concatenated streams are read to the end. A
 * truncated or corrupt stream is an error naming the file. */
#ifndef TF_IO_DECOMPRESS_H
#define TF_IO_DECOMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

int tf_is_xz(const void *p, size_t n);
int tf_is_gzip(const void *p, size_t n);
/* The compression whose magic p[0..n) starts with ("xz", "gzip", "zstd",
 * "bzip2", "lzma", ...), or NULL. */
const char *tf_compression_name(const void *p, size_t n);

/* Streaming decoder: reads xz, gzip or plain bytes (kind by content) from
 * an fd (in 1 MiB reads) or from memory and hands out decompressed bytes in
 * pieces, so the decompressed text never has to be held whole. */
typedef struct tf_decoder tf_decoder;
/* Opens fd (read sequentially from its current offset) or mem[0..len);
 * *kind (may be NULL) = 0 plain, 1 xz, 2 gzip. */
tf_status tf_decoder_open_fd(const char *name, int fd, int threads, tf_decoder **out, int *kind);
tf_status tf_decoder_open_mem(const char *name, const void *mem, size_t len, int threads,
                              tf_decoder **out, int *kind);
/* The fd is a regular file that holds `bytes` from where the decoder
 * started: input that ends before is an error ("the file shrank while it
 * was read"), never a short read taken as the end. */
void tf_decoder_expect(tf_decoder *d, uint64_t bytes);
/* Fills out[0..cap) as far as it can; *got == 0 only at the end of input. */
tf_status tf_decoder_read(tf_decoder *d, char *out, size_t cap, size_t *got);
/* Input bytes (compressed, for xz / gzip) taken from the fd or memory so
 * far: how far through its source the decoder is. Not while another
 * thread reads d. */
uint64_t tf_decoder_in_bytes(const tf_decoder *d);
void tf_decoder_close(tf_decoder *d);
#endif
