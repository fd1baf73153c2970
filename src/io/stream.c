/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/stream.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "io/text_parse.h"
#include "io/text_scan.h"

#define DEFAULT_WINDOW ((size_t)32 << 20)

static size_t window_bytes = DEFAULT_WINDOW;

size_t tf_io_window_bytes(void) { return window_bytes; }

void tf_io_set_window_bytes(size_t bytes)
{
    window_bytes = bytes == 0 ? DEFAULT_WINDOW : bytes < 16 ? 16 : bytes;
}

void tf_src_init_mem(tf_text_src *s, const char *name, const char *text, size_t len)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->text = text;
    s->len = len;
    s->bytes = len;
    s->eof = 1;
}

void tf_src_report(const tf_text_src *s, uint64_t done)
{
    if (s->progress_total && done > s->progress_total) done = s->progress_total; /* a copied last line */
    tf_progress_report(s->progress, s->progress_user, TF_STEP_READ, done, s->progress_total, 0);
}

/* A stream's progress: how far the decoder is through its input (only
 * while no read-ahead thread uses the decoder). */
static void stream_report(const tf_text_src *s)
{
    if (s->progress && s->dec) tf_src_report(s, tf_decoder_in_bytes(s->dec));
}

void tf_src_set_progress(tf_text_src *s, tf_progress_fn fn, void *user, uint64_t total)
{
    s->progress = fn;
    s->progress_user = user;
    s->progress_total = total;
    stream_report(s); /* called before any read-ahead starts */
}

/* With a progress callback, a window is read in pieces of this size, each
 * reported (a slow pipe or decoder shows its bytes coming). */
#define PROGRESS_PIECE ((size_t)4 << 20)

/* Moves the window's text to the start of its buffer (after a read-ahead
 * buffer was swapped in, the text starts further in). */
static void compact(tf_text_src *s)
{
    if (s->text != s->buf && s->len) memmove(s->buf, s->text, s->len);
    s->text = s->buf;
}

/* Reads until the window holds `target` bytes or the input ends. */
static tf_status fill(tf_text_src *s, size_t target)
{
    compact(s);
    if (target > s->cap) target = s->cap;
    while (!s->eof && s->len < target) {
        size_t got = 0, want = target - s->len;
        if (s->progress && want > PROGRESS_PIECE) want = PROGRESS_PIECE;
        TF_TRY(tf_decoder_read(s->dec, s->buf + s->len, want, &got));
        if (got == 0) s->eof = 1;
        s->len += got;
        s->bytes += got;
        stream_report(s);
    }
    s->text = s->buf;
    return TF_OK;
}

static tf_status resize(tf_text_src *s, size_t cap)
{
    compact(s);
    TF_TRY(TF_REALLOC(s->buf, cap, "input window"));
    s->cap = cap;
    s->text = s->buf;
    return TF_OK;
}

tf_status tf_src_init_stream(tf_text_src *s, const char *name, tf_decoder *dec)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->dec = dec;
    TF_TRY(TF_ALLOC(s->buf, window_bytes + TF_MAX_LINE_BYTES, "input window"));
    s->cap = window_bytes + TF_MAX_LINE_BYTES;
    s->text = s->buf;
    return fill(s, window_bytes);
}

/* Read-ahead: one helper thread at a time decodes up to one window of
 * text into stage (from TF_MAX_LINE_BYTES on) while the main thread parses
 * the current window; then the unfinished last line goes in front of it
 * and the two buffers trade places, so the text is not copied again. */
struct tf_prefetch {
    pthread_t thread;
    int running;
    tf_decoder *dec;
    char *stage;      /* stage_cap bytes: the window buffer's size */
    size_t stage_cap;
    size_t cap, len;  /* to read: cap bytes at stage + TF_MAX_LINE_BYTES */
    int eof;
    tf_status status;
    char msg[512]; /* the helper's error message (tf_last_error is per thread) */
};

static void *prefetch_main(void *arg)
{
    struct tf_prefetch *p = arg;
    tf_unbind_self(); /* not on the OpenMP master's place (its decoder threads neither) */
    p->len = 0;
    p->eof = 0;
    p->status = TF_OK;
    while (p->len < p->cap) {
        size_t got = 0;
        tf_status s = tf_decoder_read(p->dec, p->stage + TF_MAX_LINE_BYTES + p->len, p->cap - p->len, &got);
        if (s != TF_OK) {
            p->status = s;
            snprintf(p->msg, sizeof p->msg, "%s", tf_last_error());
            break;
        }
        if (got == 0) { p->eof = 1; break; }
        p->len += got;
    }
    return NULL;
}

