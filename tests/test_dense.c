/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense CP-ALS helpers (src/cpu/dense.c) against plain float64 loops:
 * Gram, Hadamard, Cholesky solve, the pseudo-inverse fallback (rank-deficient
 * V, zero column), normalisation, fit terms; thread-count independence; the
 * fused ALS step (tf_dense_als_step) and tf_dense_normalize_gram against
 * the steps one by one (bits) and the loops. */
#include <stdint.h>

#include "check.h"
#include "core/alloc.h"
#include "core/rng.h"
#include "cpu/dense.h"
#include "tenfold.h"

static double *random_matrix(tf_rng *rng, uint64_t rows, uint64_t cols)
{
    double *a = malloc(rows * cols * sizeof *a);
    for (uint64_t e = 0; e < rows * cols; ++e) a[e] = tf_rng_uniform(rng) * 2.0 - 1.0;
    return a;
}

static double *poisoned(uint64_t n)
{
    double *a = malloc(n * sizeof *a);
    for (uint64_t e = 0; e < n; ++e) a[e] = NAN;
    return a;
}

static int all_finite(const double *a, uint64_t n)
{
    for (uint64_t e = 0; e < n; ++e)
        if (!isfinite(a[e])) return 0;
    return 1;
}

/* C (n x p) = A (n x m) * B (m x p), row-major. */
static void matmul(const double *A, const double *B, uint64_t n, uint64_t m, uint64_t p, double *C)
{
    for (uint64_t i = 0; i < n; ++i)
        for (uint64_t j = 0; j < p; ++j) {
            double s = 0.0;
            for (uint64_t k = 0; k < m; ++k) s += A[i * m + k] * B[k * p + j];
            C[i * p + j] = s;
        }
}

static void gram_ref(const double *A, uint64_t I, uint64_t R, double *G)
{
    for (uint64_t r = 0; r < R; ++r)
        for (uint64_t s = 0; s < R; ++s) {
            double g = 0.0;
            for (uint64_t i = 0; i < I; ++i) g += A[i * R + r] * A[i * R + s];
            G[r * R + s] = g;
        }
}

/* Gauss-Jordan inverse with partial pivoting (n small); returns 0 if singular. */
static int inverse_ref(const double *A, uint64_t n, double *Inv)
{
    double *W = malloc(n * 2 * n * sizeof *W);
    for (uint64_t i = 0; i < n; ++i)
        for (uint64_t j = 0; j < 2 * n; ++j) W[i * 2 * n + j] = j < n ? A[i * n + j] : (j - n == i);
    int ok = 1;
    for (uint64_t c = 0; c < n && ok; ++c) {
        uint64_t p = c;
        for (uint64_t i = c + 1; i < n; ++i)
            if (fabs(W[i * 2 * n + c]) > fabs(W[p * 2 * n + c])) p = i;
        if (W[p * 2 * n + c] == 0.0) { ok = 0; break; }
        for (uint64_t j = 0; j < 2 * n; ++j) {
            double t = W[c * 2 * n + j]; W[c * 2 * n + j] = W[p * 2 * n + j]; W[p * 2 * n + j] = t;
        }
        double d = W[c * 2 * n + c];
        for (uint64_t j = 0; j < 2 * n; ++j) W[c * 2 * n + j] /= d;
        for (uint64_t i = 0; i < n; ++i) {
            if (i == c) continue;
            double f = W[i * 2 * n + c];
            for (uint64_t j = 0; j < 2 * n; ++j) W[i * 2 * n + j] -= f * W[c * 2 * n + j];
        }
    }
    for (uint64_t i = 0; ok && i < n; ++i)
        for (uint64_t j = 0; j < n; ++j) Inv[i * n + j] = W[i * 2 * n + n + j];
    free(W);
    return ok;
}

