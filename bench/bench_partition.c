/* SPDX-License-Identifier: BSD-3-Clause */
/* The partitioner's two schedules on real tensors (src/front/partition.c):
 *
 *   bench_partition [--parts 2,4] FILE...
 *
 * For each tensor, each number of parts and each mode: the imbalance
 * (largest part's non-zeros over the mean, less 1) of the contiguous cut
 * and of longest-first, what auto takes, and the time to cut every mode
 * both ways. Host only; the numbers in bench/RESULTS.md ("Partitioner"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/partition.h"
#include "tenfold.h"

static int die(const char *what, tf_status s)
{
    fprintf(stderr, "bench_partition: %s: %s: %s\n", what, tf_status_name(s), tf_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    int parts[8] = {2, 4}, nparts = 2, first = 1;
    if (argc > 2 && !strcmp(argv[1], "--parts")) {
        nparts = 0;
        for (char *p = strtok(argv[2], ","); p && nparts < 8; p = strtok(NULL, ",")) parts[nparts++] = atoi(p);
        first = 3;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: bench_partition [--parts 2,4] FILE...\n");
        return 2;
    }
    printf("%-28s %5s %4s %9s %11s %13s %13s %8s\n", "tensor", "parts", "mode", "rows", "heaviest %",
           "contiguous %", "longest-1st %", "auto");
    for (int f = first; f < argc; ++f) {
        tf_tensor X;
        tf_status s = tf_read_tensor(argv[f], 0, &X, NULL);
        if (s != TF_OK) return die(argv[f], s);
        const char *name = strrchr(argv[f], '/') ? strrchr(argv[f], '/') + 1 : argv[f];
        for (int q = 0; q < nparts; ++q) {
            tf_partition c, l, a;
            double t0 = tf_wtime();
            s = tf_partition_make(&c, &X, parts[q], TF_PARTITION_CONTIGUOUS, NULL);
            const double tc = tf_wtime() - t0;
            t0 = tf_wtime();
            if (s == TF_OK) s = tf_partition_make(&l, &X, parts[q], TF_PARTITION_LONGEST_FIRST, NULL);
            const double tl = tf_wtime() - t0;
            if (s == TF_OK) s = tf_partition_make(&a, &X, parts[q], TF_PARTITION_AUTO, NULL);
            if (s != TF_OK) return die("partition", s);
            for (uint32_t m = 0; m < X.order; ++m) {
                uint64_t *count = calloc(X.dims[m], sizeof *count), top = 0;
                for (uint64_t k = 0; k < X.nnz; ++k) count[X.ind[m][k]]++;
                for (uint64_t i = 0; i < X.dims[m]; ++i) top = count[i] > top ? count[i] : top;
                free(count);
                printf("%-28s %5d %4u %9llu %11.2f %13.2f %13.2f %8s\n", name, parts[q], m + 1,
                       (unsigned long long)X.dims[m], 100.0 * (double)top / (double)X.nnz, 100.0 * c.imbalance[m],
                       100.0 * l.imbalance[m],
                       a.schedule[m] == TF_PARTITION_LONGEST_FIRST ? "longest" : "contig");
            }
            printf("%-28s %5d cut every mode: contiguous %.1f ms, longest-first %.1f ms (relabel included)\n", name,
                   parts[q], 1e3 * tc, 1e3 * tl);
            tf_partition_free(&c);
            tf_partition_free(&l);
            tf_partition_free(&a);
        }
        tf_tensor_free(&X);
    }
    return 0;
}
