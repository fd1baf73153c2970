/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_generate: determinism, exact distinct sorted non-zeros, the skew
 * model, planted values, counts, errors, and the output frozen in 0.2.0 (golden
 * checksums, and a serial copy of that algorithm on random shapes), and the
 * threshold over parts of the key space (the ranks' rank-local generation). */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "core/alloc.h"
#include "core/rng.h"
#include "gen/gen.h"
#include "gen_golden.h"
#include "tenfold.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static tf_gen_opts opts3(uint64_t d0, uint64_t d1, uint64_t d2, uint64_t nnz, double alpha, uint64_t seed)
{
    tf_gen_opts o = {0};
    o.order = 3;
    o.dims[0] = d0, o.dims[1] = d1, o.dims[2] = d2;
    o.nnz = nnz;
    for (int m = 0; m < 3; ++m) o.alpha[m] = alpha;
    o.seed = seed;
    return o;
}

static int same_tensor(const tf_tensor *a, const tf_tensor *b)
{
    if (a->order != b->order || a->nnz != b->nnz) return 0;
    for (uint32_t m = 0; m < a->order; ++m)
        if (a->dims[m] != b->dims[m] || memcmp(a->ind[m], b->ind[m], a->nnz * sizeof(uint32_t)))
            return 0;
    return !memcmp(a->vals, b->vals, a->nnz * sizeof(double));
}

/* -1, 0, 1 for the lexicographic order of non-zeros k and l. */
static int cmp_nz(const tf_tensor *t, uint64_t k, uint64_t l)
{
    for (uint32_t m = 0; m < t->order; ++m)
        if (t->ind[m][k] != t->ind[m][l]) return t->ind[m][k] < t->ind[m][l] ? -1 : 1;
    return 0;
}

/* Exactly o->nnz strictly increasing (so distinct) in-range coordinates and finite non-zero values. */
static void check_shape_sorted_distinct(const tf_gen_opts *o, const tf_tensor *t, const char *what)
{
    CHECKF(t->nnz == o->nnz, "%s: nnz %llu, expected %llu", what, (unsigned long long)t->nnz,
           (unsigned long long)o->nnz);
    CHECKF(t->order == o->order, "%s: order", what);
    for (uint32_t m = 0; m < o->order; ++m) CHECKF(t->dims[m] == o->dims[m], "%s: dims[%u]", what, m);
    CHECK_OK(tf_tensor_validate(t));
    uint64_t bad = 0, zeros = 0;
    for (uint64_t k = 1; k < t->nnz; ++k) bad += cmp_nz(t, k - 1, k) >= 0;
    for (uint64_t k = 0; k < t->nnz; ++k) zeros += t->vals[k] == 0.0;
    CHECKF(bad == 0, "%s: %llu coordinates not strictly increasing", what, (unsigned long long)bad);
    CHECKF(zeros == 0, "%s: %llu zero values", what, (unsigned long long)zeros);
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Share of the non-zeros of mode m in its top 1% slices (by count), and
 * in the slices with the lowest 1% of index values. */
static void slice_shares(const tf_tensor *t, uint32_t m, double *top, double *lowest)
{
    uint64_t d = t->dims[m], k = d / 100 ? d / 100 : 1, sum = 0, low = 0;
    uint64_t *cnt = calloc(d, sizeof *cnt);
    for (uint64_t z = 0; z < t->nnz; ++z) cnt[t->ind[m][z]]++;
    for (uint64_t i = 0; i < k; ++i) low += cnt[i];
    qsort(cnt, d, sizeof *cnt, cmp_desc);
    for (uint64_t i = 0; i < k; ++i) sum += cnt[i];
    *top = (double)sum / (double)t->nnz;
    *lowest = (double)low / (double)t->nnz;
    free(cnt);
}

static void test_determinism(void)
{
    tf_gen_opts o = opts3(3000, 2000, 500, 50000, 0.6, 7);
    tf_tensor a = {0}, b = {0}, c = {0};
    CHECK_OK(tf_generate(&o, &a));
    CHECK_OK(tf_generate(&o, &b));
    CHECK(same_tensor(&a, &b));
    check_shape_sorted_distinct(&o, &a, "alpha 0.6");
    for (uint64_t k = 0; k < a.nnz; ++k)
        if (!(a.vals[k] > 0.0 && a.vals[k] <= 1.0)) { CHECKF(0, "value %g outside (0,1]", a.vals[k]); break; }
    o.seed = 8;
    CHECK_OK(tf_generate(&o, &c));
    CHECK(!same_tensor(&a, &c));
    tf_tensor_free(&c);
#ifdef _OPENMP
    /* the same tensor with one thread and with several */
    int nt = omp_get_max_threads();
    omp_set_num_threads(1);
    o.seed = 7;
    CHECK_OK(tf_generate(&o, &c));
    CHECK(same_tensor(&a, &c));
    tf_tensor_free(&c);
    omp_set_num_threads(nt < 2 ? 3 : nt);
    CHECK_OK(tf_generate(&o, &c));
    CHECK(same_tensor(&a, &c));
    omp_set_num_threads(nt);
    tf_tensor_free(&c);
#endif
    tf_tensor_free(&a);
    tf_tensor_free(&b);
}

static void test_skew(void)
{
    /* P(index in the heaviest 1%) = 0.01^(1-alpha): 0.251 for alpha 0.7. */
    tf_gen_opts o = opts3(10000, 10000, 10000, 200000, 0.7, 11);
    tf_tensor t = {0};
    CHECK_OK(tf_generate(&o, &t));
    check_shape_sorted_distinct(&o, &t, "alpha 0.7");
    for (uint32_t m = 0; m < 3; ++m) {
        double top, low;
        slice_shares(&t, m, &top, &low);
        CHECKF(top > 0.22 && top < 0.30, "alpha 0.7 mode %u: top 1%% share %.3f, expected ~0.25", m, top);
        /* the permutation scatters the heavy indices */
        CHECKF(low < 0.05, "alpha 0.7 mode %u: lowest 1%% of indices hold %.3f", m, low);
    }
    tf_tensor_free(&t);

    o = opts3(10000, 10000, 10000, 200000, 0.0, 11);
    CHECK_OK(tf_generate(&o, &t));
    check_shape_sorted_distinct(&o, &t, "alpha 0");
    for (uint32_t m = 0; m < 3; ++m) {
        double top, low;
        slice_shares(&t, m, &top, &low);
        CHECKF(top < 0.02, "alpha 0 mode %u: top 1%% share %.3f, expected ~0.01", m, top);
    }
    tf_tensor_free(&t);

    /* per-mode alpha: only mode 2 skewed */
    o.alpha[2] = 0.8;
    CHECK_OK(tf_generate(&o, &t));
    double top0, top2, low;
    slice_shares(&t, 0, &top0, &low);
    slice_shares(&t, 2, &top2, &low);
    CHECKF(top0 < 0.02 && top2 > 0.3, "per-mode alpha: shares %.3f %.3f", top0, top2);
    tf_tensor_free(&t);
}

static void test_planted(void)
{
    tf_gen_opts o = opts3(300, 200, 100, 20000, 0.3, 5);
    o.rank = 4;
    tf_tensor t = {0};
    tf_ktensor k = {0};
    CHECK_OK(tf_generate(&o, &t));
    CHECK_OK(tf_gen_model(&o, &k));
    check_shape_sorted_distinct(&o, &t, "planted");
    double maxerr = 0;
    for (uint64_t z = 0; z < t.nnz; ++z) {
        double v = 0;
        for (uint64_t r = 0; r < o.rank; ++r)
            v += k.factors[0].data[t.ind[0][z] * o.rank + r] * k.factors[1].data[t.ind[1][z] * o.rank + r] *
                 k.factors[2].data[t.ind[2][z] * o.rank + r];
        maxerr = fmax(maxerr, fabs(v - t.vals[z]) / fabs(v));
    }
    CHECKF(maxerr < 1e-14, "planted values differ from the model by %g", maxerr);
    /* the public fit of the planted model on the tensor is ~1 only on the
     * non-zeros; check the model itself instead: noise adds a relative 10% */
    tf_tensor n = {0};
    o.noise = 0.1;
    CHECK_OK(tf_generate(&o, &n));
    CHECK(n.nnz == t.nnz && !memcmp(n.ind[0], t.ind[0], t.nnz * sizeof(uint32_t)));
    double d2 = 0, v2 = 0;
    for (uint64_t z = 0; z < t.nnz; ++z) {
        d2 += (n.vals[z] - t.vals[z]) * (n.vals[z] - t.vals[z]);
        v2 += t.vals[z] * t.vals[z];
    }
    double rel = sqrt(d2 / v2);
    CHECKF(rel > 0.09 && rel < 0.11, "noise 0.1 gave relative deviation %.4f", rel);
    tf_tensor_free(&n);
    tf_tensor_free(&t);
    tf_ktensor_free(&k);
}

/* Counts (tf_gen_opts.counts): integers >= 1 of the mean asked, Poisson's
 * variance, on the same coordinates; around a planted model the mean of a
 * value follows the model's; the same on 1 and 3 threads; errors. */
static void test_counts(void)
{
    tf_gen_opts o = opts3(300, 200, 100, 60000, 0.3, 9);
    tf_tensor plain = {0}, c = {0}, c3 = {0};
    CHECK_OK(tf_generate(&o, &plain));
    o.counts = 5.0;
    CHECK_OK(tf_generate(&o, &c));
    o.threads = 3;
    CHECK_OK(tf_generate(&o, &c3));
    o.threads = 0;
    check_shape_sorted_distinct(&o, &c, "counts");
    CHECK(c.nnz == plain.nnz && !memcmp(c.ind[2], plain.ind[2], c.nnz * sizeof(uint32_t)));
    CHECK(same_tensor(&c, &c3));
    double sum = 0, sq = 0;
    int integers = 1;
    for (uint64_t z = 0; z < c.nnz; ++z) {
        integers &= c.vals[z] >= 1.0 && c.vals[z] == floor(c.vals[z]);
        sum += c.vals[z];
        sq += (c.vals[z] - 5.0) * (c.vals[z] - 5.0);
    }
    const double mean = sum / (double)c.nnz, var = sq / (double)c.nnz;
    CHECKF(integers && fabs(mean - 5.0) < 0.05 && fabs(var - 4.0) < 0.15, "counts 5: mean %.4f (5), variance %.4f "
           "(4), all integers >= 1: %d", mean, var, integers);
    /* large means (the transformed rejection sampler) */
    o.counts = 1001.0;
    tf_tensor big = {0};
    CHECK_OK(tf_generate(&o, &big));
    sum = sq = 0;
    for (uint64_t z = 0; z < big.nnz; ++z) {
        sum += big.vals[z];
        sq += (big.vals[z] - 1001.0) * (big.vals[z] - 1001.0);
    }
    CHECKF(fabs(sum / (double)big.nnz - 1001.0) < 0.5 && fabs(sq / (double)big.nnz / 1000.0 - 1.0) < 0.03,
           "counts 1001: mean %.3f, variance %.1f", sum / (double)big.nnz, sq / (double)big.nnz);
    /* around a planted model: counts - 1 in proportion to it */
    o.counts = 21.0;
    o.rank = 3;
    tf_tensor pc = {0}, pm = {0};
    CHECK_OK(tf_generate(&o, &pc));
    o.counts = 0.0;
    CHECK_OK(tf_generate(&o, &pm));
    double mm = 0, num = 0, den = 0;
    for (uint64_t z = 0; z < pm.nnz; ++z) mm += pm.vals[z] / (double)pm.nnz;
    for (uint64_t z = 0; z < pm.nnz; ++z) { /* least-squares slope of counts - 1 on m / mean(m) */
        num += (pc.vals[z] - 1.0) * pm.vals[z] / mm;
        den += (pm.vals[z] / mm) * (pm.vals[z] / mm);
    }
    CHECKF(fabs(num / den - 20.0) < 0.3, "planted counts: slope %.3f against the model (20)", num / den);
    o.counts = 1.0;
    tf_tensor ones = {0};
    CHECK_OK(tf_generate(&o, &ones));
    int all1 = 1;
    for (uint64_t z = 0; z < ones.nnz; ++z) all1 &= ones.vals[z] == 1.0;
    CHECK(all1);
    tf_tensor bad = {0};
    o.counts = 0.5;
    CHECK_FAILS(tf_generate(&o, &bad), TF_ERR_ARG, "counts 0.5 is outside 1..1e12");
    o.counts = 3.0;
    o.noise = 0.1;
    CHECK_FAILS(tf_generate(&o, &bad), TF_ERR_ARG, "counts and noise do not combine");
    tf_tensor_free(&plain);
    tf_tensor_free(&c);
    tf_tensor_free(&c3);
    tf_tensor_free(&big);
    tf_tensor_free(&pc);
    tf_tensor_free(&pm);
    tf_tensor_free(&ones);
}

static void test_limits(void)
{
    tf_tensor t = {0};
    /* every cell */
    tf_gen_opts o = opts3(3, 4, 5, 60, 0.0, 1);
    CHECK_OK(tf_generate(&o, &t));
    check_shape_sorted_distinct(&o, &t, "full");
    tf_tensor_free(&t);
    /* one more than the cells */
    o.nnz = 61;
    CHECK(tf_generate(&o, &t) == TF_ERR_RANGE);
    CHECKF(strstr(tf_last_error(), "cells") != NULL, "message: %s", tf_last_error());
    CHECK(t.nnz == 0 && t.vals == NULL);
    /* strong skew, nearly full: rejection too slow -> clear error, quickly */
    o = opts3(50, 50, 50, 120000, 0.9, 1);
    double t0 = tf_wtime();
    CHECK(tf_generate(&o, &t) == TF_ERR_RANGE);
    CHECKF(strstr(tf_last_error(), "too slow") != NULL, "message: %s", tf_last_error());
    CHECKF(tf_wtime() - t0 < 20, "gave up only after %.1f s", tf_wtime() - t0);
    /* bad options */
    o = opts3(10, 10, 10, 10, 1.0, 1);
    CHECK(tf_generate(&o, &t) == TF_ERR_ARG);
    o = opts3(10, 10, 10, 0, 0.0, 1);
    CHECK(tf_generate(&o, &t) == TF_ERR_ARG);
    o = opts3(10, 10, 10, 10, 0.0, 1);
    o.order = 1;
    CHECK(tf_generate(&o, &t) != TF_OK);
    o = opts3(10, 10, 10, 10, 0.0, 1);
    o.noise = 0.5; /* noise without a planted model */
    CHECK(tf_generate(&o, &t) == TF_ERR_ARG);
    o = opts3(10, 0, 10, 10, 0.0, 1);
    CHECK(tf_generate(&o, &t) == TF_ERR_RANGE);
    o = opts3(10, (1ULL << 32) + 1, 10, 10, 0.0, 1);
    CHECK(tf_generate(&o, &t) == TF_ERR_RANGE);
}

static void test_wide_keys(void)
{
    tf_tensor t = {0};
    /* modes longer than the permutation table limit (Feistel) */
    tf_gen_opts o = opts3(1ULL << 32, 3, 100000000, 5000, 0.5, 3);
    CHECK_OK(tf_generate(&o, &t));
    check_shape_sorted_distinct(&o, &t, "long modes");
    tf_tensor_free(&t);
    /* 5 x 20 bits: two-word keys */
    o = (tf_gen_opts){.order = 5, .nnz = 30000, .seed = 9};
    for (int m = 0; m < 5; ++m) o.dims[m] = 1u << 20, o.alpha[m] = 0.5;
    CHECK_OK(tf_generate(&o, &t));
    check_shape_sorted_distinct(&o, &t, "order 5");
    tf_tensor b = {0};
    CHECK_OK(tf_generate(&o, &b));
    CHECK(same_tensor(&t, &b));
    tf_tensor_free(&b);
    tf_tensor_free(&t);
    /* order 16, full-width modes: nine-word keys */
    o = (tf_gen_opts){.order = 16, .nnz = 2000, .seed = 10};
    for (int m = 0; m < 16; ++m) o.dims[m] = m % 2 ? (1ULL << 32) : 2 + (uint64_t)m, o.alpha[m] = 0.9;
    CHECK_OK(tf_generate(&o, &t));
    check_shape_sorted_distinct(&o, &t, "order 16");
    tf_tensor_free(&t);
}

static void test_permutations(void)
{
    const uint64_t dims[] = {1, 2, 7, 1000, 4097};
    for (int table = 0; table < 2; ++table)
        for (unsigned d = 0; d < sizeof dims / sizeof *dims; ++d) {
            tf_gen_perm p;
            CHECK_OK(tf_gen_perm_init(&p, dims[d], 42, 1, table ? TF_GEN_PERM_TABLE_MAX : 0));
            unsigned char *seen = calloc(dims[d], 1);
            uint64_t dup = 0, fixed = 0;
            for (uint64_t i = 0; i < dims[d]; ++i) {
                uint32_t j = tf_gen_perm_apply(&p, i);
                if (j >= dims[d] || seen[j]) ++dup;
                else seen[j] = 1;
                fixed += j == i;
            }
            CHECKF(dup == 0, "%s permutation of %llu: %llu collisions", table ? "table" : "feistel",
                   (unsigned long long)dims[d], (unsigned long long)dup);
            if (dims[d] >= 1000) CHECKF(fixed < 20, "permutation of %llu fixes %llu points",
                                        (unsigned long long)dims[d], (unsigned long long)fixed);
            free(seen);
            tf_gen_perm_free(&p);
        }
}

/* The golden cases with the default thread count and with 8 and 16
 * threads, and the first ones with one and with three threads
 * (tf_gen_opts.threads). */
static void test_golden(void)
{
    const int ncases = (int)(sizeof gen_golden / sizeof *gen_golden);
    /* 8 and 16: with 4-16 threads a bucket path once left duplicates in
     * multi-round sets (seen only on a 16-core host) */
    const int threads[] = {0, 1, 3, 8, 16};
    for (unsigned v = 0; v < sizeof threads / sizeof *threads; ++v)
        for (int i = 0; i < (v == 0 || v >= 3 ? ncases : 8); ++i) {
            const gen_golden_case *c = &gen_golden[i];
            tf_gen_opts o = gen_golden_opts(c);
            o.threads = threads[v];
            tf_tensor t = {0};
            CHECK_OK(tf_generate(&o, &t));
            uint64_t sum = gen_checksum(&t);
            CHECKF(sum == c->sum, "%s, threads %d: checksum 0x%016llx, 0.2.0 made 0x%016llx", c->what,
                   threads[v], (unsigned long long)sum, (unsigned long long)c->sum);
            tf_tensor_free(&t);
        }
}

/* Buckets split into leaves of a few records (every split path, and
 * sub-buckets split again): the golden output, on 1 thread with leaves of
 * 64 bytes, on 3 with 2 KiB. */
static void test_leaf_split(void)
{
    const uint64_t saved = tf_gen_leaf_bytes;
    const uint64_t leaf[] = {64, 2048};
    const int ncases = (int)(sizeof gen_golden / sizeof *gen_golden);
    for (unsigned l = 0; l < sizeof leaf / sizeof *leaf; ++l)
        for (int v = 1 + 2 * (int)l, i = 0; i < ncases; ++i) {
            const gen_golden_case *c = &gen_golden[i];
            tf_gen_opts o = gen_golden_opts(c);
            o.threads = v;
            tf_gen_leaf_bytes = leaf[l];
            tf_tensor t = {0};
            CHECK_OK(tf_generate(&o, &t));
            tf_gen_leaf_bytes = saved;
            CHECKF(gen_checksum(&t) == c->sum, "%s, leaves of %llu bytes, threads %d: not 0.2.0's output",
                   c->what, (unsigned long long)leaf[l], v);
            tf_tensor_free(&t);
        }
}

/* Two-word keys of 68 bits: with 2^4 buckets or more the sets hold
 * stripped records (16 bytes); the output is the same with the full
 * records, on 1 and 3 threads, in small leaves, drawn into an array of
 * keys first (not as scattered), and over parts. The golden cases drawn
 * into an array of keys. */
static uint64_t parts_bucket_n = 1 << 16; /* parts_case's sets: tf_gen_set_bucket_bits of it */
static void parts_case(const tf_gen_opts *o, uint64_t P);
static void test_layouts(void)
{
    tf_gen_opts o = opts3(1ULL << 23, 1ULL << 23, 1ULL << 22, 600000, 0.7, 21);
    tf_tensor ref = {0}, t0 = {0};
    tf_gen_strip_keys = 0;
    o.threads = 1;
    CHECK_OK(tf_generate(&o, &ref));
    tf_gen_strip_keys = 1;
    check_shape_sorted_distinct(&o, &ref, "68-bit keys");
    const uint64_t saved = tf_gen_leaf_bytes;
    for (int v = 0; v < 4; ++v) {
        tf_tensor t = {0};
        o.threads = v == 0 ? 1 : 3;
        if (v == 2) tf_gen_leaf_bytes = 1024;
        tf_gen_draw_direct = v != 3;
        CHECK_OK(tf_generate(&o, &t));
        tf_gen_leaf_bytes = saved;
        tf_gen_draw_direct = 1;
        CHECKF(same_tensor(&t, &ref), "68-bit keys, case %d: stripped records give another tensor", v);
        tf_tensor_free(&t);
    }
    tf_tensor_free(&ref);
    o.nnz = 100000; /* parts: two rounds of 2^20 candidates, 2^5 buckets */
    o.threads = 0;
    parts_bucket_n = 1 << 20;
    parts_case(&o, 3);
    parts_bucket_n = 1 << 16;
    for (int i = 0; i < (int)(sizeof gen_golden / sizeof *gen_golden); ++i) {
        tf_gen_opts go = gen_golden_opts(&gen_golden[i]);
        go.threads = 3;
        tf_gen_draw_direct = 0;
        CHECK_OK(tf_generate(&go, &t0));
        tf_gen_draw_direct = 1;
        CHECKF(gen_checksum(&t0) == gen_golden[i].sum, "%s: drawn into keys first, not 0.2.0's output",
               gen_golden[i].what);
        tf_tensor_free(&t0);
    }
}

/* ---- the 0.2.0 algorithm, serial: candidate j is number j % 16384 of the
 * coordinate stream j / 16384; mode m's index is perm_m[floor(d *
 * u^(1/(1-alpha)))]; the first nnz distinct candidates are kept, sorted. */
static int ref_order;
static int ref_cmp(const void *a, const void *b)
{
    const uint32_t *x = a, *y = b;
    for (int m = 0; m < ref_order; ++m)
        if (x[m] != y[m]) return x[m] < y[m] ? -1 : 1;
    return 0;
}

static uint64_t ref_hash(const uint32_t *c, uint32_t order)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (uint32_t m = 0; m < order; ++m) h = (h ^ c[m]) * 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 29);
}

