/* SPDX-License-Identifier: BSD-3-Clause */
/* The partitioner (src/front/partition.c). Contiguous cuts: the parts' row
 * ranges tile every mode in order, each part's non-zeros within half the
 * heaviest row of the balanced share (rows are never split), the CSR cut
 * the same rule. Longest-first: on row counts written out (30 40 30 over 2
 * parts: contiguous 70, longest-first 60) and on random counts -- every row
 * gets one new label, each part's rows one range in their old order, the
 * loads sum to the non-zeros, the largest within the mean plus the largest
 * block and (small cases, the optimum by search) within 4/3 of the optimum;
 * auto takes it only for more than 2 % of the mean. Shards partition the
 * non-zeros exactly, in the run's labels; the split by the previous mode;
 * the ranks' exchange (one rank) gives the shard; factors map in and back.
 * A distributed context needs MPI started (one process here). */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "gpu_test_tensors.h"
#include "seams/dist.h"
#include "core/rng.h"
#include "core/alloc.h"
#include "front/partition.h"

static const int schedules[] = {TF_PARTITION_CONTIGUOUS, TF_PARTITION_LONGEST_FIRST, TF_PARTITION_AUTO};

/* Row i's label in the run. */
static uint64_t lab(const tf_partition *pt, uint32_t m, uint64_t i)
{
    return pt->relabel[m] ? pt->relabel[m][i] : i;
}

/* The non-zeros of rows [lo, hi) of the run's labels of mode m. */
static uint64_t nnz_in(const tf_tensor *X, const tf_partition *pt, uint32_t m, uint64_t lo, uint64_t hi)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const uint64_t i = lab(pt, m, X->ind[m][k]);
        n += i >= lo && i < hi;
    }
    return n;
}

static void check_mode(const tf_tensor *X, int size, int schedule, const char *what)
{
    tf_partition pt;
    CHECK_OK(tf_partition_make(&pt, X, size, schedule, NULL));
    for (uint32_t m = 0; m < X->order; ++m) {
        const uint64_t *lo = pt.row_lo[m];
        uint64_t *count = calloc(X->dims[m] + 1, sizeof *count), heaviest = 0;
        for (uint64_t k = 0; k < X->nnz; ++k) count[X->ind[m][k]]++;
        for (uint64_t i = 0; i < X->dims[m]; ++i) heaviest = count[i] > heaviest ? count[i] : heaviest;
        int ok = lo[0] == 0 && lo[size] == X->dims[m];
        uint64_t total = 0, prefix = 0, most = 0;
        for (int r = 0; r < size; ++r) {
            ok &= lo[r] <= lo[r + 1];
            tf_tensor part;
            memset(&part, 0, sizeof part);
            CHECK_OK(tf_partition_shard(X, &pt, m, r, &part));
            for (uint64_t k = 0; k < part.nnz; ++k) ok &= part.ind[m][k] >= lo[r] && part.ind[m][k] < lo[r + 1];
            ok &= part.nnz == nnz_in(X, &pt, m, lo[r], lo[r + 1]);
            total += part.nnz;
            prefix += part.nnz;
            most = part.nnz > most ? part.nnz : most;
            /* contiguous: the running share ends within half the heaviest row of its target */
            const double target = (double)X->nnz * (r + 1) / size;
            if (pt.schedule[m] == TF_PARTITION_CONTIGUOUS) {
                ok &= !pt.relabel[m];
                ok &= r + 1 == size || (double)prefix <= target + heaviest / 2.0 + 0.5;
                ok &= r + 1 == size || (double)prefix >= target - heaviest / 2.0 - 0.5;
            }
            tf_tensor_free(&part);
        }
        ok &= total == X->nnz;
        ok &= X->nnz ? fabs(pt.imbalance[m] - ((double)most * size / X->nnz - 1.0)) < 1e-12 : pt.imbalance[m] == 0;
        ok &= schedule == TF_PARTITION_AUTO || size == 1 || pt.schedule[m] == schedule;
        CHECKF(ok, "%s: mode %u over %d parts, schedule %d (took %d)", what, m + 1, size, schedule, pt.schedule[m]);
        /* the cut from every row's count (tf_partition_cut, the same schedule):
         * the same rows, labels, schedule and loads (tf_partition_make cuts
         * large modes from counts by blocks of rows, exact near the cuts) */
        for (uint64_t i = 0; i < X->dims[m]; ++i) count[i + 1] += count[i];
        memmove(count + 1, count, X->dims[m] * sizeof *count);
        count[0] = 0;
        if (pt.schedule[m] == TF_PARTITION_CONTIGUOUS) {
            uint64_t plo[70];
            (void)tf_partition_contiguous(count, X->dims[m], size, plo);
            ok = 1;
            for (int r = 0; r <= size; ++r) ok &= plo[r] == lo[r];
            CHECKF(ok, "%s: mode %u over %d: tf_partition_contiguous differs from tf_partition_make", what, m + 1,
                   size);
        }
        uint64_t rlo[70];
        uint32_t *rel = NULL;
        int used = -1;
        double imb = -1;
        CHECK_OK(tf_partition_cut(count, X->dims[m], size, schedule, rlo, &rel, &used, &imb));
        ok = used == pt.schedule[m] && imb == pt.imbalance[m] && !rel == !pt.relabel[m];
        for (int r = 0; r <= size; ++r) ok &= rlo[r] == lo[r];
        for (uint64_t i = 0; rel && pt.relabel[m] && i < X->dims[m]; ++i) ok &= rel[i] == pt.relabel[m][i];
        for (int r = 0; r < size; ++r) ok &= pt.nnz[m][r] == nnz_in(X, &pt, m, lo[r], lo[r + 1]);
        CHECKF(ok, "%s: mode %u over %d, schedule %d: tf_partition_make (took %d, %.6g) differs from the cut of every "
                   "row's count (took %d, %.6g)",
               what, m + 1, size, schedule, pt.schedule[m], pt.imbalance[m], used, imb);
        tf_free(rel);
        free(count);
    }
    tf_partition_free(&pt);
}

