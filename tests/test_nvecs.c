/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_nvecs (src/algo/nvecs.c) against a dense float64 eigendecomposition
 * (LAPACK dsyev) of the Gram X_(n) X_(n)^T formed here independently (the
 * non-zeros grouped by the other modes with qsort): both methods, every
 * mode of small random tensors, uber-apr14's modes 1-2 (and 3, where the
 * subspace iteration runs on the formed Gram); the sign convention, the
 * thread count, the errors; and tf_cpd's nvecs start (TF_START_NVECS). */
#include <stdint.h>

#include "algo/nvecs.h"
#include "check.h"
#include "core/rng.h"
#include "tenfold.h"

void dsyev_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda, double *w, double *work,
            const int *lwork, int *info, size_t ljobz, size_t luplo);

static const tf_tensor *cmp_X;
static uint32_t cmp_mode;

/* Orders non-zero positions by the other modes' indices. */
static int cmp_others(const void *pa, const void *pb)
{
    const uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    for (uint32_t m = 0; m < cmp_X->order; ++m) {
        if (m == cmp_mode) continue;
        if (cmp_X->ind[m][a] != cmp_X->ind[m][b]) return cmp_X->ind[m][a] < cmp_X->ind[m][b] ? -1 : 1;
    }
    return a < b ? -1 : a > b;
}

static int same_column(const tf_tensor *X, uint32_t mode, uint64_t a, uint64_t b)
{
    for (uint32_t m = 0; m < X->order; ++m)
        if (m != mode && X->ind[m][a] != X->ind[m][b]) return 0;
    return 1;
}

/* The Gram X_(n) X_(n)^T (I x I), summed column by column. */
static double *reference_gram(const tf_tensor *X, uint32_t mode)
{
    const uint64_t I = X->dims[mode], n = X->nnz;
    uint64_t *p = malloc(n * sizeof *p);
    double *G = calloc(I * I, sizeof *G);
    for (uint64_t k = 0; k < n; ++k) p[k] = k;
    cmp_X = X;
    cmp_mode = mode;
    qsort(p, n, sizeof *p, cmp_others);
    for (uint64_t s = 0; s < n;) {
        uint64_t e = s + 1;
        while (e < n && same_column(X, mode, p[s], p[e])) ++e;
        for (uint64_t a = s; a < e; ++a)
            for (uint64_t b = s; b < e; ++b)
                G[(uint64_t)X->ind[mode][p[a]] * I + X->ind[mode][p[b]]] += X->vals[p[a]] * X->vals[p[b]];
        s = e;
    }
    free(p);
    return G;
}

/* The r leading eigenpairs of G (dsyev), decreasing, as vecs (I x r,
 * row-major) with pyttb's signs: each column's first largest-magnitude
 * entry positive. */
static void reference_nvecs(double *G, uint64_t I, uint64_t r, double *vecs, double *vals)
{
    const int n = (int)I;
    int info = 0, lwork = -1;
    double q = 0.0, *w = malloc(I * sizeof *w);
    dsyev_("V", "U", &n, G, &n, w, &q, &lwork, &info, 1, 1);
    lwork = (int)q + 1;
    double *work = malloc((size_t)lwork * sizeof *work);
    dsyev_("V", "U", &n, G, &n, w, work, &lwork, &info, 1, 1);
    CHECK(info == 0);
    for (uint64_t c = 0; c < r; ++c) {
        const uint64_t j = I - 1 - c;
        vals[c] = w[j];
        double best = -1.0, at = 0.0;
        for (uint64_t i = 0; i < I; ++i)
            if (fabs(G[j * I + i]) > best) best = fabs(G[j * I + i]), at = G[j * I + i];
        for (uint64_t i = 0; i < I; ++i) vecs[i * r + c] = at < 0.0 ? -G[j * I + i] : G[j * I + i];
    }
    free(w);
    free(work);
}

/* Random tensor: nnz draws (duplicates summed), values in [0.5, 1.5) or,
 * signed, [-1, 1). */
