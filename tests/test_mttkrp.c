/* SPDX-License-Identifier: BSD-3-Clause */
/* MTTKRP plans (cpu coo, cpu csf) against the float64 reference: random
 * tensors of orders 2..6, uniform and skewed (one row of one mode holds half
 * the non-zeros), with empty slices and modes of length 1, ranks that hit
 * the fixed-rank kernels and the generic one, 1..3 threads, every mode;
 * 4-/5-mode tensors with short modes and long fibres (uber, nycflights13);
 * outputs poisoned with NaN before each run. Then the real tensors in
 * TF_SHARED_DATA, and argument errors. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "seams/plan.h"
#include "check.h"
#include "core/rng.h"
#include "cpu/csf_kernel.h"
#include "fmt/csf.h"
#include "realdata.h"
#include "tenfold.h"

/* The plans under test: coo, csf as tf_plan_build makes it (and with its
 * factor rows prefetched, which it does only for large factors), and csf
 * forced to full trees (every level compressed) and to flat levels (only
 * the root compressed); csf-short (every tree's fibres in order of length,
 * the kernel's pairs of equal fibres) likewise, and auto (csf-short's order
 * in the trees whose fibres are short). */
typedef struct variant {
    const char *name;
    tf_format format;
    double flat_ratio; /* < 0: tf_plan_build's choice */
    int prefetch;      /* tf_cpu_csf_plan_fix_prefetch */
    int by_length;     /* with flat_ratio >= 0: tf_cpu_csf_plan_build_flat's */
} variant;
static const variant variants[] = {{"coo", TF_FORMAT_COO, -1, -1, 0},
                                   {"csf", TF_FORMAT_CSF, -1, -1, 0},
                                   {"csf-prefetch", TF_FORMAT_CSF, -1, 1, 0},
                                   {"csf-tree", TF_FORMAT_CSF, 1e300, -1, 0},
                                   {"csf-flat", TF_FORMAT_CSF, 0.0, -1, 0},
                                   {"auto", TF_FORMAT_AUTO, -1, -1, 0},
                                   {"csf-short", TF_FORMAT_CSF_SHORT, -1, -1, 0},
                                   {"csf-short-prefetch", TF_FORMAT_CSF_SHORT, -1, 1, 0},
                                   {"csf-short-tree", TF_FORMAT_CSF_SHORT, 1e300, -1, 1}};
static const tf_format formats[] = {TF_FORMAT_COO, TF_FORMAT_CSF, TF_FORMAT_CSF_SHORT};
static const uint64_t ranks[] = {1, 7, 8, 16, 33, 64};
static const int thread_counts[] = {1, 2, 3};
#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Index in 0..dim-1 that leaves row 0, the last row and every row = 2 mod 5
 * empty when the mode has at least 8 rows (leading, inner, trailing gaps). */
static uint32_t draw_index(tf_rng *rng, uint64_t dim)
{
    for (;;) {
        uint32_t i = (uint32_t)tf_rng_below(rng, dim);
        if (dim < 8 || (i != 0 && i != dim - 1 && i % 5 != 2)) return i;
    }
}

/* Random canonical tensor; hot_mode >= 0 puts half the non-zeros in one row
 * of that mode. */
static tf_tensor make_tensor(tf_rng *rng, uint32_t order, const uint64_t *dims, uint64_t nnz,
                             int hot_mode, int canonical)
{
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, order, dims, nnz));
    const uint32_t hot = hot_mode >= 0 ? draw_index(rng, dims[hot_mode]) : 0;
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < order; ++m) X.ind[m][k] = draw_index(rng, dims[m]);
        if (hot_mode >= 0 && k % 2 == 0) X.ind[hot_mode][k] = hot;
        X.vals[k] = tf_rng_uniform(rng) * 2.0 - 1.0;
        if (X.vals[k] == 0.0) X.vals[k] = 0.5;
    }
    if (canonical) CHECK_OK(tf_tensor_canonicalize(&X, NULL, NULL));
    return X;
}