/* Gram of an I x R matrix against loops, on 1 and 2 threads (same bits). */
static void check_gram(tf_rng *rng, uint64_t I, uint64_t R)
{
    double *A = random_matrix(rng, I, R), *G = poisoned(R * R), *G2 = poisoned(R * R);
    double *ref = malloc(R * R * sizeof *ref);
    gram_ref(A, I, R, ref);
    CHECK_OK(tf_dense_gram(A, I, R, 1, G));
    CHECKF(tf_rel_err(G, ref, R * R) < 1e-13, "gram %llu x %llu rel err %g", (unsigned long long)I,
           (unsigned long long)R, tf_rel_err(G, ref, R * R));
    CHECK_OK(tf_dense_gram(A, I, R, 2, G2));
    CHECK(memcmp(G, G2, R * R * sizeof *G) == 0);
    free(A); free(G); free(G2); free(ref);
}

static void test_gram_hadamard(tf_rng *rng)
{
    check_gram(rng, 5000, 7); /* several blocks and slabs */
    check_gram(rng, 1, 7);    /* a single row */
    check_gram(rng, 3001, 40); /* smaller BLAS blocks for a larger rank */
    check_gram(rng, 777, 1);
    const uint64_t R = 7;

    double *Gs[3] = {random_matrix(rng, R, R), random_matrix(rng, R, R), random_matrix(rng, R, R)};
    double *V = poisoned(R * R);
    tf_dense_hadamard((const double *const *)Gs, 3, 1, R, V);
    int ok = 1;
    for (uint64_t e = 0; e < R * R; ++e) ok &= V[e] == Gs[0][e] * Gs[2][e];
    CHECK(ok);
    tf_dense_hadamard((const double *const *)Gs, 3, 3, R, V);
    ok = 1;
    for (uint64_t e = 0; e < R * R; ++e) ok &= V[e] == Gs[0][e] * Gs[1][e] * Gs[2][e];
    CHECK(ok);
    tf_dense_hadamard((const double *const *)Gs, 1, 0, R, V);
    ok = 1;
    for (uint64_t e = 0; e < R * R; ++e) ok &= V[e] == 1.0;
    CHECK(ok);
    for (int k = 0; k < 3; ++k) free(Gs[k]);
    free(V);
}

/* Solves B * pinv(V) with the helper, on 1 and 2 threads, and compares with
 * B * Vplus (reference pseudo-inverse); expect_pinv: which path must run. */
static void check_solve(const double *B, uint64_t I, uint64_t R, const double *V, const double *Vplus,
                        int expect_pinv, double tol, const char *what)
{
    double *X1 = poisoned(I * R), *X2 = poisoned(I * R);
    double *ref = malloc(I * R * sizeof *ref);
    matmul(B, Vplus, I, R, R, ref);
    int p1 = -1, p2 = -1;
    CHECK_OK(tf_dense_solve(B, X1, I, R, V, 1, &p1));
    CHECK_OK(tf_dense_solve(B, X2, I, R, V, 2, &p2));
    CHECKF(p1 == expect_pinv && p2 == expect_pinv, "%s: used_pinv %d/%d, expected %d", what, p1, p2,
           expect_pinv);
    CHECKF(all_finite(X1, I * R), "%s: non-finite solution", what);
    double err = tf_rel_err(X1, ref, I * R);
    CHECKF(err < tol, "%s: rel err %g", what, err);
    CHECKF(memcmp(X1, X2, I * R * sizeof *X1) == 0, "%s: 1 and 2 threads differ", what);
    free(X1); free(X2); free(ref);
}

static void check_solve_spd(tf_rng *rng, uint64_t I, uint64_t R)
{
    double *F = random_matrix(rng, 2 * R + 20, R), *V = malloc(R * R * sizeof *V), *Vi = malloc(R * R * sizeof *Vi);
    gram_ref(F, 2 * R + 20, R, V);
    CHECK(inverse_ref(V, R, Vi));
    double *B = random_matrix(rng, I, R);
    check_solve(B, I, R, V, Vi, 0, 1e-10, "SPD");
    free(F); free(V); free(Vi); free(B);
}

