/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards cut on their GPU (shard_cut.cuh). Per chunk: its copy from the
 * feed's pinned slot, flags (1: the part's local non-zero, 2^32: a remote
 * one with pairs, 0: another part's), one exclusive scan of them (both
 * counts at once), a scatter to base + the scanned position (remote:
 * counted from the back), and the bases moved on by the chunk's totals --
 * queued on the work stream; the thread waits only for the copy before it
 * releases the slot. With X kept on the GPU (keep()), the first pass
 * copies each chunk into X's copy there, and later passes read that. */
#include <stdio.h>

#include <algorithm>
#include <chrono>

#include <cub/device/device_scan.cuh>

#include "gpu/exec/shard_cut.cuh"
extern "C" {
#include "core/alloc.h"
#include "core/parallel.h"
}

namespace {

constexpr unsigned BLOCK = 256;
constexpr uint64_t CHUNK = 1ull << 23; /* 8 Mi non-zeros: 160 MB a pinned slot, ~0.3 GB on a GPU at order 3 */
constexpr uint64_t REMOTE = 1ull << 32;

unsigned blocks_for(uint64_t n)
{
    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n + BLOCK - 1) / BLOCK, 1u << 20));
}

struct cut_args {
    const uint32_t *ind[TF_MAX_ORDER]; /* the chunk's */
    const double *vals;
    const uint32_t *map[TF_MAX_ORDER];
    uint32_t order, mode, prev;
    uint64_t lo, hi, plo, phi;
    int pairs;
    uint64_t len; /* of the chunk */
};

__device__ __forceinline__ uint32_t label(const uint32_t *map, uint32_t i) { return map ? map[i] : i; }

__global__ void flag_kernel(cut_args a, uint64_t *cnt)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a.len;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t i = label(a.map[a.mode], a.ind[a.mode][k]);
        uint64_t c = 0;
        if (i >= a.lo && i < a.hi) {
            c = 1;
            if (a.pairs) {
                const uint64_t j = label(a.map[a.prev], a.ind[a.prev][k]);
                if (!(j >= a.plo && j < a.phi)) c = REMOTE;
            }
        }
        cnt[k] = c;
    }
}

template <typename T>
struct out_args {
    uint32_t *ind[TF_MAX_ORDER];
    T *vals;
    uint64_t n; /* the shard's non-zeros (both halves) */
};

/* Local non-zero number r (in X's order) to r, remote number r to n-1-r;
 * a position past the shard (a wrong count) is skipped (the totals are
 * checked after the last chunk). */
template <typename T>
__global__ void scatter_kernel(cut_args a, const uint64_t *cnt, const uint64_t *pos, const uint64_t *base,
                               out_args<T> o)
{
    const uint64_t b0 = base[0], b1 = base[1];
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a.len;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t c = cnt[k];
        if (!c) continue;
        const uint64_t d = c == 1 ? b0 + (pos[k] & 0xffffffffull) : o.n - 1 - (b1 + (pos[k] >> 32));
        if (d >= o.n) continue;
        for (uint32_t m = 0; m < a.order; ++m) {
            uint32_t v = label(a.map[m], a.ind[m][k]);
            if (m == a.mode) v -= (uint32_t)a.lo;
            o.ind[m][d] = v;
        }
        o.vals[d] = (T)a.vals[k];
    }
}

__global__ void advance_kernel(const uint64_t *pos, uint64_t len, uint64_t *base)
{
    base[0] += pos[len] & 0xffffffffull;
    base[1] += pos[len] >> 32;
}

/* [lo, n) of the shard's arrays turned round in place. */
template <typename T>
__global__ void reverse_kernel(out_args<T> o, uint32_t order, uint64_t lo)
{
    const uint64_t len = o.n - lo;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < len / 2;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t x = lo + k, y = o.n - 1 - k;
        for (uint32_t m = 0; m < order; ++m) {
            const uint32_t t = o.ind[m][x];
            o.ind[m][x] = o.ind[m][y];
            o.ind[m][y] = t;
        }
        const T t = o.vals[x];
        o.vals[x] = o.vals[y];
        o.vals[y] = t;
    }
}

