/* SPDX-License-Identifier: BSD-3-Clause */
/* The semi-sparse result of SpTTM (tf_semisparse): freeing it and its
 * non-zero entries as a sparse tensor. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

void tf_semisparse_free(tf_semisparse *y)
{
    if (!y) return;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_free(y->ind[m]);
    tf_free(y->vals);
    memset(y, 0, sizeof *y);
}

tf_status tf_semisparse_to_tensor(const tf_semisparse *y, tf_tensor *out)
{
    memset(out, 0, sizeof *out);
    if (!y || y->mode >= y->order) return tf_fail(TF_ERR_ARG, "semi-sparse tensor is NULL or has no dense mode");
    const uint64_t R = y->dims[y->mode];
    uint64_t nnz = 0;
    for (uint64_t k = 0; k < y->nfibers * R; ++k) nnz += y->vals[k] != 0.0;
    TF_TRY(tf_tensor_alloc(out, y->order, y->dims, nnz));
    uint64_t e = 0;
    for (uint64_t f = 0; f < y->nfibers; ++f)
        for (uint64_t r = 0; r < R; ++r) {
            const double v = y->vals[f * R + r];
            if (v == 0.0) continue;
            for (uint32_t m = 0; m < y->order; ++m) out->ind[m][e] = m == y->mode ? (uint32_t)r : y->ind[m][f];
            out->vals[e++] = v;
        }
    return TF_OK;
}