static void random_tensor(uint32_t order, const uint64_t *dims, uint64_t nnz, uint64_t seed, int sign, tf_tensor *X)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    CHECK_OK(tf_tensor_alloc(X, order, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < order; ++m) X->ind[m][k] = (uint32_t)tf_rng_below(&rng, dims[m]);
        X->vals[k] = sign ? 2.0 * tf_rng_uniform(&rng) - 1.0 : 0.5 + tf_rng_uniform(&rng);
    }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL));
}

/* Compares tf_nvecs(method) with the reference on (X, mode, r): eigenvalues,
 * the subspace (r - ||U^T V||_F^2, zero iff every singular value of U^T V
 * is 1) and, with the signs fixed, the vectors entry by entry. */
static void compare(const char *what, const tf_tensor *X, uint32_t mode, uint64_t r, tf_nvecs_method method,
                    double entry_tol)
{
    const uint64_t I = X->dims[mode];
    double *G = reference_gram(X, mode);
    double *ref = malloc(I * r * sizeof *ref), *refval = malloc(r * sizeof *refval), *val = malloc(r * sizeof *val);
    reference_nvecs(G, I, r, ref, refval);
    tf_nvecs_opts o;
    tf_nvecs_opts_default(&o);
    o.method = method;
    tf_matrix U;
    tf_nvecs_info info;
    CHECK_OK(tf_nvecs(X, mode, r, &o, &U, val, &info));
    CHECK(U.rows == I && U.cols == r);
    CHECKF(method == TF_NVECS_AUTO || info.method == method, "%s: ran method %d", what, (int)info.method);
    double dval = 0.0, dent = 0.0, overlap = 0.0, ortho = 0.0;
    for (uint64_t c = 0; c < r; ++c) dval = fmax(dval, fabs(val[c] - refval[c]) / refval[0]);
    for (uint64_t e = 0; e < I * r; ++e) dent = fmax(dent, fabs(U.data[e] - ref[e]));
    for (uint64_t a = 0; a < r; ++a)
        for (uint64_t b = 0; b < r; ++b) {
            double uv = 0.0, uu = 0.0;
            for (uint64_t i = 0; i < I; ++i) {
                uv += U.data[i * r + a] * ref[i * r + b];
                uu += U.data[i * r + a] * U.data[i * r + b];
            }
            overlap += uv * uv;
            ortho = fmax(ortho, fabs(uu - (a == b)));
        }
    const double gap = fabs(r - overlap);
    CHECKF(dval < 1e-11, "%s: eigenvalues differ by %.3g (relative to the largest)", what, dval);
    CHECKF(gap < 1e-10, "%s: r - ||U^T V||^2 = %.3g", what, gap);
    CHECKF(ortho < 1e-12, "%s: U^T U - I up to %.3g", what, ortho);
    CHECKF(dent < entry_tol, "%s: vectors differ by %.3g entrywise (tolerance %.1g)", what, dent, entry_tol);
    CHECKF(info.residual < 1e-10, "%s: residual %.3g", what, info.residual);
    printf("%-36s I %5llu r %2llu: %s%s, %3u steps, residual %.1e, eigenvalues %.1e, subspace %.1e, "
           "entries %.1e, %.3f s\n", what, (unsigned long long)I, (unsigned long long)r,
           info.method == TF_NVECS_DENSE ? "dense" : "subspace", info.formed_gram ? " (formed Gram)" : "",
           info.iters, info.residual, dval, gap, dent, info.seconds);
    tf_matrix_free(&U);
    free(G);
    free(ref);
    free(refval);
    free(val);
}

