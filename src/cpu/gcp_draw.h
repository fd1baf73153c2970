/* SPDX-License-Identifier: BSD-3-Clause */
/* The formulas of one draw of GCP's stratified sampler (cpu/gcp_sample.h),
 * for host and device code alike (C, and CUDA's __host__ __device__), so
 * that the GPU backend (src/gpu/gcp) draws the CPU's samples for a seed and
 * stream: non-zero draw j of a stream picks X's non-zero k uniformly (its
 * own generator: splitmix64 from tf_rng_key(seed, 2 stream, j)); zero
 * draw j (0-based among the zeros) draws coordinates, mode after mode,
 * from the generator of tf_rng_key(seed, 2 stream + 1, j), again from the
 * same generator while they hit a non-zero; the hash set of the non-zeros'
 * linear indices (slot: the index + 1, 0 empty; open addressing, linear
 * probing) starts a key's probe at tf_gcp_slot_start. */
#ifndef TF_CPU_GCP_DRAW_H
#define TF_CPU_GCP_DRAW_H
#include <stdint.h>

#include "core/rng_key.h"

/* Non-zero draw j of stream `stream`: the index of the non-zero drawn, below nnz. */
TF_RNG_FN uint64_t tf_gcp_draw_nz(uint64_t seed, uint64_t stream, uint64_t j, uint64_t nnz)
{
    uint64_t x = tf_rng_key_of(seed, 2 * stream, j);
    return tf_rng_split_below(&x, nnz);
}

/* Zero draw j of stream `stream`: the generator its coordinates come from. */
TF_RNG_FN uint64_t tf_gcp_draw_zero_state(uint64_t seed, uint64_t stream, uint64_t j)
{
    return tf_rng_key_of(seed, 2 * stream + 1, j);
}

/* The next coordinates of a zero draw's generator: idx[n] below dims[n], n = 0 .. N - 1. */
TF_RNG_FN void tf_gcp_draw_coord(uint64_t *x, uint32_t N, const uint64_t *dims, uint32_t *idx)
{
    for (uint32_t n = 0; n < N; ++n) idx[n] = (uint32_t)tf_rng_split_below(x, dims[n]);
}

/* A draw of gnz non-zeros and *gz zeros of a tensor of numel entries, nnz
 * of them non-zeros: a non-zero sample weighs nnz / gnz; stratified (semi
 * 0), *gz is 0 when the tensor has no zeros and a zero sample weighs
 * (numel - nnz) / *gz; semi-stratified (semi 1), a "zero" draw is any
 * entry (no rejection) and weighs numel / *gz (0 when there are none). */
TF_RNG_FN void tf_gcp_draw_weights(double numel, uint64_t nnz, uint64_t gnz, int semi, uint64_t *gz, double *w_nz,
                                   double *w_z)
{
    if (numel <= (double)nnz && !semi) *gz = 0; /* no zeros to draw */
    *w_nz = gnz ? (double)nnz / (double)gnz : 0.0;
    *w_z = *gz ? (semi ? numel : numel - (double)nnz) / (double)*gz : 0.0;
}

/* The slot where the probe of key (a linear index + 1) starts, in a set of mask + 1 slots. */
TF_RNG_FN uint64_t tf_gcp_slot_start(uint64_t key, uint64_t mask)
{
    return tf_rng_mix64(key) & mask;
}
#endif