static void reference_generate(const tf_gen_opts *o, tf_tensor *t)
{
    const uint32_t order = o->order;
    const uint64_t nnz = o->nnz, cap = 4 * nnz + 64; /* hash of positions into kept[] */
    tf_gen_perm perm[TF_MAX_ORDER];
    for (uint32_t m = 0; m < order; ++m)
        CHECK_OK(tf_gen_perm_init(&perm[m], o->dims[m], o->seed, m, TF_GEN_PERM_TABLE_MAX));
    uint32_t *kept = malloc(nnz * order * sizeof *kept);
    uint64_t *slot = malloc(cap * sizeof *slot), count = 0;
    for (uint64_t i = 0; i < cap; ++i) slot[i] = UINT64_MAX;
    uint32_t c[TF_MAX_ORDER];
    for (uint64_t chunk = 0; count < nnz; ++chunk) {
        tf_rng r;
        tf_rng_seed(&r, tf_gen_stream_seed(o->seed, TF_GEN_TAG_COORD, chunk));
        for (int k = 0; k < 16384 && count < nnz; ++k) {
            for (uint32_t m = 0; m < order; ++m) {
                double u = tf_rng_uniform(&r), e = 1.0 / (1.0 - o->alpha[m]);
                if (e != 1.0) u = pow(u, e);
                uint64_t i = (uint64_t)((double)o->dims[m] * u);
                if (i >= o->dims[m]) i = o->dims[m] - 1;
                c[m] = tf_gen_perm_apply(&perm[m], i);
            }
            uint64_t h = ref_hash(c, order) % cap;
            while (slot[h] != UINT64_MAX && memcmp(kept + slot[h] * order, c, order * sizeof *c)) h = (h + 1) % cap;
            if (slot[h] != UINT64_MAX) continue;
            slot[h] = count;
            memcpy(kept + count++ * order, c, order * sizeof *c);
        }
    }
    ref_order = (int)order;
    qsort(kept, nnz, order * sizeof *kept, ref_cmp);
    CHECK_OK(tf_tensor_alloc(t, order, o->dims, nnz));
    for (uint64_t z = 0; z < nnz; ++z)
        for (uint32_t m = 0; m < order; ++m) t->ind[m][z] = kept[z * order + m];
    CHECK_OK(tf_gen_values(o, t));
    for (uint32_t m = 0; m < order; ++m) tf_gen_perm_free(&perm[m]);
    free(kept);
    free(slot);
}