static void test_solve_spd(tf_rng *rng)
{
    check_solve_spd(rng, 4100, 9);
    check_solve_spd(rng, 1000, 40);
    check_solve_spd(rng, 3, 1);
}

/* V = C C^T with C an integer R x k matrix: exactly rank k < R, and
 * pinv(V) = C (C^T C)^-2 C^T from plain loops. */
static void test_solve_rank_deficient(tf_rng *rng)
{
    const uint64_t R = 6, k = 3, I = 3000;
    double C[6 * 3], Ct[3 * 6], CtC[9], CtCi[9], CtCi2[9], T[6 * 3], Vp[36], V[36];
    for (uint64_t e = 0; e < R * k; ++e) C[e] = (double)((int)tf_rng_below(rng, 7) - 3);
    C[0] = 4; C[4] = 5; C[8] = 6; /* keep C of full column rank */
    for (uint64_t i = 0; i < R; ++i)
        for (uint64_t j = 0; j < k; ++j) Ct[j * R + i] = C[i * k + j];
    matmul(C, Ct, R, k, R, V);
    matmul(Ct, C, k, R, k, CtC);
    CHECK(inverse_ref(CtC, k, CtCi));
    matmul(CtCi, CtCi, k, k, k, CtCi2);
    matmul(C, CtCi2, R, k, k, T);
    matmul(T, Ct, R, k, R, Vp);
    double *B = random_matrix(rng, I, R);
    check_solve(B, I, R, V, Vp, 1, 1e-9, "rank-deficient");
    free(B);
}

/* A factor with a zero column gives a Gram with a zero row and column. */
static void test_solve_zero_column(tf_rng *rng)
{
    const uint64_t R = 5, I = 60, z = 2;
    double *A = random_matrix(rng, I, R), *B = random_matrix(rng, I, R);
    for (uint64_t i = 0; i < I; ++i) A[i * R + z] = B[i * R + z] = 0.0;
    double V[25], sub[16], subi[16], Vp[25] = {0};
    CHECK_OK(tf_dense_gram(A, I, R, 2, V));
    for (uint64_t i = 0, a = 0; i < R; ++i) {
        if (i == z) continue;
        for (uint64_t j = 0, b = 0; j < R; ++j)
            if (j != z) sub[a * (R - 1) + b++] = V[i * R + j];
        ++a;
    }
    CHECK(inverse_ref(sub, R - 1, subi));
    for (uint64_t i = 0, a = 0; i < R; ++i) {
        if (i == z) continue;
        for (uint64_t j = 0, b = 0; j < R; ++j)
            if (j != z) Vp[i * R + j] = subi[a * (R - 1) + b++];
        ++a;
    }
    check_solve(B, I, R, V, Vp, 1, 1e-9, "zero column");

    /* a zero normal matrix (all factors zero): solution zero, no NaN */
    double Z[25] = {0}, Zp[25] = {0};
    check_solve(B, I, R, Z, Zp, 1, 1e-300, "zero matrix");

    double bad[25];
    memcpy(bad, V, sizeof bad);
    bad[7] = NAN;
    int p = 0;
    double *X = poisoned(I * R);
    CHECK(tf_dense_solve(B, X, I, R, bad, 1, &p) == TF_ERR_NUMERIC);
    free(X);
    CHECK(strlen(tf_last_error()) > 0);
    free(A); free(B);
}

