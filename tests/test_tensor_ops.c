/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse tensor helpers against plain float64 references (qsort and
 * loops): tf_tensor_ttv and tf_tensor_collapse (sum, max, min) over every
 * set of modes of fresh random tensors of order 2..5 (results of 0, 1 and
 * several modes; dense outputs poisoned with NaN, tensor outputs with
 * garbage), tf_tensor_scale, tf_tensor_permute and tf_tensor_subtensor;
 * sums that cancel to zero; the same bits on 1 and 3 threads; the bundled
 * uber-apr14 tensor; and the argument errors. */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kt_test_util.h"
#include "spttm_test_util.h"
#include "test_random.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static int threads0;


/* ------------------------------------------------------------ references */

/* The qsort key: the kept modes' indices of a non-zero. */
static uint32_t g_k;
static const uint32_t *g_cols[TF_MAX_ORDER];

static int cmp_kept(const void *a, const void *b)
{
    const uint64_t i = *(const uint64_t *)a, j = *(const uint64_t *)b;
    for (uint32_t l = 0; l < g_k; ++l) {
        if (g_cols[l][i] != g_cols[l][j]) return g_cols[l][i] < g_cols[l][j] ? -1 : 1;
    }
    return i < j ? -1 : i > j; /* stable */
}

typedef struct {
    uint32_t k;                  /* modes left                                 */
    uint64_t n;                  /* entries (dense length when k <= 1)        */
    uint32_t *ind[TF_MAX_ORDER]; /* k >= 2: the entries' indices               */
    double *vals, *mags;         /* value and the sum of its terms' magnitudes */
} ref_result;

static void ref_free(ref_result *r)
{
    for (uint32_t l = 0; l < TF_MAX_ORDER; ++l) free(r->ind[l]);
    free(r->vals);
    free(r->mags);
    memset(r, 0, sizeof *r);
}

/* X reduced over the modes with drop[m] by op, values first multiplied by
 * w[m][i_m] where w[m] is non-NULL. */
static ref_result ref_reduce(const tf_tensor *X, const int *drop, const double *const *w, tf_collapse_op op)
{
    ref_result r;
    memset(&r, 0, sizeof r);
    uint32_t kept[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m)
        if (!drop[m]) kept[r.k++] = m;
    double *v = malloc((X->nnz + 1) * sizeof *v);
    for (uint64_t j = 0; j < X->nnz; ++j) {
        v[j] = X->vals[j];
        for (uint32_t m = 0; m < X->order; ++m)
            if (w[m]) v[j] *= w[m][X->ind[m][j]];
    }
    const double none = op == TF_COLLAPSE_SUM ? 0.0 : op == TF_COLLAPSE_MAX ? -INFINITY : INFINITY;
    if (r.k <= 1) {
        r.n = r.k ? X->dims[kept[0]] : 1;
        r.vals = malloc(r.n * sizeof *r.vals);
        r.mags = malloc(r.n * sizeof *r.mags);
        for (uint64_t i = 0; i < r.n; ++i) r.vals[i] = none, r.mags[i] = 0.0;
        for (uint64_t j = 0; j < X->nnz; ++j) {
            const uint64_t i = r.k ? X->ind[kept[0]][j] : 0;
            r.vals[i] = op == TF_COLLAPSE_SUM ? r.vals[i] + v[j] : op == TF_COLLAPSE_MAX ? fmax(r.vals[i], v[j])
                                                                                        : fmin(r.vals[i], v[j]);
            r.mags[i] += fabs(v[j]);
        }
        for (uint64_t i = 0; i < r.n; ++i)
            if (isinf(r.vals[i])) r.vals[i] = 0.0;
        free(v);
        return r;
    }
    uint64_t *p = malloc((X->nnz + 1) * sizeof *p);
    for (uint64_t j = 0; j < X->nnz; ++j) p[j] = j;
    g_k = r.k;
    for (uint32_t l = 0; l < r.k; ++l) g_cols[l] = X->ind[kept[l]];
    qsort(p, X->nnz, sizeof *p, cmp_kept);
    for (uint32_t l = 0; l < r.k; ++l) r.ind[l] = malloc((X->nnz + 1) * sizeof(uint32_t));
    r.vals = malloc((X->nnz + 1) * sizeof *r.vals);
    r.mags = malloc((X->nnz + 1) * sizeof *r.mags);
    for (uint64_t a = 0; a < X->nnz;) {
        uint64_t b = a;
        double acc = none, mag = 0.0;
        for (; b < X->nnz; ++b) {
            uint32_t l = 0;
            while (l < r.k && g_cols[l][p[b]] == g_cols[l][p[a]]) ++l;
            if (l < r.k) break;
            const double x = v[p[b]];
            acc = op == TF_COLLAPSE_SUM ? acc + x : op == TF_COLLAPSE_MAX ? fmax(acc, x) : fmin(acc, x);
            mag += fabs(x);
        }
        if (acc != 0.0) {
            for (uint32_t l = 0; l < r.k; ++l) r.ind[l][r.n] = g_cols[l][p[a]];
            r.vals[r.n] = acc;
            r.mags[r.n++] = mag;
        }
        a = b;
    }
    free(p);
    free(v);
    return r;
}

