/* SPDX-License-Identifier: BSD-3-Clause */
/* What the exchange (exchange.cuh) can use on this machine, for
 * `tenfold --version` and info: NCCL's version and which GPU pairs reach
 * each other directly. */
#include <stdio.h>

#include "gpu/exec/exchange.cuh"
#include "seams/cuda_module.h"

extern "C" void tf_gpu_links_impl(char *buf, size_t len)
{
    if (!len) return;
    char nccl[160];
    tf_nccl_describe(nccl, sizeof nccl);
    size_t n = (size_t)snprintf(buf, len, "NCCL %s", nccl);
    int gpus = 0;
    if (cudaGetDeviceCount(&gpus) != cudaSuccess) {
        cudaGetLastError();
        gpus = 0;
    }
    if (gpus < 2 || n >= len) return;
    n += (size_t)snprintf(buf + n, len - n, "; peer access");
    for (int a = 0; a < gpus && n < len; ++a)
        for (int b = a + 1; b < gpus && n < len; ++b) {
            int ab = 0, ba = 0;
            if (cudaDeviceCanAccessPeer(&ab, a, b) != cudaSuccess || cudaDeviceCanAccessPeer(&ba, b, a) != cudaSuccess)
                cudaGetLastError();
            n += (size_t)snprintf(buf + n, len - n, " %d-%d %s", a, b, ab && ba ? "yes" : "no");
        }
}