/* Random shapes of order 2..5, from tiny (many duplicates) through a
 * third of them order 2 with 72 to 90 % of the cells (several rounds
 * of candidates) to sparse. */
static void test_reference(void)
{
    tf_rng r;
    tf_rng_seed(&r, 2027);
    for (int trial = 0; trial < 40; ++trial) {
        tf_gen_opts o = {0};
        o.order = trial % 3 == 1 ? 2 : 2 + (uint32_t)tf_rng_below(&r, 4);
        double cells = 1.0;
        for (uint32_t m = 0; m < o.order; ++m) {
            const uint64_t top = trial % 3 == 0 ? 12 : trial % 3 == 1 ? 300 : 100000;
            o.dims[m] = (trial % 3 == 1 ? 150 : 1) + tf_rng_below(&r, top);
            o.alpha[m] = trial % 4 == 0 ? 0.0 : (trial % 3 == 1 ? 0.3 : 0.6) * tf_rng_uniform(&r);
            cells *= (double)o.dims[m];
        }
        const double most = trial % 3 == 1 ? 0.9 * cells : cells / 4 < 60000 ? cells / 4 : 60000;
        o.nnz = 1 + (uint64_t)(most * (trial % 3 == 1 ? 0.8 + 0.2 * tf_rng_uniform(&r) : tf_rng_uniform(&r)));
        o.seed = tf_rng_next(&r);
        if (trial % 5 == 0) o.rank = 1 + tf_rng_below(&r, 4);
        tf_tensor a = {0}, b = {0};
        CHECK_OK(tf_generate(&o, &a));
        reference_generate(&o, &b);
        CHECKF(same_tensor(&a, &b), "trial %d: order %u, dims %llu x %llu ..., nnz %llu differs from the 0.2.0 algorithm",
               trial, o.order, (unsigned long long)o.dims[0], (unsigned long long)o.dims[1],
               (unsigned long long)o.nnz);
        tf_tensor_free(&a);
        tf_tensor_free(&b);
    }
}

