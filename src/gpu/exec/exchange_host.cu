/* SPDX-License-Identifier: BSD-3-Clause */
/* The host-staging transport of a GPU group (exchange.cuh): for GPU ranks
 * without NCCL (not installed, or two ranks on one GPU, which NCCL
 * refuses) and TF_EXCHANGE=host. share_rows: each GPU's own rows device ->
 * host into one pinned buffer (reused, grown to the largest exchange), the
 * buffer all-gathered over the ranks' MPI (tf_dist.allgather_bytes: fp32
 * rows go as they are), the others' rows host -> device. sum: each GPU's
 * vector to the host, every GPU's gathered, added in group-rank order (0.0
 * + GPU 0's + GPU 1's + ...: the peer path's order, so the same bits on
 * every rank and as one process's peer sum), the sum back to every GPU.
 * The calls return once every copy is done (the buffer is free again):
 * every wait bounded, the GPUs' by g->timeout_s (tf_exchange_wait_on), the
 * ranks' by the MPI layer's bound (TF_MPI_TIMEOUT). */
#include <string.h>

#include "gpu/exec/exchange.cuh"
extern "C" {
#include "core/alloc.h"
}

tf_status tf_host_exchange_init(tf_exchange *g, tf_gpu_dev *const *gpu, int n, const tf_dist *d, int nranks,
                                int first)
{
    if (n < 1 || n > TF_MAX_GPUS || nranks < n || first < 0 || first + n > nranks)
        return tf_fail(TF_ERR_ARG, "host-staged exchange: %d GPUs from %d of %d", n, first, nranks);
    if (d && (n != 1 || d->size != nranks || d->rank != first))
        return tf_fail(TF_ERR_ARG, "host-staged exchange: rank %d of %d holds GPU %d of %d (one GPU per rank)",
                       d->rank, d->size, first, nranks);
    if (d && !d->allgather_bytes)
        return tf_fail(TF_ERR_UNAVAILABLE, "host-staged exchange: the ranks' MPI layer has no byte all-gather "
                                           "(a libtenfold older than its CUDA module)");
    g->n = n;
    g->nranks = nranks;
    g->first = first;
    g->host = true;
    g->dist = d;
    g->timeout_s = tf_group_timeout(gpu[0]);
    for (int i = 0; i < n; ++i) g->gpu[i] = gpu[i];
    TF_TRY(TF_ALLOC(g->unit, (uint64_t)nranks + 1, "the exchange's group ranks"));
    for (int r = 0; r <= nranks; ++r) g->unit[r] = (uint64_t)r;
    return TF_OK;
}

void tf_host_exchange_free(tf_exchange *g)
{
    /* every call waits for its copies before it returns: nothing reads the
     * buffer now, unless a wait ran out (then the GPU is stuck: leak it
     * rather than free what a copy may still use) */
    if (g->stage && g->n > 0) {
        bool idle = true;
        for (int i = 0; i < g->n; ++i) {
            cudaSetDevice(g->gpu[i]->device);
            if (cudaStreamQuery(g->gpu[i]->stream) == cudaErrorNotReady) idle = false;
        }
        cudaGetLastError();
        if (idle) cudaFreeHost(g->stage);
    }
    g->stage = nullptr;
    g->stage_bytes = 0;
    tf_free(g->unit);
    g->unit = nullptr;
    g->host = false;
    g->dist = nullptr;
}

namespace {

/* The pinned buffer holds at least `bytes`. */
tf_status stage_at_least(tf_exchange *g, size_t bytes)
{
    if (bytes <= g->stage_bytes) return TF_OK;
    TF_TRY(tf_gpu_dev_use(g->gpu[0]));
    if (g->stage) cudaFreeHost(g->stage); /* no copy uses it between calls */
    g->stage = nullptr;
    g->stage_bytes = 0;
    void *p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) {
        cudaGetLastError();
        return tf_fail(TF_ERR_NOMEM, "host-staged exchange: cannot pin %.1f MiB of host memory (%s)",
                       (double)bytes / (1024.0 * 1024.0), cudaGetErrorString(e));
    }
    g->stage = p;
    g->stage_bytes = bytes;
    return TF_OK;
}

