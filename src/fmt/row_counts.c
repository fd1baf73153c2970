/* SPDX-License-Identifier: BSD-3-Clause */
#include "fmt/row_counts.h"

#include <string.h>

#include "core/parallel.h"

void tf_count_rows(const tf_tensor *X, uint32_t m, int threads, uint64_t *count)
{
    const uint64_t I = X->dims[m], nnz = X->nnz;
    memset(count, 0, I * sizeof *count);
    int T = tf_resolve_threads(threads);
    if ((uint64_t)T > nnz / 65536 + 1) T = (int)(nnz / 65536 + 1); /* small inputs: one thread */
    const uint32_t *ind = X->ind[m];
#pragma omp parallel for num_threads(T) schedule(static)
    for (uint64_t k = 0; k < nnz; ++k) {
#pragma omp atomic
        ++count[ind[k]];
    }
}
