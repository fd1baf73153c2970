/* SPDX-License-Identifier: BSD-3-Clause */
/* BLCO MTTKRP (thesis ch. 5) on one tensor copy for every mode.
 *
 * All blocks go in one launch: the non-zeros are cut into tiles of
 * BLCO_TILE = 1024 (a tile may span several small BLCO blocks, whose bases
 * each lane finds by binary search in the tile's block range: the batching
 * map of tf_blco_tiles). Thread blocks of 256 threads are persistent (about
 * as many as fit on the SMs) and loop over the tiles; in a tile each of the
 * 8 warps takes BLCO_TPW = 4 runs of 32 consecutive non-zeros (ALTO order):
 *   processing: lane k loads non-zero k (coalesced), decodes every index
 *     with shift/mask plus its block base, and __match_any_sync groups the
 *     lanes with the same output row; the decoded run goes to a per-warp
 *     shared-memory stage with its "grouped order" (equal rows adjacent,
 *     from a warp scan over the group sizes);
 *   computing: lanes are reassigned to columns (groups of C lanes for
 *     R < 32, each taking a contiguous slice of the grouped order; RT = 1, 2
 *     or 4 register columns per lane for R <= 32, <= 64, larger, with
 *     blockIdx.y over 32*RT-column slices); a lane issues the gathers of U
 *     non-zeros before using them, and a running sum in registers carries
 *     on while the row repeats (also across runs), so one update is written
 *     per row change.
 * Conflict resolution (the update at a row change):
 *   register:     atomicAdd straight into the output (global memory), except
 *     for the mode's heavy rows (at most 16, each >= 1/1024 of the non-zeros,
 *     found from a sample when the plan is built): those go to a small
 *     shared-memory stash, added to the output once per block at the end,
 *     so a power-law row does not serialise every block's atomics;
 *   hierarchical: atomicAdd into a shared-memory stash holding the whole
 *     output slice (rows x 32 columns) of the thread block (warp -> stash ->
 *     global), added to the output once per block at the end.
 * Adaptation heuristic (thesis 5.3): hierarchical when the output mode is
 * shorter than the number of SMs (and its stash fits in shared memory),
 * register otherwise. tuning.blco_resolution (register|hierarchical) overrides it
 * and tuning.blco_hot = 0 turns the heavy-row stash off (read when the plan is
 * built; the tests use them to cover every path). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>

#include "gpu/engine/engine.cuh"
#include "gpu/runtime/warp.cuh"
extern "C" {
#include "core/alloc.h"
#include "fmt/blco.h"
#include "fmt/tensor_stats.h"
}

namespace {

#define BLCO_TPW 4                                     /* 32-non-zero runs per warp */
#define BLCO_TILE (TF_BLOCK_WARPS * BLCO_TPW * 32)     /* non-zeros per thread block */
/* Heavy rows (register mode): at most BLCO_MAX_HOT per mode, each holding at
 * least BLCO_HOT_SHARE of the non-zeros and BLCO_HOT_MIN of them (estimated
 * from a sample of BLCO_HOT_SAMPLE), get a slot in the block's stash. */
#define BLCO_MAX_HOT 16
#define BLCO_HOT_SHARE (1.0 / 1024)
#define BLCO_HOT_MIN 2048
#define BLCO_HOT_SAMPLE (1u << 20)

template <typename T>
struct blco_args {
    const uint64_t *lin;
    const T *vals;
    const uint64_t *block_start;   /* nblocks + 1 */
    const uint32_t *block_base;    /* nblocks x order */
    const uint64_t *tile_block;    /* ntiles */
    const uint32_t *hot;           /* register mode: nhot heavy rows of the output mode */
    uint64_t nnz, ntiles, nblocks;
    tf_factor_ptrs<T> fac;
    T *out;
    uint64_t mask[TF_GPU_MAX_ORDER];
    uint32_t shift[TF_GPU_MAX_ORDER];
    uint32_t order, mode, R, rows, nhot;
};

/* One warp's decoded run of 32 non-zeros (by lane) and its grouped order. */
template <typename T, int ORDER>
struct blco_stage {
    T val[32];
    uint32_t key[32];                                        /* output row              */
    uint32_t ord[32];                                        /* lanes, equal rows adjacent */
    uint32_t idx[ORDER ? ORDER : TF_GPU_MAX_ORDER][32];
};

