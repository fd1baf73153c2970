/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's kernels on one GPU (gcp.cuh), in double precision.
 *
 * A pass gives each sample a group of C lanes (C = min(32, the power of
 * two >= R); 32 / C groups a warp), lane c holding columns c, c + C, ...
 * of the rank. Per sample the group draws it (the gradient's pass: every
 * lane the same draw, cpu/gcp_draw.h's formulas and the device hash set)
 * or reads it (the fixed sample), forms the model value m = sum_r prod_n
 * A_n(i_n, r) (a shuffle reduction over the group), then either adds w
 * f(x, m) to the lane's loss sum or, with y = w df/dm(x, m), adds y prod_{k
 * != n} A_k(i_k, r) to row i_n of every mode's gradient G_n: one pass, all
 * modes. Rows of short modes (those that fit the block's shared memory,
 * shortest first: uber-apr14's 24 hours and 30 days at rank 16; the
 * backend chooses, tf_tuning.gcp_smem) are summed in shared memory per
 * block and added to G once at the end; longer modes' go
 * straight to G by atomics (their rows spread the contention). Every warp
 * runs the same number of rounds (its groups' samples, `on` or not), so
 * the shuffles see the whole warp. The loss pass's sums: per warp by
 * shuffles, per block in warp order, then the blocks' in block order: the
 * same bits every time. */
#include <math.h>

#include "gpu/gcp/gcp.cuh"
#include "gpu/runtime/check.cuh"
#include "gpu/runtime/warp.cuh"

extern "C" {
#include "cpu/gcp_draw.h"
#include "cpu/gcp_loss.h"
}

#define GCP_WARPS (TF_GCP_THREADS / 32)

namespace {

/* 1 if the coordinate idx is one of the non-zeros (the set's probe). */
template <uint32_t NMAX>
__device__ __forceinline__ bool has_nonzero(const tf_gcp_gpu_args &a, uint32_t N, const uint32_t *idx)
{
    uint64_t key = 1;
#pragma unroll
    for (uint32_t n = 0; n < NMAX; ++n)
        if (n < N) key += (uint64_t)idx[n] * a.place[n];
    uint64_t p = tf_gcp_slot_start(key, a.mask);
    for (;;) {
        const unsigned long long s = __ldg(a.slot + p);
        if (!s) return false;
        if (s == key) return true;
        p = (p + 1) & a.mask;
    }
}

/* Sample j of the draw (seed, stream): its coordinates and value. */
template <uint32_t NMAX>
__device__ __forceinline__ void draw_entry(const tf_gcp_gpu_args &a, uint32_t N, const uint64_t *dims, uint64_t j,
                                           uint32_t *idx, double *x)
{
    if (j < a.nz) {
        const uint64_t k = a.all ? j : tf_gcp_draw_nz(a.seed, a.stream, j, a.nnz);
#pragma unroll
        for (uint32_t n = 0; n < NMAX; ++n)
            if (n < N) idx[n] = __ldg(a.xind[n] + k);
        *x = __ldg(a.xvals + k);
        return;
    }
    uint64_t st = tf_gcp_draw_zero_state(a.seed, a.stream, j - a.nz);
    do {
        tf_gcp_draw_coord(&st, N, dims, idx);
    } while (a.nnz && !a.semi && has_nonzero<NMAX>(a, N, idx));
    *x = 0.0;
}

template <int ORDER>
__global__ void __launch_bounds__(TF_GCP_THREADS) gcp_draw_kernel(const tf_gcp_gpu_args a, tf_gcp_gpu_args out)
{
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    const uint32_t N = ORDER > 0 ? (uint32_t)ORDER : a.N;
    uint64_t dims[NMAX];
#pragma unroll
    for (uint32_t n = 0; n < NMAX; ++n) dims[n] = n < N ? a.dims[n] : 1;
    for (uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; j < a.n; j += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t idx[NMAX];
        double x = 0.0;
        draw_entry<NMAX>(a, N, dims, j, idx, &x);
#pragma unroll
        for (uint32_t n = 0; n < NMAX; ++n)
            if (n < N) ((uint32_t *)out.sind[n])[j] = idx[n];
        ((double *)out.svals)[j] = x;
    }
}

__global__ void gcp_set_kernel(const tf_gcp_gpu_args a, unsigned long long *slot)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a.nnz; k += (uint64_t)gridDim.x * blockDim.x) {
        unsigned long long key = 1;
        for (uint32_t n = 0; n < a.N; ++n) key += (uint64_t)a.xind[n][k] * a.place[n];
        uint64_t p = tf_gcp_slot_start(key, a.mask);
        for (;;) {
            const unsigned long long prev = atomicCAS(slot + p, 0ULL, key);
            if (prev == 0ULL || prev == key) break;
            p = (p + 1) & a.mask;
        }
    }
}

