/* SPDX-License-Identifier: BSD-3-Clause */
/* Device context, error messages, allocation and value transfers. */
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#include "gpu/runtime/gpu_dev.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "core/parallel.h"
#include "core/alloc.h"
}

/* "path/to/file.cu" -> "file.cu"; "cudaMemcpy(a, b)" -> "cudaMemcpy". */
static const char *base_name(const char *file)
{
    const char *s = strrchr(file, '/');
    return s ? s + 1 : file;
}
static int call_name_len(const char *expr)
{
    const char *p = strchr(expr, '(');
    return p ? (int)(p - expr) : (int)strlen(expr);
}

tf_status tf_gpu_fail(const char *file, int line, const char *expr, cudaError_t e)
{
    tf_status s = e == cudaErrorMemoryAllocation ? TF_ERR_NOMEM : TF_ERR_DEVICE;
    return tf_fail(s, "%s:%d: %.*s: %s (%s)", base_name(file), line, call_name_len(expr), expr,
                   cudaGetErrorString(e), cudaGetErrorName(e));
}

tf_status tf_cublas_fail(const char *file, int line, const char *expr, cublasStatus_t e)
{
    return tf_fail(TF_ERR_DEVICE, "%s:%d: %.*s: %s", base_name(file), line, call_name_len(expr),
                   expr, cublasGetStatusString(e));
}

static const char *cusolver_name(cusolverStatus_t e)
{
    switch (e) {
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "not initialized";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "allocation failed";
    case CUSOLVER_STATUS_INVALID_VALUE: return "invalid value";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "architecture mismatch";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "execution failed";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "internal error";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "matrix type not supported";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "not supported";
    default: return "error";
    }
}

tf_status tf_cusolver_fail(const char *file, int line, const char *expr, cusolverStatus_t e)
{
    return tf_fail(TF_ERR_DEVICE, "%s:%d: %.*s: %s (cusolver status %d)", base_name(file), line,
                   call_name_len(expr), expr, cusolver_name(e), (int)e);
}

tf_status tf_gpu_dev_init(tf_gpu_dev *c, int device)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        cudaGetLastError();
        return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA device is present (%s)",
                       e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    }
    n = tf_gpu_count_impl(); /* TF_TEST_GPUS's count where set */
    if (device < 0 || device >= n)
        return tf_fail(TF_ERR_ARG, "CUDA device %d does not exist (devices 0..%d)", device, n - 1);
    device = tf_gpu_physical(device);
    c->device = device;
    TF_CU(cudaSetDevice(device));
    cudaDeviceProp p;
    TF_CU(cudaGetDeviceProperties(&p, device));
    c->sm_count = p.multiProcessorCount;
    c->smem_block = p.sharedMemPerBlock;
    c->smem_optin = p.sharedMemPerBlockOptin;
    c->l2_bytes = p.l2CacheSize > 0 ? (uint64_t)p.l2CacheSize : 0;
    snprintf(c->name, sizeof c->name, "%s", p.name);
    TF_CU(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    /* The side stream runs short work beside the main stream's kernels
     * (CP-ALS: the Gram and the R x R solve beside the next MTTKRP): at the
     * highest priority its blocks take the first SM that frees up. (Not
     * inside a CUDA graph: an instantiated graph runs every node at the
     * launch stream's priority; see enqueue_small_sweep in gpu/cpd/backend.cu.) */
    int lo = 0, hi = 0;
    TF_CU(cudaDeviceGetStreamPriorityRange(&lo, &hi));
    TF_CU(cudaStreamCreateWithPriority(&c->side, cudaStreamNonBlocking, hi));
    return TF_OK;
}

/* The context this thread's device allocations count against (set by
 * tf_gpu_dev_use), and the ledger of tenfold's device allocations: which
 * context each belongs to and its size, so a free gives the bytes back. */
static thread_local const tf_gpu_dev *tls_current = nullptr;
static std::mutex ledger_mu;
static std::unordered_map<void *, std::pair<const tf_gpu_dev *, size_t>> ledger;

tf_status tf_gpu_dev_use(const tf_gpu_dev *c)
{
    TF_CU(cudaSetDevice(c->device));
    tls_current = c;
    return TF_OK;
}

