/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO MTTKRP on tensors larger than the GPU's budget: the BLCO thesis's
 * out-of-memory streaming (blocks in pinned host memory, copies on their
 * own stream overlapped with the kernels) and AMPED's one-GPU mode (one
 * per-mode copy loaded piece by piece), on F-COO copies, which need no
 * atomics but at partition edges.
 *
 * Host: each mode's copy (the host builder, fmt/fcoo.h) packed into chunks
 * of whole groups of 32 partitions, one contiguous block each, product
 * indices packed into keys of the bits they need and values into fewer
 * bits where that is exact (fmt/fcoo_chunks.h),
 * pinned with cudaHostRegister so that a chunk moves in one copy at the
 * bus's speed (if pinning fails the copies go from pageable memory:
 * slower, same results, and the plan's note says so).
 * Device: every mode's segment rows and rows to clear; its first chunks
 * unpacked into one plain block (the same share of every mode, as much as
 * the budget holds after the factors, the dense work and the ring: partial
 * residency); a ring of RING chunk buffers and one unpacked chunk.
 * MTTKRP of a mode: the rows to clear; the resident block in one launch,
 * while the copy stream fills the ring; then streamed chunk c goes into
 * slot s = seq % RING once the unpacking that last read s is done (event
 * done[s]), and is unpacked after its copy (event full[s]) and run. The
 * kernel is fcoo_kernels.cuh's seg kernel, run on each piece in order on
 * the work stream (a segment across a piece's edge is stored by one and
 * added to by the next). The host never waits, so the next mode's copies
 * start as soon as slots free up, under this mode's last kernels and the
 * dense steps. Events span calls, so the engine is not capturable. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <thread>

#include "gpu/engine/fcoo_kernels.cuh"
#include "gpu/engine/fcoo_stream.cuh"
#include "gpu/runtime/timing.cuh"
extern "C" {
#include "core/alloc.h"
#include "core/host_memory.h"
#include "fmt/fcoo.h"
#include "fmt/fcoo_chunks.h"
#include "fmt/fcoo_pieces.h"
}

