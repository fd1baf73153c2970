/* SPDX-License-Identifier: BSD-3-Clause */
/* Candidate coordinates of the generator. Candidate j is drawn from
 * stream j / TF_GEN_CHUNK, so chunks are independent and any number of
 * threads draws the same sequence. Mode m's index is
 * perm_m[floor(d_m * u^(1/(1-alpha_m)))], u uniform in [0,1), and the
 * coordinate is packed into a key (mode 0 most significant). */
#include <math.h>
#include <string.h>

#include "core/rng.h"
#include "gen/gen.h"

/* Candidates are drawn a block at a time, in three sweeps: the uniforms in
 * stream order (candidate k, mode m is number k * order + m of the
 * stream), the power law per mode, then the permutation lookups, which
 * miss the cache and overlap best in a loop of independent loads. */
#define BLOCK 512

static inline void put_bits(uint64_t *w, int pos, int bits, uint64_t v)
{
    if (bits == 0) return;
    int word = pos >> 6, off = pos & 63;
    w[word] |= v << off;
    if (off + bits > 64) w[word + 1] |= v >> (64 - off);
}

/* floor(d * u^expo), at most d - 1, for u[0], u[stride], ... */
static void power_law(const tf_gen_ctx *g, uint32_t m, const double *u, int stride, int n, uint32_t *out)
{
    const uint64_t dim = g->o->dims[m];
    const double d = (double)dim, e = g->expo[m];
    for (int k = 0; k < n; ++k) {
        double x = u[(size_t)k * (size_t)stride];
        if (e != 1.0) x = pow(x, e);
        uint64_t i = (uint64_t)(d * x);
        out[k] = (uint32_t)(i >= dim ? dim - 1 : i);
    }
}

static void permute(const tf_gen_perm *p, uint32_t *ix, int n)
{
    if (p->table)
        for (int k = 0; k < n; ++k) ix[k] = p->table[ix[k]];
    else
        for (int k = 0; k < n; ++k) ix[k] = tf_gen_perm_feistel(p, ix[k]);
}

static void draw_chunk(const tf_gen_ctx *g, uint64_t c, uint64_t *keys)
{
    tf_rng r;
    tf_rng_seed(&r, tf_gen_stream_seed(g->o->seed, TF_GEN_TAG_COORD, c));
    const uint32_t order = g->o->order;
    const int W = g->words;
    double u[BLOCK * TF_MAX_ORDER];
    uint32_t ix[BLOCK];
    memset(keys, 0, TF_GEN_CHUNK * (uint64_t)W * sizeof *keys);
    for (uint64_t k0 = 0; k0 < TF_GEN_CHUNK; k0 += BLOCK) {
        const int n = TF_GEN_CHUNK - k0 < BLOCK ? (int)(TF_GEN_CHUNK - k0) : BLOCK;
        for (int j = 0; j < n * (int)order; ++j) u[j] = tf_rng_uniform(&r);
        uint64_t *kb = keys + k0 * (uint64_t)W;
        for (uint32_t m = 0; m < order; ++m) {
            if (g->bits[m] == 0) continue; /* a mode of length 1: index 0 */
            power_law(g, m, u + m, (int)order, n, ix);
            permute(&g->perm[m], ix, n);
            if (W == 1)
                for (int k = 0; k < n; ++k) kb[k] |= (uint64_t)ix[k] << g->shift[m];
            else
                for (int k = 0; k < n; ++k) put_bits(kb + (uint64_t)k * (uint64_t)W, g->shift[m], g->bits[m], ix[k]);
        }
    }
}

void tf_gen_draw(const tf_gen_ctx *g, uint64_t first, uint64_t n, uint64_t *keys)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(g->threads) if (n > 1)
    for (int64_t c = 0; c < (int64_t)n; ++c)
        draw_chunk(g, first + (uint64_t)c, keys + (uint64_t)c * TF_GEN_CHUNK * (uint64_t)g->words);
}
