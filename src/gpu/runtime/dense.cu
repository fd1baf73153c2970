/* SPDX-License-Identifier: BSD-3-Clause */
/* Where a plan run's operands are (dense.cuh), and tf_cuda_memory_of. */
#include <string.h>

#include "gpu/runtime/dense.cuh"
#include "seams/cuda_module.h"

tf_status tf_gpu_dense_where(const tf_dense &X, const char *name, const char *who, tf_precision prec, int *kind,
                              int *dev)
{
    *kind = tf_cuda_memory_of_impl(X.data, dev);
    const bool gpu = *kind != TF_CUDA_PTR_HOST;
    if (X.memory == TF_MEMORY_HOST && gpu)
        return tf_fail(TF_ERR_ARG, "%s: %s is GPU memory, but its memory says TF_MEMORY_HOST", who, name);
    if (X.memory == TF_MEMORY_DEVICE && !gpu)
        return tf_fail(TF_ERR_ARG, "%s: %s is not GPU memory (CUDA does not know the pointer), but its memory says "
                                   "TF_MEMORY_DEVICE", who, name);
    if (gpu && X.precision != prec)
        return tf_fail(TF_ERR_ARG, "%s: %s is GPU memory of %ss; this plan computes in %s and reads GPU arrays of %ss",
                       who, name, X.precision == TF_SINGLE ? "float" : "double",
                       prec == TF_SINGLE ? "float" : "double", prec == TF_SINGLE ? "float" : "double");
    return TF_OK;
}

tf_status tf_gpu_dense_locate(const tf_dense &X, const char *name, const char *who, int device, tf_precision prec,
                               bool *gpu)
{
    int kind = TF_CUDA_PTR_HOST, dev = -1;
    TF_TRY(tf_gpu_dense_where(X, name, who, prec, &kind, &dev));
    if (kind == TF_CUDA_PTR_DEVICE && dev != device)
        return tf_fail(TF_ERR_ARG, "%s: %s is memory of GPU %d; the plan runs on GPU %d", who, name, dev, device);
    *gpu = kind != TF_CUDA_PTR_HOST;
    return TF_OK;
}

extern "C" int tf_cuda_memory_of_impl(const void *p, int *device)
{
    cudaPointerAttributes at;
    memset(&at, 0, sizeof at);
    if (device) *device = -1;
    if (!p || cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError(); /* an unknown pointer is host memory; leave no error behind */
        return TF_CUDA_PTR_HOST;
    }
    if (at.type == cudaMemoryTypeDevice) {
        if (device) *device = at.device;
        return TF_CUDA_PTR_DEVICE;
    }
    return at.type == cudaMemoryTypeManaged ? TF_CUDA_PTR_MANAGED : TF_CUDA_PTR_HOST;
}