static void random_factors(tf_rng *rng, const tf_tensor *X, uint64_t R, tf_matrix *F)
{
    for (uint32_t m = 0; m < X->order; ++m) {
        CHECK_OK(tf_matrix_alloc(&F[m], X->dims[m], R));
        for (uint64_t i = 0; i < X->dims[m] * R; ++i) F[m].data[i] = tf_rng_uniform(rng) * 2.0 - 1.0;
    }
}

static void free_factors(uint32_t order, tf_matrix *F)
{
    for (uint32_t m = 0; m < order; ++m) tf_matrix_free(&F[m]);
}

/* Runs one MTTKRP of the plan on a poisoned output and compares every
 * element with the reference; rows of empty slices must be exactly zero. */
static void check_mode(tf_plan *p, const tf_tensor *X, uint32_t mode, const tf_matrix *F,
                       const char *label)
{
    const uint64_t R = F[mode == 0 ? 1 : 0].cols, I = X->dims[mode];
    tf_matrix ref, out;
    CHECK_OK(tf_matrix_alloc(&ref, I, R));
    CHECK_OK(tf_matrix_alloc(&out, I, R));
    CHECK_OK(tf_mttkrp_reference(X, mode, F, &ref));
    for (uint64_t i = 0; i < I * R; ++i) out.data[i] = NAN;
    tf_status s = tf_plan_mttkrp(p, mode, F, &out);
    CHECKF(s == TF_OK, "%s mode %u: %s", label, mode, tf_last_error());
    uint64_t unwritten = 0, nonzero_empty = 0;
    for (uint64_t i = 0; i < I * R; ++i) {
        if (!isfinite(out.data[i])) ++unwritten;
        if (ref.data[i] == 0.0 && out.data[i] != 0.0) ++nonzero_empty;
    }
    /* a reference zero can only come from an empty row here (random values) */
    CHECKF(unwritten == 0, "%s mode %u: %llu of %llu outputs not written", label, mode,
           (unsigned long long)unwritten, (unsigned long long)(I * R));
    CHECKF(nonzero_empty == 0, "%s mode %u: %llu empty-row outputs are not zero", label, mode,
           (unsigned long long)nonzero_empty);
    double err = tf_rel_err(out.data, ref.data, (size_t)(I * R));
    CHECKF(err <= 1e-12, "%s mode %u: relative error %.3g", label, mode, err);
    tf_matrix_free(&ref);
    tf_matrix_free(&out);
}

static tf_status build_variant(const tf_tensor *X, const variant *v, int threads, tf_plan **out)
{
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.format = v->format;
    o.threads = threads;
    if (v->flat_ratio < 0) {
        /* small tensors would run on one thread (the team from the work):
         * the CSF plans run on exactly `threads`, to split slices */
        tf_status s = tf_plan_build(X, &o, out);
        if (s == TF_OK) tf_cpu_csf_plan_fix_team(*out, threads);
        if (s == TF_OK) tf_cpu_csf_plan_fix_jobs(*out, 2 * threads + 1); /* job edges inside slices */
        if (s == TF_OK) tf_cpu_csf_plan_fix_prefetch(*out, v->prefetch);
        return s;
    }
    /* what tf_plan_build does, with the builder's ratio forced */
    tf_plan *p = calloc(1, sizeof *p);
    *out = NULL;
    if (!p) return TF_ERR_NOMEM;
    p->order = X->order;
    p->nnz = X->nnz;
    memcpy(p->dims, X->dims, sizeof p->dims);
    p->backend = TF_BACKEND_CPU;
    p->format = v->format;
    p->threads = threads;
    tf_status s = tf_cpu_csf_plan_build_flat(X, &o, v->flat_ratio, v->by_length, p);
    if (s != TF_OK) { free(p); return s; }
    tf_cpu_csf_plan_fix_team(p, threads);
    tf_cpu_csf_plan_fix_jobs(p, 2 * threads + 1);
    *out = p;
    return TF_OK;
}