namespace {

/* Chunk buffers on the device: one being computed, the rest being filled
 * (two would do if copies and kernels took equal times; four absorb the
 * uneven kernel times of skewed chunks). */
constexpr int RING = 4;
/* Default chunk: 16 MiB unpacked (13 MiB as streamed for the 20M tensor's
 * 38-41-bit keys), about 0.25 ms of copy at 55 GB/s: long enough
 * that a copy's fixed cost is lost in it, short enough that the first
 * chunk (not overlapped unless resident chunks run under it) is cheap. */
constexpr uint64_t CHUNK_BYTES = 16ull << 20;

double mib(uint64_t b) { return (double)b / (1 << 20); }

/* A chunk as stored (src, layout s) into the plain layout d at dst: the
 * product indices decoded from their keys (or copied), the values decoded
 * from their fields (or copied), head and start words and partition
 * segments copied; grid-stride loops. */
struct unpack_args {
    const unsigned char *src;
    unsigned char *dst;
    uint64_t nnz, head_words, start_words, parts;
    uint64_t s_lo, s_hi, s_pind[MAX_PMODES], s_vals, s_head, s_start, s_part_seg;
    uint64_t d_pind[MAX_PMODES], d_vals, d_head, d_start, d_part_seg;
    uint32_t shift[MAX_PMODES], mask[MAX_PMODES];
    uint32_t np, hi_bits;
    int packed;
    tf_fcoo_value_code vcode; /* vbits 0: values as T */
    double vscale;            /* 2^vcode.exp */
};

template <typename T>
__global__ void unpack_kernel(const unpack_args a)
{
    const uint64_t step = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t t0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (uint64_t k = t0; k < a.nnz; k += step) {
        if (a.packed) {
            uint64_t key = ((const uint32_t *)(a.src + a.s_lo))[k];
            if (a.hi_bits) key |= tf_fcoo_field((const uint32_t *)(a.src + a.s_hi), k, a.hi_bits) << 32;
            for (uint32_t q = 0; q < a.np; ++q)
                ((uint32_t *)(a.dst + a.d_pind[q]))[k] = (uint32_t)(key >> a.shift[q]) & a.mask[q];
        } else {
            for (uint32_t q = 0; q < a.np; ++q)
                ((uint32_t *)(a.dst + a.d_pind[q]))[k] = ((const uint32_t *)(a.src + a.s_pind[q]))[k];
        }
        if (a.vcode.vbits)
            ((T *)(a.dst + a.d_vals))[k] = TF_FCOO_VALUE(
                T, tf_fcoo_field((const uint32_t *)(a.src + a.s_vals), k, a.vcode.vbits), a.vcode.min, a.vscale);
    }
    /* plain values as 4-byte words (a double is two) */
    const uint64_t vwords = a.vcode.vbits ? 0 : a.nnz * sizeof(T) / 4;
    for (uint64_t k = t0; k < vwords; k += step)
        ((uint32_t *)(a.dst + a.d_vals))[k] = ((const uint32_t *)(a.src + a.s_vals))[k];
    for (uint64_t k = t0; k < a.head_words; k += step)
        ((uint32_t *)(a.dst + a.d_head))[k] = ((const uint32_t *)(a.src + a.s_head))[k];
    for (uint64_t k = t0; k < a.start_words; k += step)
        ((uint32_t *)(a.dst + a.d_start))[k] = ((const uint32_t *)(a.src + a.s_start))[k];
    for (uint64_t k = t0; k < a.parts; k += step)
        ((uint32_t *)(a.dst + a.d_part_seg))[k] = ((const uint32_t *)(a.src + a.s_part_seg))[k];
}

/* One mode: its chunks on the host, its resident part on the device. */
struct smode {
    tf_fcoo_chunks k = {};
    bool pinned = false;
    uint32_t pmodes[MAX_PMODES] = {0};
    uint64_t nseg = 0;
    uint32_t *seg_row = nullptr, *zrows = nullptr;
    uint64_t nzero = 0;
    bool clear_all = true;
    /* chunks [0, nres) on the device, unpacked into one plain block (rlay):
     * one kernel launch runs them at the resident engine's speed */
    unsigned char *res = nullptr;
    uint64_t nres = 0;
    tf_fcoo_chunk_layout rlay = {};

    uint64_t total() const { return k.off ? k.off[k.nchunks] : 0; }
    /* The plain layout of chunks [0, n) as one block; its bytes. */
    uint64_t plain_of(uint64_t n, uint32_t vb, tf_fcoo_chunk_layout *lay) const
    {
        const uint64_t parts = k.part_off[n];
        return tf_fcoo_chunk_plain(k.order, vb, std::min(k.nnz, parts * k.part_nnz), parts, lay);
    }
    uint64_t streamed() const { return k.off ? k.off[k.nchunks] - k.off[nres] : 0; }
    void release()
    {
        if (pinned) cudaHostUnregister(k.data);
        pinned = false;
        tf_fcoo_chunks_free(&k);
        tf_gpu_free(seg_row);
        tf_gpu_free(zrows);
        tf_gpu_free(res);
        seg_row = zrows = nullptr;
        res = nullptr;
    }
};

template <typename T>
struct stream_engine : tf_gpu_engine {
    uint32_t order = 0;
    uint64_t nnz = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint32_t modes = ~0u; /* the modes built */
    bool no_vec = false;
    smode m_[TF_GPU_MAX_ORDER];
    cudaStream_t copy = nullptr;
    unsigned char *plain = nullptr; /* a chunk unpacked for its kernel */
    int sm_count = 1;
    unsigned char *slot[RING] = {nullptr};
    cudaEvent_t full[RING] = {nullptr}, done[RING] = {nullptr};
    bool used[RING] = {false};
    uint64_t seq = 0;
    char note[160] = {0};

