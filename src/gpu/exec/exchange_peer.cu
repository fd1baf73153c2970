/* SPDX-License-Identifier: BSD-3-Clause */
/* The copy-engine transport of a GPU group in one process (exchange.cuh): each
 * GPU's rows go to every other GPU by cudaMemcpyPeerAsync over NVLink /
 * PCIe. Unlike NCCL's broadcasts, which are kernels, the copies take no SM
 * time from the MTTKRP they overlap (issue 28: NCCL's kernels slowed the
 * fp64 MTTKRP beside them by 3-6 %), and need no library. */
#include <mutex>

#include "gpu/exec/exchange.cuh"

namespace {

/* which ordered pairs tf_peer_enable has enabled */
std::mutex peer_mu;
bool peer_on[TF_MAX_GPUS * 4][TF_MAX_GPUS * 4];

} // namespace

tf_status tf_peer_enable(int from, int to)
{
    std::lock_guard<std::mutex> lock(peer_mu);
    const bool tracked = from < TF_MAX_GPUS * 4 && to < TF_MAX_GPUS * 4;
    if (tracked && peer_on[from][to]) return TF_OK;
    const cudaError_t e = cudaDeviceEnablePeerAccess(to, 0); /* from is the current device */
    if (e == cudaErrorPeerAccessAlreadyEnabled) cudaGetLastError(); /* enabled outside tenfold: fine */
    else if (e != cudaSuccess) {
        cudaGetLastError(); /* not sticky: leave nothing behind for the NCCL fallback */
        return tf_gpu_fail(__FILE__, __LINE__, "cudaDeviceEnablePeerAccess", e);
    }
    if (tracked) peer_on[from][to] = true;
    return TF_OK;
}

tf_status tf_peer_enable_reachable(tf_gpu_dev *const *gpu, int n)
{
    for (int a = 0; a < n; ++a) {
        TF_TRY(tf_gpu_dev_use(gpu[a]));
        for (int b = 0; b < n; ++b) {
            int can = 0;
            if (b == a || gpu[a]->device == gpu[b]->device ||
                cudaDeviceCanAccessPeer(&can, gpu[a]->device, gpu[b]->device) != cudaSuccess || !can) {
                cudaGetLastError();
                continue;
            }
            TF_TRY(tf_peer_enable(gpu[a]->device, gpu[b]->device));
        }
    }
    return TF_OK;
}

bool tf_peer_usable(tf_gpu_dev *const *gpu, int n)
{
    if (n < 2 || gpu[0]->tune.gpu_exchange == 1) return false;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            if (gpu[i]->device == gpu[j]->device) continue; /* one GPU twice (TF_TEST_GPUS): a copy within it */
            int ok = 0;
            if (cudaDeviceCanAccessPeer(&ok, gpu[i]->device, gpu[j]->device) != cudaSuccess) {
                cudaGetLastError();
                return false;
            }
            if (!ok) return false;
        }
    return true;
}

tf_status tf_peer_exchange_init(tf_exchange *g, tf_gpu_dev *const *gpu, int n)
{
    g->n = g->nranks = n;
    g->first = 0;
    g->peer = true;
    g->timeout_s = tf_group_timeout(gpu[0]);
    for (int i = 0; i < n; ++i) {
        g->gpu[i] = gpu[i];
        TF_TRY(tf_gpu_dev_use(gpu[i]));
        for (int j = 0; j < n; ++j)
            if (j != i && gpu[j]->device != gpu[i]->device) TF_TRY(tf_peer_enable(gpu[i]->device, gpu[j]->device));
        TF_CU(cudaEventCreateWithFlags(&g->ready[i], cudaEventDisableTiming));
        TF_CU(cudaEventCreateWithFlags(&g->sent[i], cudaEventDisableTiming));
    }
    return TF_OK;
}

void tf_peer_exchange_free(tf_exchange *g)
{
    for (int i = 0; i < g->n; ++i) {
        if (g->gpu[i]) cudaSetDevice(g->gpu[i]->device);
        if (g->ready[i]) cudaEventDestroy(g->ready[i]);
        if (g->sent[i]) cudaEventDestroy(g->sent[i]);
        g->ready[i] = g->sent[i] = nullptr;
    }
    /* peer access stays enabled: it belongs to the devices, not the run */
    g->peer = false;
}

