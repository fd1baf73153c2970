/* SPDX-License-Identifier: BSD-3-Clause */
/* Matrix Market coordinate reader into an order-2 tensor:
 *   %%MatrixMarket matrix coordinate <real|integer|pattern> <general|symmetric|skew-symmetric>
 *   % comments
 *   rows cols entries
 *   i j [value]        (1-based)
 * Symmetric and skew-symmetric matrices store one triangle; the mirror of
 * every off-diagonal entry is added (negated for skew-symmetric). */
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "io/body_parse.h"
#include "io/header_lines.h"
#include "io/readers.h"
#include "io/text_parse.h"

enum mtx_symmetry { MTX_GENERAL, MTX_SYMMETRIC, MTX_SKEW };

typedef struct mtx_banner {
    int pattern;
    enum mtx_symmetry sym;
} mtx_banner;

static tf_status read_banner(const char *name, const tf_line_cursor *c, size_t b, size_t e,
                             mtx_banner *out)
{
    const char *p = c->text + b, *end = c->text + e, *tok[5];
    size_t len[5];
    uint32_t n = 0;
    while (n < 5 && tf_token_next(&p, end, &tok[n], &len[n])) ++n;
    if (n < 5 || tf_token_count(p, end) != 0)
        return tf_fail(TF_ERR_PARSE,
                       "%s:1: expected the banner '%%%%MatrixMarket matrix coordinate <field> "
                       "<symmetry>' (5 fields), found %u fields",
                       name, n + tf_token_count(p, end));
    if (!tf_token_is(tok[1], len[1], "matrix"))
        return tf_fail(TF_ERR_UNAVAILABLE, "%s:1: field 2: expected 'matrix', found '%.*s'", name,
                       (int)len[1], tok[1]);
    if (tf_token_is(tok[2], len[2], "array"))
        return tf_fail(TF_ERR_UNAVAILABLE,
                       "%s:1: field 3: dense 'array' Matrix Market files are not supported "
                       "(expected 'coordinate')", name);
    if (!tf_token_is(tok[2], len[2], "coordinate"))
        return tf_fail(TF_ERR_PARSE, "%s:1: field 3: expected 'coordinate', found '%.*s'", name,
                       (int)len[2], tok[2]);
    if (tf_token_is(tok[3], len[3], "complex"))
        return tf_fail(TF_ERR_UNAVAILABLE,
                       "%s:1: field 4: complex matrices are not supported (expected real, "
                       "integer or pattern)", name);
    out->pattern = tf_token_is(tok[3], len[3], "pattern");
    if (!out->pattern && !tf_token_is(tok[3], len[3], "real") &&
        !tf_token_is(tok[3], len[3], "integer"))
        return tf_fail(TF_ERR_PARSE,
                       "%s:1: field 4: expected real, integer or pattern, found '%.*s'", name,
                       (int)len[3], tok[3]);
    if (tf_token_is(tok[4], len[4], "hermitian"))
        return tf_fail(TF_ERR_UNAVAILABLE,
                       "%s:1: field 5: hermitian matrices are not supported (expected general, "
                       "symmetric or skew-symmetric)", name);
    if (tf_token_is(tok[4], len[4], "general")) out->sym = MTX_GENERAL;
    else if (tf_token_is(tok[4], len[4], "symmetric")) out->sym = MTX_SYMMETRIC;
    else if (tf_token_is(tok[4], len[4], "skew-symmetric")) out->sym = MTX_SKEW;
    else
        return tf_fail(TF_ERR_PARSE,
                       "%s:1: field 5: expected general, symmetric or skew-symmetric, found '%.*s'",
                       name, (int)len[4], tok[4]);
    return TF_OK;
}

/* 1-based line of the k-th entry line (error path only). */
static uint64_t line_of_entry(const char *text, size_t len, size_t start, uint64_t k)
{
    tf_line_cursor c;
    size_t b, e;
    tf_lines_init(&c, text, len, start);
    for (uint64_t i = 0; tf_next_content_line(&c, '%', &b, &e); ++i)
        if (i == k) return c.line;
    return c.line;
}

/* Window hook of a skew-symmetric matrix: no entry on the diagonal (checked
 * while the window's text is there to name the line). */
static tf_status skew_diagonal(void *ctx, const char *text, size_t len, size_t start,
                               uint64_t line_base, const tf_tensor *t, uint64_t first,
                               uint64_t count)
{
    const char *name = ctx;
    for (uint64_t k = first; k < first + count; ++k)
        if (t->ind[0][k] == t->ind[1][k])
            return tf_fail(TF_ERR_PARSE,
                           "%s:%llu: a skew-symmetric matrix has a zero diagonal, found an entry "
                           "at (%u, %u)",
                           name,
                           (unsigned long long)(line_base +
                                                line_of_entry(text, len, start, k - first)),
                           t->ind[0][k] + 1, t->ind[1][k] + 1);
    return TF_OK;
}