static void test_normalize(tf_rng *rng)
{
    const uint64_t I = 3000, R = 4;
    double *A = random_matrix(rng, I, R);
    for (uint64_t i = 0; i < I; ++i) {
        A[i * R + 1] = 0.0;        /* zero column */
        A[i * R + 2] *= 0.5;       /* max |a| < 1: max-norm leaves it */
        A[i * R + 3] *= 40.0;      /* max |a| > 1 */
    }
    double ref_sq[4] = {0}, ref_max[4] = {0};
    for (uint64_t i = 0; i < I; ++i)
        for (uint64_t r = 0; r < R; ++r) {
            ref_sq[r] += A[i * R + r] * A[i * R + r];
            if (fabs(A[i * R + r]) > ref_max[r]) ref_max[r] = fabs(A[i * R + r]);
        }
    for (int max_norm = 0; max_norm < 2; ++max_norm) {
        double *W1 = malloc(I * R * sizeof *W1), *W2 = malloc(I * R * sizeof *W2);
        memcpy(W1, A, I * R * sizeof *W1);
        memcpy(W2, A, I * R * sizeof *W2);
        double l1[4] = {NAN, NAN, NAN, NAN}, l2[4];
        CHECK_OK(tf_dense_normalize(W1, I, R, max_norm, 1, l1));
        CHECK_OK(tf_dense_normalize(W2, I, R, max_norm, 2, l2));
        CHECK(memcmp(W1, W2, I * R * sizeof *W1) == 0 && memcmp(l1, l2, sizeof l1) == 0);
        CHECK(all_finite(W1, I * R) && all_finite(l1, R));
        for (uint64_t r = 0; r < R; ++r) {
            double want = max_norm ? (ref_max[r] > 1.0 ? ref_max[r] : 1.0) : sqrt(ref_sq[r]);
            CHECKF(fabs(l1[r] - want) <= 1e-13 * (want > 1 ? want : 1), "max_norm %d lambda[%llu] %g, want %g",
                   max_norm, (unsigned long long)r, l1[r], want);
            double err = 0.0;
            for (uint64_t i = 0; i < I; ++i) {
                double expect = want > 0 ? A[i * R + r] / want : A[i * R + r];
                err = fmax(err, fabs(W1[i * R + r] - expect));
            }
            CHECKF(err < 1e-14, "max_norm %d column %llu scaled wrongly (%g)", max_norm,
                   (unsigned long long)r, err);
        }
        free(W1); free(W2);
    }
    CHECK(ref_sq[1] == 0.0);
    A[17 * R + 3] = INFINITY;
    double l[4];
    CHECK(tf_dense_normalize(A, I, R, 1, 2, l) == TF_ERR_NUMERIC);
    A[17 * R + 3] = NAN;
    CHECK(tf_dense_normalize(A, I, R, 0, 2, l) == TF_ERR_NUMERIC);
    CHECK(tf_dense_normalize(A, I, R, 1, 2, l) == TF_ERR_NUMERIC);
    free(A);
}

static void test_fit_terms(tf_rng *rng)
{
    const uint64_t I = 7000, R = 5;
    double *A = random_matrix(rng, I, R), *B = random_matrix(rng, I, R), *w = random_matrix(rng, 1, R);
    double ref = 0.0;
    for (uint64_t i = 0; i < I; ++i)
        for (uint64_t r = 0; r < R; ++r) ref += w[r] * A[i * R + r] * B[i * R + r];
    double got1 = NAN, got2 = NAN;
    CHECK_OK(tf_dense_weighted_inner(A, B, I, R, w, 1, &got1));
    CHECK_OK(tf_dense_weighted_inner(A, B, I, R, w, 2, &got2));
    CHECKF(fabs(got1 - ref) < 1e-11 * fabs(ref) + 1e-12, "inner %g vs %g", got1, ref);
    CHECK(got1 == got2);

    double *V = random_matrix(rng, R, R), q = 0.0;
    for (uint64_t i = 0; i < R; ++i)
        for (uint64_t j = 0; j < R; ++j) q += w[i] * V[i * R + j] * w[j];
    CHECK(fabs(tf_dense_quadratic(V, w, R) - q) < 1e-13);

    double ss = 0.0, s1 = NAN, s2 = NAN;
    for (uint64_t e = 0; e < I * R; ++e) ss += A[e] * A[e];
    CHECK_OK(tf_dense_sumsq(A, I * R, 1, &s1));
    CHECK_OK(tf_dense_sumsq(A, I * R, 2, &s2));
    CHECK(fabs(s1 - ss) < 1e-12 * ss && s1 == s2);
    free(A); free(B); free(w); free(V);
}

