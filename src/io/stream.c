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

/* Reads until the window holds `target` bytes or the input ends. */
static tf_status fill(tf_text_src *s, size_t target)
{
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
    return fill(s, window_bytes);
}

/* Read-ahead: one helper thread at a time decodes up to one window of
 * text into stage while the main thread parses the current window. */
struct tf_prefetch {
    pthread_t thread;
    int running;
    tf_decoder *dec;
    char *stage;
    size_t cap, len;
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
        tf_status s = tf_decoder_read(p->dec, p->stage + p->len, p->cap - p->len, &got);
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
        if (TF_ALLOC(p->stage, window_bytes, "read-ahead buffer") != TF_OK) {
            tf_clear_error();
            tf_free(p);
            return;
        }
        p->cap = window_bytes;
        p->dec = s->dec;
        s->pf = p;
    }
    s->pf->running = pthread_create(&s->pf->thread, NULL, prefetch_main, s->pf) == 0;
}

/* Waits for the helper and appends what it read to the window. */
static tf_status take_prefetched(tf_text_src *s)
{
    struct tf_prefetch *p = s->pf;
    pthread_join(p->thread, NULL);
    p->running = 0;
    if (p->status != TF_OK) return tf_fail(p->status, "%s", p->msg);
    if (s->len + p->len > s->cap) TF_TRY(resize(s, s->len + p->len));
    memcpy(s->buf + s->len, p->stage, p->len);
    s->len += p->len;
    s->bytes += p->len;
    s->eof = p->eof;
    s->text = s->buf;
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
    s->line_base += tf_count_newlines(s->text, consumed);
    if (!s->dec) {
        s->text += consumed;
        s->len -= consumed;
        return TF_OK;
    }
    size_t keep = s->len - consumed;
    memmove(s->buf, s->buf + consumed, keep);
    s->len = keep;
    if (!s->eof && keep > TF_MAX_LINE_BYTES) return line_too_long(s, s->line_base + 1);
    if (s->pf && s->pf->running) return take_prefetched(s);
    return fill(s, keep + window_bytes);
}

/* Complete content lines in text[0..len), counting up to want; *tail = the
 * bytes after the last '\n'. */
static uint32_t content_lines(const char *text, size_t len, char comment, uint32_t want,
                              size_t *tail)
{
    uint32_t n = 0;
    size_t pos = 0;
    while (pos < len && n < want) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        if (!nl) break;
        const char *p = text + pos;
        while (p < nl && tf_is_blank(*p)) ++p;
        if (p < nl && *p != comment) ++n;
        pos = (size_t)(nl - text) + 1;
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

tf_status tf_src_need_lines(tf_text_src *s, char comment, uint32_t want)
{
    for (;;) {
        size_t tail = 0;
        if (s->eof || content_lines(s->text, s->len, comment, want, &tail) >= want) return TF_OK;
        if (tail > TF_MAX_LINE_BYTES)
            return line_too_long(s, s->line_base + 1 + tf_count_newlines(s->text, s->len));
        if (s->len >= TF_MAX_HEADER_BYTES)
            return tf_fail(TF_ERR_PARSE, "%s: the header is not complete within the first %zu MiB",
                           s->name, TF_MAX_HEADER_BYTES >> 20);
        if (s->len + window_bytes > s->cap)
            TF_TRY(resize(s, s->len + window_bytes > 2 * s->cap ? s->len + window_bytes
                                                                : 2 * s->cap));
        TF_TRY(fill(s, s->len + window_bytes)); /* one more window's worth */
    }
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