/* tf_partition_contiguous on small CSR patterns written out: a heavy row at
 * the would-be boundary stays whole (in the part it is closer to), empty
 * rows, more parts than rows, no non-zeros. */
static void check_contiguous_cases(void)
{
    static const struct {
        uint64_t rows;
        uint64_t ptr[8];
        int size;
        uint64_t want[5];
    } cases[] = {
        {5, {0, 1, 2, 12, 13, 14}, 2, {0, 2, 5}},            /* heavy row 2 (10 of 14) at the middle: after it */
        {5, {0, 3, 4, 14, 15, 16}, 2, {0, 2, 5}},            /* 4 before, 10 in it: 8 is closer to 4 */
        {5, {0, 1, 2, 5, 7, 8}, 2, {0, 3, 5}},               /* 4 lies nearer 5 (after row 2) than 2 */
        {4, {0, 0, 0, 9, 9}, 3, {0, 2, 3, 4}},               /* empty rows around one row of all */
        {2, {0, 5, 10}, 4, {0, 0, 1, 1, 2}},                 /* more parts than rows: two empty */
        {3, {0, 0, 0, 0}, 2, {0, 3, 3}},                     /* no non-zeros */
        {6, {0, 2, 4, 6, 8, 10, 12}, 3, {0, 2, 4, 6}},       /* even */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        uint64_t lo[8];
        (void)tf_partition_contiguous(cases[c].ptr, cases[c].rows, cases[c].size, lo);
        int ok = 1;
        for (int r = 0; r <= cases[c].size; ++r) ok &= lo[r] == cases[c].want[r];
        CHECKF(ok, "tf_partition_contiguous case %zu: got %llu %llu %llu", c, (unsigned long long)lo[0],
               (unsigned long long)lo[1], (unsigned long long)lo[2]);
    }
}

