/* SPDX-License-Identifier: BSD-3-Clause */
/* --gen SPEC: parsing, the canonical form, and generating the tensor. */
#include "gen_spec.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

const char *cli_gen_arg;
static char canonical[1024];

/* Splits s at sep into at most max pieces of buf (a copy of s). */
static int split(char *buf, char sep, char **piece, int max)
{
    int n = 0;
    for (char *p = buf;;) {
        if (n == max) return max + 1;
        piece[n++] = p;
        char *c = strchr(p, sep);
        if (!c) return n;
        *c = '\0';
        p = c + 1;
    }
}

static int field_dims(const char *cmd, char *v, tf_gen_opts *o)
{
    char *piece[TF_MAX_ORDER + 1];
    int n = split(v, 'x', piece, TF_MAX_ORDER);
    if (n < TF_MIN_ORDER || n > TF_MAX_ORDER)
        return cli_usage(cmd, "--gen dims: expected %d to %d mode lengths joined by x (e.g. dims=2Mx1Mx200k)",
                         TF_MIN_ORDER, TF_MAX_ORDER);
    for (int m = 0; m < n; ++m) {
        int rc = cli_u64(cmd, "--gen dims", piece[m], 1, 1ULL << 32, &o->dims[m]);
        if (rc) return rc;
    }
    o->order = (uint32_t)n;
    return CLI_OK;
}

static int field_alpha(const char *cmd, char *v, double *alpha, int *n)
{
    char *piece[TF_MAX_ORDER + 1];
    *n = split(v, 'x', piece, TF_MAX_ORDER);
    if (*n > TF_MAX_ORDER) return cli_usage(cmd, "--gen alpha: at most %d values", TF_MAX_ORDER);
    for (int m = 0; m < *n; ++m) {
        int rc = cli_double_below(cmd, "--gen alpha", piece[m], 0.0, 1.0, &alpha[m]);
        if (rc) return rc;
    }
    return CLI_OK;
}

int cli_gen_parse(const char *cmd, const char *spec, tf_gen_opts *o)
{
    static const char *const names[] = {"dims", "nnz", "alpha", "seed", "rank", "noise", "counts"};
    enum { NAMES = sizeof names / sizeof *names };
    memset(o, 0, sizeof *o);
    o->seed = TF_DEFAULT_SEED;
    size_t len = strlen(spec);
    char *buf = malloc(len + 1), *field[16];
    if (!buf) return cli_usage(cmd, "--gen: out of memory");
    memcpy(buf, spec, len + 1);
    int nf = split(buf, ',', field, 15), seen[NAMES] = {0}, nalpha = 0, rc = CLI_OK;
    double alpha[TF_MAX_ORDER] = {0};
    if (nf > 15) rc = cli_usage(cmd, "--gen: too many fields in '%s'", spec);
    for (int i = 0; rc == CLI_OK && i < nf; ++i) {
        char *eq = strchr(field[i], '=');
        if (!eq) {
            rc = cli_usage(cmd, "--gen: expected key=value, got '%s' (e.g. dims=2Mx1Mx200k,nnz=20M,alpha=0.7)",
                           field[i]);
            break;
        }
        *eq = '\0';
        char *v = eq + 1;
        int k = 0;
        while (k < NAMES && strcmp(field[i], names[k])) ++k;
        if (k == NAMES) {
            rc = cli_usage(cmd, "--gen: unknown field '%s' (fields: dims, nnz, alpha, seed, rank, noise, counts)",
                           field[i]);
            break;
        }
        if (seen[k]++) {
            rc = cli_usage(cmd, "--gen %s: given twice", names[k]);
            break;
        }
        switch (k) {
        case 0: rc = field_dims(cmd, v, o); break;
        case 1: rc = cli_u64(cmd, "--gen nnz", v, 1, UINT64_MAX, &o->nnz); break;
        case 2: rc = field_alpha(cmd, v, alpha, &nalpha); break;
        case 3: rc = cli_u64(cmd, "--gen seed", v, 0, UINT64_MAX, &o->seed); break;
        case 4: rc = cli_u64(cmd, "--gen rank", v, 0, 1000000, &o->rank); break;
        case 5: rc = cli_double(cmd, "--gen noise", v, 0.0, 1e6, &o->noise); break;
        case 6: rc = cli_double(cmd, "--gen counts", v, 1.0, 1e12, &o->counts); break;
        }
    }
    free(buf);
    if (rc) return rc;
    if (!seen[0]) return cli_usage(cmd, "--gen: missing dims=D1xD2x... in '%s'", spec);
    if (!seen[1]) return cli_usage(cmd, "--gen: missing nnz=N in '%s'", spec);
    if (nalpha > 1 && nalpha != (int)o->order)
        return cli_usage(cmd, "--gen alpha: expected 1 or %u values (one per mode), got %d", o->order, nalpha);
    for (uint32_t m = 0; m < o->order; ++m) o->alpha[m] = nalpha > 1 ? alpha[m] : alpha[0];
    if (o->noise > 0 && o->rank == 0) return cli_usage(cmd, "--gen noise: needs a planted model (rank=R)");
    if (o->noise > 0 && o->counts > 0)
        return cli_usage(cmd, "--gen counts: not with noise (the counts are Poisson draws already)");
    return CLI_OK;
}

