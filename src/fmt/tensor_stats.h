/* SPDX-License-Identifier: BSD-3-Clause */
/* Sample-based slice statistics the GPU side uses for its choices (plain
 * C, no device calls): how skewed a mode is, and which of its rows are
 * heavy enough that their atomics would serialise. Samples are evenly
 * spaced over the non-zeros, so they are deterministic. */
#ifndef TF_FMT_TENSOR_STATS_H
#define TF_FMT_TENSOR_STATS_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Share of the non-zeros in the largest slice of `mode` (sample of at most
 * `sample` non-zeros). */
double tf_gpu_mode_skew(const tf_tensor *X, uint32_t mode, uint64_t sample);

/* Up to max_rows rows of `mode` whose estimated share of the non-zeros is
 * at least min_share, heaviest first, into rows[]; returns how many. */
uint32_t tf_gpu_heavy_rows(const tf_tensor *X, uint32_t mode, uint64_t sample, double min_share,
                           uint32_t max_rows, uint32_t *rows);

#ifdef __cplusplus
}
#endif
#endif
