/* SPDX-License-Identifier: BSD-3-Clause */
/* The distinct candidates of the generator, in parallel.
 *
 * Candidates keys[0..n) are in sequence order. A stable parallel scatter
 * on the top key bits (MSD) writes records (key, sequence number) into
 * buckets; each bucket is then sorted by the remaining key bits with a
 * stable LSD radix sort (buckets above a size by all threads together, the
 * rest one per thread). Stability keeps equal keys in sequence order, so
 * the first record of each run holds the smallest sequence number of its
 * key: the run is reduced to it. Taking the nnz keys first drawn is then
 * a count of first sequence numbers per chunk of the sequence, and the
 * kept keys come out in key order, which is the canonical order. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "gen/gen.h"

#define MSD_MAX_BITS 12   /* at most 4096 buckets                       */
#define BUCKET_LOG 15     /* aim for ~2^15 records per bucket            */
#define DIGIT_BITS 11     /* LSD digit width inside a bucket             */
#define SMALL_SORT 32     /* insertion sort below this many records      */

typedef struct layout {
    int W, rw;       /* a record's key words; its words (key + sequence number) */
    int kw;          /* words of the keys drawn (tf_gen_ctx.words)     */
    int strip;       /* records hold only the low key bits (below)      */
    int key_bits;
    int msd_bits;    /* top key bits that pick the bucket               */
    int low_bits;    /* key bits sorted inside a bucket                  */
    int threads;
    uint64_t nchunks; /* chunks of the sequence the records were drawn from */
} layout;

static inline uint64_t get_bits(const uint64_t *w, int pos, int bits)
{
    if (bits == 0) return 0;
    int word = pos >> 6, off = pos & 63;
    uint64_t v = w[word] >> off;
    if (off + bits > 64) v |= w[word + 1] << (64 - off);
    return bits == 64 ? v : v & ((1ULL << bits) - 1);
}

static inline void rec_copy(uint64_t *d, const uint64_t *s, int rw)
{
    for (int i = 0; i < rw; ++i) d[i] = s[i];
}

