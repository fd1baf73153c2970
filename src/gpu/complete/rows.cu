/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion's row solves on the GPU (complete.cuh): a block per row. The
 * block's system is the lower triangle of the (R + 1) x (R + 1) matrix
 * [G ., b^T] in shared memory (row R holds b = sum x h), each of its
 * entries owned by one thread (the pair map), which adds h_i h_j over a
 * batch of TFC_BATCH entries' h's (h_R = x) in entry order -- the CPU's
 * order of the terms; then l2 on the diagonal and the Cholesky
 * factorisation in place, right-looking (a column per step, its updates
 * in the CPU's order k = 0, 1, ...; a pivot not above 64 eps times its
 * diagonal entry, or not finite, stops it as on the CPU), and the two
 * triangular solves on one warp. A long row's entries come in segments: a
 * block per segment sums its part of the system into global memory, a
 * block per row adds the parts in segment order. Then the row's error over
 * its entries (a sum per thread, then a fixed tree). No atomics: the same
 * bits on every run. */
#include <float.h>
#include <math.h>

#include <algorithm>

#include "gpu/complete/complete.cuh"
#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/warp.cuh"

namespace {

/* The shared memory of a block: the system (LD x LD), a batch of h's
 * (TFC_BATCH x LD), the original diagonal, the solution, the reduction's
 * scratch (T), then the pair map (P uint32: i << 16 | j). */
struct tfc_smem {
    double *G, *H, *diag, *x, *red;
    uint32_t *pairs;
};

__device__ __forceinline__ tfc_smem smem_of(uint32_t R)
{
    extern __shared__ double tfc_sh[];
    const uint32_t LD = R + 1;
    tfc_smem s;
    s.G = tfc_sh;
    s.H = s.G + LD * LD;
    s.diag = s.H + TFC_BATCH * LD;
    s.x = s.diag + LD;
    s.red = s.x + LD;
    s.pairs = (uint32_t *)(s.red + blockDim.x);
    return s;
}

/* The pair map of the lower triangle, row-major, without (R, R). */
__device__ void fill_pairs(const tfc_smem &s, uint32_t P)
{
    for (uint32_t p = threadIdx.x; p < P; p += blockDim.x) {
        uint32_t i = (uint32_t)((sqrt(8.0 * p + 1.0) - 1.0) / 2.0);
        while (i * (i + 1) / 2 > p) --i;
        while ((i + 1) * (i + 2) / 2 <= p) ++i;
        s.pairs[p] = i << 16 | (p - i * (i + 1) / 2);
    }
}

/* The other modes' product at entry j, column r. */
template <int ORDER>
__device__ __forceinline__ double h_of(const tfc_solve &a, uint64_t j, uint32_t r)
{
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    double h = 1.0;
#pragma unroll
    for (uint32_t n = 0; n < NMAX; ++n) {
        if ((ORDER == 0 && n >= a.order) || n == a.mode) continue;
        h *= __ldg(a.A[n] + (uint64_t)__ldg(a.ind[n] + j) * a.R + r);
    }
    return h;
}

/* The owned entries of the system += the sums over entries [k0, k1). */
template <int ORDER>
__device__ void accumulate(const tfc_solve &a, const tfc_smem &s, uint32_t P, uint64_t k0, uint64_t k1)
{
    const uint32_t R = a.R, LD = R + 1;
    for (uint64_t b0 = k0; b0 < k1; b0 += TFC_BATCH) {
        const uint32_t n = (uint32_t)(k1 - b0 < TFC_BATCH ? k1 - b0 : TFC_BATCH);
        for (uint32_t e = threadIdx.x; e < n * LD; e += blockDim.x) {
            const uint32_t k = e / LD, r = e - k * LD;
            s.H[e] = r == R ? __ldg(a.vals + b0 + k) : h_of<ORDER>(a, b0 + k, r);
        }
        __syncthreads();
        for (uint32_t p = threadIdx.x; p < P; p += blockDim.x) {
            const uint32_t i = s.pairs[p] >> 16, j = s.pairs[p] & 0xffffu;
            double g = s.G[i * LD + j];
            for (uint32_t k = 0; k < n; ++k) g += s.H[k * LD + i] * s.H[k * LD + j];
            s.G[i * LD + j] = g;
        }
        __syncthreads();
    }
}

/* Zeroes the owned entries (the pair map first). */
__device__ void start_system(const tfc_smem &s, uint32_t R, uint32_t P)
{
    fill_pairs(s, P);
    __syncthreads();
    const uint32_t LD = R + 1;
    for (uint32_t p = threadIdx.x; p < P; p += blockDim.x) s.G[(s.pairs[p] >> 16) * LD + (s.pairs[p] & 0xffffu)] = 0.0;
    __syncthreads();
}

/* Sum of v over the block (blockDim.x a power of two), in a fixed tree. */
__device__ double block_sum(const tfc_smem &s, double v)
{
    s.red[threadIdx.x] = v;
    __syncthreads();
    for (uint32_t h = blockDim.x / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) s.red[threadIdx.x] += s.red[threadIdx.x + h];
        __syncthreads();
    }
    const double t = s.red[0];
    __syncthreads();
    return t;
}

