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

#ifdef __cplusplus
}
#endif
#endif
