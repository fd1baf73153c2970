/* SPDX-License-Identifier: BSD-3-Clause */
/* The tf_dense operands of plan runs (SDDMM, MTTKRP) on the CUDA side:
 * where an array is, checked against what it says and the plan. */
#ifndef TF_CUDA_DENSE_CUH
#define TF_CUDA_DENSE_CUH
#include "gpu/runtime/check.cuh"
#include "tenfold.h"

/* Where X is (*gpu: GPU memory the kernels can read, device or managed),
 * checked against what X says (memory), the plan's GPU (device) and its
 * precision (GPU arrays hold the plan's values); `who` and `name` start
 * the messages. */
tf_status tf_cuda_dense_locate(const tf_dense &X, const char *name, const char *who, int device, tf_precision prec,
                               bool *gpu);
#endif
