/* SPDX-License-Identifier: BSD-3-Clause */
/* The exchange that lands split (src/front/partition.c): on 1, 2 and 3 MPI
 * ranks, for every mode, with and without pairs, a GPU rank's shards made
 * straight from the exchange (tf_partition_exchange with shift,
 * tf_partition_exchange_pairs, and the set's split, tf_partition_shards)
 * equal the gathered shard split after (tf_partition_split of
 * tf_partition_exchange without shift) and a plain loop's over the whole
 * tensor element for element: counts, dims, every index and value in the
 * same order. Random tensors in random order,
 * cut by every schedule (longest-first relabels), parts of the non-zeros by
 * ranges of them (even, one rank with none, one rank with 7/8 of them), a
 * mode shorter than the ranks (a rank without rows there), no non-zeros at
 * all, one thread and several, MPI rounds of the default size and of a
 * hundred records or so, and the part packed in one round or in chunks of
 * 150 non-zeros or so (tf_dist.pack_bytes: tens of rounds, more on the
 * rank with 7/8, none on the rank without). Run plainly
 * it checks one rank in its own process, then starts itself on 2 and 3
 * ranks (mpirun); skipped (77) without MPI in the build or without mpirun. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/environment.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "front/partition.h"
#include "gpu_test_tensors.h"
#include "mpi_self.h"
#include "seams/dist.h"
#include "seams/shards.h"

static const int schedules[] = {TF_PARTITION_CONTIGUOUS, TF_PARTITION_LONGEST_FIRST, TF_PARTITION_AUTO};

/* X's non-zeros in a random order (the exchange keeps each part's order:
 * the canonical order would hide a reordering). */
static void shuffle(tf_tensor *X, uint64_t seed)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    for (uint64_t k = X->nnz; k > 1; --k) {
        const uint64_t j = tf_rng_below(&rng, k);
        const double v = X->vals[k - 1];
        X->vals[k - 1] = X->vals[j];
        X->vals[j] = v;
        for (uint32_t m = 0; m < X->order; ++m) {
            const uint32_t t = X->ind[m][k - 1];
            X->ind[m][k - 1] = X->ind[m][j];
            X->ind[m][j] = t;
        }
    }
}

/* Non-zeros k0..k1-1 of X, as a rank's part. */
static void range_of(const tf_tensor *X, uint64_t k0, uint64_t k1, tf_tensor *out)
{
    CHECK_OK(tf_tensor_alloc(out, X->order, X->dims, k1 - k0));
    for (uint32_t m = 0; m < X->order; ++m) memcpy(out->ind[m], X->ind[m] + k0, (k1 - k0) * sizeof *X->ind[m]);
    memcpy(out->vals, X->vals + k0, (k1 - k0) * sizeof *X->vals);
}

/* The same tensor: order, counts, dims, and every index and value in order. */
static int same(const tf_tensor *a, const tf_tensor *b)
{
    if (a->order != b->order || a->nnz != b->nnz) return 0;
    int ok = 1;
    for (uint32_t m = 0; m < a->order; ++m) {
        ok &= a->dims[m] == b->dims[m];
        ok &= !a->nnz || memcmp(a->ind[m], b->ind[m], a->nnz * sizeof *a->ind[m]) == 0;
    }
    return ok && (!a->nnz || memcmp(a->vals, b->vals, a->nnz * sizeof *a->vals) == 0);
}

/* Row i of mode m in the run's labels. */
static uint64_t lab(const tf_partition *pt, uint32_t m, uint64_t i) { return pt->relabel[m] ? pt->relabel[m][i] : i; }

/* What this rank's shards of mode m must be, by a plain loop over the whole
 * X (the ranks' parts are consecutive ranges of it, in rank order): its
 * non-zeros in X's order, in the run's labels, the mode shifted; with
 * pairs, out[0] those whose previous index is one of its rows there. */
