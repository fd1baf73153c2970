/* SPDX-License-Identifier: BSD-3-Clause */
/* The generator's jumps (core/rng.h): tf_rng_advance(n) lands where n draws
 * land, for n on both sides of the stepping / matrix cut-over and far out;
 * tf_rng_fill_uniform writes the one-thread loop's values bit for bit on
 * 1, 2, 3 and 5 threads, with pieces whose ends fall inside and on the
 * threads' parts (outputs poisoned first), and tf_cp_start_random (every
 * method's random start) is that loop over the factors mode after mode. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cp_ends.h"
#include "check.h"
#include "core/rng.h"
#include "kt_test_util.h"
#include "tenfold.h"

static void advance_cases(uint64_t seed)
{
    static const uint64_t ns[] = {0, 1, 2, 511, 512, 513, 1000, 65537, 1000003, 4194319};
    for (size_t c = 0; c < sizeof ns / sizeof *ns; ++c) {
        tf_rng a, b;
        tf_rng_seed(&a, seed + c);
        b = a;
        for (uint64_t i = 0; i < ns[c]; ++i) (void)tf_rng_next(&a);
        tf_rng_advance(&b, ns[c]);
        CHECKF(!memcmp(a.s, b.s, sizeof a.s), "advance(%llu) differs from %llu draws", (unsigned long long)ns[c],
               (unsigned long long)ns[c]);
        CHECKF(tf_rng_next(&a) == tf_rng_next(&b), "advance(%llu): the next draw differs", (unsigned long long)ns[c]);
    }
    /* jumps compose: 2^40 + 12345 as one jump or as two */
    tf_rng a, b;
    tf_rng_seed(&a, seed);
    b = a;
    tf_rng_advance(&a, (1ull << 40) + 12345);
    tf_rng_advance(&b, 1ull << 40);
    tf_rng_advance(&b, 12345);
    CHECKF(!memcmp(a.s, b.s, sizeof a.s), "advance(2^40 + 12345) differs from advance(2^40) then advance(12345)");
}

/* Pieces of lengths len[0..pieces) filled on `threads` threads against one loop. */
static void fill_case(uint64_t seed, const uint64_t *len, uint32_t pieces, int threads)
{
    double *out[TF_MAX_ORDER], *ref[TF_MAX_ORDER];
    uint64_t total = 0;
    for (uint32_t p = 0; p < pieces; ++p) {
        out[p] = kt_poisoned(len[p] ? len[p] : 1);
        ref[p] = malloc((len[p] ? len[p] : 1) * sizeof(double));
        total += len[p];
    }
    tf_rng r;
    tf_rng_seed(&r, seed);
    for (uint32_t p = 0; p < pieces; ++p)
        for (uint64_t e = 0; e < len[p]; ++e) ref[p][e] = tf_rng_uniform(&r);
    tf_rng_fill_uniform(seed, out, len, pieces, threads);
    uint64_t bad = 0;
    for (uint32_t p = 0; p < pieces; ++p)
        for (uint64_t e = 0; e < len[p]; ++e) bad += memcmp(&out[p][e], &ref[p][e], sizeof(double)) != 0;
    CHECKF(bad == 0, "fill of %llu uniforms in %u pieces on %d threads: %llu differ from the one-thread loop",
           (unsigned long long)total, pieces, threads, (unsigned long long)bad);
    for (uint32_t p = 0; p < pieces; ++p) {
        free(out[p]);
        free(ref[p]);
    }
}

static void fill_cases(uint64_t seed)
{
    /* above the parallel threshold (2^24 draws): pieces ending inside the threads' parts */
    const uint64_t big[3] = {(1u << 23) + 17, 5, (1u << 23) + 1001};
    for (int t = 1; t <= 5; ++t)
        if (t != 4) fill_case(seed + (uint64_t)t, big, 3, t);
    const uint64_t small[4] = {7, 0, 100, 3}; /* below it: one thread, an empty piece */
    fill_case(seed, small, 4, 3);
}

/* tf_cp_start_random: the factors, mode after mode, of one generator; lambda ones. */
static void start_case(uint64_t seed)
{
    const uint64_t dims[3] = {300000, 7, 290000};
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, 3, dims, 32));
    for (uint32_t m = 0; m < 3; ++m)
        for (uint64_t e = 0; e < dims[m] * 32; ++e) K.factors[m].data[e] = NAN;
    tf_cp_start_random(&K, seed);
    tf_rng r;
    tf_rng_seed(&r, seed);
    uint64_t bad = 0;
    for (uint32_t m = 0; m < 3; ++m)
        for (uint64_t e = 0; e < dims[m] * 32; ++e) {
            const double want = tf_rng_uniform(&r);
            bad += memcmp(&K.factors[m].data[e], &want, sizeof want) != 0;
        }
    CHECKF(bad == 0, "tf_cp_start_random: %llu of the factors' entries differ from one generator's uniforms",
           (unsigned long long)bad);
    for (uint64_t c = 0; c < 32; ++c) CHECKF(K.lambda[c] == 1.0, "tf_cp_start_random: lambda %llu", (unsigned long long)c);
    tf_ktensor_free(&K);
}

int main(void)
{
    const uint64_t seed = kt_seed("test_rng");
    advance_cases(seed);
    fill_cases(seed);
    start_case(seed);
    return tf_test_finish("test_rng");
}