/* Row counts written out: what each schedule gives and what auto takes. */
static void check_schedule_cases(void)
{
    static const struct {
        uint64_t rows;
        uint64_t count[6];
        int parts;
        uint64_t contiguous, longest; /* the largest part's non-zeros */
        int chosen;                   /* by auto */
        uint32_t relabel[6];          /* under longest-first; all 0: none (the identity) */
    } cases[] = {
        {3, {30, 40, 30}, 2, 70, 60, TF_PARTITION_LONGEST_FIRST, {1, 0, 2}}, /* 40 alone, 30 + 30 */
        {5, {15, 15, 40, 15, 15}, 2, 70, 55, TF_PARTITION_LONGEST_FIRST, {2, 3, 0, 4, 1}},
        {4, {26, 25, 24, 25}, 2, 51, 50, TF_PARTITION_CONTIGUOUS, {0, 2, 1, 3}},   /* 1 = 2 % of 50: not more */
        {4, {27, 25, 23, 25}, 2, 52, 50, TF_PARTITION_LONGEST_FIRST, {0, 2, 1, 3}}, /* 2 = 4 % of 50 */
        {3, {40, 30, 30}, 2, 60, 60, TF_PARTITION_CONTIGUOUS, {0}},                 /* the same rows: no map */
        {3, {30, 40, 30}, 3, 40, 40, TF_PARTITION_CONTIGUOUS, {1, 0, 2}},
        {4, {0, 0, 0, 0}, 2, 0, 0, TF_PARTITION_CONTIGUOUS, {0, 2, 1, 3}},          /* no non-zeros: rows spread */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        const uint64_t rows = cases[c].rows;
        uint64_t prefix[7] = {0}, lo[4], most = 0;
        for (uint64_t i = 0; i < rows; ++i) prefix[i + 1] = prefix[i] + cases[c].count[i];
        const uint64_t mc = tf_partition_contiguous(prefix, rows, cases[c].parts, lo);
        uint32_t relabel[6];
        CHECK_OK(tf_partition_longest_first(prefix, rows, cases[c].parts, lo, relabel, &most));
        int ok = mc == cases[c].contiguous && most == cases[c].longest;
        int none = 1;
        for (uint64_t i = 0; i < rows; ++i) none &= cases[c].relabel[i] == 0;
        for (uint64_t i = 0; i < rows; ++i) ok &= relabel[i] == (none ? i : cases[c].relabel[i]);
        CHECKF(ok, "schedule case %zu: contiguous %llu, longest-first %llu, labels %u %u %u", c,
               (unsigned long long)mc, (unsigned long long)most, relabel[0], relabel[1], relabel[2]);
        for (unsigned k = 0; k < 3; ++k) {
            uint32_t *map = NULL;
            int used = -1;
            double imb = -1;
            CHECK_OK(tf_partition_cut(prefix, rows, cases[c].parts, schedules[k], lo, &map, &used, &imb));
            const int want = schedules[k] == TF_PARTITION_AUTO ? cases[c].chosen
                             : cases[c].parts > 1         ? schedules[k]
                                                          : TF_PARTITION_CONTIGUOUS;
            const uint64_t m = want == TF_PARTITION_LONGEST_FIRST ? cases[c].longest : cases[c].contiguous;
            ok = used == want && (map != NULL) == (want == TF_PARTITION_LONGEST_FIRST && !none) &&
                 fabs(imb - (prefix[rows] ? (double)m * cases[c].parts / (double)prefix[rows] - 1.0 : 0.0)) < 1e-12;
            CHECKF(ok, "schedule case %zu, schedule %d: took %d, imbalance %g, map %s", c, schedules[k], used, imb,
                   map ? "made" : "none");
            free(map);
        }
    }
}

/* The best largest part of rows count[0..n) over P parts, by search (small n). */
static uint64_t optimum(const uint64_t *count, int n, int P, int i, uint64_t *load, uint64_t best)
{
    if (i == n) {
        uint64_t m = 0;
        for (int p = 0; p < P; ++p) m = load[p] > m ? load[p] : m;
        return m < best ? m : best;
    }
    for (int p = 0; p < P; ++p) {
        if (p > 0 && load[p] == load[p - 1]) continue; /* the same as an emptier twin */
        load[p] += count[i];
        if (load[p] < best) best = optimum(count, n, P, i + 1, load, best);
        load[p] -= count[i];
    }
    return best;
}

