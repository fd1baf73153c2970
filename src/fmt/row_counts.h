/* SPDX-License-Identifier: BSD-3-Clause */
/* Non-zeros per row of one mode, on the host's threads (the several-GPU
 * Tucker's cut of the rows over its GPUs). */
#ifndef TF_FMT_ROW_COUNTS_H
#define TF_FMT_ROW_COUNTS_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* count[i] (I = X->dims[m] entries, zeroed here) = the non-zeros of row i
 * of mode m, on `threads` threads (0: the default) with atomic adds (the
 * counts, integers, are the same on any team). */
void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count);

#ifdef __cplusplus
}
#endif
#endif
