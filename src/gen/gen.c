/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_generate: synthetic sparse tensors with per-mode power-law skew.
 *
 * The candidate coordinates form one sequence, drawn in fixed chunks,
 * chunk c from its own random stream (gen_draw.c), so any number of
 * threads draws the same candidates. The tensor holds the first nnz
 * distinct coordinates of that sequence: the candidates are deduplicated
 * by a parallel radix sort of (key, sequence number) (gen_set.c), enough
 * of them being drawn up front for the expected duplicates and more in
 * later rounds if that was short; the keys first drawn come out in
 * canonical order. Values follow from the sorted coordinates (gen_values.c). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "gen/gen.h"

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

tf_status tf_gen_check_opts(const tf_gen_opts *o)
{
    if (o->order < TF_MIN_ORDER || o->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "generator: order %u is outside %d..%d", o->order, TF_MIN_ORDER,
                       TF_MAX_ORDER);
    for (uint32_t m = 0; m < o->order; ++m) {
        if (o->dims[m] == 0 || o->dims[m] > (1ULL << 32))
            return tf_fail(TF_ERR_RANGE, "generator: mode %u length %llu is outside 1..2^32", m + 1,
                           (unsigned long long)o->dims[m]);
        if (!(o->alpha[m] >= 0.0 && o->alpha[m] < 1.0))
            return tf_fail(TF_ERR_ARG, "generator: mode %u alpha %g is outside [0, 1)", m + 1,
                           o->alpha[m]);
    }
    if (o->nnz == 0) return tf_fail(TF_ERR_ARG, "generator: nnz must be at least 1");
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "generator: threads %d is negative (0: the default)", o->threads);
    uint64_t cells = saturating_product(o->dims, o->order);
    if (o->nnz > cells)
        return tf_fail(TF_ERR_RANGE,
                       "generator: nnz %llu is more than the %llu cells of the tensor (product of dims)",
                       (unsigned long long)o->nnz, (unsigned long long)cells);
    if (!(o->noise >= 0.0 && isfinite(o->noise)))
        return tf_fail(TF_ERR_ARG, "generator: noise %g must be finite and >= 0", o->noise);
    if (o->noise > 0 && o->rank == 0)
        return tf_fail(TF_ERR_ARG, "generator: noise needs a planted model (rank >= 1)");
    if (o->counts != 0.0 && !(o->counts >= 1.0 && o->counts <= 1e12))
        return tf_fail(TF_ERR_ARG, "generator: counts %g is outside 1..1e12 (the mean count; 0: real values)",
                       o->counts);
    if (o->counts != 0.0 && o->noise > 0)
        return tf_fail(TF_ERR_ARG, "generator: counts and noise do not combine (the counts are Poisson draws "
                                   "already)");
    return TF_OK;
}

tf_status tf_gen_ctx_init(tf_gen_ctx *g, const tf_gen_opts *o)
{
    memset(g, 0, sizeof *g);
    g->o = o;
    int total = 0;
    for (int m = (int)o->order - 1; m >= 0; --m) { /* last mode least significant */
        g->expo[m] = 1.0 / (1.0 - o->alpha[m]);
        g->bits[m] = bits_for(o->dims[m]);
        g->shift[m] = total;
        total += g->bits[m];
    }
    g->key_bits = total;
    g->words = total > 64 ? (total + 63) / 64 : 1;
    g->threads = tf_resolve_threads(o->threads);
    tf_status st[TF_MAX_ORDER];
#pragma omp parallel for schedule(dynamic, 1) num_threads(g->threads)
    for (int m = 0; m < (int)o->order; ++m)
        st[m] = tf_gen_perm_init(&g->perm[m], o->dims[m], o->seed, (uint32_t)m, TF_GEN_PERM_TABLE_MAX);
    for (uint32_t m = 0; m < o->order; ++m)
        if (st[m] != TF_OK) return tf_fail(st[m], "generator: no memory for the permutation of mode %u "
                                                  "(length %llu)", m + 1, (unsigned long long)o->dims[m]);
    return TF_OK;
}

void tf_gen_ctx_free(tf_gen_ctx *g)
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_gen_perm_free(&g->perm[m]);
}