void tf_src_prefetch(tf_text_src *s)
{
    if (!s->dec || s->eof || (s->pf && s->pf->running)) return;
    if (!s->pf) {
        struct tf_prefetch *p = NULL;
        if (TF_CALLOC(p, 1, "read-ahead") != TF_OK) { tf_clear_error(); return; }
        if (TF_ALLOC(p->stage, s->cap, "read-ahead buffer") != TF_OK) {
            tf_clear_error();
            tf_free(p);
            return;
        }
        p->stage_cap = s->cap; /* >= window_bytes + TF_MAX_LINE_BYTES */
        p->cap = window_bytes;
        p->dec = s->dec;
        s->pf = p;
    }
    s->pf->running = pthread_create(&s->pf->thread, NULL, prefetch_main, s->pf) == 0;
}

/* Waits for the helper; the window becomes rest[0..keep) (the unfinished
 * line, at most TF_MAX_LINE_BYTES) followed by what the helper read. */
static tf_status take_prefetched(tf_text_src *s, const char *rest, size_t keep)
{
    struct tf_prefetch *p = s->pf;
    pthread_join(p->thread, NULL);
    p->running = 0;
    if (p->status != TF_OK) return tf_fail(p->status, "%s", p->msg);
    if (keep <= TF_MAX_LINE_BYTES && p->stage_cap == s->cap) { /* the buffers trade places */
        char *text = p->stage + TF_MAX_LINE_BYTES - keep;
        memcpy(text, rest, keep);
        p->stage = s->buf;
        s->buf = text - (TF_MAX_LINE_BYTES - keep);
        s->text = text;
        s->len = keep + p->len;
    } else { /* a larger window (a long header): appended by copy */
        memmove(s->buf, rest, keep);
        s->text = s->buf;
        s->len = keep;
        if (s->len + p->len > s->cap) TF_TRY(resize(s, s->len + p->len));
        memcpy(s->buf + s->len, p->stage + TF_MAX_LINE_BYTES, p->len);
        s->len += p->len;
    }
    s->bytes += p->len;
    s->eof = p->eof;
    stream_report(s); /* before the helper takes the decoder again */
    tf_src_prefetch(s); /* the next window decodes while this one is parsed */
    return TF_OK;
}

static tf_status line_too_long(const tf_text_src *s, uint64_t line)
{
    return tf_fail(TF_ERR_PARSE, "%s:%llu: line %llu is longer than 1 MiB (not a text file?)",
                   s->name, (unsigned long long)line, (unsigned long long)line);
}

tf_status tf_src_advance(tf_text_src *s, size_t consumed)
{
    if (consumed > s->len) consumed = s->len;
    return tf_src_advance_counted(s, consumed, tf_count_newlines(s->text, consumed));
}

tf_status tf_src_advance_counted(tf_text_src *s, size_t consumed, uint64_t newlines)
{
    if (consumed > s->len) consumed = s->len;
    s->line_base += newlines;
    if (!s->dec) {
        s->text += consumed;
        s->len -= consumed;
        return TF_OK;
    }
    const size_t keep = s->len - consumed;
    if (!s->eof && keep > TF_MAX_LINE_BYTES) return line_too_long(s, s->line_base + 1);
    if (s->pf && s->pf->running) return take_prefetched(s, s->text + consumed, keep);
    memmove(s->buf, s->text + consumed, keep);
    s->text = s->buf;
    s->len = keep;
    return fill(s, keep + window_bytes);
}

/* Complete content lines in text[0..len), counting up to want; *tail = the
 * bytes after the last '\n'; *last_end = the offset just past the last
 * content line counted (0 if none). */
static uint32_t content_lines(const char *text, size_t len, char comment, uint32_t want,
                              size_t *tail, size_t *last_end)
{
    uint32_t n = 0;
    size_t pos = 0;
    *last_end = 0;
    while (pos < len && n < want) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl) break;
        const char *p = text + pos;
        while (p < nl && tf_is_blank(*p)) ++p;
        pos = (size_t)(nl - text) + 1;
        if (p < nl && *p != comment) { ++n; *last_end = pos; }
    }
    if (n < want) {
        size_t last = len;
        while (last > pos && text[last - 1] != '\n') --last;
        *tail = len - last;
    } else {
        *tail = 0;
    }
    return n;
}

/* 1 if text[from..len) (the unterminated last line) holds content. */
static int tail_has_content(const char *text, size_t from, size_t len, char comment)
{
    while (from < len && tf_is_blank(text[from])) ++from;
    return from < len && text[from] != comment;
}

/* The header limit: one rule for every source (a mapped or in-memory text
 * as for a stream), so the same file passes or fails from a pipe and from
 * the disk alike. */