template <typename T>
tf_status run_cut(tf_shard_cutter *c, tf_shard_feed *feed, cut_args a, uint64_t n, uint64_t *nlocal)
{
    tf_gpu_dev *ctx = c->ctx;
    const tf_tensor *X = c->X;
    cudaStream_t st = ctx->stream;
    out_args<T> o = {};
    for (uint32_t m = 0; m < X->order; ++m) o.ind[m] = c->coo[0].ind[m];
    o.vals = (T *)c->coo[0].vals;
    o.n = n;
    TF_CU(cudaMemsetAsync(c->base, 0, 2 * sizeof(uint64_t), st));
    const bool from_feed = !(c->kept() && c->filled);
    const uint64_t nchunks = (X->nnz + c->chunk - 1) / c->chunk;
    for (uint64_t q = 0; q < nchunks; ++q) {
        const uint64_t k0 = q * c->chunk, len = std::min<uint64_t>(c->chunk, X->nnz - k0);
        /* the chunk on the GPU: in X's kept copy, else in the chunk buffers */
        for (uint32_t m = 0; m < X->order; ++m) a.ind[m] = c->kept() ? c->kind[m] + k0 : c->cind[m];
        a.vals = c->kept() ? c->kvals + k0 : c->cvals;
        if (from_feed) {
            int slot = 0;
            TF_TRY(feed->acquire(q, &slot));
            bool copied = true;
            for (uint32_t m = 0; m < X->order && copied; ++m)
                copied = cudaMemcpyAsync((void *)a.ind[m], feed->ind(slot, m), len * sizeof(uint32_t),
                                         cudaMemcpyHostToDevice, st) == cudaSuccess;
            copied = copied && cudaMemcpyAsync((void *)a.vals, feed->vals(slot), len * sizeof(double),
                                               cudaMemcpyHostToDevice, st) == cudaSuccess;
            copied = copied && cudaEventRecord(c->copied, st) == cudaSuccess &&
                     cudaEventSynchronize(c->copied) == cudaSuccess;
            if (!copied)
                return tf_gpu_fail(__FILE__, __LINE__, "a chunk's copy to the GPU (shards)", cudaGetLastError());
            feed->release(slot);
        }
        a.len = len;
        flag_kernel<<<blocks_for(len), BLOCK, 0, st>>>(a, c->cnt);
        TF_CU_LAUNCH("flag_kernel");
        TF_CU(cudaMemsetAsync(c->cnt + len, 0, sizeof(uint64_t), st));
        size_t bytes = c->tmp_bytes;
        TF_CU(cub::DeviceScan::ExclusiveSum(c->tmp, bytes, c->cnt, c->pos, (int)(len + 1), st));
        scatter_kernel<T><<<blocks_for(len), BLOCK, 0, st>>>(a, c->cnt, c->pos, c->base, o);
        TF_CU_LAUNCH("scatter_kernel");
        advance_kernel<<<1, 1, 0, st>>>(c->pos, len, c->base);
        TF_CU_LAUNCH("advance_kernel");
    }
    uint64_t got[2] = {0, 0};
    TF_CU(cudaMemcpyAsync(got, c->base, sizeof got, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    if (got[0] + got[1] != n)
        return tf_fail(TF_ERR_ARG, "GPU shard of mode %u: %llu non-zeros found, %llu counted by the partition",
                       a.mode + 1, (unsigned long long)(got[0] + got[1]), (unsigned long long)n);
    if (got[1] > 1) {
        reverse_kernel<T><<<blocks_for(got[1] / 2), BLOCK, 0, st>>>(o, X->order, got[0]);
        TF_CU_LAUNCH("reverse_kernel");
    }
    *nlocal = got[0];
    if (c->kept()) c->filled = true; /* every chunk is on the GPU now */
    return TF_OK;
}

uint64_t feed_chunk(const tf_tensor *X, uint64_t chunk)
{
    if (!chunk) chunk = CHUNK;
    chunk = std::min<uint64_t>(chunk, std::max<uint64_t>(X->nnz, 1));
    chunk = std::min<uint64_t>(chunk, 1ull << 30); /* the scan's int count and 32-bit halves */
    return (chunk + 63) / 64 * 64;                 /* every slot's arrays 8-byte aligned */
}

} // namespace

/* ------------------------------------------------------------- the feed */

tf_status tf_shard_feed::open(const tf_tensor *x, int nreaders, uint64_t want)
{
    close();
    X = x;
    readers = nreaders;
    chunk = feed_chunk(x, want);
    nchunks = (x->nnz + chunk - 1) / chunk;
    slot_bytes = chunk * (x->order * sizeof(uint32_t) + sizeof(double));
    /* tenfold's allocator (so the report's host peak counts it), then pinned */
    void *p = nullptr;
    TF_TRY(tf_alloc(&p, TF_FEED_SLOTS, slot_bytes, "pinned chunks (GPU shards)"));
    const cudaError_t e = cudaHostRegister(p, TF_FEED_SLOTS * slot_bytes, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
        cudaGetLastError();
        tf_free(p);
        return tf_fail(TF_ERR_NOMEM, "GPU shards: %.1f MiB of host memory for the chunks could not be pinned: %s",
                       (double)(TF_FEED_SLOTS * slot_bytes) / (1 << 20), cudaGetErrorString(e));
    }
    pinned = (char *)p;
    restart();
    return TF_OK;
}

void tf_shard_feed::restart()
{
    std::lock_guard<std::mutex> lock(mu);
    for (int k = 0; k < TF_FEED_SLOTS; ++k) {
        held[k] = -1;
        pending[k] = 0;
        filling[k] = false;
    }
    aborted = false;
    why[0] = 0;
}

tf_status tf_shard_feed::acquire(uint64_t c, int *slot)
{
    const int k = (int)(c % TF_FEED_SLOTS);
    *slot = k;
    std::unique_lock<std::mutex> lock(mu);
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
    for (;;) {
        if (aborted) return tf_fail(TF_ERR_DEVICE, "GPU shards: another GPU of the run failed: %s", why);
        if (held[k] == (int64_t)c && !filling[k]) return TF_OK;
        if (held[k] < (int64_t)c && pending[k] == 0 && !filling[k]) { /* free: this thread fills it */
            filling[k] = true;
            lock.unlock();
            const uint64_t k0 = c * chunk, len = std::min<uint64_t>(chunk, X->nnz - k0);
            for (uint32_t m = 0; m < X->order; ++m)
                tf_copy_bytes((void *)ind(k, m), X->ind[m] + k0, len * sizeof(uint32_t));
            tf_copy_bytes((void *)vals(k), X->vals + k0, len * sizeof(double));
            lock.lock();
            held[k] = (int64_t)c;
            pending[k] = readers;
            filling[k] = false;
            cv.notify_all();
            return TF_OK;
        }
        if (cv.wait_until(lock, until) == std::cv_status::timeout) {
            if (!aborted) snprintf(why, sizeof why, "a GPU waited %.0f s for the others' chunks", timeout);
            aborted = true;
            cv.notify_all();
            return tf_fail(TF_ERR_DEVICE, "GPU shards: chunk %llu waited %.0f s for the other GPUs of the run",
                           (unsigned long long)c, timeout);
        }
    }
}

void tf_shard_feed::release(int slot)
{
    std::lock_guard<std::mutex> lock(mu);
    if (pending[slot] > 0) --pending[slot];
    cv.notify_all();
}

void tf_shard_feed::abort(const char *msg)
{
    std::lock_guard<std::mutex> lock(mu);
    if (!aborted) snprintf(why, sizeof why, "%s", msg ? msg : "");
    aborted = true;
    cv.notify_all();
}

void tf_shard_feed::close()
{
    if (pinned) {
        cudaHostUnregister(pinned);
        tf_free(pinned);
    }
    pinned = nullptr;
    X = nullptr;
}

/* ----------------------------------------------------------- the cutter */

uint64_t tf_shard_cutter::chunk_for(const tf_tensor *X, uint64_t want) { return feed_chunk(X, want); }

uint64_t tf_shard_cutter::bytes(const tf_tensor *X, const uint32_t *const *relabel, uint64_t chunk)
{
    chunk = feed_chunk(X, chunk);
    uint64_t b = chunk * (X->order * sizeof(uint32_t) + sizeof(double)) + 2 * (chunk + 1) * sizeof(uint64_t) +
                 (4u << 20); /* the scan's scratch, with room */
    for (uint32_t m = 0; m < X->order; ++m)
        if (relabel && relabel[m]) b += X->dims[m] * sizeof(uint32_t);
    return b;
}

tf_status tf_shard_cutter::open(tf_gpu_dev *c, const tf_tensor *X, const uint32_t *const *relabel, uint64_t n)
{
    close();
    ctx = c;
    this->X = X;
    order = X->order;
    chunk = n;
    for (uint32_t m = 0; m < X->order; ++m) {
        if (relabel && relabel[m])
            TF_TRY(tf_gpu_upload_staged(ctx, &map[m], relabel[m], X->dims[m], "relabel map (GPU shards)", ctx->stream));
        TF_TRY(tf_gpu_alloc(&cind[m], chunk, "COO chunk indices (GPU shards)"));
    }
    TF_TRY(tf_gpu_alloc(&cvals, chunk, "COO chunk values (GPU shards)"));
    TF_TRY(tf_gpu_alloc(&cnt, chunk + 1, "GPU shard flags"));
    TF_TRY(tf_gpu_alloc(&pos, chunk + 1, "GPU shard positions"));
    TF_TRY(tf_gpu_alloc(&base, 2, "GPU shard counts"));
    size_t need = 0;
    TF_CU(cub::DeviceScan::ExclusiveSum(nullptr, need, cnt, pos, (int)(chunk + 1), ctx->stream));
    TF_TRY(tf_gpu_alloc_bytes(&tmp, need ? need : 16, "GPU shard scan scratch"));
    tmp_bytes = need ? need : 16;
    TF_CU(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming));
    return TF_OK;
}

