/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold stats: shape, per-mode slice-size distribution and skew, and the
 * memory each format needs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "progress.h"
#include "report.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold stats FILE|--gen SPEC [--base auto|0|1] [-t THREADS] [-q|-v]\n"
    "\n"
    "Prints the dims, nnz and density of the tensor in FILE; per mode, the number\n"
    "of non-empty slices, the min/mean/max non-zeros per non-empty slice and\n"
    "three skew measures (max/mean; Gini coefficient of the slice sizes over all\n"
    "slices, 0 = even, ->1 = concentrated; share of the non-zeros in the top 1%\n"
    "of slices); and the memory of each format: COO (exact), the CPU plans\n"
    "tenfold builds (exact), and CSF trees rooted at each mode (estimate from\n"
    "the exact fibre counts, assuming 4-byte ids and 8-byte pointers per level).\n"
    "\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      threads (default: all cores)\n"
    CLI_VERBOSITY_HELP
    "                       (-q: the two tables only)\n"
    "  -h, --help           this help\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int print_mode_stats(const tf_tensor *t)
{
    printf("%s%4s %12s %12s %10s %12s %10s %9s %6s %7s\n", cli_quiet() ? "" : "\n", "mode", "length", "non-empty", "min", "mean",
           "max", "max/mean", "gini", "top1%");
    for (uint32_t m = 0; m < t->order; ++m) {
        uint64_t ne = 0;
        uint64_t *cnt = cli_slice_counts(t, m, &ne);
        if (!cnt) return CLI_FAIL;
        const uint64_t dim = t->dims[m];
        qsort(cnt, ne, sizeof *cnt, cmp_u64); /* ascending; the dim - ne empty ones come first */
        double mean = ne ? (double)t->nnz / (double)ne : 0.0, weighted = 0.0;
        for (uint64_t j = 0; j < ne; ++j) weighted += (double)(dim - ne + j + 1) * (double)cnt[j];
        double gini = t->nnz ? 2.0 * weighted / ((double)dim * (double)t->nnz) - ((double)dim + 1) / (double)dim
                             : 0.0;
        uint64_t k = (dim + 99) / 100, top = 0;
        for (uint64_t j = 0; j < k && j < ne; ++j) top += cnt[ne - 1 - j];
        printf("%4u %12llu %12llu %10llu %12.1f %10llu %9.2f %6.3f %6.1f%%\n", m + 1,
               (unsigned long long)dim, (unsigned long long)ne, (unsigned long long)(ne ? cnt[0] : 0), mean,
               (unsigned long long)(ne ? cnt[ne - 1] : 0), mean > 0 ? (double)(ne ? cnt[ne - 1] : 0) / mean : 0.0,
               gini, t->nnz ? 100.0 * (double)top / (double)t->nnz : 0.0);
        free(cnt);
    }
    printf("(min/mean/max over non-empty slices; top1%%: share of nnz in the largest 1%% of slices)\n");
    return CLI_OK;
}

static void print_plan_bytes(const tf_tensor *t, tf_format fmt, int threads)
{
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.format = fmt;
    o.threads = threads;
    o.progress = cli_progress_fn();
    o.progress_user = (void *)"stats";
    tf_plan *p = NULL;
    char b[32];
    if (tf_plan_build(t, &o, &p) == TF_OK)
        printf("  %-34s %12s  exact (%s)\n", fmt == TF_FORMAT_COO ? "CPU plan coo" : "CPU plan csf",
               cli_bytes(b, sizeof b, (double)tf_plan_bytes(p)), tf_plan_describe(p));
    else
        printf("  %-34s %12s  (%s)\n", fmt == TF_FORMAT_COO ? "CPU plan coo" : "CPU plan csf", "n/a",
               tf_last_error());
    tf_plan_free(p);
}

/* CSF tree rooted at mode root, the other modes shortest first: sorts t
 * in that order and counts the distinct prefixes (nodes) at every level. */
static int csf_bytes(tf_tensor *t, uint32_t root, double *bytes)
{
    uint32_t ord[TF_MAX_ORDER], n = 0;
    ord[n++] = root;
    for (uint32_t m = 0; m < t->order; ++m)
        if (m != root) ord[n++] = m;
    for (uint32_t i = 2; i < n; ++i) /* insertion sort of ord[1..] by length */
        for (uint32_t j = i; j > 1 && t->dims[ord[j]] < t->dims[ord[j - 1]]; --j) {
            uint32_t x = ord[j]; ord[j] = ord[j - 1]; ord[j - 1] = x;
        }
    if (tf_tensor_sort(t, ord) != TF_OK) return cli_fail();
    uint64_t nodes[TF_MAX_ORDER] = {0};
    for (uint64_t k = 0; k < t->nnz; ++k) {
        uint32_t d = 0; /* first level where k differs from k-1 */
        if (k > 0)
            while (d < n && t->ind[ord[d]][k] == t->ind[ord[d]][k - 1]) ++d;
        for (uint32_t l = d; l < n; ++l) nodes[l]++;
    }
    double b = 8.0 * (double)t->nnz; /* values */
    for (uint32_t l = 0; l < n; ++l) {
        b += 4.0 * (double)nodes[l];                          /* ids      */
        if (l + 1 < n) b += 8.0 * (double)(nodes[l] + 1);     /* pointers */
    }
    *bytes = b;
    return CLI_OK;
}

int cmd_stats(int argc, char **argv)
{
    const char *threads = NULL;
    const char *base = NULL;
    const cli_opt opts[] = {{"threads", 't', &threads, NULL}, {"base", 0, &base, NULL}, CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    cli_args a;
    int rc = cli_parse(&a, "stats", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    int nthreads = 0;
    if ((rc = cli_threads("stats", threads, &nthreads))) return rc;

    tf_tensor t;
    tf_read_info info;
    if ((rc = cli_load_base("stats", a.pos[0], nthreads, base, &t, &info))) return rc;
    if (!cli_quiet()) {
        cli_print_problem(stdout, a.pos[0], &t, &info);
        cli_print_fixes(stdout, &t, &info);
    }
    if (cli_verbose()) cli_print_read(stdout, &info);
    if ((rc = print_mode_stats(&t))) goto done;

    char b[32];
    printf("\nmemory:\n");
    printf("  %-34s %12s  exact (%u x 4-byte indices + 8-byte value per non-zero)\n", "COO", 
           cli_bytes(b, sizeof b, (double)tf_tensor_bytes(&t)), t.order);
    print_plan_bytes(&t, TF_FORMAT_COO, nthreads);
    print_plan_bytes(&t, TF_FORMAT_CSF, nthreads);
    double all = 0;
    for (uint32_t m = 0; m < t.order; ++m) {
        double bytes = 0;
        if ((rc = csf_bytes(&t, m, &bytes))) goto done;
        char what[48];
        snprintf(what, sizeof what, "CSF rooted at mode %u", m + 1);
        printf("  %-34s %12s  estimate\n", what, cli_bytes(b, sizeof b, bytes));
        all += bytes;
    }
    printf("  %-34s %12s  estimate\n", "CSF, one tree per mode", cli_bytes(b, sizeof b, all));
done:
    tf_tensor_free(&t);
    return rc;
}
