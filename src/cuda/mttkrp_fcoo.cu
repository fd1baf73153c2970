/* F-COO MTTKRP (Liu et al., Cluster'17, section IV): one copy per mode,
 * sorted by the output index, computed in one shot (product and reduction
 * fused) with a segmented scan.
 *
 * Grid: 2-D, rank-wise parallel: blockIdx.y selects a 32-column slice of
 * the rank, blockIdx.x a group of partitions; blocks are 1-D with 256
 * threads whatever R is. Each warp owns one partition (part_nnz non-zeros,
 * a multiple of 32): it loads 32 non-zeros at a time (one per lane,
 * coalesced), its lane groups take them G at a time (shuffles), form the
 * products for their columns, and combine them with a segmented inclusive
 * scan across the groups (warp shuffles, head bits as segment flags); a
 * running carry links consecutive steps. At a segment's last non-zero the
 * sum is written: a plain store when the segment lies inside the
 * partition, an atomicAdd only for the first and last segment where the
 * start flags say they continue into a neighbouring partition. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <type_traits>

#include "cuda/warp.cuh"
extern "C" {
#include "fmt/fcoo.h"
}

namespace {

#define MAX_PMODES (TF_GPU_MAX_ORDER - 1)

template <typename T>
struct fcoo_args {
    const uint32_t *pind[MAX_PMODES];
    const T *vals;
    const uint32_t *head, *start, *part_seg, *seg_row;
    tf_factor_ptrs<T> fac; /* by product-mode position */
    T *out;
    uint64_t nnz, nparts;
    uint32_t part_nnz, np, R;
};

__device__ __forceinline__ uint32_t bit_of(const uint32_t *words, uint64_t i)
{
    return (words[i >> 5] >> (i & 31)) & 1u;
}

/* V consecutive columns per lane: one 16-byte load per factor row piece
 * (V = 16 / sizeof(T), used when R is a multiple of V) or V = 1. */
template <typename T, int V>
__device__ __forceinline__ void load_cols(const T *p, T (&x)[V])
{
    if constexpr (V == 1) {
        x[0] = tf_ldg(p);
    } else {
        static_assert(V * sizeof(T) == 16, "16-byte pieces");
        using W = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
        const W w = __ldg(reinterpret_cast<const W *>(p));
        const T *t = reinterpret_cast<const T *>(&w);
#pragma unroll
        for (int k = 0; k < V; ++k) x[k] = t[k];
    }
}