static tf_status cut_once(tf_shard_cutter *c, tf_shard_feed *feed, uint32_t mode, uint64_t lo, uint64_t hi,
                          bool pairs, uint64_t prev_lo, uint64_t prev_hi, uint64_t n, uint32_t value_bytes,
                          tf_gpu_shard out[2]);

tf_status tf_shard_cutter::cut(tf_shard_feed *feed, uint32_t mode, uint64_t lo, uint64_t hi, bool pairs,
                               uint64_t prev_lo, uint64_t prev_hi, uint64_t n, uint32_t value_bytes,
                               tf_gpu_shard out[2])
{
    tf_status s = TF_OK;
    if (!feed && !(kept() && filled))
        s = tf_fail(TF_ERR_ARG, "GPU shard of mode %u: no feed, and X is not on the GPU", mode + 1);
    if (s == TF_OK) s = cut_once(this, feed, mode, lo, hi, pairs, prev_lo, prev_hi, n, value_bytes, out);
    if (s != TF_OK && feed) feed->abort(tf_last_error()); /* no other GPU waits for this one's releases */
    return s;
}

tf_status tf_shard_cutter::keep()
{
    if (!ctx || !X) return tf_fail(TF_ERR_ARG, "GPU shards: keep() before open()");
    if (kept()) return TF_OK;
    filled = false;
    const uint64_t n = std::max<uint64_t>(X->nnz, 1);
    for (uint32_t m = 0; m < order; ++m) TF_TRY(tf_gpu_alloc(&kind[m], n, "COO kept on the GPU (GPU shards)"));
    return tf_gpu_alloc(&kvals, n, "COO kept on the GPU (GPU shards)");
}

