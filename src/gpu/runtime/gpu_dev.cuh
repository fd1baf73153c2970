/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA device context of a tf_context's GPU: the device, its
 * properties, a work stream and a second stream for overlap, the cuBLAS /
 * cuSOLVER handles (created on first use, bound to the work stream), the
 * tuning policy and the memory limit. Made once per tf_context and
 * borrowed by every plan and run in it. Plus device allocation with clear
 * out-of-memory messages and host <-> device copies that convert double
 * to the value type. */
#ifndef TF_GPU_RUNTIME_GPU_DEV_CUH
#define TF_GPU_RUNTIME_GPU_DEV_CUH
#include <stddef.h>
#include <stdint.h>

#include "seams/context.h"
#include "gpu/runtime/check.cuh"

/* Pinned staging ring: 4 x 2 MiB in one cudaHostAlloc, once per context.
 * Pinning is slow (4 x 4 MiB in four calls: 8.8 ms on the H200 host, 5.0
 * ms on the H100 one; one 8 MiB call 2.4-2.6 ms there; malloc + touch +
 * cudaHostRegister no cheaper), so the ring stays small; 2 MiB pieces
 * still keep the per-piece overhead (a thread fork, a copy call, an
 * event) small beside the piece's copy (the 20M tensor's 240 MB of
 * indices in 9 ms on the H100 host, as with 4 MiB pieces on the H200). */
#define TF_STAGE_SLOTS 4
#define TF_STAGE_BYTES ((size_t)2 << 20)

struct tf_gpu_dev {
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
    /* Pinned host staging of tf_gpu_h2d_staged: a ring of TF_STAGE_SLOTS
     * buffers, made on first use, each with an event that marks its DMA
     * done (so the host refills it only then). */
    void *stage_mem = nullptr;    /* the ring's one pinned block */
    void *stage[TF_STAGE_SLOTS] = {nullptr};
    cudaEvent_t stage_done[TF_STAGE_SLOTS] = {nullptr};
    size_t stage_bytes = 0;       /* per buffer; 0 = TF_STAGE_BYTES (set before first use: tests) */
    int stage_state = 0;          /* 0 not made yet, 1 made, -1 could not be made: plain copies */
    unsigned stage_next = 0;      /* the ring's next buffer */
};

/* The device context of c's GPU, made on first use (TF_ERR_UNAVAILABLE
 * when c runs on the CPU). */
tf_status tf_gpu_dev_of(tf_context *c, tf_gpu_dev **out);
/* The device context of the context's i-th GPU (opts.devices[i]; 0 is
 * tf_gpu_dev_of's), made on first use; it becomes the current one. */
tf_status tf_gpu_dev_at(tf_context *c, int i, tf_gpu_dev **out);
/* Device bytes a plan may use now: 90 % of the free memory, or what is
 * left of the context's memory limit where that is smaller. */
tf_status tf_gpu_budget(const tf_gpu_dev *c, uint64_t *bytes);

/* The CUDA devices: physically present, and the physical device behind a
 * run's device number. The test mode TF_TEST_GPUS=k (docs/DESIGN.md,
 * "Several GPUs on one") makes tf_gpu_count say k and device i be the
 * physical i mod count: several GPUs' code (the executor, the partition,
 * the peer exchange as copies within a device) runs on one GPU; NCCL
 * refuses one device twice, so GPU ranks still need distinct GPUs. */
int tf_gpu_physical_count(void);
int tf_gpu_physical(int device);

/* Selects `device` (a run's device number: it must exist) and creates the
 * streams; c->device is the physical device. */
tf_status tf_gpu_dev_init(tf_gpu_dev *c, int device);
/* Makes `c->device` current for the calling thread, and c the context
 * that this thread's device allocations are counted against (its memory
 * limit: tf_gpu_alloc_bytes refuses what would exceed it). */
tf_status tf_gpu_dev_use(const tf_gpu_dev *c);
/* Handles on first use. */
tf_status tf_gpu_dev_blas(tf_gpu_dev *c);
tf_status tf_gpu_dev_solver(tf_gpu_dev *c);
void tf_gpu_dev_destroy(tf_gpu_dev *c);
/* Free and total device memory in bytes. */
tf_status tf_gpu_mem_info(const tf_gpu_dev *c, size_t *free_bytes, size_t *total_bytes);

/* cudaMalloc with a message naming what and how many bytes on failure
 * (TF_ERR_NOMEM when the device is out of memory, or when the allocation
 * would take the thread's current context past its memory limit; the
 * message then names the limit and what is in use). bytes 0 -> *p = NULL. */
