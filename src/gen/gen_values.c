/* SPDX-License-Identifier: BSD-3-Clause */
/* Values of generated tensors: a planted rank-R model with optional
 * Gaussian noise, or uniform values in (0,1], or counts (Poisson draws,
 * around the planted model if there is one). Every random number comes
 * from a stream tied to a fixed block of positions, and sums are taken per
 * block in a fixed order, so the result does not depend on the thread count. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "gen/gen.h"

#define VALUE_BLOCK TF_GEN_VALUE_BLOCK

/* Where a piece of the whole sits: its first block, the whole's non-zeros,
 * and how the whole's sums are had (NULL: the piece is the whole). */
typedef struct piece {
    uint64_t first_block, total_nnz;
    tf_gen_sums_fn sums;
    void *user;
} piece;

tf_status tf_gen_model(const tf_gen_opts *o, tf_ktensor *k)
{
    if (o->rank == 0) return tf_fail(TF_ERR_ARG, "the planted model needs rank >= 1");
    TF_TRY(tf_ktensor_alloc(k, o->order, o->dims, o->rank));
    for (uint64_t r = 0; r < o->rank; ++r) k->lambda[r] = 1.0;
    for (uint32_t m = 0; m < o->order; ++m) {
        tf_rng rng;
        tf_rng_seed(&rng, tf_gen_stream_seed(o->seed, TF_GEN_TAG_FACTOR, m));
        double *a = k->factors[m].data;
        const uint64_t n = k->factors[m].rows * k->factors[m].cols;
        for (uint64_t i = 0; i < n; ++i) a[i] = tf_rng_uniform(&rng);
    }
    return TF_OK;
}

/* value = sum_r prod_m A_m(i_m, r) */
static double model_value(const tf_ktensor *k, const tf_tensor *t, uint64_t nz)
{
    const uint64_t R = k->rank;
    double v = 0.0;
    for (uint64_t r = 0; r < R; ++r) {
        double p = 1.0;
        for (uint32_t m = 0; m < t->order; ++m) p *= k->factors[m].data[(uint64_t)t->ind[m][nz] * R + r];
        v += p;
    }
    return v;
}

/* Keeps the tensor canonical: an exact zero (probability ~2^-53 per entry)
 * becomes the smallest normal double instead of an explicit zero. */
static inline double nonzero(double v) { return v == 0.0 ? DBL_MIN : v; }

/* The planted model's values into t->vals; *sum and *sumsq the sums of
 * them and of their squares (block sums added in order). */
static tf_status model_values(const tf_gen_opts *o, const piece *pc, tf_tensor *t, double *sum, double *sumsq)
{
    tf_ktensor k = {0};
    TF_TRY(tf_gen_model(o, &k));
    const uint64_t nnz = t->nnz, nblocks = (nnz + VALUE_BLOCK - 1) / VALUE_BLOCK;
    const int T = tf_resolve_threads(o->threads);
    double *part = NULL;
    tf_status s = TF_CALLOC(part, 2 * (nblocks ? nblocks : 1), "generator block sums");
    if (s != TF_OK) {
        tf_ktensor_free(&k);
        return s;
    }
#pragma omp parallel for schedule(dynamic, 4) num_threads(T) if (nblocks > 1)
    for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
        uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
        double s1 = 0.0, s2 = 0.0;
        for (uint64_t z = lo; z < hi; ++z) {
            const double v = model_value(&k, t, z);
            t->vals[z] = v;
            s1 += v;
            s2 += v * v;
        }
        part[2 * b] = s1;
        part[2 * b + 1] = s2;
    }
    *sum = *sumsq = 0.0;
    if (pc->sums) {
        s = pc->sums(pc->user, part, pc->first_block, nblocks, sum, sumsq);
    } else {
        for (uint64_t b = 0; b < nblocks; ++b) {
            *sum += part[2 * b];
            *sumsq += part[2 * b + 1];
        }
    }
    tf_free(part);
    tf_ktensor_free(&k);
    return s;
}