/* Forgets c: its ledger entries (leaks of a caller that freed the context
 * first) and this thread's pointer to it. */
static void ledger_forget(const tf_gpu_dev *c)
{
    std::lock_guard<std::mutex> lock(ledger_mu);
    for (auto it = ledger.begin(); it != ledger.end();)
        it = it->second.first == c ? ledger.erase(it) : std::next(it);
    if (tls_current == c) tls_current = nullptr;
}

/* A library handle that could not be made: with little device memory
 * free that is the cause (cuSOLVER reports it as an internal error), so
 * it is an out-of-memory error naming the free memory (under --device
 * auto the CPU then takes over); else the library's own status. */
static tf_status handle_fail(const tf_gpu_dev *c, const char *call, const char *status)
{
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) cudaGetLastError();
    const bool low = fr < ((size_t)512 << 20);
    return tf_fail(low ? TF_ERR_NOMEM : TF_ERR_DEVICE, "%s could not start (%s)%s; GPU %d has %.2f of %.2f GiB free",
                   call, status, low ? ", out of device memory" : "", c->device, fr / 1073741824.0, tot / 1073741824.0);
}

tf_status tf_gpu_dev_blas(tf_gpu_dev *c)
{
    if (c->blas) return TF_OK;
    const cublasStatus_t e = cublasCreate(&c->blas);
    if (e != CUBLAS_STATUS_SUCCESS) {
        c->blas = nullptr;
        return handle_fail(c, "cuBLAS (cublasCreate)", cublasGetStatusString(e));
    }
    TF_CUBLAS(cublasSetStream(c->blas, c->stream));
    /* Scalars (alpha, beta) are host values; results we need come back via copies. */
    TF_CUBLAS(cublasSetPointerMode(c->blas, CUBLAS_POINTER_MODE_HOST));
    return TF_OK;
}

tf_status tf_gpu_dev_solver(tf_gpu_dev *c)
{
    if (c->solver) return TF_OK;
    const cusolverStatus_t e = cusolverDnCreate(&c->solver);
    if (e != CUSOLVER_STATUS_SUCCESS) {
        c->solver = nullptr;
        return handle_fail(c, "cuSOLVER (cusolverDnCreate)", cusolver_name(e));
    }
    TF_CUSOLVER(cusolverDnSetStream(c->solver, c->stream));
    return TF_OK;
}

/* The staging ring's block and events, once its copies are done. */
static void stage_free(tf_gpu_dev *c)
{
    for (int k = 0; k < TF_STAGE_SLOTS; ++k) {
        if (c->stage_done[k]) {
            cudaEventSynchronize(c->stage_done[k]); /* its DMA may still read the buffer */
            cudaEventDestroy(c->stage_done[k]);
        }
        c->stage[k] = nullptr;
        c->stage_done[k] = nullptr;
    }
    if (c->stage_mem) cudaFreeHost(c->stage_mem);
    c->stage_mem = nullptr;
}

void tf_gpu_dev_destroy(tf_gpu_dev *c)
{
    ledger_forget(c);
    if (c->device < 0) return;
    cudaSetDevice(c->device);
    if (c->solver) cusolverDnDestroy(c->solver);
    if (c->blas) cublasDestroy(c->blas);
    stage_free(c);
    c->stage_state = 0;
    if (c->stream) cudaStreamDestroy(c->stream);
    if (c->side) cudaStreamDestroy(c->side);
    c->solver = nullptr;
    c->blas = nullptr;
    c->stream = c->side = nullptr;
    c->device = -1;
}

/* A device context for `device` with c's tuning and memory limit. */
static tf_status make_ctx(const tf_context *c, int device, void **out)
{
    tf_gpu_dev *g = new (std::nothrow) tf_gpu_dev();
    if (!g) return tf_fail(TF_ERR_NOMEM, "out of memory creating a GPU context");
    tf_status s = tf_gpu_dev_init(g, device);
    if (s != TF_OK) {
        tf_gpu_dev_destroy(g);
        delete g;
        return s;
    }
    g->tune = c->tuning;
    g->memory_limit = c->opts.memory_limit;
    *out = g;
    return TF_OK;
}

