/* Whole-buffer decompression of xz (liblzma, multi-threaded decoder where
 * available) and gzip (zlib). Concatenated streams are read to the end. A
 * truncated or corrupt stream is an error naming the file. */
#ifndef TF_IO_DECOMPRESS_H
#define TF_IO_DECOMPRESS_H

#include <stddef.h>

#include "tenfold.h"

int tf_is_xz(const void *p, size_t n);
int tf_is_gzip(const void *p, size_t n);

/* *out (tf_alloc'ed, free with tf_free) gets the decompressed bytes. */
tf_status tf_xz_decompress(const char *name, const void *in, size_t n, int threads, char **out,
                           size_t *out_len);
tf_status tf_gz_decompress(const char *name, const void *in, size_t n, char **out,
                           size_t *out_len);
/* Decompresses by content: *kind = 1 (xz), 2 (gzip), or 0 when the input
 * is not compressed (then *out stays NULL). */
tf_status tf_decompress_any(const char *name, const void *in, size_t n, int threads, char **out,
                            size_t *out_len, int *kind);
#endif
