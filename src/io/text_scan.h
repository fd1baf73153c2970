/* SPDX-License-Identifier: BSD-3-Clause */
/* Bounded helpers for scanning text: newline counting, line cursors,
 * tokens of short header lines, and quoting a token in an error message. */
#ifndef TF_IO_TEXT_SCAN_H
#define TF_IO_TEXT_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* Number of '\n' bytes in p[0..n) (SIMD where available). */
uint64_t tf_count_newlines(const char *p, size_t n);
/* 1-based line number of byte offset pos in text. */
uint64_t tf_line_at(const char *text, size_t pos);

/* Line cursor over text[0..len): each call yields the next line as
 * [*b, *e) without its '\n' or a trailing '\r'; returns 0 at the end. */
typedef struct tf_line_cursor {
    const char *text;
    size_t len;
    size_t pos;    /* offset of the next line */
    uint64_t line; /* 1-based number of the line last returned */
} tf_line_cursor;

void tf_lines_init(tf_line_cursor *c, const char *text, size_t len, size_t start);
int tf_lines_next(tf_line_cursor *c, size_t *b, size_t *e);

/* Next blank-separated token of [*p, end); 0 if none is left. */
int tf_token_next(const char **p, const char *end, const char **tok, size_t *len);
/* Number of tokens in [p, end). */
uint32_t tf_token_count(const char *p, const char *end);
/* Unsigned decimal token of at most 19 digits. */
int tf_token_u64(const char *tok, size_t len, uint64_t *v);
/* Case-insensitive comparison of a token with a lower-case word. */
int tf_token_is(const char *tok, size_t len, const char *word);

/* Writes what was found at p, for "found '...'" in messages: the token up to
 * the next blank/newline/end (at most 24 bytes, non-printables escaped) in
 * quotes, or "end of line" / "end of file". */
void tf_describe_found(const char *p, const char *end, char *buf, size_t cap);

#endif
