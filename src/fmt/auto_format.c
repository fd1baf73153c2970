/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU `auto` format rule; see auto_format.h for the rule itself. */
#include "fmt/auto_format.h"

#include <stdio.h>

#include "core/error.h"
#include "fmt/blco.h"
#include "fmt/fcoo.h"
#include "fmt/tensor_stats.h"

uint64_t tf_gpu_format_bytes(const tf_tensor *X, tf_format fmt, uint32_t value_bytes)
{
    switch (fmt) {
    case TF_FORMAT_BLCO: return tf_blco_bytes_estimate(X, value_bytes);
    case TF_FORMAT_FCOO: {
        uint64_t b = 0;
        for (uint32_t m = 0; m < X->order; ++m) b += tf_fcoo_bytes_estimate(X, m, 32, value_bytes);
        return b;
    }
    case TF_FORMAT_COO: return X->nnz * (X->order * sizeof(uint32_t) + value_bytes);
    default: return UINT64_MAX;
    }
}

tf_status tf_gpu_auto_format(const tf_tensor *X, uint64_t rank, uint32_t value_bytes,
                             uint64_t budget_bytes, int allow_stream, tf_format *fmt, char *why,
                             size_t why_len)
{
    char dummy[8];
    if (!why || !why_len) { why = dummy; why_len = sizeof dummy; }
    uint64_t dense = 0, maxdim = 0;
    for (uint32_t m = 0; m < X->order; ++m) {
        dense += X->dims[m] * rank * value_bytes;
        if (X->dims[m] > maxdim) maxdim = X->dims[m];
    }
    dense += maxdim * rank * value_bytes;
    const double budget = (double)budget_bytes;
    uint64_t need[TF_FORMAT_BLCO + 1] = {0};
    int fits[TF_FORMAT_BLCO + 1] = {0};
    const tf_format cand[] = {TF_FORMAT_COO, TF_FORMAT_FCOO, TF_FORMAT_BLCO};
    for (int i = 0; i < 3; ++i) {
        uint64_t b = tf_gpu_format_bytes(X, cand[i], value_bytes);
        need[cand[i]] = b == UINT64_MAX ? UINT64_MAX : b + dense;
        fits[cand[i]] = b != UINT64_MAX && (double)need[cand[i]] <= budget;
    }

    /* 1. hypersparse blocks */
    tf_blco_layout lay;
    tf_blco_layout_init(X->order, X->dims, &lay);
    if (X->order <= 8 && lay.alto_bits > 64 && fits[TF_FORMAT_COO]) {
        uint32_t extra = lay.alto_bits - 64;
        if (extra >= 63 || (1ULL << extra) > X->nnz / 64) {
            *fmt = TF_FORMAT_COO;
            snprintf(why, why_len, "coo: the linearised index needs %u bits, BLCO blocks would be tiny",
                     lay.alto_bits);
            return TF_OK;
        }
    }
    /* 2. F-COO when its per-mode copies fit, 3. else the single BLCO copy, 4. else COO */
    const tf_format order_pref[] = {TF_FORMAT_FCOO, TF_FORMAT_BLCO, TF_FORMAT_COO};
    for (int i = 0; i < 3; ++i)
        if (fits[order_pref[i]]) {
            *fmt = order_pref[i];
            double share = 0.0;
            uint32_t heavy = 0;
            for (uint32_t m = 0; m < X->order && *fmt == TF_FORMAT_FCOO; ++m) {
                const double sh = tf_gpu_mode_skew(X, m, TF_AUTO_SAMPLE);
                if (sh > share) { share = sh; heavy = m; }
            }
            if (*fmt == TF_FORMAT_FCOO && share >= TF_AUTO_HEAVY_SHARE)
                snprintf(why, why_len, "fcoo: fits; mode %u's largest slice holds %.0f%% of the non-zeros",
                         heavy + 1, 100.0 * share);
            else
                snprintf(why, why_len, "%s: %sfits (%.1f of a %.1f MiB budget)", tf_format_name(*fmt),
                         *fmt == TF_FORMAT_FCOO ? "" : *fmt == TF_FORMAT_BLCO ? "fcoo does not fit, " :
                         "fcoo and blco do not fit, ",
                         (double)need[*fmt] / (1 << 20), (double)budget_bytes / (1 << 20));
            return TF_OK;
        }
    if (allow_stream && X->nnz > 0) {
        *fmt = TF_FORMAT_FCOO;
        snprintf(why, why_len, "fcoo streamed from host memory: no format fits (BLCO needs %.1f MiB with the "
                 "factors, the budget is %.1f MiB)", (double)need[TF_FORMAT_BLCO] / (1 << 20),
                 (double)budget_bytes / (1 << 20));
        return TF_OK;
    }
    return tf_fail(TF_ERR_NOMEM,
                   "the tensor does not fit on the GPU in any format: BLCO needs %.1f MiB with the "
                   "rank-%llu factors and the budget is %.1f MiB (90%% of the free memory, or the "
                   "context's memory limit)",
                   (double)need[TF_FORMAT_BLCO] / (1 << 20), (unsigned long long)rank,
                   (double)budget_bytes / (1 << 20));
}
