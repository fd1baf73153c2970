/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of the synthetic tensor generator (tf_generate): per-mode
 * permutations, random streams, candidate coordinates, their distinct
 * set, and the planted model. */
#ifndef TF_GEN_GEN_H
#define TF_GEN_GEN_H
#include <stdint.h>

#include "tenfold.h"

/* Modes up to this length get an explicit shuffled table (4 bytes per
 * index); longer modes use a keyed Feistel permutation (no memory). */
#define TF_GEN_PERM_TABLE_MAX (1ULL << 26)

/* Stream tags, so coordinates, factors, noise and values never share a stream. */
enum { TF_GEN_TAG_COORD = 1, TF_GEN_TAG_PERM, TF_GEN_TAG_FACTOR, TF_GEN_TAG_NOISE, TF_GEN_TAG_VALUE,
       TF_GEN_TAG_COUNT };

/* Seed of stream number j with the given tag, derived from the user seed. */
uint64_t tf_gen_stream_seed(uint64_t seed, uint64_t tag, uint64_t j);

/* A fixed random permutation of 0..dim-1. */
typedef struct tf_gen_perm {
    uint64_t dim;
    uint32_t *table;      /* table[i] when dim <= table_max, else NULL       */
    uint64_t key[4];      /* Feistel round keys                              */
    int half_bits;        /* Feistel domain is 2^(2*half_bits) >= dim        */
    uint64_t half_mask;
} tf_gen_perm;

/* Builds the permutation of mode `mode` from seed; a table when
 * dim <= table_max (pass TF_GEN_PERM_TABLE_MAX), a Feistel network otherwise. */
tf_status tf_gen_perm_init(tf_gen_perm *p, uint64_t dim, uint64_t seed, uint32_t mode,
                           uint64_t table_max);
void tf_gen_perm_free(tf_gen_perm *p);
uint32_t tf_gen_perm_feistel(const tf_gen_perm *p, uint64_t i);

static inline uint32_t tf_gen_perm_apply(const tf_gen_perm *p, uint64_t i)
{
    return p->table ? p->table[i] : tf_gen_perm_feistel(p, i);
}

/* Candidates per random stream: candidate j of the sequence is number
 * j % TF_GEN_CHUNK of stream j / TF_GEN_CHUNK (tag TF_GEN_TAG_COORD). */
#define TF_GEN_CHUNK 16384ULL

/* The power law: out[k] = min(floor(d * pow(u, e)), d - 1) (d = dim,
 * e >= 1; u = in[k * stride] in [0, 1)), bit for bit as the one-value
 * formula tf_gen_power_index computes it with libm's pow, mostly without
 * calling pow (gen_pow.c). tf_gen_pow_approx: the approximation of u^e it
 * uses and its relative error bound (for the tests). */
void tf_gen_power_law(uint64_t dim, double e, const double *in, int stride, int n, uint32_t *out);
uint32_t tf_gen_power_index(uint64_t dim, double e, double u);
double tf_gen_pow_approx(double u, double e, double *rel_bound);

/* What drawing and deduplicating candidates need: the options, the
 * permutations, and the packing of a coordinate into a key of `words`
 * 64-bit words (word 0 least significant; mode 0 in the most significant
 * bits, so key order is the canonical order of coordinates). */
typedef struct tf_gen_ctx {
    const tf_gen_opts *o;
    tf_gen_perm perm[TF_MAX_ORDER];
    double expo[TF_MAX_ORDER]; /* 1/(1-alpha)                */
    int bits[TF_MAX_ORDER];    /* bits of mode m in the key  */
    int shift[TF_MAX_ORDER];   /* bit position of mode m     */
    int key_bits;              /* sum of bits                */
    int words;                 /* 64-bit words per key (>= 1) */
    int threads;               /* resolved o->threads        */
} tf_gen_ctx;

/* Checks o as tf_generate does (the one-line errors of bad options). */
tf_status tf_gen_check_opts(const tf_gen_opts *o);
/* The key layout and permutations of o; tf_gen_ctx_free releases them. */
tf_status tf_gen_ctx_init(tf_gen_ctx *g, const tf_gen_opts *o);
void tf_gen_ctx_free(tf_gen_ctx *g);

/* Keys of chunks first .. first+n-1 of the candidate sequence, in order
 * (n * TF_GEN_CHUNK keys of ctx->words words), drawn in parallel. */
