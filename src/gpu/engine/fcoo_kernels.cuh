/* SPDX-License-Identifier: BSD-3-Clause */
/* The F-COO MTTKRP kernels and their launch (fcoo.cu: the resident engine;
 * fcoo_stream.cu: the streamed one, which runs them chunk by chunk).
 *
 * F-COO MTTKRP (Liu et al., Cluster'17, section IV): one copy per mode,
 * sorted by the output index, computed in one shot (product and reduction
 * fused). Two kernels read the same copy; the engine picks one per mode.
 *
 * Both: a 2-D grid, rank-wise parallel: blockIdx.y selects a slice of 32
 * lane pieces of the rank (V columns per lane: 16-byte factor loads when R
 * is a multiple of V = 16 / sizeof(T), else V = 1), blockIdx.x a group of
 * partitions; blocks are 1-D with 256 threads whatever R is, each warp owns
 * one partition (part_nnz non-zeros, a multiple of 32), and a warp is G
 * groups of C lanes (C = R/V rounded up to a power of two, at most 32).
 * The seg kernel also comes with half slices (SL = 16 pieces, 256 bytes of
 * a factor row per grid row): block order runs the slices one after the
 * other, so each pass over the copy gathers half as many bytes per row and
 * the L2 holds twice the rows. Where a row is longer than 256 bytes and
 * the product factors exceed the L2 they are timed on first use beside
 * the chosen pair (measured on an H200: 3 % faster on the 20M-non-zero
 * tensor at R = 64 and 128; a runtime slice had been slower on wordnet30,
 * whose factors the L2 holds better; at 128 bytes or less random gathers
 * lose more bandwidth than the hits save). A compile-time SL keeps the
 * full-slice kernels exactly as they were.
 *
 * "scan": the warp loads 32 non-zeros at a time (one per lane,
 * coalesced), its lane groups take them G at a time (shuffles), form the
 * products for their columns, and combine them with a segmented inclusive
 * scan across the groups (warp shuffles, head bits as segment flags); a
 * running carry links consecutive steps. At a segment's last non-zero the
 * sum is written: a plain store when the segment lies inside the
 * partition, an atomicAdd only for the first and last segment where the
 * start flags say they continue into a neighbouring partition. About 7-8
 * shuffles per non-zero: good for short segments.
 *
 * "seg" (segment streaming, no per-non-zero shuffles): group g of the warp
 * owns the contiguous range [beg + g*part_nnz/G, beg + (g+1)*part_nnz/G) of
 * the partition and walks it in order, U = 2-4 non-zeros per step (their
 * indices, values and head bits fetched one step ahead, all factor loads of
 * a step issued before any is used). All lanes of a group read the same
 * index/value (uniform loads, one L1 broadcast) and their own columns of
 * the factor rows, and accumulate in registers while the head bits say the
 * segment continues. A segment that starts and ends inside the range is
 * written with a plain (16-byte) store; the range's leading segment (begun
 * before it) and trailing one (still open at its end) are combined across
 * the warp's groups with one segmented scan (log2 G shuffle steps per
 * warp), then stored, with an atomicAdd only where the start flags say the
 * segment continues into a neighbouring partition (as in "scan"). The
 * group's first segment number is part_seg + the head bits in
 * (beg, range start], counted by its lanes. Good for long segments. A
 * pipelined variant (SEG_PIPE) requests step k + 1's rows before it sums
 * step k.
 *
 * The kernels read a's arrays from partition 0 of a.nparts: a run over
 * partitions [p0, p1) of a copy passes the arrays shifted to p0 (p0 a
 * multiple of 32, so the head and start bit words stay aligned; the segment
 * numbers in part_seg and seg_row stay global). A segment that continues
 * past a.nparts is stored, not added: ranges of one copy must run in order
 * on one stream, and the next range adds to it (its first partition's start
 * flag says it continues). */
#ifndef TF_GPU_ENGINE_FCOO_KERNELS_CUH
#define TF_GPU_ENGINE_FCOO_KERNELS_CUH
#include <algorithm>
#include <type_traits>

