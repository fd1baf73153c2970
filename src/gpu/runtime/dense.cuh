/* SPDX-License-Identifier: BSD-3-Clause */
/* The tf_dense operands of plan runs (SDDMM, MTTKRP) on the CUDA side:
 * where an array is, checked against what it says and the plan. */
#ifndef TF_GPU_RUNTIME_DENSE_CUH
#define TF_GPU_RUNTIME_DENSE_CUH
#include "gpu/runtime/check.cuh"
#include "tenfold.h"

/* Where X is, checked against what X says (memory) and the plan's
 * precision (GPU arrays hold the plan's values); `who` and `name` start the
 * messages. *kind: TF_CUDA_PTR_HOST, _DEVICE (*dev its GPU) or _MANAGED. */
tf_status tf_gpu_dense_where(const tf_dense &X, const char *name, const char *who, tf_precision prec, int *kind,
                              int *dev);
/* The same for a plan on one GPU (device): *gpu for GPU memory its kernels
 * can read (device memory of that GPU, or managed); another GPU's memory is
 * an error. */
tf_status tf_gpu_dense_locate(const tf_dense &X, const char *name, const char *who, int device, tf_precision prec,
                               bool *gpu);
#endif
