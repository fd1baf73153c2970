/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints: the state file, its checks, when to write, the write
 * through the factor set's switch and the read back (algo/checkpoint.h). */
#include "algo/checkpoint.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/factor_set.h"

#define STATE_MAGIC "tenfold-checkpoint 1"
#define STATE_SUFFIX "state"

/* ------------------------------------------------------------ text */

typedef struct text {
    char *p;
    size_t len, cap;
    int bad;
} text;

static void put(text *t, const char *fmt, ...) TF_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    if (t->bad) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) { t->bad = 1; return; }
        if (t->p && t->len + (size_t)n < t->cap) { t->len += (size_t)n; return; }
        size_t cap = t->cap ? 2 * t->cap : 4096;
        while (cap <= t->len + (size_t)n) cap *= 2;
        char *q = realloc(t->p, cap);
        if (!q) { t->bad = 1; return; }
        t->p = q;
        t->cap = cap;
    }
}

static void put_matrix(text *t, const char *head, uint32_t mode, const tf_matrix *a)
{
    put(t, "%s %u %llu %llu\n", head, mode + 1, (unsigned long long)a->rows, (unsigned long long)a->cols);
    for (uint64_t i = 0; i < a->rows; ++i)
        for (uint64_t j = 0; j < a->cols; ++j) put(t, "%.17g%c", a->data[i * a->cols + j], j + 1 < a->cols ? ' ' : '\n');
}

/* ------------------------------------------------------------ the tensor's identity */

static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* XOR over the non-zeros of a hash of (indices, value bits): the same for
 * any order of the non-zeros and any split of them over ranks. */
static uint64_t nonzero_checksum(const tf_tensor *X)
{
    uint64_t h = 0;
#pragma omp parallel for reduction(^ : h) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) {
        uint64_t z = 0x5eed;
        for (uint32_t m = 0; m < X->order; ++m) z = mix(z ^ X->ind[m][k]);
        uint64_t bits;
        const double v = X->vals[k];
        memcpy(&bits, &v, sizeof bits);
        h ^= mix(z ^ bits);
    }
    return h;
}

/* The stem's last switch finished and the temporaries a killed writer
 * left removed -- what the stem's next write does first (factor_set.c) --
 * at the start of a run that checkpoints there. A run that then writes
 * nothing (the resume of a run killed while its last checkpoint's files
 * were being renamed into place) would otherwise leave the plain files of
 * that switch behind: the set read through STEM.set is whole, but tools
 * that read STEM.state or STEM.lambda.mat by name would see the one
 * before. Another live writer of the stem stops this run here, before its
 * work. */
static tf_status settle(const char *stem, const char *method)
{
    tf_ktensor_out *o = NULL;
    const tf_status s =
        strcmp(method, "tucker") ? tf_ktensor_out_open(stem, TF_KTENSOR_SPLATT, &o) : tf_ttensor_out_open(stem, &o);
    if (s == TF_OK) tf_ktensor_out_abort(o);
    return s;
}

tf_status tf_ckpt_begin(tf_ckpt *c, const tf_checkpoint *ck, const char *method, const tf_tensor *X,
                        const tf_dist *parts, const tf_dist *dist, const uint64_t *ranks, uint32_t nranks,
                        const char *options, int *on)
{
    memset(c, 0, sizeof *c);
    *on = ck && ((ck->path && *ck->path) || (ck->resume && *ck->resume));
    if (!*on) return TF_OK;
    if (!X) return tf_fail(TF_ERR_ARG, "checkpoint: no tensor");
    if (ck->every_seconds < 0.0 || !isfinite(ck->every_seconds))
        return tf_fail(TF_ERR_ARG, "checkpoint: every_seconds %g is not a time (>= 0)", ck->every_seconds);
    c->opts = ck;
    c->dist = dist;
    c->writer = !dist || dist->rank == 0;
    snprintf(c->method, sizeof c->method, "%s", method);
    uint64_t h = nonzero_checksum(X);
    double nnz = (double)X->nnz;
    if (parts) {
        TF_TRY(parts->allreduce_u64(&h, 1, TF_RANKS_XOR));
        TF_TRY(parts->allreduce_sum(&nnz, 1));
    }
    text t = {0};
    put(&t, "tensor order %u dims", X->order);
    for (uint32_t m = 0; m < X->order; ++m) put(&t, " %llu", (unsigned long long)X->dims[m]);
    put(&t, " nnz %.0f checksum %016llx\n%s", nnz, (unsigned long long)h, nranks > 1 ? "ranks" : "rank");
    for (uint32_t m = 0; m < nranks; ++m) put(&t, " %llu", (unsigned long long)ranks[m]);
    put(&t, "\noptions %s\n", options);
    if (t.bad || t.len >= sizeof c->ident) {
        free(t.p);
        return tf_fail(TF_ERR_NOMEM, "checkpoint: the state's header does not fit");
    }
    memcpy(c->ident, t.p, t.len + 1);
    free(t.p);
    c->t_last = tf_wtime();
    tf_status s = c->writer && ck->path && *ck->path ? settle(ck->path, method) : TF_OK;
    if (dist) { /* every rank stops if rank 0 could not take the stem */
        int ok = s == TF_OK;
        TF_TRY(dist->bcast_from(&ok, sizeof ok, 0));
        if (!c->writer && !ok)
            return tf_fail(TF_ERR_IO, "checkpoint: rank 0 could not take %s (its message says why)", ck->path);
    }
    return s;
}

