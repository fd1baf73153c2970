/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend of a CPU-only build: there is none. What src/gpu/loader
 * answers in a CUDA build, answered here without a module to look for; the
 * entry points' front ends (src/gpu/entry) find no backend and give their
 * rows' answers, naming this build as the reason. */
#include <stdio.h>

#include "seams/cuda_module.h"
#include "core/error.h"

#define TF_NO_CUDA_WHY "this build of tenfold has no CUDA backend (nvcc was not found at build time)"

int tf_have_cuda(void) { return 0; }
int tf_cuda_driver_visible(void) { return 0; }

tf_cuda_module_state tf_cuda_module(int load, char *where, size_t len)
{
    (void)load;
    if (where && len) snprintf(where, len, TF_NO_CUDA_WHY);
    return TF_CUDA_MODULE_NONE;
}

const tf_cuda_api *tf_cuda_backend(int load)
{
    (void)load;
    return NULL;
}

tf_status tf_cuda_unavailable(const char *what)
{
    if (!what) return tf_fail(TF_ERR_UNAVAILABLE, TF_NO_CUDA_WHY);
    return tf_fail(TF_ERR_UNAVAILABLE, "%s the CUDA backend, which this build of tenfold does not have", what);
}
