/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_generate: synthetic sparse tensors with per-mode power-law skew.
 *
 * Candidates are drawn in fixed-size chunks, chunk c from its own random
 * stream, so any number of threads produces the same candidate sequence.
 * Chunks are generated in parallel, a batch at a time, and inserted in
 * sequence order into an open-addressing hash set of packed coordinates;
 * the first nnz distinct candidates are kept. The result is sorted. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/radix.h"
#include "core/rng.h"
#include "gen/gen.h"

#define CHUNK 16384ULL           /* candidates per random stream        */
#define BATCH_CHUNKS 64ULL       /* chunks generated per parallel batch */
#define EMPTY_FLAG (1ULL << 63)  /* set in the top word of a used slot  */

typedef struct gen_ctx {
    const tf_gen_opts *o;
    tf_gen_perm perm[TF_MAX_ORDER];
    double expo[TF_MAX_ORDER];   /* 1/(1-alpha)                          */
    int bits[TF_MAX_ORDER];      /* bits of mode m in the packed key     */
    int shift[TF_MAX_ORDER];     /* bit position of mode m               */
    int words;                   /* 64-bit words per packed key          */
    uint64_t *slots;             /* hash set: cap * words, 0 = empty     */
    uint64_t cap_mask;
    int cap_bits;
} gen_ctx;

static int bits_for(uint64_t n) /* bits to hold 0..n-1 */
{
    int b = 0;
    while (b < 64 && ((n - 1) >> b)) ++b;
    return b;
}

static uint64_t saturating_product(const uint64_t *d, uint32_t n)
{
    uint64_t p = 1;
    for (uint32_t m = 0; m < n; ++m) {
        if (d[m] != 0 && p > UINT64_MAX / d[m]) return UINT64_MAX;
        p *= d[m];
    }
    return p;
}

static tf_status check_opts(const tf_gen_opts *o)
{
    if (o->order < TF_MIN_ORDER || o->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "generator: order %u is outside %d..%d", o->order, TF_MIN_ORDER,
                       TF_MAX_ORDER);
    for (uint32_t m = 0; m < o->order; ++m) {
        if (o->dims[m] == 0 || o->dims[m] > (1ULL << 32))
            return tf_fail(TF_ERR_RANGE, "generator: mode %u length %llu is outside 1..2^32", m + 1,
                           (unsigned long long)o->dims[m]);
        if (!(o->alpha[m] >= 0.0 && o->alpha[m] < 1.0))
            return tf_fail(TF_ERR_ARG, "generator: mode %u alpha %g is outside [0,1)", m + 1,
                           o->alpha[m]);
    }
    if (o->nnz == 0) return tf_fail(TF_ERR_ARG, "generator: nnz must be at least 1");
    uint64_t cells = saturating_product(o->dims, o->order);
    if (o->nnz > cells)
        return tf_fail(TF_ERR_RANGE,
                       "generator: nnz %llu is more than the %llu cells of the tensor (product of dims)",
                       (unsigned long long)o->nnz, (unsigned long long)cells);
    if (!(o->noise >= 0.0 && isfinite(o->noise)))
        return tf_fail(TF_ERR_ARG, "generator: noise %g must be finite and >= 0", o->noise);
    if (o->noise > 0 && o->rank == 0)
        return tf_fail(TF_ERR_ARG, "generator: noise needs a planted model (rank >= 1)");
    return TF_OK;
}

static tf_status ctx_init(gen_ctx *g, const tf_gen_opts *o)
{
    memset(g, 0, sizeof *g);
    g->o = o;
    int total = 0;
    for (int m = (int)o->order - 1; m >= 0; --m) { /* last mode least significant */
        g->expo[m] = 1.0 / (1.0 - o->alpha[m]);
        g->bits[m] = bits_for(o->dims[m]);
        g->shift[m] = total;
        total += g->bits[m];
        TF_TRY(tf_gen_perm_init(&g->perm[m], o->dims[m], o->seed, (uint32_t)m, TF_GEN_PERM_TABLE_MAX));
    }
    g->words = total / 64 + 1; /* always leaves bit 63 of the top word for the flag */
    /* load factor <= 0.7 */
    if (o->nnz > (1ULL << 40))
        return tf_fail(TF_ERR_NOMEM, "generator: nnz %llu needs a hash set of more than %d TB",
                       (unsigned long long)o->nnz, 12 * g->words);
    uint64_t want = o->nnz + o->nnz / 7 * 3 + 16;
    g->cap_bits = 4;
    while ((1ULL << g->cap_bits) < want) ++g->cap_bits;
    g->cap_mask = (1ULL << g->cap_bits) - 1;
    return TF_CALLOC(g->slots, (1ULL << g->cap_bits) * (uint64_t)g->words, "generator hash set");
}