/* The fused ALS step against the steps one by one (the same bits, on 1 and
 * 2 threads: outputs poisoned first) and against float64 loops (V given
 * with its inverse Vi; NULL: the loops are skipped, for the large rank). */
static void check_als_step(tf_rng *rng, uint64_t I, uint64_t R, const double *V, const double *Vi, int norm,
                           int with_fit, const char *what)
{
    double *M = random_matrix(rng, I, R);
    double *A1 = poisoned(I * R), *G1 = poisoned(R * R), *l1 = poisoned(R), in1 = NAN;
    int p1 = -1;
    CHECK_OK(tf_dense_solve(M, A1, I, R, V, 2, &p1));
    double *A3 = malloc(I * R * sizeof *A3), *G3 = poisoned(R * R), *l3 = poisoned(R);
    memcpy(A3, A1, I * R * sizeof *A3);
    CHECK_OK(tf_dense_normalize(A1, I, R, norm, 2, l1));
    CHECK_OK(tf_dense_gram(A1, I, R, 2, G1));
    /* the ranks' pair after the rows' exchange: normalisation and Gram in one pass */
    CHECK_OK(tf_dense_normalize_gram(A3, I, R, norm, 1, l3, G3));
    CHECKF(memcmp(A1, A3, I * R * sizeof *A1) == 0 && memcmp(l1, l3, R * sizeof *l1) == 0 &&
               memcmp(G1, G3, R * R * sizeof *G1) == 0,
           "%s: normalize_gram is not normalize and gram's bits", what);
    free(A3); free(G3); free(l3);
    if (with_fit) CHECK_OK(tf_dense_weighted_inner(M, A1, I, R, l1, 2, &in1));
    for (int t = 1; t <= 2; ++t) {
        double *A2 = poisoned(I * R), *G2 = poisoned(R * R), *l2 = poisoned(R), in2 = NAN;
        int p2 = -1;
        CHECK_OK(tf_dense_als_step(M, A2, I, R, V, norm, t, l2, G2, with_fit ? &in2 : NULL, &p2));
        CHECKF(p2 == p1, "%s: pinv %d vs %d", what, p2, p1);
        CHECKF(memcmp(A1, A2, I * R * sizeof *A1) == 0, "%s, %d threads: the factor is not the steps' bits", what, t);
        CHECKF(memcmp(l1, l2, R * sizeof *l1) == 0, "%s, %d threads: lambda is not the steps' bits", what, t);
        CHECKF(memcmp(G1, G2, R * R * sizeof *G1) == 0, "%s, %d threads: the Gram is not the steps' bits", what, t);
        CHECKF(!with_fit || in1 == in2, "%s, %d threads: inner %.17g vs %.17g", what, t, in2, in1);
        CHECKF(with_fit || isnan(in2), "%s: inner written without the fit", what);
        free(A2); free(G2); free(l2);
    }
    if (Vi) { /* the loops: A = M Vi, lambda, A / lambda, A^T A, sum lambda M.A */
        double *ref = malloc(I * R * sizeof *ref), *lam = calloc(R, sizeof *lam), *Gr = malloc(R * R * sizeof *Gr);
        matmul(M, Vi, I, R, R, ref);
        for (uint64_t e = 0; e < I * R; ++e) {
            const double x = ref[e];
            lam[e % R] = norm == TF_DENSE_NORM_MAX ? fmax(lam[e % R], fabs(x))
                         : norm == TF_DENSE_NORM1  ? lam[e % R] + fabs(x) : lam[e % R] + x * x;
        }
        double scale = 0.0, inner = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            lam[r] = norm == TF_DENSE_NORM_MAX ? fmax(lam[r], 1.0) : norm == TF_DENSE_NORM1 ? lam[r] : sqrt(lam[r]);
            CHECKF(fabs(l1[r] - lam[r]) <= 1e-10 * lam[r], "%s: lambda[%llu] %g vs %g", what,
                   (unsigned long long)r, l1[r], lam[r]);
        }
        for (uint64_t e = 0; e < I * R; ++e) {
            ref[e] /= lam[e % R] > 0 ? lam[e % R] : 1.0;
            scale = fmax(scale, fabs(ref[e]));
            inner += lam[e % R] * M[e] * ref[e];
        }
        CHECKF(tf_rel_err(A1, ref, I * R) < 1e-10, "%s: factor rel err %g", what, tf_rel_err(A1, ref, I * R));
        gram_ref(ref, I, R, Gr);
        CHECKF(tf_rel_err(G1, Gr, R * R) < 1e-10, "%s: Gram rel err %g", what, tf_rel_err(G1, Gr, R * R));
        CHECKF(!with_fit || fabs(in1 - inner) < 1e-10 * fabs(inner) + 1e-12, "%s: inner %g vs %g", what, in1, inner);
        CHECK(scale > 0.0);
        free(ref); free(lam); free(Gr);
    }
    free(M); free(A1); free(G1); free(l1);
}

