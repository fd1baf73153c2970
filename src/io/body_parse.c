/* SPDX-License-Identifier: BSD-3-Clause */
/* Parallel coordinate-line parser.
 *
 * The body is cut at newline boundaries into chunks (several per thread for
 * balance). A first parallel pass counts each chunk's newlines, an upper
 * bound on its entries, so every chunk parses straight into its slice of
 * the final arrays; chunks that held comments or blank lines are closed up
 * afterwards. Every chunk ends in '\n', which is the sentinel the number
 * parsers rely on; an unterminated last line is parsed from a copy.
 * Line numbers are only computed for an error (count newlines up to it). */
#include "io/body_parse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "io/text_parse.h"
#include "io/text_scan.h"

#define MIN_CHUNK_BYTES (256u << 10)
#define MAX_CHUNKS 4096
/* Error paths stay out of the hot loop. */
#define COLD __attribute__((cold, noinline))

/* A breakpoint of the line map in a chunk: from entry slot k on, entries
 * follow their lines one by one from `line`. */
typedef struct line_bp {
    uint64_t k, line;
} line_bp;

typedef struct chunk {
    const char *begin, *end; /* end[-1] == '\n' */
    size_t origin;           /* text offset of begin */
    uint64_t cap, off, count;
    uint64_t min_raw[TF_MAX_ORDER], max_raw[TF_MAX_ORDER];
    uint64_t first_raw[TF_MAX_ORDER], last_raw[TF_MAX_ORDER]; /* first / last entry */
    int sorted; /* entries strictly increasing, no zero values */
    tf_status status;
    size_t err_pos; /* text offset of the failing field */
    char msg[256];
    int has_edge;         /* an index hi + 1 was seen (o->soft_edge)   */
    size_t edge_pos;      /* text offset of the first one              */
    uint32_t edge_field;
    uint64_t edge_value;
    /* line map (o->map): the line of slot off is line0 + skips before the
     * first entry; bp holds the breakpoints after blank / comment lines */
    uint64_t line0, skips;
    line_bp *bp;
    uint64_t nbp, capbp;
    int bp_lost;
} chunk;

uint64_t tf_line_map_line(const tf_line_map *m, uint64_t e)
{
    if (!m || m->lost || m->n == 0 || e < m->entry[0]) return 0;
    uint64_t lo = 0, hi = m->n; /* entry[lo] <= e < entry[hi] */
    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (m->entry[mid] <= e) lo = mid;
        else hi = mid;
    }
    return m->line[lo] + (e - m->entry[lo]);
}

void tf_line_map_free(tf_line_map *m)
{
    if (!m) return;
    tf_free(m->entry);
    tf_free(m->line);
    memset(m, 0, sizeof *m);
}

/* Appends breakpoint (entry, line) unless it continues the last run. */
static void map_add(tf_line_map *m, uint64_t entry, uint64_t line)
{
    if (m->lost) return;
    if (m->n && m->entry[m->n - 1] == entry) { /* same slot: the later line wins */
        m->line[m->n - 1] = line;
        if (m->n > 1 && m->line[m->n - 2] + (entry - m->entry[m->n - 2]) == line) --m->n;
        return;
    }
    if (m->n && m->line[m->n - 1] + (entry - m->entry[m->n - 1]) == line) return;
    if (m->n == m->cap) {
        const uint64_t cap = m->cap ? 2 * m->cap : 64;
        if (cap > TF_LINE_MAP_MAX || TF_REALLOC(m->entry, cap, "line map") != TF_OK ||
            TF_REALLOC(m->line, cap, "line map") != TF_OK) {
            tf_clear_error();
            tf_line_map_free(m);
            m->lost = 1;
            return;
        }
        m->cap = cap;
    }
    m->entry[m->n] = entry;
    m->line[m->n] = line;
    ++m->n;
}

