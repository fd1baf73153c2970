/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (shard.h). */
#include "ops/shard.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

tf_status tf_shard_rows(const tf_tensor *X, uint32_t mode, int size, uint64_t *row_lo)
{
    const uint64_t I = X->dims[mode];
    uint64_t *count = NULL;
    TF_TRY(TF_CALLOC(count, I ? I : 1, "non-zeros per row"));
    for (uint64_t k = 0; k < X->nnz; ++k) count[X->ind[mode][k]]++;
    /* rank r takes rows while its share stays at most the running target
     * (r+1)/size of the non-zeros, and one more where that lands closer */
    uint64_t row = 0, seen = 0;
    row_lo[0] = 0;
    for (int r = 0; r + 1 < size; ++r) {
        const uint64_t target = (uint64_t)((unsigned __int128)X->nnz * (unsigned)(r + 1) / (unsigned)size);
        while (row < I && seen + count[row] <= target) seen += count[row++];
        if (row < I && seen < target && 2 * (target - seen) > count[row]) seen += count[row++];
        row_lo[r + 1] = row;
    }
    row_lo[size] = I;
    tf_free(count);
    return TF_OK;
}

tf_status tf_shard_tensor(const tf_tensor *X, uint32_t mode, uint64_t lo, uint64_t hi, tf_tensor *out)
{
    uint64_t n = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) n += X->ind[mode][k] >= lo && X->ind[mode][k] < hi;
    TF_TRY(tf_tensor_alloc(out, X->order, X->dims, n));
    uint64_t at = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const uint32_t i = X->ind[mode][k];
        if (i < lo || i >= hi) continue;
        for (uint32_t m = 0; m < X->order; ++m) out->ind[m][at] = X->ind[m][k];
        out->vals[at++] = X->vals[k];
    }
    return TF_OK;
}
