/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_tensor_canonicalize with a choice for the entries of value 0. */
#ifndef TF_CORE_CANONICAL_H
#define TF_CORE_CANONICAL_H
#include <stdint.h>

#include "tenfold.h"

/* Sorts t, sums the duplicates of each coordinate; keep_zeros 0 drops the
 * coordinates whose value (or sum) is 0, 1 keeps them (observed zeros of a
 * completion's data). *zeros (may be NULL): how many such coordinates
 * there were (dropped or kept). */
tf_status tf_tensor_canonicalize_zeros(tf_tensor *t, int keep_zeros, uint64_t *duplicates, uint64_t *zeros);

#endif
