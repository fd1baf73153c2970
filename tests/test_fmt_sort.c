/* SPDX-License-Identifier: BSD-3-Clause */
/* The host builders' radix sort (tf_radix_sort_into) and F-COO against a
 * plain reference: a comparison sort of the positions by the key modes,
 * ties by position (the stable order), and the F-COO flags derived one
 * non-zero at a time. Random tensors of order 2-5 with repeated
 * coordinates, empty and length-1 modes, heavy slices (one bucket holding
 * most non-zeros), 0 and 1 non-zero; thread counts 1, 2 and 8 must give
 * the same arrays. Then the same on inputs in the canonical order (sorted
 * by modes 0, 1, ..., ties kept), where the sort needs only a prefix of
 * the key: every mode order and key length of orders 2-5, big enough for
 * the buffered scatter and the one-pass buckets, inputs sorted but for one
 * pair (at a thread's boundary), dims of 1, 0 and 1 non-zero. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/alloc.h"
#include "core/parallel.h"
#include "core/radix.h"
#include "core/rng.h"
#include "fmt/csf.h"
#include "fmt/fcoo.h"
#include "tenfold.h"

static const tf_tensor *g_x;
static const uint32_t *g_mo;
static uint32_t g_nkey;

static int cmp_pos(const void *a, const void *b)
{
    const uint64_t p = *(const uint64_t *)a, q = *(const uint64_t *)b;
    for (uint32_t j = 0; j < g_nkey; ++j) {
        const uint32_t x = g_x->ind[g_mo[j]][p], y = g_x->ind[g_mo[j]][q];
        if (x != y) return x < y ? -1 : 1;
    }
    return (p > q) - (p < q);
}

static uint64_t *ref_order(const tf_tensor *X, const uint32_t *mo, uint32_t nkey)
{
    uint64_t *perm = malloc((X->nnz + 1) * sizeof *perm);
    for (uint64_t k = 0; k < X->nnz; ++k) perm[k] = k;
    g_x = X, g_mo = mo, g_nkey = nkey;
    qsort(perm, X->nnz, sizeof *perm, cmp_pos);
    return perm;
}

/* Indices: a heavy share on one index when `heavy`, else uniform. */
static void random_tensor(tf_rng *r, uint32_t order, const uint64_t *dims, uint64_t nnz, int heavy, tf_tensor *X)
{
    CHECK_OK(tf_tensor_alloc(X, order, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < order; ++m)
            X->ind[m][k] = heavy && m == 0 && tf_rng_uniform(r) < 0.6 ? (uint32_t)(dims[m] / 2)
                                                                      : (uint32_t)tf_rng_below(r, dims[m]);
        if (k && tf_rng_uniform(r) < 0.05) /* a repeated coordinate */
            for (uint32_t m = 0; m < order; ++m) X->ind[m][k] = X->ind[m][k - 1];
        X->vals[k] = (double)k + 0.5;
    }
}

static void check_sort(const tf_tensor *X, const uint32_t *mo, uint32_t nkey, const uint64_t *perm)
{
    uint32_t *cols[TF_MAX_ORDER];
    double *vals = malloc((X->nnz + 1) * sizeof *vals);
    for (uint32_t j = 0; j < nkey; ++j) cols[j] = malloc((X->nnz + 1) * sizeof(uint32_t));
    static const int threads[] = {1, 2, 8};
    for (int ti = 0; ti < 3; ++ti) {
        CHECK_OK(tf_radix_sort_into(X, mo, nkey, cols, vals, threads[ti]));
        int same = 1;
        for (uint64_t k = 0; k < X->nnz; ++k) {
            same &= vals[k] == X->vals[perm[k]];
            for (uint32_t j = 0; j < nkey; ++j) same &= cols[j][k] == X->ind[mo[j]][perm[k]];
        }
        CHECKF(same, "order %u nnz %llu threads %d", X->order, (unsigned long long)X->nnz, threads[ti]);
    }
    for (uint32_t j = 0; j < nkey; ++j) free(cols[j]);
    free(vals);
}

