/* SPDX-License-Identifier: BSD-3-Clause */
/* MTTKRP benchmark on a synthetic power-law tensor (the target case):
 * generates the tensor with tf_generate, then for each CPU format reports
 * the plan build time, its memory, and the median time of each mode's
 * MTTKRP after a warm-up run, and the all-mode total.
 *
 *   bench_mttkrp [--dims 2000000,1000000,200000] [--nnz 10000000]
 *                [--alpha 0.7] [-r 16] [-t 2] [--reps 5] [--seed 1]
 *                [--format coo,csf]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tenfold.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int fail(const char *what)
{
    fprintf(stderr, "bench_mttkrp: %s: %s\n", what, tf_last_error());
    return 1;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_mttkrp [--dims D1,D2,...] [--nnz N] [--alpha A] [-r R] [-t THREADS]"
                    " [--reps N] [--seed S] [--format coo,csf]\n");
    return 2;
}

/* Times every mode of one format; returns 0 on success. */
static int bench_format(const tf_tensor *X, tf_format fmt, int threads, const tf_matrix *F,
                        int reps)
{
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.format = fmt;
    o.threads = threads;
    o.rank_hint = F[0].cols;
    tf_plan *p = NULL;
    double t0 = tf_wtime();
    if (tf_plan_build(X, &o, &p) != TF_OK) return fail("plan build");
    double build = tf_wtime() - t0;
    printf("%-4s build %.3f s, %.1f MB (%s)\n", tf_format_name(fmt), build,
           (double)tf_plan_bytes(p) / 1e6, tf_plan_describe(p));
    double *times = calloc((size_t)reps, sizeof *times), total = 0;
    int rc = times ? 0 : 1;
    for (uint32_t m = 0; rc == 0 && m < X->order; ++m) {
        tf_matrix out;
        if (tf_matrix_alloc(&out, X->dims[m], F[0].cols) != TF_OK) { rc = fail("output"); break; }
        if (tf_plan_time_mttkrp(p, m, F, &out, 1, reps, times) != TF_OK) rc = fail("mttkrp");
        else {
            double lo = times[0], med;
            for (int i = 1; i < reps; ++i) lo = times[i] < lo ? times[i] : lo;
            med = median(times, reps);
            total += med;
            printf("%-4s mode %u: median %8.2f ms  (min %8.2f ms)\n", tf_format_name(fmt), m + 1, med, lo);
        }
        tf_matrix_free(&out);
    }
    if (rc == 0) printf("%-4s all modes: %.2f ms\n", tf_format_name(fmt), total);
    free(times);
    tf_plan_free(p);
    return rc;
}

int main(int argc, char **argv)
{
    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.order = 3;
    g.dims[0] = 2000000; g.dims[1] = 1000000; g.dims[2] = 200000;
    g.nnz = 10000000;
    g.seed = 1;
    double alpha = 0.7;
    uint64_t R = 16;
    int threads = 2, reps = 5;
    const char *formats = "coo,csf";
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) return usage();
        if (!strcmp(a, "--dims")) {
            g.order = 0;
            for (char *s = (char *)v; *s && g.order < TF_MAX_ORDER; ++g.order) {
                g.dims[g.order] = strtoull(s, &s, 10);
                if (*s == ',') ++s;
            }
        } else if (!strcmp(a, "--nnz")) g.nnz = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--alpha")) alpha = atof(v);
        else if (!strcmp(a, "-r")) R = strtoull(v, NULL, 10);
        else if (!strcmp(a, "-t")) threads = atoi(v);
        else if (!strcmp(a, "--reps")) reps = atoi(v);
        else if (!strcmp(a, "--seed")) g.seed = strtoull(v, NULL, 10);
        else if (!strcmp(a, "--format")) formats = v;
        else return usage();
        ++i;
    }
    if (reps < 1 || R < 1) return usage();
    for (uint32_t m = 0; m < g.order; ++m) g.alpha[m] = alpha;

    tf_tensor X;
    double t0 = tf_wtime();
    if (tf_generate(&g, &X) != TF_OK) return fail("generate");
    printf("tensor: order %u, nnz %llu, alpha %.2f, generated in %.2f s; R=%llu, %d threads, %d reps\n",
           X.order, (unsigned long long)X.nnz, alpha, tf_wtime() - t0, (unsigned long long)R, threads,
           reps);

    tf_matrix F[TF_MAX_ORDER];
    memset(F, 0, sizeof F);
    for (uint32_t m = 0; m < X.order; ++m) {
        if (tf_matrix_alloc(&F[m], X.dims[m], R) != TF_OK) return fail("factors");
        for (uint64_t i = 0; i < X.dims[m] * R; ++i) F[m].data[i] = 1.0 / (double)(1 + (i * 7919) % 1013);
    }
    int rc = 0;
    char list[256];
    snprintf(list, sizeof list, "%s", formats);
    for (char *tok = strtok(list, ","); tok && rc == 0; tok = strtok(NULL, ",")) {
        int f = tf_format_parse(tok);
        if (f < 0) { fprintf(stderr, "bench_mttkrp: unknown format '%s'\n", tok); return 2; }
        rc = bench_format(&X, (tf_format)f, threads, F, reps);
    }
    for (uint32_t m = 0; m < X.order; ++m) tf_matrix_free(&F[m]);
    tf_tensor_free(&X);
    return rc;
}