/* The threshold over parts (what tf_generate_part's ranks do, here in one
 * process): the key space cut at the whole's keys nnz r/P, each part's set
 * of the candidates in its range, the chunk counts summed and the chunk
 * bitmaps OR-ed over the parts, the parts' kept keys written in turn: the
 * whole's coordinates. Tiny dims (candidates repeat a lot), nnz = every
 * cell (ties for the last distinct candidates), skewed and wide keys; nnz
 * above the cells: the one-process error through tf_generate_part. */
static void parts_case(const tf_gen_opts *o, uint64_t P)
{
    tf_tensor whole = {0};
    CHECK_OK(tf_generate(o, &whole));
    tf_gen_ctx g;
    CHECK_OK(tf_gen_ctx_init(&g, o));
    const int W = g.words;
    uint64_t splits[8][4] = {{0}};
    for (uint64_t r = 1; r < P; ++r) { /* the key of the whole's non-zero nnz r / P */
        const uint64_t k = o->nnz * r / P;
        for (uint32_t m = 0; m < o->order; ++m) {
            const uint64_t v = whole.ind[m][k];
            const int at = g.shift[m];
            splits[r][at / 64] |= v << (at % 64);
            if (at % 64 + g.bits[m] > 64) splits[r][at / 64 + 1] |= v >> (64 - at % 64);
        }
    }
    const uint64_t chunks = 2 * tf_gen_first_round(o) + 64; /* enough for these shapes */
    tf_gen_set set[8];
    uint64_t *cnt = calloc(chunks, sizeof *cnt), *c = calloc(chunks, sizeof *c);
    for (uint64_t r = 0; r < P; ++r) {
        uint64_t *seg[2] = {NULL, NULL}, n[2] = {0, 0}, cap[2] = {0, 0};
        CHECK_OK(tf_gen_draw_range(&g, 0, chunks, r ? splits[r] : NULL, r + 1 < P ? splits[r + 1] : NULL, 0, 2, seg,
                                   n, cap));
        CHECK_OK(tf_gen_set_build_segments(&g, seg, n, 2, chunks * TF_GEN_CHUNK, tf_gen_set_bucket_bits(&g, parts_bucket_n),
                                           &set[r]));
        tf_free(seg[0]);
        tf_free(seg[1]);
        CHECK_OK(tf_gen_set_chunk_counts(&g, &set[r], chunks, c));
        for (uint64_t q = 0; q < chunks; ++q) cnt[q] += c[q];
    }
    uint64_t before = 0, bits[TF_GEN_CHUNK / 64] = {0}, b[TF_GEN_CHUNK / 64];
    const uint64_t chunk = tf_gen_threshold_chunk(cnt, chunks, o->nnz, &before);
    for (uint64_t r = 0; r < P; ++r) {
        tf_gen_set_chunk_bits(&g, &set[r], chunk, b);
        for (int w = 0; w < (int)(TF_GEN_CHUNK / 64); ++w) {
            CHECKF(!(bits[w] & b[w]), "P %llu: parts share a first sequence number", (unsigned long long)P);
            bits[w] |= b[w];
        }
    }
    const uint64_t last = tf_gen_threshold_last(bits, chunk, o->nnz - before);
    CHECKF(last != UINT64_MAX, "P %llu: no last sequence number", (unsigned long long)P);
    uint64_t at = 0, bad = 0;
    uint32_t *rec = malloc(o->nnz * o->order * sizeof *rec + 4);
    for (uint64_t r = 0; r < P; ++r) {
        uint32_t *ind[TF_MAX_ORDER];
        uint64_t n = 0;
        for (uint32_t m = 0; m < o->order; ++m) ind[m] = rec + at * o->order + m;
        CHECK_OK(tf_gen_set_write(&g, &set[r], last, ind, o->order, o->nnz - at, &n));
        at += n;
        tf_gen_set_free(&set[r]);
    }
    CHECKF(at == o->nnz, "P %llu: the parts kept %llu of %llu", (unsigned long long)P, (unsigned long long)at,
           (unsigned long long)o->nnz);
    for (uint64_t k = 0; at == o->nnz && k < o->nnz; ++k)
        for (uint32_t m = 0; m < o->order; ++m) bad += rec[k * o->order + m] != whole.ind[m][k];
    CHECKF(bad == 0, "P %llu, dims %llu x %llu ..., nnz %llu: %llu indices differ from the whole's",
           (unsigned long long)P, (unsigned long long)o->dims[0], (unsigned long long)o->dims[1],
           (unsigned long long)o->nnz, (unsigned long long)bad);
    free(rec);
    free(cnt);
    free(c);
    tf_gen_ctx_free(&g);
    tf_tensor_free(&whole);
    (void)W;
}