void tf_ckpt_free(tf_ckpt *c)
{
    if (!c) return;
    free(c->fits);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&c->aux[m]);
    memset(c, 0, sizeof *c);
}

tf_status tf_ckpt_aux(uint32_t order, const uint64_t *dims, uint64_t rank,
                      tf_status (*get)(void *ctx, tf_matrix *aux, int *has), void *ctx, tf_matrix *aux)
{
    int has[TF_MAX_ORDER] = {0};
    for (uint32_t m = 0; m < order; ++m) TF_TRY(tf_matrix_alloc(&aux[m], dims[m], rank));
    TF_TRY(get(ctx, aux, has));
    for (uint32_t m = 0; m < order; ++m)
        if (!has[m]) tf_matrix_free(&aux[m]), memset(&aux[m], 0, sizeof aux[m]);
    return TF_OK;
}

static tf_status push_fit(tf_ckpt *c, double fit)
{
    if (c->nfits == c->cap) {
        const uint32_t cap = c->cap ? 2 * c->cap : 64;
        double *p = realloc(c->fits, cap * sizeof *p);
        if (!p) return tf_fail(TF_ERR_NOMEM, "checkpoint: out of memory for the fits");
        c->fits = p;
        c->cap = cap;
    }
    c->fits[c->nfits++] = fit;
    return TF_OK;
}

/* ------------------------------------------------------------ the read */

/* The next line of *p (cut in place; NULL at the end), comments skipped. */
static char *next_line(char **p, int *line_no)
{
    while (*p && **p) {
        char *line = *p, *nl = strchr(line, '\n');
        if (nl) *nl = '\0', *p = nl + 1;
        else *p = line + strlen(line);
        ++*line_no;
        if (line[0] != '#' && line[0]) return line;
    }
    return NULL;
}

/* The value of a "key rest" line, or NULL when the line is not key's. */
static const char *field(const char *line, const char *key)
{
    const size_t n = strlen(key);
    return !strncmp(line, key, n) && line[n] == ' ' ? line + n + 1 : NULL;
}

/* Where two lines differ, for messages: the first differing word of a and
 * of b, each with the word before it (an option's name), up to 60
 * characters each. */
static void differing(const char *a, const char *b, char *da, char *db, size_t len)
{
    size_t i = 0, w = 0, p = 0; /* the first difference, its word's start, the word before's start */
    for (; a[i] && a[i] == b[i]; ++i)
        if (a[i] == ' ') p = w, w = i + 1;
    snprintf(da, len, "%.*s", (int)(w - p + strcspn(a + w, " ")), a + p);
    snprintf(db, len, "%.*s", (int)(w - p + strcspn(b + w, " ")), b + p);
    if (strlen(da) > 60) strcpy(da + 57, "...");
    if (strlen(db) > 60) strcpy(db + 57, "...");
}