static void ctx_free(gen_ctx *g)
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_gen_perm_free(&g->perm[m]);
    tf_free(g->slots);
}

static inline void put_bits(uint64_t *w, int pos, int bits, uint64_t v)
{
    if (bits == 0) return;
    int word = pos >> 6, off = pos & 63;
    w[word] |= v << off;
    if (off + bits > 64) w[word + 1] |= v >> (64 - off);
}

static inline uint64_t get_bits(const uint64_t *w, int pos, int bits)
{
    if (bits == 0) return 0;
    int word = pos >> 6, off = pos & 63;
    uint64_t v = w[word] >> off;
    if (off + bits > 64) v |= w[word + 1] << (64 - off);
    return bits == 64 ? v : v & ((1ULL << bits) - 1);
}

/* Index of one mode: perm[floor(d * u^(1/(1-alpha)))]. */
static inline uint64_t draw_index(const gen_ctx *g, uint32_t m, tf_rng *r)
{
    const double d = (double)g->o->dims[m];
    double u = tf_rng_uniform(r);
    if (g->expo[m] != 1.0) u = pow(u, g->expo[m]);
    uint64_t i = (uint64_t)(d * u);
    if (i >= g->o->dims[m]) i = g->o->dims[m] - 1;
    return tf_gen_perm_apply(&g->perm[m], i);
}

/* Fills keys (CHUNK * words) with the packed candidates of chunk c. */
static void gen_chunk(const gen_ctx *g, uint64_t c, uint64_t *keys)
{
    tf_rng r;
    tf_rng_seed(&r, tf_gen_stream_seed(g->o->seed, TF_GEN_TAG_COORD, c));
    const int W = g->words;
    memset(keys, 0, CHUNK * (uint64_t)W * sizeof *keys);
    for (uint64_t k = 0; k < CHUNK; ++k) {
        uint64_t *w = keys + k * (uint64_t)W;
        for (uint32_t m = 0; m < g->o->order; ++m) put_bits(w, g->shift[m], g->bits[m], draw_index(g, m, &r));
        w[W - 1] |= EMPTY_FLAG;
    }
}

/* Home slot: Fibonacci hashing (top bits of a multiplicative hash, which
 * depend on every key bit). */
static inline uint64_t home_slot(const gen_ctx *g, const uint64_t *w)
{
    uint64_t h = w[0] * 0x9E3779B97F4A7C15ULL;
    for (int i = 1; i < g->words; ++i) h = ((h ^ (h >> 32)) ^ w[i]) * 0x9E3779B97F4A7C15ULL;
    return h >> (64 - g->cap_bits);
}

/* Inserts key if absent (linear probing); returns 1 if it was new. */
static inline int set_insert(gen_ctx *g, const uint64_t *key)
{
    const int W = g->words;
    for (uint64_t s = home_slot(g, key);; s = (s + 1) & g->cap_mask) {
        uint64_t *slot = g->slots + s * (uint64_t)W;
        if (slot[W - 1] == 0) {
            memcpy(slot, key, (size_t)W * sizeof *slot);
            return 1;
        }
        if (W == 1 ? slot[0] == key[0] : !memcmp(slot, key, (size_t)W * sizeof *slot)) return 0;
    }
}

/* Inserts the candidates of one batch in sequence order until *count
 * reaches nnz. */
static void insert_batch(gen_ctx *g, const uint64_t *keys, uint64_t n, uint64_t nnz, uint64_t *count)
{
    const int W = g->words;
    const uint64_t PF = 16; /* prefetch distance: hides the cache miss per insert */
    for (uint64_t k = 0; k < n && *count < nnz; ++k) {
        if (k + PF < n)
            __builtin_prefetch(g->slots + home_slot(g, keys + (k + PF) * (uint64_t)W) * (uint64_t)W, 1);
        *count += (uint64_t)set_insert(g, keys + k * (uint64_t)W);
    }
}