/* Every plan variant x thread count x rank x mode on one tensor. */
static void check_tensor(tf_rng *rng, const tf_tensor *X, const uint64_t *rk, size_t nrk,
                         const int *th, size_t nth, const char *what)
{
    for (size_t ri = 0; ri < nrk; ++ri) {
        tf_matrix F[TF_MAX_ORDER];
        random_factors(rng, X, rk[ri], F);
        for (size_t vi = 0; vi < COUNT(variants); ++vi)
            for (size_t ti = 0; ti < nth; ++ti) {
                tf_plan *p = NULL;
                char label[256];
                snprintf(label, sizeof label, "%s, %s, R=%llu, %d threads", what, variants[vi].name,
                         (unsigned long long)rk[ri], th[ti]);
                tf_status s = build_variant(X, &variants[vi], th[ti], &p);
                CHECKF(s == TF_OK, "%s: build: %s", label, tf_last_error());
                if (s != TF_OK) continue;
                for (uint32_t m = 0; m < X->order; ++m) check_mode(p, X, m, F, label);
                tf_plan_free(p);
            }
        free_factors(X->order, F);
    }
}

static void random_tensors(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 20240611);
    /* mode lengths per order, so that nnz ~ 3000 is well below the volume */
    static const uint64_t base_dim[] = {0, 0, 150, 40, 14, 9, 7};
    for (uint32_t order = 2; order <= 6; ++order)
        for (int variant = 0; variant < 3; ++variant) { /* uniform, skewed, with a unit mode */
            uint64_t dims[TF_MAX_ORDER];
            for (uint32_t m = 0; m < order; ++m)
                dims[m] = base_dim[order] / 2 + tf_rng_below(&rng, base_dim[order]);
            int hot = -1;
            if (variant == 1) hot = (int)tf_rng_below(&rng, order);
            if (variant == 2) dims[tf_rng_below(&rng, order)] = 1;
            tf_tensor X = make_tensor(&rng, order, dims, 3000, hot, 1);
            char what[64];
            snprintf(what, sizeof what, "order %u %s",
                     order, variant == 0 ? "uniform" : variant == 1 ? "skewed" : "unit-mode");
            check_tensor(&rng, &X, ranks, COUNT(ranks), thread_counts, COUNT(thread_counts), what);
            tf_tensor_free(&X);
        }
}

/* 4- and 5-mode tensors shaped like uber-apr14 and nycflights13: short
 * modes and fibres of several non-zeros, so every tree has compressed
 * levels above one flat leaf level (the CSF kernel's register path for
 * R = 8, 16 and 32; R = 7 and 33 the generic one), on up to 5 threads that
 * split the slices. */
static void short_mode_tensors(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 20261129);
    static const uint64_t dims4[] = {12, 9, 20, 200}, dims5[] = {30, 5, 3, 12, 150};
    static const uint64_t rk[] = {8, 16, 32, 7, 33};
    static const int th[] = {1, 2, 5};
    for (int hot = -1; hot <= 0; ++hot) {
        tf_tensor X = make_tensor(&rng, 4, dims4, 20000, hot, 1);
        check_tensor(&rng, &X, rk, COUNT(rk), th, COUNT(th), hot < 0 ? "short 4-mode" : "short 4-mode skewed");
        tf_tensor_free(&X);
        X = make_tensor(&rng, 5, dims5, 20000, hot, 1);
        check_tensor(&rng, &X, rk, COUNT(rk), th, COUNT(th), hot < 0 ? "short 5-mode" : "short 5-mode skewed");
        tf_tensor_free(&X);
    }
}

/* 4- and 5-mode tensors whose fibres hold 1-6 non-zeros (uber-apr14's
 * 4.3): auto orders every tree's fibres by length (tf_csf_sort_fibres; the
 * lengths must then rise within each parent), csf none, and the kernel sums
 * runs of equal fibres in pairs; every rank of the register path and the
 * generic one, up to 7 threads. */
