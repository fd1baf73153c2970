/* SPDX-License-Identifier: BSD-3-Clause */
/* Values of generated tensors: a planted rank-R model with optional
 * Gaussian noise, or uniform values in (0,1]. Every random number comes
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

#define VALUE_BLOCK 65536ULL

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

static tf_status planted_values(const tf_gen_opts *o, tf_tensor *t)
{
    tf_ktensor k = {0};
    TF_TRY(tf_gen_model(o, &k));
    const uint64_t nnz = t->nnz, nblocks = (nnz + VALUE_BLOCK - 1) / VALUE_BLOCK;
    const int T = tf_resolve_threads(o->threads);
    double *block_sq = NULL;
    tf_status s = TF_CALLOC(block_sq, nblocks ? nblocks : 1, "generator block sums");
    if (s != TF_OK) { tf_ktensor_free(&k); return s; }

#pragma omp parallel for schedule(dynamic, 4) num_threads(T) if (nblocks > 1)
    for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
        uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
        double sq = 0.0;
        for (uint64_t z = lo; z < hi; ++z) {
            double v = model_value(&k, t, z);
            t->vals[z] = v;
            sq += v * v;
        }
        block_sq[b] = sq;
    }
    if (o->noise > 0 && nnz > 0) {
        double sq = 0.0;
        for (uint64_t b = 0; b < nblocks; ++b) sq += block_sq[b];
        const double scale = o->noise * sqrt(sq / (double)nnz);
#pragma omp parallel for schedule(dynamic, 4) num_threads(T) if (nblocks > 1)
        for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
            tf_rng rng;
            tf_rng_seed(&rng, tf_gen_stream_seed(o->seed, TF_GEN_TAG_NOISE, (uint64_t)b));
            uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
            for (uint64_t z = lo; z < hi; ++z) t->vals[z] += scale * tf_rng_normal(&rng);
        }
    }
    const int64_t n = (int64_t)nnz;
#pragma omp parallel for schedule(static) num_threads(T) if (nblocks > 1)
    for (int64_t z = 0; z < n; ++z) t->vals[z] = nonzero(t->vals[z]);
    tf_free(block_sq);
    tf_ktensor_free(&k);
    return TF_OK;
}

static void uniform_values(const tf_gen_opts *o, tf_tensor *t)
{
    const uint64_t nnz = t->nnz, nblocks = (nnz + VALUE_BLOCK - 1) / VALUE_BLOCK;
    const int T = tf_resolve_threads(o->threads);
#pragma omp parallel for schedule(static) num_threads(T) if (nblocks > 1)
    for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
        tf_rng rng;
        tf_rng_seed(&rng, tf_gen_stream_seed(o->seed, TF_GEN_TAG_VALUE, (uint64_t)b));
        uint64_t lo = (uint64_t)b * VALUE_BLOCK, hi = lo + VALUE_BLOCK < nnz ? lo + VALUE_BLOCK : nnz;
        for (uint64_t z = lo; z < hi; ++z) t->vals[z] = 1.0 - tf_rng_uniform(&rng); /* (0,1] */
    }
}

tf_status tf_gen_values(const tf_gen_opts *o, tf_tensor *t)
{
    if (o->rank > 0) return planted_values(o, t);
    uniform_values(o, t);
    return TF_OK;
}
