/* SPDX-License-Identifier: BSD-3-Clause */
/* Read-speed benchmark of the .tns parser and the binary format.
 *
 *   bench_read [DIR] [--nnz N] [--threads T] [--unsorted] [--keep]
 *
 * Generates (deterministically) a 3-mode tensor of about N = 10M non-zeros
 * with dims 2M x 1M x 200k, power-law skewed indices and small integer
 * values (counts), writes it as FROSTT .tns into DIR (default /tmp) -- sorted
 * like FROSTT files, or in random order with --unsorted -- and times
 * tf_read_tensor on it (median of 3), then the binary write and read.
 * --keep leaves both files in DIR (for profiling). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/rng.h"
#include "tenfold.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(double *t)
{
    qsort(t, 3, sizeof *t, cmp_double);
    return t[1];
}

static int die(const char *what, tf_status s)
{
    fprintf(stderr, "bench_read: %s: %s: %s\n", what, tf_status_name(s), tf_last_error());
    return 1;
}

/* Skewed index in 0..d-1: floor(d * u^(1/(1-alpha))), then scattered by a
 * multiplicative hash so that the heavy slices are not all at the start. */
static uint32_t skewed(tf_rng *r, uint64_t d, double alpha, uint64_t mult)
{
    double u = tf_rng_uniform(r);
    uint64_t i = (uint64_t)((double)d * pow(u, 1.0 / (1.0 - alpha)));
    if (i >= d) i = d - 1;
    return (uint32_t)((i * mult) % d);
}

static tf_status generate(uint64_t nnz, int unsorted, tf_tensor *t)
{
    const uint64_t dims[3] = {2000000, 1000000, 200000};
    const double alpha[3] = {0.5, 0.4, 0.3};
    const uint64_t mult[3] = {1000003, 999983, 199999}; /* coprime to the dims */
    tf_status s = tf_tensor_alloc(t, 3, dims, nnz);
    if (s != TF_OK) return s;
    tf_rng r;
    tf_rng_seed(&r, 20240601);
    for (uint64_t k = 0; k < nnz; ++k) {
        for (int m = 0; m < 3; ++m) t->ind[m][k] = skewed(&r, dims[m], alpha[m], mult[m]);
        t->vals[k] = (double)(1 + tf_rng_below(&r, 5));
    }
    if (unsorted) return TF_OK;
    return tf_tensor_canonicalize(t, NULL, NULL);
}

int main(int argc, char **argv)
{
    const char *dir = "/tmp";
    uint64_t nnz = 10000000;
    int threads = 2, unsorted = 0, keep = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--nnz") && i + 1 < argc) nnz = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--unsorted")) unsorted = 1;
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else if (argv[i][0] != '-') dir = argv[i];
        else {
            fprintf(stderr,
                    "usage: bench_read [DIR] [--nnz N] [--threads T] [--unsorted] [--keep]\n");
            return 2;
        }
    }
    char tns[4096], bin[4096];
    snprintf(tns, sizeof tns, "%s/bench_read_%d.tns", dir, (int)getpid());
    snprintf(bin, sizeof bin, "%s/bench_read_%d.bin", dir, (int)getpid());

    tf_tensor x;
    double t0 = tf_wtime();
    tf_status s = generate(nnz, unsorted, &x);
    if (s != TF_OK) return die("generate", s);
    double t_gen = tf_wtime() - t0;
    t0 = tf_wtime();
    s = tf_write_tensor(tns, &x, TF_FILE_TNS);
    double t_wtns = tf_wtime() - t0;
    if (s != TF_OK) return die("write tns", s);
    FILE *f = fopen(tns, "rb");
    fseek(f, 0, SEEK_END);
    double mb = (double)ftell(f) / 1e6;
    fclose(f);
    printf("tensor: 2000000 x 1000000 x 200000, %llu nnz (%s), %.1f MB of text, %d threads\n",
           (unsigned long long)x.nnz, unsorted ? "random order" : "sorted", mb, threads);
    printf("generate %.3f s, write .tns %.3f s (%.0f MB/s)\n", t_gen, t_wtns, mb / t_wtns);

    double times[3];
    tf_read_info info;
    for (int rep = 0; rep < 3; ++rep) {
        tf_tensor y;
        t0 = tf_wtime();
        s = tf_read_tensor(tns, threads, &y, &info);
        times[rep] = tf_wtime() - t0;
        if (s != TF_OK) return die("read tns", s);
        if (y.nnz != x.nnz && !unsorted) { fprintf(stderr, "nnz mismatch\n"); return 1; }
        tf_tensor_free(&y);
    }
    double tr = median3(times);
    printf("read .tns: median %.3f s  (%.0f MB/s, %.1f M nnz/s; runs %.3f %.3f %.3f)\n", tr,
           mb / tr, (double)info.entries / tr / 1e6, times[0], times[1], times[2]);

    if (unsorted) tf_tensor_canonicalize(&x, NULL, NULL);
    t0 = tf_wtime();
    s = tf_write_tensor(bin, &x, TF_FILE_BIN);
    double t_wbin = tf_wtime() - t0;
    if (s != TF_OK) return die("write bin", s);
    double bmb = (double)tf_tensor_bytes(&x) / 1e6;
    for (int rep = 0; rep < 3; ++rep) {
        tf_tensor y;
        t0 = tf_wtime();
        s = tf_read_tensor(bin, threads, &y, &info);
        times[rep] = tf_wtime() - t0;
        if (s != TF_OK) return die("read bin", s);
        tf_tensor_free(&y);
    }
    double tb = median3(times);
    printf("binary: write %.3f s (%.0f MB/s incl. fsync), read median %.3f s (%.0f MB/s)\n",
           t_wbin, bmb / t_wbin, tb, bmb / tb);
    if (keep) printf("kept %s and %s\n", tns, bin);
    else { unlink(tns); unlink(bin); }
    tf_tensor_free(&x);
    return 0;
}