static tf_status parse_aux(tf_ckpt *c, const char *path, const char *spec, char **p, int *line_no)
{
    unsigned mode = 0;
    unsigned long long rows = 0, cols = 0;
    int used = 0;
    if (sscanf(spec, "%u %llu %llu%n", &mode, &rows, &cols, &used) != 3 || spec[used] || mode < 1 ||
        mode > TF_MAX_ORDER || c->aux[mode - 1].data || !rows || !cols)
        return tf_fail(TF_ERR_PARSE, "%s:%d: expected 'aux MODE ROWS COLS' (a mode of the tensor, once)", path,
                       *line_no);
    tf_matrix *a = &c->aux[mode - 1];
    TF_TRY(tf_matrix_alloc(a, rows, cols));
    for (uint64_t i = 0; i < rows; ++i) {
        char *line = next_line(p, line_no), *s = line, *e = NULL;
        for (uint64_t j = 0; j < cols; ++j) {
            errno = 0;
            a->data[i * cols + j] = s ? strtod(s, &e) : 0.0;
            if (!s || e == s || !isfinite(a->data[i * cols + j]))
                return tf_fail(TF_ERR_PARSE, "%s:%d: expected %llu numbers (row %llu of aux %u)", path, *line_no,
                               cols, (unsigned long long)i + 1, mode);
            s = e;
        }
        while (s && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        if (s && *s) return tf_fail(TF_ERR_PARSE, "%s:%d: more than %llu numbers in a row of aux %u", path, *line_no,
                                    cols, mode);
    }
    return TF_OK;
}

static tf_status parse_state(tf_ckpt *c, const char *path, char *body)
{
    int line_no = 0, ended = 0, have_iter = 0;
    char *p = body, *line = next_line(&p, &line_no);
    if (!line || strcmp(line, STATE_MAGIC))
        return tf_fail(TF_ERR_PARSE, "%s: not a tenfold checkpoint state (no '" STATE_MAGIC "' line first)", path);
    /* the lines that must be this run's, in order */
    char want[sizeof c->ident + 64];
    snprintf(want, sizeof want, "method %s\n%s", c->method, c->ident);
    for (char *w = want, *wn; *w; w = wn) {
        wn = strchr(w, '\n');
        *wn++ = '\0';
        line = next_line(&p, &line_no);
        const char *sp = strchr(w, ' ');
        const size_t klen = (size_t)(sp - w);
        char key[32], a[1600], b[1600];
        snprintf(key, sizeof key, "%.*s", (int)klen, w);
        if (!line || strncmp(line, w, klen) || line[klen] != ' ')
            return tf_fail(TF_ERR_PARSE, "%s:%d: expected the '%s' line", path, line_no, key);
        if (strcmp(line, w))
            return tf_fail(TF_ERR_ARG, "%s:%d: the checkpoint was made with %s '%s', this run has '%s' (resume with "
                           "the %s it was made with)", path, line_no, key,
                           (differing(line + klen + 1, w + klen + 1, a, b, sizeof a), a), b,
                           !strcmp(key, "tensor") ? "tensor" : "same options");
    }
    while ((line = next_line(&p, &line_no))) {
        const char *v;
        if (ended) return tf_fail(TF_ERR_PARSE, "%s:%d: a line after 'end'", path, line_no);
        if ((v = field(line, "iteration"))) {
            unsigned k = 0;
            int used = 0;
            if (sscanf(v, "%u%n", &k, &used) != 1 || v[used] || k < 1)
                return tf_fail(TF_ERR_PARSE, "%s:%d: expected 'iteration K' (K >= 1)", path, line_no);
            c->done = k;
            have_iter = 1;
        } else if ((v = field(line, "converged"))) {
            if (strcmp(v, "0") && strcmp(v, "1"))
                return tf_fail(TF_ERR_PARSE, "%s:%d: expected 'converged 0' or 'converged 1'", path, line_no);
            c->converged = v[0] == '1';
        } else if ((v = field(line, "fits"))) {
            const char *s = v;
            for (;;) {
                while (*s == ' ') ++s;
                if (!*s) break;
                char *e = NULL;
                const double f = strtod(s, &e);
                if (e == s || !isfinite(f)) return tf_fail(TF_ERR_PARSE, "%s:%d: a fit is not a number", path, line_no);
                TF_TRY(push_fit(c, f));
                s = e;
            }
        } else if ((v = field(line, "extra"))) {
            const char *s = v;
            c->nextra = 0;
            for (;;) {
                while (*s == ' ') ++s;
                if (!*s) break;
                char *e = NULL;
                const double x = strtod(s, &e);
                if (e == s || !isfinite(x) || c->nextra == TF_CKPT_EXTRA)
                    return tf_fail(TF_ERR_PARSE, "%s:%d: expected at most %d numbers after 'extra'", path, line_no,
                                   TF_CKPT_EXTRA);
                c->extra[c->nextra++] = x;
                s = e;
            }
        } else if ((v = field(line, "aux"))) {
            TF_TRY(parse_aux(c, path, v, &p, &line_no));
        } else if (!strcmp(line, "end")) {
            ended = 1;
        } else {
            return tf_fail(TF_ERR_PARSE, "%s:%d: not a line of a tenfold checkpoint state", path, line_no);
        }
    }
    if (!ended) return tf_fail(TF_ERR_PARSE, "%s: cut short (no 'end' line)", path);
    if (!have_iter || c->nfits != c->done)
        return tf_fail(TF_ERR_PARSE, "%s: %u fits for %u iterations", path, c->nfits, c->done);
    return TF_OK;
}

tf_status tf_ckpt_load(tf_ckpt *c, tf_ktensor *k, tf_matrix *factors, uint32_t *order)
{
    const char *stem = c->opts->resume;
    if (!stem || !*stem) return TF_OK;
    char *body = NULL;
    tf_status sr = tf_factor_set_read_with(stem, STATE_SUFFIX, k, factors, order, &body);
    if (sr != TF_OK && c->dist) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tf_last_error());
        return tf_fail_shared(sr, "%s", msg);
    }
    if (sr != TF_OK) return sr;
    char path[4096];
    snprintf(path, sizeof path, "%s." STATE_SUFFIX, stem);
    tf_status s = body ? parse_state(c, path, body)
                       : tf_fail(TF_ERR_ARG, "%s: no such file: %s is a factor set but not a checkpoint", path, stem);
    free(body);
    if (s != TF_OK && c->dist) { /* every rank read the same files: the same failure everywhere */
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tf_last_error());
        s = tf_fail_shared(s, "%s", msg);
    }
    if (s != TF_OK) {
        if (k) tf_ktensor_free(k);
        else for (uint32_t m = 0; m < *order; ++m) tf_matrix_free(&factors[m]);
    }
    return s;
}