/* ----------------------------------------------------------- comparisons */

static void same_dense(const char *what, const double *got, const ref_result *r, double tol)
{
    uint64_t bad = 0;
    for (uint64_t i = 0; i < r->n; ++i)
        if (!kt_close(got[i], r->vals[i], r->mags[i], tol) && bad++ < 3)
            CHECKF(0, "%s: entry %llu is %.17g, reference %.17g", what, (unsigned long long)i, got[i], r->vals[i]);
    CHECKF(bad == 0, "%s: %llu of %llu entries differ", what, (unsigned long long)bad, (unsigned long long)r->n);
}

/* out is canonical and holds the reference's entries: same indices, values
 * within tol (the reference drops exact zeros; a value that rounds to zero in
 * one order and not in the other is not expected on these inputs). */
static void same_sparse(const char *what, const tf_tensor *out, const ref_result *r, const uint64_t *dims, double tol)
{
    if (out->order != r->k || out->nnz != r->n) {
        CHECKF(0, "%s: order %u with %llu non-zeros, reference order %u with %llu", what, out->order,
               (unsigned long long)out->nnz, r->k, (unsigned long long)r->n);
        return;
    }
    for (uint32_t l = 0; l < r->k; ++l)
        CHECKF(out->dims[l] == dims[l], "%s: mode %u has length %llu, expected %llu", what, l + 1,
               (unsigned long long)out->dims[l], (unsigned long long)dims[l]);
    uint64_t bad = 0;
    for (uint64_t e = 0; e < r->n; ++e) {
        int ok = kt_close(out->vals[e], r->vals[e], r->mags[e], tol);
        for (uint32_t l = 0; l < r->k; ++l) ok &= out->ind[l][e] == r->ind[l][e];
        if (!ok && bad++ < 3) CHECKF(0, "%s: entry %llu differs (value %.17g, reference %.17g)", what,
                                     (unsigned long long)e, out->vals[e], r->vals[e]);
    }
    CHECKF(bad == 0, "%s: %llu of %llu entries differ", what, (unsigned long long)bad, (unsigned long long)r->n);
}

static void same_tensor(const char *what, const tf_tensor *got, const tf_tensor *want)
{
    int ok = got->order == want->order && got->nnz == want->nnz;
    for (uint32_t m = 0; ok && m < want->order; ++m) {
        ok &= got->dims[m] == want->dims[m];
        ok &= !want->nnz || !memcmp(got->ind[m], want->ind[m], want->nnz * sizeof(uint32_t));
    }
    ok = ok && (!want->nnz || !memcmp(got->vals, want->vals, want->nnz * sizeof(double)));
    CHECKF(ok, "%s: differs from the reference (order %u, %llu non-zeros; reference %u, %llu)", what, got->order,
           (unsigned long long)got->nnz, want->order, (unsigned long long)want->nnz);
}

/* ------------------------------------------------------------ the checks */