static void short_fibre_tensors(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 20261130);
    static const uint64_t dims4[] = {10, 8, 30, 100}, dims5[] = {20, 4, 3, 10, 300};
    static const uint64_t rk[] = {1, 7, 8, 16, 32, 33};
    static const int th[] = {1, 2, 3, 7};
    for (int shape = 0; shape < 4; ++shape) {
        const int hot = shape % 2 ? 0 : -1;
        tf_tensor X = shape < 2 ? make_tensor(&rng, 4, dims4, 2000, hot, 1) : make_tensor(&rng, 5, dims5, 3000, hot, 1);
        char what[64];
        snprintf(what, sizeof what, "short fibres, order %u%s", X.order, hot < 0 ? "" : " skewed");
        uint32_t short_trees = 0, fibred = 0; /* the rule: flat >= 2 and under 8 non-zeros per fibre */
        for (uint32_t m = 0; m < X.order; ++m) {
            uint32_t mo[TF_MAX_ORDER];
            tf_csf c;
            tf_csf_default_order(&X, m, mo);
            CHECK_OK(tf_csf_build(&X, mo, 0.5, 2, &c));
            short_trees += c.flat >= 2 && tf_csf_mean_fibre(&c) < 8.0;
            fibred += c.flat >= 2;
            tf_csf_free(&c);
        }
        if (hot < 0) CHECKF(short_trees == X.order, "%s: %u trees of short fibres", what, short_trees);
        for (int f = 0; f < 3; ++f) {
            tf_plan_opts o;
            tf_plan_opts_default(&o);
            o.backend = TF_BACKEND_CPU;
            o.format = f == 0 ? TF_FORMAT_AUTO : f == 1 ? TF_FORMAT_CSF : TF_FORMAT_CSF_SHORT;
            tf_plan *p = NULL;
            CHECK_OK(tf_plan_build(&X, &o, &p));
            const uint32_t want = f == 1 ? 0 : f == 0 ? short_trees : fibred;
            CHECKF(tf_cpu_csf_plan_sorted(p) == want, "%s, %s: %u trees by fibre length, expected %u", what,
                   tf_format_name(o.format), tf_cpu_csf_plan_sorted(p), want);
            tf_plan_free(p);
        }
        for (uint32_t m = 0; m < X.order; ++m) { /* the order itself, and that nothing was lost */
            uint32_t mo[TF_MAX_ORDER];
            tf_csf c;
            tf_csf_default_order(&X, m, mo);
            CHECK_OK(tf_csf_build(&X, mo, 0.5, 2, &c));
            CHECKF(c.flat >= 2, "%s, tree %u: flat %u", what, m, c.flat);
            if (c.flat < 2) { tf_csf_free(&c); continue; }
            double sum = 0.0, sorted_sum = 0.0;
            for (uint64_t z = 0; z < c.nnz; ++z) sum += c.vals[z] * (1.0 + c.fids[c.order - 1][z]);
            CHECK_OK(tf_csf_sort_fibres(&c, 2));
            uint64_t falls = 0;
            const uint32_t L = c.flat - 1;
            for (uint64_t p = 0; p < c.nodes[L - 1]; ++p)
                for (uint64_t f = c.fptr[L - 1][p] + 1; f < c.fptr[L - 1][p + 1]; ++f)
                    falls += c.fptr[L][f + 1] - c.fptr[L][f] < c.fptr[L][f] - c.fptr[L][f - 1];
            for (uint64_t z = 0; z < c.nnz; ++z) sorted_sum += c.vals[z] * (1.0 + c.fids[c.order - 1][z]);
            CHECKF(falls == 0, "%s, tree %u: %llu fibres shorter than the one before", what, m, (unsigned long long)falls);
            CHECKF(fabs(sum - sorted_sum) <= 1e-9 * fabs(sum), "%s, tree %u: the leaves changed", what, m);
            CHECKF(c.fptr[L][0] == 0 && c.fptr[L][c.nodes[L]] == c.nnz, "%s, tree %u: fibre pointers", what, m);
            tf_csf_free(&c);
        }
        check_tensor(&rng, &X, rk, COUNT(rk), th, COUNT(th), what);
        tf_tensor_free(&X);
    }
}

