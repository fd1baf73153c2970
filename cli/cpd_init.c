/* SPDX-License-Identifier: BSD-3-Clause */
/* The start of `tenfold cpd` from a previous run's factor files (--init). */
#include "cpd_init.h"

#include <errno.h>
#include <math.h>
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

/* log2 of the squared norm of column r of f (rows x R, row-major),
 * computed scaled (no under- or overflow on the way); -INFINITY for a zero
 * column. */
static double log2_norm2(const tf_matrix *f, uint64_t r)
{
    double amax = 0.0, sum = 0.0;
    for (uint64_t i = 0; i < f->rows; ++i) amax = fmax(amax, fabs(f->data[i * f->cols + r]));
    if (!(amax > 0.0)) return -INFINITY;
    const int e = ilogb(amax);
    for (uint64_t i = 0; i < f->rows; ++i) {
        const double x = ldexp(f->data[i * f->cols + r], -e);
        sum += x * x;
    }
    return 2.0 * e + log2(sum);
}

/* The start's scale: CP-ALS first solves factor 1 from the others, through
 * the Hadamard product of their Grams, whose diagonal is, per component,
 * the product of those factors' squared column norms (and the model's
 * norm with it). Where one of these, or their product, is outside what a
 * double holds (with a margin for the sums and the solve), the run cannot
 * work: all zero, "converged" at fit 0, or "diverged" with no hint why. So
 * it is an error here, naming the file. Zero columns are left alone (a
 * component the start leaves out). */
#define INIT_LOG2_LIMIT 1000.0 /* 2^1000 ~ 1e301 */
static int check_scale(const cpd_init *c, uint32_t order)
{
    char path[4096];
    const uint64_t R = c->k.rank;
    for (uint64_t r = 0; r < R; ++r) {
        double sum = 0.0, lo = INFINITY, hi = -INFINITY;
        uint32_t mlo = 1, mhi = 1;
        int zero = 0;
        for (uint32_t m = 1; m < order && !zero; ++m) {
            const double l = log2_norm2(&c->k.factors[m], r);
            if (isinf(l)) { zero = 1; break; }
            if (l < lo) { lo = l; mlo = m; }
            if (l > hi) { hi = l; mhi = m; }
            sum += l;
        }
        if (zero) continue;
        const int under = lo < -INIT_LOG2_LIMIT || sum < -INIT_LOG2_LIMIT;
        if (!under && hi <= INIT_LOG2_LIMIT && sum <= INIT_LOG2_LIMIT) continue;
        const uint32_t m = under ? mlo : mhi;
        const double l = under ? lo : hi;
        mode_path(c, m + 1, path, sizeof path);
        return init_fail(c, "%s: column %llu has norm about 1e%.0f, too %s: the squared norms of column %llu in modes "
                            "2..%u multiply to about 2^%.0f, which %s a double (CP-ALS solves factor 1 from those "
                            "factors' Grams); rescale the factors (column norms near 1)",
                         path, (unsigned long long)r + 1, l / 2 * log10(2.0), under ? "small" : "large",
                         (unsigned long long)r + 1, order, sum, under ? "underflows" : "overflows");
    }
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
    if (check_scale(c, t->order)) return CLI_FAIL;
    return CLI_OK;
}

void cpd_init_free(cpd_init *c) { tf_ktensor_free(&c->k); }