/* Longest-first on random counts (heavy rows, empty rows, long tails). */
static void check_longest_first_random(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4242);
    int bad_perm = 0, bad_range = 0, bad_order = 0, bad_load = 0, bad_bound = 0, bad_opt = 0, bad_auto = 0, opt_cases = 0;
    for (int trial = 0; trial < 600; ++trial) {
        const int small = trial % 2 == 0;
        const uint64_t rows = small ? 2 + (uint64_t)(tf_rng_uniform(&rng) * 8) : 1 + (uint64_t)(tf_rng_uniform(&rng) * 5000);
        const int parts = small ? 2 + (int)(tf_rng_uniform(&rng) * 2) : 1 + (int)(tf_rng_uniform(&rng) * 40);
        uint64_t *count = malloc(rows * sizeof *count), *prefix = malloc((rows + 1) * sizeof *prefix);
        uint64_t *lo = malloc((parts + 1) * sizeof *lo), *clo = malloc((parts + 1) * sizeof *clo);
        uint32_t *relabel = malloc(rows * sizeof *relabel);
        uint64_t biggest = 0;
        prefix[0] = 0;
        for (uint64_t i = 0; i < rows; ++i) {
            const double u = tf_rng_uniform(&rng);
            count[i] = u < 0.2 ? 0 : u < 0.9 ? (uint64_t)(tf_rng_uniform(&rng) * 20) : (uint64_t)(tf_rng_uniform(&rng) * 2000);
            prefix[i + 1] = prefix[i] + count[i];
            biggest = count[i] > biggest ? count[i] : biggest;
        }
        const uint64_t nnz = prefix[rows];
        uint64_t most = 0;
        CHECK_OK(tf_partition_longest_first(prefix, rows, parts, lo, relabel, &most));
        /* every row one label, each label once */
        char *seen = calloc(rows, 1);
        for (uint64_t i = 0; i < rows; ++i) {
            if (relabel[i] >= rows || seen[relabel[i]]) bad_perm++;
            else seen[relabel[i]] = 1;
        }
        free(seen);
        /* each part's rows one range, in their old order; the loads */
        bad_range += lo[0] != 0 || lo[parts] != rows;
        uint64_t sum = 0, top = 0;
        for (int p = 0; p < parts; ++p) {
            uint64_t load = 0, last = 0;
            int first = 1;
            for (uint64_t i = 0; i < rows; ++i) {
                if (relabel[i] < lo[p] || relabel[i] >= lo[p + 1]) continue;
                if (!first && relabel[i] != last + 1) bad_order++;
                last = relabel[i];
                first = 0;
                load += count[i];
            }
            sum += load;
            top = load > top ? load : top;
        }
        bad_load += sum != nnz || top != most;
        /* list scheduling: within the largest block of the mean (a block is
         * one row, or light rows up to nnz / (256 parts)) */
        const uint64_t cap = nnz / (256u * (unsigned)parts) ? nnz / (256u * (unsigned)parts) : 1;
        bad_bound += (double)most > (double)nnz / parts + (double)(biggest > cap ? biggest : cap) + 1e-9;
        if (small) { /* one row a block here: LPT's 4/3 - 1/(3P) of the optimum */
            uint64_t load[3] = {0, 0, 0};
            const uint64_t opt = optimum(count, (int)rows, parts, 0, load, UINT64_MAX);
            bad_opt += (double)most > (4.0 / 3.0 - 1.0 / (3.0 * parts)) * (double)opt + 1e-9;
            opt_cases++;
        }
        /* auto: longest-first exactly when it gains more than 2 % of the mean */
        const uint64_t mc = tf_partition_contiguous(prefix, rows, parts, clo);
        uint32_t *map = NULL;
        int used = -1;
        double imb = 0;
        CHECK_OK(tf_partition_cut(prefix, rows, parts, TF_PARTITION_AUTO, clo, &map, &used, &imb));
        const int want = parts > 1 && most < mc && (double)(mc - most) * parts > 0.02 * (double)nnz
                             ? TF_PARTITION_LONGEST_FIRST
                             : TF_PARTITION_CONTIGUOUS;
        bad_auto += used != want;
        free(map);
        free(count);
        free(prefix);
        free(lo);
        free(clo);
        free(relabel);
    }
    CHECKF(!bad_perm && !bad_range && !bad_order && !bad_load,
           "longest-first on random counts: %d labels not a permutation, %d bad ranges, %d out of order, %d bad loads",
           bad_perm, bad_range, bad_order, bad_load);
    CHECKF(!bad_bound && !bad_opt && opt_cases > 200,
           "longest-first: %d over the mean + the largest block, %d over 4/3 of the optimum (of %d)", bad_bound,
           bad_opt, opt_cases);
    CHECKF(!bad_auto, "auto: %d choices not by the 2 %% rule", bad_auto);
}

/* tf_partition_split of parts first..first+count-1 (of size), with and
 * without the split by the previous mode: every non-zero of those parts
 * lands in exactly one output, in X's order, every index in the run's
 * labels and the mode's shifted by the part's first row, in the local half
 * exactly when its previous index is one of the part's rows of that mode;
 * dims as promised; the partition's count of each part's non-zeros
 * (tf_partition.nnz, which sizes the shards cut on the GPUs) is theirs. */