/* ------------------------------------------------------------ the write */

tf_status tf_ckpt_due(tf_ckpt *c, uint32_t it, double fit, int last, int *due)
{
    *due = 0;
    if (c->nfits + 1 != it)
        return tf_fail(TF_ERR_ARG, "checkpoint: iteration %u after %u recorded ones", it, c->nfits);
    TF_TRY(push_fit(c, fit));
    if (!c->opts->path || !*c->opts->path) return TF_OK;
    const uint32_t every = c->opts->every_iters;
    const double secs = c->opts->every_seconds;
    int d = last || (every == 0 && secs == 0.0) || (every && it % every == 0) ||
            (secs > 0.0 && tf_wtime() - c->t_last >= secs);
    if (c->dist && secs > 0.0) TF_TRY(c->dist->bcast_from(&d, sizeof d, 0)); /* rank 0's clock decides */
    *due = d;
    return TF_OK;
}

static tf_status write_set(tf_ckpt *c, const tf_ktensor *k, const tf_matrix *aux, const tf_ttensor *t,
                           uint32_t it, int converged)
{
    text s = {0};
    put(&s, "# tenfold checkpoint: the state a run goes on from (tenfold cpd / tucker --resume STEM)\n" STATE_MAGIC
            "\nmethod %s\n%siteration %u\nconverged %d\nfits", c->method, c->ident, it, converged != 0);
    for (uint32_t i = 0; i < c->nfits; ++i) put(&s, " %.17g", c->fits[i]);
    put(&s, "\n");
    if (c->nextra) {
        put(&s, "extra");
        for (uint32_t i = 0; i < c->nextra; ++i) put(&s, " %.17g", c->extra[i]);
        put(&s, "\n");
    }
    for (uint32_t m = 0; aux && k && m < k->order; ++m)
        if (aux[m].rows) put_matrix(&s, "aux", m, &aux[m]);
    put(&s, "end\n");
    if (s.bad) {
        free(s.p);
        return tf_fail(TF_ERR_NOMEM, "checkpoint: out of memory for the state");
    }
    const char *stem = c->opts->path;
    char path[4096];
    snprintf(path, sizeof path, "%s." STATE_SUFFIX, stem);
    tf_ktensor_out *o = NULL;
    tf_status st = t ? tf_ttensor_out_open(stem, &o) : tf_ktensor_out_open(stem, TF_KTENSOR_SPLATT, &o);
    if (st == TF_OK) st = t ? tf_ttensor_out_put(o, t) : tf_ktensor_out_put(o, k);
    if (st == TF_OK) st = tf_ktensor_out_add(o, path, s.p, s.len);
    if (st == TF_OK) st = tf_ktensor_out_commit(o);
    else if (o) tf_ktensor_out_abort(o);
    free(s.p);
    return st;
}

tf_status tf_ckpt_write(tf_ckpt *c, tf_ktensor *k, tf_matrix *aux, const tf_ttensor *t, uint32_t it, int converged)
{
    tf_status s = TF_OK;
    if (c->writer) {
        if (k && c->to_caller) s = c->to_caller(c->u, k, aux);
        if (s == TF_OK && k && c->lambda_exp)
            for (uint64_t r = 0; r < k->rank; ++r) k->lambda[r] = ldexp(k->lambda[r], c->lambda_exp);
        if (s == TF_OK) s = write_set(c, k, aux, t, it, converged);
    }
    c->t_last = tf_wtime();
    if (!c->dist) return s;
    int ok = s == TF_OK;
    const tf_status sb = c->dist->bcast_from(&ok, sizeof ok, 0);
    if (sb != TF_OK) return sb;
    if (!c->writer && !ok)
        return tf_fail(TF_ERR_IO, "checkpoint: rank 0 could not write %s (its message says why)", c->opts->path);
    return s;
}