#include "gpu/engine/engine.cuh"
#include "gpu/runtime/ld16.cuh"
#include "gpu/runtime/warp.cuh"

namespace {

#define MAX_PMODES (TF_GPU_MAX_ORDER - 1)

template <typename T>
struct fcoo_args {
    const uint32_t *pind[MAX_PMODES];
    const T *vals;
    const uint32_t *head, *start, *part_seg, *seg_row;
    tf_factor_ptrs<T> fac; /* by product-mode position */
    T *out;
    uint64_t nnz, nparts, nseg;
    uint32_t part_nnz, np, R;
    uint32_t accum; /* 1: every row's sum is added to out (atomically), nothing cleared */
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
        tf_ld16(p, x);
    }
}

/* Segmented inclusive scan of v (V columns) over the G lane groups of a
 * warp (C lanes each, lane layout L): a group adds the sums of the groups
 * before it back to the nearest one whose flag f (a segment head at or
 * before it) is set; f becomes "a head at or before me". Both kernels use
 * it: scan per step, seg once per warp. */
template <typename T, int V>
__device__ __forceinline__ void group_segscan(T (&v)[V], uint32_t &f, const tf_lanes &L)
{
    for (uint32_t d = 1; d < L.G; d <<= 1) {
        T y[V];
#pragma unroll
        for (int k = 0; k < V; ++k) y[k] = __shfl_up_sync(TF_FULL_MASK, v[k], d * L.C);
        const uint32_t fy = __shfl_up_sync(TF_FULL_MASK, f, d * L.C);
        if (L.g >= d) {
            if (!f)
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] += y[k];
            f |= fy;
        }
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
                group_segscan<T, V>(x[u], fl, L); /* fl: a head at or before me */
                if (!fl)
#pragma unroll
                    for (int k = 0; k < V; ++k) y0[k] += carry[k];
                if (ok && colok && ((tails >> j) & 1u)) {
                    const uint32_t le = j == 31 ? TF_FULL_MASK : (2u << j) - 1u;
                    const uint32_t seg = seg0 + prefix + __popc(adv & le);
                    T *o = a.out + (size_t)a.seg_row[seg] * a.R + col;
                    if (a.accum || (seg == seg0 && first_continues) || (cb + j + 1 == end && last_continues)) {
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

/* Writes V columns of a sum: atomicAdd per column, or one (16-byte)
 * store. */
template <typename T, int V>
__device__ __forceinline__ void put_cols(T *o, const T (&x)[V], bool atomic)
{
    if (atomic) {
#pragma unroll
        for (int k = 0; k < V; ++k) atomicAdd(o + k, x[k]);
    } else if constexpr (V == 1) {
        o[0] = x[0];
    } else {
        static_assert(V * sizeof(T) == 16, "16-byte pieces");
        using W = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
        W w;
        T *t = reinterpret_cast<T *>(&w);
#pragma unroll
        for (int k = 0; k < V; ++k) t[k] = x[k];
        *reinterpret_cast<W *>(o) = w;
    }
}

/* The seg kernel's variants the tuner times (fcoo_engine::tune_mode),
 * trading warps per SM against non-zeros in flight per warp: each is the
 * blocks of 256 threads per SM it is compiled for (seg_blocks) and whether
 * its loads are software-pipelined (seg_pipelined). SEG_WIDE (3 blocks, up
 * to 80 registers) is the default; SEG_OCC (4, 64 registers, one non-zero
 * less per step) and SEG_DEEP (2, up to 128 registers, 6 non-zeros per
 * step for orders 3) are taken where they are clearly faster. SEG_PIPE
 * (orders 3 and 4 only) is 2 blocks per SM with the loads software-
 * pipelined: step k + 1's values and factor rows are requested before
 * step k is summed, so a group never waits with nothing in flight.
 * Measured on an H200 (R = 32, all modes, ms): the 20M-non-zero skewed
 * tensor fp32 3.66 -> 3.26 at 4 blocks -> 2.82 pipelined, fp64 6.08 ->
 * 5.46 at 2 (pipelined 5.56); wordnet30 fp64 0.141 -> 0.129 at 2, fp32
 * mode 2 0.028 -> 0.023 pipelined; uber-apr14 within a few per cent
 * either way, by mode (pipelined 30-40 % slower). */
enum { SEG_WIDE, SEG_OCC, SEG_DEEP, SEG_PIPE, SEG_VARIANTS };
constexpr int seg_blocks[SEG_VARIANTS] = {3, 4, 2, 2};
constexpr bool seg_pipelined[SEG_VARIANTS] = {false, false, false, true};

/* Orders with a pipelined seg kernel (SEG_PIPE): 3 and 4. */
constexpr bool has_pipe(uint32_t order) { return order == 3 || order == 4; }

/* Non-zeros per step of a seg group (their factor loads in flight per
 * lane, plus the next step's indices): the most that compile without
 * spills, or with a few bytes, under the launch bounds (ptxas, sm_90: 72-80
 * registers at 3 blocks per SM, 64 at 4, 72-122 at 2 (8 non-zeros per step
 * there measured slower), 72-128 pipelined (two steps' rows held); orders 2
 * and 5-8 share the generic kernel, which has no pipelined variant: it
 * spills even at 2 non-zeros per step). */
template <int NP, int MINB, bool PIPE>
__host__ __device__ constexpr int seg_unroll()
{
    if (PIPE) return NP <= 2 ? 4 : 3;
    if (MINB == seg_blocks[SEG_DEEP]) return NP == 0 ? 3 : NP <= 2 ? 6 : 4;
    if (MINB == seg_blocks[SEG_WIDE]) return NP == 0 ? 2 : NP <= 2 ? 4 : 3;
    return NP == 0 ? 1 : NP <= 2 ? 3 : 2;
}

/* The pipelined seg kernel's loads for the step at k (U non-zeros from
 * k, those before gend): values into pv, this lane's columns of each
 * product mode's factor row into pf (zero where absent). MP = the order
 * - 1: the generic kernel (NP = 0) is not pipelined. */
template <typename T, int U, int MP, int V>
__device__ __forceinline__ void seg_stage(const fcoo_args<T> &a, const uint32_t (&idx)[U][MP], uint64_t k,
                                          uint64_t gend, bool colok, uint32_t col, T (&pv)[U],
                                          T (&pf)[U][MP][V])
{
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const bool ok = k + u < gend;
        pv[u] = ok ? __ldg(a.vals + k + u) : T(0);
#pragma unroll
        for (int q = 0; q < MP; ++q) {
#pragma unroll
            for (int k2 = 0; k2 < V; ++k2) pf[u][q][k2] = T(0);
            if (ok && colok) load_cols<T, V>(a.fac.f[q] + (size_t)idx[u][q] * a.R + col, pf[u][q]);
        }
    }
}

/* Segment-streaming kernel (file header): one partition per warp, one
 * contiguous range of it per lane group, walked in order with register
 * accumulation; no shuffles per non-zero. */
template <typename T, int NP, int V, int MINB, bool PIPE, int SL>
__global__ void __launch_bounds__(TF_BLOCK_THREADS, MINB) fcoo_seg_kernel(const fcoo_args<T> a)
{
    static_assert(SL == 32 || SL == 16, "full or half slices of the rank");
    static_assert(!PIPE || NP > 0, "the generic kernel is not pipelined");
    constexpr int MP = NP ? NP : MAX_PMODES;
    constexpr int U = seg_unroll<NP, MINB, PIPE>();
    static_assert(U >= 1 && U < 32, "a step's head bits lie in two words");
    const int np = NP ? NP : (int)a.np;
    const uint64_t p = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (p >= a.nparts) return; /* the whole warp leaves together */
    /* lanes over pieces of V columns, SL pieces per grid row */
    const tf_lanes L = tf_lanes_for(SL == 32 ? a.R / V : min(a.R / V, (uint32_t)SL));
    const uint32_t col = (blockIdx.y * SL + L.c) * V;
    const bool colok = col < a.R;
    const uint64_t beg = p * a.part_nnz;
    const uint64_t end = min(beg + a.part_nnz, a.nnz);
    const uint32_t rs = a.part_nnz / L.G; /* the group's range; part_nnz is a multiple of 32 */
    const uint64_t gbeg = min(beg + (uint64_t)L.g * rs, end);
    const uint64_t gend = min(gbeg + rs, end);
    const bool live = gbeg < gend; /* ranges past the end of the last partition are empty */
    const bool first_continues = !bit_of(a.start, p);
    const bool last_continues = p + 1 < a.nparts && !bit_of(a.start, p + 1);
    const uint32_t seg0 = a.part_seg[p];

    /* Step k's indices, fetched a step ahead (the factor loads depend on
     * them); values and head bits are loaded beside the factor rows. */
    uint32_t idx[U][MP];
    auto fetch = [&](uint64_t k) {
#pragma unroll
        for (int u = 0; u < U; ++u)
#pragma unroll
            for (int q = 0; q < MP; ++q)
                idx[u][q] = k + u < gend && q < np ? __ldg(a.pind[q] + k + u) : 0u;
    };
    if (live) fetch(gbeg);

    /* The group's first segment: seg0 + the heads in (beg, gbeg], the
     * partition's head words split over the group's lanes. */
    uint32_t nh = 0;
    if (live) {
        const uint64_t off = gbeg - beg;
        for (uint64_t w = L.c; w * 32 <= off; w += L.C) {
            uint32_t word = __ldg(a.head + (beg >> 5) + w);
            if (w == 0) word &= ~1u; /* beg's own head is counted in seg0 */
            const uint64_t hi = off - w * 32;
            if (hi < 31) word &= (2u << hi) - 1u;
            nh += __popc(word);
        }
    }
    for (uint32_t d = 1; d < L.C; d <<= 1) nh += __shfl_xor_sync(TF_FULL_MASK, nh, d);
    const uint32_t seg_first = seg0 + nh;
    const uint32_t hg = live ? bit_of(a.head, gbeg) : 0u; /* the range starts a segment */
    uint32_t seg = seg_first;
    uint32_t row = live ? __ldg(a.seg_row + seg) : 0u; /* output row of segment seg */
    uint32_t row_next = live && (uint64_t)seg + 1 < a.nseg ? __ldg(a.seg_row + seg + 1) : 0u;
    /* Row of the leading segment: the one open at gbeg - 1 when gbeg is a head. */
    const uint32_t row_lead = hg && L.g > 0 ? __ldg(a.seg_row + seg - 1) : row;

    T acc[V], lead[V];
#pragma unroll
    for (int k = 0; k < V; ++k) acc[k] = lead[k] = T(0);
    bool open = hg; /* the segment being summed began inside the range */

    /* PIPE: step k + U's values and factor rows are requested before step
     * k is summed (two steps of loads in flight per group; its indices are
     * fetched two steps ahead). pv / pf hold the step staged next. */
    constexpr int PU = PIPE ? U : 1;
    T pv[PU];
    T pf[PU][MP][V];
    if constexpr (PIPE) {
        if (live) {
            seg_stage<T, U, MP, V>(a, idx, gbeg, gend, colok, col, pv, pf);
            if (gbeg + U < gend) fetch(gbeg + U);
        }
    }

    for (uint64_t k = gbeg; k < gend; k += U) {
        const uint32_t n = (uint32_t)min((uint64_t)U, gend - k);
        uint32_t ci[U][MP]; /* this step's indices (not PIPE) */
        T cv[U];            /* values */
        T cf[PU][MP][V];    /* factor rows (PIPE) */
        if constexpr (PIPE) {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                cv[u] = pv[u];
#pragma unroll
                for (int q = 0; q < MP; ++q)
#pragma unroll
                    for (int k2 = 0; k2 < V; ++k2) cf[u][q][k2] = pf[u][q][k2];
            }
            if (k + U < gend) {
                seg_stage<T, U, MP, V>(a, idx, k + U, gend, colok, col, pv, pf);
                if (k + 2 * U < gend) fetch(k + 2 * U);
            }
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                cv[u] = (uint32_t)u < n ? __ldg(a.vals + k + u) : T(0);
#pragma unroll
                for (int q = 0; q < MP; ++q) ci[u][q] = idx[u][q];
            }
            if (k + U < gend) fetch(k + U); /* next step's indices in flight */
        }
        /* head bits of non-zeros k .. k + U - 1 (two words where they straddle) */
        const uint64_t w = k >> 5;
        const uint32_t sh = (uint32_t)(k & 31);
        const uint32_t hhi = sh + n > 32 ? __ldg(a.head + w + 1) : 0u;
        uint32_t hm = __funnelshift_r(__ldg(a.head + w), hhi, sh) & ((1u << n) - 1u);
        if (k == gbeg) hm &= ~1u; /* gbeg's head is `open` already */
        T x[U][V];
#pragma unroll
        for (int u = 0; u < U; ++u) {
#pragma unroll
            for (int k2 = 0; k2 < V; ++k2) x[u][k2] = T(0);
            if ((uint32_t)u < n && colok) {
#pragma unroll
                for (int k2 = 0; k2 < V; ++k2) x[u][k2] = cv[u];
#pragma unroll
                for (int q = 0; q < MP; ++q)
                    if (q < np) {
                        T fv[V];
                        if constexpr (PIPE) {
#pragma unroll
                            for (int k2 = 0; k2 < V; ++k2) fv[k2] = cf[u][q][k2];
                        } else {
                            load_cols<T, V>(a.fac.f[q] + (size_t)ci[u][q] * a.R + col, fv);
                        }
#pragma unroll
                        for (int k2 = 0; k2 < V; ++k2) x[u][k2] *= fv[k2];
                    }
            }
        }
        if (!hm) { /* all inside the open segment */
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int k2 = 0; k2 < V; ++k2) acc[k2] += x[u][k2];
        } else {
#pragma unroll
            for (int u = 0; u < U; ++u) {
                if ((hm >> u) & 1u) { /* non-zero k + u starts a segment: close seg */
                    if (open) {
                        if (colok) put_cols<T, V>(a.out + (size_t)row * a.R + col, acc, a.accum != 0);
                    } else { /* the leading segment: combined below */
#pragma unroll
                        for (int k2 = 0; k2 < V; ++k2) lead[k2] = acc[k2];
                        open = true;
                    }
#pragma unroll
                    for (int k2 = 0; k2 < V; ++k2) acc[k2] = T(0);
                    ++seg;
                    row = row_next;
                    row_next = (uint64_t)seg + 1 < a.nseg ? __ldg(a.seg_row + seg + 1) : 0u;
                }
#pragma unroll
                for (int k2 = 0; k2 < V; ++k2) acc[k2] += x[u][k2];
            }
        }
    }

    /* Combine the groups: segmented inclusive scan of the trailing sums
     * (flag: the range saw a head, so its trailing sum starts there);
     * inc of group g is then the whole sum so far of the segment open at
     * its range's end. */
    uint32_t f = open;
    T inc[V], prev[V];
