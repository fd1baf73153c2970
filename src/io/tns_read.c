/* SPDX-License-Identifier: BSD-3-Clause */
/* .tns text: header detection (FROSTT, ParTI, Tensor Toolbox sptensor),
 * the parallel body parse (window by window for streamed text), the index
 * base of the file and dims.
 *
 *   FROSTT    i_1 ... i_N value          (no header; '#' comments)
 *   ParTI     N / d_1 ... d_N / entries
 *   sptensor  "sptensor" / N / d_1 ... d_N / nnz / entries   (pyttb export_data)
 *
 * One base per file: 0-based if any index of any mode is 0 (or as the
 * reader options say), otherwise 1-based. The base is only known at the
 * end, so the body is parsed with the 1-based bounds; an index equal to a
 * declared length (or 2^32), valid only 1-based, is noted on a cold path
 * with its line, and reported if the file turns out to be 0-based. */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/parallel.h"
#include "io/body_parse.h"
#include "io/header_lines.h"
#include "io/readers.h"
#include "io/text_parse.h"

typedef struct tns_header {
    tf_file_format format;
    uint32_t nmodes;
    int declared;                 /* dims come from a header               */
    uint64_t dims[TF_MAX_ORDER];
    uint64_t dims_line;
    uint64_t nnz;                 /* sptensor: declared non-zeros           */
    uint64_t nnz_line;
    size_t data_start;            /* offset of the first coordinate line    */
    uint64_t first_data_line;     /* its number, 0 if there is none         */
} tns_header;

void tf_shift_mode_up(tf_tensor *t, uint32_t m, int threads)
{
    uint32_t *ix = t->ind[m];
    const int64_t n = (int64_t)t->nnz;
#pragma omp parallel for num_threads(tf_resolve_threads(threads)) schedule(static)
    for (int64_t k = 0; k < n; ++k) ix[k] = ix[k] + 1u; /* wraps UINT32_MAX (raw 0) to 0 */
}

static tf_status no_entries(const char *name)
{
    return tf_fail(TF_ERR_PARSE, "%s: no non-zeros (the file is empty or holds only comments)",
                   name);
}

/* Reads the next content line into [*b, *e) or fails naming what was due. */
static tf_status expect_line(const char *name, tf_line_cursor *c, size_t *b, size_t *e,
                             const char *what)
{
    if (tf_next_content_line(c, '#', b, e)) return TF_OK;
    return tf_fail(TF_ERR_PARSE, "%s:%llu: expected %s, found end of file", name,
                   (unsigned long long)c->line + 1, what);
}

static tf_status read_dims(const char *name, tf_line_cursor *c, tns_header *h, const char *hdr)
{
    size_t b, e;
    char ctx[128];
    TF_TRY(expect_line(name, c, &b, &e, "the line of mode lengths"));
    snprintf(ctx, sizeof ctx, "the %u mode lengths of the %s", h->nmodes, hdr);
    TF_TRY(tf_header_ints(name, c, b, e, h->nmodes, 1, TF_INDEX_RAW_MAX, "a mode length", ctx,
                          h->dims));
    h->declared = 1;
    h->dims_line = c->line;
    return TF_OK;
}

static tf_status read_sptensor_header(const char *name, tf_line_cursor *c, tns_header *h)
{
    size_t b, e;
    uint64_t v = 0;
    h->format = TF_FILE_SPTENSOR;
    TF_TRY(expect_line(name, c, &b, &e, "the number of modes"));
    TF_TRY(tf_header_ints(name, c, b, e, 1, TF_MIN_ORDER, TF_MAX_ORDER, "the number of modes",
                          "the number of modes of the sptensor header", &v));
    h->nmodes = (uint32_t)v;
    TF_TRY(read_dims(name, c, h, "sptensor header"));
    TF_TRY(expect_line(name, c, &b, &e, "the number of non-zeros"));
    TF_TRY(tf_header_ints(name, c, b, e, 1, 0, UINT64_MAX >> 1, "the number of non-zeros",
                          "the number of non-zeros of the sptensor header", &h->nnz));
    h->nnz_line = c->line;
    return TF_OK;
}

/* Finds the header variant from the first content line. */
static tf_status read_header(const char *name, const char *text, size_t len, tns_header *h)
{
    tf_line_cursor c;
    size_t b, e;
    memset(h, 0, sizeof *h);
    tf_lines_init(&c, text, len, 0);
    if (!tf_next_content_line(&c, '#', &b, &e)) return no_entries(name);
    const char *p = text + b, *tok;
    size_t toklen;
    uint32_t ntok = tf_token_count(p, text + e);
    tf_token_next(&p, text + e, &tok, &toklen);
    if (tf_token_is(tok, toklen, "sptensor")) {
        TF_TRY(read_sptensor_header(name, &c, h));
    } else if (tf_token_is(tok, toklen, "tensor") || tf_token_is(tok, toklen, "ktensor") ||
               tf_token_is(tok, toklen, "matrix")) {
        return tf_fail(TF_ERR_UNAVAILABLE,
                       "%s:%llu: a Tensor Toolbox '%.*s' file holds no sparse tensor "
                       "(expected 'sptensor' or coordinate lines)",
                       name, (unsigned long long)c.line, (int)toklen, tok);
    } else if (ntok == 1) {
        uint64_t v = 0;
        h->format = TF_FILE_TNS_HEADER;
        TF_TRY(tf_header_ints(name, &c, b, e, 1, TF_MIN_ORDER, TF_MAX_ORDER,
                              "the number of modes (ParTI header)",
                              "the number of modes of a ParTI header", &v));
        h->nmodes = (uint32_t)v;
        char hdr[64];
        snprintf(hdr, sizeof hdr, "ParTI header on line %llu", (unsigned long long)c.line);
        TF_TRY(read_dims(name, &c, h, hdr));
    } else {
        h->format = TF_FILE_TNS;
        if (ntok < TF_MIN_ORDER + 1 || ntok > TF_MAX_ORDER + 1)
            return tf_fail(TF_ERR_PARSE,
                           "%s:%llu: expected %d to %d fields (%d to %d indices and a value), "
                           "found %u",
                           name, (unsigned long long)c.line, TF_MIN_ORDER + 1, TF_MAX_ORDER + 1,
                           TF_MIN_ORDER, TF_MAX_ORDER, ntok);
        h->nmodes = ntok - 1;
        h->data_start = b;
        h->first_data_line = c.line;
        return TF_OK;
    }
    h->data_start = c.pos;
    if (tf_next_content_line(&c, '#', &b, &e)) h->first_data_line = c.line;
    return TF_OK;
}