/* An upper bound on sum_i p_i^2, p_i the probability that mode index i is
 * drawn (before the permutation): P(index < j) = (j/d)^(1-alpha). */
static double mode_collision(uint64_t d, double alpha)
{
    const double beta = 1.0 - alpha, dd = (double)d;
    const uint64_t K = d < 4096 ? d : 4096;
    double q = 0.0, prev = 0.0;
    for (uint64_t i = 0; i < K; ++i) {
        double f = pow((double)(i + 1) / dd, beta);
        q += (f - prev) * (f - prev);
        prev = f;
    }
    if (K < d) { /* concavity: p_i <= beta d^-beta i^(beta-1) for i >= 1 */
        const double c = beta * beta * pow(dd, -2.0 * beta), a2 = 2.0 * alpha, k = (double)K;
        const double tail = fabs(1.0 - a2) < 1e-9 ? log(dd / k) : (pow(dd, 1.0 - a2) - pow(k, 1.0 - a2)) / (1.0 - a2);
        q += c * (pow(k, -a2) + tail);
    }
    return q;
}

/* Most draws before giving up (rejection gets slow when the skewed
 * distribution has little mass left on unused cells: a clear message
 * instead of spinning), and most chunks a round. */
static uint64_t max_draws(const tf_gen_opts *o) { return 32 * o->nnz + (1ULL << 22); }
static uint64_t max_round(const tf_gen_opts *o)
{
    return 2 * (o->nnz > (1ULL << 23) ? o->nnz : (1ULL << 23)) / TF_GEN_CHUNK + 2;
}

/* Candidates of the first round: nnz plus the expected duplicates. Two
 * candidates coincide with probability Q = prod_m sum_i p_i^2, and n draws
 * lose at most n^2 Q / 2 to duplicates, so n = nnz + n^2 Q / 2 is enough
 * on average; a margin covers the spread, and at most 2 nnz are drawn
 * before looking (later rounds draw what is still missing). */
uint64_t tf_gen_first_round(const tf_gen_opts *o)
{
    double Q = 1.0, nnz = (double)o->nnz, n = nnz;
    for (uint32_t m = 0; m < o->order; ++m) Q *= mode_collision(o->dims[m], o->alpha[m]);
    for (int i = 0; i < 64; ++i) {
        double next = nnz + n * n * Q / 2.0;
        if (next > 2.0 * nnz) { n = 2.0 * nnz; break; }
        if (next - n < 1.0) { n = next; break; }
        n = next;
    }
    const double dup = n - nnz;
    n += 0.05 * dup + 4.0 * sqrt(dup) + nnz / 4096.0;
    const uint64_t chunks = (uint64_t)(n / (double)TF_GEN_CHUNK) + 1;
    return chunks < max_round(o) ? chunks : max_round(o);
}

tf_status tf_gen_next_round(const tf_gen_opts *o, uint64_t drawn, uint64_t distinct, uint64_t gained, uint64_t last,
                            uint64_t *chunks)
{
    const uint64_t nnz = o->nnz, most = max_draws(o);
    *chunks = 0;
    if (distinct >= nnz) return TF_OK;
    /* The acceptance rate only falls, so what is missing over this
     * round's rate underestimates the draws still needed: stop early
     * when even that is too many. */
    const double rate = (double)(gained ? gained : 1) / (double)last;
    const double projected = (double)(nnz - distinct) / rate;
    const uint64_t draws = drawn * TF_GEN_CHUNK;
    if ((double)draws + projected > (double)most)
        return tf_fail(TF_ERR_RANGE,
                       "generator: stopped with %llu of %llu distinct non-zeros after %llu draws: "
                       "rejection of duplicates is too slow because nnz is too close to the "
                       "number of cells the skew reaches (lower --nnz or --alpha)",
                       (unsigned long long)distinct, (unsigned long long)nnz, (unsigned long long)draws);
    uint64_t c = (uint64_t)(fmin(1.25 * projected, (double)(most - draws)) / (double)TF_GEN_CHUNK) + 1;
    *chunks = c > max_round(o) ? max_round(o) : c;
    return TF_OK;
}