#pragma unroll
    for (int k = 0; k < V; ++k) {
        inc[k] = acc[k];
        prev[k] = T(0);
    }
    if (L.G > 1) {
        group_segscan<T, V>(inc, f, L);
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const T y = __shfl_up_sync(TF_FULL_MASK, inc[k], L.C);
            prev[k] = L.g > 0 ? y : T(0);
        }
    }
    /* The leading segment ends inside this range: the previous groups'
     * part plus `lead` (zero when the range starts with a head, which then
     * closes the previous group's open segment). */
    if (open && !(L.g == 0 && hg) && colok) {
        T t[V];
#pragma unroll
        for (int k = 0; k < V; ++k) t[k] = prev[k] + lead[k];
        const bool atomic = seg_first - hg == seg0 && first_continues;
        put_cols<T, V>(a.out + (size_t)row_lead * a.R + col, t, atomic || a.accum);
    }
    /* The segment open at the partition's end, by the group holding end - 1. */
    if (L.g == (uint32_t)(end - 1 - beg) / rs && colok) {
        const bool atomic = last_continues || (seg == seg0 && first_continues);
        put_cols<T, V>(a.out + (size_t)row * a.R + col, inc, atomic || a.accum);
    }
}

/* Zeroes rows[0..n-1] of out (R columns each) before the MTTKRP kernel:
 * the rows it does not store (tf_fcoo_zero_rows). */
