/* SPDX-License-Identifier: BSD-3-Clause */
/* libtenfold's side of every CUDA backend entry point, generated from the
 * rows of the operation families' tables (seams/cuda_table.h): each runs
 * its row's `pre`, then calls the module's NAME_impl through its table, or,
 * without a backend, returns its row's `answer`. The same code in both
 * kinds of build: in a CUDA build tf_cuda_backend (src/gpu/loader) loads
 * the module on first use; in a CPU-only build (src/gpu/none) there is
 * never a backend, so these are the stand-ins, answering as a CUDA build
 * without its module does, with the reason of the build. Plus the argument
 * checks of the device queries, the rows' only hand-written part. */
#include <stdio.h>

#include "seams/cuda_module.h"
#include "core/error.h"

#define TF_FRONT_(load, ret, name, params, args, pre, answer) \
    ret name params                                           \
    {                                                         \
        pre const tf_cuda_api *a_ = tf_cuda_backend(load);    \
        if (a_) return a_->name args;                         \
        return answer;                                        \
    }
#define TF_FRONT_VOID_(load, ret, name, params, args, pre, answer) \
    ret name params                                                \
    {                                                              \
        pre const tf_cuda_api *a_ = tf_cuda_backend(load);         \
        if (a_) a_->name args;                                     \
    }
#define TF_FRONT_MAY_LOAD(...) TF_FRONT_(1, __VA_ARGS__)
#define TF_FRONT_IF_LOADED(...) TF_FRONT_(0, __VA_ARGS__)
#define TF_FRONT_MAY_LOAD_VOID(...) TF_FRONT_VOID_(1, __VA_ARGS__)
#define TF_FRONT_IF_LOADED_VOID(...) TF_FRONT_VOID_(0, __VA_ARGS__)
#define TF_FRONT_ROW_(front, ret, name, params, args, pre, answer) \
    TF_FRONT_##front(ret, name, params, args, pre, answer)

TF_CUDA_API(TF_FRONT_ROW_)

/* A device argument of fn: 0 .. the GPUs present - 1 (with none present, a
 * device >= 0 goes on to say why there is none). */
static tf_status device_arg(const char *fn, int device)
{
    if (device < 0) return tf_fail(TF_ERR_ARG, "%s: device %d is negative", fn, device);
    const int n = tf_gpu_count();
    if (n > 0 && device >= n) return tf_fail(TF_ERR_ARG, "%s: GPU %d does not exist (GPUs 0..%d)", fn, device, n - 1);
    return TF_OK;
}

tf_status tf_gpu_describe_args(const char *fn, int device, char *buf, size_t len)
{
    if (!buf && len) return tf_fail(TF_ERR_ARG, "%s: buf is NULL (len %zu)", fn, len);
    if (buf && len) snprintf(buf, len, "none");
    return device_arg(fn, device);
}

tf_status tf_gpu_bandwidth_args(const char *fn, int device, double *bytes_per_s)
{
    if (!bytes_per_s) return tf_fail(TF_ERR_ARG, "%s: bytes_per_s is NULL", fn);
    *bytes_per_s = 0.0;
    return device_arg(fn, device);
}