void tf_gen_draw(const tf_gen_ctx *g, uint64_t first, uint64_t n, uint64_t *keys);
/* Chunk c in two steps, serially: its candidates' mode-0 indices
 * (TF_GEN_CHUNK of them), then its keys from those (the same keys as
 * tf_gen_draw's; the random numbers are drawn again, the power law and the
 * permutation of mode 0 are not). */
void tf_gen_draw_mode0(const tf_gen_ctx *g, uint64_t c, uint32_t *ix0);
void tf_gen_draw_rest(const tf_gen_ctx *g, uint64_t c, const uint32_t *ix0, uint64_t *keys);
/* The candidates of chunks first .. first+n-1 whose keys lie in [lo, hi)
 * (NULL: unbounded) and, if sample_mask, whose hash has no bit of it set (a
 * sample of the cells), as records (key, sequence number) appended to nseg
 * segments: segment t gets those of the t-th of nseg equal blocks of the
 * chunks, so the segments in turn are in sequence order. seg[t] (tf_alloc,
 * seg_cap[t] records) grows as needed; seg_n[t] counts its records. */
tf_status tf_gen_draw_range(const tf_gen_ctx *g, uint64_t first, uint64_t n, const uint64_t *lo, const uint64_t *hi,
                            uint64_t sample_mask, int nseg, uint64_t **seg, uint64_t *seg_n, uint64_t *seg_cap);

/* Rounds of drawing: chunks of the first round (nnz plus the expected
 * duplicates), and after a round that left `distinct` (of nnz) distinct
 * keys after `drawn` chunks, `gained` of them new from the last round's
 * `last` candidates, the chunks of the next one (0 if distinct >= nnz);
 * fails when rejection has become too slow to finish. */
uint64_t tf_gen_first_round(const tf_gen_opts *o);
tf_status tf_gen_next_round(const tf_gen_opts *o, uint64_t drawn, uint64_t distinct, uint64_t gained, uint64_t last,
                            uint64_t *chunks);

/* The distinct candidates: for every distinct key, the smallest sequence
 * number it was drawn at, in key order, held as records of rw 64-bit
 * words (key, then sequence number) in buckets of the top key bits; a
 * stripped record's key is its bits below the bucket's (the key is
 * bucket << (key_bits - bucket_bits) | record word 0). */
typedef struct tf_gen_set {
    uint64_t *recs;     /* records; bucket b's are recs[start[b] .. + count[b]) */
    uint64_t *start;    /* nbuckets record offsets                               */
    uint64_t *count;    /* nbuckets distinct records                             */
    uint64_t nbuckets;  /* 2^bucket_bits                                         */
    int bucket_bits;
    uint64_t distinct;  /* sum of count                                          */
    uint64_t draws;     /* candidates the set was made from (sequence 0..draws-1) */
    uint64_t *first_cnt; /* nchunks: the records' sequence numbers in chunk q      */
    uint64_t nchunks;   /* chunks of 0..draws-1                                  */
    int rw;             /* words of a record                                     */
    int strip;          /* records hold a key's bits below the bucket's only     */
    uint64_t *below;    /* from tf_gen_set_chunk_bits (NULL before): per bucket, */
    uint32_t *mid;      /* records before the chunk; per thread, those in it     */
    uint64_t mid_chunk; /* that chunk                                            */
    int mid_threads;
} tf_gen_set;

/* Bytes of records sorted in cache at once: a larger bucket is split by
 * its top unsorted key bits first (256 KiB; tests set it small to take
 * the split paths, any value gives the same set). */
extern uint64_t tf_gen_leaf_bytes;
/* Two-word keys whose bits below the bucket's fit a word are held in
 * records of two words, not three (1; tests set 0 to compare the layouts). */
extern int tf_gen_strip_keys;
/* Bucket bits for sets made from about n candidates (sets merge only
 * with sets of the same bucket bits). */
int tf_gen_set_bucket_bits(const tf_gen_ctx *g, uint64_t n);
/* Builds the set of candidates first_seq .. first_seq+n-1, whose keys are
 * keys[0..n) in sequence order: a parallel stable radix sort of (key,
 * sequence number), then the first record of every run of equal keys. */
tf_status tf_gen_set_build(const tf_gen_ctx *g, const uint64_t *keys, uint64_t n, uint64_t first_seq,
                           int bucket_bits, tf_gen_set *s);