static void expect(const tf_tensor *X, const tf_partition *pt, uint32_t m, int rank, int pairs, tf_tensor *out)
{
    const uint32_t prev = (m + X->order - 1) % X->order;
    const uint64_t *lo = pt->row_lo[m], *plo = pt->row_lo[prev], rows = lo[rank + 1] - lo[rank];
    uint64_t dims[TF_MAX_ORDER], n[2] = {0, 0};
    memcpy(dims, X->dims, sizeof dims);
    dims[m] = rows ? rows : 1;
    for (int h = 0; h < 2; ++h) CHECK_OK(tf_tensor_alloc(&out[h], X->order, dims, X->nnz));
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const uint64_t i = lab(pt, m, X->ind[m][k]), j = lab(pt, prev, X->ind[prev][k]);
        if (i < lo[rank] || i >= lo[rank + 1]) continue;
        const int h = pairs && !(j >= plo[rank] && j < plo[rank + 1]);
        const uint64_t e = n[h]++;
        for (uint32_t q = 0; q < X->order; ++q) out[h].ind[q][e] = (uint32_t)lab(pt, q, X->ind[q][k]);
        out[h].ind[m][e] -= (uint32_t)lo[rank];
        out[h].vals[e] = X->vals[k];
    }
    for (int h = 0; h < 2; ++h) out[h].nnz = n[h];
}

/* The set's split (a GPU rank's tf_shards of a distributed input) of mode m. */
static int set_same(const tf_tensor *mine, const tf_partition *pt, const tf_dist *d, uint32_t m, int pairs,
                    const tf_tensor *want)
{
    tf_partition_shards set;
    tf_shards sh;
    tf_tensor got[2];
    CHECK_OK(tf_partition_shards_make(&set, mine, pt, d->rank, 1, pairs, d, 1, &sh));
    CHECK_OK(sh.split(sh.user, m, got));
    int ok = 1;
    for (int h = 0; h < (pairs ? 2 : 1); ++h) ok &= same(&got[h], &want[h]);
    tf_partition_shards_free(&set);
    return ok;
}

/* Every mode, with and without pairs: the direct result against the split
 * of the gathered shard, and its counts against the partition's. */
static void check_modes(const tf_tensor *X, const tf_tensor *mine, const tf_partition *pt, const tf_dist *d,
                        const char *what)
{
    for (uint32_t m = 0; m < mine->order; ++m) {
        tf_tensor all;
        CHECK_OK(tf_partition_exchange(mine, pt, m, d, 0, &all));
        for (int pairs = 0; pairs < 2; ++pairs) {
            const int H = pairs ? 2 : 1;
            tf_tensor old[2], now[2], want[2];
            CHECK_OK(tf_partition_split(&all, pt, 0, m, pairs, d->rank, 1, old));
            expect(X, pt, m, d->rank, pairs, want);
            CHECK_OK(pairs ? tf_partition_exchange_pairs(mine, pt, m, d, now)
                           : tf_partition_exchange(mine, pt, m, d, 1, now));
            int ok = 1;
            uint64_t n = 0;
            for (int h = 0; h < H; ++h) {
                ok &= same(&now[h], &old[h]) && same(&now[h], &want[h]);
                n += now[h].nnz;
            }
            CHECKF(ok && n == pt->nnz[m][d->rank], "rank %d of %d, %s, schedule %d, mode %u%s: direct != split or != expected",
                   d->rank, d->size, what, pt->schedule[m], m + 1, pairs ? ", pairs" : "");
            CHECKF(set_same(mine, pt, d, m, pairs, old), "rank %d of %d, %s, mode %u%s: the set's split", d->rank,
                   d->size, what, m + 1, pairs ? ", pairs" : "");
            for (int h = 0; h < H; ++h) {
                tf_tensor_free(&old[h]);
                tf_tensor_free(&now[h]);
            }
            for (int h = 0; h < 2; ++h) tf_tensor_free(&want[h]);
        }
        tf_tensor_free(&all);
    }
}

/* How X's non-zeros are cut among the ranks (by ranges, in rank order). */
enum { EVEN, SKIP_ONE, LOPSIDED };

/* Rank me's range [*k0, *k1) of n non-zeros over P ranks: evenly, with
 * rank 1 holding none (SKIP_ONE), or rank 0 holding 7/8 and the others
 * sharing the rest (LOPSIDED: ranks with very different numbers of rounds
 * of the exchange). */
static void range_cut(uint64_t n, int P, int me, int how, uint64_t *k0, uint64_t *k1)
{
    if (how == LOPSIDED && P > 1) {
        const uint64_t big = n * 7 / 8, rest = n - big;
        *k0 = me ? big + rest * (uint64_t)(me - 1) / (uint64_t)(P - 1) : 0;
        *k1 = me ? big + rest * (uint64_t)me / (uint64_t)(P - 1) : big;
        return;
    }
    const int skip = how == SKIP_ONE && P > 1;
    const int holders = skip ? P - 1 : P, slot = skip && me > 1 ? me - 1 : me;
    *k0 = n * (uint64_t)slot / (uint64_t)holders;
    *k1 = n * (uint64_t)(slot + 1) / (uint64_t)holders;
    if (skip && me == 1) *k0 = *k1 = 0;
}