/* The pass (the header's comment). GRAD: the gradient of the drawn
 * sample; else the loss of the given one. */
template <int ORDER, bool GRAD>
__global__ void __launch_bounds__(TF_GCP_THREADS) gcp_pass_kernel(const tf_gcp_gpu_args a)
{
    extern __shared__ double priv[];
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    const uint32_t N = ORDER > 0 ? (uint32_t)ORDER : a.N;
    const uint32_t C = a.C, R = a.R, lane = threadIdx.x & 31, c = lane % C, G = 32 / C;
    uint64_t dims[NMAX];
#pragma unroll
    for (uint32_t n = 0; n < NMAX; ++n) dims[n] = n < N ? a.dims[n] : 1;
    if (GRAD) {
        for (uint32_t e = threadIdx.x; e < a.priv_total; e += TF_GCP_THREADS) priv[e] = 0.0;
        __syncthreads();
    }
    const uint64_t warp = ((uint64_t)blockIdx.x * TF_GCP_THREADS + threadIdx.x) / 32;
    const uint64_t step = (uint64_t)gridDim.x * GCP_WARPS * G;
    double fsum = 0.0;
    for (uint64_t base = a.j0 + warp * G; base < a.n; base += step) {
        const uint64_t j = base + lane / C;
        const bool on = j < a.n;
        uint32_t idx[NMAX];
        double x = 0.0;
#pragma unroll
        for (uint32_t n = 0; n < NMAX; ++n) idx[n] = 0;
        if (on) {
            if (GRAD) {
                draw_entry<NMAX>(a, N, dims, j, idx, &x);
            } else {
#pragma unroll
                for (uint32_t n = 0; n < NMAX; ++n)
                    if (n < N) idx[n] = __ldg(a.sind[n] + j);
                x = __ldg(a.svals + j);
            }
        }
        double m = 0.0;
        if (on)
            for (uint32_t r = c; r < R; r += C) {
                double p = 1.0;
#pragma unroll
                for (uint32_t n = 0; n < NMAX; ++n)
                    if (n < N) p *= __ldg(a.A[n] + (uint64_t)idx[n] * R + r);
                m += p;
            }
        for (uint32_t off = C / 2; off > 0; off >>= 1) m += __shfl_xor_sync(TF_FULL_MASK, m, off, C);
        const double w = j < a.nz ? a.w_nz : a.w_z;
        if (!GRAD) {
            if (on && c == 0) fsum += w * tf_gcp_f(a.loss, x, m);
            continue;
        }
        if (!on) continue;
        const bool semi_nz = a.semi && j < a.nz; /* semi-stratified: df(x, m) - df(0, m) */
        const double y = w * (tf_gcp_df(a.loss, x, m) - (semi_nz ? tf_gcp_df(a.loss, 0.0, m) : 0.0));
        for (uint32_t r = c; r < R; r += C) {
            double v[NMAX], suf[NMAX];
#pragma unroll
            for (uint32_t n = 0; n < NMAX; ++n) v[n] = n < N ? __ldg(a.A[n] + (uint64_t)idx[n] * R + r) : 1.0;
            /* suf[n] = prod_{k > n} v[k]; mode n gets y prod_{k < n} v[k] suf[n] */
            suf[NMAX - 1] = 1.0;
#pragma unroll
            for (uint32_t n = NMAX - 1; n > 0; --n) suf[n - 1] = suf[n] * v[n];
            double pre = y;
#pragma unroll
            for (uint32_t n = 0; n < NMAX; ++n) {
                if (n >= N) continue;
                const double add = pre * suf[n];
                const uint64_t at = (uint64_t)idx[n] * R + r;
                if (a.priv_off[n] != TF_GCP_NOPRIV)
                    atomicAdd(priv + a.priv_off[n] + at, add);
                else
                    atomicAdd(a.G[n] + at, add);
                pre *= v[n];
            }
        }
    }
    if (GRAD) { /* the block's short-mode rows into G */
        __syncthreads();
        for (uint32_t n = 0; n < N; ++n) {
            if (a.priv_off[n] == TF_GCP_NOPRIV) continue;
            const uint64_t len = dims[n] * R;
            for (uint64_t e = threadIdx.x; e < len; e += TF_GCP_THREADS) {
                const double s = priv[a.priv_off[n] + e];
                if (s != 0.0) atomicAdd(a.G[n] + e, s);
            }
        }
    } else { /* the loss: the warp's, then the block's in warp order */
        for (uint32_t off = 16; off > 0; off >>= 1) fsum += __shfl_xor_sync(TF_FULL_MASK, fsum, off);
        __shared__ double wsum[GCP_WARPS];
        if (lane == 0) wsum[threadIdx.x / 32] = fsum;
        __syncthreads();
        if (threadIdx.x == 0) {
            double s = 0.0;
            for (int w = 0; w < GCP_WARPS; ++w) s += wsum[w];
            a.part[blockIdx.x] = s;
        }
    }
}

