/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense matrix text files and Kruskal tensor output.
 *
 * SPLATT .mat layout (as SPLATT's mat_write / vec_write): one matrix row
 * per line, each value followed by one space, sign always shown; a vector
 * (lambda) has one value per line. SPLATT prints 9 significant digits;
 * tenfold prints 17 ("%+.16e") so a read gives back the same doubles.
 *
 * Tensor Toolbox / pyttb export_data "ktensor":
 *   ktensor / N / d_1 ... d_N / R / weights (one line) /
 *   per mode: matrix / 2 / d_m R / rows of "%.16e" joined by single spaces */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check_args.h"
#include "core/error.h"
#include "io/decompress.h"
#include "io/factor_set.h"
#include "io/input.h"
#include "io/matrix_parse.h"
#include "io/stream.h"
#include "io/text_parse.h"
#include "io/text_scan.h"
#include "io/writer.h"

#define VALUE_CHARS 25 /* "%+.16e " is at most 24 characters and a separator */

typedef struct rows_ctx {
    const double *data;
    uint64_t cols;
    int splatt; /* 1: "%+.16e " per value; 0: "%.16e" joined by spaces */
} rows_ctx;

static size_t format_row(const void *ctx, uint64_t r, char *dst)
{
    const rows_ctx *c = ctx;
    const double *row = c->data + r * c->cols;
    char *p = dst;
    for (uint64_t j = 0; j < c->cols; ++j) {
        if (c->splatt) p += snprintf(p, VALUE_CHARS + 2, "%+.16e ", row[j]);
        else p += snprintf(p, VALUE_CHARS + 2, j + 1 < c->cols ? "%.16e " : "%.16e", row[j]);
    }
    *p++ = '\n';
    return (size_t)(p - dst);
}

static void put_rows(tf_writer *w, const double *data, uint64_t rows, uint64_t cols, int splatt)
{
    rows_ctx c = {data, cols, splatt};
    tf_writer_records(w, rows, (size_t)cols * VALUE_CHARS + 2, format_row, &c, 0);
}

static tf_status check_finite(const char *path, const double *v, uint64_t n, uint64_t cols,
                              const char *what)
{
    for (uint64_t i = 0; i < n; ++i)
        if (!isfinite(v[i]))
            return tf_fail(TF_ERR_NUMERIC, "%s: %s has a non-finite value at row %llu, column %llu",
                           path, what, (unsigned long long)(i / cols + 1),
                           (unsigned long long)(i % cols + 1));
    return TF_OK;
}

tf_status tf_matrix_write(const char *path, const tf_matrix *m)
{
    TF_ARG_NOT_NULL("tf_matrix_write", path);
    TF_ARG_NOT_NULL("tf_matrix_write", m);
    if (!*path) return tf_fail(TF_ERR_ARG, "no output file given");
    if (m->rows && m->cols && !m->data) return tf_fail(TF_ERR_ARG, "%s: matrix has no data", path);
    TF_TRY(check_finite(path, m->data, m->rows * m->cols, m->cols ? m->cols : 1, "the matrix"));
    tf_writer w;
    TF_TRY(tf_writer_open(&w, path));
    put_rows(&w, m->data, m->rows, m->cols, 1);
    return tf_writer_commit(&w);
}

tf_status tf_ktensor_check(const char *what, const tf_ktensor *k)
{
    if (k->order < TF_MIN_ORDER || k->order > TF_MAX_ORDER || k->rank == 0 || !k->lambda)
        return tf_fail(TF_ERR_ARG, "%s: not a valid Kruskal tensor (order %u, rank %llu)", what,
                       k->order, (unsigned long long)k->rank);
    TF_TRY(check_finite(what, k->lambda, k->rank, k->rank, "lambda"));
    for (uint32_t m = 0; m < k->order; ++m) {
        const tf_matrix *f = &k->factors[m];
        if (f->rows != k->dims[m] || f->cols != k->rank || !f->data)
            return tf_fail(TF_ERR_ARG, "%s: factor %u is %llu x %llu, expected %llu x %llu", what,
                           m + 1, (unsigned long long)f->rows, (unsigned long long)f->cols,
                           (unsigned long long)k->dims[m], (unsigned long long)k->rank);
        char name[32];
        snprintf(name, sizeof name, "factor %u", m + 1);
        TF_TRY(check_finite(what, f->data, f->rows * f->cols, f->cols, name));
    }
    return TF_OK;
}

/* Opens path, lets fill write the body, hands the temporary to set. */
typedef void (*fill_fn)(tf_writer *w, const tf_ktensor *k, uint32_t m);

static tf_status set_file(tf_out_set *set, const char *path, fill_fn fill, const tf_ktensor *k,
                          uint32_t m, int require_file)
{
    tf_writer w;
    TF_TRY(tf_writer_open_for(&w, path, set, require_file));
    fill(&w, k, m);
    return tf_writer_finish(&w, set);
}

static void fill_factor(tf_writer *w, const tf_ktensor *k, uint32_t m)
{
    put_rows(w, k->factors[m].data, k->factors[m].rows, k->factors[m].cols, 1);
}

/* One value per line, like SPLATT's vec_write. */
static void fill_lambda(tf_writer *w, const tf_ktensor *k, uint32_t m)
{
    for (uint64_t i = 0; i < k->rank; ++i) tf_writer_printf(w, "%.16e\n", k->lambda[i]);
}

static void fill_ttb(tf_writer *w, const tf_ktensor *k, uint32_t unused)
{
    tf_writer_printf(w, "ktensor\n%u\n", k->order);
    for (uint32_t m = 0; m < k->order; ++m)
        tf_writer_printf(w, m + 1 < k->order ? "%llu " : "%llu\n", (unsigned long long)k->dims[m]);
    tf_writer_printf(w, "%llu\n", (unsigned long long)k->rank);
    put_rows(w, k->lambda, 1, k->rank, 0);
    for (uint32_t m = 0; m < k->order; ++m) {
        tf_writer_printf(w, "matrix\n2\n%llu %llu\n", (unsigned long long)k->dims[m],
                         (unsigned long long)k->rank);
        put_rows(w, k->factors[m].data, k->dims[m], k->rank, 0);
    }
}

tf_status tf_ktensor_put_files(tf_out_set *set, const char *stem, const tf_ktensor *k, unsigned flags,
                               int require_file)
{
    size_t n = strlen(stem) + 32;
    char *path = malloc(n);
    if (!path) return tf_fail(TF_ERR_NOMEM, "out of memory");
    tf_status s = TF_OK;
    if (flags & TF_KTENSOR_SPLATT) {
        for (uint32_t m = 0; m < k->order && s == TF_OK; ++m) {
            snprintf(path, n, "%s.mode%u.mat", stem, m + 1);
            s = set_file(set, path, fill_factor, k, m, require_file);
        }
        snprintf(path, n, "%s.lambda.mat", stem);
        if (s == TF_OK) s = set_file(set, path, fill_lambda, k, 0, require_file);
    }
    if (s == TF_OK && (flags & TF_KTENSOR_TTB)) {
        snprintf(path, n, "%s.ktensor", stem);
        s = set_file(set, path, fill_ttb, k, 0, require_file);
    }
    free(path);
    return s;
}

tf_status tf_ttensor_check(const char *what, const tf_ttensor *t)
{
    if (t->order < TF_MIN_ORDER || t->order > TF_MAX_ORDER || !t->core)
        return tf_fail(TF_ERR_ARG, "%s: not a valid Tucker tensor (order %u%s)", what, t->order,
                       t->core ? "" : ", no core");
    uint64_t core = 1;
    for (uint32_t m = 0; m < t->order; ++m) {
        const tf_matrix *f = &t->factors[m];
        if (t->ranks[m] < 1 || f->rows != t->dims[m] || f->cols != t->ranks[m] || !f->data)
            return tf_fail(TF_ERR_ARG, "%s: factor %u is %llu x %llu, expected %llu x %llu", what, m + 1,
                           (unsigned long long)f->rows, (unsigned long long)f->cols, (unsigned long long)t->dims[m],
                           (unsigned long long)t->ranks[m]);
        char name[32];
        snprintf(name, sizeof name, "factor %u", m + 1);
        TF_TRY(check_finite(what, f->data, f->rows * f->cols, f->cols, name));
        core *= t->ranks[m];
    }
    return check_finite(what, t->core, core, core, "the core");
}

/* The Tensor Toolbox / pyttb export_data "tensor": "tensor", the order, the
 * lengths on one line, the values one per line, mode 1 fastest. */
static void fill_core(tf_writer *w, const tf_ttensor *t)
{
    tf_writer_printf(w, "tensor\n%u\n", t->order);
    uint64_t n = 1;
    for (uint32_t m = 0; m < t->order; ++m) {
        tf_writer_printf(w, m + 1 < t->order ? "%llu " : "%llu\n", (unsigned long long)t->ranks[m]);
        n *= t->ranks[m];
    }
    put_rows(w, t->core, n, 1, 0);
}

tf_status tf_ttensor_put_files(tf_out_set *set, const char *stem, const tf_ttensor *t, int require_file)
{
    size_t n = strlen(stem) + 32;
    char *path = malloc(n);
    if (!path) return tf_fail(TF_ERR_NOMEM, "out of memory");
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < t->order && s == TF_OK; ++m) {
        snprintf(path, n, "%s.mode%u.mat", stem, m + 1);
        tf_writer w;
        s = tf_writer_open_for(&w, path, set, require_file);
        if (s == TF_OK) {
            put_rows(&w, t->factors[m].data, t->factors[m].rows, t->factors[m].cols, 1);
            s = tf_writer_finish(&w, set);
        }
    }
    if (s == TF_OK) {
        snprintf(path, n, "%s.core.tensor", stem);
        tf_writer w;
        s = tf_writer_open_for(&w, path, set, require_file);
        if (s == TF_OK) {
            fill_core(&w, t);
            s = tf_writer_finish(&w, set);
        }
    }
    free(path);
    return s;
}

