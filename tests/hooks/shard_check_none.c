/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU shard cutter's test entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/shard_check.h"

tf_status tf_gpu_check_shards(const tf_tensor *X, int parts, int schedule, int pairs, tf_precision prec,
                              uint64_t chunk, int *relabeled, char *diff, size_t len)
{
    (void)X, (void)parts, (void)schedule, (void)pairs, (void)prec, (void)chunk, (void)relabeled, (void)diff,
        (void)len;
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU shard cutter needs the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_feed(int readers, uint64_t chunks, char *diff, size_t len)
{
    (void)readers, (void)chunks, (void)diff, (void)len;
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU shard feed needs the CUDA backend, which this build lacks");
}