template <typename T, int NP, int V>
__global__ void __launch_bounds__(TF_BLOCK_THREADS, 3) fcoo_mttkrp_kernel(const fcoo_args<T> a)
{
    constexpr int MP = NP ? NP : MAX_PMODES;
    constexpr int U = NP ? TF_UNROLL : TF_UNROLL / 2;
    const int np = NP ? NP : (int)a.np;
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t p = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (p >= a.nparts) return; /* the whole warp leaves together */
    const tf_lanes L = tf_lanes_for(a.R / V); /* lanes over pieces of V columns */
    const uint32_t col = (blockIdx.y * 32 + L.c) * V;
    const bool colok = col < a.R;
    const uint64_t beg = p * a.part_nnz;
    const uint64_t end = min(beg + a.part_nnz, a.nnz);
    const bool first_continues = !bit_of(a.start, p);
    const bool last_continues = p + 1 < a.nparts && !bit_of(a.start, p + 1);
    const uint32_t seg0 = a.part_seg[p];
    T carry[V];
#pragma unroll
    for (int k = 0; k < V; ++k) carry[k] = T(0);
    uint32_t prefix = 0; /* heads after the partition's first non-zero, before this chunk */
    for (uint64_t cb = beg; cb < end; cb += 32) {
        const uint64_t kk = cb + lane;
        const bool valid = kk < end;
        uint32_t idx[MP];
#pragma unroll
        for (int q = 0; q < MP; ++q) idx[q] = (valid && q < np) ? a.pind[q][kk] : 0u;
        const T v = valid ? a.vals[kk] : T(0);
        const uint32_t cnt = (uint32_t)min((uint64_t)32, end - cb);
        const uint32_t hw = a.head[cb >> 5];
        const uint32_t hnext = cb + 32 < end ? a.head[(cb >> 5) + 1] : 0u;
        /* Heads that open a new segment relative to seg0. */
        const uint32_t adv = cb == beg ? hw & ~1u : hw;
        /* tails bit j: non-zero j is the last of its segment here. */
        uint32_t tails = (hw >> 1) | (hnext << 31);
        if (end - cb <= 32) tails |= 1u << (cnt - 1);
        /* U steps of G non-zeros: all products (and their loads) first, then
         * the scans, which chain through the carry. */
        for (uint32_t s = 0; s < cnt; s += L.G * U) {
            T x[U][V];
            uint32_t f[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const uint32_t j = s + u * L.G + L.g;
                const bool ok = j < cnt;
                const T x0 = __shfl_sync(TF_FULL_MASK, v, j & 31);
                uint32_t jj[MP];
#pragma unroll
                for (int q = 0; q < MP; ++q) jj[q] = __shfl_sync(TF_FULL_MASK, idx[q], j & 31);
#pragma unroll
                for (int k = 0; k < V; ++k) x[u][k] = T(0);
                if (ok && colok) {
#pragma unroll
                    for (int k = 0; k < V; ++k) x[u][k] = x0;
#pragma unroll
                    for (int q = 0; q < MP; ++q)
                        if (q < np) {
                            T fv[V];
                            load_cols<T, V>(a.fac.f[q] + (size_t)jj[q] * a.R + col, fv);
#pragma unroll
                            for (int k = 0; k < V; ++k) x[u][k] *= fv[k];
                        }
                }
                f[u] = ok ? (hw >> j) & 1u : 0u; /* head flag: a segment starts here */
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const uint32_t j = s + u * L.G + L.g;
                const bool ok = j < cnt;
                T *y0 = x[u];
                uint32_t fl = f[u];
                /* segmented inclusive scan over the groups; fl: a head at or before me */
                for (uint32_t d = 1; d < L.G; d <<= 1) {
                    T y[V];
#pragma unroll
                    for (int k = 0; k < V; ++k) y[k] = __shfl_up_sync(TF_FULL_MASK, y0[k], d * L.C);
                    const uint32_t fy = __shfl_up_sync(TF_FULL_MASK, fl, d * L.C);
                    if (L.g >= d) {
                        if (!fl)
#pragma unroll
                            for (int k = 0; k < V; ++k) y0[k] += y[k];
                        fl |= fy;
                    }
                }
                if (!fl)
#pragma unroll
                    for (int k = 0; k < V; ++k) y0[k] += carry[k];
                if (ok && colok && ((tails >> j) & 1u)) {
                    const uint32_t le = j == 31 ? TF_FULL_MASK : (2u << j) - 1u;
                    const uint32_t seg = seg0 + prefix + __popc(adv & le);
                    T *o = a.out + (size_t)a.seg_row[seg] * a.R + col;
                    if ((seg == seg0 && first_continues) || (cb + j + 1 == end && last_continues)) {
#pragma unroll
                        for (int k = 0; k < V; ++k) atomicAdd(o + k, y0[k]);
                    } else {
#pragma unroll
                        for (int k = 0; k < V; ++k) o[k] = y0[k];
                    }
                }
#pragma unroll
                for (int k = 0; k < V; ++k)
                    carry[k] = __shfl_sync(TF_FULL_MASK, y0[k], (L.G - 1) * L.C + L.c);
            }
        }
        prefix += __popc(adv & (cnt == 32 ? TF_FULL_MASK : (1u << cnt) - 1u));
    }
}

/* One mode's F-COO copy on the device. */
template <typename T>
struct fcoo_dev {
    uint32_t *pind[MAX_PMODES] = {nullptr};
    T *vals = nullptr;
    uint32_t *head = nullptr, *start = nullptr, *part_seg = nullptr, *seg_row = nullptr;
    uint32_t pmodes[MAX_PMODES] = {0};
    uint64_t nparts = 0, bytes = 0;

    void release()
    {
        for (int q = 0; q < MAX_PMODES; ++q) tf_cuda_free(pind[q]);
        tf_cuda_free(vals);
        tf_cuda_free(head);
        tf_cuda_free(start);
        tf_cuda_free(part_seg);
        tf_cuda_free(seg_row);
    }

    tf_status upload(const tf_fcoo *f, cudaStream_t st)
    {
        const uint64_t n = f->nnz;
        for (uint32_t q = 0; q + 1 < f->order; ++q) {
            pmodes[q] = f->pmodes[q];
            TF_TRY(tf_cuda_upload_new(&pind[q], f->pind[q], n, "F-COO indices"));
        }
        TF_TRY(tf_cuda_alloc(&vals, n, "F-COO values"));
        TF_TRY(tf_cuda_put_values(vals, f->vals, n, st));
        TF_TRY(tf_cuda_upload_new(&head, f->head, (n + 31) / 32, "F-COO head bits"));
        TF_TRY(tf_cuda_upload_new(&start, f->start, (f->nparts + 31) / 32, "F-COO start flags"));
        TF_TRY(tf_cuda_upload_new(&part_seg, f->part_seg, f->nparts, "F-COO partition segments"));
        TF_TRY(tf_cuda_upload_new(&seg_row, f->seg_row, f->nseg, "F-COO segment rows"));
        nparts = f->nparts;
        bytes = tf_fcoo_bytes(f, sizeof(T));
        return TF_OK;
    }
};

template <typename T>
struct fcoo_engine : tf_gpu_engine {
    uint32_t order = 0;
    uint32_t part_nnz = 32;
    bool no_vec = false; /* TF_FCOO_VEC=0: one column per lane (for measurements) */
    uint64_t nnz = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    fcoo_dev<T> copy[TF_GPU_MAX_ORDER];

    ~fcoo_engine() override
    {
        for (int m = 0; m < TF_GPU_MAX_ORDER; ++m) copy[m].release();
    }