/* -1, 0, 1: key order (top word first). */
static inline int key_cmp(const uint64_t *a, const uint64_t *b, int W)
{
    for (int i = W - 1; i >= 0; --i)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static inline uint64_t bucket_of(const layout *L, const uint64_t *key)
{
    return get_bits(key, L->key_bits - L->msd_bits, L->msd_bits);
}

/* A record of key (kw words) and sequence number seq. Stripped records
 * (keys of two words whose bits below the bucket's fit one) keep the low
 * key bits only: the bucket holds the rest, and a record takes 16 bytes
 * instead of 24, for every pass of the scatter, the sort and the take. */
static inline void make_rec(const layout *L, const uint64_t *key, uint64_t seq, uint64_t *r)
{
    if (L->strip) {
        r[0] = L->low_bits == 64 ? key[0] : key[0] & ((1ULL << L->low_bits) - 1);
        r[1] = seq;
    } else {
        rec_copy(r, key, L->W);
        r[L->W] = seq;
    }
}

/* What a set is built from: n keys of sequence numbers first_seq.. in
 * order (keys), or nseg segments of records (key, sequence number), the
 * segments one after another in sequence order (seg), or the chunks
 * first_seq / TF_GEN_CHUNK .. of the candidate sequence, drawn here (g;
 * ix0: room for their mode-0 indices). */
typedef struct input {
    const uint64_t *keys;
    uint64_t n, first_seq;
    uint64_t *const *seg;
    const uint64_t *seg_n;
    int nseg;
    const tf_gen_ctx *g;
    uint32_t *ix0;
} input;

/* The scatter of chunks drawn here, without an array of keys: the bucket
 * is the top bits of the mode-0 index, so a first sweep draws only those
 * (4 bytes a candidate, kept) and counts the buckets; the second draws the
 * keys chunk by chunk into cache (the random numbers again, the other
 * modes) and writes each record to its place. The keys array's 2-4 sweeps
 * of 8-16 bytes a candidate and its fresh pages are saved for a second
 * pass of the generator's random numbers. Each thread takes an equal run
 * of chunks, in turn, so the scatter is stable. */
static tf_status scatter_drawn(const layout *L, const input *in, uint64_t *recs, uint64_t *start, uint64_t *count,
                               uint64_t nb)
{
    const tf_gen_ctx *g = in->g;
    const uint64_t nch = in->n / TF_GEN_CHUNK, c_first = in->first_seq / TF_GEN_CHUNK;
    const int T = nch < (uint64_t)L->threads ? (int)(nch ? nch : 1) : L->threads;
    const int kw = L->kw, rw = L->rw, sh = g->bits[0] - L->msd_bits;
    uint64_t *hist = NULL, *kbuf = NULL;
    TF_TRY(TF_CALLOC(hist, (uint64_t)T * nb, "generator bucket counts"));
    tf_status st = TF_ALLOC(kbuf, (uint64_t)T * TF_GEN_CHUNK * (uint64_t)kw, "generator candidates of a chunk");
    if (st != TF_OK) {
        tf_free(hist);
        return st;
    }
#pragma omp parallel num_threads(T)
    {
        const int nt = tf_thread_count();
        for (int t = tf_thread_id(); t < T; t += nt) {
            uint64_t *h = hist + (uint64_t)t * nb;
            for (uint64_t c = nch * (uint64_t)t / (uint64_t)T; c < nch * (uint64_t)(t + 1) / (uint64_t)T; ++c) {
                uint32_t *ix = in->ix0 + c * TF_GEN_CHUNK;
                tf_gen_draw_mode0(g, c_first + c, ix);
                for (uint64_t k = 0; k < TF_GEN_CHUNK; ++k) h[(uint64_t)ix[k] >> sh]++;
            }
        }
#pragma omp barrier
#pragma omp single
        {
            const uint64_t total = tf_bucket_offsets(hist, start, nb, T);
            for (uint64_t b = 0; b < nb; ++b) count[b] = (b + 1 < nb ? start[b + 1] : total) - start[b];
        }
        for (int t = tf_thread_id(); t < T; t += nt) {
            uint64_t *h = hist + (uint64_t)t * nb, *keys = kbuf + (uint64_t)t * TF_GEN_CHUNK * (uint64_t)kw;
            for (uint64_t c = nch * (uint64_t)t / (uint64_t)T; c < nch * (uint64_t)(t + 1) / (uint64_t)T; ++c) {
                const uint32_t *ix = in->ix0 + c * TF_GEN_CHUNK;
                const uint64_t seq = (c_first + c) * TF_GEN_CHUNK;
                tf_gen_draw_rest(g, c_first + c, ix, keys);
                if (kw == 1) {
                    for (uint64_t k = 0; k < TF_GEN_CHUNK; ++k) {
                        uint64_t *r = recs + 2 * h[(uint64_t)ix[k] >> sh]++;
                        r[0] = keys[k];
                        r[1] = seq + k;
                    }
                } else if (L->strip) {
                    const uint64_t mask = L->low_bits == 64 ? ~0ULL : (1ULL << L->low_bits) - 1;
                    for (uint64_t k = 0; k < TF_GEN_CHUNK; ++k) {
                        uint64_t *r = recs + 2 * h[(uint64_t)ix[k] >> sh]++;
                        r[0] = keys[2 * k] & mask;
                        r[1] = seq + k;
                    }
                } else {
                    for (uint64_t k = 0; k < TF_GEN_CHUNK; ++k)
                        make_rec(L, keys + k * (uint64_t)kw, seq + k, recs + (uint64_t)rw * h[(uint64_t)ix[k] >> sh]++);
                }
            }
        }
    }
    tf_free(kbuf);
    tf_free(hist);
    return TF_OK;
}

/* Stable scatter of the input into buckets of records; fills start and
 * count (records per bucket, before deduplication). */
static tf_status scatter(const layout *L, const input *in, uint64_t *recs, uint64_t *start, uint64_t *count,
                         uint64_t nb)
{
    if (in->g) return scatter_drawn(L, in, recs, start, count, nb);
    const uint64_t n = in->n;
    int T = in->seg ? in->nseg : L->threads;
    if (!in->seg && n < 65536) T = 1;
    uint64_t *hist = NULL;
    TF_TRY(TF_CALLOC(hist, (uint64_t)T * nb, "generator bucket counts"));
    const int W = L->kw, rw = L->rw, srw = L->kw + 1; /* srw: words of a segment's record */
#pragma omp parallel num_threads(T)
    {
        const int nt = tf_thread_count();
        for (int t = tf_thread_id(); t < T; t += nt) { /* a thread per part (fewer if the runtime gives fewer) */
            uint64_t *h = hist + (uint64_t)t * nb;
            if (in->seg) {
                for (uint64_t k = 0; k < in->seg_n[t]; ++k) h[bucket_of(L, in->seg[t] + k * (uint64_t)srw)]++;
            } else {
                const uint64_t lo = n * (uint64_t)t / (uint64_t)T, hi = n * (uint64_t)(t + 1) / (uint64_t)T;
                for (uint64_t k = lo; k < hi; ++k) h[bucket_of(L, in->keys + k * (uint64_t)W)]++;
            }
        }
#pragma omp barrier
#pragma omp single
        {
            const uint64_t total = tf_bucket_offsets(hist, start, nb, T);
            for (uint64_t b = 0; b < nb; ++b) count[b] = (b + 1 < nb ? start[b + 1] : total) - start[b];
        }
        for (int t = tf_thread_id(); t < T; t += nt) {
            uint64_t *h = hist + (uint64_t)t * nb;
            if (in->seg) {
                const uint64_t *sg = in->seg[t];
                for (uint64_t k = 0; k < in->seg_n[t]; ++k) {
                    const uint64_t *r = sg + k * (uint64_t)srw;
                    make_rec(L, r, r[W], recs + (uint64_t)rw * h[bucket_of(L, r)]++);
                }
                continue;
            }
            const uint64_t lo = n * (uint64_t)t / (uint64_t)T, hi = n * (uint64_t)(t + 1) / (uint64_t)T;
            const uint64_t *keys = in->keys, first_seq = in->first_seq;
            if (W == 1) {
                for (uint64_t k = lo; k < hi; ++k) {
                    uint64_t *r = recs + 2 * h[bucket_of(L, keys + k)]++;
                    r[0] = keys[k];
                    r[1] = first_seq + k;
                }
            } else if (L->strip) { /* two-word keys whose low bits are word 0's */
                const uint64_t mask = L->low_bits == 64 ? ~0ULL : (1ULL << L->low_bits) - 1;
                for (uint64_t k = lo; k < hi; ++k) {
                    const uint64_t *key = keys + 2 * k;
                    uint64_t *r = recs + 2 * h[bucket_of(L, key)]++;
                    r[0] = key[0] & mask;
                    r[1] = first_seq + k;
                }
            } else {
                for (uint64_t k = lo; k < hi; ++k) {
                    const uint64_t *key = keys + k * (uint64_t)W;
                    make_rec(L, key, first_seq + k, recs + (uint64_t)rw * h[bucket_of(L, key)]++);
                }
            }
        }
    }
    tf_free(hist);
    return TF_OK;
}

/* Digit width and count for the low bits of a bucket. */
static void digits(const layout *L, int *passes, int *dbits)
{
    *passes = (L->low_bits + DIGIT_BITS - 1) / DIGIT_BITS;
    *dbits = *passes ? (L->low_bits + *passes - 1) / *passes : 0;
}

static inline uint64_t digit(const layout *L, const uint64_t *rec, int shift, int bits)
{
    if (L->W == 1) return (rec[0] >> shift) & ((1ULL << bits) - 1);
    return get_bits(rec, shift, bits);
}

/* Stable insertion sort by key. */
static void insertion_sort(const layout *L, uint64_t *a, uint64_t n)
{
    const int rw = L->rw;
    uint64_t tmp[TF_MAX_ORDER + 1];
    for (uint64_t i = 1; i < n; ++i) {
        if (key_cmp(a + (i - 1) * rw, a + i * rw, L->W) <= 0) continue;
        rec_copy(tmp, a + i * rw, rw);
        uint64_t j = i;
        while (j > 0 && key_cmp(a + (j - 1) * rw, tmp, L->W) > 0) {
            rec_copy(a + j * rw, a + (j - 1) * rw, rw);
            --j;
        }
        rec_copy(a + j * rw, tmp, rw);
    }
}

/* sort_bucket for one-word keys in a few passes: every pass's digit
 * counts from one read (the passes only reorder the records, so the
 * counts hold for all), then the stable scatters. */
#define FUSED_PASSES 6 /* 64 key bits in digits of 11 */
static uint64_t *sort_bucket_fused(const layout *L, uint64_t *a, uint64_t *tmp, uint64_t n, int passes, int dbits)
{
    uint32_t hist[FUSED_PASSES][1 << DIGIT_BITS];
    uint64_t mask[FUSED_PASSES];
    int shift[FUSED_PASSES];
    for (int p = 0; p < passes; ++p) {
        shift[p] = p * dbits;
        const int bits = L->low_bits - shift[p] < dbits ? L->low_bits - shift[p] : dbits;
        mask[p] = (1ULL << bits) - 1;
        memset(hist[p], 0, (mask[p] + 1) * sizeof hist[p][0]);
    }
    for (uint64_t k = 0; k < n; ++k) {
        const uint64_t v = a[2 * k];
        for (int p = 0; p < passes; ++p) hist[p][(v >> shift[p]) & mask[p]]++;
    }
    uint64_t *src = a, *dst = tmp;
    for (int p = 0; p < passes; ++p) {
        uint32_t *h = hist[p];
        const int sh = shift[p];
        const uint64_t m = mask[p];
        if (h[(a[0] >> sh) & m] == n) continue; /* one digit value: nothing moves */
        uint32_t run = 0;
        for (uint64_t d = 0; d <= m; ++d) {
            const uint32_t c = h[d];
            h[d] = run;
            run += c;
        }
        for (uint64_t k = 0; k < n; ++k) {
            uint64_t *r = dst + 2 * (uint64_t)h[(src[2 * k] >> sh) & m]++;
            r[0] = src[2 * k];
            r[1] = src[2 * k + 1];
        }
        uint64_t *x = src; src = dst; dst = x;
    }
    return src;
}

/* Sorts one bucket's n records a[] by the low key bits (stable), using
 * tmp (n records); returns where the sorted records are (a or tmp). */
static uint64_t *sort_bucket(const layout *L, uint64_t *a, uint64_t *tmp, uint64_t n)
{
    if (n <= SMALL_SORT) {
        insertion_sort(L, a, n);
        return a;
    }
    const int rw = L->rw;
    int passes, dbits;
    digits(L, &passes, &dbits);
    if (rw == 2 && passes <= FUSED_PASSES && n < (1ULL << 32)) return sort_bucket_fused(L, a, tmp, n, passes, dbits);
    uint64_t hist[(1 << DIGIT_BITS) + 1];
    uint64_t *src = a, *dst = tmp;
    for (int p = 0; p < passes; ++p) {
        const int shift = p * dbits, bits = L->low_bits - shift < dbits ? L->low_bits - shift : dbits;
        const uint64_t nd = 1ULL << bits;
        memset(hist, 0, nd * sizeof *hist);
        for (uint64_t k = 0; k < n; ++k) hist[digit(L, src + k * rw, shift, bits)]++;
        if (hist[digit(L, src, shift, bits)] == n) continue; /* one digit value: nothing moves */
        uint64_t run = 0;
        for (uint64_t d = 0; d < nd; ++d) {
            uint64_t c = hist[d];
            hist[d] = run;
            run += c;
        }
        if (rw == 2) {
            for (uint64_t k = 0; k < n; ++k) {
                uint64_t *r = dst + 2 * hist[(src[2 * k] >> shift) & (nd - 1)]++;
                r[0] = src[2 * k];
                r[1] = src[2 * k + 1];
            }
        } else {
            for (uint64_t k = 0; k < n; ++k)
                rec_copy(dst + (uint64_t)rw * hist[digit(L, src + k * rw, shift, bits)]++, src + k * rw, rw);
        }
        uint64_t *x = src; src = dst; dst = x;
    }
    return src;
}

/* Keeps the first record of every run of equal keys of src[0..n), writing
 * them to dst (which may be src); returns how many. cnt[q] (q < L->nchunks)
 * counts the kept sequence numbers in chunk q, while they are in cache. */
static uint64_t first_of_runs(const layout *L, const uint64_t *src, uint64_t *dst, uint64_t n, uint32_t *cnt)
{
    const int rw = L->rw, W = L->W;
    uint64_t d = 0;
    for (uint64_t k = 0; k < n; ++k) {
        if (k > 0 && key_cmp(src + k * rw, src + (k - 1) * rw, W) == 0) continue;
        if (dst != src || d != k) rec_copy(dst + d * rw, src + k * rw, rw);
        const uint64_t q = src[k * rw + W] / TF_GEN_CHUNK;
        if (q < L->nchunks) cnt[q]++;
        ++d;
    }
    return d;
}

/* Sorting a bucket in cache: a bucket of more than LEAF_BYTES of records
 * (tf_gen_leaf_bytes) is first split stably by its top unsorted key bits into sub-buckets of
 * about half that (one read to count, one read and write to scatter);
 * each sub-bucket is then sorted by LSD passes that stay in L2 and its
 * first records of runs are appended to the output. Sorting a bucket of
 * several MB with LSD passes instead costs a read and a write of memory
 * per pass (5-6 passes of 11 bits for 47-58 low key bits) once the
 * threads' buckets outgrow the last-level cache. */
#define SPLIT_MAX_BITS 10
uint64_t tf_gen_leaf_bytes = 256 << 10;

/* Records that fit a leaf (at least 2). */
static uint64_t leaf_recs(const layout *L)
{
    const uint64_t r = tf_gen_leaf_bytes / (8 * (uint64_t)L->rw);
    return r > 2 ? r : 2;
}

/* Stable scatter of a[0..n) by key bits [lo, lo + bits) into dst; off[d]
 * the start of digit d (2^bits + 1 entries). */
static void split_by(const layout *L, const uint64_t *a, uint64_t *dst, uint64_t n, int lo, int bits, uint64_t *off)
{
    const uint64_t nd = 1ULL << bits;
    const int rw = L->rw;
    memset(off, 0, (nd + 1) * sizeof *off);
    for (uint64_t k = 0; k < n; ++k) off[digit(L, a + k * rw, lo, bits) + 1]++;
    for (uint64_t d = 0; d < nd; ++d) off[d + 1] += off[d];
    uint64_t at[1 << SPLIT_MAX_BITS];
    memcpy(at, off, nd * sizeof *at);
    if (rw == 2) {
        for (uint64_t k = 0; k < n; ++k) {
            uint64_t *r = dst + 2 * at[(a[2 * k] >> lo) & (nd - 1)]++;
            r[0] = a[2 * k];
            r[1] = a[2 * k + 1];
        }
    } else {
        for (uint64_t k = 0; k < n; ++k) rec_copy(dst + (uint64_t)rw * at[digit(L, a + k * rw, lo, bits)]++, a + k * rw, rw);
    }
}

/* Sorts a[0..n) stably by key bits [0, hi) (the bits above are equal) and
 * keeps the first record of every run of equal keys at a[0..); returns
 * their count (cnt: as first_of_runs). tmp: n records; leaf: leaf_recs
 * records. */
static uint64_t sort_dedup(const layout *L, uint64_t *a, uint64_t *tmp, uint64_t *leaf, uint64_t n, int hi,
                           uint32_t *cnt)
{
    const uint64_t fit = leaf_recs(L), rw = (uint64_t)L->rw;
    if (n <= fit || hi <= 0) { /* in cache: LSD passes between a and leaf */
        layout M = *L;
        M.low_bits = hi > 0 ? hi : 0;
        uint64_t *sorted = n <= fit ? sort_bucket(&M, a, leaf, n) : sort_bucket(&M, a, tmp, n);
        return first_of_runs(L, sorted, a, n, cnt);
    }
    int bits = 1;
    while (bits < SPLIT_MAX_BITS && bits < hi && (n >> bits) > fit / 2) ++bits;
    const int lo = hi - bits;
    uint64_t off[(1 << SPLIT_MAX_BITS) + 1];
    split_by(L, a, tmp, n, lo, bits, off);
    layout M = *L;
    M.low_bits = lo;
    /* a is free now: the sub-buckets' distinct records go back to it in
     * order (out never passes the next sub-bucket's start). A sub-bucket
     * still too large for a leaf is sorted in place in tmp with the free
     * part of a beyond out as its scratch, then copied down. */
    uint64_t out = 0;
    for (uint64_t d = 0; d < (1ULL << bits); ++d) {
        const uint64_t m = off[d + 1] - off[d];
        if (m == 0) continue;
        uint64_t *sub = tmp + off[d] * rw;
        if (m <= fit) {
            out += first_of_runs(L, sort_bucket(&M, sub, leaf, m), a + out * rw, m, cnt);
        } else {
            const uint64_t c = sort_dedup(L, sub, a + out * rw, leaf, m, lo, cnt);
            memmove(a + out * rw, sub, c * rw * sizeof *a);
            out += c;
        }
    }
    return out;
}

/* The same for a large bucket, every thread taking part in each pass. */
static tf_status sort_bucket_parallel(const layout *L, uint64_t *a, uint64_t *tmp, uint64_t n,
                                      uint64_t **sorted)
{
    const int rw = L->rw;
    int passes, dbits;
    digits(L, &passes, &dbits);
    const int T = L->threads;
    const uint64_t nd_max = 1ULL << DIGIT_BITS;
    uint64_t *hist = NULL;
    TF_TRY(TF_ALLOC(hist, (uint64_t)T * nd_max, "generator digit counts"));
    uint64_t *src = a, *dst = tmp;
    for (int p = 0; p < passes; ++p) {
        const int shift = p * dbits, bits = L->low_bits - shift < dbits ? L->low_bits - shift : dbits;
        const uint64_t nd = 1ULL << bits;
        int skip = 0;
#pragma omp parallel num_threads(T)
        {
            const int t = tf_thread_id(), nt = tf_thread_count();
            const uint64_t lo = n * (uint64_t)t / (uint64_t)nt, hi = n * (uint64_t)(t + 1) / (uint64_t)nt;
            uint64_t *h = hist + (uint64_t)t * nd;
            memset(h, 0, nd * sizeof *h);
            for (uint64_t k = lo; k < hi; ++k) h[digit(L, src + k * rw, shift, bits)]++;
#pragma omp barrier
#pragma omp single
            {
                uint64_t run = 0, d0 = digit(L, src, shift, bits), same = 0;
                for (int u = 0; u < nt; ++u) same += hist[(uint64_t)u * nd + d0];
                skip = same == n;
                for (uint64_t d = 0; d < nd; ++d)
                    for (int u = 0; u < nt; ++u) {
                        uint64_t c = hist[(uint64_t)u * nd + d];
                        hist[(uint64_t)u * nd + d] = run;
                        run += c;
                    }
            }
            if (!skip)
                for (uint64_t k = lo; k < hi; ++k)
                    rec_copy(dst + (uint64_t)rw * h[digit(L, src + k * rw, shift, bits)]++, src + k * rw, rw);
        }
        if (!skip) { uint64_t *x = src; src = dst; dst = x; }
    }
    tf_free(hist);
    *sorted = src;
    return TF_OK;
}

int tf_gen_set_bucket_bits(const tf_gen_ctx *g, uint64_t n)
{
    int msd = 0;
    while (msd < MSD_MAX_BITS && (n >> (BUCKET_LOG + msd)) > 0) ++msd;
    return msd < g->key_bits ? msd : g->key_bits;
}

int tf_gen_strip_keys = 1;

static layout make_layout(const tf_gen_ctx *g, int msd_bits)
{
    layout L;
    L.kw = g->words;
    L.key_bits = g->key_bits;
    L.msd_bits = msd_bits;
    L.low_bits = L.key_bits - L.msd_bits;
    L.strip = tf_gen_strip_keys && g->words == 2 && L.low_bits <= 64;
    L.W = L.strip ? 1 : g->words;
    L.rw = L.W + 1;
    L.threads = g->threads;
    L.nchunks = 0;
    return L;
}

/* The set of the records of in (n in all; draws: the sequence numbers
 * below which they were drawn). */
static tf_status build(const tf_gen_ctx *g, const input *in, uint64_t draws, int bucket_bits, tf_gen_set *s)
{
    memset(s, 0, sizeof *s);
    const uint64_t n = in->n;
    layout L = make_layout(g, bucket_bits);
    L.nchunks = (draws + TF_GEN_CHUNK - 1) / TF_GEN_CHUNK;
    const uint64_t nb = 1ULL << L.msd_bits, rw = (uint64_t)L.rw, nch = L.nchunks;
    s->nbuckets = nb;
    s->bucket_bits = bucket_bits;
    s->draws = draws;
    s->nchunks = nch;
    s->rw = L.rw;
    s->strip = L.strip;
    tf_status st = TF_ALLOC(s->recs, (n ? n : 1) * rw, "generator candidates (key, sequence)");
    if (st == TF_OK) st = TF_ALLOC(s->first_cnt, nch ? nch : 1, "generator chunk counts");
    if (st == TF_OK) st = TF_ALLOC(s->start, nb, "generator buckets");
    if (st == TF_OK) st = TF_ALLOC(s->count, nb, "generator buckets");
    if (st == TF_OK) st = scatter(&L, in, s->recs, s->start, s->count, nb);
    if (st != TF_OK) { tf_gen_set_free(s); return st; }

    /* Buckets above big are sorted by all threads together, the others
     * one per thread, each with its own scratch of max_small records. The
     * small ones go first: a big bucket's count falls when its duplicates
     * go, and sorted first it could then pass for small, be sorted again
     * in a scratch slice shorter than it, and overrun the neighbouring
     * thread's (with 4-16 threads that left unsorted buckets and duplicate
     * keys; test_gen runs 8 and 16 threads for it). */
    const int T = L.threads;
    uint64_t big = n / (8 * (uint64_t)T);
    if (big < 65536) big = 65536;
    uint64_t max_small = 0, max_big = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        if (s->count[b] > big) max_big = s->count[b] > max_big ? s->count[b] : max_big;
        else max_small = s->count[b] > max_small ? s->count[b] : max_small;
    }
    const uint64_t slice = max_small + leaf_recs(&L); /* a thread's: a bucket's scatter and a leaf */
    uint64_t scratch_recs = (uint64_t)T * slice > max_big ? (uint64_t)T * slice : max_big;
    uint64_t *scratch = NULL;
    uint32_t *cnt = NULL; /* a thread's counts of first sequence numbers per chunk */
    st = TF_ALLOC(scratch, (scratch_recs ? scratch_recs : 1) * rw, "generator sort scratch");
    if (st == TF_OK) st = TF_CALLOC(cnt, (uint64_t)T * nch + 1, "generator chunk counts");
    if (st != TF_OK) {
        tf_free(scratch);
        tf_gen_set_free(s);
        return st;
    }
#pragma omp parallel for schedule(dynamic, 1) num_threads(T) if (nb > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        if (s->count[b] > big) continue;
        uint64_t *a = s->recs + s->start[b] * rw, *mine = scratch + (uint64_t)tf_thread_id() * slice * rw;
        s->count[b] = sort_dedup(&L, a, mine, mine + max_small * rw, s->count[b], L.low_bits,
                                 cnt + (uint64_t)tf_thread_id() * nch);
    }
    for (uint64_t b = 0; st == TF_OK && b < nb; ++b) {
        if (s->count[b] <= big) continue;
        uint64_t *a = s->recs + s->start[b] * rw, *sorted = NULL;
        st = sort_bucket_parallel(&L, a, scratch, s->count[b], &sorted);
        if (st == TF_OK) s->count[b] = first_of_runs(&L, sorted, a, s->count[b], cnt);
    }
    tf_free(scratch);
    if (st != TF_OK) {
        tf_free(cnt);
        tf_gen_set_free(s);
        return st;
    }