/* ttv (w non-NULL) or collapse by op over the modes of `mask` (bit m: mode m). */
static void check_reduce(const char *name, const tf_tensor *X, unsigned mask, double *const *vecs, tf_collapse_op op,
                         int thread_check)
{
    uint32_t modes[TF_MAX_ORDER], nm = 0;
    int drop[TF_MAX_ORDER] = {0};
    const double *w[TF_MAX_ORDER] = {0}, *mv[TF_MAX_ORDER] = {0};
    uint64_t dims[TF_MAX_ORDER];
    uint32_t k = 0, q = 0;
    /* the modes listed from the last down: the result must not depend on the order */
    for (int m = (int)X->order - 1; m >= 0; --m)
        if (mask >> m & 1u) {
            modes[nm] = (uint32_t)m;
            mv[nm++] = vecs ? vecs[m] : NULL;
            drop[m] = 1;
            w[m] = vecs ? vecs[m] : NULL;
        }
    for (uint32_t m = 0; m < X->order; ++m)
        if (!drop[m]) q = m, dims[k++] = X->dims[m];
    char what[128];
    snprintf(what, sizeof what, "%s order %u modes 0x%x %s", name, X->order, mask,
             vecs ? "ttv" : op == TF_COLLAPSE_SUM ? "sum" : op == TF_COLLAPSE_MAX ? "max" : "min");
    ref_result r = ref_reduce(X, drop, w, op);
    const double tol = op == TF_COLLAPSE_SUM ? 1e-12 : 0.0;
    tf_tensor out;
    memset(&out, 0xa5, sizeof out); /* garbage: the call must set it */
    const uint64_t n = k == 1 ? X->dims[q] : 1;
    double *dense = kt_poisoned(n + 1);
    dense[n] = 12345.0; /* one past the end: untouched */
    tf_status s = vecs ? tf_tensor_ttv(X, nm, modes, mv, &out, k < 2 ? dense : NULL)
                       : tf_tensor_collapse(X, nm, modes, op, &out, k < 2 ? dense : NULL);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s == TF_OK) {
        if (k < 2) {
            same_dense(what, dense, &r, tol);
            CHECKF(dense[n] == 12345.0, "%s: wrote past the dense vector", what);
        } else {
            same_sparse(what, &out, &r, dims, tol);
        }
    }
    if (thread_check) { /* the same bits on 1 and 3 threads */
        tf_tensor o1, o3;
        double *d1 = kt_poisoned(n), *d3 = kt_poisoned(n);
        tf_test_set_threads(1);
        CHECK_OK(vecs ? tf_tensor_ttv(X, nm, modes, mv, &o1, d1) : tf_tensor_collapse(X, nm, modes, op, &o1, d1));
        tf_test_set_threads(3);
        CHECK_OK(vecs ? tf_tensor_ttv(X, nm, modes, mv, &o3, d3) : tf_tensor_collapse(X, nm, modes, op, &o3, d3));
        tf_test_set_threads(threads0);
        if (k < 2) CHECKF(!memcmp(d1, d3, n * sizeof *d1), "%s: 1 and 3 threads differ", what);
        else same_tensor(what, &o3, &o1);
        if (k >= 2 && s == TF_OK) same_tensor(what, &out, &o1);
        tf_tensor_free(&o1);
        tf_tensor_free(&o3);
        free(d1);
        free(d3);
    }
    if (s == TF_OK && k >= 2) tf_tensor_free(&out);
    free(dense);
    ref_free(&r);
}

static void ref_scale(const tf_tensor *X, uint32_t mode, const double *v, double alpha, tf_tensor *out)
{
    uint64_t n = 0;
    for (uint64_t j = 0; j < X->nnz; ++j) n += alpha * X->vals[j] * (v ? v[X->ind[mode][j]] : 1.0) != 0.0;
    CHECK_OK(tf_tensor_alloc(out, X->order, X->dims, n));
    uint64_t o = 0;
    for (uint64_t j = 0; j < X->nnz; ++j) {
        double x = alpha * X->vals[j];
        if (v) x *= v[X->ind[mode][j]];
        if (x == 0.0) continue;
        for (uint32_t m = 0; m < X->order; ++m) out->ind[m][o] = X->ind[m][j];
        out->vals[o++] = x;
    }
}

static void check_scale(const char *name, const tf_tensor *X, uint32_t mode, const double *v, double alpha)
{
    tf_tensor got, want;
    memset(&got, 0xa5, sizeof got);
    ref_scale(X, mode, v, alpha, &want);
    char what[96];
    snprintf(what, sizeof what, "%s scale mode %u%s alpha %g", name, mode + 1, v ? "" : " (no vector)", alpha);
    tf_status s = tf_tensor_scale(X, mode, v, alpha, &got);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s == TF_OK) same_tensor(what, &got, &want);
    tf_tensor_free(&got);
    tf_tensor_free(&want);
}