    ~stream_engine() override
    {
        if (ctx) {
            cudaSetDevice(ctx->device);
            if (ctx->stream) cudaStreamSynchronize(ctx->stream); /* no copy or kernel still reads */
        }
        if (copy) cudaStreamSynchronize(copy);
        tf_gpu_free(plain);
        for (int s = 0; s < RING; ++s) {
            tf_gpu_free(slot[s]);
            if (full[s]) cudaEventDestroy(full[s]);
            if (done[s]) cudaEventDestroy(done[s]);
        }
        if (copy) cudaStreamDestroy(copy);
        for (smode &m : m_) m.release();
    }

    tf_status mttkrp(uint32_t mode, const void *const *fac, void *out, uint32_t R) override
    {
        if (!tf_mode_in(modes, mode))
            return tf_fail(TF_ERR_ARG, "streamed F-COO engine: mode %u was not built", mode + 1);
        const smode &sm = m_[mode];
        cudaStream_t st = ctx->stream;
        if (!accumulate) TF_TRY(fcoo_clear((T *)out, dims[mode], sm.clear_all || nnz == 0, sm.zrows, sm.nzero, R, st));
        if (nnz == 0) return TF_OK;
        fcoo_args<T> a;
        memset(&a, 0, sizeof a);
        a.accum = accumulate;
        for (uint32_t q = 0; q + 1 < order; ++q) a.fac.f[q] = (const T *)fac[sm.pmodes[q]];
        a.seg_row = sm.seg_row;
        a.nseg = sm.nseg;
        a.out = (T *)out;
        a.part_nnz = sm.k.part_nnz;
        a.np = order - 1;
        a.R = R;
        constexpr uint32_t VEC = 16 / sizeof(T);
        const bool vec = R % VEC == 0 && !no_vec;
        auto run = [&](const unsigned char *base, const tf_fcoo_chunk_layout &pl) -> tf_status {
            for (uint32_t q = 0; q + 1 < order; ++q) a.pind[q] = (const uint32_t *)(base + pl.pind[q]);
            a.vals = (const T *)(base + pl.vals);
            a.head = (const uint32_t *)(base + pl.head);
            a.start = (const uint32_t *)(base + pl.start);
            a.part_seg = (const uint32_t *)(base + pl.part_seg);
            a.nnz = pl.nnz;
            a.nparts = pl.parts;
            return pl.parts ? fcoo_launch(a, order, true, SEG_WIDE, 32, vec, st) : TF_OK;
        };
        if (sm.nres) TF_TRY(run(sm.res, sm.rlay)); /* while the copy stream fills the ring */
        for (uint64_t c = sm.nres; c < sm.k.nchunks; ++c) {
            tf_fcoo_chunk_layout lay, pl;
            tf_fcoo_chunk_layout_of(&sm.k, c, &lay);
            tf_fcoo_chunk_plain(order, sizeof(T), lay.nnz, lay.parts, &pl);
            const int s = (int)(seq++ % RING);
            if (used[s]) TF_CU(cudaStreamWaitEvent(copy, done[s], 0));
            TF_CU(cudaMemcpyAsync(slot[s], tf_fcoo_chunk_data(&sm.k, c), lay.bytes, cudaMemcpyHostToDevice, copy));
            TF_CU(cudaEventRecord(full[s], copy));
            TF_CU(cudaStreamWaitEvent(st, full[s], 0));
            /* unpacked into `plain` (the previous chunk's kernel is done with
             * it: same stream); the slot is free again once that has run */
            TF_TRY(unpack(sm.k, lay, slot[s], plain, pl, 0, 0, st));
            TF_CU(cudaEventRecord(done[s], st));
            used[s] = true;
            TF_TRY(run(plain, pl));
        }
        return TF_OK;
    }

