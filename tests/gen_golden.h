/* SPDX-License-Identifier: BSD-3-Clause */
/* Frozen output of tf_generate: checksums of the tensors the generator made
 * before it was parallelised (the serial hash-set version of 0.2.0),
 * computed with that code. The generator must keep reproducing them. */
#ifndef TF_TESTS_GEN_GOLDEN_H
#define TF_TESTS_GEN_GOLDEN_H
#include <stdint.h>
#include <string.h>

#include "tenfold.h"

typedef struct gen_golden_case {
    const char *what;
    uint32_t order;
    uint64_t dims[TF_MAX_ORDER];
    uint64_t nnz;
    double alpha;   /* every mode, unless alpha2 >= 0 */
    double alpha2;  /* >= 0: mode 2's alpha           */
    uint64_t seed, rank;
    double noise;
    uint64_t sum;   /* gen_checksum of the 0.2.0 output */
} gen_golden_case;

static const gen_golden_case gen_golden[] = {
    {"order 3 skewed", 3, {3000, 2000, 500}, 50000, 0.6, -1, 7, 0, 0, 0x67e5d2f9ae389928ULL},
    {"order 3 several batches", 3, {20000, 10000, 5000}, 2500000, 0.7, -1, 3, 0, 0, 0x0c9a6f6b213fe067ULL},
    {"order 2 dense, many duplicates", 2, {1000, 800}, 300000, 0.5, -1, 1, 0, 0, 0x12c1c7ab8f6b26ddULL},
    {"order 4 planted rank 3", 4, {100, 200, 300, 400}, 200000, 0.8, -1, 4, 3, 0, 0x633ddd9f7c66d762ULL},
    {"order 5, two-word keys", 5, {1u << 20, 1u << 20, 1u << 20, 1u << 20, 1u << 20}, 30000, 0.5, -1, 9, 0,
     0, 0x627456dc9654aa40ULL},
    {"tiny dims, nearly full", 3, {7, 5, 3}, 100, 0.3, -1, 5, 0, 0, 0x4c746398fa29f2c1ULL},
    {"every cell", 3, {3, 4, 5}, 60, 0.0, -1, 1, 0, 0, 0xd2fc1d07898c6ee5ULL},
    {"planted rank 4 with noise", 3, {300, 200, 100}, 20000, 0.3, -1, 5, 4, 0.1, 0x4c9b0e64f0243dbbULL},
    {"Feistel modes", 3, {1ULL << 32, 3, 100000000}, 5000, 0.5, -1, 3, 0, 0, 0x5d81f81067b3fc1eULL},
    {"64-bit keys", 2, {1ULL << 32, 1ULL << 32}, 10000, 0.9, -1, 2, 0, 0, 0x57cd05ba32173dc4ULL},
    {"63-bit keys", 3, {1u << 21, 1u << 21, 1u << 21}, 40000, 0.7, -1, 6, 0, 0, 0x67a5ba31e4349d03ULL},
    {"65-bit keys", 3, {1u << 22, 1u << 22, 1u << 21}, 40000, 0.7, -1, 6, 0, 0, 0x37123b09fe4fcb2cULL},
    {"a mode of length 1", 3, {1, 1000, 1000}, 50000, 0.4, -1, 8, 0, 0, 0x1f2610d118e99e5cULL},
    {"per-mode alpha", 3, {10000, 10000, 10000}, 200000, 0.0, 0.8, 11, 0, 0, 0xe88321da0d3984f5ULL},
    {"order 16, nine-word keys", 16, {2, 1ULL << 32, 4, 1ULL << 32, 6, 1ULL << 32, 8, 1ULL << 32, 10, 1ULL << 32,
     12, 1ULL << 32, 14, 1ULL << 32, 16, 1ULL << 32}, 2000, 0.9, -1, 10, 0, 0, 0xabd2c533064729f4ULL},
    {"order 2 strong skew, many rounds", 2, {1000, 1000}, 600000, 0.5, -1, 12, 2, 0, 0x3d1cbef033287927ULL},
    {"order 3 half the cells, alpha 0.7", 3, {100, 100, 100}, 500000, 0.7, -1, 13, 0, 0, 0x13d108911a69ab93ULL},
    {"order 4 quarter of the cells", 4, {40, 40, 40, 40}, 1000000, 0.4, -1, 14, 0, 0, 0xc018a8881478d47bULL},
};

static tf_gen_opts gen_golden_opts(const gen_golden_case *c)
{
    tf_gen_opts o;
    memset(&o, 0, sizeof o);
    o.order = c->order;
    for (uint32_t m = 0; m < c->order; ++m) {
        o.dims[m] = c->dims[m];
        o.alpha[m] = (m == 2 && c->alpha2 >= 0) ? c->alpha2 : c->alpha;
    }
    o.nnz = c->nnz;
    o.seed = c->seed;
    o.rank = c->rank;
    o.noise = c->noise;
    return o;
}

static uint64_t gen_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

/* Order, dims, nnz, every index and the bits of every value. */
static uint64_t gen_checksum(const tf_tensor *t)
{
    uint64_t h = gen_mix(0, t->order);
    h = gen_mix(h, t->nnz);
    for (uint32_t m = 0; m < t->order; ++m) {
        h = gen_mix(h, t->dims[m]);
        for (uint64_t k = 0; k < t->nnz; ++k) h = gen_mix(h, t->ind[m][k]);
    }
    for (uint64_t k = 0; k < t->nnz; ++k) {
        uint64_t b;
        memcpy(&b, &t->vals[k], sizeof b);
        h = gen_mix(h, b);
    }
    return h;
}
#endif