tf_status tf_gpu_alloc_bytes(void **p, size_t bytes, const char *what);
void tf_gpu_free(void *p);

template <typename T>
static inline tf_status tf_gpu_alloc(T **p, uint64_t n, const char *what)
{
    if (n > SIZE_MAX / sizeof(T))
        return tf_fail(TF_ERR_NOMEM, "device allocation of %llu elements for %s overflows",
                       (unsigned long long)n, what);
    return tf_gpu_alloc_bytes((void **)p, (size_t)n * sizeof(T), what);
}

/* Allocates n elements on the device and copies them from the host. */
template <typename T>
static inline tf_status tf_gpu_upload_new(T **d, const T *h, uint64_t n, const char *what)
{
    TF_TRY(tf_gpu_alloc(d, n, what));
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

/* Host -> device copy of `bytes` from pageable memory through c's pinned
 * staging ring: the host copies a piece into a free staging buffer (on
 * the default OpenMP threads) while the DMA of the previous piece runs.
 * The copies are queued on s, in order after the work queued there
 * before; on return `src` may be reused and `dst` is complete once s
 * reaches this point (order other streams on an event of s). The ring is
 * made by the first copy of at least 4 rings' bytes (or tf_gpu_stage_ready);
 * until then, where it cannot be made, or with c->tune.gpu_staging 0, a
 * plain cudaMemcpy does the copy (one warning on stderr per process when
 * pinning failed). For the plan uploads now and the streamed
 * (out-of-memory) path later. */
tf_status tf_gpu_h2d_staged(tf_gpu_dev *c, void *dst, const void *src, size_t bytes, cudaStream_t s);
/* The same for n doubles stored as floats on the device: converted into
 * the staging buffers, so half the bytes cross. */
tf_status tf_gpu_h2d_staged_floats(tf_gpu_dev *c, float *dst, const double *src, uint64_t n, cudaStream_t s);
/* Makes c's staging ring `bytes` a buffer for gigabytes of uploads (the
 * default's 2 MiB pieces run at ~13 GB/s there: a thread team forked per
 * piece, 64 KiB a thread), kept for the context's life; where that much
 * cannot be pinned, the default ring stays. */
void tf_gpu_stage_grow(tf_gpu_dev *c, size_t bytes);
/* Makes c's staging ring now rather than on the first staged copy; true
 * when the copies will use it (c->tune.gpu_staging on and pinning worked). */
bool tf_gpu_stage_ready(tf_gpu_dev *c);

/* Allocates n elements on the device and queues their copy from h on s
 * through c's staging (h may be reused on return). */
template <typename T>
static inline tf_status tf_gpu_upload_staged(tf_gpu_dev *c, T **d, const T *h, uint64_t n, const char *what,
                                              cudaStream_t s)
{
    TF_TRY(tf_gpu_alloc(d, n, what));
    return tf_gpu_h2d_staged(c, *d, h, (size_t)n * sizeof(T), s);
}
/* Host doubles -> device values of the plan's type, through c's staging. */
static inline tf_status tf_gpu_h2d_values(tf_gpu_dev *c, double *d, const double *h, uint64_t n, cudaStream_t s)
{
    return tf_gpu_h2d_staged(c, d, h, (size_t)n * sizeof(double), s);
}
static inline tf_status tf_gpu_h2d_values(tf_gpu_dev *c, float *d, const double *h, uint64_t n, cudaStream_t s)
{
    return tf_gpu_h2d_staged_floats(c, d, h, n, s);
}

/* Host doubles -> device T (converted through a bounded host buffer when T is float). */
template <typename T>
tf_status tf_gpu_put_values(T *d, const double *h, uint64_t n, cudaStream_t s);
/* Device T -> host doubles (synchronous with respect to s). */
template <typename T>
tf_status tf_gpu_get_values(double *h, const T *d, uint64_t n, cudaStream_t s);

/* Device memory of one array, freed on scope exit. */
template <typename T>
struct tf_dev_array {
    T *p = nullptr;
    tf_dev_array() = default;
    tf_dev_array(const tf_dev_array &) = delete;
    tf_dev_array &operator=(const tf_dev_array &) = delete;
    ~tf_dev_array() { tf_gpu_free(p); }
    tf_status alloc(uint64_t n, const char *what)
    {
        tf_gpu_free(p);
        p = nullptr;
        return tf_gpu_alloc(&p, n, what);
    }
    tf_status upload(const T *h, uint64_t n, const char *what)
    {
        tf_gpu_free(p);
        p = nullptr;
        return tf_gpu_upload_new(&p, h, n, what);
    }
};
#endif