static void check_permute(const char *name, const tf_tensor *X, const uint32_t *perm)
{
    tf_tensor want, got;
    uint64_t dims[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m) dims[m] = X->dims[perm[m]];
    CHECK_OK(tf_tensor_alloc(&want, X->order, dims, X->nnz));
    uint64_t *p = malloc((X->nnz + 1) * sizeof *p);
    for (uint64_t j = 0; j < X->nnz; ++j) p[j] = j;
    g_k = X->order;
    for (uint32_t m = 0; m < X->order; ++m) g_cols[m] = X->ind[perm[m]];
    qsort(p, X->nnz, sizeof *p, cmp_kept); /* every mode of the permuted copy */
    for (uint64_t e = 0; e < X->nnz; ++e) {
        for (uint32_t m = 0; m < X->order; ++m) want.ind[m][e] = X->ind[perm[m]][p[e]];
        want.vals[e] = X->vals[p[e]];
    }
    free(p);
    memset(&got, 0xa5, sizeof got);
    char what[96];
    snprintf(what, sizeof what, "%s permute (%u %u ...)", name, perm[0], perm[1]);
    tf_status s = tf_tensor_permute(X, perm, &got);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s == TF_OK) same_tensor(what, &got, &want);
    tf_tensor_free(&got);
    tf_tensor_free(&want);
}

static void check_subtensor(const char *name, const tf_tensor *X, const uint64_t *lo, const uint64_t *hi)
{
    tf_tensor want, got;
    uint64_t dims[TF_MAX_ORDER], n = 0;
    for (uint32_t m = 0; m < X->order; ++m) dims[m] = hi[m] - lo[m];
    for (int pass = 0; pass < 2; ++pass) {
        if (pass) CHECK_OK(tf_tensor_alloc(&want, X->order, dims, n));
        n = 0;
        for (uint64_t j = 0; j < X->nnz; ++j) {
            int in = 1;
            for (uint32_t m = 0; m < X->order; ++m) in &= X->ind[m][j] >= lo[m] && X->ind[m][j] < hi[m];
            if (!in) continue;
            if (pass) {
                for (uint32_t m = 0; m < X->order; ++m) want.ind[m][n] = (uint32_t)(X->ind[m][j] - lo[m]);
                want.vals[n] = X->vals[j];
            }
            ++n;
        }
    }
    memset(&got, 0xa5, sizeof got);
    char what[96];
    snprintf(what, sizeof what, "%s subtensor [%llu:%llu, %llu:%llu, ...]", name, (unsigned long long)lo[0],
             (unsigned long long)hi[0], (unsigned long long)lo[1], (unsigned long long)hi[1]);
    tf_status s = tf_tensor_subtensor(X, lo, hi, &got);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s == TF_OK) same_tensor(what, &got, &want);
    tf_tensor_free(&got);
    tf_tensor_free(&want);
}

/* Every helper on X: reductions over every set of modes (when all_sets;
 * else the sets of at most two modes and of order - 1 or more),
 * scale by each mode, two permutations, a few boxes. */
