/* SPDX-License-Identifier: BSD-3-Clause */
/* What every CP method shares at its two ends, on the host: the start (the
 * random one from a seed, or the caller's) and the final arrangement. */
#ifndef TF_ALGO_CP_ENDS_H
#define TF_ALGO_CP_ENDS_H
#include "tenfold.h"

/* Every factor of k (allocated) uniform in [0,1), drawn from one stream in
 * mode, row, column order (the same seed gives the same start on every
 * machine and thread count); lambda = 1. */
void tf_cp_start_random(tf_ktensor *k, uint64_t seed);
/* k (allocated, init's shape; checked by the caller) <- init. With fold,
 * init's lambda (NULL: ones) is folded into the first factor and k's lambda
 * is 1 (the model is the same); without, lambda is copied (NULL: ones). */
void tf_cp_start_given(tf_ktensor *k, const tf_ktensor *init, int fold);
/* Tensor Toolbox `arrange`: every column scaled to unit 2-norm (norm1: unit
 * 1-norm, pyttb's normtype=1), the norms multiplied into lambda (a zero
 * column makes its lambda 0), then the components sorted by lambda, largest
 * first (stable). A non-finite entry is TF_ERR_NUMERIC. */
tf_status tf_cp_arrange(tf_ktensor *k, int norm1);
#endif
