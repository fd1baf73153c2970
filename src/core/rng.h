/* SPDX-License-Identifier: BSD-3-Clause */
/* Deterministic random numbers: splitmix64 seeding + xoshiro256** stream. */
#ifndef TF_CORE_RNG_H
#define TF_CORE_RNG_H
#include <stdint.h>

typedef struct tf_rng { uint64_t s[4]; } tf_rng;

void tf_rng_seed(tf_rng *r, uint64_t seed);

/* Inline: the generator draws billions of them (a call each was ~8 % of
 * its time on one thread). */
static inline uint64_t tf_rng_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* The state update of tf_rng_next (linear over GF(2): rng.c's jumps use it). */
static inline void tf_rng_step(uint64_t *s)
{
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = tf_rng_rotl(s[3], 45);
}

static inline uint64_t tf_rng_next(tf_rng *r)
{
    const uint64_t result = tf_rng_rotl(r->s[1] * 5, 7) * 9;
    tf_rng_step(r->s);
    return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double tf_rng_uniform(tf_rng *r) { return (double)(tf_rng_next(r) >> 11) * 0x1.0p-53; }
/* Uniform integer in [0, n) without modulo bias (n > 0). */
uint64_t tf_rng_below(tf_rng *r, uint64_t n);
/* Standard normal (Box-Muller). */
double tf_rng_normal(tf_rng *r);
/* Poisson with mean lam >= 0 (lam < 2^52): the product of uniforms below
 * 10, Hormann's transformed rejection PTRS (1993, as numpy's) above. */
uint64_t tf_rng_poisson(tf_rng *r, double lam);
/* The generator as it would be after n more draws (tf_rng_next), in
 * O(log n) products of the update's 256 x 256 matrix over GF(2): the state
 * update of xoshiro256 is linear there, so its n-th power jumps exactly. */
void tf_rng_advance(tf_rng *r, uint64_t n);
/* The first n uniforms (tf_rng_uniform) of a generator seeded with `seed`,
 * in order, written in pieces: piece p gets len[p] of them at out[p]
 * (the pieces in turn make up the one sequence). On up to `threads`
 * threads (0: the default), each starting its contiguous part of the
 * sequence from a jumped generator, so the values are the one-thread
 * loop's bit for bit and the pages are first touched in parallel. */
void tf_rng_fill_uniform(uint64_t seed, double *const *out, const uint64_t *len, uint32_t pieces, int threads);
/* A counter-based key: the seed of draw `counter` of stream `stream`
 * (splitmix64 finalisers chained), for draws that must not depend on the
 * order or thread they are made in (seed a tf_rng with it). */
uint64_t tf_rng_key(uint64_t seed, uint64_t stream, uint64_t counter);
#endif