static tf_status header_too_long(const tf_text_src *s)
{
    const size_t at = TF_MAX_HEADER_BYTES < s->len ? TF_MAX_HEADER_BYTES : s->len;
    return tf_fail(TF_ERR_PARSE,
                   "%s:%llu: the header (with the comment and blank lines before it) is not complete "
                   "within the first %zu MiB",
                   s->name, (unsigned long long)(s->line_base + 1 + tf_count_newlines(s->text, at)),
                   TF_MAX_HEADER_BYTES >> 20);
}

/* Grows the window for `want` content lines; strict: past the header
 * limit is an error, else it stops there (and at a line too long) quietly. */
static tf_status need_lines(tf_text_src *s, char comment, uint32_t want, int strict)
{
    for (;;) {
        size_t tail = 0, last_end = 0;
        const uint32_t n = content_lines(s->text, s->len, comment, want, &tail, &last_end);
        if (!strict && (n >= want || s->eof)) return TF_OK;
        if (n >= want) return last_end > TF_MAX_HEADER_BYTES ? header_too_long(s) : TF_OK;
        if (s->eof) { /* fewer lines than wanted: the ones there must end within the limit */
            if (tail_has_content(s->text, s->len - tail, s->len, comment)) last_end = s->len;
            return last_end > TF_MAX_HEADER_BYTES ? header_too_long(s) : TF_OK;
        }
        if (tail > TF_MAX_LINE_BYTES)
            return strict ? line_too_long(s, s->line_base + 1 + tf_count_newlines(s->text, s->len)) : TF_OK;
        if (s->len >= TF_MAX_HEADER_BYTES) return strict ? header_too_long(s) : TF_OK;
        if (s->len + window_bytes > s->cap)
            TF_TRY(resize(s, s->len + window_bytes > 2 * s->cap ? s->len + window_bytes
                                                                : 2 * s->cap));
        TF_TRY(fill(s, s->len + window_bytes)); /* one more window's worth */
    }
}

tf_status tf_src_need_lines(tf_text_src *s, char comment, uint32_t want)
{
    return need_lines(s, comment, want, 1);
}

tf_status tf_src_want_lines(tf_text_src *s, char comment, uint32_t want)
{
    return need_lines(s, comment, want, 0);
}

/* 1 if the first line of text[0..len) is several lines ended by CR alone:
 * a CR with content after it on the line, twice, or once where the text
 * has no LF at all. */
static int cr_only(const char *text, size_t len)
{
    const char *nl = memchr(text, '\n', len);
    size_t first = nl ? (size_t)(nl - text) : len;
    while (first > 0 && tf_is_blank(text[first - 1])) --first; /* to the line's last content */
    unsigned crs = 0;
    for (const char *p = text; crs < 2 && (p = memchr(p, '\r', first - (size_t)(p - text))) != NULL; ++p) ++crs;
    return crs >= 2 || (crs == 1 && !nl);
}

tf_status tf_src_check_start(tf_text_src *s, int inside)
{
    static const char *const outer[] = {"", "xz", "gzip"};
    const char *z = tf_compression_name(s->text, s->len);
    if (z && inside)
        return tf_fail(TF_ERR_UNAVAILABLE, "%s: %s-compressed data inside %s: decompress it first (one layer of "
                                           "xz or gzip is read)", s->name, z, outer[inside == 1 ? 1 : 2]);
    if (z && !strcmp(z, "lzma"))
        return tf_fail(TF_ERR_UNAVAILABLE, "%s: an lzma-compressed file (not supported: use xz)", s->name);
    if (z)
        return tf_fail(TF_ERR_UNAVAILABLE, "%s: a %s-compressed file (not supported: decompress it, or compress "
                                           "it with xz or gzip)", s->name, z);
    if (s->len >= 3 && !memcmp(s->text, "\xef\xbb\xbf", 3)) TF_TRY(tf_src_advance(s, 3)); /* UTF-8 BOM */
    if (cr_only(s->text, s->len))
        return tf_fail(TF_ERR_PARSE, "%s:1: lines end with CR only (old Mac OS line ends; expected LF or CR LF): "
                                     "convert them, e.g. tr '\\r' '\\n'", s->name);
    return TF_OK;
}

tf_status tf_src_slurp(tf_text_src *s)
{
    while (s->dec && !s->eof) {
        if (s->len == s->cap) TF_TRY(resize(s, s->cap * 2));
        TF_TRY(fill(s, s->cap));
    }
    return TF_OK;
}

void tf_src_free(tf_text_src *s)
{
    if (s->pf) {
        if (s->pf->running) pthread_join(s->pf->thread, NULL);
        tf_free(s->pf->stage);
        tf_free(s->pf);
    }
    if (s->dec) tf_decoder_close(s->dec);
    tf_free(s->buf);
    memset(s, 0, sizeof *s);
}