#pragma omp parallel for schedule(static) num_threads(T) if (nch > 4096)
    for (int64_t q = 0; q < (int64_t)nch; ++q) {
        uint64_t sum = 0;
        for (int u = 0; u < T; ++u) sum += cnt[(uint64_t)u * nch + (uint64_t)q];
        s->first_cnt[q] = sum;
    }
    tf_free(cnt);
    for (uint64_t b = 0; b < nb; ++b) s->distinct += s->count[b];
    return TF_OK;
}

tf_status tf_gen_set_build(const tf_gen_ctx *g, const uint64_t *keys, uint64_t n, uint64_t first_seq,
                           int bucket_bits, tf_gen_set *s)
{
    const input in = {.keys = keys, .n = n, .first_seq = first_seq};
    return build(g, &in, first_seq + n, bucket_bits, s);
}

int tf_gen_set_can_draw(const tf_gen_ctx *g, int bucket_bits) { return bucket_bits <= g->bits[0]; }

tf_status tf_gen_set_draw_build(const tf_gen_ctx *g, uint64_t first, uint64_t n, uint32_t *ix0, int bucket_bits,
                                tf_gen_set *s)
{
    if (!tf_gen_set_can_draw(g, bucket_bits))
        return tf_fail(TF_ERR_ARG, "generator: %d bucket bits, mode 1 has %d", bucket_bits, g->bits[0]);
    const input in = {.n = n * TF_GEN_CHUNK, .first_seq = first * TF_GEN_CHUNK, .g = g, .ix0 = ix0};
    return build(g, &in, (first + n) * TF_GEN_CHUNK, bucket_bits, s);
}

