/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA device queries: how many devices, and what each one is. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>

#include "seams/cuda_module.h"
extern "C" {
#include "core/error.h"
}

extern "C" void tf_cuda_versions_impl(int *runtime, int *driver)
{
    if (cudaRuntimeGetVersion(runtime) != cudaSuccess) *runtime = 0;
    if (cudaDriverGetVersion(driver) != cudaSuccess) *driver = 0; /* 0 also when no driver is loaded */
    cudaGetLastError();
}


int tf_gpu_physical_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n;
}

/* TF_TEST_GPUS (core/environment.h), read once: the test mode's count, else 0. */
static int test_gpus(void)
{
    static int k = -1;
    if (k < 0) k = tf_env_test_gpus();
    return k;
}

extern "C" int tf_gpu_count_impl(void)
{
    const int n = tf_gpu_physical_count();
    return n > 0 && test_gpus() ? test_gpus() : n;
}

int tf_gpu_physical(int device)
{
    const int n = tf_gpu_physical_count();
    return test_gpus() && n > 0 && device >= 0 ? device % n : device;
}

extern "C" tf_status tf_gpu_describe_impl(int device, char *buf, size_t len)
{
    cudaDeviceProp p;
    cudaError_t e = cudaGetDeviceProperties(&p, tf_gpu_physical(device));
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

/* Median seconds of 10 copies of `bytes` from src to dst (one warm-up),
 * timed with CUDA events on the legacy stream. */
static cudaError_t median_copy_seconds(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, double *sec)
{
    cudaEvent_t t0 = NULL, t1 = NULL;
    float ms[10];
    cudaError_t e = cudaEventCreate(&t0);
    if (e == cudaSuccess) e = cudaEventCreate(&t1);
    if (e == cudaSuccess) e = cudaMemcpy(dst, src, bytes, kind); /* warm-up */
    for (int i = 0; i < 10 && e == cudaSuccess; ++i) {
        e = cudaEventRecord(t0);
        if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, bytes, kind);
        if (e == cudaSuccess) e = cudaEventRecord(t1);
        if (e == cudaSuccess) e = cudaEventSynchronize(t1);
        if (e == cudaSuccess) e = cudaEventElapsedTime(&ms[i], t0, t1);
    }
    if (t0) cudaEventDestroy(t0);
    if (t1) cudaEventDestroy(t1);
    if (e != cudaSuccess) return e;
    for (int i = 1; i < 10; ++i) /* insertion sort for the median */
        for (int j = i; j > 0 && ms[j - 1] > ms[j]; --j) { float t = ms[j]; ms[j] = ms[j - 1]; ms[j - 1] = t; }
    *sec = 0.5 * (ms[4] + ms[5]) * 1e-3;
    return cudaSuccess;
}

/* Measured device-to-device copy bandwidth in bytes/s, counting read + write
 * (2 x size per copy): the median of 10 copies of min(1 GiB, free/4) bytes.
 * The yardstick for "bytes moved as a fraction of the copy bandwidth". */
extern "C" tf_status tf_gpu_copy_bandwidth_impl(int device, double *bytes_per_s)
{
    *bytes_per_s = 0.0;
    cudaError_t e = cudaSetDevice(tf_gpu_physical(device));
    size_t fr = 0, tot = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&fr, &tot);
    if (e != cudaSuccess)
        return tf_fail(TF_ERR_DEVICE, "copy bandwidth on device %d: %s", device, cudaGetErrorString(e));
    size_t bytes = fr / 4 < ((size_t)1 << 30) ? fr / 4 : ((size_t)1 << 30);
    bytes &= ~(size_t)255;
    void *a = NULL, *b = NULL;
    double sec = 0;
    e = cudaMalloc(&a, bytes);
    if (e == cudaSuccess) e = cudaMalloc(&b, bytes);
    if (e == cudaSuccess) e = cudaMemset(a, 1, bytes);
    if (e == cudaSuccess) e = median_copy_seconds(b, a, bytes, cudaMemcpyDeviceToDevice, &sec);
    cudaFree(a);
    cudaFree(b);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return tf_fail(TF_ERR_DEVICE, "copy bandwidth on device %d: %s", device, cudaGetErrorString(e));
    }
    *bytes_per_s = sec > 0 ? 2.0 * (double)bytes / sec : 0.0;
    return TF_OK;
}

/* Measured pinned host -> device copy bandwidth in bytes/s: the median of
 * 10 copies of 256 MiB (less where the device has less free): the ceiling
 * of the streamed path. */
extern "C" tf_status tf_gpu_h2d_bandwidth_impl(int device, double *bytes_per_s)
{
    *bytes_per_s = 0.0;
    cudaError_t e = cudaSetDevice(tf_gpu_physical(device));
    size_t fr = 0, tot = 0;
    if (e == cudaSuccess) e = cudaMemGetInfo(&fr, &tot);
    if (e != cudaSuccess)
        return tf_fail(TF_ERR_DEVICE, "host-to-device bandwidth on device %d: %s", device, cudaGetErrorString(e));
    size_t bytes = fr / 4 < ((size_t)256 << 20) ? fr / 4 : ((size_t)256 << 20);
    bytes &= ~(size_t)255;
    void *h = NULL, *d = NULL;
    double sec = 0;
    e = cudaHostAlloc(&h, bytes, cudaHostAllocDefault);
    if (e == cudaSuccess) e = cudaMalloc(&d, bytes);
    if (e == cudaSuccess) memset(h, 1, bytes);
    if (e == cudaSuccess) e = median_copy_seconds(d, h, bytes, cudaMemcpyHostToDevice, &sec);
    cudaFreeHost(h);
    cudaFree(d);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return tf_fail(TF_ERR_DEVICE, "host-to-device bandwidth on device %d: %s", device, cudaGetErrorString(e));
    }
    *bytes_per_s = sec > 0 ? (double)bytes / sec : 0.0;
    return TF_OK;
}
