/* CUDA device queries: how many devices, and what each one is. */
#include <cuda_runtime.h>
#include <stdio.h>

extern "C" {
#include "core/error.h"
}

extern "C" int tf_have_cuda(void) { return 1; }

extern "C" int tf_gpu_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

extern "C" tf_status tf_gpu_describe(int device, char *buf, size_t len)
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, device);
    if (e != cudaSuccess) {
        if (buf && len) snprintf(buf, len, "none");
        return tf_fail(TF_ERR_DEVICE, "cannot query CUDA device %d: %s", device, cudaGetErrorString(e));
    }
    if (buf && len)
        snprintf(buf, len, "%s (sm_%d%d, %d SMs, %.1f GiB, L2 %.0f MiB)", p.name, p.major, p.minor,
                 p.multiProcessorCount, (double)p.totalGlobalMem / (1024.0 * 1024 * 1024),
                 (double)p.l2CacheSize / (1024.0 * 1024));
    return TF_OK;
}