/* The F-COO of `mode` against the reference order, built one non-zero at a time. */
static void check_fcoo(const tf_tensor *X, uint32_t mode, uint32_t part)
{
    uint32_t mo[TF_MAX_ORDER], n = 0;
    mo[n++] = mode;
    for (uint32_t m = 0; m < X->order; ++m)
        if (m != mode) mo[n++] = m;
    uint64_t *perm = ref_order(X, mo, n);
    static const int threads[] = {1, 2, 8};
    for (int ti = 0; ti < 3; ++ti) {
#ifdef _OPENMP
        omp_set_num_threads(threads[ti]);
#endif
        tf_fcoo f;
        CHECK_OK(tf_fcoo_build(X, mode, part, &f));
        int same = f.nnz == X->nnz;
        uint64_t seg = 0;
        for (uint64_t k = 0; same && k < X->nnz; ++k) {
            const uint64_t p = perm[k];
            const int head = k == 0 || X->ind[mode][p] != X->ind[mode][perm[k - 1]];
            seg += (uint64_t)head;
            same &= f.vals[k] == X->vals[p] && tf_fcoo_head(&f, k) == head;
            for (uint32_t j = 0; j + 1 < X->order; ++j) same &= f.pind[j][k] == X->ind[mo[1 + j]][p];
            if (head) same &= seg <= f.nseg && f.seg_row[seg - 1] == X->ind[mode][p];
            if (k % part == 0)
                same &= tf_fcoo_start(&f, k / part) == head && f.part_seg[k / part] == (uint32_t)(seg - 1);
        }
        same &= f.nseg == seg && f.nparts == (X->nnz + part - 1) / part;
        CHECKF(same, "F-COO order %u mode %u nnz %llu threads %d", X->order, mode,
               (unsigned long long)X->nnz, threads[ti]);
        tf_fcoo_free(&f);
    }
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    free(perm);
}

/* 1 if two F-COO copies hold the same arrays. */
static int same_fcoo(const tf_fcoo *a, const tf_fcoo *b)
{
    if (a->order != b->order || a->mode != b->mode || a->nnz != b->nnz || a->nparts != b->nparts ||
        a->nseg != b->nseg || a->part_nnz != b->part_nnz)
        return 0;
    const uint64_t n = a->nnz;
    int same = !memcmp(a->vals, b->vals, n * sizeof(double)) &&
               !memcmp(a->head, b->head, (n + 31) / 32 * sizeof(uint32_t)) &&
               !memcmp(a->start, b->start, (a->nparts + 31) / 32 * sizeof(uint32_t)) &&
               !memcmp(a->part_seg, b->part_seg, a->nparts * sizeof(uint32_t)) &&
               !memcmp(a->seg_row, b->seg_row, a->nseg * sizeof(uint32_t));
    for (uint32_t j = 0; j + 1 < a->order; ++j)
        same &= a->pmodes[j] == b->pmodes[j] && !memcmp(a->pind[j], b->pind[j], n * sizeof(uint32_t));
    return same;
}

/* tf_fcoo_rebuild through the modes (and back to the first with another
 * partition size, then a tensor of other sizes: nothing reused) equals
 * tf_fcoo_build of each. */
static void check_rebuild(const tf_tensor *X, const tf_tensor *other)
{
    tf_fcoo f, g;
    memset(&f, 0, sizeof f);
    for (uint32_t step = 0; step <= X->order + 1; ++step) {
        const tf_tensor *Y = step <= X->order ? X : other;
        const uint32_t mode = step < X->order ? step : 0, part = step == X->order ? 64 : 32;
        CHECK_OK(tf_fcoo_rebuild(Y, mode, part, &f));
        CHECK_OK(tf_fcoo_build(Y, mode, part, &g));
        CHECKF(same_fcoo(&f, &g), "rebuild step %u, order %u, nnz %llu", step, Y->order,
               (unsigned long long)Y->nnz);
        tf_fcoo_free(&g);
    }
    CHECK(tf_fcoo_rebuild(X, X->order, 32, &f) == TF_ERR_ARG && f.vals == NULL); /* freed on failure */
    tf_fcoo_free(&f);
}

