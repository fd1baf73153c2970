/* SPDX-License-Identifier: BSD-3-Clause */
/* HALS's column sweeps (src/cpu/hals.c) against a plain float64 loop on
 * fresh random inputs, the output poisoned first: the same factor (1e-12)
 * and the same number of sweeps, no negative entry, any thread count the
 * same bits, in place or not; a column with V(r,r) = 0 left as it is; l1
 * and l2; the early stop; non-finite inputs fail. */
#include <stdint.h>

#include "check.h"
#include "core/rng.h"
#include "cpu/hals.h"
#include "tenfold.h"

static double *poisoned(uint64_t n)
{
    double *a = malloc(n * sizeof *a);
    for (uint64_t e = 0; e < n; ++e) a[e] = NAN;
    return a;
}

/* M (I x R) = X W with X I x J uniform [0,1) times a sparsity mask, W J x R
 * uniform [0, 1); V = W^T W (+ zero rows/columns of W for the columns
 * listed in `dead`): the normal equations of a real HALS update. */
static void random_problem(tf_rng *rng, uint64_t I, uint64_t R, uint64_t J, uint64_t dead, double *M, double *V,
                           double *A0)
{
    double *W = malloc(J * R * sizeof *W), *X = malloc(I * J * sizeof *X);
    for (uint64_t e = 0; e < J * R; ++e) W[e] = (e % R) < dead ? 0.0 : tf_rng_uniform(rng);
    for (uint64_t e = 0; e < I * J; ++e) X[e] = tf_rng_uniform(rng) < 0.3 ? tf_rng_uniform(rng) : 0.0;
    for (uint64_t i = 0; i < I; ++i)
        for (uint64_t r = 0; r < R; ++r) {
            double s = 0.0;
            for (uint64_t j = 0; j < J; ++j) s += X[i * J + j] * W[j * R + r];
            M[i * R + r] = s;
        }
    for (uint64_t r = 0; r < R; ++r)
        for (uint64_t q = 0; q < R; ++q) {
            double s = 0.0;
            for (uint64_t j = 0; j < J; ++j) s += W[j * R + r] * W[j * R + q];
            V[r * R + q] = s;
        }
    for (uint64_t e = 0; e < I * R; ++e) A0[e] = tf_rng_uniform(rng) * 2.0;
    free(W);
    free(X);
}

/* tensorly's hals_nnls, plainly: whole columns in turn (rows are
 * independent, so this is the kernel's order per row), stop when a sweep's
 * squared change is below tol times the first's. Returns the sweeps. */
static uint32_t reference_hals(const double *M, double *A, uint64_t I, uint64_t R, const double *V,
                               const tf_hals_mode *o)
{
    double first = 0.0;
    uint32_t it = 0;
    while (it < o->max_inner) {
        double err = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            if (V[r * R + r] == 0.0) continue;
            for (uint64_t i = 0; i < I; ++i) {
                double dot = 0.0;
                for (uint64_t k = 0; k < R; ++k) dot += V[r * R + k] * A[i * R + k];
                const double num = M[i * R + r] - dot + V[r * R + r] * A[i * R + r] - o->l1;
                const double q = fmax(num / (V[r * R + r] + o->l2), 0.0);
                err += (A[i * R + r] - q) * (A[i * R + r] - q);
                A[i * R + r] = q;
            }
        }
        ++it;
        if (it == 1) first = err;
        if (err < o->tol * first || err == 0.0) break;
    }
    return it;
}

static double max_rel_diff(const double *a, const double *b, uint64_t n)
{
    double worst = 0.0, scale = 0.0;
    for (uint64_t e = 0; e < n; ++e) scale = fmax(scale, fabs(b[e]));
    for (uint64_t e = 0; e < n; ++e) {
        const double d = fabs(a[e] - b[e]);
        worst = fmax(worst, isnan(d) ? INFINITY : d);
    }
    return scale > 0.0 ? worst / scale : worst;
}

static uint64_t negatives(const double *a, uint64_t n)
{
    uint64_t k = 0;
    for (uint64_t e = 0; e < n; ++e) k += signbit(a[e]) != 0 || isnan(a[e]);
    return k;
}