/* A blank or comment line before entry slot k of the chunk (line map). */
COLD static void note_skip(chunk *c, uint64_t k)
{
    ++c->skips;
    if (c->bp_lost) return;
    const uint64_t line = c->line0 + (k - c->off) + c->skips;
    if (c->nbp && c->bp[c->nbp - 1].k == k) { c->bp[c->nbp - 1].line = line; return; }
    if (c->nbp == c->capbp) {
        const uint64_t cap = c->capbp ? 2 * c->capbp : 16;
        line_bp *bp = cap <= TF_LINE_MAP_MAX ? realloc(c->bp, cap * sizeof *bp) : NULL;
        if (!bp) { c->bp_lost = 1; return; }
        c->bp = bp;
        c->capbp = cap;
    }
    c->bp[c->nbp].k = k;
    c->bp[c->nbp].line = line;
    ++c->nbp;
}

void tf_body_opts_init(tf_body_opts *o, uint32_t nmodes, int has_value, char comment)
{
    memset(o, 0, sizeof *o);
    o->nmodes = nmodes;
    o->has_value = has_value;
    o->comment = comment;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        o->lo[m] = 0;
        o->hi[m] = TF_INDEX_RAW_MAX;
        o->range_why[m] = "";
    }
    o->ref_line = 1;
}

/* Records the chunk's error at p (a field start) with "field F: ...". */
COLD static void chunk_fail(chunk *c, const char *p, tf_status s, unsigned field,
                            const char *expected)
{
    char found[80];
    tf_describe_found(p, c->end, found, sizeof found);
    c->status = s;
    c->err_pos = c->origin + (size_t)(p - c->begin);
    snprintf(c->msg, sizeof c->msg, "field %u: expected %s, found %s", field, expected, found);
}

COLD static void index_fail(chunk *c, const char *p, tf_num_err e, unsigned field)
{
    if (e == TF_NUM_OVERFLOW)
        chunk_fail(c, p, TF_ERR_RANGE, field, "an index of at most 2^32 (index overflow)");
    else
        chunk_fail(c, p, TF_ERR_PARSE, field, "a non-negative integer index");
}

COLD static void range_fail(chunk *c, const char *p, const tf_body_opts *o, unsigned m)
{
    char what[200];
    const char *sep = *o->range_why[m] ? " " : "";
    const uint64_t top = o->hi[m] + (o->soft_edge ? 1 : 0);
    if (o->lo[m] == 0)
        snprintf(what, sizeof what, "an index of at most %llu%s%s", (unsigned long long)top,
                 sep, o->range_why[m]);
    else
        snprintf(what, sizeof what, "an index in %llu..%llu%s%s", (unsigned long long)o->lo[m],
                 (unsigned long long)top, sep, o->range_why[m]);
    chunk_fail(c, p, TF_ERR_RANGE, m + 1, what);
}

/* Records the first index hi + 1 (valid 1-based, too large 0-based). */
COLD static void edge_note(chunk *c, const char *p, unsigned m, uint64_t v)
{
    c->has_edge = 1;
    c->edge_pos = c->origin + (size_t)(p - c->begin);
    c->edge_field = m + 1;
    c->edge_value = v;
}

COLD static void count_fail(chunk *c, const char *p, const tf_body_opts *o, unsigned field)
{
    char what[96];
    unsigned nf = o->nmodes + (o->has_value ? 1u : 0u);
    if (*tf_skip_blanks(p) == '\n')
        snprintf(what, sizeof what, "%u fields (as on line %llu)", nf,
                 (unsigned long long)o->ref_line);
    else
        snprintf(what, sizeof what, "end of line (%u fields, as on line %llu)", nf,
                 (unsigned long long)o->ref_line);
    chunk_fail(c, p, TF_ERR_PARSE, field, what);
}

/* Parses the chunk's lines. fixed_n > 0 is the compile-time number of
 * modes of a specialised copy, whose per-mode state then lives in registers. */
