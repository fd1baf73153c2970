/* SPDX-License-Identifier: BSD-3-Clause */
/* The start of `tenfold cpd` from a previous run's factor files (--init). */
#include "cpd_init.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

int cpd_init_read(cpd_init *c, const char *stem, uint64_t *rank)
{
    memset(c, 0, sizeof *c);
    c->stem = stem;
    if (!stem) return CLI_OK;
    /* the library's reader: through STEM.set when there is one, so a set
     * being replaced by another run is read whole, old or new */
    if (tf_ktensor_read(stem, &c->k, &c->has_lambda) != TF_OK) return init_fail(c, "%s", tf_last_error());
    c->nfiles = c->k.order;
    char first[4096];
    mode_path(c, 1, first, sizeof first);
    const uint64_t R = c->k.rank;
    if (*rank && R != *rank)
        return init_fail(c, "%s has %llu column%s, expected %llu (-r %llu)", first, (unsigned long long)R, cli_s(R),
                         (unsigned long long)*rank, (unsigned long long)*rank);
    if (R > TF_MAX_RANK)
        return init_fail(c, "%s has %llu columns, more than the largest rank %u", first, (unsigned long long)R,
                         TF_MAX_RANK);
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
        if (c->k.dims[m] != t->dims[m]) {
            mode_path(c, m + 1, path, sizeof path);
            return init_fail(c, "%s has %llu row%s, expected %llu (the length of mode %u)", path,
                             (unsigned long long)c->k.dims[m], cli_s(c->k.dims[m]),
                             (unsigned long long)t->dims[m], m + 1);
        }
    return CLI_OK;
}

void cpd_init_free(cpd_init *c) { tf_ktensor_free(&c->k); }