static void check_case(uint64_t I, uint64_t R, uint64_t dead, double l1, double l2, uint32_t max_inner, double tol,
                       uint64_t seed)
{
    char what[160];
    snprintf(what, sizeof what, "I %llu R %llu, %llu dead columns, l1 %g l2 %g, %u sweeps tol %g",
             (unsigned long long)I, (unsigned long long)R, (unsigned long long)dead, l1, l2, max_inner, tol);
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    const uint64_t n = I * R;
    double *M = malloc(n * sizeof *M), *V = malloc(R * R * sizeof *V), *A0 = malloc(n * sizeof *A0);
    random_problem(&rng, I, R, 3 * R + 5, dead, M, V, A0);
    const tf_hals_mode o = {max_inner, tol, l1, l2, NULL};
    double *ref = malloc(n * sizeof *ref);
    memcpy(ref, A0, n * sizeof *ref);
    const uint32_t ref_inner = reference_hals(M, ref, I, R, V, &o);

    /* out of place, on 1 thread and on several, the output poisoned */
    double *A1 = poisoned(n), *A2 = poisoned(n);
    uint32_t in1 = 12345, in2 = 12345;
    CHECK_OK(tf_dense_hals(M, A0, A1, I, R, V, &o, 1, &in1));
    CHECK_OK(tf_dense_hals(M, A0, A2, I, R, V, &o, 4, &in2));
    const double d = max_rel_diff(A1, ref, n);
    CHECKF(d <= 1e-12 && in1 == ref_inner, "%s: %g from the plain loop, %u sweeps (reference %u)", what, d, in1,
           ref_inner);
    CHECKF(negatives(A1, n) == 0, "%s: %llu negative (or NaN) entries", what, (unsigned long long)negatives(A1, n));
    CHECKF(!memcmp(A1, A2, n * sizeof *A1) && in1 == in2, "%s: 1 and 4 threads differ", what);
    /* a dead column (V(r,r) = 0) is the start's */
    int kept = 1;
    for (uint64_t i = 0; i < I; ++i)
        for (uint64_t r = 0; r < dead; ++r) kept &= A1[i * R + r] == A0[i * R + r];
    CHECKF(kept, "%s: a column with V(r,r) = 0 changed", what);
    /* in place: the same bits */
    double *A3 = malloc(n * sizeof *A3);
    memcpy(A3, A0, n * sizeof *A3);
    uint32_t in3 = 0;
    CHECK_OK(tf_dense_hals(M, A3, A3, I, R, V, &o, 2, &in3));
    CHECKF(!memcmp(A1, A3, n * sizeof *A1) && in3 == in1, "%s: in place differs", what);
    printf("%s: %u sweeps, %g from the reference\n", what, in1, d);
    free(M);
    free(V);
    free(A0);
    free(ref);
    free(A1);
    free(A2);
    free(A3);
}

static void test_against_reference(void)
{
    check_case(1, 1, 0, 0.0, 0.0, 5, 1e-8, 1);
    check_case(37, 5, 0, 0.0, 0.0, 5, 1e-8, 2);
    check_case(300, 16, 2, 0.0, 0.0, 5, 1e-8, 3);
    check_case(513, 7, 0, 0.3, 1.5, 8, 0.0, 4);
    check_case(200, 33, 1, 0.0, 0.0, 50, 1e-3, 5); /* stops early */
    check_case(1000, 64, 0, 0.1, 0.0, 3, 1e-8, 6);
    /* enough work for a team of threads (the cost model runs small loops serially) */
    check_case(40000, 16, 1, 0.0, 0.0, 5, 1e-8, 7);
}

static void test_failures(void)
{
    const uint64_t I = 10, R = 3;
    double M[30], V[9], A[30];
    for (int e = 0; e < 30; ++e) M[e] = A[e] = 1.0;
    for (int e = 0; e < 9; ++e) V[e] = e % 4 == 0 ? 2.0 : 0.5;
    tf_hals_mode o = {5, 1e-8, 0.0, 0.0, NULL};
    uint32_t inner = 7;
    V[1] = V[3] = INFINITY;
    CHECK_FAILS(tf_dense_hals(M, A, A, I, R, V, &o, 1, &inner), TF_ERR_NUMERIC, "normal matrix");
    CHECK(inner == 0);
    V[1] = V[3] = 0.5;
    M[17] = NAN;
    CHECK_FAILS(tf_dense_hals(M, A, A, I, R, V, &o, 1, &inner), TF_ERR_NUMERIC, "not finite");
    M[17] = 1.0;
    o.max_inner = 0;
    CHECK_FAILS(tf_dense_hals(M, A, A, I, R, V, &o, 1, &inner), TF_ERR_ARG, "max_inner");
    o.max_inner = 5;
    CHECK_FAILS(tf_dense_hals(M, A, A, I, 0, V, &o, 1, &inner), TF_ERR_ARG, "rank 0");
    /* no rows: nothing to do, one sweep of nothing */
    CHECK_OK(tf_dense_hals(M, A, A, 0, R, V, &o, 1, &inner));
}

int main(void)
{
    test_against_reference();
    test_failures();
    return tf_test_finish("test_hals");
}