    /* Chunk src (stored as lay) into the plain block dst (laid out as pl) from
     * non-zero n0 and partition p0 of the block (multiples of 32). */
    tf_status unpack(const tf_fcoo_chunks &k, const tf_fcoo_chunk_layout &lay, const unsigned char *src,
                     unsigned char *dst, const tf_fcoo_chunk_layout &pl, uint64_t n0, uint64_t p0,
                     cudaStream_t st)
    {
        unpack_args u;
        memset(&u, 0, sizeof u);
        u.src = src;
        u.dst = dst;
        u.nnz = lay.nnz;
        u.head_words = (lay.nnz + 31) / 32;
        u.start_words = (lay.parts + 31) / 32;
        u.parts = lay.parts;
        u.s_lo = lay.lo;
        u.s_hi = lay.hi;
        u.s_vals = lay.vals;
        u.s_head = lay.head;
        u.s_start = lay.start;
        u.s_part_seg = lay.part_seg;
        u.d_vals = pl.vals + n0 * sizeof(T);
        u.d_head = pl.head + n0 / 32 * sizeof(uint32_t);
        u.d_start = pl.start + p0 / 32 * sizeof(uint32_t);
        u.d_part_seg = pl.part_seg + p0 * sizeof(uint32_t);
        u.np = order - 1;
        for (uint32_t q = 0; q + 1 < order; ++q) {
            u.s_pind[q] = lay.pind[q];
            u.d_pind[q] = pl.pind[q] + n0 * sizeof(uint32_t);
            u.shift[q] = k.shift[q];
            u.mask[q] = k.bits[q] >= 32 ? 0xffffffffu : (1u << k.bits[q]) - 1u;
        }
        u.hi_bits = k.hi_bits;
        u.packed = k.packed;
        u.vcode = k.vcode;
        u.vscale = ldexp(1.0, k.vcode.exp);
        const unsigned blocks = (unsigned)std::max<uint64_t>(
            1, std::min<uint64_t>((lay.nnz + 255) / 256, (uint64_t)sm_count * 8));
        unpack_kernel<T><<<blocks, 256, 0, st>>>(u);
        TF_CU_LAUNCH("unpack_kernel");
        return TF_OK;
    }