tf_status tf_gpu_dev_of(tf_context *c, tf_gpu_dev **out)
{
    *out = nullptr;
    if (!c || c->backend != TF_BACKEND_GPU) {
        int n = 0;
        if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
            cudaGetLastError();
            return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA device is present");
        }
        return tf_fail(TF_ERR_UNAVAILABLE, "the context was made for the CPU: it has no GPU");
    }
    if (!c->gpu) TF_TRY(make_ctx(c, c->opts.device, &c->gpu));
    *out = (tf_gpu_dev *)c->gpu;
    return tf_gpu_dev_use(*out);
}

tf_status tf_gpu_dev_at(tf_context *c, int i, tf_gpu_dev **out)
{
    *out = nullptr;
    if (i == 0) return tf_gpu_dev_of(c, out);
    if (!c || c->backend != TF_BACKEND_GPU || i < 0 || i >= c->opts.ndevices || i >= TF_MAX_GPUS)
        return tf_fail(TF_ERR_ARG, "the context has no GPU number %d", i);
    if (!c->peer[i]) TF_TRY(make_ctx(c, c->opts.devices[i], &c->peer[i]));
    *out = (tf_gpu_dev *)c->peer[i];
    return tf_gpu_dev_use(*out);
}

extern "C" void tf_cuda_context_release_impl(void *gpu)
{
    tf_gpu_dev *g = (tf_gpu_dev *)gpu;
    if (!g) return;
    tf_gpu_dev_destroy(g);
    delete g;
}

tf_status tf_gpu_budget(const tf_gpu_dev *c, uint64_t *bytes)
{
    size_t fr = 0, tot = 0;
    TF_TRY(tf_gpu_mem_info(c, &fr, &tot));
    uint64_t b = (uint64_t)(0.9 * (double)fr);
    if (c->memory_limit) {
        const uint64_t left = c->memory_limit > c->allocated ? c->memory_limit - c->allocated : 0;
        if (left < b) b = left;
    }
    *bytes = b;
    return TF_OK;
}

extern "C" tf_status tf_cuda_context_budget_impl(tf_context *c, uint64_t *bytes)
{
    tf_gpu_dev *g = nullptr;
    TF_TRY(tf_gpu_dev_of(c, &g));
    return tf_gpu_budget(g, bytes);
}

tf_status tf_gpu_mem_info(const tf_gpu_dev *c, size_t *free_bytes, size_t *total_bytes)
{
    TF_TRY(tf_gpu_dev_use(c));
    TF_CU(cudaMemGetInfo(free_bytes, total_bytes));
    return TF_OK;
}

tf_status tf_gpu_alloc_bytes(void **p, size_t bytes, const char *what)
{
    *p = nullptr;
    if (bytes == 0) return TF_OK;
    const tf_gpu_dev *c = tls_current;
    if (c && c->memory_limit && c->allocated + bytes > c->memory_limit)
        return tf_fail(TF_ERR_NOMEM,
                       "device memory limit: allocating %zu bytes (%.2f MiB) for %s would pass the "
                       "limit of %.2f MiB (%.2f MiB in use)",
                       bytes, (double)bytes / (1 << 20), what, (double)c->memory_limit / (1 << 20),
                       (double)c->allocated / (1 << 20));
    cudaError_t e = cudaMalloc(p, bytes);
    if (e == cudaSuccess) {
        if (c) {
            std::lock_guard<std::mutex> lock(ledger_mu);
            ledger[*p] = {c, bytes};
            c->allocated += bytes;
        }
        return TF_OK;
    }
    *p = nullptr;
    cudaGetLastError(); /* out-of-memory is not sticky: clear it */
    size_t fr = 0, tot = 0;
    int dev = -1;
    cudaGetDevice(&dev);
    cudaMemGetInfo(&fr, &tot);
    if (e == cudaErrorMemoryAllocation)
        return tf_fail(TF_ERR_NOMEM,
                       "out of device memory allocating %zu bytes (%.2f GiB) for %s; GPU %d has "
                       "%.2f of %.2f GiB free",
                       bytes, (double)bytes / (1 << 30), what, dev, (double)fr / (1 << 30),
                       (double)tot / (1 << 30));
    return tf_fail(TF_ERR_DEVICE, "cudaMalloc of %zu bytes for %s: %s", bytes, what,
                   cudaGetErrorString(e));
}