/* Every order of the modes (Heap's algorithm would do; orders <= 5 are few). */
static int next_perm(uint32_t *a, uint32_t n)
{
    int i = (int)n - 2;
    while (i >= 0 && a[i] >= a[i + 1]) --i;
    if (i < 0) return 0;
    int j = (int)n - 1;
    while (a[j] <= a[i]) --j;
    uint32_t t = a[i]; a[i] = a[j]; a[j] = t;
    for (uint32_t l = (uint32_t)i + 1, r = n - 1; l < r; ++l, --r) { t = a[l]; a[l] = a[r]; a[r] = t; }
    return 1;
}

/* F-COO of every mode; with `keys` > 0 also the sort of every mode order
 * (every 13th beyond order 4) by keys of 1 and all modes (keys 2: of every
 * length) and CSF of every root. */
static void check_all_orders(const tf_tensor *X, int keys, const char *what)
{
    uint32_t mo[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m) mo[m] = m;
    const int fails = tf_t_fail;
    uint32_t count = 0;
    do {
        if (!keys || (X->order > 4 && count++ % 13)) continue;
        for (uint32_t nkey = 1; nkey <= X->order; ++nkey) {
            if (keys < 2 && nkey > 1 && nkey < X->order) continue;
            uint64_t *perm = ref_order(X, mo, nkey);
            check_sort(X, mo, nkey, perm);
            free(perm);
        }
    } while (next_perm(mo, X->order));
    for (uint32_t m = 0; m < X->order; ++m) {
        check_fcoo(X, m, 32);
        if (!keys) continue;
        tf_csf_default_order(X, m, mo);
        uint64_t *perm = ref_order(X, mo, X->order);
        tf_csf t;
        CHECK_OK(tf_csf_build(X, mo, 1.0, 2, &t));
        int same = t.nnz == X->nnz;
        for (uint64_t k = 0; same && k < X->nnz; ++k)
            same &= t.vals[k] == X->vals[perm[k]] && t.fids[X->order - 1][k] == X->ind[mo[X->order - 1]][perm[k]];
        CHECKF(same, "CSF leaves, root %u", m);
        tf_csf_free(&t);
        free(perm);
    }
    CHECKF(tf_t_fail == fails, "%s (order %u, %llu non-zeros)", what, X->order, (unsigned long long)X->nnz);
}

/* Swaps non-zeros k and k+1 (all modes and the value). */
static void swap_nonzeros(tf_tensor *X, uint64_t k)
{
    for (uint32_t m = 0; m < X->order; ++m) {
        uint32_t t = X->ind[m][k]; X->ind[m][k] = X->ind[m][k + 1]; X->ind[m][k + 1] = t;
    }
    double v = X->vals[k]; X->vals[k] = X->vals[k + 1]; X->vals[k + 1] = v;
}

