/* SPDX-License-Identifier: BSD-3-Clause */
/* The auto backend's cost rule (see auto_backend.h). The constants are
 * conservative figures measured on the machines of bench/RESULTS.md
 * ("Fixed costs"): the CPU's CSF MTTKRP at 2.5e-10 s per non-zero x rank
 * x mode per thread (uber-apr14, nycflights13 on 2 cores: 2.3-2.5e-10),
 * its dense steps at 1e-10 s per row x R^2 per thread; the GPU's start-up
 * (CUDA context, streams, handles) and the plan build. */
#include "ops/auto_backend.h"

#include <stdio.h>

#define CPU_NNZ_S 3.0e-10   /* s per non-zero x rank x mode, one thread      */
#define CPU_DENSE_S 1.0e-10 /* s per factor row x R^2, one thread            */
#define GPU_START_S 0.25    /* CUDA context, streams, cuBLAS / cuSOLVER      */
#define GPU_BUILD_S 0.02    /* plan build: uploads, sorts, cuts, first tuning */
#define GPU_NNZ_S 2.0e-12   /* per non-zero x rank x mode, iterations        */
#define GPU_ITER_S 2.0e-4   /* per iteration: launches, the fit's readback   */

int tf_auto_prefers_cpu(const tf_tensor *X, uint64_t R, uint32_t iters, int threads, int gpu_ready, char *why,
                        size_t why_len)
{
    const double N = X->order, nnz = (double)X->nnz, r = (double)R, it = iters;
    double rows = 0.0;
    for (uint32_t m = 0; m < X->order; ++m) rows += (double)X->dims[m];
    const double T = threads > 0 ? threads : 1;
    const double cpu = it * (N * nnz * r * CPU_NNZ_S + rows * r * r * CPU_DENSE_S) / T;
    const double gpu = (gpu_ready ? 0.0 : GPU_START_S) + GPU_BUILD_S + N * nnz * 8e-10 +
                       it * (N * nnz * r * GPU_NNZ_S + GPU_ITER_S);
    if (cpu >= gpu) return 0;
    if (why && why_len)
        snprintf(why, why_len,
                 "small problem (%llu non-zeros, rank %llu): the CPU (%d thread%s, est. %.2f s) beats "
                 "the GPU's set-up and run (est. %.2f s); running on the CPU",
                 (unsigned long long)X->nnz, (unsigned long long)R, (int)T, T == 1 ? "" : "s", cpu, gpu);
    return 1;
}
