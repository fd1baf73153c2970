/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain float64 reference MTTKRP: one pass over the COO list, no reordering,
 * no threads. The tests compare every kernel with it. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/mttkrp_args.h"

tf_status tf_mttkrp_reference(const tf_tensor *X, uint32_t mode, const tf_matrix *factors,
                              tf_matrix *out)
{
    static const char who[] = "tf_mttkrp_reference";
    if (!X) return tf_fail(TF_ERR_ARG, "%s: X is NULL", who);
    TF_TRY(tf_tensor_validate(X)); /* its indices address the rows of out and the factors */
    TF_TRY(tf_check_mttkrp_args(who, X->order, X->dims, mode, factors, out));
    const uint64_t R = out->cols;
    double *row = NULL;
    TF_TRY(TF_ALLOC(row, R, "reference MTTKRP row"));
    memset(out->data, 0, out->rows * R * sizeof(double));
    for (uint64_t k = 0; k < X->nnz; ++k) {
        for (uint64_t r = 0; r < R; ++r) row[r] = X->vals[k];
        for (uint32_t m = 0; m < X->order; ++m) {
            if (m == mode) continue;
            const double *f = factors[m].data + (uint64_t)X->ind[m][k] * R;
            for (uint64_t r = 0; r < R; ++r) row[r] *= f[r];
        }
        double *o = out->data + (uint64_t)X->ind[mode][k] * R;
        for (uint64_t r = 0; r < R; ++r) o[r] += row[r];
    }
    tf_free(row);
    return TF_OK;
}