static inline __attribute__((always_inline)) void parse_chunk(const tf_body_opts *o, chunk *c,
                                                              uint32_t *const *ind, double *vals,
                                                              uint32_t fixed_n)
{
    const uint32_t N = fixed_n ? fixed_n : o->nmodes;
    const int has_value = o->has_value, soft = o->soft_edge;
    int edge_seen = 0;
    const char comment = o->comment;
    uint64_t lo[TF_MAX_ORDER], hi[TF_MAX_ORDER], mn[TF_MAX_ORDER], mx[TF_MAX_ORDER];
    for (uint32_t m = 0; m < N; ++m) {
        lo[m] = o->lo[m];
        hi[m] = o->hi[m];
        mn[m] = UINT64_MAX;
        mx[m] = 0;
    }
    uint64_t prev[TF_MAX_ORDER] = {0};
    int unsorted = 0;
    const char *p = c->begin, *end = c->end;
    uint64_t k = c->off;
    const int map = o->map != NULL;
    c->status = TF_OK;
    c->has_edge = 0;
    while (p < end) {
        p = tf_skip_blanks(p);
        if (*p == '\n') {
            ++p;
            if (map) note_skip(c, k);
            continue;
        }
        if (*p == comment) {
            p = (const char *)memchr(p, '\n', (size_t)(end - p)) + 1;
            if (map) note_skip(c, k);
            continue;
        }
        int cmp = 0; /* this line against the previous one, lexicographic */
        for (uint32_t m = 0; m < N; ++m) {
            uint64_t v = 0;
            tf_num_err e;
            const char *q = tf_parse_index(p, &v, &e);
            if (e != TF_NUM_OK || !tf_is_field_end(*q)) { index_fail(c, p, e, m + 1); goto out; }
            if (v - lo[m] > hi[m] - lo[m]) { /* one compare; hi + 1 is a rare, cold event */
                if (!soft || v != hi[m] + 1) { range_fail(c, p, o, m); goto out; }
                if (!edge_seen) { edge_seen = 1; edge_note(c, p, m, v); }
            }
            ind[m][k] = (uint32_t)(v - 1);
            mn[m] = v < mn[m] ? v : mn[m];
            mx[m] = v > mx[m] ? v : mx[m];
            if (cmp == 0) cmp = (v > prev[m]) - (v < prev[m]);
            prev[m] = v;
            p = tf_skip_blanks(q);
            if (*p == '\n' && (m + 1 < N || has_value)) { count_fail(c, p, o, m + 2); goto out; }
        }
        double val = 1.0;
        if (has_value) {
            tf_num_err e;
            const char *q = tf_parse_value_to(p, end, &val, &e);
            if (e == TF_NUM_NONFINITE) {
                chunk_fail(c, p, TF_ERR_RANGE, N + 1, "a finite value");
                goto out;
            }
            if (e != TF_NUM_OK || !tf_is_field_end(*q)) {
                chunk_fail(c, p, TF_ERR_PARSE, N + 1, "a number");
                goto out;
            }
            p = tf_skip_blanks(q);
        }
        if (*p != '\n') { count_fail(c, p, o, N + (has_value ? 2u : 1u)); goto out; }
        vals[k] = val;
        unsorted |= (cmp <= 0 && k != c->off) | (val == 0.0);
        if (k == c->off) memcpy(c->first_raw, prev, sizeof prev);
        ++p;
        ++k;
    }
out:
    c->count = k - c->off;
    c->sorted = !unsorted;
    memcpy(c->last_raw, prev, sizeof prev);
    memcpy(c->min_raw, mn, sizeof mn);
    memcpy(c->max_raw, mx, sizeof mx);
}

static void parse_store(const tf_body_opts *o, chunk *c, uint32_t *const *ind, double *vals)
{
    switch (o->nmodes) { /* the common orders get their own copies */
    case 2: parse_chunk(o, c, ind, vals, 2); break;
    case 3: parse_chunk(o, c, ind, vals, 3); break;
    case 4: parse_chunk(o, c, ind, vals, 4); break;
    default: parse_chunk(o, c, ind, vals, 0); break;
    }
}

