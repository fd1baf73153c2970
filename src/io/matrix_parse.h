/* SPDX-License-Identifier: BSD-3-Clause */
/* The dense matrix text parser behind tf_matrix_read, on text in memory
 * (for tf_matrix_read and the fuzz target). */
#ifndef TF_IO_MATRIX_PARSE_H
#define TF_IO_MATRIX_PARSE_H

#include <stddef.h>

#include "tenfold.h"

/* Parses text[0..len), which must end in '\n', into rows of equal length
 * (name is used in messages), with the checks of tf_matrix_read's start
 * (tf_src_check_start: a BOM, CR-only lines, compressed data). out->data
 * is tf_alloc'ed (tf_matrix_free). */
tf_status tf_matrix_parse(const char *name, const char *text, size_t len, tf_matrix *out);
/* tf_matrix_read of path (checked by the caller), its messages naming
 * `shown` (NULL: path) after it is open: a factor set's temporary read as
 * the file it becomes. */
tf_status tf_matrix_read_as(const char *path, const char *shown, tf_matrix *out);
#endif