/* *sum = part[0] + ... + part[n - 1] (one block: strided sums, then a fixed tree). */
__global__ void __launch_bounds__(TF_GCP_THREADS) gcp_sum_kernel(const double *part, unsigned n, double *sum)
{
    __shared__ double s[TF_GCP_THREADS];
    double v = 0.0;
    for (unsigned i = threadIdx.x; i < n; i += TF_GCP_THREADS) v += part[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (unsigned half = TF_GCP_THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *sum = s[0];
}

__global__ void gcp_adam_kernel(double *u, double *m, double *v, const double *g, uint64_t P, double step,
                                double beta1, double beta2, double eps, double lower)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < P; e += (uint64_t)gridDim.x * blockDim.x) {
        const double ge = g[e];
        const double me = beta1 * m[e] + (1.0 - beta1) * ge;
        const double ve = beta2 * v[e] + (1.0 - beta2) * ge * ge;
        const double ue = u[e] - step * me / sqrt(ve + eps);
        m[e] = me;
        v[e] = ve;
        u[e] = ue < lower ? lower : ue;
    }
}

/* g += k u: completion's l2 term (k = 2 l2) */
__global__ void gcp_axpy_kernel(double *g, const double *u, uint64_t P, double k)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < P; e += (uint64_t)gridDim.x * blockDim.x)
        g[e] += k * u[e];
}

unsigned grid_for(uint64_t n)
{
    const uint64_t b = (n + TF_GCP_THREADS - 1) / TF_GCP_THREADS;
    return (unsigned)(b < 65535 ? (b ? b : 1) : 65535);
}

} // namespace

tf_status tf_gcp_gpu_build_set(const tf_gcp_gpu_args &a, unsigned long long *slot, cudaStream_t s)
{
    if (!a.nnz) return TF_OK;
    gcp_set_kernel<<<grid_for(a.nnz), TF_GCP_THREADS, 0, s>>>(a, slot);
    TF_CU_LAUNCH("gcp_set_kernel");
    return TF_OK;
}

tf_status tf_gcp_gpu_draw(const tf_gcp_gpu_args &a, uint32_t *const *ind, double *vals, cudaStream_t s)
{
    if (!a.n) return TF_OK;
    tf_gcp_gpu_args out = a;
    for (uint32_t n = 0; n < a.N; ++n) out.sind[n] = ind[n];
    out.svals = vals;
    return tf_with_order(a.N, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        gcp_draw_kernel<ORDER><<<grid_for(a.n), TF_GCP_THREADS, 0, s>>>(a, out);
        TF_CU_LAUNCH("gcp_draw_kernel");
        return TF_OK;
    });
}