    tf_status mttkrp(uint32_t mode, const void *const *fac, void *out, uint32_t R) override
    {
        TF_CU(cudaMemsetAsync(out, 0, dims[mode] * R * sizeof(T), ctx->stream));
        const fcoo_dev<T> &c = copy[mode];
        if (nnz == 0) return TF_OK;
        fcoo_args<T> a;
        for (int q = 0; q < MAX_PMODES; ++q) {
            const bool used = q + 1 < (int)order;
            a.pind[q] = used ? c.pind[q] : nullptr;
            a.fac.f[q] = used ? (const T *)fac[c.pmodes[q]] : nullptr;
        }
        a.fac.f[MAX_PMODES] = nullptr;
        a.vals = c.vals;
        a.head = c.head;
        a.start = c.start;
        a.part_seg = c.part_seg;
        a.seg_row = c.seg_row;
        a.out = (T *)out;
        a.nnz = nnz;
        a.nparts = c.nparts;
        a.part_nnz = part_nnz;
        a.np = order - 1;
        a.R = R;
        /* 16-byte factor loads (a lane takes VEC columns, a warp several
         * non-zeros per step) when R is a multiple of VEC = 16 / sizeof(T),
         * unless the mode is short for its partitions (more than 16 per
         * output row): boundary atomics then pile up on few rows, and
         * vector pieces serialise VEC of them per lane (measured on an
         * H200: 1.6-1.9x slower there, 1.1-1.4x faster elsewhere). */
        constexpr uint32_t VEC = 16 / sizeof(T);
        const bool vec = R % VEC == 0 && !no_vec && c.nparts <= 16 * dims[mode];
        const uint32_t cols_per_block = 32 * (vec ? VEC : 1);
        const dim3 grid((unsigned)((c.nparts + TF_BLOCK_WARPS - 1) / TF_BLOCK_WARPS),
                        (R + cols_per_block - 1) / cols_per_block);
        cudaStream_t st = ctx->stream;
        /* The kernel is templated on the number of product modes (order - 1). */
        return tf_with_order(order, [&](auto ord) -> tf_status {
            constexpr int NP = decltype(ord)::value ? decltype(ord)::value - 1 : 0;
            if (vec) fcoo_mttkrp_kernel<T, NP, VEC><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
            else fcoo_mttkrp_kernel<T, NP, 1><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
            TF_CU_LAUNCH("fcoo_mttkrp_kernel");
            return TF_OK;
        });
    }

    uint64_t tensor_bytes(uint32_t mode) const override { return copy[mode].bytes; }
};

/* Non-zeros per partition (one warp): enough partitions for about eight
 * full waves of warps on the device (shorter warps balance better; measured
 * on an H200 for 20M non-zeros, R=32: 256 per warp 6% faster than 1024,
 * 4096 12-43% slower), between 32 and 1024. */
uint32_t partition_size(uint64_t nnz, int sm_count)
{
    /* TF_FCOO_PART=N (a multiple of 32) overrides it, for measurements */
    const char *env = getenv("TF_FCOO_PART");
    if (env && atoi(env) >= 32 && atoi(env) % 32 == 0 && atoi(env) <= 65536) return (uint32_t)atoi(env);
    const uint64_t warps = (uint64_t)(sm_count > 0 ? sm_count : 1) * 64 * 8;
    uint64_t p = nnz / warps / 32 * 32;
    return (uint32_t)std::min<uint64_t>(std::max<uint64_t>(p, 32), 1024);
}

template <typename T>
tf_status create(tf_cuda_ctx *ctx, const tf_tensor *X, tf_gpu_engine **out)
{
    fcoo_engine<T> *e = new (std::nothrow) fcoo_engine<T>();
    if (!e) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU F-COO engine");
    e->ctx = ctx;
    e->format = TF_FORMAT_FCOO;
    e->order = X->order;
    e->nnz = X->nnz;
    e->part_nnz = partition_size(X->nnz, ctx->sm_count);
    e->no_vec = getenv("TF_FCOO_VEC") && !strcmp(getenv("TF_FCOO_VEC"), "0");
    for (uint32_t m = 0; m < X->order; ++m) e->dims[m] = X->dims[m];
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        tf_fcoo f; /* one mode at a time on the host */
        s = tf_fcoo_build(X, m, e->part_nnz, &f);
        if (s != TF_OK) break;
        s = e->copy[m].upload(&f, ctx->stream);
        e->bytes += e->copy[m].bytes;
        tf_fcoo_free(&f);
    }
    if (s != TF_OK) {
        delete e;
        return s;
    }
    snprintf(e->desc, sizeof e->desc, "fcoo, %u nnz per warp", e->part_nnz);
    *out = e;
    return TF_OK;
}

} // namespace

tf_status tf_gpu_fcoo_create(tf_cuda_ctx *ctx, const tf_tensor *X, tf_precision prec,
                             tf_gpu_engine **out)
{
    *out = nullptr;
    return prec == TF_SINGLE ? create<float>(ctx, X, out) : create<double>(ctx, X, out);
}