/* The shortest %g form that reads back as v. */
static int put_double(char *buf, size_t len, double v)
{
    int w = 0;
    for (int prec = 6; prec <= 17; ++prec) {
        w = snprintf(buf, len, "%.*g", prec, v);
        if (w < 0 || (size_t)w >= len || strtod(buf, NULL) == v) break;
    }
    return w;
}

const char *cli_gen_format(char *buf, size_t len, const tf_gen_opts *o)
{
    size_t at = 0;
#define PUT(...)                                                          \
    do {                                                                  \
        int w_ = at < len ? snprintf(buf + at, len - at, __VA_ARGS__) : 0; \
        if (w_ > 0) at += (size_t)w_;                                     \
    } while (0)
    buf[0] = '\0';
    PUT("dims=");
    for (uint32_t m = 0; m < o->order; ++m) PUT("%s%llu", m ? "x" : "", (unsigned long long)o->dims[m]);
    PUT(",nnz=%llu,alpha=", (unsigned long long)o->nnz);
    int same = 1;
    for (uint32_t m = 1; m < o->order; ++m) same &= o->alpha[m] == o->alpha[0];
    for (uint32_t m = 0; m < (same ? 1u : o->order); ++m) {
        if (m) PUT("x");
        if (at < len) at += (size_t)put_double(buf + at, len - at, o->alpha[m]);
    }
    PUT(",seed=%llu", (unsigned long long)o->seed);
    if (o->rank) {
        PUT(",rank=%llu", (unsigned long long)o->rank);
        if (o->noise > 0) {
            PUT(",noise=");
            if (at < len) at += (size_t)put_double(buf + at, len - at, o->noise);
        }
    }
    if (o->counts > 0) {
        PUT(",counts=");
        if (at < len) at += (size_t)put_double(buf + at, len - at, o->counts);
    }
#undef PUT
    if (at >= len && len > 0) buf[len - 1] = '\0';
    return buf;
}

const char *cli_generated(const char *path)
{
    if (!path || !cli_gen_arg || path != cli_gen_arg) return NULL;
    return canonical[0] ? canonical : cli_gen_arg;
}

static uint64_t gen_peak;

uint64_t cli_gen_peak(void) { return gen_peak; }

int cli_gen_load(const char *cmd, const char *spec, int threads, uint64_t part, uint64_t parts, tf_tensor *t,
                 tf_read_info *info)
{
    tf_gen_opts o;
    memset(t, 0, sizeof *t);
    memset(info, 0, sizeof *info);
    int rc = cli_gen_parse(cmd, spec, &o);
    if (rc) return rc;
    o.threads = threads;
    cli_gen_format(canonical, sizeof canonical, &o);
    tf_gen_info gi;
    if (tf_generate_part(&o, part, parts, t, &gi) != TF_OK) return cli_fail();
    info->seconds = gi.seconds;
    info->total_nnz = gi.total_nnz;
    gen_peak = gi.peak_bytes;
    if (parts > 1) /* what the ranks compare: the canonical SPEC's hash (no rank holds the whole to hash) */
        info->checksum = tf_checksum_bytes(canonical, strlen(canonical), 0, 1) | 1;
    return CLI_OK;
}