/* Fewer non-zeros than threads, no non-zeros, and a non-canonical list
 * (unsorted, repeated coordinates). */
static void corner_tensors(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 77);
    const uint64_t dims[3] = {9, 1, 12};
    const uint64_t rk[] = {3, 16};
    const int th[] = {1, 3, 4};
    for (uint64_t nnz = 0; nnz <= 3; ++nnz) {
        tf_tensor X = make_tensor(&rng, 3, dims, nnz, -1, 1);
        char what[64];
        snprintf(what, sizeof what, "%llu non-zeros", (unsigned long long)nnz);
        check_tensor(&rng, &X, rk, COUNT(rk), th, COUNT(th), what);
        tf_tensor_free(&X);
    }
    const uint64_t d4[4] = {6, 5, 4, 3};
    tf_tensor X = make_tensor(&rng, 4, d4, 500, 2, 0);
    check_tensor(&rng, &X, rk, COUNT(rk), th, COUNT(th), "non-canonical order 4");
    tf_tensor_free(&X);
    /* every non-zero in one slice of every mode but one: the threads all
     * start and end inside the same root slice */
    const uint64_t d3[3] = {3, 200, 2};
    tf_tensor Y = make_tensor(&rng, 3, d3, 400, -1, 0);
    for (uint64_t k = 0; k < Y.nnz; ++k) { Y.ind[0][k] = 1; Y.ind[2][k] = 0; }
    CHECK_OK(tf_tensor_canonicalize(&Y, NULL, NULL));
    check_tensor(&rng, &Y, rk, COUNT(rk), th, COUNT(th), "one slice");
    tf_tensor_free(&Y);
    /* the largest order */
    uint64_t d16[TF_MAX_ORDER];
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) d16[m] = 2 + m % 3;
    tf_tensor Z = make_tensor(&rng, TF_MAX_ORDER, d16, 300, 0, 1);
    check_tensor(&rng, &Z, rk, COUNT(rk), th, COUNT(th), "order 16");
    tf_tensor_free(&Z);
}

/* The CSF plans' jobs come from the tree and the rank, not the team: every
 * team size gives the same bits (default jobs, ~60 of them here, their
 * edges inside slices of a skewed mode), and so do the csf-short trees.
 * (Jobs of one per thread failed this: 96 of 96 comparisons.) */
static void team_independent(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 20261201);
    static const uint64_t dims[] = {40, 300, 25, 12};
    static const uint64_t rk[] = {8, 16, 33};
    static const int teams[] = {2, 3, 5, 8};
    tf_tensor X = make_tensor(&rng, 4, dims, 60000, 0, 1);
    for (size_t ri = 0; ri < COUNT(rk); ++ri) {
        tf_matrix F[TF_MAX_ORDER];
        random_factors(&rng, &X, rk[ri], F);
        for (int f = 0; f < 2; ++f) {
            tf_plan_opts o;
            tf_plan_opts_default(&o);
            o.backend = TF_BACKEND_CPU;
            o.format = f == 0 ? TF_FORMAT_CSF : TF_FORMAT_CSF_SHORT;
            o.threads = 8;
            tf_plan *p = NULL;
            CHECK_OK(tf_plan_build(&X, &o, &p));
            for (uint32_t m = 0; m < X.order; ++m) {
                const uint64_t I = X.dims[m], R = rk[ri];
                tf_matrix one, other;
                CHECK_OK(tf_matrix_alloc(&one, I, R));
                CHECK_OK(tf_matrix_alloc(&other, I, R));
                tf_cpu_csf_plan_fix_team(p, 1);
                for (uint64_t e = 0; e < I * R; ++e) one.data[e] = NAN;
                CHECK_OK(tf_plan_mttkrp(p, m, F, &one));
                for (size_t ti = 0; ti < COUNT(teams); ++ti) {
                    tf_cpu_csf_plan_fix_team(p, teams[ti]);
                    for (uint64_t e = 0; e < I * R; ++e) other.data[e] = NAN;
                    CHECK_OK(tf_plan_mttkrp(p, m, F, &other));
                    CHECKF(memcmp(one.data, other.data, I * R * sizeof(double)) == 0,
                           "%s R=%llu mode %u: %d threads differ from 1 in the bits", tf_format_name(o.format),
                           (unsigned long long)R, m + 1, teams[ti]);
                }
                tf_matrix_free(&one);
                tf_matrix_free(&other);
            }
            tf_plan_free(p);
        }
        free_factors(X.order, F);
    }
    tf_tensor_free(&X);
}