static void sorted_cases(tf_rng *r)
{
    static const struct {
        uint32_t order;
        uint64_t dims[5];
        uint64_t nnz;
        int heavy, keys;
    } cases[] = {
        {3, {4, 1, 9}, 0, 0, 2},                        /* empty */
        {3, {4, 1, 9}, 1, 0, 2},                        /* one non-zero */
        {2, {1, 1}, 5, 0, 2},                           /* all dims 1: one coordinate, repeated */
        {3, {1, 300, 1}, 2000, 0, 2},                   /* two modes of length 1 */
        {3, {3000, 2000, 500}, 530000, 0, 1},           /* buffered scatter, one-pass buckets */
        {3, {1u << 20, 1, 1u << 24}, 530000, 1, 1},     /* a heavy slice, a mode of 1 */
        {4, {50, 3000, 7, 200}, 100000, 0, 2},
        {5, {9, 7, 5, 3, 11}, 70000, 0, 2},             /* repeats everywhere */
        {5, {1u << 20, 3000, 1u << 25, 17, 1u << 31}, 70000, 1, 2},
    };
    tf_tensor prev;
    memset(&prev, 0, sizeof prev);
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        tf_tensor X;
        random_tensor(r, cases[c].order, cases[c].dims, cases[c].nnz, cases[c].heavy, &X);
        CHECK_OK(tf_tensor_sort(&X, NULL)); /* canonical order, repeated coordinates kept */
        for (uint64_t k = 0; k < X.nnz; ++k) X.vals[k] = (double)k + 0.25; /* ties told apart */
        check_all_orders(&X, cases[c].keys, "canonical input");
        if (c > 0) check_rebuild(&X, &prev);
        /* sorted but for one pair where a thread's range begins (2 and 8 threads) */
        for (uint64_t at = X.nnz / 2, tries = 0; X.nnz >= 4 && tries < 2; at = X.nnz / 8, ++tries) {
            uint64_t k = at ? at - 1 : 0;
            while (k + 1 < X.nnz) { /* a pair that differs, so the swap unsorts */
                int differ = 0;
                for (uint32_t m = 0; m < X.order; ++m) differ |= X.ind[m][k] != X.ind[m][k + 1];
                if (differ) break;
                ++k;
            }
            if (k + 1 >= X.nnz) continue;
            swap_nonzeros(&X, k);
            check_all_orders(&X, cases[c].keys - 1, "canonical input but one pair");
            swap_nonzeros(&X, k);
        }
        tf_tensor_free(&prev);
        prev = X;
    }
    tf_tensor_free(&prev);
}

int main(void)
{
    tf_rng r;
    tf_rng_seed(&r, 27);
    static const struct {
        uint32_t order;
        uint64_t dims[5];
        uint64_t nnz;
        int heavy;
    } cases[] = {
        {2, {7, 5}, 1, 0},
        {3, {4, 1, 9}, 0, 0},
        {3, {50, 1, 300}, 3000, 0},          /* a length-1 mode */
        {2, {100000, 3}, 200000, 1},         /* a heavy row: the all-thread bucket path */
        {3, {2000, 1000, 200}, 150000, 0},   /* many buckets */
        {3, {1u << 31, 1u << 30, 1u << 29}, 100000, 0}, /* 90 key bits: two words */
        {4, {300, 40, 1, 70000}, 120000, 1},
        {5, {9, 7, 5, 3, 11}, 70000, 0},     /* few distinct keys: repeats everywhere */
        {5, {1u << 20, 3000, 1u << 25, 17, 1u << 31}, 90000, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        tf_tensor X;
        random_tensor(&r, cases[c].order, cases[c].dims, cases[c].nnz, cases[c].heavy, &X);
        uint32_t mo[TF_MAX_ORDER];
        for (uint32_t m = 0; m < X.order; ++m) mo[m] = (m + 1) % X.order; /* a rotated order */
        for (uint32_t nkey = 1; nkey <= X.order; nkey += X.order - 1) {
            uint64_t *perm = ref_order(&X, mo, nkey);
            check_sort(&X, mo, nkey, perm);
            free(perm);
        }
        for (uint32_t m = 0; m < X.order; ++m) check_fcoo(&X, m, m % 2 ? 32 : 96);
        /* CSF: its leaves are the sorted non-zeros */
        tf_csf_default_order(&X, X.order - 1, mo);
        uint64_t *perm = ref_order(&X, mo, X.order);
        tf_csf t;
        CHECK_OK(tf_csf_build(&X, mo, 1.0, 2, &t));
        int same = t.nnz == X.nnz;
        for (uint64_t k = 0; same && k < X.nnz; ++k)
            same &= t.vals[k] == X.vals[perm[k]] && t.fids[X.order - 1][k] == X.ind[mo[X.order - 1]][perm[k]];
        CHECKF(same, "CSF leaves, case %zu", c);
        tf_csf_free(&t);
        free(perm);
        tf_tensor_free(&X);
    }
    sorted_cases(&r);
    return tf_test_finish("test_fmt_sort");
}