/* Draws candidates until their set holds at least nnz distinct keys.
 * Where the buckets are top bits of mode 0 (all but tiny first modes),
 * each round is drawn as it is scattered (room for the mode-0 indices, 4
 * bytes a candidate); else into an array of keys first. The room for the
 * indices is handed back (*spare, *spare_n indices; else NULL): its pages
 * are touched already, and it can hold one of the tensor's index arrays. */
int tf_gen_draw_direct = 1;

static tf_status draw_distinct(const tf_gen_ctx *g, tf_gen_set *set, uint32_t **spare, uint64_t *spare_n)
{
    *spare = NULL;
    *spare_n = 0;
    uint64_t drawn = 0, chunks = tf_gen_first_round(g->o), cap = chunks;
    const int bucket_bits = tf_gen_set_bucket_bits(g, chunks * TF_GEN_CHUNK);
    const int direct = tf_gen_draw_direct && tf_gen_set_can_draw(g, bucket_bits);
    const uint64_t W = (uint64_t)g->words;
    uint32_t *ix0 = NULL;
    uint64_t *keys = NULL;
    tf_status st = direct ? TF_ALLOC(ix0, chunks * TF_GEN_CHUNK, "generator mode-0 indices")
                          : TF_ALLOC(keys, chunks * TF_GEN_CHUNK * W, "generator candidates");
    memset(set, 0, sizeof *set);
    while (st == TF_OK && chunks) {
        const uint64_t first = drawn * TF_GEN_CHUNK, n = chunks * TF_GEN_CHUNK, before = set->distinct;
        tf_gen_set more, *into = first == 0 ? set : &more;
        if (direct) {
            st = tf_gen_set_draw_build(g, drawn, chunks, ix0, bucket_bits, into);
        } else {
            tf_gen_draw(g, drawn, chunks, keys);
            st = tf_gen_set_build(g, keys, n, first, bucket_bits, into);
        }
        drawn += chunks;
        if (st == TF_OK && first != 0) st = tf_gen_set_merge(g, set, &more);
        if (st == TF_OK) st = tf_gen_next_round(g->o, drawn, set->distinct, set->distinct - before, n, &chunks);
        if (st == TF_OK && chunks > cap) {
            st = direct ? TF_REALLOC(ix0, chunks * TF_GEN_CHUNK, "generator mode-0 indices")
                        : TF_REALLOC(keys, chunks * TF_GEN_CHUNK * W, "generator candidates");
            cap = chunks;
        }
    }
    tf_free(keys);
    if (st != TF_OK) {
        tf_free(ix0);
        tf_gen_set_free(set);
        return st;
    }
    *spare = ix0;
    *spare_n = ix0 ? cap * TF_GEN_CHUNK : 0;
    return st;
}

tf_status tf_generate(const tf_gen_opts *o, tf_tensor *out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_generate: out is NULL");
    memset(out, 0, sizeof *out);
    if (!o) return tf_fail(TF_ERR_ARG, "tf_generate: o is NULL");
    TF_TRY(tf_gen_check_opts(o));
    tf_gen_ctx g;
    tf_gen_set set;
    memset(&set, 0, sizeof set);
    tf_status s = tf_gen_ctx_init(&g, o);
    if (s == TF_OK && o->nnz > (1ULL << 40))
        s = tf_fail(TF_ERR_NOMEM, "generator: nnz %llu needs more than 24 TB of candidates",
                    (unsigned long long)o->nnz);
    uint32_t *spare = NULL;
    uint64_t spare_n = 0;
    if (s == TF_OK) s = draw_distinct(&g, &set, &spare, &spare_n);
    if (s == TF_OK) s = tf_tensor_alloc(out, o->order, o->dims, o->nnz);
    if (s == TF_OK && spare_n >= o->nnz) { /* the last mode's indices on touched pages (the new array never was) */
        tf_free(out->ind[o->order - 1]);
        out->ind[o->order - 1] = spare;
        spare = NULL;
    }
    tf_free(spare);
    if (s == TF_OK) s = tf_gen_set_take(&g, &set, out);
    tf_gen_set_free(&set);
    tf_gen_ctx_free(&g);
    if (s == TF_OK) s = tf_gen_values(o, out);
    if (s != TF_OK) tf_tensor_free(out);
    return s;
}
