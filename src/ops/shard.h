/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (AMPED, sec. 4): per output mode, the index
 * range cut into one contiguous range of rows per rank, balanced by
 * non-zeros, and the non-zeros whose index falls in a rank's range. */
#ifndef TF_OPS_SHARD_H
#define TF_OPS_SHARD_H
#include "tenfold.h"

/* row_lo[0..size]: rank r's rows of `mode` are [row_lo[r], row_lo[r+1]),
 * each rank's share of the non-zeros as close to nnz / size as whole rows
 * allow (a row is never split: no two ranks update one factor row). */
tf_status tf_shard_rows(const tf_tensor *X, uint32_t mode, int size, uint64_t *row_lo);
/* The non-zeros of X whose mode index lies in [lo, hi), in X's order, with
 * X's dims (out is allocated; free with tf_tensor_free). */
tf_status tf_shard_tensor(const tf_tensor *X, uint32_t mode, uint64_t lo, uint64_t hi, tf_tensor *out);
#endif