tf_status tf_gen_set_build_segments(const tf_gen_ctx *g, uint64_t *const *seg, const uint64_t *seg_n, int nseg,
                                    uint64_t draws, int bucket_bits, tf_gen_set *s)
{
    input in = {.seg = seg, .seg_n = seg_n, .nseg = nseg};
    for (int t = 0; t < nseg; ++t) in.n += seg_n[t];
    return build(g, &in, draws, bucket_bits, s);
}

tf_status tf_gen_set_chunk_counts(const tf_gen_ctx *g, const tf_gen_set *s, uint64_t nchunks, uint64_t *cnt)
{
    (void)g;
    for (uint64_t q = 0; q < nchunks; ++q) cnt[q] = q < s->nchunks ? s->first_cnt[q] : 0;
    return TF_OK;
}

uint64_t tf_gen_threshold_chunk(const uint64_t *cnt, uint64_t nchunks, uint64_t nnz, uint64_t *before)
{
    uint64_t cum = 0, chunk = 0;
    for (; chunk + 1 < nchunks; ++chunk) {
        if (cum + cnt[chunk] >= nnz) break;
        cum += cnt[chunk];
    }
    *before = cum;
    return chunk;
}

void tf_gen_set_chunk_bits(const tf_gen_ctx *g, tf_gen_set *s, uint64_t chunk, uint64_t *bitmap)
{
    const uint64_t nb = s->nbuckets, c0 = chunk * TF_GEN_CHUNK;
    const int rw = s->rw, W = rw - 1, T = g->threads;
    memset(bitmap, 0, TF_GEN_CHUNK / 8);
    /* Kept in the set for tf_gen_set_write, which then needs no count
     * pass: per bucket the records before the chunk, and per thread the
     * (bucket, place in the chunk) of those in it (a chunk's worth at most). */
    tf_free(s->below);
    tf_free(s->mid);
    s->below = NULL;
    s->mid = NULL;
    s->mid_threads = 0;
    if (TF_ALLOC(s->below, nb, "generator bucket counts") != TF_OK ||
        TF_ALLOC(s->mid, (uint64_t)T * (TF_GEN_CHUNK + 1), "generator threshold chunk") != TF_OK) {
        tf_free(s->below);
        s->below = NULL;
        tf_clear_error(); /* not needed: tf_gen_set_write counts instead */
    }
    uint32_t *const mid = s->mid;
    uint64_t *const below = s->below;
    if (mid)
        for (int u = 0; u < T; ++u) mid[(uint64_t)u * (TF_GEN_CHUNK + 1)] = 0;
#pragma omp parallel for schedule(dynamic, 16) num_threads(T) if (nb > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        const uint64_t *r = s->recs + s->start[b] * (uint64_t)rw;
        uint32_t *mine = mid ? mid + (uint64_t)tf_thread_id() * (TF_GEN_CHUNK + 1) : NULL;
        uint64_t lt = 0;
        for (uint64_t k = 0; k < s->count[b]; ++k) {
            const uint64_t q = r[k * rw + W];
            lt += q < c0;
            if (q - c0 >= TF_GEN_CHUNK) continue; /* not in the chunk (q < c0 wraps) */
            if (mine) mine[++mine[0]] = (uint32_t)((uint64_t)b << 14 | (q - c0));
            uint64_t bit = 1ULL << (q % 64), *w = &bitmap[(q % TF_GEN_CHUNK) / 64];
#pragma omp atomic
            *w |= bit;
        }
        if (below) below[b] = lt;
    }
    if (mid) {
        s->mid_chunk = chunk;
        s->mid_threads = T;
    }
}

