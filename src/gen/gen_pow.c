/* SPDX-License-Identifier: BSD-3-Clause */
/* The power law of the generator, index = min(floor(d * pow(u, e)), d - 1),
 * bit for bit as libm's pow gives it, but mostly without pow: a
 * vectorisable y = 2^(e log2 u) (polynomials only) with a proven relative
 * error bound, and pow only where the band around y straddles an index.
 *
 * Bound (ulp = 2^-53, relative). u = 2^k z (z in [sqrt(1/2), sqrt(2)), k <=
 * 0 as u < 1). ln z = 2 atanh(s), s = (z-1)/(z+1), |s| <= 0.1716, s^2 <=
 * 0.02944: the series to s^17 leaves 8.1 ulp; with the roundings of s (2),
 * the Horner sum (1.1) and the product (1) ln z is within 12.2 ulp, log2 u
 * = k + ln z log2(e) within 15.2 ulp of |log2 u| (|ln z log2 e| <= 1/2 <=
 * |k + ...| when k < 0), E = e log2 u within 16.2 ulp of |E|. 2^E = 2^n
 * 2^f, n = rint(E) (the 1.5 * 2^52 shifter, exact), f = E - n exact
 * (Sterbenz), |f| <= 1/2; exp(f ln 2) by its Taylor sum to degree 12
 * (truncation 2.2 ulp) within 7 ulp with the roundings of f ln 2 (0.7) and
 * Horner (3); the 2^n scale is exact (E >= -1000). So |y / u^e - 1| <=
 * (11.3 |E| + 7) ulp, and against pow (glibc: < 1 ulp; 2 allowed) (11.3 |E|
 * + 9) ulp <= (|E| + 1) 2^-49. The band is y (1 -+ K), K = (|E| + 1)
 * 2^-43, 64 times that: with the roundings of y (1 -+ K) its ends a, b
 * still hold a <= pow(u, e) <= b. The index map F(x) = (uint64_t)(d * x)
 * with its clamp is monotone (a rounded product, then trunc), so where
 * F(a) = F(b), F(pow(u, e)) is the same; else pow is called. E clamped to
 * -1000: u^e < 2^-999 and both ends give index 0, as pow does (d < 2^999).
 * Fused multiply-adds (the x86-64-v3 clone) change no step of this: each
 * has at most the error of its two operations, and no sum follows d * a
 * (a min does); were it fused, floor(d a) <= F(pow(u, e)) would still hold
 * (the band is far wider than an ulp). The file is built with
 * -fno-trapping-math (CMake; no value changes) so that GCC vectorises the
 * selects; without it the loop runs scalar, with the same results. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gen/gen.h"

/* Built for the baseline (SSE2) and x86-64-v3 (AVX2), picked at load time. */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) && !defined(TF_NO_CLONES)
#define TF_GEN_CLONES __attribute__((target_clones("default", "arch=x86-64-v3")))
#else
#define TF_GEN_CLONES
#endif

#define PIECE 256

uint32_t tf_gen_power_index(uint64_t dim, double e, double u)
{
    const double x = e == 1.0 ? u : pow(u, e);
    const uint64_t i = (uint64_t)((double)dim * x);
    return (uint32_t)(i >= dim ? dim - 1 : i);
}