/* The same for chunks first .. first+n-1 of the candidate sequence, drawn
 * as they are scattered (no array of keys; ix0: n * TF_GEN_CHUNK indices of
 * room), when tf_gen_set_can_draw: the buckets are top bits of mode 0. */
int tf_gen_set_can_draw(const tf_gen_ctx *g, int bucket_bits);
/* tf_generate draws that way where it can (1; tests set 0 to compare). */
extern int tf_gen_draw_direct;
tf_status tf_gen_set_draw_build(const tf_gen_ctx *g, uint64_t first, uint64_t n, uint32_t *ix0, int bucket_bits,
                                tf_gen_set *s);
/* a = a + b where b holds later candidates than a (a's record wins on
 * equal keys); frees b. */
tf_status tf_gen_set_merge(const tf_gen_ctx *g, tf_gen_set *a, tf_gen_set *b);
/* The same from segments of records (tf_gen_draw_range) of candidates
 * drawn below sequence number draws. */
tf_status tf_gen_set_build_segments(const tf_gen_ctx *g, uint64_t *const *seg, const uint64_t *seg_n, int nseg,
                                    uint64_t draws, int bucket_bits, tf_gen_set *s);
/* Writes the indices of the nnz distinct keys first drawn (smallest
 * sequence numbers) to t, in canonical order; needs s->distinct >= t->nnz. */
tf_status tf_gen_set_take(const tf_gen_ctx *g, tf_gen_set *s, tf_tensor *t);
/* The steps of tf_gen_set_take, for sets held in parts (ranks, each a range
 * of keys): the kept keys are those first drawn at sequence numbers <=
 * last, last the nnz-th first sequence number of the whole. cnt[q]: the
 * set's first sequence numbers in chunk q (q < nchunks), summed over the
 * parts; the chunk of the nnz-th and the count before it; bitmap (a
 * chunk's TF_GEN_CHUNK bits, OR-ed over the parts) of the first sequence
 * numbers in that chunk; the (need)-th set bit of it (UINT64_MAX if fewer). */
tf_status tf_gen_set_chunk_counts(const tf_gen_ctx *g, const tf_gen_set *s, uint64_t nchunks, uint64_t *cnt);
uint64_t tf_gen_threshold_chunk(const uint64_t *cnt, uint64_t nchunks, uint64_t nnz, uint64_t *before);
void tf_gen_set_chunk_bits(const tf_gen_ctx *g, tf_gen_set *s, uint64_t chunk, uint64_t *bitmap);
uint64_t tf_gen_threshold_last(const uint64_t *bitmap, uint64_t chunk, uint64_t need);
/* The kept keys' coordinates in key order: coordinate k, mode m to
 * ind[m][k * stride] (ind NULL: count only), at most cap of them (else an
 * error); *kept_n their count. */
tf_status tf_gen_set_write(const tf_gen_ctx *g, const tf_gen_set *s, uint64_t last, uint32_t *const *ind,
                           uint64_t stride, uint64_t cap, uint64_t *kept_n);
void tf_gen_set_free(tf_gen_set *s);

/* The planted model of o (o->rank > 0): lambda = 1 and factors uniform in
 * [0,1), exactly the ones tf_generate uses for the values. */
tf_status tf_gen_model(const tf_gen_opts *o, tf_ktensor *k);

/* Fills t->vals for the (sorted) coordinates of t as tf_generate does. */
tf_status tf_gen_values(const tf_gen_opts *o, tf_tensor *t);

/* Non-zeros per block of values: each block's random numbers come from
 * its own stream and its sums are added in block order. */
#define TF_GEN_VALUE_BLOCK 65536ULL
/* The sums of values of all blocks of the whole (nblocks_total), in block
 * order, from this holder's blocks: part[2 b], part[2 b + 1] the sum and
 * sum of squares of its block first_block + b (b < nblocks). */
typedef tf_status (*tf_gen_sums_fn)(void *user, const double *part, uint64_t first_block, uint64_t nblocks,
                                    double *sum, double *sumsq);
/* The same for a piece of the whole tensor (total_nnz non-zeros): t holds
 * whole blocks first_block, first_block + 1, ... (the last may be the
 * whole's shorter last one); sums (NULL when t is the whole) gives the
 * whole's sums. Every value equals the whole's there. */
tf_status tf_gen_values_blocks(const tf_gen_opts *o, tf_tensor *t, uint64_t first_block, uint64_t total_nnz,
                               tf_gen_sums_fn sums, void *user);
#endif