static void check_all(const char *name, tf_rng *rng, const tf_tensor *X, int all_sets)
{
    double *vecs[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m) {
        vecs[m] = malloc(X->dims[m] * sizeof(double));
        for (uint64_t i = 0; i < X->dims[m]; ++i) {
            vecs[m][i] = tf_rng_uniform(rng) * 2.0 - 1.0;
            if (tf_rng_below(rng, 10) == 0) vecs[m][i] = 0.0; /* zeros in the vectors: dropped entries */
        }
    }
    const unsigned full = (1u << X->order) - 1;
    for (unsigned mask = 1; mask <= full; ++mask) {
        const int ones = __builtin_popcount(mask);
        if (!all_sets && !(ones <= 2 || ones >= (int)X->order - 1)) continue;
        const int tc = mask == full || ones == (int)X->order - 1 || mask == 3u;
        check_reduce(name, X, mask, vecs, TF_COLLAPSE_SUM, tc);
        check_reduce(name, X, mask, NULL, TF_COLLAPSE_SUM, tc);
        check_reduce(name, X, mask, NULL, TF_COLLAPSE_MAX, 0);
        check_reduce(name, X, mask, NULL, TF_COLLAPSE_MIN, 0);
    }
    for (uint32_t m = 0; m < X->order; ++m) check_scale(name, X, m, vecs[m], m == 0 ? 1.0 : -2.5);
    check_scale(name, X, 99, NULL, 0.25); /* a scalar only: the mode is not used */
    check_scale(name, X, 0, NULL, 0.0);   /* everything dropped */
    uint32_t rev[TF_MAX_ORDER], rot[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m) rev[m] = X->order - 1 - m, rot[m] = (m + 1) % X->order;
    check_permute(name, X, rev);
    check_permute(name, X, rot);
    uint64_t lo[TF_MAX_ORDER], hi[TF_MAX_ORDER];
    for (int b = 0; b < 3; ++b) {
        for (uint32_t m = 0; m < X->order; ++m) {
            if (b == 0) lo[m] = 0, hi[m] = X->dims[m]; /* all */
            else {
                lo[m] = tf_rng_below(rng, X->dims[m]);
                hi[m] = lo[m] + 1 + tf_rng_below(rng, X->dims[m] - lo[m]);
            }
        }
        if (b == 2) lo[0] = X->dims[0] - 1, hi[0] = X->dims[0]; /* one slice (empty in the random data) */
        check_subtensor(name, X, lo, hi);
    }
    for (uint32_t m = 0; m < X->order; ++m) free(vecs[m]);
}

static void random_cases(tf_rng *rng)
{
    const uint64_t d2[] = {200, 37}, d3[] = {60, 1, 45}, d4[] = {12, 30, 9, 20}, d5[] = {6, 7, 8, 5, 9},
                   dbig[] = {300000, 40, 7};
    const struct { uint32_t order; const uint64_t *dims; uint64_t nnz; int all; } shapes[] = {
        {2, d2, 3000, 1}, {3, d3, 1500, 1}, {4, d4, 20000, 1}, {5, d5, 2500, 1}, {3, dbig, 150000, 1}};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        tf_tensor X = sp_random_tensor(rng, shapes[si].order, shapes[si].dims, shapes[si].nnz, (int)(si % 2));
        check_all("random", rng, &X, shapes[si].all);
        tf_tensor_free(&X);
    }
}

/* Sums that cancel: entries of (0, 0, *) sum to exactly 0 over mode 3 and
 * drop out of the sparse result (and read 0 in a dense one). */
static void cancelling(void)
{
    const uint64_t dims[3] = {2, 3, 4};
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, 3, dims, 5));
    const uint32_t i[5] = {0, 0, 1, 1, 1}, j[5] = {0, 0, 2, 2, 2}, k[5] = {1, 3, 0, 1, 2};
    const double v[5] = {1.5, -1.5, 2, -3, 4};
    for (int e = 0; e < 5; ++e) X.ind[0][e] = i[e], X.ind[1][e] = j[e], X.ind[2][e] = k[e], X.vals[e] = v[e];
    tf_tensor out;
    const uint32_t m2 = 2;
    CHECK_OK(tf_tensor_collapse(&X, 1, &m2, TF_COLLAPSE_SUM, &out, NULL));
    CHECK(out.order == 2 && out.nnz == 1 && out.ind[0][0] == 1 && out.ind[1][0] == 2 && out.vals[0] == 3.0);
    tf_tensor_free(&out);
    CHECK_OK(tf_tensor_collapse(&X, 1, &m2, TF_COLLAPSE_MAX, &out, NULL));
    CHECK(out.nnz == 2 && out.vals[0] == 1.5 && out.vals[1] == 4.0);
    tf_tensor_free(&out);
    CHECK_OK(tf_tensor_collapse(&X, 1, &m2, TF_COLLAPSE_MIN, &out, NULL));
    CHECK(out.nnz == 2 && out.vals[0] == -1.5 && out.vals[1] == -3.0);
    tf_tensor_free(&out);
    const uint32_t m12[2] = {1, 2};
    double d[2] = {NAN, NAN};
    CHECK_OK(tf_tensor_collapse(&X, 2, m12, TF_COLLAPSE_SUM, NULL, d));
    CHECK(d[0] == 0.0 && d[1] == 3.0);
    /* max over the stored values only: a fibre of negative values has a negative max */
    const uint32_t m01[2] = {0, 1};
    double d4[4] = {NAN, NAN, NAN, NAN};
    CHECK_OK(tf_tensor_collapse(&X, 2, m01, TF_COLLAPSE_MAX, NULL, d4));
    CHECK(d4[0] == 2.0 && d4[1] == 1.5 && d4[2] == 4.0 && d4[3] == -1.5);
    /* ttv over all modes: the scalar sum_j x_j prod_m w_m(i_m) */
    const double w0[2] = {1, 2}, w1[3] = {1, 1, 0.5}, w2[4] = {1, 2, 3, 4};
    const double *ws[3] = {w2, w0, w1};
    const uint32_t all[3] = {2, 0, 1};
    double s = NAN;
    CHECK_OK(tf_tensor_ttv(&X, 3, all, ws, NULL, &s));
    CHECK(s == 1.5 * 2 - 1.5 * 4 + 2 * 2 * 0.5 * 1 - 3 * 2 * 0.5 * 2 + 4 * 2 * 0.5 * 3);
    tf_tensor_free(&X);
}

