/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_generate_part: the ranks of MPI_COMM_WORLD generate tf_generate's
 * tensor together, each holding only its part [nnz p/P, nnz (p+1)/P) of the
 * canonical non-zeros, bit for bit the whole's there.
 *
 * 1. Key ranges: the ranks draw the first round's candidates (its first
 *    sixteenth when few duplicates are expected) between them and keep a sample of cells (a hash of the key);
 *    every rank gets the sample, and its distinct keys' quantiles cut the
 *    keys into P ranges of about as many distinct keys (within ~1 %).
 * 2. The ranks draw the candidate sequence in the rounds tf_generate
 *    draws: each rank all of it, keeping the candidates (key, sequence
 *    number) of its key range (whole: ranks of one host), or each a share of
 *    every piece of a round, in rank order, sending every candidate to the
 *    rank of its key range (share). Either way a rank's records are in
 *    sequence order, and its set (gen_set.c) keeps each distinct key with its
 *    first sequence number. The rounds end when the distinct keys summed over
 *    the ranks reach nnz.
 * 3. The whole keeps the keys first drawn at sequence numbers <= last, the
 *    nnz-th first sequence number: the per-chunk counts summed over the
 *    ranks find its chunk, the chunk's bitmaps (disjoint over the ranks:
 *    a candidate has one key) OR-ed find it in the chunk.
 * 4. Each rank writes its kept coordinates (in key order: a canonical
 *    range) into its part's arrays; what lies outside its part widened to
 *    whole blocks of values (TF_GEN_VALUE_BLOCK: each block's random streams
 *    and sums are the whole's) moves to the ranks whose widened parts hold
 *    it (one exchange, neighbours mostly); the block sums are summed over
 *    the ranks in block order, as one process adds them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/environment.h"
#include "core/error.h"
#include "core/parallel.h"
#include "gen/gen.h"
#include "seams/dist.h"

#define SAMPLE_TARGET (1ULL << 16) /* sampled candidates of the pilot          */
#define PIECE_CHUNKS 64ULL        /* most chunks a rank draws per exchange     */
#define PILOT_DIV 16               /* the pilot: the first round's first 1/16 (sparse) */
#define VB TF_GEN_VALUE_BLOCK

/* TF_BUILD_REPORT=1: seconds of step 2's parts, summed over its rounds (main thread only). */
static double t_draw, t_scatter, t_move, t_set;

static uint64_t cut(uint64_t nnz, uint64_t p, uint64_t P) { return (uint64_t)((unsigned __int128)nnz * p / P); }

/* The non-zeros [e0, e1) rank q holds while the values are made: its part
 * widened to whole blocks of values. */
static void widened(uint64_t nnz, uint64_t q, uint64_t P, uint64_t *e0, uint64_t *e1)
{
    const uint64_t k0 = cut(nnz, q, P), k1 = cut(nnz, q + 1, P);
    if (k1 == k0) {
        *e0 = *e1 = k0;
        return;
    }
    *e0 = k0 / VB * VB;
    *e1 = (k1 + VB - 1) / VB * VB;
    if (*e1 > nnz) *e1 = nnz;
}

/* The last error, which every rank has alike, marked so (rank 0 says it). */
static tf_status shared(tf_status s)
{
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", tf_last_error());
    return tf_fail_shared(s, "%s", msg);
}

static int key_cmp_w(const uint64_t *a, const uint64_t *b, int W)
{
    for (int i = W - 1; i >= 0; --i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int sample_words; /* qsort's comparison has no user pointer */
static int cmp_rec(const void *a, const void *b) { return key_cmp_w(a, b, sample_words); }

typedef struct segs {
    int n;
    uint64_t *p[256], len[256], cap[256];
} segs;

static void segs_free(segs *s)
{
    for (int t = 0; t < s->n; ++t) tf_free(s->p[t]);
    memset(s, 0, sizeof *s);
}

static void segs_init(segs *s, int threads, uint64_t expect, int rw)
{
    memset(s, 0, sizeof *s);
    s->n = threads < 256 ? threads : 256;
    for (int t = 0; t < s->n; ++t) {
        s->cap[t] = expect / (uint64_t)s->n + 1024;
        if (TF_ALLOC(s->p[t], s->cap[t] * (uint64_t)rw, "generator candidates of this part") != TF_OK) s->cap[t] = 0;
    }
}

/* Step 1: the P - 1 keys that cut the key space (splits[(r-1) W ..], r = 1..P-1). */
static tf_status key_ranges(const tf_gen_ctx *g, const tf_dist *d, uint64_t first_round, uint64_t *splits)
{
    const int W = g->words, rw = W + 1, P = d->size, p = d->rank;
    /* Few duplicates expected (a first round under 1.1 nnz): a sixteenth of it, and the cut is
     * within ~1 % of even (5M skewed non-zeros on 3 ranks: 0.3 % from the whole round, at 30x
     * the time). Many (cells near saturation): the sample of a prefix over-weights the heavy
     * cells (a rank got 2.3x its share), so the whole round. */
    if ((double)first_round * (double)TF_GEN_CHUNK < 1.1 * (double)g->o->nnz)
        first_round = first_round / PILOT_DIV > 0 ? first_round / PILOT_DIV : 1;
    const uint64_t draws = first_round * TF_GEN_CHUNK;
    uint64_t mask = 0;
    while ((draws >> 1) / (mask + 1) >= SAMPLE_TARGET) mask = 2 * mask + 1;
    const uint64_t c0 = first_round * (uint64_t)p / (uint64_t)P, c1 = first_round * (uint64_t)(p + 1) / (uint64_t)P;
    segs s;
    segs_init(&s, g->threads, (c1 - c0) * TF_GEN_CHUNK / (mask + 1) + 1024, rw);
    tf_status st = tf_gen_draw_range(g, c0, c1 - c0, NULL, NULL, mask, s.n, s.p, s.len, s.cap);
    uint64_t mine = 0;
    for (int t = 0; t < s.n; ++t) mine += s.len[t];
    uint64_t *send = NULL, *send_n = NULL, *recv = NULL, total = 0;
    if (st == TF_OK) st = TF_ALLOC(send, (uint64_t)P * (mine ? mine : 1) * rw, "generator key sample");
    if (st == TF_OK) st = TF_ALLOC(send_n, (uint64_t)P, "generator key sample");
    if (st == TF_OK) {
        uint64_t at = 0;
        for (int q = 0; q < P; ++q) {
            send_n[q] = mine;
            for (int t = 0; t < s.n; ++t) {
                memcpy(send + at, s.p[t], s.len[t] * (uint64_t)rw * sizeof(uint64_t));
                at += s.len[t] * (uint64_t)rw;
            }
        }
    }
    segs_free(&s);
    if (st == TF_OK)
        st = d->alltoall_records(send, send_n, (uint32_t)(rw * sizeof(uint64_t)), d->round_bytes, (void **)&recv,
                                 &total);
    tf_free(send);
    tf_free(send_n);
    if (st != TF_OK) {
        tf_free(recv);
        return st;
    }
    sample_words = W;
    qsort(recv, total, (size_t)rw * sizeof(uint64_t), cmp_rec);
    uint64_t distinct = 0;
    for (uint64_t k = 0; k < total; ++k)
        if (k == 0 || key_cmp_w(recv + k * rw, recv + (distinct - 1) * rw, W))
            memmove(recv + distinct++ * rw, recv + k * rw, (size_t)rw * sizeof(uint64_t));
    for (int r = 1; r < P; ++r) {
        uint64_t *sp = splits + (uint64_t)(r - 1) * W;
        if (distinct) memcpy(sp, recv + distinct * (uint64_t)r / (uint64_t)P * rw, (size_t)W * sizeof(uint64_t));
        else memset(sp, 0, (size_t)W * sizeof(uint64_t)); /* no sample: rank P-1 takes all, the exchange evens it */
    }
    tf_free(recv);
    return TF_OK;
}

/* The rank of the key range holding key: the splits at or below it. */
static int owner_of_key(const uint64_t *key, const uint64_t *splits, int P, int W)
{
    int lo = 0, hi = P - 1; /* the answer is in [lo, hi] */
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2; /* split mid is rank mid's lower bound */
        if (key_cmp_w(key, splits + (uint64_t)(mid - 1) * W, W) >= 0) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* A rank's share of a piece of a round of `chunks` chunks: 1/64 of its
 * share of the round (44 B per candidate of buffers in draw_shared: ~2 %
 * of the peak), at most PIECE_CHUNKS chunks. */
static uint64_t piece_share(uint64_t chunks, int P)
{
    const uint64_t m = chunks / (64 * (uint64_t)P);
    return m < 1 ? 1 : m > PIECE_CHUNKS ? PIECE_CHUNKS : m;
}

/* The candidates of chunks first .. first+chunks-1 in this rank's key range,
 * in sequence order, as records (key, sequence number) in *out (tf_alloc,
 * *out_n of them): the ranks draw each piece of the round between them (a
 * share each, in rank order) and send every candidate to its range's rank. */
static tf_status draw_shared(const tf_gen_ctx *g, const tf_dist *d, const uint64_t *splits, uint64_t first,
                             uint64_t chunks, uint64_t **out, uint64_t *out_n)
{
    const int W = g->words, rw = W + 1, P = d->size, p = d->rank, T = g->threads;
    const uint64_t m = piece_share(chunks, P);
    const uint64_t piece = m * (uint64_t)P, most = (m + 1) * TF_GEN_CHUNK;
    uint64_t *keys = NULL, *send = NULL, *hist = NULL, *send_n = NULL, *recs = NULL, n = 0;
    int32_t *own = NULL;
    uint64_t cap = chunks * TF_GEN_CHUNK / (uint64_t)P * 41 / 40 + TF_GEN_CHUNK; /* grown if short */
    tf_status st = TF_ALLOC(keys, most * (uint64_t)W, "generator candidates");
    if (st == TF_OK) st = TF_ALLOC(send, most * (uint64_t)rw, "generator candidates to send");
    if (st == TF_OK) st = TF_ALLOC(own, most, "generator candidates' ranks");
    if (st == TF_OK) st = TF_ALLOC(hist, (uint64_t)T * (uint64_t)P, "generator send counts");
    if (st == TF_OK) st = TF_ALLOC(send_n, (uint64_t)P, "generator send counts");
    if (st == TF_OK) st = TF_ALLOC(recs, cap * (uint64_t)rw, "generator candidates of this part");
    for (uint64_t ps = first; st == TF_OK && ps < first + chunks; ps += piece) {
        const uint64_t len = first + chunks - ps < piece ? first + chunks - ps : piece;
        const uint64_t c0 = ps + len * (uint64_t)p / (uint64_t)P, c1 = ps + len * (uint64_t)(p + 1) / (uint64_t)P;
        const uint64_t nk = (c1 - c0) * TF_GEN_CHUNK;
        double ta = tf_wtime();
        tf_gen_draw(g, c0, c1 - c0, keys);
        t_draw += tf_wtime() - ta;
        ta = tf_wtime();
#pragma omp parallel num_threads(T)
        {
            const int t = tf_thread_id(), nt = tf_thread_count();
            const uint64_t lo = nk * (uint64_t)t / (uint64_t)nt, hi = nk * (uint64_t)(t + 1) / (uint64_t)nt;
            uint64_t *h = hist + (uint64_t)t * (uint64_t)P;
            memset(h, 0, (size_t)P * sizeof *h);
            for (uint64_t k = lo; k < hi; ++k) h[own[k] = owner_of_key(keys + k * (uint64_t)W, splits, P, W)]++;
#pragma omp barrier
#pragma omp single
            { /* rank-major, thread-minor: each rank's block in sequence order */
                uint64_t run = 0;
                for (int q = 0; q < P; ++q) {
                    const uint64_t at = run;
                    for (int u = 0; u < nt; ++u) {
                        const uint64_t c = hist[(uint64_t)u * (uint64_t)P + (uint64_t)q];
                        hist[(uint64_t)u * (uint64_t)P + (uint64_t)q] = run;
                        run += c;
                    }
                    send_n[q] = run - at;
                }
            }
            for (uint64_t k = lo; k < hi; ++k) {
                uint64_t *r = send + (uint64_t)rw * h[own[k]]++;
                for (int w = 0; w < W; ++w) r[w] = keys[k * (uint64_t)W + (uint64_t)w];
                r[W] = c0 * TF_GEN_CHUNK + k;
            }
        }
        uint64_t *recv = NULL, got = 0;
        t_scatter += tf_wtime() - ta;
        ta = tf_wtime();
        st = d->alltoall_records(send, send_n, (uint32_t)((size_t)rw * sizeof(uint64_t)), d->round_bytes,
                                 (void **)&recv, &got);
        if (st == TF_OK && n + got > cap) {
            cap = n + got + cap / 16; /* small steps: the peak counts */
            st = TF_REALLOC(recs, cap * (uint64_t)rw, "generator candidates of this part");
        }
        if (st == TF_OK && got) memcpy(recs + n * (uint64_t)rw, recv, got * (uint64_t)rw * sizeof(uint64_t));
        n += got;
        tf_free(recv);
        t_move += tf_wtime() - ta;
    }
    tf_free(keys);
    tf_free(send);
    tf_free(own);
    tf_free(hist);
    tf_free(send_n);
    if (st != TF_OK) {
        tf_free(recs);
        recs = NULL;
        n = 0;
    }
    *out = recs;
    *out_n = n;
    return st;
}

/* One round, chunks [first, first + chunks): this rank's candidates, as
 * segments of records in turn (sequence order), into its set. */
static tf_status round_into_set(const tf_gen_ctx *g, const tf_dist *d, const uint64_t *splits, uint64_t first,
                                uint64_t chunks, int whole, int bucket_bits, tf_gen_set *set)
{
    const int W = g->words, rw = W + 1, P = d->size, p = d->rank;
    const uint64_t draws = (first + chunks) * TF_GEN_CHUNK;
    uint64_t *recs = NULL, n = 0;
    segs sg;
    tf_status st;
    if (whole) { /* the whole round drawn here, this rank's key range kept */
        segs_init(&sg, g->threads, chunks * TF_GEN_CHUNK / (uint64_t)P * 41 / 40, rw);
        const double ta = tf_wtime();
        st = tf_gen_draw_range(g, first, chunks, p > 0 ? splits + (uint64_t)(p - 1) * W : NULL,
                               p < P - 1 ? splits + (uint64_t)p * W : NULL, 0, sg.n, sg.p, sg.len, sg.cap);
        t_draw += tf_wtime() - ta;
    } else { /* a share drawn here, every candidate sent to its key's rank: one segment per thread */
        st = draw_shared(g, d, splits, first, chunks, &recs, &n);
        memset(&sg, 0, sizeof sg);
        sg.n = g->threads < 256 ? g->threads : 256;
        for (int t = 0; t < sg.n; ++t) {
            const uint64_t a = n * (uint64_t)t / (uint64_t)sg.n, b = n * (uint64_t)(t + 1) / (uint64_t)sg.n;
            sg.p[t] = recs + a * (uint64_t)rw;
            sg.len[t] = b - a;
        }
    }
    const double ta = tf_wtime();
    tf_gen_set more;
    if (st == TF_OK) st = tf_gen_set_build_segments(g, sg.p, sg.len, sg.n, draws, bucket_bits, set->recs ? &more : set);
    if (whole) segs_free(&sg);
    tf_free(recs);
    if (st == TF_OK && set->draws < draws) st = tf_gen_set_merge(g, set, &more);
    t_set += tf_wtime() - ta;
    return st;
}

/* Step 2: this rank's distinct candidates, until the ranks' sum reaches nnz. */
static tf_status draw_part(const tf_gen_ctx *g, const tf_dist *d, const uint64_t *splits, uint64_t chunks,
                           int whole, tf_gen_set *set, uint64_t *drawn_out)
{
    const int P = d->size;
    const int bucket_bits = tf_gen_set_bucket_bits(g, chunks * TF_GEN_CHUNK / (uint64_t)P);
    uint64_t drawn = 0, total = 0;
    tf_status st = TF_OK;
    memset(set, 0, sizeof *set);
    while (st == TF_OK && chunks) {
        st = round_into_set(g, d, splits, drawn, chunks, whole, bucket_bits, set);
        drawn += chunks;
        double sum = st == TF_OK ? (double)set->distinct : 0.0; /* exact below 2^53 */
        tf_status sd = d->allreduce_sum(&sum, 1);
        if (st == TF_OK) st = sd;
        if (st != TF_OK) break;
        const uint64_t before = total;
        total = (uint64_t)sum;
        st = tf_gen_next_round(g->o, drawn, total, total - before, chunks * TF_GEN_CHUNK, &chunks);
        if (st != TF_OK) st = shared(st); /* from the ranks' sums: on every rank */
    }
    *drawn_out = drawn;
    if (st != TF_OK) tf_gen_set_free(set);
    return st;
}

/* Step 3: the last sequence number kept. */
static tf_status threshold(const tf_gen_ctx *g, const tf_dist *d, tf_gen_set *set, uint64_t drawn,
                           uint64_t *last)
{
    const uint64_t nnz = g->o->nnz;
    uint64_t *cnt = NULL, before = 0, bitmap[TF_GEN_CHUNK / 64];
    double *sum = NULL;
    TF_TRY(TF_ALLOC(cnt, drawn ? drawn : 1, "generator chunk counts"));
    tf_status st = TF_ALLOC(sum, drawn ? drawn : 1, "generator chunk counts");
    if (st == TF_OK) st = tf_gen_set_chunk_counts(g, set, drawn, cnt);
    if (st == TF_OK) {
        for (uint64_t q = 0; q < drawn; ++q) sum[q] = (double)cnt[q];
        st = d->allreduce_sum(sum, drawn);
        for (uint64_t q = 0; q < drawn; ++q) cnt[q] = (uint64_t)sum[q];
    }
    const uint64_t chunk = tf_gen_threshold_chunk(cnt, drawn, nnz, &before);
    tf_free(cnt);
    tf_free(sum);
    TF_TRY(st);
    tf_gen_set_chunk_bits(g, set, chunk, bitmap);
    TF_TRY(d->allreduce_u64(bitmap, TF_GEN_CHUNK / 64, TF_RANKS_XOR)); /* disjoint bits: XOR is OR */
    *last = tf_gen_threshold_last(bitmap, chunk, nnz - before);
    if (*last == UINT64_MAX)
        return tf_fail_shared(TF_ERR_ARG, "generator: the ranks' distinct candidates do not reach %llu",
                              (unsigned long long)nnz);
    return TF_OK;
}

/* The sums of the whole's blocks from every rank's (its part's blocks). */
typedef struct sums_ctx {
    const tf_dist *d;
    uint64_t k0, k1, nnz;
} sums_ctx;

static tf_status whole_sums(void *user, const double *part, uint64_t first_block, uint64_t nblocks, double *sum,
                            double *sumsq)
{
    const sums_ctx *c = user;
    const uint64_t total = (c->nnz + VB - 1) / VB;
    double *all = NULL;
    TF_TRY(TF_CALLOC(all, 2 * (total ? total : 1), "generator block sums"));
    for (uint64_t b = 0; b < nblocks; ++b) {
        const uint64_t gb = first_block + b, at = gb * VB;
        if (gb < total && at >= c->k0 && at < c->k1) { /* a block is the holder's of its first non-zero */
            all[2 * gb] = part[2 * b];
            all[2 * gb + 1] = part[2 * b + 1];
        }
    }
    tf_status st = c->d->allreduce_sum(all, 2 * total);
    *sum = *sumsq = 0.0;
    for (uint64_t b = 0; st == TF_OK && b < total; ++b) {
        *sum += all[2 * b];
        *sumsq += all[2 * b + 1];
    }
    tf_free(all);
    return st;
}

/* Step 4: this rank's kept coordinates, positions [s, s + n) of the whole
 * (the set's key range), assembled into out as the widened part [e0, e1)
 * (its positions). The set writes them straight into out's index arrays,
 * laid over the union of the two ranges; only what lies outside [e0, e1)
 * moves to the ranks whose widened parts hold it (neighbours: the key cut
 * is within ~1 % of the position cut, plus the halos of the value blocks),
 * and what this rank lacks of [e0, e1) comes from them. n_of[q]: rank q's
 * kept count. */
static tf_status exchange(const tf_gen_ctx *g, const tf_gen_set *set, uint64_t last, const tf_dist *d,
                          const uint64_t *n_of, tf_tensor *out, uint64_t *e0_out)
{
    const tf_gen_opts *o = g->o;
    const uint64_t P = (uint64_t)d->size, p = (uint64_t)d->rank, nnz = o->nnz, order = o->order;
    const uint32_t rec = (uint32_t)(order * sizeof(uint32_t));
    uint64_t s = 0, e0, e1;
    for (uint64_t q = 0; q < p; ++q) s += n_of[q];
    const uint64_t n = n_of[p];
    widened(nnz, p, P, &e0, &e1);
    const uint64_t u0 = s < e0 ? s : e0, u1 = s + n > e1 ? s + n : e1; /* the union, out's room */
    memset(out, 0, sizeof *out);
    out->order = o->order;
    out->nnz = u1 - u0;
    memcpy(out->dims, o->dims, sizeof out->dims);
    tf_status st = TF_OK;
    for (uint64_t m = 0; st == TF_OK && m < order; ++m)
        st = TF_ALLOC(out->ind[m], out->nnz ? out->nnz : 1, "tensor indices");
    uint32_t *at[TF_MAX_ORDER];
    for (uint64_t m = 0; m < order; ++m) at[m] = out->ind[m] ? out->ind[m] + (s - u0) : NULL;
    uint64_t got = 0;
    if (st == TF_OK) st = tf_gen_set_write(g, set, last, at, 1, n, &got);
    if (st == TF_OK && got != n)
        st = tf_fail(TF_ERR_ARG, "generator: rank %llu kept %llu of its %llu non-zeros", (unsigned long long)p,
                     (unsigned long long)got, (unsigned long long)n);
    /* to rank q: what of [s, s + n) lies in q's widened part (none to itself) */
    uint64_t *send_n = NULL, total = 0, *from = NULL;
    if (st == TF_OK) st = TF_ALLOC(send_n, P, "generator exchange counts");
    if (st == TF_OK) st = TF_ALLOC(from, P, "generator exchange counts");
    for (uint64_t q = 0; st == TF_OK && q < P; ++q) {
        uint64_t a, b;
        widened(nnz, q, P, &a, &b);
        const uint64_t lo = a > s ? a : s, hi = b < s + n ? b : s + n;
        send_n[q] = q != p && hi > lo ? hi - lo : 0;
        from[q] = lo;
        total += send_n[q];
    }
    uint32_t *send = NULL, *recv = NULL;
    if (st == TF_OK) st = TF_ALLOC(send, (total ? total : 1) * order, "generator exchange");
    if (st == TF_OK) {
        uint64_t w = 0;
        for (uint64_t q = 0; q < P; ++q)
            for (uint64_t k = 0; k < send_n[q]; ++k, ++w)
                for (uint64_t m = 0; m < order; ++m) send[w * order + m] = out->ind[m][from[q] + k - u0];
        st = d->alltoall_records(send, send_n, rec, d->round_bytes, (void **)&recv, &got);
    }
    tf_free(send);
    tf_free(send_n);
    tf_free(from);
    /* received, in rank order: [e0, s) from the ranks below, [s + n, e1) from those above */
    const uint64_t below = s > e0 ? s - e0 : 0, above = e1 > s + n ? e1 - (s + n) : 0;
    if (st == TF_OK && got != below + above)
        st = tf_fail(TF_ERR_ARG, "generator: rank %llu got %llu of the %llu non-zeros its part lacks",
                     (unsigned long long)p, (unsigned long long)got, (unsigned long long)(below + above));
    if (st == TF_OK)
        for (uint64_t m = 0; m < order; ++m) {
            uint32_t *x = out->ind[m];
            for (uint64_t k = 0; k < below; ++k) x[e0 - u0 + k] = recv[k * order + m];
            for (uint64_t k = 0; k < above; ++k) x[s + n - u0 + k] = recv[(below + k) * order + m];
        }
    tf_free(recv);
    if (st == TF_OK && e0 > u0) /* [e0, e1) alone */
        for (uint64_t m = 0; m < order; ++m)
            tf_move_down_parallel(out->ind[m], (e0 - u0) * sizeof(uint32_t), (e1 - e0) * sizeof(uint32_t), g->threads);
    out->nnz = e1 - e0;
    if (st == TF_OK) st = TF_ALLOC(out->vals, out->nnz ? out->nnz : 1, "tensor values");
    *e0_out = e0;
    return st;
}

/* Whether each rank draws the whole candidate sequence (round_into_set, whole) rather
 * than a share of it whose candidates then move to their keys' ranks
 * (draw_shared): the same records either way. Whole costs every rank the
 * draws of all P shares; share moves 16 B a candidate between ranks. On
 * one host MPI moved it at ~1 GB/s (1B non-zeros on 2 ranks of the 32-core
 * x2 host: share 15.4-15.6 s, 7.1 s of it the moves; whole 9.8-11.1 s):
 * whole for 2 ranks of one host with a few threads each (a candidate's
 * draw is ~20 ns of one thread; on one thread a rank, the 2-core host's 100M
 * took 9.9 s whole against 8.7 s share); share across hosts and for more
 * ranks, where each rank's draws of the whole (P times its share, on 1/P of
 * the host's cores) would outgrow the moves (an estimate: not measured at 3
 * or more; bench/NOTES-gpu.md, thirty-eighth session). TF_GEN_RANKS_DRAW=
 * share|whole overrides. */
#define WHOLE_RANKS_MAX 2
#define WHOLE_THREADS_MIN 4
static int draw_whole_round(const tf_dist *d, int threads)
{
    const int forced = tf_env_gen_ranks_draw();
    if (forced >= 0) return forced;
    return d->host_ranks == d->size && d->size <= WHOLE_RANKS_MAX && threads >= WHOLE_THREADS_MIN;
}

static tf_status generate_ranks(const tf_gen_opts *o, const tf_dist *d, tf_tensor *out, uint64_t *first)
{
    const uint64_t P = (uint64_t)d->size, p = (uint64_t)d->rank, nnz = o->nnz;
    tf_gen_ctx g;
    tf_gen_set set;
    memset(&set, 0, sizeof set);
    uint64_t *splits = NULL, drawn = 0, last = 0, n = 0;
    tf_status st = tf_gen_ctx_init(&g, o);
    if (st == TF_OK && nnz > (1ULL << 40))
        st = tf_fail_shared(TF_ERR_NOMEM, "generator: nnz %llu needs more than 24 TB of candidates",
                     (unsigned long long)nnz);
    uint64_t chunks = tf_gen_first_round(o);
    double tp[8] = {tf_wtime()};
    t_draw = t_scatter = t_move = t_set = 0.0;
    if (st == TF_OK) st = TF_CALLOC(splits, (P + 1) * (uint64_t)g.words, "generator key ranges");
    if (st == TF_OK) st = key_ranges(&g, d, chunks, splits);
    tp[1] = tf_wtime();
    const int whole = draw_whole_round(d, g.threads);
    if (st == TF_OK) st = draw_part(&g, d, splits, chunks, whole, &set, &drawn);
    tp[2] = tf_wtime();
    tf_free(splits);
    if (st == TF_OK) st = threshold(&g, d, &set, drawn, &last);
    tp[3] = tf_wtime();
    if (st == TF_OK) st = tf_gen_set_write(&g, &set, last, NULL, 1, 0, &n);
    double *all = NULL;
    uint64_t *n_of = NULL;
    if (st == TF_OK) st = TF_CALLOC(all, P, "generator part counts");
    if (st == TF_OK) st = TF_ALLOC(n_of, P, "generator part counts");
    if (st == TF_OK) {
        all[p] = (double)n;
        st = d->allreduce_sum(all, P);
    }
    for (uint64_t q = 0; st == TF_OK && q < P; ++q) n_of[q] = (uint64_t)all[q];
    tf_free(all);
    uint64_t e0 = 0;
    tp[4] = tf_wtime();
    if (st == TF_OK) st = exchange(&g, &set, last, d, n_of, out, &e0);
    tf_free(n_of);
    tf_gen_set_free(&set);
    tf_gen_ctx_free(&g);
    tp[5] = tf_wtime();
    const uint64_t k0 = cut(nnz, p, P), k1 = cut(nnz, p + 1, P);
    sums_ctx sc = {d, k0, k1, nnz};
    if (st == TF_OK) st = tf_gen_values_blocks(o, out, e0 / VB, nnz, whole_sums, &sc);
    tp[6] = tf_wtime();
    if (tf_env_build_report())
        fprintf(stderr, "GEN-PHASES ranks rank=%d whole=%d ranges_ms=%.1f draw_ms=%.1f threshold_ms=%.1f write_ms=%.1f "
                        "exchange_ms=%.1f values_ms=%.1f drawn_chunks=%llu (draw %.1f scatter %.1f move %.1f set %.1f)\n",
                d->rank, whole, 1e3 * (tp[1] - tp[0]), 1e3 * (tp[2] - tp[1]), 1e3 * (tp[3] - tp[2]), 1e3 * (tp[4] - tp[3]),
                1e3 * (tp[5] - tp[4]), 1e3 * (tp[6] - tp[5]), (unsigned long long)drawn, 1e3 * t_draw, 1e3 * t_scatter,
                1e3 * t_move, 1e3 * t_set);
    if (st == TF_OK && (k0 > e0 || out->nnz > k1 - k0)) { /* the part alone */
        const int T = tf_resolve_threads(o->threads);
        for (uint32_t m = 0; m < o->order; ++m) tf_move_down_parallel(out->ind[m], (k0 - e0) * 4, (k1 - k0) * 4, T);
        tf_move_down_parallel(out->vals, (k0 - e0) * sizeof(double), (k1 - k0) * sizeof(double), T);
        out->nnz = k1 - k0;
    }
    if (st != TF_OK) tf_tensor_free(out);
    *first = k0;
    return st;
}

tf_status tf_generate_part(const tf_gen_opts *o, uint64_t part, uint64_t parts, tf_tensor *out, tf_gen_info *info)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_generate_part: out is NULL");
    memset(out, 0, sizeof *out);
    if (info) memset(info, 0, sizeof *info);
    if (!o) return tf_fail(TF_ERR_ARG, "tf_generate_part: o is NULL");
    if (parts < 1 || part >= parts)
        return tf_fail(TF_ERR_ARG, "tf_generate_part: part %llu of %llu (parts are 0..%llu)",
                       (unsigned long long)part, (unsigned long long)parts, (unsigned long long)parts - 1);
    const double t0 = tf_wtime();
    const uint64_t held = tf_alloc_peak_reset();
    uint64_t first = 0;
    tf_status st;
    if (parts == 1) {
        st = tf_generate(o, out);
    } else {
        tf_dist d;
        memset(&d, 0, sizeof d);
        st = tf_gen_check_opts(o);
        if (st != TF_OK) st = shared(st); /* the same on every rank */
        if (st == TF_OK) st = tf_dist_world(&d);
        if (st == TF_OK && ((uint64_t)d.size != parts || (uint64_t)d.rank != part))
            st = tf_fail(TF_ERR_ARG, "tf_generate_part: part %llu of %llu on rank %d of %d (the parts are the ranks)",
                         (unsigned long long)part, (unsigned long long)parts, d.rank, d.size);
        if (st == TF_OK) st = generate_ranks(o, &d, out, &first);
    }
    if (info) {
        info->first = first;
        info->total_nnz = o->nnz;
        info->peak_bytes = tf_alloc_peak() - held;
        info->seconds = tf_wtime() - t0;
    }
    return st;
}