static void check_split(const tf_tensor *X, int size, int schedule, int first, int count, const char *what)
{
    tf_partition pt;
    CHECK_OK(tf_partition_make(&pt, X, size, schedule, NULL));
    for (uint32_t m = 0; m < X->order; ++m) {
        const uint32_t prev = (m + X->order - 1) % X->order;
        const uint64_t *lo = pt.row_lo[m], *plo = pt.row_lo[prev];
        for (int pairs = 0; pairs < 2; ++pairs) {
            tf_tensor out[128];
            CHECK_OK(tf_partition_split(X, &pt, 1, m, pairs, first, count, out));
            int ok = 1;
            for (int p = 0; p < count; ++p) {
                const int r = first + p;
                const uint64_t rows = lo[r + 1] - lo[r];
                uint64_t at[2] = {0, 0};
                for (uint64_t k = 0; k < X->nnz; ++k) {
                    const uint64_t i = lab(&pt, m, X->ind[m][k]), j = lab(&pt, prev, X->ind[prev][k]);
                    if (i < lo[r] || i >= lo[r + 1]) continue;
                    const int half = pairs ? !(j >= plo[r] && j < plo[r + 1]) : 0;
                    const tf_tensor *o = &out[pairs ? 2 * p + half : p];
                    const uint64_t e = at[half]++;
                    ok &= e < o->nnz && o->vals[e] == X->vals[k];
                    for (uint32_t q = 0; ok && q < X->order; ++q)
                        ok &= o->ind[q][e] == lab(&pt, q, X->ind[q][k]) - (q == m ? lo[r] : 0);
                }
                for (int h = 0; h < (pairs ? 2 : 1); ++h) {
                    const tf_tensor *o = &out[pairs ? 2 * p + h : p];
                    ok &= o->nnz == at[h] && o->dims[m] == (rows ? rows : 1);
                    for (uint32_t q = 0; q < X->order; ++q) ok &= q == m || o->dims[q] == X->dims[q];
                }
                ok &= pt.nnz[m][r] == at[0] + at[1]; /* the count the GPUs size their shards by */
            }
            CHECKF(ok, "%s: split of mode %u, parts %d..%d of %d, schedule %d%s", what, m + 1, first,
                   first + count - 1, size, pt.schedule[m], pairs ? ", by the previous mode" : "");
            for (int q = 0; q < (pairs ? 2 : 1) * count; ++q) tf_tensor_free(&out[q]);
        }
    }
    tf_partition_free(&pt);
}

/* One rank's collectives for tf_partition_exchange (its own records back). */
static tf_status one_alltoall(const void *send, const uint64_t *send_n, uint32_t rec, uint64_t round_bytes, void **recv,
                              uint64_t *recv_total)
{
    *recv = malloc(send_n[0] * rec + 1);
    memcpy(*recv, send, send_n[0] * rec);
    *recv_total = send_n[0];
    return TF_OK;
}

/* A partition of one part whose modes are relabeled by random permutations:
 * the one rank's exchange equals its shard, and factors map in and back. */