static void bad_arguments(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 5);
    const uint64_t dims[3] = {10, 11, 12};
    tf_tensor X = make_tensor(&rng, 3, dims, 100, -1, 1);
    tf_matrix F[TF_MAX_ORDER], out, wrong;
    random_factors(&rng, &X, 4, F);
    CHECK_OK(tf_matrix_alloc(&out, 10, 4));
    CHECK_OK(tf_matrix_alloc(&wrong, 11, 5));
    for (size_t fi = 0; fi < COUNT(formats); ++fi) {
        tf_plan_opts o;
        tf_plan_opts_default(&o);
        o.format = formats[fi];
        o.threads = 2;
        tf_plan *p = NULL;
        CHECK_OK(tf_plan_build(&X, &o, &p));
        if (!p) continue;
        CHECK(tf_plan_mttkrp(p, 3, F, &out) == TF_ERR_ARG);        /* mode out of range */
        CHECK(tf_plan_mttkrp(p, 1, F, &out) == TF_ERR_ARG);        /* output rows of mode 1 */
        CHECK(tf_plan_mttkrp(p, 0, NULL, &out) == TF_ERR_ARG);     /* no factors */
        tf_matrix saved = F[1];
        F[1] = wrong;                                              /* 11 x 5, rank 4 expected */
        CHECK(tf_plan_mttkrp(p, 0, F, &out) == TF_ERR_ARG);
        CHECK(strlen(tf_last_error()) > 0);
        F[1] = saved;
        CHECK_OK(tf_plan_mttkrp(p, 0, F, &out));
        tf_plan_free(p);
    }
    tf_matrix_free(&out);
    tf_matrix_free(&wrong);
    free_factors(3, F);
    tf_tensor_free(&X);
}

static void mttkrp_real_tensor(const char *name, const char *path, tf_tensor *X, void *rng)
{
    const uint64_t rk[] = {16, 5};
    const int th[] = {2};
    check_tensor(rng, X, rk, COUNT(rk), th, COUNT(th), name);
    printf("test_mttkrp: %s: order %u, %llu non-zeros checked\n", name, X->order,
           (unsigned long long)X->nnz);
}

/* A plan of one mode (tf_plan_build_mode, a rank's shard): that mode's
 * MTTKRP is the whole plan's bit for bit, the other modes are refused. */
