/* SPDX-License-Identifier: BSD-3-Clause */
/* User-side GPU memory for the tests; see device_memory.h. */
#include "hooks/device_memory.h"

#include "gpu/runtime/check.cuh"

tf_status tf_test_gpu_set_device(int device)
{
    TF_CU(cudaSetDevice(device));
    return TF_OK;
}

tf_status tf_test_gpu_alloc(void **p, size_t bytes, tf_test_mem kind)
{
    *p = nullptr;
    if (kind == TF_TEST_MANAGED) TF_CU(cudaMallocManaged(p, bytes));
    else if (kind == TF_TEST_PINNED) TF_CU(cudaHostAlloc(p, bytes, cudaHostAllocDefault));
    else TF_CU(cudaMalloc(p, bytes));
    return TF_OK;
}

void tf_test_gpu_free(void *p, tf_test_mem kind)
{
    if (!p) return;
    if (kind == TF_TEST_PINNED) cudaFreeHost(p);
    else cudaFree(p);
}

tf_status tf_test_gpu_put(void *dst, const void *src, size_t bytes)
{
    TF_CU(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    TF_CU(cudaDeviceSynchronize());
    return TF_OK;
}

tf_status tf_test_gpu_get(void *dst, const void *src, size_t bytes)
{
    TF_CU(cudaDeviceSynchronize());
    TF_CU(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
    return TF_OK;
}

tf_status tf_test_gpu_fill(void *dst, int byte, size_t bytes)
{
    TF_CU(cudaMemset(dst, byte, bytes));
    TF_CU(cudaDeviceSynchronize());
    return TF_OK;
}

tf_status tf_test_gpu_stream(void **stream)
{
    cudaStream_t s = nullptr;
    TF_CU(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    *stream = s;
    return TF_OK;
}

tf_status tf_test_gpu_stream_wait(void *stream)
{
    TF_CU(cudaStreamSynchronize((cudaStream_t)stream));
    return TF_OK;
}

void tf_test_gpu_stream_free(void *stream)
{
    if (stream) cudaStreamDestroy((cudaStream_t)stream);
}
