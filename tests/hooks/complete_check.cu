/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU completion test entry (hooks/complete_check.h). */
#include "gpu/complete/complete.cuh"
#include "hooks/complete_check.h"

extern "C" tf_status tf_gpu_check_complete_poison(void *ctx, uint32_t mode)
{
    return tf_gpu_complete_poison(ctx, mode);
}

extern "C" tf_status tf_gpu_check_complete_multi_poison(void *ctx, uint32_t mode)
{
    return tf_gpu_complete_multi_poison(ctx, mode);
}
