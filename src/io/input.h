/* SPDX-License-Identifier: BSD-3-Clause */
/* Whole-file input for the small text readers (dense matrices): read,
 * decompress (xz/gzip by content) and end with '\n' for the parsers. */
#ifndef TF_IO_INPUT_H
#define TF_IO_INPUT_H

#include <stddef.h>

#include "tenfold.h"

/* Reads path (decompressing xz/gzip) into *out, which ends in '\n'. */
tf_status tf_load_text(const char *path, int threads, char **out, size_t *len);
#endif