/* The system of row `row` (entries [k0, k1)) is complete in s.G: l2 on its
 * diagonal, the Cholesky solve, the row out, its error and its pivot
 * state. */
template <int ORDER>
__device__ void finish_row(const tfc_solve &a, const tfc_smem &s, uint32_t P, uint32_t row, uint64_t k0, uint64_t k1)
{
    __shared__ double s_inv;
    __shared__ uint32_t s_bad;
    const uint32_t R = a.R, LD = R + 1, T = blockDim.x;
    for (uint32_t r = threadIdx.x; r < R; r += T) {
        s.G[r * LD + r] += a.l2;
        s.diag[r] = s.G[r * LD + r];
    }
    if (threadIdx.x == 0) s_bad = 0;
    __syncthreads();
    for (uint32_t j = 0; j < R; ++j) {
        if (threadIdx.x == 0) {
            const double d = s.G[j * LD + j];
            if (!(d > 64 * DBL_EPSILON * s.diag[j]) || !isfinite(d)) {
                s_bad = j + 1;
            } else {
                const double l = sqrt(d);
                s.G[j * LD + j] = l;
                s_inv = 1.0 / l;
            }
        }
        __syncthreads();
        if (s_bad) break;
        for (uint32_t i = j + 1 + threadIdx.x; i < R; i += T) s.G[i * LD + j] *= s_inv;
        __syncthreads();
        for (uint32_t p = threadIdx.x; p < P; p += T) { /* the trailing lower triangle */
            const uint32_t i = s.pairs[p] >> 16, k = s.pairs[p] & 0xffffu;
            if (k > j && i < R) s.G[i * LD + k] -= s.G[i * LD + j] * s.G[k * LD + j];
        }
        __syncthreads();
    }
    const uint32_t bad = s_bad;
    if (!bad && threadIdx.x < 32) { /* L y = b, then L^T x = y, on one warp */
        const uint32_t lane = threadIdx.x;
        for (uint32_t i = 0; i < R; ++i) {
            double t = 0.0;
            for (uint32_t k = lane; k < i; k += 32) t += s.G[i * LD + k] * s.x[k];
            for (uint32_t off = 16; off > 0; off >>= 1) t += __shfl_xor_sync(TF_FULL_MASK, t, off);
            if (lane == 0) s.x[i] = (s.G[R * LD + i] - t) / s.G[i * LD + i];
            __syncwarp();
        }
        for (uint32_t i = R; i-- > 0;) {
            double t = 0.0;
            for (uint32_t k = i + 1 + lane; k < R; k += 32) t += s.G[k * LD + i] * s.x[k];
            for (uint32_t off = 16; off > 0; off >>= 1) t += __shfl_xor_sync(TF_FULL_MASK, t, off);
            if (lane == 0) s.x[i] = (s.x[i] - t) / s.G[i * LD + i];
            __syncwarp();
        }
    }
    __syncthreads();
    if (!bad)
        for (uint32_t r = threadIdx.x; r < R; r += T) a.out[(uint64_t)row * R + r] = s.x[r];
    if (a.want_sse) {
        double e2 = 0.0;
        if (!bad)
            for (uint64_t j = k0 + threadIdx.x; j < k1; j += T) {
                double m = 0.0;
                for (uint32_t r = 0; r < R; ++r) m += s.x[r] * h_of<ORDER>(a, j, r);
                const double e = __ldg(a.vals + j) - m;
                e2 += e * e;
            }
        const double t = block_sum(s, e2);
        if (threadIdx.x == 0) a.row_sse[row] = t;
    }
    if (threadIdx.x == 0) a.bad[row] = bad;
}