/* The file turned out 0-based, but an index equals its mode's length. */
static tf_status edge_error(const char *name, const tns_header *h, const tf_body_result *r,
                            int detected)
{
    const uint32_t m = r->edge_field - 1;
    const char *why = detected ? "the file is 0-based: it holds an index 0" : "read 0-based";
    if (h->declared)
        return tf_fail(TF_ERR_RANGE,
                       "%s:%llu: field %u: expected an index of at most %llu (%s; mode %u has "
                       "length %llu, declared on line %llu), found '%llu'",
                       name, (unsigned long long)r->edge_line, m + 1,
                       (unsigned long long)h->dims[m] - 1, why, m + 1,
                       (unsigned long long)h->dims[m], (unsigned long long)h->dims_line,
                       (unsigned long long)r->edge_value);
    return tf_fail(TF_ERR_RANGE,
                   "%s:%llu: field %u: expected an index of at most %llu (%s), found '%llu'", name,
                   (unsigned long long)r->edge_line, m + 1, (unsigned long long)TF_INDEX_RAW_MAX - 1,
                   why, (unsigned long long)r->edge_value);
}

uint32_t tf_tns_header_lines(const char *b, const char *e)
{
    const char *p = b, *tok;
    size_t len;
    const uint32_t ntok = tf_token_count(b, e);
    if (!tf_token_next(&p, e, &tok, &len)) return 1;
    if (tf_token_is(tok, len, "sptensor")) return 4;
    return ntok == 1 ? 2 : 1;
}

tf_status tf_tns_parse(tf_text_src *src, const tf_read_opts *ro, tf_tensor *t, tf_read_info *info,
                       int *canonical, tf_origin *org)
{
    const char *name = src->name;
    tns_header h;
    memset(t, 0, sizeof *t);
    TF_TRY(read_header(name, src->text, src->len, &h));

    /* Bounds per base: auto parses 0..hi with hi + 1 noted (soft edge);
     * base 1 is 1..hi; base 0 is 0..hi - 1. */
    tf_body_opts o;
    char why[96];
    tf_body_opts_init(&o, h.nmodes, 1, '#');
    o.ref_line = h.first_data_line ? h.first_data_line : 1;
    const char *based = ro->base == 1 ? "the file is read 1-based" : ro->base == 0 ? "the file is read 0-based" : NULL;
    if (h.declared)
        snprintf(why, sizeof why, "(mode lengths declared on line %llu%s%s)",
                 (unsigned long long)h.dims_line, based ? "; " : "", based ? based : "");
    else if (based)
        snprintf(why, sizeof why, "(%s)", based);
    else
        why[0] = '\0';
    for (uint32_t m = 0; m < h.nmodes; ++m) {
        const uint64_t len = h.declared ? h.dims[m] : TF_INDEX_RAW_MAX;
        o.lo[m] = ro->base == 1 ? 1 : 0;
        o.hi[m] = ro->base == 1 ? len : len - 1;
        o.range_why[m] = why;
    }
    o.soft_edge = ro->base == TF_BASE_AUTO;
    o.map = &org->lines;
    org->kind = TF_ORIGIN_TEXT;
    org->value_field = h.nmodes + 1;
    tf_body_result r;
    TF_TRY(tf_body_parse_src(src, h.data_start, &o, ro->threads, NULL, NULL, t, &r));

    tf_status s = TF_OK;
    int zb = ro->base == 0;
    if (ro->base == TF_BASE_AUTO)
        for (uint32_t m = 0; m < h.nmodes; ++m) zb |= r.min_raw[m] == 0;
    if (h.format == TF_FILE_SPTENSOR && r.entries != h.nnz)
        s = tf_fail(TF_ERR_PARSE,
                    "%s:%llu: the sptensor header declares %llu non-zeros, but %llu coordinate "
                    "lines follow (truncated file?)",
                    name, (unsigned long long)h.nnz_line, (unsigned long long)h.nnz,
                    (unsigned long long)r.entries);
    else if (r.entries == 0)
        s = no_entries(name);
    else if (zb && r.edge_line)
        s = edge_error(name, &h, &r, ro->base == TF_BASE_AUTO);
    if (s != TF_OK) { tf_tensor_free(t); return s; }

    for (uint32_t m = 0; m < h.nmodes; ++m) {
        t->dims[m] = h.declared ? h.dims[m] : r.max_raw[m] + (zb ? 1 : 0);
        if (zb) tf_shift_mode_up(t, m, ro->threads);
    }
    info->index_base = zb ? 0 : 1;
    info->base_source = ro->base == TF_BASE_AUTO ? TF_BASE_DETECTED : TF_BASE_OPTION;
    info->format = h.format;
    info->declared_dims = h.declared;
    info->lines = r.lines;
    info->entries = r.entries;
    *canonical = r.canonical;
    return TF_OK;
}
