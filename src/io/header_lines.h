/* SPDX-License-Identifier: BSD-3-Clause */
/* Serial helpers for the short header lines of text formats (ParTI,
 * sptensor, Matrix Market): content lines and lines of integers. */
#ifndef TF_IO_HEADER_LINES_H
#define TF_IO_HEADER_LINES_H

#include "io/text_scan.h"
#include "tenfold.h"

/* Next line that is neither blank nor a comment (first non-blank byte ==
 * comment); [*b, *e) without the line end. 0 at the end of the text. */
int tf_next_content_line(tf_line_cursor *c, char comment, size_t *b, size_t *e);

/* Parses the cursor's current line [b, e) as exactly `want` unsigned
 * integers in min..max into v. `what` names one value ("a mode length"),
 * `context` the whole line ("mode lengths of the ParTI header on line 1"). */
tf_status tf_header_ints(const char *name, const tf_line_cursor *c, size_t b, size_t e,
                         uint32_t want, uint64_t min, uint64_t max, const char *what,
                         const char *context, uint64_t *v);
#endif