/* A block per short row: its whole system, then its solve. */
template <int ORDER>
__global__ void tfc_short_kernel(tfc_solve a, uint32_t P)
{
    const tfc_smem s = smem_of(a.R);
    start_system(s, a.R, P);
    const uint32_t row = a.short_rows[blockIdx.x];
    const uint64_t k0 = a.ptr[row], k1 = a.ptr[row + 1];
    accumulate<ORDER>(a, s, P, k0, k1);
    finish_row<ORDER>(a, s, P, row, k0, k1);
}

/* A block per segment of a long row: its part of the system into partial. */
template <int ORDER>
__global__ void tfc_segment_kernel(tfc_solve a, uint32_t P)
{
    const tfc_smem s = smem_of(a.R);
    start_system(s, a.R, P);
    const uint64_t q = blockIdx.x;
    accumulate<ORDER>(a, s, P, a.seg_k0[q], a.seg_k1[q]);
    const uint32_t LD = a.R + 1;
    for (uint32_t p = threadIdx.x; p < P; p += blockDim.x)
        a.partial[q * P + p] = s.G[(s.pairs[p] >> 16) * LD + (s.pairs[p] & 0xffffu)];
}

/* A block per long row: its segments' parts added in order, then its solve. */
template <int ORDER>
__global__ void tfc_long_kernel(tfc_solve a, uint32_t P)
{
    const tfc_smem s = smem_of(a.R);
    fill_pairs(s, P);
    __syncthreads();
    const uint32_t row = a.long_rows[blockIdx.x], LD = a.R + 1;
    const uint64_t q0 = a.row_seg[blockIdx.x], q1 = a.row_seg[blockIdx.x + 1];
    for (uint32_t p = threadIdx.x; p < P; p += blockDim.x) {
        double g = 0.0;
        for (uint64_t q = q0; q < q1; ++q) g += a.partial[q * P + p];
        s.G[(s.pairs[p] >> 16) * LD + (s.pairs[p] & 0xffffu)] = g;
    }
    __syncthreads();
    finish_row<ORDER>(a, s, P, row, a.ptr[row], a.ptr[row + 1]);
}

template <class K> tf_status launch(K kernel, uint64_t blocks, uint32_t R, const tf_gpu_dev *dev, const tfc_solve &a,
                                    const char *name)
{
    if (!blocks) return TF_OK;
    const size_t smem = (size_t)tfc_smem_bytes(R);
    TF_CU(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    kernel<<<(unsigned)blocks, tfc_threads(R), smem, dev->stream>>>(a, (uint32_t)tfc_pairs(R));
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? TF_OK : tf_gpu_fail(__FILE__, __LINE__, name, e);
}

} // namespace

uint32_t tfc_threads(uint32_t R)
{
    return R <= 8 ? 64 : R <= 24 ? 128 : 256;
}

uint64_t tfc_pairs(uint32_t R)
{
    const uint64_t LD = (uint64_t)R + 1;
    return LD * (LD + 1) / 2 - 1;
}

uint64_t tfc_smem_bytes(uint32_t R)
{
    const uint64_t LD = (uint64_t)R + 1;
    return (LD * LD + TFC_BATCH * LD + 2 * LD + tfc_threads(R)) * sizeof(double) + tfc_pairs(R) * sizeof(uint32_t);
}

tf_status tfc_solve_rows(const tf_gpu_dev *dev, const tfc_solve &a)
{
    return tf_with_order(a.order, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        TF_TRY(launch(tfc_short_kernel<ORDER>, a.nshort, a.R, dev, a, "tfc_short_kernel"));
        if (!a.nlong) return TF_OK;
        TF_TRY(launch(tfc_segment_kernel<ORDER>, a.nseg, a.R, dev, a, "tfc_segment_kernel"));
        return launch(tfc_long_kernel<ORDER>, a.nlong, a.R, dev, a, "tfc_long_kernel");
    });
}
