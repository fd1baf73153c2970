/* SPDX-License-Identifier: BSD-3-Clause */
/* What the one-GPU and the several-GPU Tucker backends (backend.cu,
 * multi.cu) share on the host: the columns of Y_(n), and the core from its
 * unfolding G_(n) as the CPU backend forms it (the same sum, the same
 * places). */
#ifndef TF_GPU_TUCKER_COMMON_CUH
#define TF_GPU_TUCKER_COMMON_CUH
#include <stdint.h>

#include "gpu/runtime/limits.cuh"

/* The columns of Y_(n): the product of the other ranks. */
static inline uint64_t tf_tucker_cols(uint32_t N, const uint64_t *ranks, uint32_t n)
{
    uint64_t c = 1;
    for (uint32_t k = 0; k < N; ++k)
        if (k != n) c *= ranks[k];
    return c;
}

/* Gn (r x C row-major, G_(n)(a, x) at a C + x, r = ranks[n]) into core
 * (mode 1 fastest); returns ||G||^2 summed in Gn's order. */
static inline double tf_tucker_core_place(uint32_t N, const uint64_t *ranks, uint32_t n, const double *Gn, double *core)
{
    const uint64_t C = tf_tucker_cols(N, ranks, n), r = ranks[n];
    double ss = 0.0;
    for (uint64_t e = 0; e < r * C; ++e) ss += Gn[e] * Gn[e];
    uint64_t stride[TF_GPU_MAX_ORDER], s = 1;
    for (uint32_t k = 0; k < N; ++k) stride[k] = s, s *= ranks[k];
    for (uint64_t x = 0; x < C; ++x) {
        uint64_t rest = x, at = 0;
        for (uint32_t k = 0; k < N; ++k) {
            if (k == n) continue;
            at += (rest % ranks[k]) * stride[k];
            rest /= ranks[k];
        }
        for (uint64_t a = 0; a < r; ++a) core[at + a * stride[n]] = Gn[a * C + x];
    }
    return ss;
}
#endif