/* Where the last complete line ends: text[start..body_end) ends in '\n'. */
static size_t body_end_of(const char *text, size_t len, size_t start)
{
    size_t e = len;
    while (e > start && text[e - 1] != '\n') --e;
    return e;
}

/* Copies an unterminated last line into a '\n'-terminated buffer. */
static tf_status make_tail(const char *text, size_t len, size_t body_end, chunk *tail, char **buf)
{
    *buf = NULL;
    memset(tail, 0, sizeof *tail);
    if (body_end >= len) return TF_OK;
    size_t n = len - body_end;
    TF_TRY(TF_ALLOC(*buf, n + 1, "last line"));
    memcpy(*buf, text + body_end, n);
    (*buf)[n] = '\n';
    tail->begin = *buf;
    tail->end = *buf + n + 1;
    tail->origin = body_end;
    tail->cap = 1;
    return TF_OK;
}

/* Splits text[start..body_end) into up to nmax chunks ending at newlines. */
static uint32_t split_chunks(const char *text, size_t start, size_t body_end, uint32_t nmax,
                             chunk *ch)
{
    uint32_t n = 0;
    size_t pos = start, body = body_end - start;
    for (uint32_t i = 0; i < nmax && pos < body_end; ++i) {
        size_t cut = start + (size_t)((double)body * (double)(i + 1) / (double)nmax);
        if (i + 1 == nmax || cut >= body_end) cut = body_end;
        else if (cut < pos) cut = pos;
        if (cut < body_end) {
            const char *nl = memchr(text + cut, '\n', body_end - cut);
            cut = (size_t)(nl - text) + 1; /* body_end - 1 is '\n', so nl exists */
        }
        memset(&ch[n], 0, sizeof ch[n]);
        ch[n].begin = text + pos;
        ch[n].end = text + cut;
        ch[n].origin = pos;
        ++n;
        pos = cut;
    }
    return n;
}

static uint32_t chunk_count(size_t body, int T)
{
    if (body < (1u << 20) || T <= 1) return body ? 1 : 0;
    uint64_t n = (uint64_t)T * 4;
    if (body / MIN_CHUNK_BYTES < n) n = body / MIN_CHUNK_BYTES;
    if (n < (uint64_t)T) n = (uint64_t)T;
    return n > MAX_CHUNKS ? MAX_CHUNKS : (uint32_t)n;
}

static tf_status report_first_error(const char *name, const char *text, uint64_t line_base,
                                    const chunk *ch, uint32_t n)
{
    for (uint32_t i = 0; i < n; ++i)
        if (ch[i].status != TF_OK)
            return tf_fail(ch[i].status, "%s:%llu: %s", name,
                           (unsigned long long)(line_base + tf_line_at(text, ch[i].err_pos)),
                           ch[i].msg);
    return TF_OK;
}

/* Moves every chunk's entries down so they follow each other from w. */
static void close_gaps(tf_tensor *t, const chunk *ch, uint32_t n, uint64_t w)
{
    for (uint32_t i = 0; i < n; ++i) {
        if (ch[i].off != w && ch[i].count) {
            for (uint32_t m = 0; m < t->order; ++m)
                memmove(t->ind[m] + w, t->ind[m] + ch[i].off, ch[i].count * sizeof(uint32_t));
            memmove(t->vals + w, t->vals + ch[i].off, ch[i].count * sizeof(double));
        }
        w += ch[i].count;
    }
}

/* 1 if every chunk is strictly sorted without zeros and so is every seam
 * between consecutive non-empty chunks (and with prev_last, the last entry
 * of the windows before, if any). */
static int chunks_canonical(const chunk *ch, uint32_t n, uint32_t N, const uint64_t *prev_last)
{
    const uint64_t *last = prev_last;
    for (uint32_t i = 0; i < n; ++i) {
        if (!ch[i].count) continue;
        if (!ch[i].sorted) return 0;
        if (last) {
            int cmp = 0;
            for (uint32_t m = 0; m < N && !cmp; ++m)
                cmp = (ch[i].first_raw[m] > last[m]) - (ch[i].first_raw[m] < last[m]);
            if (cmp <= 0) return 0;
        }
        last = ch[i].last_raw;
    }
    return 1;
}

