/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU CP-ALS's dense kernels against float64 loops on the same inputs (in
 * fp32 the inputs are rounded to float first, so both sides see the same
 * values); device outputs are poisoned (NaN) before every run.
 * - The fused apply + Gram pass (tf_gpu_apply_gram: A = M W, the Gram of A
 *   and its column normalisation in one read of M; rank 32): A
 *   elementwise within 1e-12 (fp64) / 1e-5 (fp32) of sum_k |M_ik W_kj|
 *   (the error bound of any summation order); lambda, the scales and G =
 *   diag(s) A^T A diag(s) of the A the device stored within 1e-12 / 1e-6.
 *   Inputs: random, W ill-conditioned as CP-ALS's inverse normal matrices
 *   are (M = A0 W^-1, so M W cancels), a zero column of W; row counts that
 *   are not multiples of the 8-row task, fewer rows than warps, and enough
 *   for many slabs; 2-norm and max-norm; two runs must agree bit for bit.
 * - The small-rank Gram (tf_gpu_gram) and solve (tf_gpu_small_solve),
 *   including the pseudo-inverse fallback of a singular V.
 * - The small apply (tf_gpu_small_apply), the fit terms (tf_gpu_fit_terms)
 *   and the last mode's Gram fused with them (tf_gpu_gram_fit, and for a
 *   long last factor the apply + Gram pass forming the fit's dot products
 *   too, tf_gpu_apply_gram_partials + tf_gpu_gram_fit_finish), against
 *   long-double sums.
 * Skipped (exit 77) without a GPU; `--quick` (or TF_TEST_QUICK=1) leaves
 * out the largest row counts, for compute-sanitizer. */
#include <stdlib.h>

#include "check.h"
#include "core/rng.h"
#include "hooks/dense_check.h"
#include "tenfold.h"

#define R 32

typedef struct result {
    double *A, lambda[R], s[R], G[R * R];
    int nonfinite;
} result;

static double round_to(tf_precision prec, double x) { return prec == TF_SINGLE ? (double)(float)x : x; }

/* W = Q diag(d) Q^T with d from 1 to 10^decades (Q: Gram-Schmidt of a
 * random matrix); Winv the same with 1 / d. */
static void conditioned_pair(tf_rng *rng, double decades, double *W, double *Winv)
{
    double Q[R * R];
    for (int e = 0; e < R * R; ++e) Q[e] = tf_rng_normal(rng);
    for (int j = 0; j < R; ++j) { /* columns orthonormal */
        for (int k = 0; k < j; ++k) {
            double dot = 0;
            for (int i = 0; i < R; ++i) dot += Q[i * R + j] * Q[i * R + k];
            for (int i = 0; i < R; ++i) Q[i * R + j] -= dot * Q[i * R + k];
        }
        double nrm = 0;
        for (int i = 0; i < R; ++i) nrm += Q[i * R + j] * Q[i * R + j];
        nrm = sqrt(nrm);
        for (int i = 0; i < R; ++i) Q[i * R + j] /= nrm;
    }
    for (int i = 0; i < R; ++i)
        for (int j = 0; j < R; ++j) {
            double w = 0, v = 0;
            for (int k = 0; k < R; ++k) {
                const double d = pow(10.0, decades * k / (R - 1));
                w += Q[i * R + k] * d * Q[j * R + k];
                v += Q[i * R + k] / d * Q[j * R + k];
            }
            W[i * R + j] = w;
            Winv[i * R + j] = v;
        }
}

/* The larger of w and d; NaN (e.g. an element the device never wrote)
 * counts as infinite. */
static double worse(double w, double d) { return isnan(d) ? INFINITY : d > w ? d : w; }

/* Worst relative error of a normalisation against A (I x r, in double /
 * long double): lambda and the scales s by norm (1: 2-norm, 2: max(max|a|,
 * 1), 0: s = s_in, no lambda; 1 / lambda, or 1 for a zero column), and G =
 * diag(s) A^T A diag(s) relative to sqrt(G_pp G_qq). */
/* Column c's reference lambda (norm 1: 2-norm, 2: max(max|a|, 1)); its
 * scale is 1 / lambda, or 1 for a zero column. */
static double reference_lambda(const double *A, uint64_t I, uint32_t r, uint32_t c, int norm)
{
    double v = 0;
    for (uint64_t i = 0; i < I; ++i) v = norm == 2 ? fmax(v, fabs(A[i * r + c])) : v + A[i * r + c] * A[i * r + c];
    return norm == 2 ? (v > 1.0 ? v : 1.0) : sqrt(v);
}
static double scale_of(double lambda) { return lambda > 0 ? 1.0 / lambda : 1.0; }

/* (A^T A)_pq in long double. */
static long double gram_at(const double *A, uint64_t I, uint32_t r, uint32_t p, uint32_t q)
{
    long double g = 0;
    for (uint64_t i = 0; i < I; ++i) g += (long double)A[i * r + p] * A[i * r + q];
    return g;
}