void tf_gpu_free(void *p)
{
    if (!p) return;
    {
        std::lock_guard<std::mutex> lock(ledger_mu);
        auto it = ledger.find(p);
        if (it != ledger.end()) {
            it->second.first->allocated -= it->second.second;
            ledger.erase(it);
        }
    }
    cudaFree(p);
}

/* Conversion chunk: bounds the host buffer for float transfers. */
static const uint64_t kChunk = 1u << 22;

/* Host staging buffer of floats, freed on scope exit. */
struct host_floats {
    float *p = nullptr;
    ~host_floats() { tf_free(p); }
};

/* One piece of a staged copy: n elements from src into a staging buffer
 * (bytes as they are, or doubles as floats). */
typedef void (*stage_fill)(void *dst, const void *src, uint64_t n);
static void fill_bytes(void *dst, const void *src, uint64_t n) { tf_copy_bytes(dst, src, n); }
static void fill_floats(void *dst, const void *src, uint64_t n)
{
    tf_doubles_to_floats((const double *)src, (float *)dst, n);
}

/* Copies without the pinned ring: plain bytes in one cudaMemcpy from
 * pageable memory, conversions through a bounded pageable buffer. Waits
 * for the copies (the DMA may still read pageable memory after the call). */
static tf_status h2d_unstaged(void *dst, const void *src, uint64_t n, size_t in_size, size_t out_size,
                              stage_fill fill, cudaStream_t s)
{
    if (in_size == out_size) {
        if (n) TF_CU(cudaMemcpyAsync(dst, src, n * in_size, cudaMemcpyHostToDevice, s));
        TF_CU(cudaStreamSynchronize(s));
        return TF_OK;
    }
    host_floats buf;
    TF_TRY(TF_ALLOC(buf.p, std::min<uint64_t>(n, kChunk), "float staging buffer"));
    for (uint64_t at = 0; at < n; at += kChunk) {
        const uint64_t len = std::min<uint64_t>(kChunk, n - at);
        fill(buf.p, (const char *)src + at * in_size, len);
        TF_CU(cudaMemcpyAsync((char *)dst + at * out_size, buf.p, len * out_size, cudaMemcpyHostToDevice, s));
        TF_CU(cudaStreamSynchronize(s)); /* the buffer is reused */
    }
    return TF_OK;
}

bool tf_gpu_stage_ready(tf_gpu_dev *c)
{
    if (!c->tune.gpu_staging) return false;
    if (c->stage_state) return c->stage_state > 0;
    if (!c->stage_bytes) c->stage_bytes = TF_STAGE_BYTES;
    c->stage_state = 1;
    if (c->stage_bytes > SIZE_MAX / TF_STAGE_SLOTS ||
        cudaHostAlloc(&c->stage_mem, c->stage_bytes * TF_STAGE_SLOTS, cudaHostAllocDefault) != cudaSuccess) {
        c->stage_mem = nullptr;
        c->stage_state = -1;
    }
    for (int k = 0; k < TF_STAGE_SLOTS && c->stage_state > 0; ++k) {
        c->stage[k] = (char *)c->stage_mem + k * c->stage_bytes;
        if (cudaEventCreateWithFlags(&c->stage_done[k], cudaEventDisableTiming) != cudaSuccess) {
            c->stage_done[k] = nullptr;
            c->stage_state = -1;
        }
    }
    if (c->stage_state > 0) return true;
    cudaGetLastError();
    stage_free(c);
    static std::once_flag warned;
    std::call_once(warned, [&] {
        fprintf(stderr, "tenfold: warning: could not pin %d x %zu bytes of host memory for GPU uploads; "
                        "copying from pageable memory (slower)\n", TF_STAGE_SLOTS, c->stage_bytes);
    });
    return false;
}