void tf_shard_cutter::unkeep()
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_gpu_free(kind[m]);
        kind[m] = nullptr;
    }
    tf_gpu_free(kvals);
    kvals = nullptr;
    filled = false;
}

static tf_status cut_once(tf_shard_cutter *c, tf_shard_feed *feed, uint32_t mode, uint64_t lo, uint64_t hi,
                          bool pairs, uint64_t prev_lo, uint64_t prev_hi, uint64_t n, uint32_t value_bytes,
                          tf_gpu_shard out[2])
{
    c->drop();
    const tf_tensor *X = c->X;
    const uint32_t order = c->order;
    tf_fcoo_dcoo *coo = c->coo;
    tf_gpu_dev *ctx = c->ctx;
    if (!ctx || !X || X->order != order || mode >= order || hi < lo ||
        (feed && (feed->X != X || feed->chunk != c->chunk)))
        return tf_fail(TF_ERR_ARG, "GPU shard of mode %u: the cutter was not opened for this tensor", mode + 1);
    const uint32_t vb = value_bytes == 4 ? 4 : 8;
    for (int h = 0; h < 2; ++h) coo[h].value_bytes = vb;
    for (uint32_t m = 0; m < order; ++m) TF_TRY(tf_gpu_alloc(&coo[0].ind[m], n, "GPU shard indices"));
    TF_TRY(tf_gpu_alloc_bytes(&coo[0].vals, n * vb, "GPU shard values"));
    if (ctx->tune.gpu_poison) { /* tests: every entry must be written */
        for (uint32_t m = 0; m < order; ++m)
            if (n) TF_CU(cudaMemsetAsync(coo[0].ind[m], 0xff, n * sizeof(uint32_t), ctx->stream));
        if (n) TF_CU(cudaMemsetAsync(coo[0].vals, 0xff, n * vb, ctx->stream));
    }
    cut_args a = {}; /* the chunk's pointers set per chunk (run_cut) */
    for (uint32_t m = 0; m < order; ++m) a.map[m] = c->map[m];
    a.order = order;
    a.mode = mode;
    a.prev = (mode + order - 1) % order;
    a.lo = lo;
    a.hi = hi;
    a.plo = prev_lo;
    a.phi = prev_hi;
    a.pairs = pairs;
    uint64_t nl = 0;
    TF_TRY(vb == 4 ? run_cut<float>(c, feed, a, n, &nl) : run_cut<double>(c, feed, a, n, &nl));
    for (uint32_t m = 0; m < order; ++m) coo[1].ind[m] = coo[0].ind[m] ? coo[0].ind[m] + nl : nullptr;
    coo[1].vals = coo[0].vals ? (char *)coo[0].vals + nl * vb : nullptr;
    for (int h = 0; h < (pairs ? 2 : 1); ++h) {
        tf_gpu_shard &s = out[h];
        s = tf_gpu_shard();
        s.shape.order = order;
        for (uint32_t m = 0; m < order; ++m) s.shape.dims[m] = X->dims[m];
        s.shape.dims[mode] = hi > lo ? hi - lo : 1;
        s.shape.nnz = h == 0 ? nl : n - nl;
        s.dev = &coo[h];
    }
    return TF_OK;
}

void tf_shard_cutter::drop()
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_gpu_free(coo[0].ind[m]);
    tf_gpu_free(coo[0].vals);
    coo[0] = tf_fcoo_dcoo();
    coo[1] = tf_fcoo_dcoo();
}

void tf_shard_cutter::close()
{
    drop();
    unkeep();
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_gpu_free(map[m]);
        tf_gpu_free(cind[m]);
        map[m] = cind[m] = nullptr;
    }
    tf_gpu_free(cvals);
    tf_gpu_free(cnt);
    tf_gpu_free(pos);
    tf_gpu_free(base);
    tf_gpu_free(tmp);
    cvals = nullptr;
    cnt = pos = base = nullptr;
    tmp = nullptr;
    tmp_bytes = 0;
    if (copied) cudaEventDestroy(copied);
    copied = nullptr;
    ctx = nullptr;
    X = nullptr;
}