/* Adds the mirror (j, i) of every off-diagonal entry (i, j). */
static tf_status expand_symmetric(enum mtx_symmetry sym, tf_tensor *t)
{
    const uint64_t n = t->nnz;
    uint64_t off = 0;
    for (uint64_t k = 0; k < n; ++k) off += t->ind[0][k] != t->ind[1][k];
    if (off == 0) return TF_OK;
    tf_tensor x;
    TF_TRY(tf_tensor_alloc(&x, 2, t->dims, n + off));
    memcpy(x.ind[0], t->ind[0], n * sizeof(uint32_t));
    memcpy(x.ind[1], t->ind[1], n * sizeof(uint32_t));
    memcpy(x.vals, t->vals, n * sizeof(double));
    uint64_t w = n;
    for (uint64_t k = 0; k < n; ++k) {
        if (t->ind[0][k] == t->ind[1][k]) continue;
        x.ind[0][w] = t->ind[1][k];
        x.ind[1][w] = t->ind[0][k];
        x.vals[w] = sym == MTX_SKEW ? -t->vals[k] : t->vals[k];
        ++w;
    }
    tf_tensor_free(t);
    *t = x;
    return TF_OK;
}

tf_status tf_mtx_parse(tf_text_src *src, int threads, tf_tensor *t, tf_read_info *info,
                       int *canonical, tf_origin *org)
{
    const char *name = src->name, *text = src->text;
    const size_t len = src->len;
    tf_line_cursor c;
    size_t b, e;
    mtx_banner ban = {0, MTX_GENERAL};
    memset(t, 0, sizeof *t);
    tf_lines_init(&c, text, len, 0);
    tf_lines_next(&c, &b, &e);
    TF_TRY(read_banner(name, &c, b, e, &ban));
    if (!tf_next_content_line(&c, '%', &b, &e))
        return tf_fail(TF_ERR_PARSE, "%s:%llu: expected the size line 'rows cols entries', "
                       "found end of file", name, (unsigned long long)c.line + 1);
    uint64_t size[3];
    TF_TRY(tf_header_ints(name, &c, b, e, 3, 0, UINT64_MAX >> 1, "a size",
                          "the size line 'rows cols entries'", size));
    const uint64_t size_line = c.line;
    for (int i = 0; i < 2; ++i)
        if (size[i] < 1 || size[i] > TF_INDEX_RAW_MAX)
            return tf_fail(TF_ERR_RANGE, "%s:%llu: field %d: expected a %s count in 1..2^32, "
                           "found %llu", name, (unsigned long long)size_line, i + 1,
                           i ? "column" : "row", (unsigned long long)size[i]);
    if (ban.sym != MTX_GENERAL && size[0] != size[1])
        return tf_fail(TF_ERR_PARSE, "%s:%llu: a %s matrix must be square, the size line declares "
                       "%llu x %llu", name, (unsigned long long)size_line,
                       ban.sym == MTX_SKEW ? "skew-symmetric" : "symmetric",
                       (unsigned long long)size[0], (unsigned long long)size[1]);
    if (size[2] == 0)
        return tf_fail(TF_ERR_PARSE, "%s:%llu: no non-zeros (the size line declares 0 entries)",
                       name, (unsigned long long)size_line);
    const size_t start = c.pos;

    tf_body_opts o;
    char why[80];
    tf_body_opts_init(&o, 2, !ban.pattern, '%');
    snprintf(why, sizeof why, "(matrix size declared on line %llu)", (unsigned long long)size_line);
    for (int m = 0; m < 2; ++m) { o.lo[m] = 1; o.hi[m] = size[m]; o.range_why[m] = why; }
    tf_line_cursor peek = c;
    o.ref_line = tf_next_content_line(&peek, '%', &b, &e) ? peek.line : size_line + 1;
    o.map = &org->lines;
    org->kind = TF_ORIGIN_TEXT;
    org->value_field = ban.pattern ? 0 : 3;
    tf_body_result r;
    TF_TRY(tf_body_parse_src(src, start, &o, threads, ban.sym == MTX_SKEW ? skew_diagonal : NULL,
                             (void *)name, t, &r));
    tf_status s = TF_OK;
    if (r.entries != size[2])
        s = tf_fail(TF_ERR_PARSE,
                    "%s:%llu: the size line declares %llu entries, but %llu entry lines follow "
                    "(truncated file?)",
                    name, (unsigned long long)size_line, (unsigned long long)size[2],
                    (unsigned long long)r.entries);
    t->dims[0] = size[0];
    t->dims[1] = size[1];
    if (s == TF_OK && ban.sym != MTX_GENERAL) {
        const uint64_t n = t->nnz;
        s = expand_symmetric(ban.sym, t);
        if (s == TF_OK && t->nnz > n) org->mirrors = n;
    }
    if (s != TF_OK) { tf_tensor_free(t); return s; }
    info->format = TF_FILE_MTX;
    info->declared_dims = 1;
    info->index_base = 1;
    info->base_source = TF_BASE_FORMAT;
    info->lines = r.lines;
    info->entries = r.entries;
    info->mtx_symmetric = ban.sym != MTX_GENERAL;
    info->mtx_pattern = ban.pattern;
    *canonical = r.canonical && ban.sym == MTX_GENERAL;
    return TF_OK;
}
