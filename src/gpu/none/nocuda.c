/* SPDX-License-Identifier: BSD-3-Clause */
/* Device queries when the library is built without the CUDA backend. */
#include <stdio.h>

#include "backend/context.h"
#include "backend/cpd.h"
#include "backend/plan.h"
#include "core/error.h"

int tf_have_cuda(void) { return 0; }
int tf_gpu_count(void) { return 0; }
int tf_cuda_driver_visible(void) { return 0; }

tf_cuda_module_state tf_cuda_module(int load, char *where, size_t len)
{
    (void)load;
    if (where && len) snprintf(where, len, "this build of tenfold has no CUDA backend (nvcc was not found at build time)");
    return TF_CUDA_MODULE_NONE;
}

tf_status tf_gpu_describe(int device, char *buf, size_t len)
{
    if (!buf && len) return tf_fail(TF_ERR_ARG, "tf_gpu_describe: buf is NULL (len %zu)", len);
    if (buf && len) snprintf(buf, len, "none");
    if (device < 0) return tf_fail(TF_ERR_ARG, "tf_gpu_describe: device %d is negative", device);
    return tf_fail(TF_ERR_UNAVAILABLE, "this build of tenfold has no CUDA backend (nvcc was not found at build time)");
}

tf_status tf_gpu_copy_bandwidth(int device, double *bytes_per_s)
{
    if (!bytes_per_s) return tf_fail(TF_ERR_ARG, "tf_gpu_copy_bandwidth: bytes_per_s is NULL");
    *bytes_per_s = 0.0;
    if (device < 0) return tf_fail(TF_ERR_ARG, "tf_gpu_copy_bandwidth: device %d is negative", device);
    return tf_fail(TF_ERR_UNAVAILABLE, "this build of tenfold has no CUDA backend");
}

tf_status tf_gpu_h2d_bandwidth(int device, double *bytes_per_s)
{
    if (!bytes_per_s) return tf_fail(TF_ERR_ARG, "tf_gpu_h2d_bandwidth: bytes_per_s is NULL");
    *bytes_per_s = 0.0;
    if (device < 0) return tf_fail(TF_ERR_ARG, "tf_gpu_h2d_bandwidth: device %d is negative", device);
    return tf_fail(TF_ERR_UNAVAILABLE, "this build of tenfold has no CUDA backend");
}

tf_status tf_cuda_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU plans need the CUDA backend, which this build of tenfold does not have");
}

tf_status tf_cuda_plan_build_multi(const tf_tensor *X, const tf_plan_opts *o, const tf_shards *sh, tf_plan *p)
{
    (void)X, (void)o, (void)sh, (void)p;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU plans need the CUDA backend, which this build of tenfold does not have");
}

tf_status tf_cuda_cpd_backend_create(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *out)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU CP-ALS needs the CUDA backend, which this build of tenfold does not have");
}

tf_status tf_cuda_cpd_backend_create_multi(const tf_tensor *X, const tf_cpd_opts *o, const tf_shards *sh,
                                           tf_cpd_backend *out)
{
    (void)X, (void)o, (void)sh, (void)out;
    return tf_fail(TF_ERR_UNAVAILABLE, "several GPUs need the CUDA backend, which this build of tenfold does not have");
}

void tf_gpu_links(char *buf, size_t len)
{
    if (buf && len) buf[0] = 0;
}

void tf_cuda_context_release(void *gpu) { (void)gpu; }

tf_status tf_cuda_context_budget(tf_context *c, uint64_t *bytes)
{
    (void)c;
    if (bytes) *bytes = 0;
    return tf_fail(TF_ERR_UNAVAILABLE, "this build of tenfold has no CUDA backend");
}

void tf_cuda_versions(int *runtime, int *driver)
{
    *runtime = 0;
    *driver = 0;
}