static void test_parts(void)
{
    const uint64_t Ps[] = {1, 2, 3, 7};
    for (int i = 0; i < 4; ++i) {
        tf_gen_opts o = opts3(40, 30, 3, 500, 0.0, 3); /* 3600 cells: candidates repeat */
        parts_case(&o, Ps[i]);
        o = opts3(10, 10, 5, 500, 0.0, 1); /* every cell */
        parts_case(&o, Ps[i]);
        o = opts3(10, 10, 5, 500, 0.5, 8); /* every cell, skewed: the last cells come late */
        parts_case(&o, Ps[i]);
        o = opts3(3000, 2000, 100, 200000, 0.8, 5); /* skewed, several chunks */
        parts_case(&o, Ps[i]);
        o = opts3(4000000000ULL, 4000000000ULL, 1000, 20000, 0.9, 2); /* keys of two words */
        parts_case(&o, Ps[i]);
    }
    tf_gen_opts o = opts3(10, 10, 5, 501, 0.0, 1);
    tf_tensor t = {0};
    CHECK_FAILS(tf_generate_part(&o, 0, 1, &t, NULL), TF_ERR_RANGE, "more than the 500 cells");
    CHECK_FAILS(tf_generate_part(&o, 1, 1, &t, NULL), TF_ERR_ARG, "part 1 of 1");
    o.nnz = 500;
    tf_gen_info gi;
    CHECK_OK(tf_generate_part(&o, 0, 1, &t, &gi));
    CHECK(t.nnz == 500 && gi.first == 0 && gi.total_nnz == 500 && gi.peak_bytes > 0);
    tf_tensor_free(&t);
}

int main(void)
{
    test_parts();
    test_golden();
    test_leaf_split();
    test_layouts();
    test_reference();
    test_permutations();
    test_determinism();
    test_skew();
    test_planted();
    test_counts();
    test_limits();
    test_wide_keys();
    return tf_test_finish("test_gen");
}
