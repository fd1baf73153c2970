/* SPDX-License-Identifier: BSD-3-Clause */
/* Device helpers shared by the MTTKRP kernels: the lane layout over the
 * rank, the compile-time/runtime order switch, and kernel argument pieces.
 *
 * Lane layout: a warp is G groups of C lanes, C = min(32, next power of two
 * >= R). Each group works on one non-zero, its lanes on columns. For R >= 32
 * that is one non-zero per warp step with lanes over 32-column slices; for
 * small R several non-zeros are processed at once so no lanes idle. */
#ifndef TF_GPU_RUNTIME_WARP_CUH
#define TF_GPU_RUNTIME_WARP_CUH
#include <stdint.h>

#include <type_traits>

#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/limits.cuh"

#define TF_FULL_MASK 0xffffffffu
#define TF_BLOCK_THREADS 256
#define TF_BLOCK_WARPS (TF_BLOCK_THREADS / 32)

struct tf_lanes {
    uint32_t C;    /* lanes per group (columns at once) */
    uint32_t G;    /* groups per warp (non-zeros at once) */
    uint32_t g;    /* this lane's group                  */
    uint32_t c;    /* this lane's column within its group */
};

__host__ __device__ inline uint32_t tf_pow2_ceil(uint32_t x)
{
    uint32_t p = 1;
    while (p < x) p <<= 1;
    return p;
}

__device__ inline tf_lanes tf_lanes_for(uint32_t R)
{
    tf_lanes L;
    L.C = R >= 32 ? 32 : tf_pow2_ceil(R);
    L.G = 32 / L.C;
    uint32_t lane = threadIdx.x & 31;
    L.g = lane / L.C;
    L.c = lane % L.C;
    return L;
}

/* Factor pointers by mode, passed by value to kernels. */
template <typename T>
struct tf_factor_ptrs {
    const T *f[TF_GPU_MAX_ORDER];
};

/* Calls fn(std::integral_constant<int, ORDER>{}) with ORDER = 3 or 4 (the
 * common orders, fully unrolled) or 0 (any order up to TF_GPU_MAX_ORDER,
 * loops bounded by the maximum and guarded by the runtime order). */
template <typename Fn>
static inline tf_status tf_with_order(uint32_t order, Fn &&fn)
{
    switch (order) {
    case 3: return fn(std::integral_constant<int, 3>{});
    case 4: return fn(std::integral_constant<int, 4>{});
    default: return fn(std::integral_constant<int, 0>{});
    }
}

/* Exclusive prefix sum of v over the lanes of a (converged) warp. */
__device__ __forceinline__ uint32_t tf_warp_excl_scan(uint32_t v)
{
    const uint32_t lane = threadIdx.x & 31;
    uint32_t x = v;
#pragma unroll
    for (uint32_t d = 1; d < 32; d <<= 1) {
        const uint32_t y = __shfl_up_sync(TF_FULL_MASK, x, d);
        if (lane >= d) x += y;
    }
    return x - v;
}

/* Non-zeros whose factor loads each lane issues before using any of them
 * (memory-level parallelism for the gathers). */
#define TF_UNROLL 4

/* Read-only load through the non-coherent cache. */
template <typename T>
__device__ __forceinline__ T tf_ldg(const T *p)
{
    return __ldg(p);
}
#endif
