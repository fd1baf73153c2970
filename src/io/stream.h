/* SPDX-License-Identifier: BSD-3-Clause */
/* Text input in windows of bounded size, so the text readers can parse a
 * decompressed (or piped) file without ever holding all of its text.
 *
 * A source is either the whole text in memory (one window, nothing is
 * copied) or a decoder stream: the window holds what is left of the last
 * line of the previous window plus about tf_io_window_bytes() of new text.
 * A reader parses the complete lines of a window, then advances past them;
 * line numbers stay right through line_base (lines before the window). */
#ifndef TF_IO_STREAM_H
#define TF_IO_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "io/decompress.h"
#include "tenfold.h"

/* A streamed line longer than this is an error (garbage, a binary file). */
#define TF_MAX_LINE_BYTES ((size_t)1 << 20)
/* The header (first lines of a file) must fit in this much text. */
#define TF_MAX_HEADER_BYTES ((size_t)64 << 20)

typedef struct tf_text_src {
    const char *name;
    const char *text;   /* the window: text[0..len) (streams: within buf)    */
    size_t len;
    uint64_t line_base; /* newlines before text[0]                            */
    uint64_t bytes;     /* text bytes taken from the input so far              */
    int eof;            /* the window reaches the end of the input             */
    /* streamed sources only */
    tf_decoder *dec;
    char *buf;
    size_t cap;
    struct tf_prefetch *pf; /* read-ahead thread and its buffer, or NULL */
    /* progress (tf_src_set_progress): reported as windows arrive (streams)
     * or chunks are parsed (whole texts, by the body parser) */
    tf_progress_fn progress;
    void *progress_user;
    uint64_t progress_total; /* the input's size, 0 if unknown            */
} tf_text_src;

/* Window size of streamed sources (default 32 MiB); tests make it small. */
size_t tf_io_window_bytes(void);
void tf_io_set_window_bytes(size_t bytes); /* 0 restores the default */

/* Whole text in memory: one window, eof. */
void tf_src_init_mem(tf_text_src *s, const char *name, const char *text, size_t len);
/* Stream from dec (taken over: tf_src_free closes it); loads the first window. */
tf_status tf_src_init_stream(tf_text_src *s, const char *name, tf_decoder *dec);
/* Drops text[0..consumed) and reads on. Fails when what is left (an
 * unfinished line) is longer than TF_MAX_LINE_BYTES and input remains. */
tf_status tf_src_advance(tf_text_src *s, size_t consumed);
/* The same when the caller knows the newlines in text[0..consumed). */
tf_status tf_src_advance_counted(tf_text_src *s, size_t consumed, uint64_t newlines);
/* Grows the window until it holds `want` complete content lines (lines
 * that are neither blank nor start with `comment`) or the whole input.
 * These lines are a header: they must end within the first
 * TF_MAX_HEADER_BYTES of the input -- one rule for a stream, a file and a
 * text in memory alike ("the header is not complete within ..."). */
tf_status tf_src_need_lines(tf_text_src *s, char comment, uint32_t want);
/* The same without the header rule: grows the window for `want` lines
 * while it is within TF_MAX_HEADER_BYTES and its last line within
 * TF_MAX_LINE_BYTES, and stops quietly where it cannot (a look ahead). */
tf_status tf_src_want_lines(tf_text_src *s, char comment, uint32_t want);
/* The start of a text input, checked once its first window is there:
 * compressed data the readers cannot take (a format named by its magic;
 * inside: the kind of the outer stream, 0 none, 1 xz, 2 gzip) and lines
 * ended by CR alone are errors naming the file; a UTF-8 byte order mark
 * is skipped. */
tf_status tf_src_check_start(tf_text_src *s, int inside);
/* Starts decoding the next window's text on a helper thread while the
 * caller parses this one (tf_src_advance takes it); a no-op for whole
 * texts, at the end of input, or when no thread can be started. */
void tf_src_prefetch(tf_text_src *s);
/* Reports progress to fn (may be NULL) from here on: step "reading", done =
 * input bytes the decoder took (streams) or text parsed (whole texts),
 * total = `total` (0 if unknown). Reports where the source stands now;
 * call it before the body parse starts its read-ahead. */
void tf_src_set_progress(tf_text_src *s, tf_progress_fn fn, void *user, uint64_t total);
/* Reports done bytes of a whole text (the body parser, on the calling thread). */
void tf_src_report(const tf_text_src *s, uint64_t done);
/* Reads the rest of the input into the window (a compressed binary file). */
tf_status tf_src_slurp(tf_text_src *s);
void tf_src_free(tf_text_src *s);
#endif
