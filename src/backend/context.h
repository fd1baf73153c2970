/* SPDX-License-Identifier: BSD-3-Clause */
/* The run context behind the public tf_context (see tenfold.h): options,
 * the resolved backend, and the GPU's device context (streams, handles,
 * properties), made on first use by the CUDA backend and kept. The front
 * end (src/ops) creates contexts; backends only read them. */
#ifndef TF_BACKEND_CONTEXT_H
#define TF_BACKEND_CONTEXT_H
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_context {
    tf_context_opts opts; /* as given, but opts.tuning points at `tuning` below */
    tf_tuning tuning;     /* the whole policy: the caller's (as far as its size
                             reaches) over the library's defaults */
    tf_backend backend; /* TF_BACKEND_CPU or TF_BACKEND_GPU; AUTO until resolved
                           (tf_context_resolve in src/ops, before any backend runs) */
    void *gpu;          /* the device context (a tf_cuda_ctx), NULL until first use */
    void *peer[TF_MAX_GPUS]; /* several GPUs: the device contexts of devices[i], i >= 1,
                                made on first use ([0] unused: that one is gpu) */
    struct tf_dist *dist; /* the ranks of a distributed context (opts.distributed), else NULL */
};

/* CUDA backend hooks (src/gpu/runtime, called through the loader in
 * src/gpu/loader; src/gpu/none answers them in CPU-only builds): the device
 * context's teardown, the memory budget of the GPU, versions. */
void tf_cuda_context_release(void *gpu);
tf_status tf_cuda_context_budget(tf_context *c, uint64_t *bytes);
/* CUDA runtime version and the highest version the driver supports (0, 0
 * without the CUDA backend or a driver); initialises no device. */
void tf_cuda_versions(int *runtime, int *driver);

/* 1 when an NVIDIA driver may be there (a device node, /proc/driver/nvidia or
 * nvidia-modprobe exists; src/gpu/loader, 0 in CPU-only builds): without
 * one no GPU can be found, and the library answers so without loading the
 * CUDA module. */
int tf_cuda_driver_visible(void);

#ifdef __cplusplus
}
#endif
#endif