/* tf_ktensor_write and the manifest-switched sets: io/factor_set.c. */

tf_status tf_ktensor_write_splatt(const char *stem, const tf_ktensor *k)
{
    TF_ARG_NOT_NULL("tf_ktensor_write_splatt", stem);
    TF_ARG_NOT_NULL("tf_ktensor_write_splatt", k);
    return tf_ktensor_write(stem, k, TF_KTENSOR_SPLATT);
}

tf_status tf_ktensor_write_ttb(const char *path, const tf_ktensor *k)
{
    TF_ARG_NOT_NULL("tf_ktensor_write_ttb", path);
    TF_ARG_NOT_NULL("tf_ktensor_write_ttb", k);
    if (!*path) return tf_fail(TF_ERR_ARG, "no output file given");
    TF_TRY(tf_ktensor_check(path, k));
    tf_writer w;
    TF_TRY(tf_writer_open(&w, path));
    fill_ttb(&w, k, 0);
    return tf_writer_commit(&w);
}

/* ---------------------------------------------------------------- reading */

typedef struct row_store {
    double *data;
    uint64_t len, cap;
} row_store;

static tf_status push(row_store *r, double v)
{
    if (r->len == r->cap) {
        uint64_t cap = r->cap ? r->cap * 2 : 1024;
        TF_TRY(r->data ? TF_REALLOC(r->data, cap, "matrix values")
                       : TF_ALLOC(r->data, cap, "matrix values"));
        r->cap = cap;
    }
    r->data[r->len++] = v;
    return TF_OK;
}

