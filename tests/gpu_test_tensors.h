/* SPDX-License-Identifier: BSD-3-Clause */
/* Random test tensors for the GPU format tests (builders and kernels):
 * explicit seeds, optional skew (one output row takes a share of the
 * non-zeros) and optional empty slices (only even indices used in a mode). */
#ifndef TF_TESTS_GPU_TEST_TENSORS_H
#define TF_TESTS_GPU_TEST_TENSORS_H
#include <string.h>

#include "core/rng.h"
#include "tenfold.h"

typedef struct tt_spec {
    uint32_t order;
    uint64_t dims[TF_MAX_ORDER];
    uint64_t nnz;          /* before duplicates are merged                   */
    uint64_t seed;
    int hot_mode;          /* -1: none; else row hot_row of this mode ...    */
    uint32_t hot_row;
    double hot_share;      /* ... receives this share of the non-zeros       */
    int sparse_mode;       /* -1: none; else this mode uses even indices only */
} tt_spec;

static inline tt_spec tt_spec_make(uint32_t order, const uint64_t *dims, uint64_t nnz, uint64_t seed)
{
    tt_spec s;
    memset(&s, 0, sizeof s);
    s.order = order;
    for (uint32_t m = 0; m < order; ++m) s.dims[m] = dims[m];
    s.nnz = nnz;
    s.seed = seed;
    s.hot_mode = -1;
    s.sparse_mode = -1;
    return s;
}

/* Canonical random tensor; values uniform in [-1, 1) (zeros dropped). */
static inline tf_status tt_random(const tt_spec *sp, tf_tensor *X)
{
    tf_status s = tf_tensor_alloc(X, sp->order, sp->dims, sp->nnz);
    if (s != TF_OK) return s;
    tf_rng r;
    tf_rng_seed(&r, sp->seed);
    for (uint64_t k = 0; k < sp->nnz; ++k) {
        for (uint32_t m = 0; m < sp->order; ++m) {
            uint64_t d = sp->dims[m];
            uint64_t i = tf_rng_below(&r, d);
            if ((int)m == sp->sparse_mode && d > 1) i &= ~1ULL;
            X->ind[m][k] = (uint32_t)i;
        }
        if (sp->hot_mode >= 0 && tf_rng_uniform(&r) < sp->hot_share)
            X->ind[sp->hot_mode][k] = sp->hot_row;
        X->vals[k] = 2.0 * tf_rng_uniform(&r) - 1.0;
    }
    return tf_tensor_canonicalize(X, NULL, NULL);
}

/* A tensor from a planted rank-`rank` model with 1 % noise (tf_generate). */
static inline tf_status tt_planted(uint32_t order, const uint64_t *dims, uint64_t nnz, uint64_t rank, uint64_t seed,
                                   tf_tensor *X)
{
    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.order = order;
    for (uint32_t m = 0; m < order; ++m) g.dims[m] = dims[m];
    g.nnz = nnz;
    g.seed = seed;
    g.rank = rank;
    g.noise = 0.01;
    memset(X, 0, sizeof *X);
    return tf_generate(&g, X);
}

/* Random factor matrices dims[m] x R, entries uniform in [-1, 1). */
static inline tf_status tt_factors(const tf_tensor *X, uint64_t R, uint64_t seed, tf_matrix *F)
{
    tf_rng r;
    tf_rng_seed(&r, seed);
    for (uint32_t m = 0; m < X->order; ++m) {
        tf_status s = tf_matrix_alloc(&F[m], X->dims[m], R);
        if (s != TF_OK) return s;
        for (uint64_t i = 0; i < X->dims[m] * R; ++i) F[m].data[i] = 2.0 * tf_rng_uniform(&r) - 1.0;
    }
    return TF_OK;
}

static inline void tt_free_factors(tf_matrix *F, uint32_t order)
{
    for (uint32_t m = 0; m < order; ++m) tf_matrix_free(&F[m]);
}

/* A random order-3 tensor (dims, nnz, seed; tt_random) and its rank-R
 * factors (seed + 1; tt_factors): the small case of the bad-input tests. */
static inline tf_status tt_case3(const uint64_t *dims, uint64_t nnz, uint64_t seed, uint64_t R, tf_tensor *X,
                                 tf_matrix *F)
{
    tt_spec sp = tt_spec_make(3, dims, nnz, seed);
    memset(F, 0, TF_MAX_ORDER * sizeof *F);
    tf_status s = tt_random(&sp, X);
    return s == TF_OK ? tt_factors(X, R, seed + 1, F) : s;
}

/* A GPU MTTKRP plan of X in context ctx: format, precision, rank hint R. */
static inline tf_status tt_gpu_plan(const tf_tensor *X, tf_context *ctx, tf_format fmt, tf_precision prec,
                                    uint64_t R, tf_plan **p)
{
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.format = fmt;
    o.precision = prec;
    o.rank_hint = R;
    o.context = ctx;
    return tf_plan_build(X, &o, p);
}
#endif
