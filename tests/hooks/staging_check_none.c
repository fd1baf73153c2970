/* SPDX-License-Identifier: BSD-3-Clause */
/* The staging test entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/staging_check.h"

tf_status tf_gpu_check_staged_copy(uint64_t n, size_t slot_bytes, int staging, int premake, int floats, int calls,
                                   int *ring, char *diff, size_t len)
{
    (void)n, (void)slot_bytes, (void)staging, (void)premake, (void)floats, (void)calls, (void)ring, (void)diff, (void)len;
    return tf_fail(TF_ERR_UNAVAILABLE, "the pinned staging needs the CUDA backend, which this build lacks");
}
