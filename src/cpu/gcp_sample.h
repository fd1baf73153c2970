/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's stratified samples on the host (Kolda & Hong 2020, GenTen's
 * "stratified" sampler): non-zeros drawn uniformly with replacement, and
 * zeros drawn as uniform coordinates, those that hit a non-zero (a hash set
 * of X's coordinates says) drawn again. Semi-stratified (GenTen's
 * "semi-stratified", Kolda & Hong section 3.3): the "zeros" are uniform
 * coordinates of the whole tensor, kept without the hash probe (value 0
 * even where they hit a non-zero), weight prod dims / gz; the non-zeros
 * then count f(x, m) - f(0, m) (cpu/gcp_kernel.c), so the sum is still
 * unbiased: sum over all entries of f(0, m) + sum over the non-zeros of
 * f(x, m) - f(0, m). Every sample j of a stream draws
 * from its own generator (splitmix64 from tf_rng_key(seed, stream, j)), so
 * the samples do not depend on the thread count. Dense mode's "sample" is
 * every entry of the tensor, weight 1. */
#ifndef TF_CPU_GCP_SAMPLE_H
#define TF_CPU_GCP_SAMPLE_H
#include "tenfold.h"

/* The coordinates of X's non-zeros, by open addressing (slot: k + 1 of the
 * non-zero, 0 empty), and a packed copy of them (non-zero k's N indices
 * side by side, its value after them: one cache line per draw and probe
 * instead of N + 1). X borrowed while it lives. */
typedef struct tf_gcp_nzset {
    const tf_tensor *X;
    uint64_t *slot;
    uint64_t mask;   /* slots - 1, slots a power of two >= 2 nnz */
    uint32_t *coord; /* nnz x stride: the indices, then the value's 2 words */
    uint32_t stride; /* order + 2 */
    int linear;      /* prod dims < 2^63: a slot holds the linear index + 1 itself
                        (a probe reads no coordinates) */
    uint64_t place[TF_MAX_ORDER]; /* linear index = sum idx[n] place[n] */
    /* MPI ranks (tf_gcp_nzset_build_part; one process: nnz = X->nnz, held
     * 0, own [0, nnz), parts 1): the whole tensor's non-zero count (the
     * draws' range), the canonical index of X's first non-zero, the
     * non-zeros this part evaluates [own_lo, own_hi), and its zeros:
     * zero draw z (0-based among the zero draws) when z % parts == part. */
    uint64_t nnz, held, own_lo, own_hi;
    uint32_t part, parts;
} tf_gcp_nzset;

tf_status tf_gcp_nzset_build(const tf_tensor *X, tf_gcp_nzset *h);
/* The set of part `part` of `parts` (MPI ranks: the same draws everywhere,
 * each part evaluating its own). keys: NULL when X is the whole tensor
 * (every part builds the set from it and owns the non-zeros [nnz p / P,
 * nnz (p + 1) / P)); else X holds the canonical non-zeros [held, held +
 * X->nnz) of a tensor of nnz_all, owned by this part, and keys the linear
 * index of every non-zero of the whole (nnz_all of them; X's dims' product
 * below 2^63), from which the slots are filled. */
tf_status tf_gcp_nzset_build_part(const tf_tensor *X, uint32_t part, uint32_t parts, uint64_t nnz_all,
                                  uint64_t held, const uint64_t *keys, tf_gcp_nzset *h);
void tf_gcp_nzset_free(tf_gcp_nzset *h);
/* 1 if the coordinate idx (order X->order) is one of X's non-zeros. */
int tf_gcp_nzset_has(const tf_gcp_nzset *h, const uint32_t *idx);

/* A sample: its first nnz_part entries are non-zeros of weight w_nz, the
 * rest zeros (value 0) of weight w_z. semi (0 after tf_gcp_samples_alloc;
 * the caller sets it before a draw): semi-stratified -- the zeros are
 * uniform over every entry (no rejection), w_z = prod dims / their count,
 * and a non-zero's loss is f(x, m) - f(0, m). */
typedef struct tf_gcp_samples {
    uint32_t order;
    uint64_t n, nnz_part, cap;
    uint32_t *ind[TF_MAX_ORDER];
    double *vals;
    double w_nz, w_z;
    int semi;
} tf_gcp_samples;

tf_status tf_gcp_samples_alloc(tf_gcp_samples *s, uint32_t order, uint64_t cap);
void tf_gcp_samples_free(tf_gcp_samples *s);

/* Draws gnz non-zeros (streams 2 stream) and gz zeros (stream 2 stream + 1)
 * of X into s (cap >= gnz + gz), weights nnz / gnz and (prod dims - nnz) /
 * gz (none when X has no zeros). threads 0 = default; the draws are the
 * same for any count. Of a part's set only the draws it owns are kept (in
 * draw order: s->n of them, the first s->nnz_part non-zeros). */
tf_status tf_gcp_draw(const tf_gcp_nzset *h, uint64_t seed, uint64_t stream, uint64_t gnz, uint64_t gz, int threads,
                      tf_gcp_samples *s);

/* The draw in parts: s's count and weights for gnz + gz samples (gz 0
 * when X has no zeros, unless s->semi; no arrays touched), then entries [j0, j1) of that
 * draw into ind[n][j - j0] and vals[j - j0] (the fused pass draws a
 * block at a time into a buffer of its own). Of a part's set only the
 * entries it owns are kept, packed at the front in draw order: returns
 * their count, *kept_nz the non-zeros among them (first). */
void tf_gcp_draw_setup(const tf_gcp_nzset *h, uint64_t gnz, uint64_t gz, tf_gcp_samples *s);
uint64_t tf_gcp_draw_range(const tf_gcp_nzset *h, uint64_t seed, uint64_t stream, const tf_gcp_samples *s,
                           uint64_t j0, uint64_t j1, uint32_t *const *ind, double *vals, uint64_t *kept_nz);

/* Every entry of X (prod dims of them, in linear order, mode 1 fastest), weight 1. */
tf_status tf_gcp_samples_dense(const tf_tensor *X, tf_gcp_samples *s);
#endif