static tf_status value_error(const char *path, uint64_t line, uint64_t field, const char *p,
                             const char *end, tf_num_err e)
{
    char found[80];
    tf_describe_found(p, end, found, sizeof found);
    return tf_fail(e == TF_NUM_NONFINITE ? TF_ERR_RANGE : TF_ERR_PARSE,
                   "%s:%llu: field %llu: expected %s, found %s", path, (unsigned long long)line,
                   (unsigned long long)field, e == TF_NUM_NONFINITE ? "a finite value" : "a number",
                   found);
}

/* The parser's state from window to window. */
typedef struct mat_state {
    const char *name;
    uint64_t rows, cols, ref_line;
    row_store r;
} mat_state;

/* Parses the lines of text[0..len) (ending in '\n'), the first of them
 * line line_base + 1, into rows of equal length. */
static tf_status mat_lines(mat_state *m, const char *text, size_t len, uint64_t line_base)
{
    const char *p = text, *end = text + len, *path = m->name;
    uint64_t line = line_base;
    tf_status s = TF_OK;
    while (p < end && s == TF_OK) {
        ++line;
        p = tf_skip_blanks(p);
        if (*p == '#') p = memchr(p, '\n', (size_t)(end - p));
        if (*p == '\n') { ++p; continue; }
        uint64_t count = 0;
        while (*p != '\n' && s == TF_OK) {
            double v = 0;
            tf_num_err e;
            const char *q = tf_parse_value(p, &v, &e);
            if (e != TF_NUM_OK || !tf_is_field_end(*q))
                s = value_error(path, line, count + 1, p, end, e);
            else if (m->rows && count == m->cols)
                s = tf_fail(TF_ERR_PARSE, "%s:%llu: field %llu: expected end of line (%llu values, "
                            "as on line %llu), found more", path, (unsigned long long)line,
                            (unsigned long long)count + 1, (unsigned long long)m->cols,
                            (unsigned long long)m->ref_line);
            else s = push(&m->r, v);
            ++count;
            p = tf_skip_blanks(q);
        }
        if (s != TF_OK) break;
        if (m->rows == 0) { m->cols = count; m->ref_line = line; }
        else if (count != m->cols)
            s = tf_fail(TF_ERR_PARSE,
                        "%s:%llu: field %llu: expected %llu values (as on line %llu), "
                        "found end of line",
                        path, (unsigned long long)line, (unsigned long long)count + 1,
                        (unsigned long long)m->cols, (unsigned long long)m->ref_line);
        ++m->rows;
        ++p;
    }
    return s;
}