/* Adds the window's chunks to the line map; their entries start at entry
 * `first` (after close_gaps). */
static void map_chunks(tf_line_map *m, const chunk *ch, uint32_t n, uint64_t first)
{
    for (uint32_t i = 0; i < n && !m->lost; ++i) {
        if (ch[i].bp_lost) {
            tf_line_map_free(m);
            m->lost = 1;
            return;
        }
        map_add(m, first, ch[i].line0);
        for (uint64_t b = 0; b < ch[i].nbp; ++b) map_add(m, first + (ch[i].bp[b].k - ch[i].off), ch[i].bp[b].line);
        first += ch[i].count;
    }
}

/* State carried from window to window. */
typedef struct body_acc {
    uint64_t cap;                       /* entries the arrays can hold   */
    int allocated;
    int have_last;
    uint64_t last_raw[TF_MAX_ORDER];    /* last entry so far             */
} body_acc;

/* Makes room for `need` entries: exactly that for a text parsed in one
 * window, else at least 1.5 times the old capacity. */
static tf_status grow_arrays(tf_tensor *t, uint32_t N, body_acc *a, uint64_t need, int exact)
{
    if (a->allocated && need <= a->cap) return TF_OK;
    uint64_t cap = exact ? need : a->cap + a->cap / 2;
    if (cap < need) cap = need;
    if (!a->allocated) {
        uint64_t dims1[TF_MAX_ORDER];
        for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) dims1[m] = 1;
        TF_TRY(tf_tensor_alloc(t, N, dims1, cap));
        t->nnz = 0;
        a->allocated = 1;
    } else {
        for (uint32_t m = 0; m < N; ++m)
            TF_TRY(TF_REALLOC(t->ind[m], cap ? cap : 1, "tensor indices"));
        TF_TRY(TF_REALLOC(t->vals, cap ? cap : 1, "tensor values"));
    }
    a->cap = cap;
    return TF_OK;
}

/* Parses the complete lines text[start..body_end) of one window (and, in
 * the final window, the unterminated last line) and appends them to t. */
