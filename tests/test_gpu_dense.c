/* GPU CP-ALS's fused apply + Gram pass (tf_gpu_apply_gram: A = M W, the
 * Gram of A and its column normalisation in one read of M; rank 32)
 * against float64 loops on the same inputs (in fp32 the inputs are
 * rounded to float first, so both sides see the same values): A
 * elementwise within 1e-12 (fp64) / 1e-5 (fp32) of sum_k |M_ik W_kj|
 * (the error bound of any summation order), lambda, the scales and G =
 * diag(s) A^T A diag(s) of the A the device stored within 1e-12 / 1e-6.
 * Inputs: random, W ill-conditioned as CP-ALS's inverse normal matrices
 * are (M = A0 W^-1, so M W cancels), a zero column of W; row counts that
 * are not multiples of the 8-row task, fewer rows than warps, and enough
 * for many slabs; 2-norm and max-norm. Device outputs are poisoned (NaN)
 * before every run; two runs must agree bit for bit. Skipped (exit 77)
 * without a GPU; `--quick` (or TF_TEST_QUICK=1) leaves out the largest
 * row count, for compute-sanitizer. */
#include <stdlib.h>

#include "check.h"
#include "core/rng.h"
#include "cuda/dense_check.h"
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
    double worst = 0;
    uint64_t bad = 0;
    for (uint64_t i = 0; i < I; ++i)
        for (int j = 0; j < R; ++j) {
            double ref = 0, mag = 0;
            for (int k = 0; k < R; ++k) {
                ref += M[i * R + k] * W[k * R + j];
                mag += fabs(M[i * R + k] * W[k * R + j]);
            }
            const double got = r.A[i * R + j];
            const double err = fabs(got - ref) / (mag > 0 ? mag : 1.0);
            if (!(err <= tol_a)) ++bad; /* NaN (an unwritten element) counts */
            if (!(err <= worst)) worst = isnan(err) ? INFINITY : err;
        }
    CHECKF(bad == 0, "%s %s I=%llu norm %d: %llu elements of A off (worst %.3g, bound %.0e)", what, pn,
           (unsigned long long)I, norm, (unsigned long long)bad, worst, tol_a);
    /* lambda, s and G from the A the device stored, in double */
    double lam[R], sc[R], gw = 0, lw = 0;
    for (int c = 0; c < R; ++c) {
        double v = 0;
        for (uint64_t i = 0; i < I; ++i) {
            const double a = r.A[i * R + c];
            if (norm == 2) v = fabs(a) > v ? fabs(a) : v;
            else v += a * a;
        }
        lam[c] = norm == 2 ? (v > 1.0 ? v : 1.0) : sqrt(v);
        sc[c] = lam[c] > 0 ? 1.0 / lam[c] : 1.0;
        const double dl = fabs(r.lambda[c] - lam[c]) / (lam[c] > 0 ? lam[c] : 1.0);
        const double ds = fabs(r.s[c] - sc[c]) / sc[c];
        if (!(dl <= lw)) lw = isnan(dl) ? INFINITY : dl;
        if (!(ds <= lw)) lw = isnan(ds) ? INFINITY : ds;
    }
    CHECKF(lw <= tol_g, "%s %s I=%llu norm %d: lambda / scales off by %.3g", what, pn, (unsigned long long)I, norm,
           lw);
    double graw[R * R];
    for (int p = 0; p < R; ++p)
        for (int q = 0; q < R; ++q) {
            long double v = 0;
            for (uint64_t i = 0; i < I; ++i) v += (long double)r.A[i * R + p] * r.A[i * R + q];
            graw[p * R + q] = (double)v;
        }
    for (int p = 0; p < R; ++p)
        for (int q = 0; q < R; ++q) {
            const double ref = sc[p] * graw[p * R + q] * sc[q];
            const double scale = sqrt(sc[p] * sc[p] * graw[p * R + p] * sc[q] * sc[q] * graw[q * R + q]);
            const double d = fabs(r.G[p * R + q] - ref) / (scale > 0 ? scale : 1.0);
            if (!(d <= gw)) gw = isnan(d) ? INFINITY : d;
        }
    CHECKF(gw <= tol_g, "%s %s I=%llu norm %d: G off by %.3g", what, pn, (unsigned long long)I, norm, gw);
    CHECKF(r.nonfinite == 0, "%s %s I=%llu: non-finite flag %d", what, pn, (unsigned long long)I, r.nonfinite);
    /* deterministic: a second run gives the same bits */
    if (run(prec, M, I, W, norm, &r2)) {
        CHECKF(!memcmp(r.A, r2.A, I * R * sizeof *r.A) && !memcmp(r.G, r2.G, sizeof r.G) &&
                   !memcmp(r.lambda, r2.lambda, sizeof r.lambda),
               "%s %s I=%llu: a second run differs", what, pn, (unsigned long long)I);
    }
    printf("  %-28s %s I=%-7llu norm %d: A worst %.2e of sum|MW|, lambda/s %.2e, G %.2e\n", what, pn,
           (unsigned long long)I, norm, worst, lw, gw);
    free(r.A);
    free(r2.A);
}

int main(int argc, char **argv)
{
    const int quick = (argc > 1 && !strcmp(argv[1], "--quick")) ||
                      (getenv("TF_TEST_QUICK") && !strcmp(getenv("TF_TEST_QUICK"), "1"));
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
    }
    /* bad arguments: a clear error, nothing run */
    double a[R], l[R], s[R], g[R * R];
    int nf = 0;
    CHECK(tf_gpu_check_apply_gram(TF_DOUBLE, M, 0, W, 1, a, l, s, g, &nf) == TF_ERR_ARG);
    free(M0);
    free(M);
    return tf_test_finish("test_gpu_dense");
}