template <typename T>
__global__ void clear_rows_kernel(T *out, const uint32_t *rows, uint64_t n, uint32_t R)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n * R;
         e += (uint64_t)gridDim.x * blockDim.x)
        out[(uint64_t)rows[e / R] * R + e % R] = T(0);
}


/* Clears what the kernel does not store before it runs: the whole output
 * (clear_all, rows x R) or rows zrows[0..nzero). */
template <typename T>
tf_status fcoo_clear(T *out, uint64_t rows, bool clear_all, const uint32_t *zrows, uint64_t nzero, uint32_t R,
                     cudaStream_t st)
{
    if (clear_all) {
        TF_CU(cudaMemsetAsync(out, 0, rows * R * sizeof(T), st));
    } else if (nzero) {
        const uint64_t n = nzero * R;
        const unsigned blocks = (unsigned)std::min<uint64_t>((n + 255) / 256, 4096);
        clear_rows_kernel<T><<<blocks, 256, 0, st>>>(out, zrows, nzero, R);
        TF_CU_LAUNCH("clear_rows_kernel");
    }
    return TF_OK;
}

/* One launch of the seg (seg) or scan kernel over a.nparts partitions
 * (a.nparts > 0) with the seg variant (SEG_*), slice (16: half slices)
 * and 16-byte pieces (vec) chosen by the caller. */
