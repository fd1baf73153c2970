/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_get_build_info: the core's description of the build, and the CUDA
 * runtime and driver versions, which the GPU front end (src/gpu/loader, or
 * src/gpu/none) answers -- loading the CUDA module to ask them. */
#include "seams/context.h"
#include "core/build_info.h"

void tf_get_build_info(tf_build_info *out)
{
    if (!out) return;
    tf_build_info_core(out);
    tf_cuda_versions(&out->cuda_runtime, &out->cuda_driver);
}
