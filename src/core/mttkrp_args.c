/* SPDX-License-Identifier: BSD-3-Clause */
/* The argument check every MTTKRP entry point shares. */
#include "core/mttkrp_args.h"

#include "core/error.h"

tf_status tf_check_mttkrp_args(const char *who, uint32_t order, const uint64_t *dims, uint32_t mode,
                               const tf_matrix *factors, const tf_matrix *out)
{
    if (mode >= order)
        return tf_fail(TF_ERR_ARG, "%s: mode %llu is outside 1..%u", who, (unsigned long long)mode + 1, order);
    if (!factors) return tf_fail(TF_ERR_ARG, "%s: factors is NULL", who);
    if (!out) return tf_fail(TF_ERR_ARG, "%s: out is NULL", who);
    if (!out->data) return tf_fail(TF_ERR_ARG, "%s: out has no data (NULL)", who);
    uint64_t R = out->cols;
    if (R == 0) return tf_fail(TF_ERR_ARG, "%s: out has 0 columns (the rank must be at least 1)", who);
    if (out->rows != dims[mode])
        return tf_fail(TF_ERR_ARG, "%s: out has %llu rows, mode %u has length %llu", who,
                       (unsigned long long)out->rows, mode + 1, (unsigned long long)dims[mode]);
    for (uint32_t m = 0; m < order; ++m) {
        if (m == mode) continue;
        if (!factors[m].data || factors[m].rows != dims[m] || factors[m].cols != R)
            return tf_fail(TF_ERR_ARG,
                           "%s: factor %u is %llu x %llu, expected %llu x %llu (mode length x rank)", who,
                           m + 1, (unsigned long long)factors[m].rows,
                           (unsigned long long)factors[m].cols, (unsigned long long)dims[m],
                           (unsigned long long)R);
    }
    return TF_OK;
}