    uint64_t tensor_bytes(uint32_t mode) const override
    {
        return m_[mode].total() + m_[mode].nseg * sizeof(uint32_t);
    }
    uint64_t streamed_bytes(uint32_t mode) const override { return m_[mode].streamed(); }
    const char *note_text() const override { return note; }
};

/* Partitions per chunk of a mode: chunk_bytes of copy (tuning.stream_chunk
 * non-zeros instead when set), whole groups of 32, at least one group. */
uint64_t chunk_parts(const tf_tuning &t, uint32_t order, uint32_t vb, uint32_t part, uint64_t chunk_bytes)
{
    const double per_nnz = (double)(order - 1) * 4 + vb + 0.125;
    const double want = t.stream_chunk ? (double)t.stream_chunk / part : (double)chunk_bytes / (per_nnz * part);
    const uint64_t groups = (uint64_t)(want / 32);
    return std::max<uint64_t>(groups, 1) * 32;
}

/* Registers (pins) host bytes on a thread of its own, so that the pinning
 * (page-table work of the kernel: 2.8 s for 73 GB on the H200 host) runs
 * while the next mode is sorted; joined before the engine is used or
 * dropped. */
struct pinner {
    std::thread t;
    cudaError_t err = cudaErrorNotReady; /* not started */
    void *p = nullptr;
    bool kept = false; /* the engine took the pinned bytes (it unregisters them) */
    void start(int device, void *bytes_at, uint64_t bytes)
    {
        p = bytes_at;
        t = std::thread([this, device, bytes] {
            cudaSetDevice(device);
            err = cudaHostRegister(p, bytes, cudaHostRegisterPortable);
            if (err != cudaSuccess) cudaGetLastError();
        });
    }
    void join()
    {
        if (t.joinable()) t.join();
    }
    /* a build that failed after the pinning: the bytes are freed unpinned */
    ~pinner()
    {
        join();
        if (!kept && p && err == cudaSuccess) cudaHostUnregister(p);
    }
};

/* A range of the resident chunks (fcoo_pieces.h) into the resident block
 * at its place (the block is the plain layout of chunks [0, nres): each of
 * its arrays holds the copy's from the start), through the context's
 * pinned staging: the range may be reused once this returns. */
template <typename T>
struct resident_sink {
    tf_gpu_dev *ctx;
    const smode *sm;
    uint32_t order;
    static tf_status take(void *user, const tf_fcoo_range *r)
    {
        const resident_sink *s = (const resident_sink *)user;
        const tf_fcoo_chunk_layout &pl = s->sm->rlay;
        unsigned char *res = s->sm->res;
        tf_gpu_dev *ctx = s->ctx;
        const cudaStream_t st = ctx->stream;
        for (uint32_t q = 0; q + 1 < s->order; ++q)
            TF_TRY(tf_gpu_h2d_staged(ctx, res + pl.pind[q] + r->n0 * sizeof(uint32_t), r->pind[q],
                                     r->nnz * sizeof(uint32_t), st));
        TF_TRY(tf_gpu_h2d_values(ctx, (T *)(res + pl.vals) + r->n0, r->vals, r->nnz, st));
        TF_TRY(tf_gpu_h2d_staged(ctx, res + pl.head + r->n0 / 32 * sizeof(uint32_t), r->head,
                                 (r->nnz + 31) / 32 * sizeof(uint32_t), st));
        TF_TRY(tf_gpu_h2d_staged(ctx, res + pl.start + r->p0 / 32 * sizeof(uint32_t), r->start,
                                 (r->parts + 31) / 32 * sizeof(uint32_t), st));
        return tf_gpu_h2d_staged(ctx, res + pl.part_seg + r->p0 * sizeof(uint32_t), r->part_seg,
                                 r->parts * sizeof(uint32_t), st);
    }
};

/* Non-zeros a piece of a mode's copy aims at (fcoo_pieces.h): the whole
 * mode, sorted in one go, where the host has room for its sorted copy
 * (~24 B/nnz with the sort's own) beside every mode's streamed chunks
 * (host_bytes); else pieces that fit in what is left (~56 B per non-zero of
 * a piece: its gathered COO, sorted copy and run), at most 64 of them:
 * every piece reads all of X once more (2.6x the build time at 2B
 * non-zeros in 12 pieces, 26.7 B/nnz above the input instead of 38). */
uint64_t piece_nnz_for(const tf_tensor *X, uint64_t host_bytes)
{
    const uint64_t room = tf_host_memory_free(), whole = X->nnz * 24 + host_bytes;
    if (!room || room >= whole + whole / 10) return X->nnz;
    const uint64_t left = room > host_bytes ? (room - host_bytes) / 10 * 9 : 0;
    return std::max<uint64_t>(std::max<uint64_t>(left / 56, X->nnz / 64 + 1), 4096);
}

/* The engine's copies, in two steps. First the plan of every mode's chunks
 * from the tensor's shape and the values' code alone (fcoo_chunks.h), and
 * from it what stays on the device (the same share of every mode, as the
 * budget allows). Then mode by mode, piece by piece of its rows
 * (fcoo_pieces.h): a piece gathered and sorted on the host, its whole
 * resident chunks uploaded straight from the sorted arrays, its whole
 * streamed chunks packed into host memory; the mode's streamed chunks
 * pinned while the next mode is made. The host holds one piece's arrays
 * beside the streamed chunks (no mode's whole sorted copy; a resident
 * chunk is never packed nor kept there), and the values' code is found
 * once. */
template <typename T>
tf_status build(stream_engine<T> *e, const tf_tensor *X, uint64_t R, const uint32_t *part, uint32_t modes)
{
    tf_gpu_dev *ctx = e->ctx;
    const tf_tuning &tune = ctx->tune;
    const uint32_t vb = sizeof(T), N = X->order;
    uint64_t budget = 0;
    TF_TRY(tf_gpu_budget(ctx, &budget));
    const uint64_t reserve = tf_gpu_stream_reserve(X, R, vb);
    uint64_t fixed = 0; /* at most: segment rows and rows to clear */
    for (uint32_t m = 0; m < N; ++m)
        if (tf_mode_in(modes, m)) fixed += 2 * std::min<uint64_t>(X->nnz, X->dims[m]) * sizeof(uint32_t);
    /* the chunk: CHUNK_BYTES, less where the budget is short (a ring of
     * RING and as much again for residency) */
    const uint64_t room = budget > reserve + fixed ? budget - reserve - fixed : 0;
    const uint64_t chunk_bytes = std::min<uint64_t>(CHUNK_BYTES, room / (2 * RING));
    uint64_t cp[TF_MAX_ORDER], min_chunk = 0;
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        cp[m] = chunk_parts(tune, N, vb, part[m], chunk_bytes);
        tf_fcoo_chunk_layout pl;
        min_chunk = std::max(min_chunk, tf_fcoo_chunk_plain(N, vb, 32ull * part[m], 32, &pl));
    }
    if ((RING + 1) * min_chunk + reserve + fixed > budget)
        return tf_fail(TF_ERR_NOMEM,
                       "GPU budget of %.1f MiB (device memory limit or 90%% of free) too small to stream: "
                       "%.1f MiB needed (rank-%llu factors and dense work %.1f, %d chunk buffers of %.2f)",
                       mib(budget), mib((RING + 1) * min_chunk + reserve + fixed), (unsigned long long)R,
                       mib(reserve), RING + 1, mib(min_chunk));
    tf_phase_clock clock(tune.build_report, ctx->stream); /* TF_BUILD_REPORT=1 */
    /* the chunks of every mode planned; tuning.stream_pack 1: keys and
     * values packed where that saves bytes, 2 keys only, 0 neither */
    const int pack = tune.stream_pack == 1   ? TF_FCOO_PACK_KEYS | TF_FCOO_PACK_VALUES
                     : tune.stream_pack == 2 ? TF_FCOO_PACK_KEYS
                                             : 0;
    tf_fcoo_value_code vc;
    memset(&vc, 0, sizeof vc);
    if (pack & TF_FCOO_PACK_VALUES) tf_fcoo_value_code_of(X->vals, X->nnz, vb, &vc);
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        smode &sm = e->m_[m];
        for (uint32_t q = 0, j = 0; q < N; ++q)
            if (q != m) sm.pmodes[j++] = q; /* the host builder's order (fcoo.h) */
        TF_TRY(tf_fcoo_chunks_plan(N, X->dims, sm.pmodes, X->nnz, part[m], cp[m], vb, pack, &vc, &sm.k));
    }
    clock.mark("plan");
    /* residency: the same share of every mode, from what the budget holds
     * after the factors and the ring (tuning.stream_resident: a share) */
    uint64_t slot_bytes = 0, total = 0, plain_bytes = 0;
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        const tf_fcoo_chunks &k = e->m_[m].k;
        slot_bytes = std::max(slot_bytes, k.max_bytes);
        total += e->m_[m].total();
        tf_fcoo_chunk_layout pl;
        /* no piece is longer than chunk_parts (fcoo_chunks.h) */
        plain_bytes = std::max(plain_bytes, tf_fcoo_chunk_plain(N, vb, std::min(k.nnz, k.chunk_parts * k.part_nnz),
                                                               std::min(k.nparts, k.chunk_parts), &pl));
    }
    TF_TRY(tf_gpu_alloc_bytes((void **)&e->plain, plain_bytes, "unpacked chunk buffer"));
    e->bytes += plain_bytes;
    TF_TRY(tf_gpu_budget(ctx, &budget));
    uint64_t plain_total = 0;
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        tf_fcoo_chunk_layout pl;
        plain_total += e->m_[m].plain_of(e->m_[m].k.nchunks, vb, &pl);
    }
    const uint64_t keep = reserve + RING * slot_bytes;
    const double share = tune.stream_resident >= 0 ? std::min<int64_t>(tune.stream_resident, 100) / 100.0
                         : budget <= keep || plain_total == 0
                             ? 0.0
                             : std::min(1.0, (double)(budget - keep) / (double)plain_total);
    bool streams = false;
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        smode &sm = e->m_[m];
        tf_fcoo_chunk_layout pl;
        const double cap = share * (double)sm.plain_of(sm.k.nchunks, vb, &pl);
        while (sm.nres < sm.k.nchunks && (double)sm.plain_of(sm.nres + 1, vb, &pl) <= cap + 0.5) ++sm.nres;
        streams |= sm.nres < sm.k.nchunks;
    }
    if (streams) {
        TF_CU(cudaStreamCreateWithFlags(&e->copy, cudaStreamNonBlocking));
        for (int s = 0; s < RING; ++s) {
            TF_TRY(tf_gpu_alloc_bytes((void **)&e->slot[s], slot_bytes, "streamed chunk buffer"));
            TF_CU(cudaEventCreateWithFlags(&e->full[s], cudaEventDisableTiming));
            TF_CU(cudaEventCreateWithFlags(&e->done[s], cudaEventDisableTiming));
        }
        e->bytes += RING * slot_bytes;
    }
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        smode &sm = e->m_[m];
        if (!sm.nres) continue;
        const uint64_t rb = sm.plain_of(sm.nres, vb, &sm.rlay);
        TF_TRY(tf_gpu_alloc_bytes((void **)&sm.res, rb, "resident F-COO chunks"));
        e->bytes += rb;
    }
    /* the resident chunks go up from the sorted copies' arrays: 64 MiB
     * pieces (a wider staging ring) where there are gigabytes of them */
    uint64_t res_bytes = 0;
    for (uint32_t m = 0; m < N; ++m)
        if (tf_mode_in(modes, m)) res_bytes += e->m_[m].rlay.bytes;
    if (res_bytes >= (1ull << 30)) tf_gpu_stage_grow(ctx, 64ull << 20);
    clock.mark("device_alloc");
    /* mode by mode, piece by piece: sorted, resident chunks uploaded,
     * streamed ones packed; pinned while the next mode is made */
    pinner pin[TF_GPU_MAX_ORDER];
    uint64_t streamed = 0, host_total = 0;
    for (uint32_t m = 0; m < N; ++m)
        if (tf_mode_in(modes, m)) host_total += e->m_[m].total() - e->m_[m].k.off[e->m_[m].nres];
    const uint64_t piece_nnz = piece_nnz_for(X, host_total);
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m)) continue;
        smode &sm = e->m_[m];
        const uint64_t host_bytes = sm.total() - sm.k.off[sm.nres];
        sm.k.first = sm.nres; /* the piece builder allocates the streamed chunks' bytes */
        resident_sink<T> rs{ctx, &sm, N};
        tf_fcoo meta;
        TF_TRY(tf_fcoo_chunks_build(X, m, &sm.k, piece_nnz, sm.nres ? resident_sink<T>::take : nullptr, &rs,
                                    &meta));
        clock.mark("pieces");
        sm.nseg = meta.nseg;
        uint32_t *rows = nullptr;
        tf_status s = tf_fcoo_zero_rows(&meta, X->dims[m] / 4, &rows, &sm.nzero);
        if (s == TF_OK) {
            sm.clear_all = sm.nzero > X->dims[m] / 4;
            if (!sm.clear_all && sm.nzero) s = tf_gpu_upload_new(&sm.zrows, rows, sm.nzero, "F-COO rows to clear");
        }
        tf_free(rows);
        if (s == TF_OK) s = tf_gpu_upload_new(&sm.seg_row, meta.seg_row, meta.nseg, "F-COO segment rows");
        tf_fcoo_free(&meta);
        if (s != TF_OK) return s;
        clock.mark("rows");
        if (host_bytes) pin[m].start(ctx->device, sm.k.data, host_bytes);
        streamed += host_bytes;
        e->bytes += (sm.nseg + (sm.zrows ? sm.nzero : 0)) * sizeof(uint32_t);
    }
    for (uint32_t m = 0; m < N; ++m) {
        if (!tf_mode_in(modes, m) || !pin[m].t.joinable()) continue;
        smode &sm = e->m_[m];
        pin[m].join();
        sm.pinned = pin[m].err == cudaSuccess;
        pin[m].kept = true;
        if (!sm.pinned && !e->note[0])
            snprintf(e->note, sizeof e->note,
                     "pinning %.1f MiB of host memory failed (%s): chunks stream from pageable memory, slower",
                     mib(sm.total() - sm.k.off[sm.nres]), cudaGetErrorString(pin[m].err));
    }
    clock.mark("pin_wait");
    clock.report("fcoo-streamed");
    const double per_nnz = X->nnz ? (double)total / ((double)X->nnz * tf_mode_count(modes)) : 0.0;
    /* where pinning failed the description says so (CP-ALS reports it, not the plan's note) */
    snprintf(e->desc, sizeof e->desc, "fcoo streamed %.0f%% of %.0f MiB, %.1f MiB chunks, %s",
             total ? 100.0 * (double)streamed / (double)total : 0.0, mib(total), mib(slot_bytes),
             e->note[0] ? "unpinned: slower" : "");
    if (!e->note[0]) {
        const size_t n = strlen(e->desc);
        snprintf(e->desc + n, sizeof e->desc - n, "%.1f B/nnz", per_nnz);
    }
    return TF_OK;
}

