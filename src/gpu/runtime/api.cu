/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend's table of entry points (seams/cuda_module.h): what
 * the loader of libtenfold calls, in the module libtenfold_cuda.so or in a
 * program that links the CUDA objects directly (the GPU tests). */
#include "seams/cuda_module.h"

#define TF_CUDA_IMPL_PTR_(front, ret, name, params, args, pre, answer) name##_impl,

extern "C" const tf_cuda_api *tf_cuda_api_table(void)
{
    static const tf_cuda_api api = {sizeof(tf_cuda_api), TF_CUDA_API(TF_CUDA_IMPL_PTR_)};
    return &api;
}
