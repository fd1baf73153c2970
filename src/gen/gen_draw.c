/* SPDX-License-Identifier: BSD-3-Clause */
/* Candidate coordinates of the generator. Candidate j is drawn from
 * stream j / TF_GEN_CHUNK, so chunks are independent and any number of
 * threads draws the same sequence. Mode m's index is
 * perm_m[floor(d_m * u^(1/(1-alpha_m)))], u uniform in [0,1), and the
 * coordinate is packed into a key (mode 0 most significant). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
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

static void power_law(const tf_gen_ctx *g, uint32_t m, const double *u, int stride, int n, uint32_t *out)
{
    tf_gen_power_law(g->o->dims[m], g->expo[m], u, stride, n, out);
}

static void permute(const tf_gen_perm *p, uint32_t *ix, int n)
{
    if (p->table)
        for (int k = 0; k < n; ++k) ix[k] = p->table[ix[k]];
    else
        for (int k = 0; k < n; ++k) ix[k] = tf_gen_perm_feistel(p, ix[k]);
}

/* Chunk c's keys. With range0 (inclusive mode-0 indices), a candidate
 * whose mode-0 index falls outside gets only its mode-0 bits (no power law
 * nor lookups for the other modes): its key lies outside every key range
 * of those mode-0 bounds anyway. The random numbers are drawn alike. Mode
 * 0 must have length > 1 (bits[0] > 0) for range0. With ix0_out, only the
 * mode-0 indices, to ix0_out (keys unused); with ix0_in, the mode-0
 * indices are those (of an earlier call with ix0_out). */
static void draw_chunk(const tf_gen_ctx *g, uint64_t c, uint64_t *keys, const uint32_t *range0, uint32_t *ix0_out,
                       const uint32_t *ix0_in)
{
    tf_rng r;
    tf_rng_seed(&r, tf_gen_stream_seed(g->o->seed, TF_GEN_TAG_COORD, c));
    const uint32_t order = g->o->order;
    const int W = g->words;
    double u[BLOCK * TF_MAX_ORDER], v[BLOCK];
    uint32_t ix[BLOCK], pos[BLOCK];
    if (!ix0_out) memset(keys, 0, TF_GEN_CHUNK * (uint64_t)W * sizeof *keys);
    for (uint64_t k0 = 0; k0 < TF_GEN_CHUNK; k0 += BLOCK) {
        const int n = TF_GEN_CHUNK - k0 < BLOCK ? (int)(TF_GEN_CHUNK - k0) : BLOCK;
        for (int j = 0; j < n * (int)order; ++j) u[j] = tf_rng_uniform(&r);
        if (ix0_out) {
            if (g->bits[0] == 0) {
                memset(ix0_out + k0, 0, (size_t)n * sizeof *ix0_out);
            } else {
                power_law(g, 0, u, (int)order, n, ix0_out + k0);
                permute(&g->perm[0], ix0_out + k0, n);
            }
            continue;
        }
        uint64_t *kb = keys + k0 * (uint64_t)W;
        int alive = n; /* candidates pos[0..alive) get every mode; all of them when pos is unused */
        for (uint32_t m = 0; m < order; ++m) {
            const int some = range0 && m > 0;
            if (g->bits[m] == 0) continue; /* a mode of length 1: index 0 */
            if (m == 0 && ix0_in) {
                memcpy(ix, ix0_in + k0, (size_t)n * sizeof *ix);
            } else if (some) {
                for (int k = 0; k < alive; ++k) v[k] = u[(size_t)pos[k] * order + m];
                power_law(g, m, v, 1, alive, ix);
                permute(&g->perm[m], ix, alive);
            } else {
                power_law(g, m, u + m, (int)order, n, ix);
                permute(&g->perm[m], ix, n);
            }
            const int sh = g->shift[m];
            if (some && W == 1)
                for (int j = 0; j < alive; ++j) kb[pos[j]] |= (uint64_t)ix[j] << sh;
            else if (some)
                for (int j = 0; j < alive; ++j) put_bits(kb + (uint64_t)pos[j] * (uint64_t)W, sh, g->bits[m], ix[j]);
            else if (W == 1)
                for (int k = 0; k < n; ++k) kb[k] |= (uint64_t)ix[k] << sh;
            else
                for (int k = 0; k < n; ++k) put_bits(kb + (uint64_t)k * (uint64_t)W, sh, g->bits[m], ix[k]);
            if (range0 && m == 0) {
                alive = 0;
                for (int k = 0; k < n; ++k) pos[alive] = (uint32_t)k, alive += ix[k] >= range0[0] && ix[k] <= range0[1];
            }
        }
    }
}

void tf_gen_draw(const tf_gen_ctx *g, uint64_t first, uint64_t n, uint64_t *keys)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(g->threads) if (n > 1)
    for (int64_t c = 0; c < (int64_t)n; ++c)
        draw_chunk(g, first + (uint64_t)c, keys + (uint64_t)c * TF_GEN_CHUNK * (uint64_t)g->words, NULL, NULL, NULL);
}