/* X cut among the ranks by ranges of its non-zeros (range_cut's `how`);
 * every schedule. */
static void check_tensor(const tf_tensor *X, const tf_dist *d, int how, const char *what)
{
    uint64_t k0 = 0, k1 = 0;
    range_cut(X->nnz, d->size, d->rank, how, &k0, &k1);
    tf_tensor mine;
    range_of(X, k0, k1, &mine);
    char label[160];
    snprintf(label, sizeof label, "%s, cut %d, packed by %llu B, rounds of %llu B", what, how,
             (unsigned long long)d->pack_bytes, (unsigned long long)d->round_bytes);
    for (size_t k = 0; k < sizeof schedules / sizeof schedules[0]; ++k) {
        tf_partition pt;
        CHECK_OK(tf_partition_make(&pt, &mine, d->size, schedules[k], d)); /* rows counted over the ranks */
        check_modes(X, &mine, &pt, d, label);
        tf_partition_free(&pt);
    }
    tf_tensor_free(&mine);
}

static void check_spec(tt_spec sp, const tf_dist *d, const char *what)
{
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X)); /* the same on every rank */
    shuffle(&X, sp.seed + 100);
    check_tensor(&X, d, EVEN, what);
    check_tensor(&X, d, SKIP_ONE, what);
    check_tensor(&X, d, LOPSIDED, what);
    tf_tensor_free(&X);
}

static void check_all(const tf_dist *d)
{
    const uint64_t d3[] = {300, 200, 5}, d4[] = {40, 2, 60, 7};
    tt_spec hot = tt_spec_make(3, d3, 20000, 2);
    hot.hot_mode = 0; /* row 150 of mode 1 holds 60 %: longest-first relabels */
    hot.hot_row = 150;
    hot.hot_share = 0.6;
    check_spec(tt_spec_make(3, d3, 20000, 1), d, "order 3");
    check_spec(hot, d, "order 3, a hot row");
    check_spec(tt_spec_make(4, d4, 5000, 3), d, "order 4, a mode of 2 rows"); /* 3 ranks: one without rows */
    check_spec(tt_spec_make(3, d3, 0, 4), d, "no non-zeros");
}


/* Every case with one thread, several, rounds of a hundred records or so,
 * and the part packed in chunks of 150 or so non-zeros (tens of the
 * exchange's rounds, each moved in one round or in several). */
static void check_threads_rounds(tf_dist *d)
{
    check_all(d);
    tf_test_set_threads(3); /* the packing's blocks per thread */
    check_all(d);
    d->pack_bytes = 3000;
    check_all(d);
    tf_test_set_threads(1);
    d->round_bytes = 2000;
    check_all(d);
    d->pack_bytes = 0;
    check_all(d);
    d->round_bytes = 0;
}

static int on_ranks(int argc, char **argv)
{
    int rank = 0, size = 1;
    CHECK_OK(tf_mpi_start(&argc, &argv, &rank, &size));
    tf_dist d;
    memset(&d, 0, sizeof d);
    CHECK_OK(tf_dist_world(&d));
    check_threads_rounds(&d);
    char name[64];
    snprintf(name, sizeof name, "test_partition_exchange (rank %d of %d)", rank, size);
    const int rc = tf_test_finish(name);
    tf_mpi_stop();
    return rc;
}

/* One rank's collectives (MPI starts only with several ranks): its own
 * counts back, sums as they are. */
static tf_status one_alltoall(const void *send, const uint64_t *send_n, uint32_t rec, uint64_t round_bytes, void **recv,
                              uint64_t *recv_total)
{
    (void)round_bytes;
    *recv = malloc(send_n[0] * rec + 1);
    memcpy(*recv, send, send_n[0] * rec);
    *recv_total = send_n[0];
    return TF_OK;
}

static tf_status one_sum(double *x, uint64_t n)
{
    (void)x, (void)n;
    return TF_OK;
}

int main(int argc, char **argv)
{
    if (tf_env_launcher_ranks() > 1) return on_ranks(argc, argv);
    tf_dist one; /* one rank in this process, then 2 and 3 under mpirun */
    memset(&one, 0, sizeof one);
    one.size = 1;
    one.alltoall_records = one_alltoall;
    one.allreduce_sum = one_sum;
    check_threads_rounds(&one);
    const int nps[] = {2, 3};
    return tf_test_mpi_selves("test_partition_exchange", argv[0], nps, 2, 300);
}
