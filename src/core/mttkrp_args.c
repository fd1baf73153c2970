/* SPDX-License-Identifier: BSD-3-Clause */
/* The argument check every MTTKRP entry point shares. */
#include "core/mttkrp_args.h"

#include "core/error.h"

tf_status tf_check_mttkrp_args(uint32_t order, const uint64_t *dims, uint32_t mode,
                               const tf_matrix *factors, const tf_matrix *out)
{
    if (mode >= order)
        return tf_fail(TF_ERR_ARG, "MTTKRP mode %u is outside 1..%u", mode + 1, order);
    if (!factors || !out || !out->data)
        return tf_fail(TF_ERR_ARG, "MTTKRP: missing factor or output matrix");
    uint64_t R = out->cols;
    if (R == 0) return tf_fail(TF_ERR_ARG, "MTTKRP: rank must be at least 1");
    if (out->rows != dims[mode])
        return tf_fail(TF_ERR_ARG, "MTTKRP output has %llu rows, mode %u has length %llu",
                       (unsigned long long)out->rows, mode + 1, (unsigned long long)dims[mode]);
    for (uint32_t m = 0; m < order; ++m) {
        if (m == mode) continue;
        if (!factors[m].data || factors[m].rows != dims[m] || factors[m].cols != R)
            return tf_fail(TF_ERR_ARG,
                           "factor %u is %llu x %llu, expected %llu x %llu (mode length x rank)",
                           m + 1, (unsigned long long)factors[m].rows,
                           (unsigned long long)factors[m].cols, (unsigned long long)dims[m],
                           (unsigned long long)R);
    }
    return TF_OK;
}

