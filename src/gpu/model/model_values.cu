/* SPDX-License-Identifier: BSD-3-Clause */
/* The model of a Kruskal tensor at the non-zeros of a sparse tensor on the
 * GPU: m_j = sum_r lambda_r prod_n A_n(i_jn, r) for every non-zero j
 * (seams/model_backends.h). One kernel, templated over the value type
 * and the order (3 and 4 unrolled, any other up to TF_MAX_ORDER through
 * loops bounded by it). A warp is G groups of C lanes (C = min(32, the
 * power of two >= R)); a group takes one non-zero, each of its lanes the
 * columns r = c, c + C, ... of the rank, multiplying lambda_r and the
 * factor rows of the non-zero's indices; a shuffle reduction over the C
 * lanes sums the columns and the group's first lane writes m_j. Factors
 * and lambda are uploaded once, in the run's precision; the non-zeros'
 * indices go up in pieces that the device's memory budget holds, each
 * piece's values coming down before the next goes up. */
#include <algorithm>
#include <vector>

#include "seams/cuda_module.h"
#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/warp.cuh"

#define TF_MODEL_THREADS 256

namespace {

/* Kernel parameters: per mode the piece's indices and the factor. */
template <typename T>
struct model_args {
    const uint32_t *ind[TF_MAX_ORDER];
    const T *A[TF_MAX_ORDER];
    const T *lambda;
};

/* ORDER > 0: the order, known at compile time; 0: `order` at run time. */
template <typename T, int ORDER>
__global__ void __launch_bounds__(TF_MODEL_THREADS)
    model_values_kernel(model_args<T> a, uint64_t nnz, uint32_t order, uint32_t R, uint32_t C, T *__restrict__ out)
{
    const uint32_t N = ORDER > 0 ? (uint32_t)ORDER : order;
    const uint32_t G = 32 / C, lane = threadIdx.x & 31, g = lane / C, c = lane % C;
    const uint64_t warp = ((uint64_t)blockIdx.x * TF_MODEL_THREADS + threadIdx.x) / 32;
    const uint64_t warps = (uint64_t)gridDim.x * (TF_MODEL_THREADS / 32);
    /* the whole warp loops together, so every lane takes part in the shuffles */
    for (uint64_t base = warp * G; base < nnz; base += warps * G) {
        const uint64_t j = base + g;
        T acc = 0;
        if (j < nnz) {
            const T *row[ORDER > 0 ? ORDER : TF_MAX_ORDER];
#pragma unroll
            for (uint32_t n = 0; n < (ORDER > 0 ? (uint32_t)ORDER : TF_MAX_ORDER); ++n)
                if (ORDER > 0 || n < N) row[n] = a.A[n] + (uint64_t)__ldg(a.ind[n] + j) * R;
            for (uint32_t r = c; r < R; r += C) {
                T p = __ldg(a.lambda + r);
#pragma unroll
                for (uint32_t n = 0; n < (ORDER > 0 ? (uint32_t)ORDER : TF_MAX_ORDER); ++n)
                    if (ORDER > 0 || n < N) p *= __ldg(row[n] + r);
                acc += p;
            }
        }
        for (uint32_t off = C / 2; off > 0; off >>= 1) acc += __shfl_xor_sync(TF_FULL_MASK, acc, off, C);
        if (j < nnz && c == 0) out[j] = acc;
    }
}

/* Device memory of one run: factors, lambda, and one piece of `piece`
 * non-zeros (indices per mode, values). */
template <typename T>
struct model_dev {
    tf_dev_array<T> A[TF_MAX_ORDER], lambda, out;
    tf_dev_array<uint32_t> ind[TF_MAX_ORDER];
};

/* Non-zeros per piece: all of them when the budget holds them, else what it
 * holds beside the factors. */
static tf_status piece_nnz(tf_gpu_dev &ctx, const tf_tensor *X, uint64_t factor_bytes, size_t value_bytes,
                           uint64_t *piece)
{
    const uint64_t per_nnz = X->order * sizeof(uint32_t) + value_bytes;
    uint64_t budget = 0;
    TF_TRY(tf_gpu_budget(&ctx, &budget));
    const uint64_t fits = budget > factor_bytes ? (budget - factor_bytes) / per_nnz : 0;
    const uint64_t least = std::min<uint64_t>(X->nnz, 1u << 16);
    if (fits < least)
        return tf_fail(TF_ERR_NOMEM,
                       "GPU model values: the factors (%llu bytes) and %llu non-zeros (%llu bytes each) do not fit "
                       "the %llu bytes the GPU has for them",
                       (unsigned long long)factor_bytes, (unsigned long long)least, (unsigned long long)per_nnz,
                       (unsigned long long)budget);
    *piece = std::min<uint64_t>(X->nnz, fits);
    return TF_OK;
}

template <typename T>
tf_status run(tf_gpu_dev &ctx, const tf_tensor *X, const tf_ktensor *K, double *out)
{
    const uint32_t N = X->order, R = (uint32_t)K->rank;
    const cudaStream_t st = ctx.stream;
    model_dev<T> d;
    model_args<T> a = {};
    uint64_t factor_bytes = R * sizeof(T);
    for (uint32_t n = 0; n < N; ++n) factor_bytes += K->factors[n].rows * (uint64_t)R * sizeof(T);
    uint64_t piece = 0;
    TF_TRY(piece_nnz(ctx, X, factor_bytes, sizeof(T), &piece));
    for (uint32_t n = 0; n < N; ++n) {
        const uint64_t len = K->factors[n].rows * (uint64_t)R;
        TF_TRY(d.A[n].alloc(len, "model values factor"));
        TF_TRY(tf_gpu_h2d_values(&ctx, d.A[n].p, K->factors[n].data, len, st));
        TF_TRY(d.ind[n].alloc(piece, "model values indices"));
        a.A[n] = d.A[n].p;
        a.ind[n] = d.ind[n].p;
    }
    TF_TRY(d.lambda.alloc(R, "model values weights"));
    if (K->lambda) {
        TF_TRY(tf_gpu_h2d_values(&ctx, d.lambda.p, K->lambda, R, st));
    } else {
        std::vector<double> ones(R, 1.0);
        TF_TRY(tf_gpu_put_values<T>(d.lambda.p, ones.data(), R, st));
    }
    a.lambda = d.lambda.p;
    TF_TRY(d.out.alloc(piece, "model values"));
    const uint32_t C = R >= 32 ? 32 : tf_pow2_ceil(R), G = 32 / C;
    const uint64_t groups_per_block = (TF_MODEL_THREADS / 32) * G;
    const uint64_t blocks = std::min<uint64_t>((piece + groups_per_block - 1) / groups_per_block,
                                               (uint64_t)ctx.sm_count * 32);
    for (uint64_t k0 = 0; k0 < X->nnz; k0 += piece) {
        const uint64_t len = std::min<uint64_t>(piece, X->nnz - k0);
        for (uint32_t n = 0; n < N; ++n)
            TF_TRY(tf_gpu_h2d_staged(&ctx, d.ind[n].p, X->ind[n] + k0, len * sizeof(uint32_t), st));
        TF_TRY(tf_with_order(N, [&](auto ord) -> tf_status {
            constexpr int ORDER = decltype(ord)::value;
            model_values_kernel<T, ORDER><<<(unsigned)blocks, TF_MODEL_THREADS, 0, st>>>(a, len, N, R, C, d.out.p);
            TF_CU_LAUNCH("model_values_kernel");
            return TF_OK;
        }));
        TF_TRY(tf_gpu_get_values<T>(out + k0, d.out.p, len, st));
    }
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_model_values_impl(const tf_tensor *X, const tf_ktensor *K, const tf_model_opts *o,
                                               double *out)
{
    if (K->rank > UINT32_MAX)
        return tf_fail(TF_ERR_ARG, "GPU model values: rank %llu is above 2^32 - 1", (unsigned long long)K->rank);
    tf_gpu_dev *c = nullptr; /* the context's GPU (borrowed) */
    TF_TRY(tf_gpu_dev_of(o->context, &c));
    if (o->precision == TF_SINGLE) return run<float>(*c, X, K, out);
    return run<double>(*c, X, K, out);
}
