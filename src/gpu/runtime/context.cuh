/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA device context of a tf_context's GPU: the device, its
 * properties, a work stream and a second stream for overlap, the cuBLAS /
 * cuSOLVER handles (created on first use, bound to the work stream), the
 * tuning policy and the memory limit. Made once per tf_context and
 * borrowed by every plan and run in it. Plus device allocation with clear
 * out-of-memory messages and host <-> device copies that convert double
 * to the value type. */
#ifndef TF_CUDA_CONTEXT_CUH
#define TF_CUDA_CONTEXT_CUH
#include <stddef.h>
#include <stdint.h>

#include "backend/context.h"
#include "gpu/runtime/check.cuh"

struct tf_cuda_ctx {
    int device = -1;
    int sm_count = 0;
    size_t smem_block = 0;        /* shared memory per block without opt-in   */
    size_t smem_optin = 0;        /* with cudaFuncAttributeMaxDynamicSharedMemorySize */
    uint64_t l2_bytes = 0;        /* L2 cache                                 */
    char name[256] = {0};
    cudaStream_t stream = nullptr; /* all work of the plan runs here          */
    cudaStream_t side = nullptr;   /* second stream (highest priority): uploads / independent work */
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;
    tf_tuning tune = {};          /* the context's tuning policy              */
    uint64_t memory_limit = 0;    /* the context's limit in bytes, 0 = none   */
    mutable uint64_t allocated = 0; /* device bytes tenfold holds for it now */
};

/* The device context of c's GPU, made on first use (TF_ERR_UNAVAILABLE
 * when c runs on the CPU). */
tf_status tf_cuda_ctx_of(tf_context *c, tf_cuda_ctx **out);
/* Device bytes a plan may use now: 90 % of the free memory, or what is
 * left of the context's memory limit where that is smaller. */
tf_status tf_cuda_budget(const tf_cuda_ctx *c, uint64_t *bytes);

/* Selects `device` (which must exist) and creates the streams. */
tf_status tf_cuda_ctx_init(tf_cuda_ctx *c, int device);
/* Makes `c->device` current for the calling thread, and c the context
 * that this thread's device allocations are counted against (its memory
 * limit: tf_cuda_alloc_bytes refuses what would exceed it). */
tf_status tf_cuda_ctx_use(const tf_cuda_ctx *c);
/* Handles on first use. */
tf_status tf_cuda_ctx_blas(tf_cuda_ctx *c);
tf_status tf_cuda_ctx_solver(tf_cuda_ctx *c);
void tf_cuda_ctx_destroy(tf_cuda_ctx *c);
/* Free and total device memory in bytes. */
tf_status tf_cuda_mem_info(const tf_cuda_ctx *c, size_t *free_bytes, size_t *total_bytes);

/* cudaMalloc with a message naming what and how many bytes on failure
 * (TF_ERR_NOMEM when the device is out of memory, or when the allocation
 * would take the thread's current context past its memory limit; the
 * message then names the limit and what is in use). bytes 0 -> *p = NULL. */
tf_status tf_cuda_alloc_bytes(void **p, size_t bytes, const char *what);
void tf_cuda_free(void *p);

template <typename T>
static inline tf_status tf_cuda_alloc(T **p, uint64_t n, const char *what)
{
    if (n > SIZE_MAX / sizeof(T))
        return tf_fail(TF_ERR_NOMEM, "device allocation of %llu elements for %s overflows",
                       (unsigned long long)n, what);
    return tf_cuda_alloc_bytes((void **)p, (size_t)n * sizeof(T), what);
}

/* Allocates n elements on the device and copies them from the host. */
template <typename T>
static inline tf_status tf_cuda_upload_new(T **d, const T *h, uint64_t n, const char *what)
{
    TF_TRY(tf_cuda_alloc(d, n, what));
    if (n) {
        TF_CU(cudaMemcpy(*d, h, (size_t)n * sizeof(T), cudaMemcpyHostToDevice));
        /* From pageable memory cudaMemcpy may return before the DMA lands,
         * and our kernels run on non-blocking streams that do not order
         * after the legacy stream: wait for the copy itself (a kernel read
         * stale SDDMM values on an H200 before this). */
        TF_CU(cudaStreamSynchronize(cudaStreamLegacy));
    }
    return TF_OK;
}

/* Host doubles -> device T (converted through a bounded host buffer when T is float). */
template <typename T>
tf_status tf_cuda_put_values(T *d, const double *h, uint64_t n, cudaStream_t s);
/* Device T -> host doubles (synchronous with respect to s). */
template <typename T>
tf_status tf_cuda_get_values(double *h, const T *d, uint64_t n, cudaStream_t s);

/* Device memory of one array, freed on scope exit. */
template <typename T>
struct tf_dev_array {
    T *p = nullptr;
    tf_dev_array() = default;
    tf_dev_array(const tf_dev_array &) = delete;
    tf_dev_array &operator=(const tf_dev_array &) = delete;
    ~tf_dev_array() { tf_cuda_free(p); }
    tf_status alloc(uint64_t n, const char *what)
    {
        tf_cuda_free(p);
        p = nullptr;
        return tf_cuda_alloc(&p, n, what);
    }
    tf_status upload(const T *h, uint64_t n, const char *what)
    {
        tf_cuda_free(p);
        p = nullptr;
        return tf_cuda_upload_new(&p, h, n, what);
    }
};
#endif