static void real_data(tf_rng *rng)
{
    tf_tensor X;
    if (!kt_read_uber(&X)) return;
    check_all("uber-apr14", rng, &X, 1);
    const double t0 = tf_wtime();
    const uint32_t modes[3] = {0, 1, 3};
    double *ones[3], *d = malloc(X.dims[2] * sizeof(double));
    for (int i = 0; i < 3; ++i) {
        ones[i] = malloc(X.dims[modes[i]] * sizeof(double));
        for (uint64_t e = 0; e < X.dims[modes[i]]; ++e) ones[i][e] = 1.0;
    }
    CHECK_OK(tf_tensor_ttv(&X, 3, modes, (const double *const *)ones, NULL, d));
    double sum = 0.0;
    for (uint64_t e = 0; e < X.dims[2]; ++e) sum += d[e];
    CHECKF(sum == 564516.0, "uber-apr14: the pickups sum to %.17g, expected 564516", sum); /* test_io_realdata */
    printf("uber-apr14: ttv onto mode 3 %.2f ms\n", (tf_wtime() - t0) * 1e3);
    for (int i = 0; i < 3; ++i) free(ones[i]);
    free(d);
    tf_tensor_free(&X);
}

static void errors(tf_rng *rng)
{
    const uint64_t dims[3] = {5, 6, 7};
    tf_tensor X = sp_random_tensor(rng, 3, dims, 40, -1);
    tf_tensor out;
    double d[8], v5[7] = {1, 2, 3, 4, 5, 6, 7}; /* long enough for every mode */
    const double *vs[3] = {v5, v5, v5};
    const uint32_t m0 = 0, m01[2] = {0, 1}, m00[2] = {0, 0}, m3 = 3, m012[3] = {0, 1, 2};
    CHECK_FAILS(tf_tensor_ttv(NULL, 1, &m0, vs, &out, d), TF_ERR_ARG, "X must not be NULL");
    CHECK_FAILS(tf_tensor_ttv(&X, 1, &m0, NULL, &out, d), TF_ERR_ARG, "vecs must not be NULL");
    const double *vn[1] = {NULL};
    CHECK_FAILS(tf_tensor_ttv(&X, 1, &m0, vn, &out, d), TF_ERR_ARG, "the vector of mode 1 is NULL");
    CHECK_FAILS(tf_tensor_ttv(&X, 0, &m0, vs, &out, d), TF_ERR_ARG, "0 modes, expected 1..3");
    const double *vinf[1] = {(const double[5]){1, 2, 3, INFINITY, 5}};
    CHECK_FAILS(tf_tensor_ttv(&X, 1, &m0, vinf, &out, d), TF_ERR_ARG, "entry 3 of the vector of mode 1 is inf");
    CHECK_FAILS(tf_tensor_collapse(&X, 4, m012, TF_COLLAPSE_SUM, &out, d), TF_ERR_ARG, "4 modes, expected 1..3");
    CHECK_FAILS(tf_tensor_collapse(&X, 1, &m3, TF_COLLAPSE_SUM, &out, d), TF_ERR_ARG, "mode 4 is outside 1..3");
    CHECK_FAILS(tf_tensor_collapse(&X, 2, m00, TF_COLLAPSE_SUM, &out, d), TF_ERR_ARG, "mode 1 is listed twice");
    CHECK_FAILS(tf_tensor_collapse(&X, 1, NULL, TF_COLLAPSE_SUM, &out, d), TF_ERR_ARG, "modes must not be NULL");
    CHECK_FAILS(tf_tensor_collapse(&X, 1, &m0, (tf_collapse_op)7, &out, d), TF_ERR_ARG, "unknown operation 7");
    CHECK_FAILS(tf_tensor_collapse(&X, 1, &m0, TF_COLLAPSE_SUM, NULL, d), TF_ERR_ARG, "out (a sparse tensor) must not be NULL");
    CHECK_FAILS(tf_tensor_collapse(&X, 2, m01, TF_COLLAPSE_MAX, &out, NULL), TF_ERR_ARG, "1 mode is left, so dense must not be NULL");
    CHECK_FAILS(tf_tensor_ttv(&X, 3, m012, vs, &out, NULL), TF_ERR_ARG, "0 modes are left, so dense must not be NULL");
    CHECK_FAILS(tf_tensor_scale(&X, 3, v5, 1.0, &out), TF_ERR_ARG, "mode 4 is outside 1..3");
    CHECK_FAILS(tf_tensor_scale(&X, 0, v5, INFINITY, &out), TF_ERR_ARG, "alpha is inf");
    double vbad[5] = {1, 2, NAN, 4, 5};
    CHECK_FAILS(tf_tensor_scale(&X, 0, vbad, 1.0, &out), TF_ERR_ARG, "v[2] is nan");
    CHECK_FAILS(tf_tensor_scale(&X, 0, v5, 1.0, NULL), TF_ERR_ARG, "out must not be NULL");
    CHECK_FAILS(tf_tensor_scale(NULL, 0, v5, 1.0, &out), TF_ERR_ARG, "X must not be NULL");
    const uint32_t p_bad[3] = {0, 2, 2}, p_big[3] = {0, 1, 3};
    CHECK_FAILS(tf_tensor_permute(&X, p_bad, &out), TF_ERR_ARG, "not a permutation of 0..2 (entry 2 is 2)");
    CHECK_FAILS(tf_tensor_permute(&X, p_big, &out), TF_ERR_ARG, "entry 2 is 3");
    CHECK_FAILS(tf_tensor_permute(&X, NULL, &out), TF_ERR_ARG, "perm must not be NULL");
    CHECK_FAILS(tf_tensor_permute(&X, m012, NULL), TF_ERR_ARG, "out must not be NULL");
    const uint64_t lo[3] = {0, 2, 0}, hi[3] = {5, 2, 7}, hi2[3] = {5, 3, 8};
    CHECK_FAILS(tf_tensor_subtensor(&X, lo, hi, &out), TF_ERR_ARG, "mode 2 range 2..2");
    CHECK_FAILS(tf_tensor_subtensor(&X, lo, hi2, &out), TF_ERR_ARG, "mode 3 range 0..8 is not within 0..7");
    CHECK_FAILS(tf_tensor_subtensor(&X, NULL, hi, &out), TF_ERR_ARG, "lo and hi must not be NULL");
    CHECK_FAILS(tf_tensor_subtensor(&X, lo, hi2, NULL), TF_ERR_ARG, "out must not be NULL");
    /* a failed call leaves a tensor output zeroed (safe to free) */
    memset(&out, 0xa5, sizeof out);
    CHECK_FAILS(tf_tensor_collapse(&X, 1, &m3, TF_COLLAPSE_SUM, &out, d), TF_ERR_ARG, "mode 4");
    CHECK(out.nnz == 0 && out.vals == NULL && out.ind[0] == NULL);
    /* an invalid tensor: tf_tensor_validate's message */
    X.ind[1][3] = 6;
    CHECK_FAILS(tf_tensor_permute(&X, m012, &out), TF_ERR_RANGE, "mode 2 index 6 is outside 0..5");
    CHECK_FAILS(tf_tensor_ttv(&X, 1, &m0, vs, &out, d), TF_ERR_RANGE, "mode 2 index 6");
    tf_tensor_free(&X);
}

int main(void)
{
    threads0 = tf_default_threads();
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_tensor_ops"));
    random_cases(&rng);
    cancelling();
    real_data(&rng);
    errors(&rng);
    return tf_test_finish("test_tensor_ops");
}
