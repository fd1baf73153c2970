/* SPDX-License-Identifier: BSD-3-Clause */
/* The generator's power law (src/gen/gen_pow.c) against the one-value
 * formula with libm's pow, index for index: uniforms as the generator
 * draws them, u near 0 and 1, and u whose d u^e lies within a few ulp of
 * an integer (the band edges); and the approximation's measured error
 * against the bound it claims. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "gen/gen.h"

#define NU 6000

static const double alphas[] = {0.0, 0.3, 0.5, 0.7, 0.9, 0.99};
static const uint64_t dims[] = {1, 2, 3, 1000, 1ULL << 20, 20000000, 1ULL << 31, 4294967295ULL};

static uint64_t mismatches, fallbacks, values;
static double worst_ratio; /* max |y / pow - 1| / ((|E| + 1) 2^-49), the claimed bound's share */

/* The index of every u (stride 1 and 3) as the scalar formula gives it. */
static void check_values(uint64_t dim, double e, const double *u, int n)
{
    static double spread[3 * NU];
    static uint32_t got[NU], got3[NU];
    memset(got, 0xAB, sizeof got);
    memset(got3, 0xCD, sizeof got3);
    for (int k = 0; k < n; ++k) spread[3 * k] = u[k], spread[3 * k + 1] = -1.0, spread[3 * k + 2] = 2.0;
    tf_gen_power_law(dim, e, u, 1, n, got);
    tf_gen_power_law(dim, e, spread, 3, n, got3);
    for (int k = 0; k < n; ++k) {
        const uint32_t want = tf_gen_power_index(dim, e, u[k]);
        if (got[k] != want || got3[k] != want) {
            if (mismatches++ < 5)
                printf("  mismatch: dim %llu e %.17g u %a: %u / %u, pow's %u\n", (unsigned long long)dim, e, u[k],
                       got[k], got3[k], want);
        }
        if (e == 1.0) continue;
        double K;
        const double y = tf_gen_pow_approx(u[k], e, &K), x = pow(u[k], e), d = (double)dim;
        const double ia = floor(fmin(d * (y * (1.0 - K)), d - 1)), ib = floor(fmin(d * (y * (1.0 + K)), d - 1));
        fallbacks += ia != ib;
        ++values;
        if (x > 0x1p-990) {
            const double r = fabs(y / x - 1.0) / (K / 64.0);
            if (r > worst_ratio) worst_ratio = r;
        }
    }
}

/* Uniforms of the generator's kind (multiples of 2^-53), the ends, and u
 * around pow(j / d, 1/e) for indices j spread over the mode. */
static int fill_u(uint64_t dim, double e, uint64_t seed, double *u)
{
    tf_rng r;
    tf_rng_seed(&r, seed);
    int n = 0;
    for (int k = 0; k < 2000; ++k) u[n++] = tf_rng_uniform(&r);
    const double ends[] = {0.0, 0x1p-53, 0x1p-52, 3 * 0x1p-53, 1e-300, 1e-30, 1e-8, 0.5, 0x1.6a09e667f3bccp-1,
                           0x1.6a09e667f3bcdp-1, 1.0 - 0x1p-53, 1.0 - 0x1p-52, 1.0 - 0x1p-30, 0.999999};
    for (size_t k = 0; k < sizeof ends / sizeof *ends; ++k) u[n++] = ends[k];
    for (int k = 0; k < 200; ++k) u[n++] = tf_rng_uniform(&r) * 0x1p-40; /* near 0 */
    for (int k = 0; k < 200; ++k) u[n++] = 1.0 - (double)(k + 1) * 0x1p-53; /* near 1 */
    const double d = (double)dim;
    while (n + 20 <= NU) { /* the band edges: d u^e within a few ulp of the integer j */
        const uint64_t j = dim > 1 ? 1 + tf_rng_below(&r, dim - 1) : 1;
        double c = pow((double)j / d, 1.0 / e);
        if (!(c < 1.0)) c = 1.0 - 0x1p-53;
        const double grid = floor(c * 0x1p53) * 0x1p-53; /* the generator's kind */
        for (int s = -5; s <= 4; ++s) u[n++] = fmax(0.0, fmin(grid + s * 0x1p-53, 1.0 - 0x1p-53));
        double v = c;
        for (int s = 0; s < 5; ++s) v = nextafter(v, 0.0);
        for (int s = 0; s < 10; ++s, v = nextafter(v, 1.0)) u[n++] = v < 1.0 ? v : 1.0 - 0x1p-53;
    }
    return n;
}

static void test_against_pow(void)
{
    static double u[NU];
    for (size_t a = 0; a < sizeof alphas / sizeof *alphas; ++a)
        for (size_t i = 0; i < sizeof dims / sizeof *dims; ++i)
            for (uint64_t seed = 1; seed <= 12; ++seed) {
                const double e = 1.0 / (1.0 - alphas[a]);
                const int n = fill_u(dims[i], e, seed * 1000003 + a * 31 + i, u);
                check_values(dims[i], e, u, n);
            }
    printf("  %llu values (alpha > 0), %llu mismatches, %llu fallbacks to pow (%.3g %%), worst error %.3g of the "
           "claimed bound\n",
           (unsigned long long)values, (unsigned long long)mismatches, (unsigned long long)fallbacks,
           100.0 * (double)fallbacks / (double)values, worst_ratio);
    CHECK(mismatches == 0);
    CHECK(worst_ratio <= 1.0);
    CHECK(values > 0);
}

/* The fast path is taken: plain uniforms need pow rarely. */
static void test_fallback_rate(void)
{
    tf_rng r;
    tf_rng_seed(&r, 49);
    uint64_t fb = 0, n = 0;
    for (int k = 0; k < 200000; ++k) {
        double K;
        const double u = tf_rng_uniform(&r), e = 1.0 / (1.0 - 0.7), d = 2e7;
        const double y = tf_gen_pow_approx(u, e, &K);
        fb += floor(fmin(d * (y * (1.0 - K)), d - 1)) != floor(fmin(d * (y * (1.0 + K)), d - 1));
        ++n;
    }
    printf("  alpha 0.7, d 2e7: %llu of %llu uniforms need pow\n", (unsigned long long)fb, (unsigned long long)n);
    CHECK(fb * 1000 < n);
}

int main(void)
{
    test_against_pow();
    test_fallback_rate();
    return tf_test_finish("test_gen_pow");
}
