/* .tns text: header detection (FROSTT, ParTI, Tensor Toolbox sptensor),
 * the parallel body parse, per-mode 0-/1-based detection and dims.
 *
 *   FROSTT    i_1 ... i_N value          (no header; '#' comments)
 *   ParTI     N / d_1 ... d_N / entries
 *   sptensor  "sptensor" / N / d_1 ... d_N / nnz / entries   (pyttb export_data)
 *
 * A mode whose smallest index is 0 is 0-based, otherwise 1-based. */
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

/* Checks 0-based modes against their tighter upper bound; on a violation
 * re-parses serially to report the first offending line. */
static tf_status check_zero_based(const char *name, const char *text, size_t len,
                                  const tns_header *h, tf_body_opts *o, const tf_body_result *r)
{
    char why[TF_MAX_ORDER][96];
    int bad = 0;
    for (uint32_t m = 0; m < h->nmodes; ++m) {
        if (r->min_raw[m] != 0) continue;
        uint64_t limit = h->declared ? h->dims[m] - 1 : TF_INDEX_RAW_MAX - 1;
        if (r->max_raw[m] <= limit) continue;
        o->hi[m] = limit;
        if (h->declared)
            snprintf(why[m], sizeof why[m],
                     "(mode %u is 0-based; its length %llu is declared on line %llu)", m + 1,
                     (unsigned long long)h->dims[m], (unsigned long long)h->dims_line);
        else
            snprintf(why[m], sizeof why[m], "(mode %u is 0-based)", m + 1);
        o->range_why[m] = why[m];
        bad = 1;
    }
    if (!bad) return TF_OK;
    tf_status s = tf_body_recheck(name, text, len, h->data_start, o);
    if (s != TF_OK) return s;
    return tf_fail(TF_ERR_RANGE, "%s: an index exceeds the length of its 0-based mode", name);
}

tf_status tf_tns_parse(const char *name, const char *text, size_t len, int threads, tf_tensor *t,
                       tf_read_info *info, int *canonical)
{
    tns_header h;
    memset(t, 0, sizeof *t);
    TF_TRY(read_header(name, text, len, &h));

    tf_body_opts o;
    char why[96];
    tf_body_opts_init(&o, h.nmodes, 1, '#');
    o.ref_line = h.first_data_line ? h.first_data_line : 1;
    if (h.declared) {
        snprintf(why, sizeof why, "(mode lengths declared on line %llu)",
                 (unsigned long long)h.dims_line);
        for (uint32_t m = 0; m < h.nmodes; ++m) { o.hi[m] = h.dims[m]; o.range_why[m] = why; }
    }
    tf_body_result r;
    TF_TRY(tf_body_parse(name, text, len, h.data_start, &o, threads, t, &r));

    tf_status s = TF_OK;
    if (h.format == TF_FILE_SPTENSOR && r.entries != h.nnz)
        s = tf_fail(TF_ERR_PARSE,
                    "%s:%llu: the sptensor header declares %llu non-zeros, but %llu coordinate "
                    "lines follow (truncated file?)",
                    name, (unsigned long long)h.nnz_line, (unsigned long long)h.nnz,
                    (unsigned long long)r.entries);
    else if (r.entries == 0)
        s = no_entries(name);
    if (s == TF_OK) s = check_zero_based(name, text, len, &h, &o, &r);
    if (s != TF_OK) { tf_tensor_free(t); return s; }

    for (uint32_t m = 0; m < h.nmodes; ++m) {
        int zb = r.min_raw[m] == 0;
        t->dims[m] = h.declared ? h.dims[m] : r.max_raw[m] + (zb ? 1 : 0);
        if (zb) tf_shift_mode_up(t, m, threads);
        info->zero_based[m] = zb;
    }
    info->format = h.format;
    info->declared_dims = h.declared;
    info->lines = r.lines;
    info->entries = r.entries;
    *canonical = r.canonical;
    return TF_OK;
}