static void test_small_random(void)
{
    static const struct { uint32_t order; uint64_t dims[4]; uint64_t nnz; int sign; } cases[] = {
        {3, {30, 20, 15}, 600, 0},
        {3, {60, 7, 40}, 900, 1},
        {4, {12, 9, 7, 5}, 700, 0},
        {3, {200, 50, 40}, 4000, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        tf_tensor X;
        random_tensor(cases[c].order, cases[c].dims, cases[c].nnz, 100 + c, cases[c].sign, &X);
        for (uint32_t m = 0; m < X.order; ++m) {
            const uint64_t r = X.dims[m] < 6 ? X.dims[m] : 6;
            char what[96];
            snprintf(what, sizeof what, "random %zu mode %u dense", c, m + 1);
            compare(what, &X, m, r, TF_NVECS_DENSE, 1e-9);
            snprintf(what, sizeof what, "random %zu mode %u subspace", c, m + 1);
            compare(what, &X, m, r, TF_NVECS_SUBSPACE, 1e-8);
        }
        tf_tensor_free(&X);
    }
}

/* All of mode n's vectors (r = I), and r = 1. */
static void test_edges(void)
{
    tf_tensor X;
    const uint64_t dims[3] = {9, 8, 7};
    random_tensor(3, dims, 200, 7, 0, &X);
    compare("edge: r = I", &X, 1, 8, TF_NVECS_DENSE, 1e-9);
    compare("edge: r = I subspace", &X, 1, 8, TF_NVECS_SUBSPACE, 1e-8);
    compare("edge: r = 1", &X, 0, 1, TF_NVECS_SUBSPACE, 1e-8);
    tf_tensor H; /* hypersparse: nearly every column of the unfolding has one entry (a diagonal Gram) */
    const uint64_t hd[3] = {50, 400, 300};
    random_tensor(3, hd, 120, 9, 1, &H);
    compare("edge: hypersparse", &H, 0, 6, TF_NVECS_DENSE, 1e-9);
    compare("edge: hypersparse subspace", &H, 0, 6, TF_NVECS_SUBSPACE, 1e-8);
    tf_tensor_free(&H);
    tf_matrix U;
    CHECK_FAILS(tf_nvecs(&X, 1, 9, NULL, &U, NULL, NULL), TF_ERR_ARG, "whose length is 8");
    CHECK_FAILS(tf_nvecs(&X, 1, 0, NULL, &U, NULL, NULL), TF_ERR_ARG, "expected 1..8");
    CHECK_FAILS(tf_nvecs(&X, 3, 1, NULL, &U, NULL, NULL), TF_ERR_ARG, "mode 4 is outside 1..3");
    tf_nvecs_opts o;
    tf_nvecs_opts_default(&o);
    o.method = (tf_nvecs_method)7;
    CHECK_FAILS(tf_nvecs(&X, 0, 1, &o, &U, NULL, NULL), TF_ERR_ARG, "unknown method");
    tf_tensor_free(&X);
}

/* The two forms of the sparse operator: W = X^T V in one block and in many
 * (then Y = X W), against the fused one. */
static void test_operator_forms(void)
{
    tf_tensor X;
    const uint64_t dims[3] = {300, 40, 30};
    random_tensor(3, dims, 5000, 13, 1, &X);
    tf_nvecs_set_blocks(0, 0);
    compare("W = X^T V, one block", &X, 0, 5, TF_NVECS_SUBSPACE, 1e-8);
    tf_nvecs_set_blocks(0, 1000);
    compare("W = X^T V, blocks of 1000", &X, 0, 5, TF_NVECS_SUBSPACE, 1e-8);
    tf_nvecs_set_blocks((uint64_t)1 << 24, 0);
    compare("fused", &X, 0, 5, TF_NVECS_SUBSPACE, 1e-8);
    tf_tensor_free(&X);
}

/* The same bits for 1 and 2 threads, both methods. */
static void test_threads(void)
{
    tf_tensor X;
    const uint64_t dims[3] = {300, 40, 30};
    random_tensor(3, dims, 5000, 11, 1, &X);
    for (int method = TF_NVECS_DENSE; method <= TF_NVECS_SUBSPACE; ++method) {
        tf_matrix a, b;
        tf_nvecs_opts o;
        tf_nvecs_opts_default(&o);
        o.method = (tf_nvecs_method)method;
        o.threads = 1;
        CHECK_OK(tf_nvecs(&X, 0, 5, &o, &a, NULL, NULL));
        o.threads = 2;
        CHECK_OK(tf_nvecs(&X, 0, 5, &o, &b, NULL, NULL));
        CHECKF(!memcmp(a.data, b.data, 300 * 5 * sizeof(double)), "method %d: the thread count changed the bits",
               method);
        tf_matrix_free(&a);
        tf_matrix_free(&b);
    }
    tf_tensor_free(&X);
}

static void test_uber(void)
{
    tf_tensor X;
    const char *path = TF_REPO_DATA "/uber-apr14.tns.xz";
    if (tf_read_tensor(path, 0, &X, NULL) != TF_OK) {
        CHECKF(0, "cannot read %s: %s", path, tf_last_error());
        return;
    }
    compare("uber-apr14 mode 1", &X, 0, 10, TF_NVECS_AUTO, 1e-8);
    compare("uber-apr14 mode 1 subspace", &X, 0, 10, TF_NVECS_SUBSPACE, 1e-8);
    compare("uber-apr14 mode 2", &X, 1, 10, TF_NVECS_AUTO, 1e-8);
    compare("uber-apr14 mode 2 subspace", &X, 1, 10, TF_NVECS_SUBSPACE, 1e-8);
    compare("uber-apr14 mode 3", &X, 2, 10, TF_NVECS_AUTO, 1e-8);
    compare("uber-apr14 mode 4", &X, 3, 10, TF_NVECS_AUTO, 1e-8);
    tf_tensor_free(&X);
}

/* tf_cpd's nvecs start: the run from the start built by hand (factor 1
 * zero, factors 2..N tf_nvecs) gives the same bits; deterministic; not the
 * random start's run; a rank above a mode's length works. */
static void test_cpd_start(void)
{
    tf_tensor X;
    const uint64_t dims[3] = {40, 30, 6};
    random_tensor(3, dims, 1500, 21, 0, &X);
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = 4;
    o.max_iters = 8;
    o.tol = 0.0;
    o.backend = TF_BACKEND_CPU;
    o.start = TF_START_NVECS;
    tf_ktensor a, b, c, start;
    tf_cpd_report ra, rb, rc;
    CHECK_OK(tf_cpd(&X, &o, &a, &ra));
    CHECK(ra.t_init > 0.0 && ra.t_init <= ra.t_total);
    CHECK_OK(tf_cpd(&X, &o, &b, &rb));
    CHECK(ra.fit == rb.fit && !memcmp(a.factors[1].data, b.factors[1].data, 30 * 4 * sizeof(double)));
    CHECK_OK(tf_ktensor_alloc(&start, 3, dims, 4));
    memset(start.factors[0].data, 0, 40 * 4 * sizeof(double));
    for (uint32_t m = 1; m < 3; ++m) {
        tf_matrix v;
        CHECK_OK(tf_nvecs(&X, m, 4, NULL, &v, NULL, NULL));
        memcpy(start.factors[m].data, v.data, dims[m] * 4 * sizeof(double));
        tf_matrix_free(&v);
    }
    for (int r = 0; r < 4; ++r) start.lambda[r] = 1.0;
    tf_cpd_opts g = o;
    g.start = TF_START_RANDOM;
    g.init = &start;
    CHECK_OK(tf_cpd(&X, &g, &c, &rc));
    CHECKF(rc.fit == ra.fit && rc.iters == ra.iters, "given nvecs start: fit %.17g, the nvecs run %.17g", rc.fit,
           ra.fit);
    tf_ktensor_free(&c);
    g.init = NULL;
    CHECK_OK(tf_cpd(&X, &g, &c, &rc));
    CHECK(rc.fit != ra.fit && rc.t_init == 0.0);
    tf_ktensor_free(&a);
    tf_ktensor_free(&b);
    tf_ktensor_free(&c);
    tf_ktensor_free(&start);
    /* rank 8 > mode 3's length 6 */
    o.rank = 8;
    CHECK_OK(tf_cpd(&X, &o, &a, &ra));
    CHECK(isfinite(ra.fit) && ra.fit > 0.0);
    tf_ktensor_free(&a);
    o.start = (tf_cpd_start)5;
    CHECK_FAILS(tf_cpd(&X, &o, &a, &ra), TF_ERR_ARG, "unknown start");
    tf_tensor_free(&X);
}

int main(void)
{
    test_small_random();
    test_edges();
    test_operator_forms();
    test_threads();
    test_uber();
    test_cpd_start();
    return tf_test_finish("test_nvecs");
}