static double normalised_error(const double *A, uint64_t I, uint32_t r, int norm, const double *s_in,
                               const double *lambda, const double *s, const double *G)
{
    double worst = 0, sref[64];
    for (uint32_t c = 0; c < r; ++c) {
        const double lref = norm ? reference_lambda(A, I, r, c, norm) : 0.0;
        sref[c] = norm == 0 ? s_in[c] : scale_of(lref);
        worst = worse(worst, fabs(s[c] - sref[c]) / sref[c]);
        if (norm) worst = worse(worst, fabs(lambda[c] - lref) / (lref > 0 ? lref : 1.0));
    }
    for (uint32_t p = 0; p < r; ++p)
        for (uint32_t q = 0; q < r; ++q) {
            const long double g = gram_at(A, I, r, p, q), gp = gram_at(A, I, r, p, p), gq = gram_at(A, I, r, q, q);
            const double ref = sref[p] * (double)g * sref[q], scale = sref[p] * sref[q] * sqrt((double)(gp * gq));
            worst = worse(worst, fabs(G[p * r + q] - ref) / (scale > 0 ? scale : 1.0));
        }
    return worst;
}

/* Elements of A (I x r) off M W by more than tol relative to
 * sum_k |M_ik W_kj| (the bound of any summation order; NaN, e.g. an
 * unwritten element, counts); *worst: the largest such error. */
static uint64_t product_errors(const double *M, const double *W, const double *A, uint64_t I, uint32_t r, double tol,
                               double *worst)
{
    uint64_t bad = 0;
    *worst = 0;
    for (uint64_t i = 0; i < I; ++i)
        for (uint32_t j = 0; j < r; ++j) {
            double ref = 0, mag = 0;
            for (uint32_t k = 0; k < r; ++k) {
                ref += M[i * r + k] * W[k * r + j];
                mag += fabs(M[i * r + k] * W[k * r + j]);
            }
            const double err = fabs(A[i * r + j] - ref) / (mag > 0 ? mag : 1.0);
            if (!(err <= tol)) ++bad;
            *worst = worse(*worst, err);
        }
    return bad;
}

static int run(tf_precision prec, const double *M, uint64_t I, const double *W, int norm, result *r)
{
    r->A = malloc(I * R * sizeof *r->A);
    for (uint64_t e = 0; e < I * R; ++e) r->A[e] = NAN;
    for (int e = 0; e < R; ++e) r->lambda[e] = r->s[e] = NAN;
    for (int e = 0; e < R * R; ++e) r->G[e] = NAN;
    r->nonfinite = -1;
    tf_status s = tf_gpu_check_apply_gram(prec, M, I, W, norm, r->A, r->lambda, r->s, r->G, &r->nonfinite);
    CHECKF(s == TF_OK, "apply + Gram (%s, I %llu): %s", prec ? "fp32" : "fp64", (unsigned long long)I,
           tf_last_error());
    return s == TF_OK;
}

static void check_case(const char *what, tf_precision prec, const double *M, uint64_t I, const double *W, int norm)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol_a = prec == TF_SINGLE ? 1e-5 : 1e-12, tol_g = prec == TF_SINGLE ? 1e-6 : 1e-12;
    result r, r2;
    if (!run(prec, M, I, W, norm, &r)) {
        free(r.A);
        return;
    }
    /* A against M W: elementwise, relative to sum_k |M_ik W_kj| */
    double worst;
    const uint64_t bad = product_errors(M, W, r.A, I, R, tol_a, &worst);
    CHECKF(bad == 0, "%s %s I=%llu norm %d: %llu elements of A off (worst %.3g, bound %.0e)", what, pn,
           (unsigned long long)I, norm, (unsigned long long)bad, worst, tol_a);
    /* lambda, s and G from the A the device stored */
    const double nw = normalised_error(r.A, I, R, norm, NULL, r.lambda, r.s, r.G);
    CHECKF(nw <= tol_g, "%s %s I=%llu norm %d: lambda / scales / G off by %.3g", what, pn, (unsigned long long)I,
           norm, nw);
    CHECKF(r.nonfinite == 0, "%s %s I=%llu: non-finite flag %d", what, pn, (unsigned long long)I, r.nonfinite);
    /* deterministic: a second run gives the same bits */
    if (run(prec, M, I, W, norm, &r2)) {
        CHECKF(!memcmp(r.A, r2.A, I * R * sizeof *r.A) && !memcmp(r.G, r2.G, sizeof r.G) &&
                   !memcmp(r.lambda, r2.lambda, sizeof r.lambda),
               "%s %s I=%llu: a second run differs", what, pn, (unsigned long long)I);
    }
    printf("  %-28s %s I=%-7llu norm %d: A worst %.2e of sum|MW|, lambda / s / G %.2e\n", what, pn,
           (unsigned long long)I, norm, worst, nw);
    free(r.A);
    free(r2.A);
}

/* tf_gpu_gram (R = 1 .. 64, one- and multi-slab paths) against float64
 * loops on the T-rounded A: lambda and s by norm (norm 0 keeps s_in), G =
 * diag(s) A^T A diag(s), within 1e-12 (fp64) / 1e-6 (fp32). */
static void check_gram(tf_rng *rng, tf_precision prec, uint64_t I, uint32_t r, int norm)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol = prec == TF_SINGLE ? 1e-6 : 1e-12;
    double *A = malloc(I * r * sizeof *A), s_in[64], lam[64], s[64], G[64 * 64];
    for (uint64_t e = 0; e < I * r; ++e) A[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    for (uint32_t c = 0; c < r; ++c) {
        s_in[c] = round_to(prec, 0.5 + tf_rng_uniform(rng));
        lam[c] = s[c] = NAN;
    }
    for (uint32_t e = 0; e < r * r; ++e) G[e] = NAN;
    int nf = -1;
    tf_status st = tf_gpu_check_gram(prec, A, I, r, norm, s_in, lam, s, G, &nf);
    CHECKF(st == TF_OK, "Gram %s I=%llu R=%u: %s", pn, (unsigned long long)I, r, tf_last_error());
    if (st != TF_OK) {
        free(A);
        return;
    }
    const double worst = normalised_error(A, I, r, norm, s_in, lam, s, G);
    CHECKF(worst <= tol && nf == 0, "Gram %s I=%llu R=%u norm %d: off by %.3g (bound %.0e), non-finite flag %d", pn,
           (unsigned long long)I, r, norm, worst, tol, nf);
    printf("  gram  %s I=%-7llu R=%-2u norm %d: worst %.2e\n", pn, (unsigned long long)I, r, norm, worst);
    free(A);
}