uint64_t tf_gen_threshold_last(const uint64_t *bitmap, uint64_t chunk, uint64_t need)
{
    for (uint64_t i = 0; i < TF_GEN_CHUNK; ++i)
        if ((bitmap[i / 64] >> (i % 64)) & 1 && --need == 0) return chunk * TF_GEN_CHUNK + i;
    return UINT64_MAX; /* fewer than need: the caller's counts were wrong */
}

tf_status tf_gen_set_write(const tf_gen_ctx *g, const tf_gen_set *s, uint64_t last, uint32_t *const *ind,
                           uint64_t stride, uint64_t cap, uint64_t *kept_n)
{
    const uint64_t nb = s->nbuckets;
    const int rw = s->rw, W = rw - 1, T = g->threads;
    uint64_t *kept = NULL;
    TF_TRY(TF_ALLOC(kept, nb + 1, "generator bucket offsets"));
    if (s->below && s->mid_threads && last / TF_GEN_CHUNK == s->mid_chunk && nb <= (1ULL << 18)) {
        /* from tf_gen_set_chunk_bits: the records before last's chunk, and those in it up to last */
        memcpy(kept, s->below, nb * sizeof *kept);
        for (int u = 0; u < s->mid_threads; ++u) {
            const uint32_t *e = s->mid + (uint64_t)u * (TF_GEN_CHUNK + 1);
            for (uint32_t i = 1; i <= e[0]; ++i) kept[e[i] >> 14] += (e[i] & (TF_GEN_CHUNK - 1)) <= last % TF_GEN_CHUNK;
        }
    } else {
#pragma omp parallel for schedule(dynamic, 16) num_threads(T) if (nb > 1)
        for (int64_t b = 0; b < (int64_t)nb; ++b) {
            const uint64_t *r = s->recs + s->start[b] * (uint64_t)rw;
            uint64_t c = 0;
            for (uint64_t k = 0; k < s->count[b]; ++k) c += r[k * rw + W] <= last;
            kept[b] = c;
        }
    }
    uint64_t run = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        uint64_t c = kept[b];
        kept[b] = run;
        run += c;
    }
    *kept_n = run;
    if (!ind || run > cap) { /* a count only; never past the caller's arrays */
        tf_free(kept);
        return ind ? tf_fail(TF_ERR_ARG, "generator: kept %llu non-zeros, room for %llu", (unsigned long long)run,
                             (unsigned long long)cap)
                   : TF_OK;
    }
    const uint32_t order = g->o->order;