void tf_gpu_stage_grow(tf_gpu_dev *c, size_t bytes)
{
    if (!c->tune.gpu_staging || c->stage_state < 0 || (c->stage_state > 0 && c->stage_bytes >= bytes)) return;
    stage_free(c); /* waits for the old buffers' copies */
    c->stage_state = 0;
    c->stage_bytes = bytes;
    if (tf_gpu_stage_ready(c)) return;
    c->stage_state = 0; /* no room to pin that much: the default ring again */
    c->stage_bytes = TF_STAGE_BYTES;
}

/* n elements of in_size bytes at src -> out_size bytes each at dst (fill
 * converts), through the ring when it is there (tf_gpu_h2d_staged). */
static tf_status h2d(tf_gpu_dev *c, void *dst, const void *src, uint64_t n, size_t in_size, size_t out_size,
                     stage_fill fill, cudaStream_t s)
{
    if (!n) return TF_OK;
    /* Pinning the ring costs about what a plain copy of 2-3 rings' bytes
     * does (8 MiB: 2.4-2.6 ms; pageable copies run at 7-10 GB/s): a copy
     * under 4 rings' bytes does not make it (small tensors build faster). */
    const uint64_t ring = TF_STAGE_SLOTS * (uint64_t)(c->stage_bytes ? c->stage_bytes : TF_STAGE_BYTES);
    const bool worth = c->stage_state > 0 || n * out_size >= 4 * ring;
    if (!worth || !tf_gpu_stage_ready(c)) return h2d_unstaged(dst, src, n, in_size, out_size, fill, s);
    const uint64_t per = c->stage_bytes / out_size;
    if (!per) return tf_fail(TF_ERR_ARG, "staging buffers of %zu bytes hold no element", c->stage_bytes);
    for (uint64_t at = 0; at < n; at += per) {
        const uint64_t len = std::min<uint64_t>(per, n - at);
        const unsigned k = c->stage_next;
        c->stage_next = (k + 1) % TF_STAGE_SLOTS;
        TF_CU(cudaEventSynchronize(c->stage_done[k])); /* its last DMA has read it */
        fill(c->stage[k], (const char *)src + at * in_size, len);
        TF_CU(cudaMemcpyAsync((char *)dst + at * out_size, c->stage[k], len * out_size, cudaMemcpyHostToDevice, s));
        TF_CU(cudaEventRecord(c->stage_done[k], s));
    }
    return TF_OK;
}

tf_status tf_gpu_h2d_staged(tf_gpu_dev *c, void *dst, const void *src, size_t bytes, cudaStream_t s)
{
    return h2d(c, dst, src, bytes, 1, 1, fill_bytes, s);
}

tf_status tf_gpu_h2d_staged_floats(tf_gpu_dev *c, float *dst, const double *src, uint64_t n, cudaStream_t s)
{
    return h2d(c, dst, src, n, sizeof(double), sizeof(float), fill_floats, s);
}

template <>
tf_status tf_gpu_put_values<double>(double *d, const double *h, uint64_t n, cudaStream_t s)
{
    return h2d_unstaged(d, h, n, sizeof(double), sizeof(double), fill_bytes, s);
}

template <>
tf_status tf_gpu_put_values<float>(float *d, const double *h, uint64_t n, cudaStream_t s)
{
    return h2d_unstaged(d, h, n, sizeof(double), sizeof(float), fill_floats, s);
}

template <>
tf_status tf_gpu_get_values<double>(double *h, const double *d, uint64_t n, cudaStream_t s)
{
    if (n) TF_CU(cudaMemcpyAsync(h, d, n * sizeof(double), cudaMemcpyDeviceToHost, s));
    TF_CU(cudaStreamSynchronize(s));
    return TF_OK;
}

template <>
tf_status tf_gpu_get_values<float>(double *h, const float *d, uint64_t n, cudaStream_t s)
{
    host_floats buf;
    TF_TRY(TF_ALLOC(buf.p, std::min<uint64_t>(n, kChunk), "float staging buffer"));
    for (uint64_t at = 0; at < n; at += kChunk) {
        uint64_t len = std::min<uint64_t>(kChunk, n - at);
        TF_CU(cudaMemcpyAsync(buf.p, d + at, len * sizeof(float), cudaMemcpyDeviceToHost, s));
        TF_CU(cudaStreamSynchronize(s));
        tf_floats_to_doubles(buf.p, h + at, len);
    }
    return TF_OK;
}