static tf_status parse_window(const tf_text_src *src, size_t start, size_t body_end, int final,
                              const tf_body_opts *o, int T, tf_tensor *t, body_acc *a,
                              tf_body_result *r, uint64_t *newlines)
{
    const char *text = src->text;
    const size_t len = src->len;
    uint32_t nmax = chunk_count(body_end - start, T);
    chunk *ch = NULL;
    char *tailbuf = NULL;
    TF_TRY(TF_CALLOC(ch, (uint64_t)nmax + 1, "parser chunks"));
    uint32_t n = split_chunks(text, start, body_end, nmax, ch);
    tf_status s = final ? make_tail(text, len, body_end, &ch[n], &tailbuf) : TF_OK;
    if (s != TF_OK) { tf_free(ch); return s; }
    if (ch[n].begin) ++n;

#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
    for (int64_t i = 0; i < (int64_t)n; ++i)
        if (!ch[i].cap)
            ch[i].cap = tf_count_newlines(ch[i].begin, (size_t)(ch[i].end - ch[i].begin));

    const uint64_t base = t->nnz, head = tf_count_newlines(text, start);
    uint64_t need = base;
    for (uint32_t i = 0; i < n; ++i) { ch[i].off = need; need += ch[i].cap; }
    *newlines = head + (need - base); /* text[0..body_end) of a window that is not the last */
    if (o->map) { /* each chunk's first line: its newlines are counted */
        uint64_t line = src->line_base + head + 1;
        for (uint32_t i = 0; i < n; ++i) { ch[i].line0 = line; line += ch[i].cap; }
    }
    s = grow_arrays(t, o->nmodes, a, need, final && !a->allocated);
    if (s != TF_OK) goto done;

    /* a whole text reports its progress as chunks finish (a stream does per window) */
    const int report = src->progress && !src->dec;
    uint64_t parsed = 0;
#pragma omp parallel for num_threads(T) schedule(dynamic, 1)
    for (int64_t i = 0; i < (int64_t)n; ++i) {
        parse_store(o, &ch[i], t->ind, t->vals);
        if (report) {
            uint64_t done;
#pragma omp atomic capture
            done = parsed += (uint64_t)(ch[i].end - ch[i].begin);
            if (tf_thread_id() == 0) tf_src_report(src, start + done); /* the calling thread */
        }
    }
    if (report) tf_src_report(src, start + parsed); /* chunks the other threads finished last */

    s = report_first_error(src->name, text, src->line_base, ch, n);
    if (s != TF_OK) goto done;
    close_gaps(t, ch, n, base);
    uint64_t count = 0;
    for (uint32_t i = 0; i < n; ++i) {
        count += ch[i].count;
        for (uint32_t m = 0; m < o->nmodes; ++m) {
            if (ch[i].min_raw[m] < r->min_raw[m]) r->min_raw[m] = ch[i].min_raw[m];
            if (ch[i].max_raw[m] > r->max_raw[m]) r->max_raw[m] = ch[i].max_raw[m];
        }
        if (ch[i].has_edge && !r->edge_line) {
            r->edge_line = src->line_base + tf_line_at(text, ch[i].edge_pos);
            r->edge_field = ch[i].edge_field;
            r->edge_value = ch[i].edge_value;
        }
    }
    if (r->canonical)
        r->canonical = chunks_canonical(ch, n, o->nmodes, a->have_last ? a->last_raw : NULL);
    for (uint32_t i = n; i-- > 0;)
        if (ch[i].count) {
            memcpy(a->last_raw, ch[i].last_raw, sizeof a->last_raw);
            a->have_last = 1;
            break;
        }
    if (o->map) map_chunks(o->map, ch, n, base);
    t->nnz = base + count;
    r->entries = t->nnz;
    r->lines = src->line_base + head + (need - base);
done:
    for (uint32_t i = 0; i < n; ++i) free(ch[i].bp);
    tf_free(tailbuf);
    tf_free(ch);
    return s;
}

tf_status tf_body_parse_src(tf_text_src *src, size_t start, const tf_body_opts *o, int threads,
                            tf_body_hook hook, void *ctx, tf_tensor *t, tf_body_result *r)
{
    memset(t, 0, sizeof *t);
    memset(r, 0, sizeof *r);
    for (uint32_t m = 0; m < o->nmodes; ++m) { r->min_raw[m] = UINT64_MAX; r->max_raw[m] = 0; }
    r->canonical = 1;
    const int T = tf_resolve_threads(threads);
    body_acc a;
    memset(&a, 0, sizeof a);
    tf_status s = TF_OK;
    int windows = 0;
    tf_src_prefetch(src); /* decode the next window while this one is parsed */
    for (;;) {
        const int final = src->eof;
        const size_t body_end = body_end_of(src->text, src->len, start);
        const uint64_t first = t->nnz;
        uint64_t newlines = 0;
        s = parse_window(src, start, body_end, final, o, T, t, &a, r, &newlines);
        if (s == TF_OK && hook)
            s = hook(ctx, src->text, src->len, start, src->line_base, t, first, t->nnz - first);
        ++windows;
        if (s != TF_OK || final) break;
        s = tf_src_advance_counted(src, body_end, newlines);
        if (s != TF_OK) break;
        start = 0;
    }
    if (s == TF_OK && !a.allocated) s = grow_arrays(t, o->nmodes, &a, 0, 1);
    if (s == TF_OK && windows > 1 && a.cap > t->nnz && t->nnz) { /* give the slack back */
        for (uint32_t m = 0; m < o->nmodes && s == TF_OK; ++m)
            s = TF_REALLOC(t->ind[m], t->nnz, "tensor indices");
        if (s == TF_OK) s = TF_REALLOC(t->vals, t->nnz, "tensor values");
    }
    if (s != TF_OK) tf_tensor_free(t);
    return s;
}