static inline double bits_double(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

static inline uint64_t double_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline double pow_approx(double u, double e, double *rel_bound)
{
    const uint64_t ix = double_bits(u);
    /* exponent of u * sqrt(2) (biased), and z = u / 2^k in [sqrt(1/2), sqrt(2)) */
    const uint64_t tmp = ix + 0x00095F619980C433ULL; /* 1.0's bits - sqrt(1/2)'s bits */
    const uint64_t eb = tmp >> 52;
    const double kd = bits_double(0x4330000000000000ULL | eb) - (0x1p52 + 1023.0);
    const double z = bits_double(ix - (tmp & 0xFFF0000000000000ULL) + 0x3FF0000000000000ULL);
    const double f = z - 1.0, s = f / (2.0 + f), s2 = s * s;
    double p = 1.0 / 17;
    p = p * s2 + 1.0 / 15;
    p = p * s2 + 1.0 / 13;
    p = p * s2 + 1.0 / 11;
    p = p * s2 + 1.0 / 9;
    p = p * s2 + 1.0 / 7;
    p = p * s2 + 1.0 / 5;
    p = p * s2 + 1.0 / 3;
    p = p * s2;
    p = p + 1.0;
    const double lnz = (2.0 * s) * p;
    const double t = kd + lnz * 0x1.71547652b82fep0; /* log2(e) */
    const double E0 = e * t, E = E0 < -1000.0 ? -1000.0 : E0;
    *rel_bound = (1.0 - E0) * 0x1p-43; /* E0 <= 0 */
    const double sh = E + 0x1.8p52, n = sh - 0x1.8p52;
    const double g = (E - n) * 0x1.62e42fefa39efp-1; /* ln 2 */
    double q = 1.0 / 479001600.0;
    q = q * g + 1.0 / 39916800.0;
    q = q * g + 1.0 / 3628800.0;
    q = q * g + 1.0 / 362880.0;
    q = q * g + 1.0 / 40320.0;
    q = q * g + 1.0 / 5040.0;
    q = q * g + 1.0 / 720.0;
    q = q * g + 1.0 / 120.0;
    q = q * g + 1.0 / 24.0;
    q = q * g + 1.0 / 6.0;
    q = q * g + 0.5;
    q = q * g + 1.0;
    q = q * g + 1.0;
    const double scale = bits_double((double_bits(sh) - 0x4338000000000000ULL + 1023) << 52);
    return q * scale;
}

/* (a clone of each kind, so that the tests measure the one the band uses) */
TF_GEN_CLONES double tf_gen_pow_approx(double u, double e, double *rel_bound) { return pow_approx(u, e, rel_bound); }

/* The index of a value v = d * x >= 0 rounded, clamped to dm1 = d - 1:
 * floor(min(v, dm1)) as a double (v < 2^51), from the nearest integer (the
 * 2^52 shifter), less one where that is above v. */
static inline double index_of(double v, double dm1)
{
    v = v < dm1 ? v : dm1;
    const double r = (v + 0x1p52) - 0x1p52;
    return r > v ? r - 1.0 : r;
}

/* The indices of the band ends of u[0], u[stride], ... (n <= PIECE). */
TF_GEN_CLONES static void band(const double *restrict u, int stride, int n, double e, double d, double *restrict lo,
                               double *restrict hi)
{
    const double dm1 = d - 1.0;
    for (int k = 0; k < n; ++k) {
        double K;
        const double y = pow_approx(u[(size_t)k * (size_t)stride], e, &K);
        const double a = y * (1.0 - K), b = y * (1.0 + K);
        lo[k] = index_of(d * a, dm1);
        hi[k] = index_of(d * b, dm1);
    }
}

void tf_gen_power_law(uint64_t dim, double e, const double *u, int stride, int n, uint32_t *out)
{
    if (e == 1.0 || dim > (1ULL << 32)) {
        for (int k = 0; k < n; ++k) out[k] = tf_gen_power_index(dim, e, u[(size_t)k * (size_t)stride]);
        return;
    }
    double lo[PIECE], hi[PIECE];
    for (int k0 = 0; k0 < n; k0 += PIECE) {
        const int m = n - k0 < PIECE ? n - k0 : PIECE;
        const double *uk = u + (size_t)k0 * (size_t)stride;
        band(uk, stride, m, e, (double)dim, lo, hi);
        for (int k = 0; k < m; ++k)
            out[k0 + k] = lo[k] == hi[k] ? (uint32_t)lo[k] : tf_gen_power_index(dim, e, uk[(size_t)k * (size_t)stride]);
    }
}
