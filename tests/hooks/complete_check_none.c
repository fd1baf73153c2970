/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU completion test entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/complete_check.h"

tf_status tf_gpu_check_complete_poison(void *ctx, uint32_t mode)
{
    (void)ctx;
    (void)mode;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU completion needs the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_complete_multi_poison(void *ctx, uint32_t mode)
{
    (void)ctx;
    (void)mode;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU completion needs the CUDA backend, which this build lacks");
}