tf_status tf_gcp_gpu_blocks(const tf_gcp_gpu_args &a, bool grad, int sm, unsigned *blocks)
{
    const uint64_t count = a.n > a.j0 ? a.n - a.j0 : 0; /* the pass's entries [j0, n) */
    const uint64_t groups = (count + (32 / a.C) - 1) / (32 / a.C); /* samples a round of a warp holds: 32 / C */
    const uint64_t need = (groups + GCP_WARPS - 1) / GCP_WARPS;
    if (!grad) { /* the loss pass: a few samples per warp, at most 4096 block sums */
        *blocks = (unsigned)(need < 4096 ? (need ? need : 1) : 4096);
        return TF_OK;
    }
    const size_t smem = (size_t)a.priv_total * sizeof(double);
    int per_sm = 1;
    TF_TRY(tf_with_order(a.N, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        if (smem > (48u << 10)) /* above the default: the kernel's opt-in */
            TF_CU(cudaFuncSetAttribute(gcp_pass_kernel<ORDER, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)smem));
        TF_CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gcp_pass_kernel<ORDER, true>, TF_GCP_THREADS,
                                                            smem));
        return TF_OK;
    }));
    const uint64_t most = (uint64_t)(sm > 0 ? sm : 1) * (uint64_t)(per_sm > 0 ? per_sm : 1);
    *blocks = (unsigned)(need < most ? (need ? need : 1) : most);
    return TF_OK;
}

tf_status tf_gcp_gpu_loss(const tf_gcp_gpu_args &a, unsigned blocks, double *sum, cudaStream_t s)
{
    if (a.n <= a.j0) {
        TF_CU(cudaMemsetAsync(sum, 0, sizeof(double), s));
        return TF_OK;
    }
    TF_TRY(tf_with_order(a.N, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        gcp_pass_kernel<ORDER, false><<<blocks, TF_GCP_THREADS, 0, s>>>(a);
        TF_CU_LAUNCH("gcp_pass_kernel (loss)");
        return TF_OK;
    }));
    gcp_sum_kernel<<<1, TF_GCP_THREADS, 0, s>>>(a.part, blocks, sum);
    TF_CU_LAUNCH("gcp_sum_kernel");
    return TF_OK;
}

tf_status tf_gcp_gpu_gradient(const tf_gcp_gpu_args &a, unsigned blocks, cudaStream_t s)
{
    uint64_t gsize = 0;
    for (uint32_t n = 0; n < a.N; ++n) gsize += a.dims[n] * a.R;
    TF_CU(cudaMemsetAsync(a.G[0], 0, gsize * sizeof(double), s)); /* the modes' gradients are one block */
    if (a.n <= a.j0) return TF_OK;
    const size_t smem = (size_t)a.priv_total * sizeof(double);
    return tf_with_order(a.N, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        gcp_pass_kernel<ORDER, true><<<blocks, TF_GCP_THREADS, smem, s>>>(a);
        TF_CU_LAUNCH("gcp_pass_kernel (gradient)");
        return TF_OK;
    });
}

tf_status tf_gcp_gpu_adam(double *u, double *m, double *v, const double *g, uint64_t P, double step, double beta1,
                          double beta2, double eps, double lower, cudaStream_t s)
{
    if (!P) return TF_OK;
    gcp_adam_kernel<<<grid_for(P), TF_GCP_THREADS, 0, s>>>(u, m, v, g, P, step, beta1, beta2, eps, lower);
    TF_CU_LAUNCH("gcp_adam_kernel");
    return TF_OK;
}

tf_status tf_gcp_gpu_add_scaled(double *g, const double *u, uint64_t P, double k, cudaStream_t s)
{
    if (!P) return TF_OK;
    gcp_axpy_kernel<<<grid_for(P), TF_GCP_THREADS, 0, s>>>(g, u, P, k);
    TF_CU_LAUNCH("gcp_axpy_kernel");
    return TF_OK;
}