static tf_status mat_finish(mat_state *m, tf_status s, tf_matrix *out)
{
    if (s == TF_OK && m->rows == 0) s = tf_fail(TF_ERR_PARSE, "%s: no matrix rows found", m->name);
    if (s != TF_OK) { tf_free(m->r.data); return s; }
    out->data = m->r.data;
    out->rows = m->rows;
    out->cols = m->cols;
    return TF_OK;
}


/* Parses a source window by window: the complete lines of each, then the
 * unterminated last line from a copy. Lines are bounded (TF_MAX_LINE_BYTES,
 * tf_src_advance), so garbage without newlines -- /dev/zero -- is rejected
 * after one window, and the text is never held whole. */
static tf_status mat_parse_src(tf_text_src *src, mat_state *m)
{
    for (;;) {
        size_t body = src->len;
        while (body > 0 && src->text[body - 1] != '\n') --body;
        if (body) TF_TRY(mat_lines(m, src->text, body, src->line_base));
        if (src->eof) {
            if (body == src->len) return TF_OK;
            const size_t n = src->len - body;
            char *last = NULL;
            TF_TRY(TF_ALLOC(last, n + 1, "last line"));
            memcpy(last, src->text + body, n);
            last[n] = '\n';
            tf_status s = mat_lines(m, last, n + 1, src->line_base + tf_count_newlines(src->text, body));
            tf_free(last);
            return s;
        }
        TF_TRY(tf_src_advance(src, body));
    }
}

tf_status tf_matrix_parse(const char *path, const char *text, size_t len, tf_matrix *out)
{
    memset(out, 0, sizeof *out);
    if (!text || len == 0 || text[len - 1] != '\n')
        return tf_fail(TF_ERR_ARG, "%s: matrix text must end with a newline", path);
    tf_text_src src;
    mat_state m = {path, 0, 0, 0, {0}};
    tf_src_init_mem(&src, path, text, len);
    tf_status s = tf_src_check_start(&src, 0);
    if (s == TF_OK) s = mat_parse_src(&src, &m);
    return mat_finish(&m, s, out);
}

tf_status tf_matrix_read(const char *path, tf_matrix *out)
{
    TF_ARG_NOT_NULL("tf_matrix_read", out);
    memset(out, 0, sizeof *out);
    TF_ARG_NOT_NULL("tf_matrix_read", path);
    if (!*path) return tf_fail(TF_ERR_ARG, "no input file given");
    return tf_matrix_read_as(path, NULL, out);
}

tf_status tf_matrix_read_as(const char *path, const char *shown, tf_matrix *out)
{
    memset(out, 0, sizeof *out);
    int fd = -1;
    const char *name = path;
    TF_TRY(tf_open_input(path, &fd, &name, NULL));
    if (shown) name = shown;
    struct stat st;
    tf_status s = TF_OK;
    if (fstat(fd, &st) != 0) s = tf_fail(TF_ERR_IO, "%s: cannot stat: %s", name, strerror(errno));
    else if (S_ISDIR(st.st_mode)) s = tf_fail(TF_ERR_IO, "%s: is a directory", name);
    tf_decoder *dec = NULL;
    int kind = 0;
    const off_t at = s == TF_OK && S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : -1;
    if (s == TF_OK) s = tf_decoder_open_fd(name, fd, 0, &dec, &kind);
    if (s != TF_OK) { close(fd); return s; }
    if (at >= 0 && at <= st.st_size) tf_decoder_expect(dec, (uint64_t)(st.st_size - at)); /* cut short: an error */
    tf_text_src src;
    mat_state m = {name, 0, 0, 0, {0}};
    s = tf_src_init_stream(&src, name, dec); /* takes dec over */
    if (s == TF_OK) s = tf_src_check_start(&src, kind);
    if (s == TF_OK) s = mat_parse_src(&src, &m);
    tf_src_free(&src);
    close(fd);
    return mat_finish(&m, s, out);
}
