/* SPDX-License-Identifier: BSD-3-Clause */
/* The run context behind the public tf_context (see tenfold.h): options,
 * the resolved backend, and the GPU's device context (streams, handles,
 * properties), made on first use by the CUDA backend and kept. The front
 * end (src/front) creates contexts; backends only read them. */
#ifndef TF_SEAMS_CONTEXT_H
#define TF_SEAMS_CONTEXT_H
#include "seams/cuda_table.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_context {
    tf_context_opts opts; /* as given, but opts.tuning points at `tuning` below */
    tf_tuning tuning;     /* the whole policy: the caller's (as far as its size
                             reaches) over the library's defaults */
    tf_backend backend; /* TF_BACKEND_CPU or TF_BACKEND_GPU; AUTO until resolved
                           (tf_context_resolve in src/front, before any backend runs) */
    void *gpu;          /* the device context (a tf_gpu_dev), NULL until first use */
    void *peer[TF_MAX_GPUS]; /* several GPUs: the device contexts of devices[i], i >= 1,
                                made on first use ([0] unused: that one is gpu) */
    struct tf_dist *dist; /* the ranks of a distributed context (opts.distributed), else NULL */
};

/* The devices and the device context, as the CUDA backend answers them
 * (src/gpu/runtime; the rows' format: seams/cuda_table.h):
 * - tf_gpu_count, tf_gpu_describe, tf_gpu_copy_bandwidth,
 *   tf_gpu_h2d_bandwidth, tf_gpu_links: the public device queries
 *   (tenfold.h); without an NVIDIA driver (tf_cuda_driver_visible) no
 *   GPU is counted nor the module loaded;
 * - tf_cuda_context_release: the device context's teardown (made by the
 *   module, so only a loaded one is asked);
 * - tf_cuda_context_budget: the memory budget of the context's GPU;
 * - tf_cuda_versions: the CUDA runtime version and the highest version the
 *   driver supports (0, 0 without the CUDA backend or a driver);
 *   initialises no device. */
#define TF_CUDA_DEVICE_API(ROW)                                                                                   \
    ROW(MAY_LOAD, int, tf_gpu_count, (void), (), if (!tf_cuda_driver_visible()) return 0;, 0)                     \
    ROW(MAY_LOAD, tf_status, tf_gpu_describe, (int device, char *buf, size_t len), (device, buf, len),            \
        TF_TRY(tf_gpu_describe_args(__func__, device, buf, len));, tf_cuda_unavailable(NULL))                    \
    ROW(MAY_LOAD, tf_status, tf_gpu_copy_bandwidth, (int device, double *bytes_per_s), (device, bytes_per_s),     \
        TF_TRY(tf_gpu_bandwidth_args(__func__, device, bytes_per_s));, tf_cuda_unavailable(NULL))                \
    ROW(MAY_LOAD, tf_status, tf_gpu_h2d_bandwidth, (int device, double *bytes_per_s), (device, bytes_per_s),      \
        TF_TRY(tf_gpu_bandwidth_args(__func__, device, bytes_per_s));, tf_cuda_unavailable(NULL))                \
    ROW(MAY_LOAD_VOID, void, tf_gpu_links, (char *buf, size_t len), (buf, len),                                   \
        if (!buf || !len) return; buf[0] = 0; if (!tf_cuda_driver_visible()) return;, )                           \
    ROW(IF_LOADED_VOID, void, tf_cuda_context_release, (void *gpu), (gpu), , )                                    \
    ROW(MAY_LOAD, tf_status, tf_cuda_context_budget, (tf_context *c, uint64_t *bytes), (c, bytes),                \
        if (bytes) *bytes = 0;, tf_cuda_unavailable(NULL))                                                        \
    ROW(MAY_LOAD_VOID, void, tf_cuda_versions, (int *runtime, int *driver), (runtime, driver),                    \
        *runtime = 0; *driver = 0;, )
TF_CUDA_DEVICE_API(TF_CUDA_DECLARE_)

/* The argument checks of the device queries, before anything loads
 * (src/gpu/entry/entry_points.c): `device` >= 0 and, where GPUs are
 * counted, one of them; buf non-NULL unless len is 0 (it gets "none"
 * first); bytes_per_s non-NULL (it gets 0 first). fn (the query's name)
 * starts the messages. */
tf_status tf_gpu_describe_args(const char *fn, int device, char *buf, size_t len);
tf_status tf_gpu_bandwidth_args(const char *fn, int device, double *bytes_per_s);

/* 1 when an NVIDIA driver may be there (a device node, /proc/driver/nvidia or
 * nvidia-modprobe exists; src/gpu/loader, 0 in CPU-only builds): without
 * one no GPU can be found, and the library answers so without loading the
 * CUDA module. */
int tf_cuda_driver_visible(void);

#ifdef __cplusplus
}
#endif
#endif