#pragma omp parallel for schedule(dynamic, 16) num_threads(T) if (nb > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        const uint64_t *r = s->recs + s->start[b] * (uint64_t)rw;
        uint64_t at = kept[b] * stride;
        const int low = s->strip ? g->key_bits - s->bucket_bits : 64; /* stripped: key = b << low | rec[0] */
        const uint64_t top0 = low == 64 ? 0 : (uint64_t)b << low, top1 = low == 64 ? (uint64_t)b : (uint64_t)b >> (64 - low);
        for (uint64_t k = 0; k < s->count[b]; ++k) {
            const uint64_t *rec = r + k * rw;
            if (rec[W] > last) continue;
            const uint64_t full[2] = {rec[0] | top0, top1}, *key = s->strip ? full : rec;
            for (uint32_t m = 0; m < order; ++m) ind[m][at] = (uint32_t)get_bits(key, g->shift[m], g->bits[m]);
            at += stride;
        }
    }
    tf_free(kept);
    return TF_OK;
}

tf_status tf_gen_set_take(const tf_gen_ctx *g, tf_gen_set *s, tf_tensor *t)
{
    const uint64_t nnz = t->nnz;
    if (s->distinct < nnz) return tf_fail(TF_ERR_ARG, "generator: %llu distinct candidates for %llu non-zeros",
                                          (unsigned long long)s->distinct, (unsigned long long)nnz);
    /* First sequence numbers per chunk of the sequence, to find the chunk
     * where the nnz-th distinct key was first drawn; within it, the
     * (nnz - before)-th first sequence number is the last one kept. */
    const uint64_t nchunks = (s->draws + TF_GEN_CHUNK - 1) / TF_GEN_CHUNK;
    uint64_t *cnt = NULL, before = 0, bitmap[TF_GEN_CHUNK / 64];
    TF_TRY(TF_ALLOC(cnt, nchunks ? nchunks : 1, "generator chunk counts"));
    tf_status st = tf_gen_set_chunk_counts(g, s, nchunks, cnt);
    const uint64_t chunk = tf_gen_threshold_chunk(cnt, nchunks, nnz, &before);
    tf_free(cnt);
    TF_TRY(st);
    tf_gen_set_chunk_bits(g, s, chunk, bitmap);
    const uint64_t last = tf_gen_threshold_last(bitmap, chunk, nnz - before);
    uint64_t run = 0;
    TF_TRY(tf_gen_set_write(g, s, last, t->ind, 1, nnz, &run));
    return run == nnz ? TF_OK
                      : tf_fail(TF_ERR_ARG, "generator: kept %llu of %llu non-zeros (chunk %llu, last %llu)",
                                (unsigned long long)run, (unsigned long long)nnz, (unsigned long long)chunk,
                                (unsigned long long)last);
}

