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
 * it (the counts, integers, are the same on any team). */
void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count);
/* The same by blocks of 2^shift consecutive rows, for cuts that need the
 * exact counts only near their boundaries (the partitioner): */
/* how many blocks mode m has */
uint64_t tf_row_blocks(const tf_tensor *X, uint32_t m, uint32_t shift);
/* count[b] = the non-zeros of rows [b 2^shift, (b+1) 2^shift), one private
 * table per thread (a few thousand blocks: in cache, no atomics), summed */
tf_status tf_count_row_blocks(const tf_tensor *X, uint32_t m, uint32_t shift, int threads, uint64_t *count);
/* The rows of the blocks b with slot[b] >= 0 (slot: tf_row_blocks entries,
 * slots of them in use): count[slot[b] 2^shift + j] = the non-zeros of row
 * b 2^shift + j (slots 2^shift entries, zeroed here); others not counted. */
void tf_count_rows_of_blocks(const tf_tensor *X, uint32_t m, uint32_t shift, const int32_t *slot, int slots,
                             int threads, uint64_t *count);

#ifdef __cplusplus
}
#endif
#endif
