/* SPDX-License-Identifier: BSD-3-Clause */
/* The non-zeros of a tensor split by ranges of one mode's rows (a GPU's or
 * a rank's rows), in the input's order, in one parallel count-then-scatter
 * over fixed blocks of the non-zeros: the same output on any team. */
#ifndef TF_FMT_ROW_SPLIT_H
#define TF_FMT_ROW_SPLIT_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* out[p] (p < parts, allocated here, freed with tf_split_rows_free; all
 * freed on failure) = the non-zeros k of X with lo[p] <= X->ind[m][k] < lo[p+1],
 * in X's order, over X's dims and labels. lo: parts + 1 non-decreasing
 * bounds; indices outside [lo[0], lo[parts]) go nowhere. threads: 0 = the
 * default team. */
tf_status tf_split_rows(const tf_tensor *X, uint32_t m, int parts, const uint64_t *lo, int threads, tf_tensor *out);

void tf_split_rows_free(tf_tensor *out, int parts);

/* count[i] (I = X->dims[m] entries, zeroed here) = the non-zeros of row i
 * of mode m, on `threads` threads (0: the default) with atomic adds. */
void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count);

#ifdef __cplusplus
}
#endif
#endif