static tf_status planted_values(const tf_gen_opts *o, const piece *pc, tf_tensor *t)
{
    const uint64_t nnz = t->nnz, nblocks = (nnz + VALUE_BLOCK - 1) / VALUE_BLOCK;
    const int T = tf_resolve_threads(o->threads);
    double sum, sq;
    TF_TRY(model_values(o, pc, t, &sum, &sq));
    if (o->noise > 0 && nnz > 0) {
        const double scale = o->noise * sqrt(sq / (double)pc->total_nnz);
#pragma omp parallel for schedule(dynamic, 4) num_threads(T) if (nblocks > 1)
        for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
            tf_rng rng;
            tf_rng_seed(&rng, tf_gen_stream_seed(o->seed, TF_GEN_TAG_NOISE, pc->first_block + (uint64_t)b));
            uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
            for (uint64_t z = lo; z < hi; ++z) t->vals[z] += scale * tf_rng_normal(&rng);
        }
    }
    const int64_t n = (int64_t)nnz;
#pragma omp parallel for schedule(static) num_threads(T) if (nblocks > 1)
    for (int64_t z = 0; z < n; ++z) t->vals[z] = nonzero(t->vals[z]);
    return TF_OK;
}

/* Counts of mean o->counts: 1 + Poisson(counts - 1), scaled by the planted
 * model's value over its mean when there is one (every value >= 1, so
 * every coordinate stays a non-zero). */
static tf_status count_values(const tf_gen_opts *o, const piece *pc, tf_tensor *t)
{
    const uint64_t nnz = t->nnz, nblocks = (nnz + VALUE_BLOCK - 1) / VALUE_BLOCK;
    double mean = 1.0, sq;
    if (o->rank > 0 && pc->total_nnz > 0) {
        TF_TRY(model_values(o, pc, t, &mean, &sq));
        mean /= (double)pc->total_nnz;
    }
    const int T = tf_resolve_threads(o->threads);
    const double extra = o->counts - 1.0;
#pragma omp parallel for schedule(dynamic, 4) num_threads(T) if (nblocks > 1)
    for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
        tf_rng rng;
        tf_rng_seed(&rng, tf_gen_stream_seed(o->seed, TF_GEN_TAG_COUNT, pc->first_block + (uint64_t)b));
        uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
        for (uint64_t z = lo; z < hi; ++z) {
            const double lam = o->rank > 0 && mean > 0.0 ? extra * t->vals[z] / mean : extra;
            t->vals[z] = 1.0 + (double)tf_rng_poisson(&rng, lam);
        }
    }
    return TF_OK;
}

static void uniform_values(const tf_gen_opts *o, const piece *pc, tf_tensor *t)
{
    const uint64_t nnz = t->nnz, nblocks = (nnz + VALUE_BLOCK - 1) / VALUE_BLOCK;
    const int T = tf_resolve_threads(o->threads);
#pragma omp parallel for schedule(static) num_threads(T) if (nblocks > 1)
    for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
        tf_rng rng;
        tf_rng_seed(&rng, tf_gen_stream_seed(o->seed, TF_GEN_TAG_VALUE, pc->first_block + (uint64_t)b));
        uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
        for (uint64_t z = lo; z < hi; ++z) t->vals[z] = 1.0 - tf_rng_uniform(&rng); /* (0,1] */
    }
}

tf_status tf_gen_values_blocks(const tf_gen_opts *o, tf_tensor *t, uint64_t first_block, uint64_t total_nnz,
                               tf_gen_sums_fn sums, void *user)
{
    const piece pc = {first_block, total_nnz, sums, user};
    if (o->counts >= 1.0) return count_values(o, &pc, t);
    if (o->rank > 0) return planted_values(o, &pc, t);
    uniform_values(o, &pc, t);
    return TF_OK;
}

tf_status tf_gen_values(const tf_gen_opts *o, tf_tensor *t)
{
    return tf_gen_values_blocks(o, t, 0, t->nnz, NULL, NULL);
}
