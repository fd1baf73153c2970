/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU rank's shards of a distributed input on the host (src/front/partition.c,
 * issue 49): each mode's shard (or pair) gathered from the ranks' parts,
 * the way set_split makes them, against the way it made them before (the
 * shard gathered whole, tf_partition_exchange, then copied again split,
 * tf_partition_split):
 *
 *   mpirun -np 2 bench_exchange [new|old] [pairs 0|1] [nnz] [dims AxBxC] [alpha] [pack MiB]
 *
 * (defaults: new 1 20000000 2000000x1000000x200000 0.7 0; seed 7; pack: the
 * exchange's send buffer, tf_dist.pack_bytes, 0 its default). Each rank
 * generates its part (tf_generate_part), the rows are cut (auto), and then
 * for every mode: the seconds (the slowest rank's) and each rank's peak
 * resident memory in the mode (VmHWM, reset through /proc/self/clear_refs)
 * above what it held before the first (its part and the partition), in
 * bytes per non-zero of its part. Host
 * only; needs MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "front/partition.h"
#include "seams/dist.h"
#include "seams/shards.h"
#include "tenfold.h"

static int die(const char *what, tf_status s)
{
    fprintf(stderr, "bench_exchange: %s: %s: %s\n", what, tf_status_name(s), tf_last_error());
    return 1;
}

/* A field of /proc/self/status in bytes (VmRSS, VmHWM), or 0. */
static double status_bytes(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    const size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, field, n) && line[n] == ':') kb = atof(line + n + 1);
    if (f) fclose(f);
    return kb * 1024.0;
}

/* The peak resident memory from now on (VmHWM back to VmRSS). */
static void reset_peak(void)
{
    FILE *f = fopen("/proc/self/clear_refs", "w");
    if (f) {
        fputs("5", f);
        fclose(f);
    }
}

/* The way set_split made a distributed input's shards before: the shard
 * gathered whole, then copied split. */
static tf_status old_split(const tf_tensor *mine, const tf_partition *pt, uint32_t m, const tf_dist *d, int pairs,
                           tf_tensor *out)
{
    tf_tensor all;
    TF_TRY(tf_partition_exchange(mine, pt, m, d, 0, &all));
    const tf_status s = tf_partition_split(&all, pt, 0, m, pairs, d->rank, 1, out);
    tf_tensor_free(&all);
    return s;
}

static void parse_dims(const char *s, tf_gen_opts *g)
{
    g->order = 0;
    for (char *e = NULL; *s && g->order < TF_MAX_ORDER; s = *e ? e + 1 : e) g->dims[g->order++] = strtoull(s, &e, 10);
}

int main(int argc, char **argv)
{
    int rank = 0, size = 1;
    tf_status s = tf_mpi_start(&argc, &argv, &rank, &size);
    if (s != TF_OK) return die("MPI", s);
    const int old = argc > 1 && !strcmp(argv[1], "old"), pairs = argc > 2 ? atoi(argv[2]) : 1;
    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.nnz = argc > 3 ? strtoull(argv[3], NULL, 10) : 20000000;
    parse_dims(argc > 4 ? argv[4] : "2000000x1000000x200000", &g);
    for (uint32_t m = 0; m < g.order; ++m) g.alpha[m] = argc > 5 ? atof(argv[5]) : 0.7;
    g.seed = 7;
    tf_dist d;
    memset(&d, 0, sizeof d);
    tf_tensor mine;
    tf_partition pt;
    memset(&pt, 0, sizeof pt);
    if (size < 2) return die("ranks", tf_fail(TF_ERR_ARG, "run under mpirun with 2 ranks or more"));
    s = tf_dist_world(&d);
    d.pack_bytes = argc > 6 ? strtoull(argv[6], NULL, 10) << 20 : 0;
    if (s == TF_OK) s = tf_generate_part(&g, (uint64_t)rank, (uint64_t)size, &mine, NULL);
    if (s == TF_OK) s = tf_partition_make(&pt, &mine, size, TF_PARTITION_AUTO, &d);
    if (s != TF_OK) return die("setup", s);
    tf_partition_shards set;
    tf_shards sh;
    tf_tensor out[2];
    s = tf_partition_shards_make(&set, &mine, &pt, rank, 1, pairs, &d, 1, &sh);
    if (s != TF_OK) return die("shards", s);
    if (!rank)
        printf("%s, pairs %d, %d ranks, %llu non-zeros; per mode: seconds (slowest rank), each rank's peak above its "
               "part (B/nnz of its part)\n",
               old ? "old (exchange, then split)" : "new (split as they land)", pairs, size,
               (unsigned long long)g.nnz);
    double worst_peak = 0, total_t = 0;
    const double before = status_bytes("VmRSS"); /* the part, the partition: what a rank holds anyway */
    for (uint32_t m = 0; m < mine.order; ++m) {
        reset_peak();
        double t[1];
        double t0 = tf_wtime();
        if (old) {
            tf_partition_shards_free(&set); /* the previous mode's, as set_split frees them */
            set.count = 1;
            s = old_split(&mine, &pt, m, &d, pairs, set.shard);
        } else
            s = sh.split(sh.user, m, out);
        t[0] = tf_wtime() - t0;
        if (s != TF_OK) return die("split", s);
        d.allreduce_max(t, 1);
        total_t += t[0];
        double peak = (status_bytes("VmHWM") - before) / (double)(mine.nnz ? mine.nnz : 1);
        if (peak > worst_peak) worst_peak = peak;
        uint64_t n[2] = {set.shard[0].nnz, pairs ? set.shard[1].nnz : 0};
        printf("rank %d mode %u: %.3f s, peak +%.1f B/nnz, shard %llu + %llu of %llu\n", rank, m + 1, t[0], peak,
               (unsigned long long)n[0], (unsigned long long)n[1], (unsigned long long)pt.nnz[m][rank]);
        fflush(stdout);
    }
    printf("rank %d: all modes %.3f s, worst peak +%.1f B/nnz of its part (%llu non-zeros, %.0f MB)\n", rank, total_t,
           worst_peak, (unsigned long long)mine.nnz, (double)mine.nnz * (8 + 4.0 * mine.order) / 1e6);
    tf_partition_shards_free(&set);
    tf_partition_free(&pt);
    tf_tensor_free(&mine);
    tf_mpi_stop();
    return 0;
}