static void one_mode_plans(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 20261230);
    const uint64_t dims[4] = {300, 7, 250, 40};
    tf_tensor X = make_tensor(&rng, 4, dims, 20000, 1, 1);
    tf_matrix F[TF_MAX_ORDER], a, b;
    random_factors(&rng, &X, 8, F);
    const tf_format formats_one[] = {TF_FORMAT_AUTO, TF_FORMAT_CSF, TF_FORMAT_CSF_SHORT, TF_FORMAT_COO};
    for (size_t fi = 0; fi < COUNT(formats_one); ++fi) {
        tf_plan_opts o;
        tf_plan_opts_default(&o);
        o.backend = TF_BACKEND_CPU;
        o.format = formats_one[fi];
        o.threads = 2;
        tf_plan *whole = NULL;
        CHECK_OK(tf_plan_build(&X, &o, &whole));
        for (uint32_t m = 0; whole && m < X.order; ++m) {
            tf_plan *one = NULL;
            CHECK_OK(tf_plan_build_mode(&X, &o, m, &one));
            if (!one) continue;
            CHECK_OK(tf_matrix_alloc(&a, X.dims[m], 8));
            CHECK_OK(tf_matrix_alloc(&b, X.dims[m], 8));
            CHECK_OK(tf_plan_mttkrp(whole, m, F, &a));
            CHECK_OK(tf_plan_mttkrp(one, m, F, &b));
            CHECKF(memcmp(a.data, b.data, X.dims[m] * 8 * sizeof(double)) == 0,
                   "format %d, mode %u: the one-mode plan's MTTKRP is the whole plan's", (int)o.format, m + 1);
            tf_matrix_free(&a);
            tf_matrix_free(&b);
            const uint32_t other = (m + 1) % X.order;
            CHECK_OK(tf_matrix_alloc(&a, X.dims[other], 8));
            const tf_status s = tf_plan_mttkrp(one, other, F, &a);
            CHECKF(o.format == TF_FORMAT_COO ? s == TF_OK : s == TF_ERR_ARG,
                   "format %d: a plan of mode %u run along mode %u", (int)o.format, m + 1, other + 1);
            tf_matrix_free(&a);
            tf_plan_free(one);
        }
        tf_plan_free(whole);
    }
    tf_plan *p = NULL;
    CHECK(tf_plan_build_mode(&X, NULL, 4, &p) == TF_ERR_ARG && !p); /* mode out of range */
    free_factors(X.order, F);
    tf_tensor_free(&X);
}

static void real_tensors(void)
{
    static const char *const tns[] = {".tns.xz", NULL};
    tf_rng rng;
    tf_rng_seed(&rng, 99);
    tf_for_each_data_file("test_mttkrp", tns, mttkrp_real_tensor, &rng);
}

/* tf_tensor_validate (every plan build's first step, split over threads)
 * names the first bad non-zero, wherever the bad ones lie. */
static void validation(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 9);
    const uint64_t dims[3] = {300, 200, 100};
    const uint64_t n = 200003; /* many blocks, the last one partial */
    tf_tensor X = make_tensor(&rng, 3, dims, n, -1, 0);
    CHECK_OK(tf_tensor_validate(&X));
    const uint64_t at[][2] = {{150000, 70001}, {n - 1, n - 1}, {0, 199999}, {4096, 4095}};
    char want[64];
    for (size_t i = 0; i < COUNT(at); ++i) {
        const uint64_t first = at[i][0] < at[i][1] ? at[i][0] : at[i][1];
        X.ind[1][at[i][0]] = 200; /* one past the end */
        X.ind[1][at[i][1]] = 4000000000u;
        CHECK(tf_tensor_validate(&X) == TF_ERR_RANGE);
        snprintf(want, sizeof want, "non-zero %llu: mode 2 index", (unsigned long long)first);
        CHECKF(strstr(tf_last_error(), want) != NULL, "%s (wanted \"%s\")", tf_last_error(), want);
        X.ind[1][at[i][0]] = X.ind[1][at[i][1]] = 7;
        const double saved = X.vals[at[i][1]];
        X.vals[at[i][0]] = NAN;
        X.vals[at[i][1]] = -INFINITY;
        CHECK(tf_tensor_validate(&X) == TF_ERR_RANGE);
        snprintf(want, sizeof want, "non-zero %llu: value is not finite", (unsigned long long)first);
        CHECKF(strstr(tf_last_error(), want) != NULL, "%s (wanted \"%s\")", tf_last_error(), want);
        X.vals[at[i][0]] = X.vals[at[i][1]] = saved;
    }
    CHECK_OK(tf_tensor_validate(&X));
    tf_tensor_free(&X);
}

int main(void)
{
    random_tensors();
    short_mode_tensors();
    short_fibre_tensors();
    corner_tensors();
    team_independent();
    bad_arguments();
    one_mode_plans();
    validation();
    real_tensors();
    return tf_test_finish("test_mttkrp");
}