/* As tf_exchange_share_rows: GPU i's rows [row_lo[i], row_lo[i+1]) to every
 * other GPU's copy, in place. Order: a GPU's rows land on GPU j only after
 * the work already queued on j's stream (which may still read the old
 * rows), and j's stream goes on only once every other GPU's rows are in. */
tf_status tf_peer_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                             uint32_t value_bytes, const cudaStream_t *streams)
{
    cudaStream_t st[TF_MAX_GPUS];
    for (int i = 0; i < g->n; ++i) {
        st[i] = streams ? streams[i] : g->gpu[i]->stream;
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        TF_CU(cudaEventRecord(g->ready[i], st[i]));
    }
    for (int i = 0; i < g->n; ++i) {
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        for (int j = 0; j < g->n; ++j)
            if (j != i) TF_CU(cudaStreamWaitEvent(st[i], g->ready[j], 0));
        const uint64_t rows = row_lo[i + 1] - row_lo[i];
        const size_t off = (size_t)(row_lo[i] * cols * value_bytes), bytes = (size_t)(rows * cols * value_bytes);
        /* GPU i sends to i+1, i+2, ... (mod n) in turn: at every step each GPU
         * receives from one sender, rather than all senders starting on GPU 0 */
        for (int k = 1; k < g->n && bytes; ++k) {
            const int j = (i + k) % g->n;
            TF_CU(cudaMemcpyPeerAsync((char *)a[j] + off, g->gpu[j]->device, (const char *)a[i] + off,
                                      g->gpu[i]->device, bytes, st[i]));
        }
        TF_CU(cudaEventRecord(g->sent[i], st[i]));
    }
    for (int j = 0; j < g->n; ++j) {
        TF_TRY(tf_gpu_dev_use(g->gpu[j]));
        for (int i = 0; i < g->n; ++i)
            if (i != j) TF_CU(cudaStreamWaitEvent(st[j], g->sent[i], 0));
    }
    return TF_OK;
}

namespace {

/* a[lo + e] = sum over GPUs j in order of their part (GPU `self`'s own in
 * a, the others' pulled into scratch at j * stride). */
__global__ void sum_parts_kernel(double *a, const double *scratch, uint64_t lo, uint64_t len, uint64_t stride, int n,
                                 int self)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < len; e += (uint64_t)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int j = 0; j < n; ++j) s += j == self ? a[lo + e] : scratch[(uint64_t)j * stride + e];
        a[lo + e] = s;
    }
}

} // namespace

/* As tf_exchange_sum. Order: GPU i pulls its part of GPU j's vector only
 * once j's stream has reached this call (the vector made), and the parts
 * then go out as share_rows sends rows (each stream goes on once every
 * part is in). Within one device (a GPU listed twice) the pulls are plain
 * device copies. */
tf_status tf_peer_sum(tf_exchange *g, double *const *a, double *const *scratch, uint64_t count,
                      const cudaStream_t *streams)
{
    const int n = g->n;
    if (n < 2 || !count) return TF_OK;
    uint64_t lo[TF_MAX_GPUS + 1];
    for (int i = 0; i <= n; ++i) lo[i] = (uint64_t)((unsigned __int128)count * (unsigned)i / (unsigned)n);
    const uint64_t stride = (count + (uint64_t)n - 1) / (uint64_t)n;
    cudaStream_t st[TF_MAX_GPUS];
    for (int i = 0; i < n; ++i) {
        st[i] = streams ? streams[i] : g->gpu[i]->stream;
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        TF_CU(cudaEventRecord(g->ready[i], st[i]));
    }
    for (int i = 0; i < n; ++i) {
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        const uint64_t len = lo[i + 1] - lo[i];
        if (!len) continue;
        for (int k = 1; k < n; ++k) { /* from i+1, i+2, ... (mod n): the senders spread as share_rows' */
            const int j = (i + k) % n;
            TF_CU(cudaStreamWaitEvent(st[i], g->ready[j], 0));
            TF_CU(cudaMemcpyPeerAsync(scratch[i] + (uint64_t)j * stride, g->gpu[i]->device, a[j] + lo[i],
                                      g->gpu[j]->device, len * sizeof(double), st[i]));
        }
        const uint64_t blocks = (len + 255) / 256;
        sum_parts_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, st[i]>>>(a[i], scratch[i], lo[i], len,
                                                                                     stride, n, i);
        TF_CU_LAUNCH("sum_parts_kernel");
    }
    return tf_peer_share_rows(g, (void *const *)a, lo, 1, (uint32_t)sizeof(double), streams);
}
