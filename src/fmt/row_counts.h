/* SPDX-License-Identifier: BSD-3-Clause */
/* Non-zeros per row of one mode, on the host's threads (the partition of
 * several GPUs' or ranks' rows, the several-GPU Tucker's cut). */
#ifndef TF_FMT_ROW_COUNTS_H
#define TF_FMT_ROW_COUNTS_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* count[i] (I = X->dims[m] entries, zeroed here) = the non-zeros of row i
 * of mode m, on `threads` threads (0: the default): each thread counts its
 * rows in a small private cache and adds them atomically when they leave
 * it (the counts, integers, are the same on any team); large inputs are
 * grouped by row first (tf_count_rows_grouped). */
void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count);
/* The way tf_count_rows takes for a large input with a long mode (16M
 * non-zeros and 65536 rows or more): the indices first grouped by their
 * high bits into a copy (4 bytes a non-zero), then counted group after
 * group, so the counts' table is touched a slice at a time; fails only
 * when the copy cannot be allocated. Exposed for the tests. */
tf_status tf_count_rows_grouped(const tf_tensor *X, uint32_t m, int threads, uint64_t *count);

#ifdef __cplusplus
}
#endif
#endif