/* X = V^-1 by Gauss-Jordan with partial pivoting in long double; 0 if singular. */
static int invert(const double *V, uint32_t r, double *X)
{
    long double a[64][128];
    for (uint32_t i = 0; i < r; ++i)
        for (uint32_t j = 0; j < 2 * r; ++j) a[i][j] = j < r ? V[i * r + j] : (j - r == i);
    for (uint32_t k = 0; k < r; ++k) {
        uint32_t p = k;
        for (uint32_t i = k + 1; i < r; ++i)
            if (fabsl(a[i][k]) > fabsl(a[p][k])) p = i;
        if (a[p][k] == 0) return 0;
        for (uint32_t j = 0; j < 2 * r; ++j) {
            const long double t = a[k][j];
            a[k][j] = a[p][j];
            a[p][j] = t;
        }
        const long double d = a[k][k];
        for (uint32_t j = 0; j < 2 * r; ++j) a[k][j] /= d;
        for (uint32_t i = 0; i < r; ++i)
            if (i != k && a[i][k] != 0) {
                const long double f = a[i][k];
                for (uint32_t j = 0; j < 2 * r; ++j) a[i][j] -= f * a[k][j];
            }
    }
    for (uint32_t i = 0; i < r; ++i)
        for (uint32_t j = 0; j < r; ++j) X[i * r + j] = (double)a[i][r + j];
    return 1;
}

/* The solve's outputs against the device's own V: V within tolv of
 * prod_{k != skip} Gs[k] (Gs: n pointers to R x R Grams, in double), and
 * with P the product of the other modes' scales, X = diag(1/P) W against
 * an inverse of V in long double (fp64 1e-10, fp32 1e-5, normwise) or,
 * singular, a pseudo-inverse: V X V = V, X = X^T. */
static void check_inverse(const char *what, tf_precision prec, uint32_t r, uint32_t n, uint32_t skip,
                          const double *const *Gs, const double *P, const double *V, const double *W, int info,
                          unsigned pinv, int nf, int singular)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    double dv = 0, vn = 0, X[64 * 64];
    for (uint32_t p = 0; p < r; ++p)
        for (uint32_t q = 0; q < r; ++q) {
            double h = 1.0;
            for (uint32_t k = 0; k < n; ++k)
                if (k != skip) h *= Gs[k][p * r + q];
            dv = worse(dv, fabs(V[p * r + q] - h));
            vn = fmax(vn, fabs(h));
            X[p * r + q] = W[p * r + q] / P[p];
        }
    const double tolv = prec == TF_SINGLE ? 1e-6 : 1e-14;
    CHECKF(dv <= tolv * vn, "%s %s R=%u: V off by %.3g of %.3g", what, pn, r, dv, vn);
    if (!singular) {
        double Xr[64 * 64], d = 0, xn = 0;
        CHECKF(invert(V, r, Xr), "%s %s R=%u: the reference finds V singular", what, pn, r);
        for (uint32_t e = 0; e < r * r; ++e) {
            d += (X[e] - Xr[e]) * (X[e] - Xr[e]);
            xn += Xr[e] * Xr[e];
        }
        const double rel = isnan(d) ? INFINITY : sqrt(d / xn), tol = prec == TF_SINGLE ? 1e-5 : 1e-10;
        CHECKF(rel <= tol && info == 0 && pinv == 0 && nf == 0,
               "%s %s R=%u: W off by %.3g (bound %.0e), info %d, pinv %u, non-finite %d", what, pn, r, rel, tol, info,
               pinv, nf);
        printf("  %s %s R=%-2u: W rel err %.2e\n", what, pn, r, rel);
    } else {
        double d = 0, vn2 = 0, asym = 0, xn = 0;
        for (uint32_t i = 0; i < r; ++i)
            for (uint32_t j = 0; j < r; ++j) {
                long double vxv = 0;
                for (uint32_t a = 0; a < r; ++a)
                    for (uint32_t b = 0; b < r; ++b) vxv += (long double)V[i * r + a] * X[a * r + b] * V[b * r + j];
                d = worse(d, fabs((double)vxv - V[i * r + j]));
                vn2 = fmax(vn2, fabs(V[i * r + j]));
                asym = worse(asym, fabs(X[i * r + j] - X[j * r + i]));
                xn = fmax(xn, fabs(X[i * r + j]));
            }
        const double tol = prec == TF_SINGLE ? 1e-4 : 1e-9;
        CHECKF(pinv == 1 && d <= tol * vn2 && asym <= tol * xn && nf == 0,
               "singular %s %s R=%u: pinv %u, |VXV - V| %.3g of %.3g, asymmetry %.3g, non-finite %d", what, pn, r,
               pinv, d, vn2, asym, nf);
        printf("  %s %s R=%-2u singular: pinv %u, |VXV - V| / |V| %.2e\n", what, pn, r, pinv, d / vn2);
    }
}