/* Merges the sorted distinct records x[0..nx) and y[0..ny) into out; on
 * equal keys x's record (drawn first) is kept, and ycnt (y's first
 * sequence numbers per chunk) loses the other. Returns the count. */
static uint64_t merge_runs(const layout *L, const uint64_t *x, uint64_t nx, const uint64_t *y, uint64_t ny,
                           uint64_t *out, uint64_t *ycnt)
{
    const int rw = L->rw;
    uint64_t i = 0, j = 0, n = 0;
    while (i < nx && j < ny) {
        int c = key_cmp(x + i * rw, y + j * rw, L->W);
        if (c <= 0) {
            rec_copy(out + n++ * rw, x + i++ * rw, rw);
            if (c == 0) { /* y's record goes: its chunk counts one first sequence number less */
                const uint64_t q = y[j * rw + L->W] / TF_GEN_CHUNK;
#pragma omp atomic
                ycnt[q]--;
                ++j;
            }
        } else {
            rec_copy(out + n++ * rw, y + j++ * rw, rw);
        }
    }
    for (; i < nx; ++i) rec_copy(out + n++ * rw, x + i * rw, rw);
    for (; j < ny; ++j) rec_copy(out + n++ * rw, y + j * rw, rw);
    return n;
}

tf_status tf_gen_set_merge(const tf_gen_ctx *g, tf_gen_set *a, tf_gen_set *b)
{
    if (a->nbuckets != b->nbuckets || a->bucket_bits != b->bucket_bits)
        return tf_fail(TF_ERR_ARG, "generator: merging sets with different buckets");
    if (b->nchunks < a->nchunks || a->rw != b->rw || a->strip != b->strip)
        return tf_fail(TF_ERR_ARG, "generator: merging a set of earlier candidates or of other records");
    const layout L = make_layout(g, a->bucket_bits);
    const uint64_t nb = a->nbuckets, rw = (uint64_t)L.rw;
    uint64_t *recs = NULL, *start = NULL;
    TF_TRY(TF_ALLOC(recs, (a->distinct + b->distinct) * rw + 1, "generator distinct candidates"));
    tf_status st = TF_ALLOC(start, nb, "generator buckets");
    if (st != TF_OK) { tf_free(recs); return st; }
    uint64_t run = 0;
    for (uint64_t k = 0; k < nb; ++k) {
        start[k] = run;
        run += a->count[k] + b->count[k];
    }
#pragma omp parallel for schedule(dynamic, 16) num_threads(L.threads) if (nb > 1)
    for (int64_t k = 0; k < (int64_t)nb; ++k)
        a->count[k] = merge_runs(&L, a->recs + a->start[k] * rw, a->count[k], b->recs + b->start[k] * rw,
                                 b->count[k], recs + start[k] * rw, b->first_cnt);
    for (uint64_t q = 0; q < a->nchunks && q < b->nchunks; ++q) b->first_cnt[q] += a->first_cnt[q];
    tf_free(a->recs);
    tf_free(a->start);
    a->recs = recs;
    a->start = start;
    a->distinct = 0;
    for (uint64_t k = 0; k < nb; ++k) a->distinct += a->count[k];
    a->draws = b->draws;
    tf_free(a->first_cnt);
    a->first_cnt = b->first_cnt; /* b's chunks cover a's */
    a->nchunks = b->nchunks;
    b->first_cnt = NULL;
    tf_gen_set_free(b);
    return TF_OK;
}

void tf_gen_set_free(tf_gen_set *s)
{
    if (!s) return;
    tf_free(s->recs);
    tf_free(s->start);
    tf_free(s->count);
    tf_free(s->first_cnt);
    tf_free(s->below);
    tf_free(s->mid);
    memset(s, 0, sizeof *s);
}
