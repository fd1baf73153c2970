/* SPDX-License-Identifier: BSD-3-Clause */
/* COO MTTKRP with atomics: the baseline every paper compares with.
 * Each warp loads 32 non-zeros at once (coalesced, one per lane), then its
 * lane groups take them in turn (shuffles), lanes over the columns; every
 * product goes straight to the output with atomicAdd. */
#include <stdio.h>

#include <algorithm>
#include <new>

#include "gpu/engine/engine.cuh"
#include "gpu/runtime/warp.cuh"

namespace {

template <typename T>
struct coo_args {
    const uint32_t *ind[TF_GPU_MAX_ORDER];
    const T *vals;
    tf_factor_ptrs<T> fac;
    T *out;
    uint64_t nnz;
    uint32_t order, mode, R;
};

template <typename T, int ORDER>
__global__ void __launch_bounds__(TF_BLOCK_THREADS, 3) coo_mttkrp_kernel(const coo_args<T> a)
{
    constexpr int MO = ORDER ? ORDER : TF_GPU_MAX_ORDER;
    constexpr int U = ORDER ? TF_UNROLL : TF_UNROLL / 2; /* fewer registers for up to 8 modes */
    const int order = ORDER ? ORDER : (int)a.order;
    const uint32_t lane = threadIdx.x & 31;
    const tf_lanes L = tf_lanes_for(a.R);
    const uint64_t warp = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const uint64_t nwarps = ((uint64_t)gridDim.x * blockDim.x) >> 5;
    for (uint64_t base = warp * 32; base < a.nnz; base += nwarps * 32) {
        const uint64_t k = base + lane;
        const bool valid = k < a.nnz;
        uint32_t idx[MO];
#pragma unroll
        for (int m = 0; m < MO; ++m) idx[m] = (valid && m < order && m != (int)a.mode) ? a.ind[m][k] : 0u;
        const T v = valid ? a.vals[k] : T(0);
        /* the output row, apart (selecting idx[mode] would index registers) */
        const uint32_t my_row = valid ? a.ind[a.mode][k] : 0u;
        const uint32_t cnt = (uint32_t)min((uint64_t)32, a.nnz - base);
        /* U steps of G non-zeros at once: all their loads before any atomic. */
        for (uint32_t s = 0; s < cnt; s += L.G * U) {
            T x[U];
            uint32_t j[U][MO], row[U];
            bool ok[U];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const uint32_t src = s + u * L.G + L.g;
                ok[u] = src < cnt;
                x[u] = __shfl_sync(TF_FULL_MASK, v, src & 31);
                row[u] = __shfl_sync(TF_FULL_MASK, my_row, src & 31);
#pragma unroll
                for (int m = 0; m < MO; ++m) j[u][m] = __shfl_sync(TF_FULL_MASK, idx[m], src & 31);
            }
            for (uint32_t col = L.c; col < a.R; col += L.C) {
                T p[U];
#pragma unroll
                for (int u = 0; u < U; ++u) {
                    p[u] = x[u];
#pragma unroll
                    for (int m = 0; m < MO; ++m)
                        if (ok[u] && m < order && m != (int)a.mode)
                            p[u] *= tf_ldg(a.fac.f[m] + (size_t)j[u][m] * a.R + col);
                }
#pragma unroll
                for (int u = 0; u < U; ++u)
                    if (ok[u]) atomicAdd(a.out + (size_t)row[u] * a.R + col, p[u]);
            }
        }
    }
}

template <typename T>
struct coo_engine : tf_gpu_engine {
    uint32_t order = 0;
    uint64_t nnz = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    T *vals = nullptr;

    ~coo_engine() override
    {
        for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) tf_gpu_free(ind[m]);
        tf_gpu_free(vals);
    }

    tf_status mttkrp(uint32_t mode, const void *const *fac, void *out, uint32_t R) override
    {
        TF_CU(cudaMemsetAsync(out, 0, dims[mode] * R * sizeof(T), ctx->stream));
        if (nnz == 0) return TF_OK;
        coo_args<T> a;
        for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) {
            a.ind[m] = m < order ? ind[m] : nullptr;
            a.fac.f[m] = m < order ? (const T *)fac[m] : nullptr;
        }
        a.vals = vals;
        a.out = (T *)out;
        a.nnz = nnz;
        a.order = order;
        a.mode = mode;
        a.R = R;
        const uint64_t warps = (nnz + 31) / 32;
        const uint64_t want = (warps + TF_BLOCK_WARPS - 1) / TF_BLOCK_WARPS;
        const unsigned grid = (unsigned)std::min<uint64_t>(want, (uint64_t)ctx->sm_count * 64);
        cudaStream_t st = ctx->stream;
        return tf_with_order(order, [&](auto ord) -> tf_status {
            coo_mttkrp_kernel<T, decltype(ord)::value><<<grid, TF_BLOCK_THREADS, 0, st>>>(a);
            TF_CU_LAUNCH("coo_mttkrp_kernel");
            return TF_OK;
        });
    }

    uint64_t tensor_bytes(uint32_t) const override
    {
        return nnz * (order * sizeof(uint32_t) + sizeof(T));
    }
};

template <typename T>
tf_status create(tf_gpu_dev *ctx, const tf_tensor *X, tf_gpu_engine **out)
{
    coo_engine<T> *e = new (std::nothrow) coo_engine<T>();
    if (!e) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU COO engine");
    e->ctx = ctx;
    e->format = TF_FORMAT_COO;
    e->order = X->order;
    e->nnz = X->nnz;
    for (uint32_t m = 0; m < X->order; ++m) e->dims[m] = X->dims[m];
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m)
        s = tf_gpu_upload_staged(ctx, &e->ind[m], X->ind[m], X->nnz, "COO indices", ctx->stream);
    if (s == TF_OK) s = tf_gpu_alloc(&e->vals, X->nnz, "COO values");
    if (s == TF_OK) s = tf_gpu_h2d_values(ctx, e->vals, X->vals, X->nnz, ctx->stream);
    if (s != TF_OK) {
        delete e;
        return s;
    }
    e->bytes = e->tensor_bytes(0);
    snprintf(e->desc, sizeof e->desc, "coo");
    *out = e;
    return TF_OK;
}

} // namespace

tf_status tf_gpu_coo_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec,
                            tf_gpu_engine **out)
{
    *out = nullptr;
    return prec == TF_SINGLE ? create<float>(ctx, X, out) : create<double>(ctx, X, out);
}
