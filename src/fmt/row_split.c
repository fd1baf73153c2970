/* SPDX-License-Identifier: BSD-3-Clause */
#include "fmt/row_split.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

static inline uint64_t block_lo(uint64_t n, int t, int T) { return (uint64_t)((unsigned __int128)n * t / T); }

/* The part of row i (binary search over lo), or -1. */
static inline int part_of(const uint64_t *lo, int parts, uint64_t i)
{
    if (i < lo[0] || i >= lo[parts]) return -1;
    int a = 0, b = parts; /* lo[a] <= i < lo[b] */
    while (b - a > 1) {
        const int c = (a + b) / 2;
        if (i >= lo[c]) a = c;
        else b = c;
    }
    return a;
}

/* at[t parts + p]: counts (out NULL), else where block t writes into out[p]. */
static void pass(const tf_tensor *X, uint32_t m, int parts, const uint64_t *lo, int T, uint64_t *at, tf_tensor *out)
{
    const uint64_t nnz = X->nnz;
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        uint64_t *w = at + (uint64_t)t * parts;
        for (uint64_t k = block_lo(nnz, t, T), k1 = block_lo(nnz, t + 1, T); k < k1; ++k) {
            const int p = part_of(lo, parts, X->ind[m][k]);
            if (p < 0) continue;
            const uint64_t i = w[p]++;
            if (!out) continue;
            for (uint32_t d = 0; d < X->order; ++d) out[p].ind[d][i] = X->ind[d][k];
            out[p].vals[i] = X->vals[k];
        }
    }
}

tf_status tf_split_rows(const tf_tensor *X, uint32_t m, int parts, const uint64_t *lo, int threads, tf_tensor *out)
{
    if (parts < 1 || m >= X->order) return tf_fail(TF_ERR_ARG, "row split: %d parts of mode %u", parts, m + 1);
    memset(out, 0, (size_t)parts * sizeof *out);
    int T = tf_resolve_threads(threads);
    if ((uint64_t)T > X->nnz / 65536 + 1) T = (int)(X->nnz / 65536 + 1); /* small inputs: one thread */
    uint64_t *at = NULL;
    TF_TRY(TF_CALLOC(at, (uint64_t)T * parts, "row split offsets"));
    pass(X, m, parts, lo, T, at, NULL);
    tf_status s = TF_OK;
    for (int p = 0; p < parts && s == TF_OK; ++p) {
        uint64_t n = 0;
        for (int t = 0; t < T; ++t) {
            const uint64_t c = at[(uint64_t)t * parts + p];
            at[(uint64_t)t * parts + p] = n;
            n += c;
        }
        s = tf_tensor_alloc(&out[p], X->order, X->dims, n);
    }
    if (s == TF_OK) pass(X, m, parts, lo, T, at, out);
    else
        for (int p = 0; p < parts; ++p) tf_tensor_free(&out[p]);
    tf_free(at);
    return s;
}

void tf_split_rows_free(tf_tensor *out, int parts)
{
    for (int p = 0; p < parts; ++p) tf_tensor_free(&out[p]);
}

void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count)
{
    const uint64_t I = X->dims[m], nnz = X->nnz;
    memset(count, 0, I * sizeof *count);
    int T = tf_resolve_threads(threads);
    if ((uint64_t)T > nnz / 65536 + 1) T = (int)(nnz / 65536 + 1);
    const uint32_t *ind = X->ind[m];
#pragma omp parallel for num_threads(T) schedule(static)
    for (uint64_t k = 0; k < nnz; ++k) {
#pragma omp atomic
        ++count[ind[k]];
    }
}