template <typename T>
tf_status create(tf_gpu_dev *ctx, const tf_tensor *X, uint64_t R, const uint32_t *part, uint32_t modes,
                 tf_gpu_engine **out)
{
    stream_engine<T> *e = new (std::nothrow) stream_engine<T>();
    if (!e) return tf_fail(TF_ERR_NOMEM, "out of memory creating the streamed F-COO engine");
    e->ctx = ctx;
    e->format = TF_FORMAT_FCOO;
    e->capturable = false;
    e->order = X->order;
    e->nnz = X->nnz;
    e->no_vec = !ctx->tune.fcoo_vec;
    e->sm_count = std::max(ctx->sm_count, 1);
    for (uint32_t m = 0; m < X->order; ++m) e->dims[m] = X->dims[m];
    e->modes = modes;
    const tf_status s = build(e, X, R, part, modes);
    if (s != TF_OK) {
        delete e;
        return s;
    }
    *out = e;
    return TF_OK;
}

} // namespace

uint64_t tf_gpu_stream_reserve(const tf_tensor *X, uint64_t R, uint32_t value_bytes)
{
    uint64_t rows = 0, maxdim = 0;
    for (uint32_t m = 0; m < X->order; ++m) {
        rows += X->dims[m];
        maxdim = std::max<uint64_t>(maxdim, X->dims[m]);
    }
    /* factors and the output, a quarter more for CP-ALS's column sums and
     * R x R work, and 2 MiB for small buffers */
    const uint64_t dense = (rows + maxdim) * R * value_bytes;
    return dense + dense / 4 + (2ull << 20);
}

tf_status tf_gpu_fcoo_stream_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec, uint64_t R,
                                    const uint32_t *part_nnz, uint32_t modes, tf_gpu_engine **out)
{
    *out = nullptr;
    return prec == TF_SINGLE ? create<float>(ctx, X, R, part_nnz, modes, out)
                             : create<double>(ctx, X, R, part_nnz, modes, out);
}
