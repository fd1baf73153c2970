/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/rng.h"

#include <math.h>

#include "core/rng_key.h"

static uint64_t splitmix64(uint64_t *x)
{
    return tf_rng_split_next(x);
}

uint64_t tf_rng_key(uint64_t seed, uint64_t stream, uint64_t counter)
{
    return tf_rng_key_of(seed, stream, counter);
}

void tf_rng_seed(tf_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < 4; ++i) r->s[i] = splitmix64(&x);
}

uint64_t tf_rng_below(tf_rng *r, uint64_t n)
{
    /* Lemire's multiply-shift with rejection */
    unsigned __int128 m = (unsigned __int128)tf_rng_next(r) * n;
    uint64_t lo = (uint64_t)m;
    if (lo < n) {
        uint64_t t = -n % n;
        while (lo < t) {
            m = (unsigned __int128)tf_rng_next(r) * n;
            lo = (uint64_t)m;
        }
    }
    return (uint64_t)(m >> 64);
}

double tf_rng_normal(tf_rng *r)
{
    double u1 = tf_rng_uniform(r), u2 = tf_rng_uniform(r);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586476925 * u2);
}

/* Hormann, "The transformed rejection method for generating Poisson random
 * variables" (1993), algorithm PTRS, for lam >= 10. */
static uint64_t poisson_ptrs(tf_rng *r, double lam)
{
    const double slam = sqrt(lam), loglam = log(lam);
    const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2.0);
    for (;;) {
        const double u = tf_rng_uniform(r) - 0.5, v = tf_rng_uniform(r);
        const double us = 0.5 - fabs(u);
        const double k = floor((2.0 * a / us + b) * u + lam + 0.43);
        if (us >= 0.07 && v <= vr) return (uint64_t)k;
        if (k < 0.0 || (us < 0.013 && v > us)) continue;
        if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1.0))
            return (uint64_t)k;
    }
}

uint64_t tf_rng_poisson(tf_rng *r, double lam)
{
    if (!(lam > 0.0)) return 0;
    if (lam >= 10.0) return poisson_ptrs(r, lam);
    const double limit = exp(-lam); /* Knuth: count uniforms until their product drops below e^-lam */
    double prod = tf_rng_uniform(r);
    uint64_t k = 0;
    while (prod > limit) {
        ++k;
        prod *= tf_rng_uniform(r);
    }
    return k;
}