static void test_als_step(tf_rng *rng)
{
    static const struct { uint64_t I, R; } shapes[] = {{3, 1}, {2049, 3}, {5000, 16}, {150001, 16}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k) {
        const uint64_t I = shapes[k].I, R = shapes[k].R;
        double *F = random_matrix(rng, 2 * R + 20, R), *V = malloc(R * R * sizeof *V),
               *Vi = malloc(R * R * sizeof *Vi);
        gram_ref(F, 2 * R + 20, R, V);
        CHECK(inverse_ref(V, R, Vi));
        for (int norm = 0; norm < 3; ++norm) {
            char what[96];
            snprintf(what, sizeof what, "ALS step %llu x %llu, norm %d", (unsigned long long)I,
                     (unsigned long long)R, norm);
            check_als_step(rng, I, R, V, Vi, norm, norm != TF_DENSE_NORM1, what);
        }
        /* rank-deficient V: the pseudo-inverse, the same in both */
        for (uint64_t e = 0; e < R * R; ++e) V[e] = 1.0;
        if (R > 1) check_als_step(rng, I, R, V, NULL, TF_DENSE_NORM_MAX, 1, "ALS step, pseudo-inverse");
        free(F); free(V); free(Vi);
    }
    /* rank 1000 on 8193 rows: 5 column slabs but 4 Gram slabs (the fit's
     * dots in their own pass) */
    const uint64_t I = 8193, R = 1000;
    CHECK(tf_dense_slab_count(I, R) == 5 && tf_dense_slab_count(I, R * R) == 4);
    double *V = calloc(R * R, sizeof *V);
    for (uint64_t r = 0; r < R; ++r) V[r * R + r] = 2.0 + (double)r / R;
    check_als_step(rng, I, R, V, NULL, TF_DENSE_NORM2, 1, "ALS step, rank 1000");
    /* a non-finite solution: one line, as the steps say it */
    double *M = random_matrix(rng, 100, 4), *A = poisoned(400), G[16], l[4], in;
    int p = 0;
    M[77] = INFINITY;
    memset(V, 0, 16 * sizeof *V);
    for (uint64_t r = 0; r < 4; ++r) V[r * 4 + r] = 1.0;
    CHECK_FAILS(tf_dense_als_step(M, A, 100, 4, V, TF_DENSE_NORM2, 2, l, G, &in, &p), TF_ERR_NUMERIC,
                "factor column");
    M[77] = 0.0;
    V[5] = NAN;
    CHECK_FAILS(tf_dense_als_step(M, A, 100, 4, V, TF_DENSE_NORM2, 2, l, G, &in, &p), TF_ERR_NUMERIC,
                "not finite");
    free(M); free(A); free(V);
}

int main(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 977);
    test_gram_hadamard(&rng);
    test_solve_spd(&rng);
    test_solve_rank_deficient(&rng);
    test_solve_zero_column(&rng);
    test_normalize(&rng);
    test_fit_terms(&rng);
    test_als_step(&rng);
    return tf_test_finish("test_dense");
}