/* n Grams of random factors (rows x r, T-rounded Grams; with `singular`
 * column 5 a copy of column 3 in every factor, so that their Hadamard
 * products are singular) and n scale vectors. */
static void random_grams(tf_rng *rng, tf_precision prec, uint32_t n, uint32_t r, int singular, double *G, double *sc)
{
    const uint32_t rows = 100;
    double F[100 * 64];
    for (uint32_t k = 0; k < n; ++k) {
        for (uint32_t e = 0; e < rows * r; ++e) F[e] = tf_rng_uniform(rng) * 2.0 - 1.0;
        if (singular)
            for (uint32_t i = 0; i < rows; ++i) F[i * r + 5] = F[i * r + 3];
        for (uint32_t p = 0; p < r; ++p) {
            sc[k * r + p] = round_to(prec, 0.5 + tf_rng_uniform(rng));
            for (uint32_t q = 0; q < r; ++q) {
                double g = 0;
                for (uint32_t i = 0; i < rows; ++i) g += F[i * r + p] * F[i * r + q];
                G[(k * r + p) * r + q] = round_to(prec, g);
            }
        }
    }
}

/* tf_gpu_small_solve on the Grams of n random factors, mode 1 skipped
 * (check_inverse; singular: the pseudo-inverse must be taken). */
static void check_solve(tf_rng *rng, tf_precision prec, uint32_t r, int singular)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const uint32_t n = 4, skip = 1;
    double G[4 * 64 * 64], sc[4 * 64], V[64 * 64], W[64 * 64], P[64];
    random_grams(rng, prec, n, r, singular, G, sc);
    for (uint32_t e = 0; e < r * r; ++e) V[e] = W[e] = NAN;
    int info = -1, nf = -1;
    unsigned pinv = 99;
    tf_status st = tf_gpu_check_small_solve(prec, G, sc, n, skip, r, 1e-12, V, W, &info, &pinv, &nf);
    CHECKF(st == TF_OK, "small solve %s R=%u: %s", pn, r, tf_last_error());
    if (st != TF_OK) return;
    const double *Gs[4];
    for (uint32_t k = 0; k < n; ++k) Gs[k] = G + (uint64_t)k * r * r;
    for (uint32_t p = 0; p < r; ++p) {
        P[p] = 1.0;
        for (uint32_t k = 0; k < n; ++k)
            if (k != skip) P[p] *= sc[k * r + p];
    }
    check_inverse("solve", prec, r, n, skip, Gs, P, V, W, info, pinv, nf, singular);
}

/* tf_gpu_gram_solve (mode g's Gram, then the solve of mode skip with it):
 * lambda, s and mode g's Gram by normalised_error against float64 loops
 * on A; then the solve by check_inverse with the device's new Gram and
 * scale in mode g's place (singular: every factor, A too, has column 5 a
 * copy of column 3). */
static void check_gram_solve(tf_rng *rng, tf_precision prec, uint64_t I, uint32_t r, uint32_t g, uint32_t skip,
                             int norm, int singular)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol = prec == TF_SINGLE ? 1e-6 : 1e-12;
    const uint32_t n = 4;
    double *A = malloc(I * r * sizeof *A), G[4 * 64 * 64], sc[4 * 64], lam[64], s[64], Gg[64 * 64], V[64 * 64],
           W[64 * 64], P[64];
    random_grams(rng, prec, n, r, singular, G, sc);
    for (uint64_t e = 0; e < I * r; ++e) A[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    if (singular)
        for (uint64_t i = 0; i < I; ++i) A[i * r + 5] = A[i * r + 3];
    for (uint32_t e = 0; e < r * r; ++e) {
        G[(uint64_t)g * r * r + e] = 1e300; /* not read: mode g's comes from A */
        Gg[e] = V[e] = W[e] = NAN;
    }
    for (uint32_t c = 0; c < r; ++c) {
        sc[g * r + c] = 1e300;
        lam[c] = s[c] = NAN;
    }
    int info = -1, nf = -1;
    unsigned pinv = 99;
    tf_status st =
        tf_gpu_check_gram_solve(prec, A, I, g, norm, G, sc, n, skip, r, 1e-12, lam, s, Gg, V, W, &info, &pinv, &nf);
    CHECKF(st == TF_OK, "Gram + solve %s I=%llu R=%u: %s", pn, (unsigned long long)I, r, tf_last_error());
    if (st == TF_OK) {
        const double eg = normalised_error(A, I, r, norm, NULL, lam, s, Gg);
        CHECKF(eg <= tol, "Gram + solve %s I=%llu R=%u norm %d: lambda / s / G off by %.3g (bound %.0e)", pn,
               (unsigned long long)I, r, norm, eg, tol);
        printf("  gram+solve %s I=%-5llu R=%-2u modes %u,%u norm %d: lambda / s / G %.2e\n", pn,
               (unsigned long long)I, r, g + 1, skip + 1, norm, eg);
        const double *Gs[4];
        for (uint32_t k = 0; k < n; ++k) Gs[k] = k == g ? Gg : G + (uint64_t)k * r * r;
        for (uint32_t p = 0; p < r; ++p) {
            P[p] = 1.0;
            for (uint32_t k = 0; k < n; ++k)
                if (k != skip) P[p] *= k == g ? s[p] : sc[k * r + p];
        }
        check_inverse("gram+solve", prec, r, n, skip, Gs, P, V, W, info, pinv, nf, singular);
    }
    free(A);
}

