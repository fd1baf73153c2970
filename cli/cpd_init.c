/* SPDX-License-Identifier: BSD-3-Clause */
/* The start of `tenfold cpd` from a previous run's factor files (--init). */
#include "cpd_init.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "report.h"

/* "tenfold: --init STEM: ..." */
static int init_fail(const cpd_init *c, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int init_fail(const cpd_init *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tenfold: --init %s: ", c->stem);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return CLI_FAIL;
}

static void mode_path(const cpd_init *c, uint32_t mode1, char *buf, size_t len)
{
    snprintf(buf, len, "%s.mode%u.mat", c->stem, mode1);
}

static int exists(const char *path) { return access(path, F_OK) == 0 || errno != ENOENT; }

int cpd_init_read(cpd_init *c, const char *stem, uint64_t *rank)
{
    memset(c, 0, sizeof *c);
    c->stem = stem;
    if (!stem) return CLI_OK;
    char path[4096], first[4096];
    mode_path(c, 1, first, sizeof first);
    for (uint32_t n = 1;; ++n) {
        mode_path(c, n, path, sizeof path);
        if (n > 1 && !exists(path)) break; /* the first one must be there: its read says why not */
        if (n > TF_MAX_ORDER)
            return init_fail(c, "%s exists: more factor files than the %d modes a tensor can have", path,
                             TF_MAX_ORDER);
        if (tf_matrix_read(path, &c->f[n - 1]) != TF_OK) return init_fail(c, "%s", tf_last_error());
        c->nfiles = n;
        const uint64_t cols = c->f[n - 1].cols;
        if (n > 1 && cols != c->f[0].cols)
            return init_fail(c, "%s has %llu column%s, %s %llu (one column per component in every file)", path,
                             (unsigned long long)cols, cli_s(cols), first, (unsigned long long)c->f[0].cols);
    }
    const uint64_t R = c->f[0].cols;
    if (*rank && R != *rank)
        return init_fail(c, "%s has %llu column%s, expected %llu (-r %llu)", first, (unsigned long long)R, cli_s(R),
                         (unsigned long long)*rank, (unsigned long long)*rank);
    if (R > TF_MAX_RANK)
        return init_fail(c, "%s has %llu columns, more than the largest rank %u", first, (unsigned long long)R,
                         TF_MAX_RANK);
    snprintf(path, sizeof path, "%s.lambda.mat", stem);
    if (exists(path)) {
        if (tf_matrix_read(path, &c->lambda) != TF_OK) return init_fail(c, "%s", tf_last_error());
        const tf_matrix *l = &c->lambda;
        if (!((l->cols == 1 && l->rows == R) || (l->rows == 1 && l->cols == R)))
            return init_fail(c, "%s holds %llu x %llu values, expected %llu (one per component, as the factor "
                             "files have columns)", path, (unsigned long long)l->rows, (unsigned long long)l->cols,
                             (unsigned long long)R);
    }
    *rank = R;
    return CLI_OK;
}

int cpd_init_check(cpd_init *c, const tf_tensor *t)
{
    if (!c->stem) return CLI_OK;
    char path[4096], last[4096];
    mode_path(c, 1, path, sizeof path);
    mode_path(c, c->nfiles, last, sizeof last);
    if (c->nfiles != t->order) { /* one file per mode */
        char want[4096], missing[4096];
        mode_path(c, t->order, want, sizeof want);
        mode_path(c, c->nfiles + 1, missing, sizeof missing);
        if (c->nfiles < t->order)
            return init_fail(c, "%u factor file%s (%s .. %s) for an order-%u tensor: %s is missing", c->nfiles,
                             cli_s(c->nfiles), path, last, t->order, missing);
        return init_fail(c, "%u factor files (%s .. %s) for an order-%u tensor: expected %s .. %s", c->nfiles, path,
                         last, t->order, path, want);
    }
    for (uint32_t m = 0; m < t->order; ++m)
        if (c->f[m].rows != t->dims[m]) {
            mode_path(c, m + 1, path, sizeof path);
            return init_fail(c, "%s has %llu row%s, expected %llu (the length of mode %u)", path,
                             (unsigned long long)c->f[m].rows, cli_s(c->f[m].rows),
                             (unsigned long long)t->dims[m], m + 1);
        }
    tf_ktensor *k = &c->k;
    memset(k, 0, sizeof *k);
    k->order = t->order;
    k->rank = c->f[0].cols;
    memcpy(k->dims, t->dims, sizeof k->dims);
    for (uint32_t m = 0; m < t->order; ++m) k->factors[m] = c->f[m];
    k->lambda = c->lambda.data; /* NULL without STEM.lambda.mat: ones */
    return CLI_OK;
}

void cpd_init_free(cpd_init *c)
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&c->f[m]);
    tf_matrix_free(&c->lambda);
    memset(&c->k, 0, sizeof c->k);
}