/* Draws candidates until the hash set holds nnz distinct coordinates. */
static tf_status draw_coordinates(gen_ctx *g, uint64_t nnz)
{
    /* Rejection gets slow when the skewed distribution has little mass left
     * on unused cells; give up with a clear message instead of spinning. */
    const uint64_t max_draws = 32 * nnz + (1ULL << 22);
    uint64_t *keys = NULL;
    TF_TRY(TF_ALLOC(keys, CHUNK * BATCH_CHUNKS * (uint64_t)g->words, "generator candidates"));
    uint64_t count = 0, draws = 0, projected = 0;
    for (uint64_t first_chunk = 0, nchunks = 0; count < nnz; first_chunk += nchunks) {
        if (draws + projected > max_draws) {
            tf_free(keys);
            return tf_fail(TF_ERR_RANGE,
                           "generator: stopped with %llu of %llu distinct non-zeros after %llu draws: "
                           "rejection of duplicates is too slow because nnz is too close to the "
                           "number of cells the skew reaches (lower --nnz or --alpha)",
                           (unsigned long long)count, (unsigned long long)nnz,
                           (unsigned long long)draws);
        }
        /* Batch size only decides how far ahead we generate; the candidate
         * sequence (chunk c from stream c) stays the same. */
        uint64_t need = (nnz - count) + (nnz - count) / 4;
        nchunks = need / CHUNK + 1 < BATCH_CHUNKS ? need / CHUNK + 1 : BATCH_CHUNKS;
#pragma omp parallel for schedule(dynamic, 1) if (nchunks > 1)
        for (int64_t c = 0; c < (int64_t)nchunks; ++c)
            gen_chunk(g, first_chunk + (uint64_t)c, keys + (uint64_t)c * CHUNK * (uint64_t)g->words);
        uint64_t before = count;
        insert_batch(g, keys, nchunks * CHUNK, nnz, &count);
        draws += nchunks * CHUNK;
        /* The acceptance rate only falls, so remaining / rate underestimates
         * the draws still needed: stop early when even that is too many. */
        double rate = (double)(count > before ? count - before : 1) / (double)(nchunks * CHUNK);
        projected = (uint64_t)fmin((double)(nnz - count) / rate, 1e19);
    }
    tf_free(keys);
    return TF_OK;
}

/* Moves the used slots of the hash set to its front (nnz keys, flag cleared). */
static void compact_set(gen_ctx *g)
{
    const int W = g->words;
    const uint64_t cap = g->cap_mask + 1;
    uint64_t w = 0;
    for (uint64_t s = 0; s < cap; ++s) {
        uint64_t *slot = g->slots + s * (uint64_t)W;
        if (slot[W - 1] == 0) continue;
        slot[W - 1] &= ~EMPTY_FLAG;
        if (w != s) memcpy(g->slots + w * (uint64_t)W, slot, (size_t)W * sizeof *slot);
        ++w;
    }
}

static void decode(const gen_ctx *g, const uint64_t *key, tf_tensor *t, uint64_t at)
{
    for (uint32_t m = 0; m < t->order; ++m)
        t->ind[m][at] = (uint32_t)get_bits(key, g->shift[m], g->bits[m]);
}

/* Fills t's indices in canonical order from the nnz distinct keys. Mode 0
 * holds the most significant bits, so with one-word keys the numeric order
 * is the canonical one and sorting the keys is enough. */
static tf_status sorted_coordinates(gen_ctx *g, tf_tensor *t)
{
    const int64_t n = (int64_t)t->nnz;
    const int W = g->words;
    compact_set(g);
    if (W == 1) {
        uint64_t *perm = NULL;
        int key_bits = 0;
        for (uint32_t m = 0; m < t->order; ++m) key_bits += g->bits[m];
        TF_TRY(tf_radix_order_u64(g->slots, t->nnz, key_bits, &perm));
#pragma omp parallel for schedule(static) if (n > 65536)
        for (int64_t k = 0; k < n; ++k) decode(g, g->slots + perm[k], t, (uint64_t)k);
        tf_free(perm);
        return TF_OK;
    }
#pragma omp parallel for schedule(static) if (n > 65536)
    for (int64_t k = 0; k < n; ++k) decode(g, g->slots + (uint64_t)k * (uint64_t)W, t, (uint64_t)k);
    memset(t->vals, 0, t->nnz * sizeof *t->vals); /* permuted along with the indices */
    return tf_tensor_sort(t, NULL);
}

tf_status tf_generate(const tf_gen_opts *o, tf_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (!o) return tf_fail(TF_ERR_ARG, "tf_generate: no options");
    TF_TRY(check_opts(o));
    gen_ctx g;
    tf_status s = ctx_init(&g, o);
    if (s == TF_OK) s = tf_tensor_alloc(out, o->order, o->dims, o->nnz);
    if (s == TF_OK) s = draw_coordinates(&g, o->nnz);
    if (s == TF_OK) s = sorted_coordinates(&g, out);
    ctx_free(&g);
    if (s == TF_OK) s = tf_gen_values(o, out);
    if (s != TF_OK) tf_tensor_free(out);
    return s;
}
