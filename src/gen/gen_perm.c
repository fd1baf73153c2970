/* SPDX-License-Identifier: BSD-3-Clause */
/* Per-mode random permutations for the generator, and stream seeding. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/rng.h"
#include "gen/gen.h"

static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

uint64_t tf_gen_stream_seed(uint64_t seed, uint64_t tag, uint64_t j)
{
    return mix64(mix64(seed ^ (tag * 0x9E3779B97F4A7C15ULL)) + j * 0xD1B54A32D192ED03ULL);
}

/* Four-round Feistel network on 2*half_bits bits, cycle-walked into
 * 0..dim-1: a bijection of the domain, so the walk always returns. */
uint32_t tf_gen_perm_feistel(const tf_gen_perm *p, uint64_t i)
{
    const int h = p->half_bits;
    const uint64_t mask = p->half_mask;
    uint64_t x = i;
    do {
        uint64_t l = x >> h, r = x & mask;
        for (int round = 0; round < 4; ++round) {
            uint64_t f = mix64(r ^ p->key[round]) & mask;
            uint64_t t = r;
            r = l ^ f;
            l = t;
        }
        x = (l << h) | r;
    } while (x >= p->dim);
    return (uint32_t)x;
}

tf_status tf_gen_perm_init(tf_gen_perm *p, uint64_t dim, uint64_t seed, uint32_t mode,
                           uint64_t table_max)
{
    memset(p, 0, sizeof *p);
    p->dim = dim;
    tf_rng r;
    tf_rng_seed(&r, tf_gen_stream_seed(seed, TF_GEN_TAG_PERM, mode));
    if (dim <= table_max) {
        TF_TRY(TF_ALLOC(p->table, dim, "generator permutation"));
        uint32_t *t = p->table;
        for (uint64_t i = 0; i < dim; ++i) t[i] = (uint32_t)i;
        /* Fisher-Yates. The draws do not depend on the table, so a block
         * of them is taken ahead and their slots prefetched: a long
         * mode's swaps otherwise wait on one cache miss each. The same
         * draws and swaps in the same order: the same table. */
        enum { AHEAD = 64 };
        uint64_t js[AHEAD];
        for (uint64_t i = dim; i > 1;) {
            const uint64_t n = i - 1 < AHEAD ? i - 1 : AHEAD; /* swaps at i, i-1, ..., i-n+1 */
            for (uint64_t k = 0; k < n; ++k) {
                js[k] = tf_rng_below(&r, i - k);
                __builtin_prefetch(&t[js[k]], 1);
            }
            for (uint64_t k = 0; k < n; ++k, --i) {
                const uint32_t x = t[i - 1];
                t[i - 1] = t[js[k]];
                t[js[k]] = x;
            }
        }
        return TF_OK;
    }
    int bits = 0;
    while (bits < 64 && ((dim - 1) >> bits)) ++bits;
    p->half_bits = (bits + 1) / 2;
    if (p->half_bits == 0) p->half_bits = 1;
    p->half_mask = (1ULL << p->half_bits) - 1;
    for (int k = 0; k < 4; ++k) p->key[k] = tf_rng_next(&r);
    return TF_OK;
}

void tf_gen_perm_free(tf_gen_perm *p)
{
    if (!p) return;
    tf_free(p->table);
    memset(p, 0, sizeof *p);
}
