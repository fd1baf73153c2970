/* SPDX-License-Identifier: BSD-3-Clause */
/* Sample-based slice statistics; see tensor_stats.h. */
#include "fmt/tensor_stats.h"

#include <stdlib.h>

#include "core/alloc.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorted sample of mode's indices; *n gets its size (0 on failure). */
static uint32_t *sorted_sample(const tf_tensor *X, uint32_t mode, uint64_t sample, uint64_t *n)
{
    *n = 0;
    if (X->nnz == 0 || sample == 0) return NULL;
    const uint64_t S = X->nnz < sample ? X->nnz : sample;
    uint32_t *s = NULL;
    if (TF_ALLOC(s, S, "slice sample") != TF_OK) return NULL; /* no estimate: treated as even */
    for (uint64_t i = 0; i < S; ++i) s[i] = X->ind[mode][(uint64_t)((double)i * X->nnz / S)];
    qsort(s, S, sizeof *s, cmp_u32);
    *n = S;
    return s;
}

double tf_gpu_mode_skew(const tf_tensor *X, uint32_t mode, uint64_t sample)
{
    uint64_t S = 0, best = 1, run = 1;
    uint32_t *s = sorted_sample(X, mode, sample, &S);
    if (!s) return 0.0;
    for (uint64_t i = 1; i < S; ++i) {
        run = s[i] == s[i - 1] ? run + 1 : 1;
        if (run > best) best = run;
    }
    tf_free(s);
    return (double)best / (double)S;
}

uint32_t tf_gpu_heavy_rows(const tf_tensor *X, uint32_t mode, uint64_t sample, double min_share,
                           uint32_t max_rows, uint32_t *rows)
{
    uint64_t S = 0;
    uint32_t *s = sorted_sample(X, mode, sample, &S);
    if (!s) return 0;
    uint64_t cnt[64];
    uint32_t n = 0;
    if (max_rows > 64) max_rows = 64;
    for (uint64_t i = 0; i < S;) {
        uint64_t j = i;
        while (j < S && s[j] == s[i]) ++j;
        const uint64_t c = j - i;
        if ((double)c >= min_share * (double)S && max_rows) {
            /* keep the max_rows heaviest, sorted by count (heaviest first) */
            uint32_t at;
            if (n < max_rows) at = n++;
            else if (cnt[n - 1] < c) at = n - 1;
            else at = max_rows; /* lighter than all kept */
            if (at < max_rows) {
                for (; at > 0 && cnt[at - 1] < c; --at) { rows[at] = rows[at - 1]; cnt[at] = cnt[at - 1]; }
                rows[at] = s[i];
                cnt[at] = c;
            }
        }
        i = j;
    }
    tf_free(s);
    return n;
}
