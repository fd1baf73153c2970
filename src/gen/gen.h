/* SPDX-License-Identifier: BSD-3-Clause */
/* Internals of the synthetic tensor generator (tf_generate): per-mode
 * permutations, random streams, and the planted model. */
#ifndef TF_GEN_GEN_H
#define TF_GEN_GEN_H
#include <stdint.h>

#include "tenfold.h"

/* Modes up to this length get an explicit shuffled table (4 bytes per
 * index); longer modes use a keyed Feistel permutation (no memory). */
#define TF_GEN_PERM_TABLE_MAX (1ULL << 26)

/* Stream tags, so coordinates, factors, noise and values never share a stream. */
enum { TF_GEN_TAG_COORD = 1, TF_GEN_TAG_PERM, TF_GEN_TAG_FACTOR, TF_GEN_TAG_NOISE, TF_GEN_TAG_VALUE };

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

/* The planted model of o (o->rank > 0): lambda = 1 and factors uniform in
 * [0,1), exactly the ones tf_generate uses for the values. */
tf_status tf_gen_model(const tf_gen_opts *o, tf_ktensor *k);

/* Fills t->vals for the (sorted) coordinates of t as tf_generate does. */
tf_status tf_gen_values(const tf_gen_opts *o, tf_tensor *t);
#endif