/* tf_gpu_small_apply (R 1 .. 64; one pass of the grid and several)
 * against float64 loops: A elementwise within 1e-12 (fp64) / 1e-5 (fp32)
 * of sum_k |M_ik W_kj|. */
static void check_small_apply(tf_rng *rng, tf_precision prec, uint64_t I, uint32_t r)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol = prec == TF_SINGLE ? 1e-5 : 1e-12;
    double *M = malloc(I * r * sizeof *M), *A = malloc(I * r * sizeof *A), W[64 * 64];
    for (uint64_t e = 0; e < I * r; ++e) {
        M[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
        A[e] = NAN;
    }
    for (uint32_t e = 0; e < r * r; ++e) W[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    tf_status st = tf_gpu_check_small_apply(prec, M, I, r, W, A);
    CHECKF(st == TF_OK, "small apply %s I=%llu R=%u: %s", pn, (unsigned long long)I, r, tf_last_error());
    double worst = 0;
    const uint64_t bad = st == TF_OK ? product_errors(M, W, A, I, r, tol, &worst) : 0;
    CHECKF(st != TF_OK || bad == 0, "small apply %s I=%llu R=%u: %llu elements off (worst %.3g, bound %.0e)", pn,
           (unsigned long long)I, r, (unsigned long long)bad, worst, tol);
    if (st == TF_OK) printf("  apply %s I=%-7llu R=%-2u: worst %.2e of sum|MW|\n", pn, (unsigned long long)I, r, worst);
    free(M);
    free(A);
}

/* The fit terms in long double: out[0] = sum_r w_r prod_k scales_k[r]
 * sum_i A_ir B_ir, out[1] = w^T (Hadamard of the n Grams) w; mag[] the
 * same sums of absolute values (the bound of any summation order). */
static void fit_reference(const double *A, const double *B, uint64_t I, uint32_t r, const double *w,
                          const double *scales, const double *G, uint32_t n, double out[2], double mag[2])
{
    long double in = 0, inm = 0, kn = 0, knm = 0;
    for (uint32_t c = 0; c < r; ++c) {
        long double wc = w[c], dot = 0, dotm = 0;
        for (uint32_t k = 0; k < n; ++k) wc *= scales[k * r + c];
        for (uint64_t i = 0; i < I; ++i) {
            dot += (long double)A[i * r + c] * B[i * r + c];
            dotm += fabsl((long double)A[i * r + c] * B[i * r + c]);
        }
        in += wc * dot;
        inm += fabsl(wc) * dotm;
    }
    for (uint32_t p = 0; p < r; ++p)
        for (uint32_t q = 0; q < r; ++q) {
            long double h = (long double)w[p] * w[q];
            for (uint32_t k = 0; k < n; ++k) h *= G[((uint64_t)k * r + p) * r + q];
            kn += h;
            knm += fabsl(h);
        }
    out[0] = (double)in;
    out[1] = (double)kn;
    mag[0] = (double)inm;
    mag[1] = (double)knm;
}

/* tf_gpu_fit_terms on random A, B, weights, scales and Grams (n modes, R
 * 1 .. 64, one slab and many) against fit_reference: within 1e-12 (fp64)
 * / 1e-6 (fp32) of the sums of absolute values. */
static void check_fit_terms(tf_rng *rng, tf_precision prec, uint64_t I, uint32_t r, uint32_t n)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol = prec == TF_SINGLE ? 1e-6 : 1e-12;
    double *A = malloc(I * r * sizeof *A), *B = malloc(I * r * sizeof *B), *G = malloc((size_t)n * r * r * sizeof *G);
    double w[64], sc[16 * 64], ref[2], mag[2], inner = NAN, knorm2 = NAN;
    for (uint64_t e = 0; e < I * r; ++e) {
        A[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
        B[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    }
    for (uint32_t c = 0; c < r; ++c) w[c] = round_to(prec, 0.1 + 2.0 * tf_rng_uniform(rng));
    for (uint32_t e = 0; e < n * r; ++e) sc[e] = round_to(prec, 0.5 + tf_rng_uniform(rng));
    for (uint64_t e = 0; e < (uint64_t)n * r * r; ++e) G[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    int nf = -1;
    tf_status st = tf_gpu_check_fit_terms(prec, A, B, I, r, w, sc, G, n, &inner, &knorm2, &nf);
    CHECKF(st == TF_OK, "fit terms %s I=%llu R=%u: %s", pn, (unsigned long long)I, r, tf_last_error());
    if (st == TF_OK) {
        fit_reference(A, B, I, r, w, sc, G, n, ref, mag);
        const double e0 = worse(0, fabs(inner - ref[0]) / mag[0]), e1 = worse(0, fabs(knorm2 - ref[1]) / mag[1]);
        CHECKF(e0 <= tol && e1 <= tol && nf == 0,
               "fit terms %s I=%llu R=%u n=%u: inner off by %.3g, knorm2 by %.3g (bound %.0e), non-finite %d", pn,
               (unsigned long long)I, r, n, e0, e1, tol, nf);
        printf("  fit   %s I=%-7llu R=%-2u n=%u: inner %.2e, knorm2 %.2e\n", pn, (unsigned long long)I, r, n, e0, e1);
    }
    free(A);
    free(B);
    free(G);
}

/* The errors of a last mode's Gram + fit from the device: lambda, s and
 * mode n's Gram Gn of A by normalised_error (*eg), then inner and knorm2
 * against fit_reference of M and A with the reference lambda, s and Gram
 * in mode n's place (*e0, *e1; sc and G: n stacked, mode n's entries
 * overwritten). */
static void gram_fit_errors(const double *A, const double *M, uint64_t I, uint32_t r, uint32_t n, int norm, double *sc,
                            double *G, const double *lam, const double *s, const double *Gn, double inner,
                            double knorm2, double *eg, double *e0, double *e1)
{
    double ref[2], mag[2];
    *eg = normalised_error(A, I, r, norm, NULL, lam, s, Gn);
    double *sn = sc + (uint64_t)(n - 1) * r, *gn = G + (uint64_t)(n - 1) * r * r, lref[64];
    for (uint32_t c = 0; c < r; ++c) {
        lref[c] = reference_lambda(A, I, r, c, norm);
        sn[c] = scale_of(lref[c]);
    }
    for (uint32_t p = 0; p < r; ++p)
        for (uint32_t q = 0; q < r; ++q) gn[p * r + q] = sn[p] * (double)gram_at(A, I, r, p, q) * sn[q];
    fit_reference(M, A, I, r, lref, sc, G, n, ref, mag);
    *e0 = worse(0, fabs(inner - ref[0]) / mag[0]);
    *e1 = worse(0, fabs(knorm2 - ref[1]) / mag[1]);
}

/* tf_gpu_gram_fit (the last mode's Gram and the fit terms; one launch with
 * few slabs, the separate kernels with many), by gram_fit_errors. */
static void check_gram_fit(tf_rng *rng, tf_precision prec, uint64_t I, uint32_t r, uint32_t n, int norm)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol = prec == TF_SINGLE ? 1e-6 : 1e-12;
    double *A = malloc(I * r * sizeof *A), *M = malloc(I * r * sizeof *M), *G = malloc((size_t)n * r * r * sizeof *G);
    double sc[16 * 64], lam[64], s[64], Gn[64 * 64], inner = NAN, knorm2 = NAN;
    for (uint64_t e = 0; e < I * r; ++e) {
        A[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
        M[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    }
    for (uint32_t e = 0; e < (n - 1) * r; ++e) sc[e] = round_to(prec, 0.5 + tf_rng_uniform(rng));
    for (uint64_t e = 0; e < (uint64_t)(n - 1) * r * r; ++e) G[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    for (uint32_t c = 0; c < r; ++c) lam[c] = s[c] = NAN;
    for (uint32_t e = 0; e < r * r; ++e) Gn[e] = NAN;
    int nf = -1;
    tf_status st = tf_gpu_check_gram_fit(prec, A, M, I, r, norm, sc, G, n, lam, s, Gn, &inner, &knorm2, &nf);
    CHECKF(st == TF_OK, "Gram + fit %s I=%llu R=%u: %s", pn, (unsigned long long)I, r, tf_last_error());
    if (st == TF_OK) {
        double eg, e0, e1;
        gram_fit_errors(A, M, I, r, n, norm, sc, G, lam, s, Gn, inner, knorm2, &eg, &e0, &e1);
        CHECKF(eg <= tol && e0 <= tol && e1 <= tol && nf == 0,
               "Gram + fit %s I=%llu R=%u n=%u norm %d: lambda / s / G off by %.3g, inner %.3g, knorm2 %.3g "
               "(bound %.0e), non-finite %d",
               pn, (unsigned long long)I, r, n, norm, eg, e0, e1, tol, nf);
        printf("  gram+fit %s I=%-7llu R=%-2u n=%u norm %d: G %.2e, inner %.2e, knorm2 %.2e\n", pn,
               (unsigned long long)I, r, n, norm, eg, e0, e1);
    }
    free(A);
    free(M);
    free(G);
}

/* The last mode's fused pass (tf_gpu_apply_gram_partials with the fit's
 * dots + tf_gpu_gram_fit_finish; rank 32): A against M W as check_case
 * checks it, then lambda, s, Gn and the fit terms of the stored A by
 * gram_fit_errors; a second run gives the same bits. */
static void check_apply_gram_fit(tf_rng *rng, tf_precision prec, const double *M, uint64_t I, const double *W,
                                 uint32_t n, int norm)
{
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const double tol_a = prec == TF_SINGLE ? 1e-5 : 1e-12, tol = prec == TF_SINGLE ? 1e-6 : 1e-12;
    double *A = malloc(I * R * sizeof *A), *A2 = malloc(I * R * sizeof *A2), *G = malloc((size_t)n * R * R * sizeof *G);
    double sc[16 * R], lam[R], s[R], Gn[R * R], inner = NAN, knorm2 = NAN, in2 = NAN, kn2 = NAN;
    for (uint32_t e = 0; e < (n - 1) * R; ++e) sc[e] = round_to(prec, 0.5 + tf_rng_uniform(rng));
    for (uint64_t e = 0; e < (uint64_t)(n - 1) * R * R; ++e) G[e] = round_to(prec, tf_rng_uniform(rng) * 2.0 - 1.0);
    for (uint64_t e = 0; e < I * R; ++e) A[e] = A2[e] = NAN;
    for (uint32_t c = 0; c < R; ++c) lam[c] = s[c] = NAN;
    for (uint32_t e = 0; e < R * R; ++e) Gn[e] = NAN;
    int nf = -1, nf2 = -1;
    tf_status st = tf_gpu_check_apply_gram_fit(prec, M, I, W, norm, sc, G, n, A, lam, s, Gn, &inner, &knorm2, &nf);
    CHECKF(st == TF_OK, "apply + Gram + fit %s I=%llu: %s", pn, (unsigned long long)I, tf_last_error());
    if (st == TF_OK) {
        double worst, eg, e0, e1, l2[R], s2[R], G2[R * R];
        const uint64_t bad = product_errors(M, W, A, I, R, tol_a, &worst);
        gram_fit_errors(A, M, I, R, n, norm, sc, G, lam, s, Gn, inner, knorm2, &eg, &e0, &e1);
        CHECKF(bad == 0 && eg <= tol && e0 <= tol && e1 <= tol && nf == 0,
               "apply + Gram + fit %s I=%llu n=%u norm %d: %llu elements of A off (worst %.3g), lambda / s / G off "
               "by %.3g, inner %.3g, knorm2 %.3g (bound %.0e), non-finite %d",
               pn, (unsigned long long)I, n, norm, (unsigned long long)bad, worst, eg, e0, e1, tol, nf);
        st = tf_gpu_check_apply_gram_fit(prec, M, I, W, norm, sc, G, n, A2, l2, s2, G2, &in2, &kn2, &nf2);
        CHECKF(st == TF_OK && !memcmp(A, A2, I * R * sizeof *A) && !memcmp(lam, l2, sizeof lam) &&
                   !memcmp(Gn, G2, sizeof Gn) && !memcmp(&inner, &in2, sizeof inner) &&
                   !memcmp(&knorm2, &kn2, sizeof knorm2),
               "apply + Gram + fit %s I=%llu: a second run differs", pn, (unsigned long long)I);
        printf("  apply+gram+fit %s I=%-7llu n=%u norm %d: A %.2e, G %.2e, inner %.2e, knorm2 %.2e\n", pn,
               (unsigned long long)I, n, norm, worst, eg, e0, e1);
    }
    free(A);
    free(A2);
    free(G);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_dense", "no CUDA device");
    tf_rng rng;
    tf_rng_seed(&rng, 20261121);
    const uint64_t sizes[] = {1, 7, 8, 9, 100, 1001, 70001, 262147};
    const uint64_t maxI = 262147;
    double *M0 = malloc(maxI * R * sizeof *M0), *M = malloc(maxI * R * sizeof *M);
    double W[R * R], Wc[R * R], Winv[R * R];
    for (int prec = 0; prec < 2; ++prec) {
        /* random M and W */
        for (uint64_t e = 0; e < maxI * R; ++e) M[e] = round_to(prec, tf_rng_uniform(&rng) * 2.0 - 1.0);
        for (int e = 0; e < R * R; ++e) W[e] = round_to(prec, tf_rng_uniform(&rng) * 2.0 - 1.0);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes - (quick ? 1 : 0); ++k)
            for (int norm = 1; norm <= 2; ++norm) check_case("random", prec, M, sizes[k], W, norm);
        /* W with condition number 1e4 and M = A0 W^-1 (heavy cancellation) */
        conditioned_pair(&rng, 4.0, W, Winv);
        for (uint64_t e = 0; e < maxI * R; ++e) M0[e] = tf_rng_uniform(&rng) * 2.0 - 1.0;
        for (uint64_t i = 0; i < 70001; ++i)
            for (int j = 0; j < R; ++j) {
                double v = 0;
                for (int k = 0; k < R; ++k) v += M0[i * R + k] * Winv[k * R + j];
                M[i * R + j] = round_to(prec, v);
            }
        for (int e = 0; e < R * R; ++e) Wc[e] = round_to(prec, W[e]);
        check_case("ill-conditioned W", prec, M, 70001, Wc, 1);
        check_case("ill-conditioned W", prec, M, 9, Wc, 2);
        /* a zero column of W: a zero column of A (lambda 0 and scale 1
         * with the 2-norm, lambda 1 with the max-norm) */
        for (int i = 0; i < R; ++i) Wc[i * R + 5] = 0.0;
        check_case("zero column", prec, M, 1001, Wc, 1);
        check_case("zero column", prec, M, 1001, Wc, 2);
        /* the last mode's pass with the fit's dot products: one slab, a
         * partial task, many slabs (both norms) */
        for (uint64_t e = 0; e < maxI * R; ++e) M[e] = round_to(prec, tf_rng_uniform(&rng) * 2.0 - 1.0);
        for (int e = 0; e < R * R; ++e) W[e] = round_to(prec, tf_rng_uniform(&rng) * 2.0 - 1.0);
        check_apply_gram_fit(&rng, prec, M, 1, W, 3, 1);
        check_apply_gram_fit(&rng, prec, M, 1001, W, 4, 2);
        check_apply_gram_fit(&rng, prec, M, quick ? 20001 : 262147, W, 3, 1);
        check_apply_gram_fit(&rng, prec, M, quick ? 20001 : 70001, W, 4, 2);
    }
    /* the small-rank Gram: ranks around the 8-column blocks, up to 64;
     * one slab (fused finish) and many */
    tf_rng_seed(&rng, 77);
    for (int prec = 0; prec < 2; ++prec) {
        const uint32_t ranks[] = {1, 7, 32, 33, 64};
        for (size_t k = 0; k < sizeof ranks / sizeof *ranks; ++k)
            for (int norm = 0; norm <= 2; ++norm) check_gram(&rng, prec, 100, ranks[k], norm);
        check_gram(&rng, prec, 5000, 32, 1);
        check_gram(&rng, prec, quick ? 20000 : 300000, 33, 1);
        check_gram(&rng, prec, quick ? 20000 : 300000, 16, 2);
        /* the solve: element per thread (R <= 32) and the general path */
        const uint32_t sr[] = {1, 8, 32, 40, 64};
        for (size_t k = 0; k < sizeof sr / sizeof *sr; ++k) check_solve(&rng, prec, sr[k], 0);
        check_solve(&rng, prec, 8, 1);
        check_solve(&rng, prec, 32, 1);
        check_solve(&rng, prec, 40, 1);
        /* the Gram of a short factor fused with the next solve: the four
         * instantiations (R 1-8, 9-16, 17-24, 25-32), one tile and several
         * (64 rows each, four in flight), both norms, the pseudo-inverse */
        const uint32_t gr[] = {1, 7, 16, 24, 32};
        const uint64_t gi[] = {1, 30, 64, 659, 2000};
        for (size_t k = 0; k < sizeof gr / sizeof *gr; ++k)
            for (size_t q = 0; q < sizeof gi / sizeof *gi; ++q)
                check_gram_solve(&rng, prec, gi[q], gr[k], (uint32_t)(k % 4), (uint32_t)(k + 1) % 4, 1 + (int)(q % 2), 0);
        check_gram_solve(&rng, prec, 512, 32, 0, 1, 2, 0);
        check_gram_solve(&rng, prec, 300, 8, 2, 1, 1, 1);
        check_gram_solve(&rng, prec, 300, 32, 3, 0, 2, 1);
    }
    /* the small apply, the fit terms and the last mode's Gram + fit */
    tf_rng_seed(&rng, 99);
    for (int prec = 0; prec < 2; ++prec) {
        const uint32_t ranks[] = {1, 7, 32, 33, 64};
        for (size_t k = 0; k < sizeof ranks / sizeof *ranks; ++k) {
            check_small_apply(&rng, prec, 37, ranks[k]);
            check_fit_terms(&rng, prec, 300, ranks[k], 3);
            check_gram_fit(&rng, prec, 300, ranks[k], 3, 1);
        }
        check_small_apply(&rng, prec, 1, 32);
        check_small_apply(&rng, prec, quick ? 5000 : 70001, 32); /* 70001: several passes of the grid */
        check_small_apply(&rng, prec, quick ? 5000 : 70001, 64);
        check_fit_terms(&rng, prec, 1, 32, 1);
        check_fit_terms(&rng, prec, quick ? 5000 : 300000, 32, 4); /* many slabs */
        check_gram_fit(&rng, prec, 1, 32, 4, 2);
        check_gram_fit(&rng, prec, 2000, 32, 4, 2); /* 16 slabs: still one launch */
        check_gram_fit(&rng, prec, quick ? 5000 : 100000, 33, 4, 1); /* many slabs: Gram, then the fit */
    }
    /* bad arguments: a clear error, nothing run */
    double a[R], l[R], s[R], g[R * R];
    int nf = 0;
    CHECK(tf_gpu_check_apply_gram(TF_DOUBLE, M, 0, W, 1, a, l, s, g, &nf) == TF_ERR_ARG);
    double in0 = 0, kn0 = 0;
    CHECK(tf_gpu_check_apply_gram_fit(TF_DOUBLE, M, 0, W, 1, W, W, 2, a, l, s, g, &in0, &kn0, &nf) == TF_ERR_ARG);
    CHECK(tf_gpu_check_small_apply(TF_DOUBLE, M, 1, 65, W, a) == TF_ERR_ARG);
    double in = 0, kn = 0;
    CHECK(tf_gpu_check_fit_terms(TF_DOUBLE, M, M, 1, 65, W, W, W, 1, &in, &kn, &nf) == TF_ERR_ARG);
    CHECK(tf_gpu_check_gram_fit(TF_DOUBLE, M, M, 1, 32, 0, W, W, 2, l, s, g, &in, &kn, &nf) == TF_ERR_ARG);
    int info = 0;
    unsigned pv = 0;
    double v[R * R], w[R * R], G4[4 * R * R], s4[4 * R];
    for (int e = 0; e < 4 * R * R; ++e) G4[e] = 1.0;
    for (int e = 0; e < 4 * R; ++e) s4[e] = 1.0;
    CHECK(tf_gpu_check_gram_solve(TF_DOUBLE, M, 1, 1, 1, G4, s4, 4, 1, R, 1e-12, l, s, g, v, w, &info, &pv, &nf) ==
          TF_ERR_ARG); /* g == skip */
    CHECK(tf_gpu_check_gram_solve(TF_DOUBLE, M, 1, 0, 1, G4, s4, 4, 1, 33, 1e-12, l, s, g, v, w, &info, &pv, &nf) ==
          TF_ERR_ARG); /* R > 32 */
    CHECK(tf_gpu_check_gram_solve(TF_DOUBLE, M, 0, 0, 1, G4, s4, 4, 1, R, 1e-12, l, s, g, v, w, &info, &pv, &nf) ==
          TF_ERR_ARG); /* no rows */
    CHECK(tf_gpu_check_gram_solve(TF_DOUBLE, M, 1, 0, 3, G4, s4, 4, 1, R, 1e-12, l, s, g, v, w, &info, &pv, &nf) ==
          TF_ERR_ARG); /* norm */
    free(M0);
    free(M);
    return tf_test_finish("test_gpu_dense");
}