void streams_of(const tf_exchange *g, const cudaStream_t *streams, cudaStream_t *st)
{
    for (int i = 0; i < g->n; ++i) st[i] = streams ? streams[i] : g->gpu[i]->stream;
}

} // namespace

tf_status tf_host_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                             uint32_t value_bytes, const cudaStream_t *streams)
{
    const uint64_t row_bytes = cols * value_bytes;
    const uint64_t total = row_lo[g->nranks] * row_bytes; /* the buffer mirrors rows 0.. of the matrix */
    if (!row_bytes || !total || g->nranks < 2) return TF_OK;
    TF_TRY(stage_at_least(g, (size_t)total));
    unsigned char *h = (unsigned char *)g->stage;
    cudaStream_t st[TF_MAX_GPUS];
    streams_of(g, streams, st);
    /* each GPU's own rows to the host, after the work queued before (which makes them) */
    for (int i = 0; i < g->n; ++i) {
        const int r = g->first + i;
        const uint64_t off = row_lo[r] * row_bytes, bytes = (row_lo[r + 1] - row_lo[r]) * row_bytes;
        if (!bytes) continue;
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        TF_CU(cudaMemcpyAsync(h + off, (const char *)a[i] + off, (size_t)bytes, cudaMemcpyDeviceToHost, st[i]));
    }
    TF_TRY(tf_exchange_wait_on(g, st));
    if (g->dist) TF_TRY(g->dist->allgather_bytes(h, row_lo, row_bytes, g->dist->round_bytes));
    /* every other GPU's rows to each: those before its own, those after */
    for (int i = 0; i < g->n; ++i) {
        const int r = g->first + i;
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        const uint64_t lo = row_lo[0] * row_bytes, mine = row_lo[r] * row_bytes, end = row_lo[r + 1] * row_bytes;
        if (mine > lo)
            TF_CU(cudaMemcpyAsync((char *)a[i] + lo, h + lo, (size_t)(mine - lo), cudaMemcpyHostToDevice, st[i]));
        if (total > end)
            TF_CU(cudaMemcpyAsync((char *)a[i] + end, h + end, (size_t)(total - end), cudaMemcpyHostToDevice, st[i]));
    }
    return tf_exchange_wait_on(g, st); /* the buffer is free for the next call */
}

tf_status tf_host_sum(tf_exchange *g, double *const *a, uint64_t count, const cudaStream_t *streams)
{
    if (!count || g->nranks < 2) return TF_OK;
    const uint64_t row = count * sizeof(double);
    /* rows 0..nranks-1: every GPU's vector; row nranks: the sum */
    TF_TRY(stage_at_least(g, (size_t)(row * ((uint64_t)g->nranks + 1))));
    double *h = (double *)g->stage;
    cudaStream_t st[TF_MAX_GPUS];
    streams_of(g, streams, st);
    for (int i = 0; i < g->n; ++i) {
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        TF_CU(cudaMemcpyAsync(h + (uint64_t)(g->first + i) * count, a[i], (size_t)row, cudaMemcpyDeviceToHost,
                              st[i]));
    }
    TF_TRY(tf_exchange_wait_on(g, st));
    /* as doubles (bits kept), so a round holds at most round_bytes of a long vector */
    if (g->dist) TF_TRY(g->dist->allgather_rows(h, g->unit, count, g->dist->round_bytes));
    double *sum = h + (uint64_t)g->nranks * count;
    /* 0.0 + rank 0's + rank 1's + ...: exchange_peer.cu's sum_parts_kernel's order, the same bits */
    for (uint64_t e = 0; e < count; ++e) sum[e] = 0.0;
    for (int r = 0; r < g->nranks; ++r) {
        const double *v = h + (uint64_t)r * count;
        for (uint64_t e = 0; e < count; ++e) sum[e] += v[e];
    }
    for (int i = 0; i < g->n; ++i) {
        TF_TRY(tf_gpu_dev_use(g->gpu[i]));
        TF_CU(cudaMemcpyAsync(a[i], sum, (size_t)row, cudaMemcpyHostToDevice, st[i]));
    }
    return tf_exchange_wait_on(g, st);
}
