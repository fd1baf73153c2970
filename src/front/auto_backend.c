/* SPDX-License-Identifier: BSD-3-Clause */
/* The auto backend's cost rule (see auto_backend.h), with figures measured
 * on an H100 host (16 cores) and a 2-core machine (bench/RESULTS.md, "Fixed
 * costs"; gpu-check stage fixed):
 * - CPU: the CSF MTTKRP at ~1.3e-10 s per non-zero x rank x mode from 2
 *   threads up (it hardly scales past 2 on these tensors: uber-apr14 1.27e-10
 *   on 2 cores, 0.98e-10 on 16), 2.5e-10 on one; a fork/join cost per mode
 *   that grows with the threads (collegemsg, 34k non-zeros: 1.3 ms per mode
 *   on 16 threads); the dense steps at ~5e-11 s per row x R^2; the CSF
 *   build at ~8e-8 s per non-zero (1.33 s for 20M on 16 cores).
 * - GPU: the start (CUDA context, streams, cuBLAS / cuSOLVER handles: 0.1-0.15
 *   s, taken as 0.3 with the libraries' first use); the plan build on the
 *   device (0.005 s + 1.8e-9 s per non-zero x mode: 0.109 s for 20M x 3);
 *   first-use tuning of ~80 timed MTTKRPs; an iteration at ~5e-12 s per
 *   non-zero x rank x mode (20M, R 32, fp64: 7.9 ms) plus 0.2 ms. */
#include "front/auto_backend.h"

#include <stdio.h>

#include "seams/context.h"

#define CPU_UNIT_S 1.3e-10     /* s per non-zero x rank x mode, 2+ threads    */
#define CPU_UNIT_1_S 2.5e-10   /* the same on one thread                      */
#define CPU_MODE_T_S 2.5e-5    /* fork/join per mode, per thread              */
#define CPU_DENSE_S 5.0e-11    /* per factor row x R^2                        */
#define CPU_BUILD_S 8.0e-8     /* CSF build per non-zero                      */
#define GPU_START_S 0.3        /* context, streams, handles                   */
#define GPU_BUILD_S 0.005      /* plan build: fixed part ...                  */
#define GPU_BUILD_NNZ_S 1.8e-9 /* ... and per non-zero x mode                 */
#define GPU_TUNE_RUNS 80.0     /* first-use tuning, in all-mode MTTKRPs       */
#define GPU_UNIT_S 5.0e-12     /* per non-zero x rank x mode                  */
#define GPU_ITER_S 2.0e-4      /* per iteration: launches, the fit's readback */

int tf_auto_prefers_cpu(const tf_tensor *X, uint64_t R, uint32_t iters, int threads, int gpu_ready, char *why,
                        size_t why_len)
{
    const double N = X->order, nnz = (double)X->nnz, r = (double)R, it = iters;
    double rows = 0.0;
    for (uint32_t m = 0; m < X->order; ++m) rows += (double)X->dims[m];
    const double T = threads > 0 ? threads : 1;
    const double unit = T >= 2 ? CPU_UNIT_S : CPU_UNIT_1_S;
    const double cpu = nnz * CPU_BUILD_S + it * (N * (nnz * r * unit + CPU_MODE_T_S * T) + rows * r * r * CPU_DENSE_S);
    const double gpu_iter = N * nnz * r * GPU_UNIT_S + GPU_ITER_S;
    const double gpu = (gpu_ready ? 0.0 : GPU_START_S) + GPU_BUILD_S + N * nnz * GPU_BUILD_NNZ_S +
                       (GPU_TUNE_RUNS + it) * gpu_iter;
    if (cpu >= gpu) return 0;
    if (why && why_len)
        snprintf(why, why_len,
                 "small problem (%llu non-zeros, rank %llu): the CPU (%d thread%s, est. %.2f s) beats "
                 "the GPU's set-up and run (est. %.2f s); running on the CPU",
                 (unsigned long long)X->nnz, (unsigned long long)R, (int)T, T == 1 ? "" : "s", cpu, gpu);
    return 1;
}

int tf_gpu_maybe_present(void)
{
    return tf_cuda_module(0, NULL, 0) >= TF_CUDA_MODULE_FOUND && tf_cuda_driver_visible();
}
