/* SPDX-License-Identifier: BSD-3-Clause */
/* The counter-based random numbers as inline functions for host and device
 * code alike (C, and CUDA's __host__ __device__): the splitmix64 step and
 * finaliser, the key of draw `counter` of stream `stream` (core/rng.h's
 * tf_rng_key is this), and a uniform integer below n from a splitmix64
 * state (Lemire's multiply-shift with rejection). One implementation, so
 * that a GPU draws what the CPU draws for a seed, stream and counter. */
#ifndef TF_CORE_RNG_KEY_H
#define TF_CORE_RNG_KEY_H
#include <stdint.h>

#ifdef __CUDACC__
#define TF_RNG_FN static inline __host__ __device__
#else
#define TF_RNG_FN static inline
#endif

/* splitmix64's finaliser */
TF_RNG_FN uint64_t tf_rng_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The next number of a splitmix64 state. */
TF_RNG_FN uint64_t tf_rng_split_next(uint64_t *x)
{
    return tf_rng_mix64(*x += 0x9E3779B97F4A7C15ULL);
}

/* The seed of draw `counter` of stream `stream` (splitmix64 finalisers chained). */
TF_RNG_FN uint64_t tf_rng_key_of(uint64_t seed, uint64_t stream, uint64_t counter)
{
    uint64_t h = tf_rng_mix64(seed + 0x9E3779B97F4A7C15ULL);
    h = tf_rng_mix64(h ^ (stream + 0x632BE59BD9B4E019ULL));
    return tf_rng_mix64(h ^ (counter + 0xD1B54A32D192ED03ULL));
}

/* The high 64 bits of a b. */
TF_RNG_FN uint64_t tf_rng_mulhi(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* Uniform in [0, n) (n > 0) from a splitmix64 state: Lemire's
 * multiply-shift, a low part below 2^64 mod n drawn again. */
TF_RNG_FN uint64_t tf_rng_split_below(uint64_t *x, uint64_t n)
{
    uint64_t r = tf_rng_split_next(x), lo = r * n;
    if (lo < n) {
        const uint64_t t = (0 - n) % n;
        while (lo < t) {
            r = tf_rng_split_next(x);
            lo = r * n;
        }
    }
    return tf_rng_mulhi(r, n);
}
#endif
