/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/rng.h"

#include <math.h>
#include <string.h>

#include "core/parallel.h"
#include "core/rng_key.h"
#include "tenfold.h"

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

/* ---- jumps: the state update as a 256 x 256 matrix over GF(2), kept by
 * columns (column j: the image of the state with bit j alone set; bit
 * 64 w + b of a state is bit b of word w). 8 KiB. */
typedef struct gf2mat { uint64_t col[256][4]; } gf2mat;


/* out = M v (out may not be v). */
static void apply(const gf2mat *M, const uint64_t *v, uint64_t *out)
{
    out[0] = out[1] = out[2] = out[3] = 0;
    for (int j = 0; j < 256; ++j)
        if (v[j >> 6] >> (j & 63) & 1)
            for (int w = 0; w < 4; ++w) out[w] ^= M->col[j][w];
}

/* C = A B (C may not be A or B). */
static void mul(const gf2mat *A, const gf2mat *B, gf2mat *C)
{
    for (int j = 0; j < 256; ++j) apply(A, B->col[j], C->col[j]);
}

/* *P = the update to the power n (n >= 1). */
static void power(uint64_t n, gf2mat *P)
{
    gf2mat base, tmp;
    for (int j = 0; j < 256; ++j) {
        memset(base.col[j], 0, sizeof base.col[j]);
        base.col[j][j >> 6] = 1ull << (j & 63);
        tf_rng_step(base.col[j]);
    }
    int have = 0;
    while (n) {
        if (n & 1) {
            if (!have) *P = base, have = 1;
            else {
                mul(P, &base, &tmp);
                *P = tmp;
            }
        }
        n >>= 1;
        if (n) {
            mul(&base, &base, &tmp);
            base = tmp;
        }
    }
}

void tf_rng_advance(tf_rng *r, uint64_t n)
{
    if (n < 512) { /* a few hundred steps cost less than one matrix product */
        for (uint64_t i = 0; i < n; ++i) (void)tf_rng_next(r);
        return;
    }
    gf2mat P;
    power(n, &P);
    uint64_t out[4];
    apply(&P, r->s, out);
    memcpy(r->s, out, sizeof out);
}

/* Draw k of the sequence written to its place among the pieces: the
 * pieces' starts in the sequence are at[p] (at[pieces] = the total). */
static void fill_range(const tf_rng *start, double *const *out, const uint64_t *at, uint32_t pieces, uint64_t lo,
                       uint64_t hi)
{
    tf_rng r = *start;
    uint32_t p = 0;
    while (p + 1 < pieces && at[p + 1] <= lo) ++p;
    for (uint64_t k = lo; k < hi; ++p) {
        const uint64_t end = at[p + 1] < hi ? at[p + 1] : hi;
        double *o = out[p] + (k - at[p]);
        for (; k < end; ++k) *o++ = tf_rng_uniform(&r);
    }
}

/* Below this many draws one thread fills them (a jump costs ~40 matrix
 * products, ~10 ms, and a thread's start is not free either). */
#define FILL_PARALLEL_MIN (1ull << 24)

void tf_rng_fill_uniform(uint64_t seed, double *const *out, const uint64_t *len, uint32_t pieces, int threads)
{
    uint64_t at[TF_MAX_ORDER + 1], total = 0;
    if (pieces > TF_MAX_ORDER) pieces = TF_MAX_ORDER;
    for (uint32_t p = 0; p < pieces; ++p) {
        at[p] = total;
        total += len[p];
    }
    at[pieces] = total;
    tf_rng r;
    tf_rng_seed(&r, seed);
    int T = tf_resolve_threads(threads);
    if (total < FILL_PARALLEL_MIN || T < 2) {
        fill_range(&r, out, at, pieces, 0, total);
        return;
    }
    if ((uint64_t)T > total / (FILL_PARALLEL_MIN / 4)) T = (int)(total / (FILL_PARALLEL_MIN / 4));
    if (T > 256) T = 256;
    const uint64_t chunk = (total + (uint64_t)T - 1) / (uint64_t)T;
    tf_rng st[256];
    gf2mat J;
    power(chunk, &J);
    st[0] = r;
    for (int t = 1; t < T; ++t) apply(&J, st[t - 1].s, st[t].s); /* part t starts chunk t draws in */
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const uint64_t lo = (uint64_t)t * chunk, hi = lo + chunk < total ? lo + chunk : total;
        if (lo < hi) fill_range(&st[t], out, at, pieces, lo, hi);
    }
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
