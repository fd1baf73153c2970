/* SPDX-License-Identifier: BSD-3-Clause */
/* A = M W in one launch for short factors of the small-rank path
 * (tf_gpu_small_apply; see dense.cuh). */
#include "gpu/cpd/dense_common.cuh"

namespace {

/* A = M W for a short factor (row-major I x R, W R x R, R <= 64): W in
 * shared memory, a warp takes AR rows at a time, lane c their columns c
 * and c + 32 (NC = 2 pieces when R > 32); M's entries are broadcast by
 * shuffles from the lanes that loaded them. (Reading W through L1 instead
 * of staging it was 2x slower: every k step waited for its load.) */
template <typename T, int NC>
__global__ void __launch_bounds__(kThreads) apply_kernel(const T *M, uint64_t I, uint32_t R, const T *W, T *A)
{
    constexpr int AR = 4;
    __shared__ T w[kSmall * kSmall];
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t nw = (uint64_t)gridDim.x * (kThreads / 32);
    uint64_t i0 = ((uint64_t)blockIdx.x * kThreads + threadIdx.x) / 32 * AR;
    T m[AR][NC];
    auto load = [&](uint64_t i) {
#pragma unroll
        for (int r = 0; r < AR; ++r)
#pragma unroll
            for (int q = 0; q < NC; ++q) {
                const uint32_t c = lane + 32 * q;
                m[r][q] = i + r < I && c < R ? M[(i + r) * R + c] : T(0);
            }
    };
    /* the first rows of M are requested before W is staged: the two
     * round trips overlap (short factors: one task per warp) */
    if (i0 < I) load(i0);
    for (uint32_t e = threadIdx.x; e < R * R; e += kThreads) w[e] = W[e];
    __syncthreads();
    for (; i0 < I; i0 += nw * AR) {
        T a[AR][NC];
#pragma unroll
        for (int r = 0; r < AR; ++r)
#pragma unroll
            for (int q = 0; q < NC; ++q) a[r][q] = T(0);
        for (uint32_t k = 0; k < R; ++k) {
            T wk[NC];
#pragma unroll
            for (int q = 0; q < NC; ++q) wk[q] = lane + 32 * q < R ? w[k * R + lane + 32 * q] : T(0);
#pragma unroll
            for (int r = 0; r < AR; ++r) {
                const T mk = __shfl_sync(TF_WARP_ALL, NC == 1 || k < 32 ? m[r][0] : m[r][NC - 1], k & 31);
#pragma unroll
                for (int q = 0; q < NC; ++q) a[r][q] += mk * wk[q];
            }
        }
        if (i0 + nw * AR < I) load(i0 + nw * AR); /* the next task's rows */
#pragma unroll
        for (int r = 0; r < AR; ++r)
#pragma unroll
            for (int q = 0; q < NC; ++q)
                if (i0 + r < I && lane + 32 * q < R) A[(i0 + r) * R + lane + 32 * q] = a[r][q];
    }
}

} // namespace

template <typename T>
tf_status tf_gpu_small_apply(const T *M, uint64_t I, uint32_t R, const T *W, T *A, cudaStream_t st)
{
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "small apply: rank %u is outside 1..%d", R, kSmall);
    if (I == 0) return TF_OK;
    const unsigned blocks = (unsigned)std::min<uint64_t>((I + 31) / 32, 1024); /* 4 rows per warp */
    if (R > 32) apply_kernel<T, 2><<<blocks, kThreads, 0, st>>>(M, I, R, W, A);
    else apply_kernel<T, 1><<<blocks, kThreads, 0, st>>>(M, I, R, W, A);
    TF_CU_LAUNCH("apply_kernel");
    return TF_OK;
}

#define TF_SMALL_APPLY_INSTANTIATE(T)                                                       \
    template tf_status tf_gpu_small_apply<T>(const T *, uint64_t, uint32_t, const T *, T *, \
                                             cudaStream_t);
TF_SMALL_APPLY_INSTANTIATE(float)
TF_SMALL_APPLY_INSTANTIATE(double)