void tf_gen_draw_mode0(const tf_gen_ctx *g, uint64_t c, uint32_t *ix0) { draw_chunk(g, c, NULL, NULL, ix0, NULL); }

void tf_gen_draw_rest(const tf_gen_ctx *g, uint64_t c, const uint32_t *ix0, uint64_t *keys)
{
    draw_chunk(g, c, keys, NULL, NULL, ix0);
}

static inline uint64_t get_bits_w(const uint64_t *w, int pos, int bits)
{
    if (bits == 0) return 0;
    int word = pos >> 6, off = pos & 63;
    uint64_t v = w[word] >> off;
    if (off + bits > 64) v |= w[word + 1] << (64 - off);
    return bits == 64 ? v : v & ((1ULL << bits) - 1);
}

/* -1, 0, 1: key order of W-word keys (top word first). */
static inline int key_order(const uint64_t *a, const uint64_t *b, int W)
{
    for (int i = W - 1; i >= 0; --i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

/* A hash of a key, to sample cells independently of where they lie. */
static inline uint64_t key_hash(const uint64_t *key, int W)
{
    uint64_t h = 0x9E3779B97F4A7C15ULL;
    for (int w = 0; w < W; ++w) {
        h ^= key[w];
        h *= 0xBF58476D1CE4E5B9ULL;
        h ^= h >> 29;
    }
    return h;
}

tf_status tf_gen_draw_range(const tf_gen_ctx *g, uint64_t first, uint64_t n, const uint64_t *lo, const uint64_t *hi,
                            uint64_t sample_mask, int nseg, uint64_t **seg, uint64_t *seg_n, uint64_t *seg_cap)
{
    const int W = g->words, rw = W + 1;
    tf_status st = TF_OK;
    /* the mode-0 indices the range can hold: the others need no more than mode 0 */
    uint32_t range0[2] = {0, (uint32_t)(g->o->dims[0] - 1)};
    if (lo) range0[0] = (uint32_t)get_bits_w(lo, g->shift[0], g->bits[0]);
    if (hi) range0[1] = (uint32_t)get_bits_w(hi, g->shift[0], g->bits[0]);
    const uint32_t *r0 = (lo || hi) && g->bits[0] > 0 ? range0 : NULL;
    const uint64_t lo1 = lo ? lo[0] : 0, hi1 = hi ? hi[0] : 0; /* one-word keys */
#pragma omp parallel num_threads(nseg)
    {
        uint64_t *keys = NULL;
        tf_status mine = TF_ALLOC(keys, TF_GEN_CHUNK * (uint64_t)W, "generator candidates");
        for (int t = tf_thread_id(); mine == TF_OK && t < nseg; t += tf_thread_count()) {
            const uint64_t c0 = first + n * (uint64_t)t / (uint64_t)nseg;
            const uint64_t c1 = first + n * (uint64_t)(t + 1) / (uint64_t)nseg;
            for (uint64_t c = c0; mine == TF_OK && c < c1; ++c) {
                draw_chunk(g, c, keys, r0, NULL, NULL);
                if (seg_cap[t] - seg_n[t] < TF_GEN_CHUNK) { /* room for the whole chunk; small steps: the peak counts */
                    const uint64_t cap = seg_n[t] + TF_GEN_CHUNK + seg_cap[t] / 16;
                    mine = tf_realloc((void **)&seg[t], cap * (uint64_t)rw, sizeof(uint64_t),
                                      "generator candidates of this part");
                    if (mine != TF_OK) break;
                    seg_cap[t] = cap;
                }
                uint64_t *out = seg[t] + seg_n[t] * (uint64_t)rw, kept = 0;
                const uint64_t seq = c * TF_GEN_CHUNK;
                if (W == 1 && !sample_mask) { /* the common case, branch-light */
                    for (uint64_t k = 0; k < TF_GEN_CHUNK; ++k) {
                        const uint64_t key = keys[k];
                        out[2 * kept] = key;
                        out[2 * kept + 1] = seq + k;
                        kept += key >= lo1 && (!hi || key < hi1);
                    }
                } else {
                    for (uint64_t k = 0; k < TF_GEN_CHUNK; ++k) {
                        const uint64_t *key = keys + k * (uint64_t)W;
                        if ((lo && key_order(key, lo, W) < 0) || (hi && key_order(key, hi, W) >= 0)) continue;
                        if (sample_mask && (key_hash(key, W) & sample_mask)) continue;
                        uint64_t *r = out + kept++ * (uint64_t)rw;
                        for (int w = 0; w < W; ++w) r[w] = key[w];
                        r[W] = seq + k;
                    }
                }
                seg_n[t] += kept;
            }
        }
        tf_free(keys);
        if (mine != TF_OK) {
#pragma omp critical(tf_gen_draw_range)
            st = mine;
        }
    }
    return st;
}