/* Largest b in [lo, hi] with start[b] <= k. */
__device__ __forceinline__ uint64_t find_block(const uint64_t *start, uint64_t lo, uint64_t hi,
                                               uint64_t k)
{
    while (lo < hi) {
        const uint64_t mid = (lo + hi + 1) / 2;
        if (start[mid] <= k) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The update of one row: into the block's stash (hierarchical: every row
 * has a slot; register: only the heavy rows, found in hot_rows), else with
 * atomicAdd into the output. */
template <typename T, int RT, bool STASH>
__device__ __forceinline__ void flush(const blco_args<T> &a, T *stash, const uint32_t *hot_rows,
                                      uint32_t key, uint32_t col0, uint32_t c, T (&acc)[RT])
{
    int slot = STASH ? (int)key : -1;
    if (!STASH && a.nhot) { /* hot_rows is sorted: binary search */
        uint32_t lo = 0, hi = a.nhot;
        while (lo < hi) {
            const uint32_t mid = (lo + hi) / 2;
            if (hot_rows[mid] < key) lo = mid + 1;
            else hi = mid;
        }
        if (lo < a.nhot && hot_rows[lo] == key) slot = (int)lo;
    }
#pragma unroll
    for (int t = 0; t < RT; ++t) {
        const uint32_t col = col0 + c + 32 * t;
        if (col < a.R) {
            if (slot >= 0) atomicAdd(stash + (size_t)slot * 32 * RT + (col - col0), acc[t]);
            else atomicAdd(a.out + (size_t)key * a.R + col, acc[t]);
        }
        acc[t] = T(0);
    }
}

/* One warp over non-zeros [wb, we), whose blocks lie in [blo, bhi]. */
template <typename T, int ORDER, int RT, bool STASH>
__device__ __forceinline__ void blco_warp(const blco_args<T> &a, blco_stage<T, ORDER> *st, T *stash,
                                          const uint32_t *hot_rows, uint64_t wb, uint64_t we,
                                          uint64_t blo, uint64_t bhi, uint32_t col0)
{
    constexpr int MO = ORDER ? ORDER : TF_GPU_MAX_ORDER;
    constexpr int U = (RT >= 4 || ORDER == 0) ? TF_UNROLL / 2 : TF_UNROLL;
    const int order = ORDER ? ORDER : (int)a.order;
    const uint32_t lane = threadIdx.x & 31;
    const tf_lanes L = tf_lanes_for(a.R); /* RT > 1 only when R > 32, i.e. C = 32 */
    const bool one_block = a.block_start[blo + 1] >= we;
    T acc[RT];
#pragma unroll
    for (int t = 0; t < RT; ++t) acc[t] = T(0);
    bool pending = false;
    uint32_t pkey = 0;
    for (uint64_t t0 = wb; t0 < we; t0 += 32) {
        /* processing: decode, group equal rows, stage in grouped order */
        const uint64_t k = t0 + lane;
        const bool valid = k < we; /* the valid lanes are 0 .. n-1 */
        const uint32_t active = __ballot_sync(TF_FULL_MASK, valid);
        uint32_t peers = 0;
        if (valid) {
            const uint64_t blk = one_block ? blo : find_block(a.block_start, blo, bhi, k);
            const uint32_t *base = a.block_base + blk * (uint64_t)order;
            const uint64_t lin = a.lin[k];
            uint32_t key = 0;
#pragma unroll
            for (int m = 0; m < MO; ++m)
                if (m < order) {
                    const uint32_t i = (uint32_t)((lin >> a.shift[m]) & a.mask[m]) | base[m];
                    st->idx[m][lane] = i;
                    if (m == (int)a.mode) key = i;
                }
            st->val[lane] = a.vals[k];
            st->key[lane] = key;
            peers = __match_any_sync(active, key);
        }
        /* grouped order: the groups (lanes with one row) one after another,
         * in the order of their first lane; members in lane order */
        const uint32_t leader = valid ? (uint32_t)(__ffs(peers) - 1) : lane;
        const uint32_t gsize = valid && leader == lane ? (uint32_t)__popc(peers) : 0u;
        const uint32_t gbase = __shfl_sync(TF_FULL_MASK, tf_warp_excl_scan(gsize), leader);
        if (valid) st->ord[gbase + __popc(peers & ((1u << lane) - 1u))] = lane;
        const uint32_t n = __popc(active);
        __syncwarp();
        /* computing: lane group g takes a contiguous slice of the grouped
         * order; a running sum per row, one update per row change */
        const uint32_t lo = L.g * n / L.G, hi = (L.g + 1) * n / L.G;
        for (uint32_t p = lo; p < hi; p += U) {
            uint32_t jl[U];
            T prod[U][RT];
#pragma unroll
            for (int u = 0; u < U; ++u) { /* every gather of U non-zeros first */
                const bool has = p + u < hi;
                const uint32_t j = st->ord[has ? p + u : lo];
                jl[u] = j;
                const T v = st->val[j];
#pragma unroll
                for (int t = 0; t < RT; ++t) {
                    const uint32_t col = col0 + L.c + 32 * t;
                    T x = T(0);
                    if (has && col < a.R) {
                        x = v;
#pragma unroll
                        for (int m = 0; m < MO; ++m)
                            if (m < order && m != (int)a.mode)
                                x *= tf_ldg(a.fac.f[m] + (size_t)st->idx[m][j] * a.R + col);
                    }
                    prod[u][t] = x;
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if (p + u >= hi) break;
                const uint32_t key = st->key[jl[u]];
                if (pending && key != pkey) flush<T, RT, STASH>(a, stash, hot_rows, pkey, col0, L.c, acc);
                pending = true;
                pkey = key;
#pragma unroll
                for (int t = 0; t < RT; ++t) acc[t] += prod[u][t];
            }
        }
        __syncwarp(); /* the stage is rewritten by the next run */
    }
    if (pending) flush<T, RT, STASH>(a, stash, hot_rows, pkey, col0, L.c, acc);
}

/* Shared memory: the warps' stages, then the stash (hierarchical: rows x 32
 * values; register: nhot x 32*RT values and the nhot heavy rows). */
template <typename T, int ORDER, int RT, bool STASH>
__global__ void __launch_bounds__(TF_BLOCK_THREADS) blco_mttkrp_kernel(const blco_args<T> a)
{
    using stage_t = blco_stage<T, ORDER>;
    extern __shared__ __align__(16) unsigned char smem[];
    stage_t *st = reinterpret_cast<stage_t *>(smem) + (threadIdx.x >> 5);
    T *stash = reinterpret_cast<T *>(smem + TF_BLOCK_WARPS * sizeof(stage_t));
    const uint32_t width = STASH ? 32 : 32 * RT;            /* stash columns   */
    const uint32_t srows = STASH ? a.rows : a.nhot;         /* stash rows      */
    uint32_t *hot_rows = reinterpret_cast<uint32_t *>(stash + (size_t)srows * width);
    const uint32_t col0 = blockIdx.y * 32 * RT;
    if (srows) {
        for (uint32_t i = threadIdx.x; i < srows * width; i += blockDim.x) stash[i] = T(0);
        if (!STASH)
            for (uint32_t i = threadIdx.x; i < a.nhot; i += blockDim.x) hot_rows[i] = a.hot[i];
        __syncthreads();
    }
    const uint32_t warp = threadIdx.x >> 5;
    for (uint64_t t = blockIdx.x; t < a.ntiles; t += gridDim.x) {
        const uint64_t tb = t * BLCO_TILE;
        const uint64_t te = min(tb + BLCO_TILE, a.nnz);
        const uint64_t wb = min(tb + (uint64_t)warp * BLCO_TPW * 32, te);
        const uint64_t we = min(wb + BLCO_TPW * 32, te);
        const uint64_t blo = a.tile_block[t];
        const uint64_t bhi = t + 1 < a.ntiles ? a.tile_block[t + 1] : a.nblocks - 1;
        blco_warp<T, ORDER, RT, STASH>(a, st, stash, hot_rows, wb, we, blo, bhi, col0);
    }
    if (srows) { /* stash -> output: one coalesced atomic per row and 32 columns */
        __syncthreads();
        for (uint32_t i = threadIdx.x; i < srows * width; i += blockDim.x) {
            const uint32_t row = STASH ? i / width : hot_rows[i / width];
            const uint32_t col = col0 + i % width;
            const T v = stash[i];
            if (col < a.R && v != T(0)) atomicAdd(a.out + (size_t)row * a.R + col, v);
        }
    }
}

enum resolution { RES_AUTO = 0, RES_REGISTER, RES_HIERARCHICAL };

template <typename T>
struct blco_engine : tf_gpu_engine {
    tf_blco_layout lay;
    uint64_t nnz = 0, nblocks = 0, ntiles = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint64_t *lin = nullptr, *block_start = nullptr, *tile_block = nullptr;
    uint32_t *block_base = nullptr;
    uint32_t *hot = nullptr;               /* order x BLCO_MAX_HOT heavy rows, sorted */
    uint32_t nhot[TF_MAX_ORDER] = {0};
    T *vals = nullptr;
    resolution forced = RES_AUTO;

    ~blco_engine() override
    {
        tf_gpu_free(hot);
        tf_gpu_free(lin);
        tf_gpu_free(block_start);
        tf_gpu_free(tile_block);
        tf_gpu_free(block_base);
        tf_gpu_free(vals);
    }

    static size_t stage_bytes(uint32_t order)
    {
        const uint32_t mo = order == 3 || order == 4 ? order : TF_GPU_MAX_ORDER;
        return TF_BLOCK_WARPS * (32 * (sizeof(T) + 8 + 4 * (size_t)mo));
    }
    size_t stash_bytes(uint32_t mode) const { return (size_t)dims[mode] * 32 * sizeof(T); }

    /* The adaptation heuristic. */
    bool hierarchical(uint32_t mode) const
    {
        const bool fits = stage_bytes(lay.order) + stash_bytes(mode) <= ctx->smem_optin;
        if (forced == RES_REGISTER || !fits) return false;
        return forced == RES_HIERARCHICAL || dims[mode] < (uint64_t)ctx->sm_count;
    }

    template <int ORDER, int RT, bool STASH>
    tf_status launch(const blco_args<T> &a, uint32_t mode)
    {
        auto kern = blco_mttkrp_kernel<T, ORDER, RT, STASH>;
        const uint64_t srows = STASH ? a.rows : a.nhot;
        const size_t smem = stage_bytes(lay.order) +
                            (STASH ? stash_bytes(mode) : a.nhot * (32 * RT * sizeof(T) + sizeof(uint32_t)));
        if (smem > 48 * 1024)
            TF_CU(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
        /* Persistent blocks, each looping over tiles: at most what fits on
         * the SMs at once, never fewer than SMs, and with a stash at least 16
         * non-zeros per stash row per block, so the final flushes (one
         * coalesced warp-wide atomic per row) stay small next to the work. */
        int per_sm = 0;
        TF_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, TF_BLOCK_THREADS, smem));
        const uint64_t sms = (uint64_t)ctx->sm_count;
        const uint64_t resident = sms * (uint64_t)std::max(per_sm, 1);
        const uint64_t by_flush = srows ? nnz / (srows * 16 + 1) : resident;
        uint64_t gx = std::min<uint64_t>(ntiles, std::max<uint64_t>(sms, std::min(by_flush, resident)));
        gx = std::min<uint64_t>(gx, 0x7fffffffu);
        const unsigned gy = (a.R + 32 * RT - 1) / (32 * RT);
        kern<<<dim3((unsigned)gx, gy), TF_BLOCK_THREADS, smem, ctx->stream>>>(a);
        TF_CU_LAUNCH("blco_mttkrp_kernel");
        return TF_OK;
    }

    tf_status mttkrp(uint32_t mode, const void *const *fac, void *out, uint32_t R) override
    {
        TF_CU(cudaMemsetAsync(out, 0, dims[mode] * R * sizeof(T), ctx->stream));
        if (nnz == 0) return TF_OK;
        blco_args<T> a;
        memset(&a, 0, sizeof a);
        a.lin = lin;
        a.vals = vals;
        a.block_start = block_start;
        a.block_base = block_base;
        a.tile_block = tile_block;
        a.nnz = nnz;
        a.ntiles = ntiles;
        a.nblocks = nblocks;
        for (uint32_t m = 0; m < lay.order; ++m) {
            a.fac.f[m] = (const T *)fac[m];
            a.mask[m] = tf_blco_mask(lay.field_bits[m]);
            a.shift[m] = lay.field_shift[m];
        }
        a.out = (T *)out;
        a.order = lay.order;
        a.mode = mode;
        a.R = R;
        a.rows = (uint32_t)dims[mode];
        const bool stash = hierarchical(mode);
        a.hot = hot + (size_t)mode * BLCO_MAX_HOT;
        a.nhot = stash ? 0 : nhot[mode];
        return tf_with_order(lay.order, [&](auto ord) -> tf_status {
            constexpr int O = decltype(ord)::value;
            if (stash) return launch<O, 1, true>(a, mode);
            if (R <= 32) return launch<O, 1, false>(a, mode);
            if (R <= 64) return launch<O, 2, false>(a, mode);
            return launch<O, 4, false>(a, mode);
        });
    }

    uint64_t tensor_bytes(uint32_t) const override
    {
        return nnz * (sizeof(uint64_t) + sizeof(T)) + (nblocks + 1 + ntiles) * sizeof(uint64_t) +
               nblocks * lay.order * sizeof(uint32_t);
    }
};

resolution resolution_forced(const tf_tuning &t)
{
    return t.blco_resolution == 1 ? RES_REGISTER : t.blco_resolution == 2 ? RES_HIERARCHICAL : RES_AUTO;
}

template <typename T>
tf_status upload(blco_engine<T> *e, const tf_blco *b)
{
    uint64_t *tiles = nullptr;
    TF_TRY(tf_blco_tiles(b, BLCO_TILE, &e->ntiles, &tiles));
    tf_status s = tf_gpu_upload_new(&e->tile_block, tiles, e->ntiles, "BLCO tile map");
    tf_free(tiles);
    TF_TRY(s);
    TF_TRY(tf_gpu_upload_staged(e->ctx, &e->lin, b->lin, b->nnz, "BLCO indices", e->ctx->stream));
    TF_TRY(tf_gpu_alloc(&e->vals, b->nnz, "BLCO values"));
    TF_TRY(tf_gpu_h2d_values(e->ctx, e->vals, b->vals, b->nnz, e->ctx->stream));
    TF_TRY(tf_gpu_upload_new(&e->block_start, b->block_start, b->nblocks + 1, "BLCO block offsets"));
    TF_TRY(tf_gpu_upload_new(&e->block_base, b->block_base, b->nblocks * b->lay.order,
                              "BLCO block bases"));
    return TF_OK;
}

/* Heavy rows of every register-resolved mode (tuning.blco_hot = 0 turns it off). */
template <typename T>
tf_status find_heavy_rows(blco_engine<T> *e, const tf_tensor *X)
{
    uint32_t rows[TF_MAX_ORDER * BLCO_MAX_HOT] = {0};
    const bool off = !e->ctx->tune.blco_hot;
    for (uint32_t m = 0; m < X->order; ++m) {
        e->nhot[m] = 0;
        if (off || e->hierarchical(m) || X->nnz < BLCO_HOT_MIN) continue;
        const double share = std::max(BLCO_HOT_SHARE, (double)BLCO_HOT_MIN / (double)X->nnz);
        uint32_t *r = rows + (size_t)m * BLCO_MAX_HOT;
        e->nhot[m] = tf_gpu_heavy_rows(X, m, BLCO_HOT_SAMPLE, share, BLCO_MAX_HOT, r);
        std::sort(r, r + e->nhot[m]); /* the kernel searches them */
    }
    return tf_gpu_upload_new(&e->hot, rows, (uint64_t)X->order * BLCO_MAX_HOT, "BLCO heavy rows");
}

template <typename T>
tf_status create(tf_gpu_dev *ctx, const tf_tensor *X, tf_gpu_engine **out)
{
    blco_engine<T> *e = new (std::nothrow) blco_engine<T>();
    if (!e) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU BLCO engine");
    e->ctx = ctx;
    e->format = TF_FORMAT_BLCO;
    e->forced = resolution_forced(ctx->tune);
    for (uint32_t m = 0; m < X->order; ++m) e->dims[m] = X->dims[m];
    tf_blco b;
    tf_status s = tf_blco_build(X, 0, &b);
    if (s == TF_OK) {
        e->lay = b.lay;
        e->nnz = b.nnz;
        e->nblocks = b.nblocks;
        s = upload(e, &b);
        tf_blco_free(&b);
    }
    if (s == TF_OK) s = find_heavy_rows(e, X);
    if (s != TF_OK) {
        delete e;
        return s;
    }
    e->bytes = e->tensor_bytes(0);
    int nstash = 0, nheavy = 0;
    for (uint32_t m = 0; m < X->order; ++m) {
        nstash += e->hierarchical(m);
        nheavy += (int)e->nhot[m];
    }
    snprintf(e->desc, sizeof e->desc, "blco, %llu block%s, %d stash mode%s, %d heavy row%s",
             (unsigned long long)e->nblocks, e->nblocks == 1 ? "" : "s", nstash, nstash == 1 ? "" : "s",
             nheavy, nheavy == 1 ? "" : "s");
    *out = e;
    return TF_OK;
}

} // namespace

tf_status tf_gpu_blco_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec,
                             tf_gpu_engine **out)
{
    *out = nullptr;
    return prec == TF_SINGLE ? create<float>(ctx, X, out) : create<double>(ctx, X, out);
}