static void check_relabeled_one_part(const tf_tensor *X)
{
    tf_partition pt;
    CHECK_OK(tf_partition_make(&pt, X, 1, TF_PARTITION_CONTIGUOUS, NULL));
    tf_rng rng;
    tf_rng_seed(&rng, 99);
    for (uint32_t m = 0; m < X->order; ++m) { /* Fisher-Yates */
        pt.relabel[m] = malloc(X->dims[m] * sizeof *pt.relabel[m]);
        for (uint64_t i = 0; i < X->dims[m]; ++i) pt.relabel[m][i] = (uint32_t)i;
        for (uint64_t i = X->dims[m]; i > 1; --i) {
            const uint64_t j = (uint64_t)(tf_rng_uniform(&rng) * i);
            const uint32_t t = pt.relabel[m][i - 1];
            pt.relabel[m][i - 1] = pt.relabel[m][j];
            pt.relabel[m][j] = t;
        }
    }
    CHECK(tf_partition_relabels(&pt));
    tf_dist d;
    memset(&d, 0, sizeof d);
    d.size = 1;
    d.alltoall_records = one_alltoall;
    for (uint32_t m = 0; m < X->order; ++m) {
        tf_tensor a, b;
        CHECK_OK(tf_partition_shard(X, &pt, m, 0, &a));
        CHECK_OK(tf_partition_exchange(X, &pt, m, &d, 0, &b));
        int ok = a.nnz == X->nnz && b.nnz == X->nnz;
        for (uint64_t k = 0; ok && k < X->nnz; ++k) {
            ok &= a.vals[k] == X->vals[k] && b.vals[k] == X->vals[k];
            for (uint32_t q = 0; q < X->order; ++q)
                ok &= a.ind[q][k] == pt.relabel[q][X->ind[q][k]] && b.ind[q][k] == a.ind[q][k];
        }
        CHECKF(ok, "relabeled mode %u: the shard and the one rank's exchange carry the run's labels", m + 1);
        tf_tensor_free(&a);
        tf_tensor_free(&b);
        /* a factor into the run's labels and back */
        const uint64_t I = X->dims[m], R = 3;
        double *f = malloc(I * R * sizeof *f), *g = malloc(I * R * sizeof *g), *h = malloc(I * R * sizeof *h);
        for (uint64_t e = 0; e < I * R; ++e) f[e] = (double)e;
        tf_partition_rows_in(pt.relabel[m], I, R, f, g);
        tf_partition_rows_out(pt.relabel[m], I, R, g, h);
        ok = memcmp(f, h, I * R * sizeof *f) == 0;
        for (uint64_t i = 0; i < I; ++i) ok &= g[(uint64_t)pt.relabel[m][i] * R + 1] == f[i * R + 1];
        CHECKF(ok, "mode %u: rows into the run's labels and back", m + 1);
        free(f);
        free(g);
        free(h);
    }
    tf_partition_free(&pt);
}

static void check_tensor(tt_spec sp, const char *what)
{
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    const int sizes[] = {1, 2, 3, 7, 64};
    for (unsigned k = 0; k < 3; ++k)
        for (unsigned i = 0; i < 5; ++i) check_mode(&X, sizes[i], schedules[k], what);
    for (unsigned k = 0; k < 2; ++k) {
        check_split(&X, 2, schedules[k], 0, 2, what);
        check_split(&X, 7, schedules[k], 2, 3, what);
        check_split(&X, 64, schedules[k], 0, 16, what);
    }
    check_relabeled_one_part(&X);
    tf_tensor_free(&X);
}

int main(void)
{
    const uint64_t d3[] = {300, 200, 5};
    tt_spec spec[3] = {tt_spec_make(3, d3, 20000, 1), tt_spec_make(3, d3, 20000, 2), tt_spec_make(3, d3, 0, 3)};
    spec[1].hot_mode = 0; /* row 150 of mode 1 holds 60 %, mode 2 uses every other row */
    spec[1].hot_row = 150;
    spec[1].hot_share = 0.6;
    spec[1].sparse_mode = 1;
    static const char *const what[3] = {"3-mode (a mode shorter than the ranks)",
                                        "a row with 60 % of the non-zeros, empty rows", "no non-zeros"};
    for (int i = 0; i < 3; ++i) check_tensor(spec[i], what[i]);
    /* modes of many more rows than the partitioner's blocks (8192): cut from
     * counts by blocks of 16, 8 and 1 rows; uniform (the block-wise cut
     * decides AUTO), and with a row of 30 % (AUTO weighs longest-first) */
    const uint64_t dl[] = {100000, 50000, 3000};
    tt_spec big[2] = {tt_spec_make(3, dl, 40000, 4), tt_spec_make(3, dl, 40000, 5)};
    big[1].hot_mode = 0;
    big[1].hot_row = 65535; /* the last row of a block */
    big[1].hot_share = 0.3;
    check_tensor(big[0], "long modes, uniform");
    check_tensor(big[1], "long modes, a row of 30 % at a block's end");
    check_contiguous_cases();
    check_schedule_cases();
    check_longest_first_random();

    /* a distributed context needs MPI running: one process here */
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.distributed = 1;
    tf_context *c = NULL;
    tf_status s = tf_context_create(&o, &c);
    CHECKF(s != TF_OK && c == NULL && (strstr(tf_last_error(), "MPI") != NULL), "distributed context: %d %s", (int)s,
           tf_last_error());
    int rank = -1, size = -1;
    CHECK_OK(tf_mpi_start(NULL, NULL, &rank, &size));
    CHECK(rank == 0 && size == 1);
    tf_mpi_stop();
    return tf_test_finish("test_partition");
}