template <typename T>
tf_status fcoo_launch(const fcoo_args<T> &a, uint32_t order, bool seg, int variant, int slice, bool vec,
                      cudaStream_t st)
{
    constexpr uint32_t VEC = 16 / sizeof(T);
    const bool half = seg && vec && slice == 16; /* half slices: 16-byte pieces only */
    const uint32_t cols_per_block = (half ? 16 : 32) * (vec ? VEC : 1);
    const dim3 grid((unsigned)((a.nparts + TF_BLOCK_WARPS - 1) / TF_BLOCK_WARPS),
                    (a.R + cols_per_block - 1) / cols_per_block);
    /* The kernel is templated on the number of product modes (order - 1). */
    return tf_with_order(order, [&](auto ord) -> tf_status {
        constexpr int NP = decltype(ord)::value ? decltype(ord)::value - 1 : 0;
        if (seg) {
            auto run = [&](auto va) {
                constexpr int VA = decltype(va)::value;
                constexpr int MB = seg_blocks[VA];
                constexpr bool P = seg_pipelined[VA];
                if (half) fcoo_seg_kernel<T, NP, VEC, MB, P, 16><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
                else if (vec) fcoo_seg_kernel<T, NP, VEC, MB, P, 32><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
                else fcoo_seg_kernel<T, NP, 1, MB, P, 32><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
            };
            if (variant == SEG_OCC) run(std::integral_constant<int, SEG_OCC>{});
            else if (variant == SEG_DEEP) run(std::integral_constant<int, SEG_DEEP>{});
            else if (variant == SEG_PIPE) {
                /* never chosen for the generic kernel (has_pipe) */
                if constexpr (NP > 0) run(std::integral_constant<int, SEG_PIPE>{});
                else run(std::integral_constant<int, SEG_WIDE>{});
            } else run(std::integral_constant<int, SEG_WIDE>{});
            TF_CU_LAUNCH("fcoo_seg_kernel");
        } else {
            if (vec) fcoo_mttkrp_kernel<T, NP, VEC><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
            else fcoo_mttkrp_kernel<T, NP, 1><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
            TF_CU_LAUNCH("fcoo_mttkrp_kernel");
        }
        return TF_OK;
    });
}

} // namespace
#endif
