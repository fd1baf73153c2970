/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion's sums on the GPU (complete.cuh): the model's squared errors
 * over a set of entries, the factors' squared norms, and a mode's row
 * errors with its first singular row. Each is a fixed grid (at most
 * TFC_RED_BLOCKS blocks, set by the count alone): a sum per thread over a
 * grid stride, a fixed tree per block, then one block adds the blocks'
 * sums in order -- the same bits on every run. */
#include <algorithm>

#include "gpu/complete/complete.cuh"
#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/warp.cuh"

#define TFC_RED_THREADS 256u

namespace {

struct set_args {
    const double *A[TF_GPU_MAX_ORDER];
    const uint32_t *ind[TF_GPU_MAX_ORDER];
    const double *vals;
    uint64_t nnz;
    uint32_t order, R;
};

/* The block's sum of v (every thread gets it), in a fixed tree. */
__device__ double tree_sum(double v)
{
    __shared__ double sh[TFC_RED_THREADS];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (uint32_t h = TFC_RED_THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    return sh[0];
}

template <int ORDER>
__global__ void __launch_bounds__(TFC_RED_THREADS) tfc_set_sse_kernel(set_args a, double *part)
{
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    double s = 0.0;
    for (uint64_t j = (uint64_t)blockIdx.x * TFC_RED_THREADS + threadIdx.x; j < a.nnz;
         j += (uint64_t)gridDim.x * TFC_RED_THREADS) {
        const double *f[NMAX];
#pragma unroll
        for (uint32_t n = 0; n < NMAX; ++n)
            if (ORDER > 0 || n < a.order) f[n] = a.A[n] + (uint64_t)__ldg(a.ind[n] + j) * a.R;
        double m = 0.0;
        for (uint32_t r = 0; r < a.R; ++r) {
            double p = __ldg(f[0] + r);
#pragma unroll
            for (uint32_t n = 1; n < NMAX; ++n)
                if (ORDER > 0 || n < a.order) p *= __ldg(f[n] + r);
            m += p;
        }
        const double e = __ldg(a.vals + j) - m;
        s += e * e;
    }
    const double t = tree_sum(s);
    if (threadIdx.x == 0) part[blockIdx.x] = t;
}

__global__ void __launch_bounds__(TFC_RED_THREADS) tfc_sumsq_kernel(const double *x, uint64_t n, double *part)
{
    double s = 0.0;
    for (uint64_t e = (uint64_t)blockIdx.x * TFC_RED_THREADS + threadIdx.x; e < n; e += (uint64_t)gridDim.x * TFC_RED_THREADS)
        s += x[e] * x[e];
    const double t = tree_sum(s);
    if (threadIdx.x == 0) part[blockIdx.x] = t;
}

__global__ void __launch_bounds__(TFC_RED_THREADS)
    tfc_rows_kernel(const double *row_sse, const uint32_t *bad, uint64_t n, double *part, unsigned long long *pmin)
{
    __shared__ unsigned long long mn[TFC_RED_THREADS];
    double s = 0.0;
    unsigned long long first = TFC_NONE;
    for (uint64_t e = (uint64_t)blockIdx.x * TFC_RED_THREADS + threadIdx.x; e < n; e += (uint64_t)gridDim.x * TFC_RED_THREADS) {
        if (row_sse) s += row_sse[e];
        if (bad[e] && e < first) first = e;
    }
    mn[threadIdx.x] = first;
    const double t = tree_sum(s); /* its syncs order mn too */
    for (uint32_t h = TFC_RED_THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h && mn[threadIdx.x + h] < mn[threadIdx.x]) mn[threadIdx.x] = mn[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        part[blockIdx.x] = t;
        if (pmin) pmin[blockIdx.x] = mn[0];
    }
}

/* One block: out = the sum of part[0..n) (thread strides, then the tree);
 * with pmin, *mout = its minimum. */
__global__ void __launch_bounds__(TFC_RED_THREADS)
    tfc_final_kernel(const double *part, const unsigned long long *pmin, uint64_t n, double *out,
                     unsigned long long *mout)
{
    __shared__ unsigned long long mn[TFC_RED_THREADS];
    double s = 0.0;
    unsigned long long first = TFC_NONE;
    for (uint64_t e = threadIdx.x; e < n; e += TFC_RED_THREADS) {
        s += part[e];
        if (pmin && pmin[e] < first) first = pmin[e];
    }
    mn[threadIdx.x] = first;
    const double t = tree_sum(s);
    for (uint32_t h = TFC_RED_THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h && mn[threadIdx.x + h] < mn[threadIdx.x]) mn[threadIdx.x] = mn[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        *out = t;
        if (mout) *mout = mn[0];
    }
}

unsigned blocks_for(uint64_t n)
{
    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n + TFC_RED_THREADS - 1) / TFC_RED_THREADS, TFC_RED_BLOCKS));
}

} // namespace

tf_status tfc_model_sse(const tf_gpu_dev *dev, uint32_t order, uint32_t R, const double *const *A,
                        const uint32_t *const *ind, const double *vals, uint64_t nnz, double *part, double *out)
{
    set_args a = {};
    for (uint32_t n = 0; n < order; ++n) {
        a.A[n] = A[n];
        a.ind[n] = ind[n];
    }
    a.vals = vals;
    a.nnz = nnz;
    a.order = order;
    a.R = R;
    const unsigned blocks = blocks_for(nnz);
    TF_TRY(tf_with_order(order, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        tfc_set_sse_kernel<ORDER><<<blocks, TFC_RED_THREADS, 0, dev->stream>>>(a, part);
        TF_CU_LAUNCH("tfc_set_sse_kernel");
        return TF_OK;
    }));
    tfc_final_kernel<<<1, TFC_RED_THREADS, 0, dev->stream>>>(part, nullptr, blocks, out, nullptr);
    TF_CU_LAUNCH("tfc_final_kernel");
    return TF_OK;
}

tf_status tfc_sumsq(const tf_gpu_dev *dev, const double *x, uint64_t n, double *part, double *out)
{
    const unsigned blocks = blocks_for(n);
    tfc_sumsq_kernel<<<blocks, TFC_RED_THREADS, 0, dev->stream>>>(x, n, part);
    TF_CU_LAUNCH("tfc_sumsq_kernel");
    tfc_final_kernel<<<1, TFC_RED_THREADS, 0, dev->stream>>>(part, nullptr, blocks, out, nullptr);
    TF_CU_LAUNCH("tfc_final_kernel");
    return TF_OK;
}

tf_status tfc_rows_reduce(const tf_gpu_dev *dev, const double *row_sse, const uint32_t *bad, uint64_t n, double *part,
                          unsigned long long *pmin, double *sse_out, unsigned long long *bad_out)
{
    const unsigned blocks = blocks_for(n);
    tfc_rows_kernel<<<blocks, TFC_RED_THREADS, 0, dev->stream>>>(row_sse, bad, n, part, pmin);
    TF_CU_LAUNCH("tfc_rows_kernel");
    tfc_final_kernel<<<1, TFC_RED_THREADS, 0, dev->stream>>>(part, pmin, blocks, sse_out, bad_out);
    TF_CU_LAUNCH("tfc_final_kernel");
    return TF_OK;
}
