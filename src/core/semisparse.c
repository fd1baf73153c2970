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
    static const char who[] = "tf_semisparse_to_tensor";
    if (!out) return tf_fail(TF_ERR_ARG, "%s: out is NULL", who);
    memset(out, 0, sizeof *out);
    if (!y) return tf_fail(TF_ERR_ARG, "%s: y is NULL", who);
    if (y->order < TF_MIN_ORDER || y->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "%s: y has order %u (expected %d..%d)", who, y->order, TF_MIN_ORDER, TF_MAX_ORDER);
    if (y->mode >= y->order)
        return tf_fail(TF_ERR_ARG, "%s: y's dense mode %llu is outside 1..%u", who, (unsigned long long)y->mode + 1,
                       y->order);
    const uint64_t R = y->dims[y->mode];
    if (y->nfibers && R && !y->vals) return tf_fail(TF_ERR_ARG, "%s: y has %llu fibres but no values (NULL)", who,
                                                    (unsigned long long)y->nfibers);
    for (uint32_t m = 0; m < y->order; ++m)
        if (m != y->mode && y->nfibers && !y->ind[m])
            return tf_fail(TF_ERR_ARG, "%s: y has %llu fibres but no indices of mode %u (NULL)", who,
                           (unsigned long long)y->nfibers, m + 1);
    if (R && y->nfibers > UINT64_MAX / R) return tf_fail(TF_ERR_RANGE, "%s: y's %llu fibres x %llu overflow", who,
                                                         (unsigned long long)y->nfibers, (unsigned long long)R);
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
