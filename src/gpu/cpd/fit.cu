/* SPDX-License-Identifier: BSD-3-Clause */
/* The fit terms of GPU CP-ALS: sc->inner (tf_gpu_weighted_inner) and
 * sc->knorm2 (tf_gpu_quadratic) each in its own launches, and both in one
 * (tf_gpu_fit_terms, the small-rank path); see dense.cuh. */
#include "gpu/cpd/dense_common.cuh"

namespace {

/* sc->inner from the OP_DOT slab partials (one block of kThreads threads,
 * any shape). */
template <typename T>
__device__ void weighted_finish_block(const double *part, uint32_t S, uint32_t R, const T *w,
                                      const gram_ptrs<T> &sc_ptr, uint32_t ns, tf_gpu_scalars *sc)
{
    double acc = 0.0;
    for (uint32_t r = flat_thread(); r < R; r += kThreads)
        acc += scaled_weight((double)w[r], sc_ptr, ns, r) * column_total<OP_DOT>(part, S, R, r);
    const double total = block_sum(acc);
    if (flat_thread() == 0) {
        sc->inner = total;
        if (!isfinite(total)) sc->nonfinite = 1;
    }
}

template <typename T>
__global__ void weighted_finish(const double *part, uint32_t S, uint32_t R, const T *w, gram_ptrs<T> sc_ptr,
                                uint32_t ns, tf_gpu_scalars *sc)
{
    weighted_finish_block<T>(part, S, R, w, sc_ptr, ns, sc);
}

/* sc->knorm2 = x^T V x (one block of kThreads threads, any shape); V(i, j)
 * = v(i * R + j). */
template <typename VF, typename T>
__device__ void quadratic_block(VF v, const T *x, uint32_t R, tf_gpu_scalars *sc)
{
    /* x staged first (small R): read from global memory inside the row
     * loop, each x[j] was one L2 round trip after the other */
    __shared__ double xs[kSmall];
    const bool staged = R <= kSmall;
    if (staged)
        for (uint32_t j = flat_thread(); j < R; j += kThreads) xs[j] = (double)x[j];
    __syncthreads();
    auto xat = [&](uint32_t j) { return staged ? xs[j] : (double)x[j]; };
    double acc = 0.0;
    for (uint32_t i = flat_thread(); i < R; i += kThreads) acc += quadratic_term(v, xat, R, i);
    const double total = block_sum(acc);
    if (flat_thread() == 0) {
        sc->knorm2 = total;
        if (!isfinite(total)) sc->nonfinite = 1;
    }
}

template <typename T>
__global__ void quadratic_kernel(const T *V, const T *x, uint32_t R, tf_gpu_scalars *sc)
{
    quadratic_block([V](uint64_t e) { return V[e]; }, x, R, sc);
}

/* The fit terms in one launch (grid: slabs x column tiles, blocks (32, 8)):
 * the OP_DOT partials of A and B, then, in the last block, sc->inner as
 * weighted_finish and sc->knorm2 = w^T (Hadamard of all n Grams) w as
 * hadamard_kernel + quadratic_kernel would give (fit_finish_block). */
template <typename T>
__global__ void fit_terms_kernel(const T *A, const T *B, uint64_t I, uint32_t R, uint32_t S, double *part,
                                 const T *w, gram_ptrs<T> scales, gram_ptrs<T> G, uint32_t n, unsigned *counter,
                                 tf_gpu_scalars *sc)
{
    __shared__ double V[kSmall * kSmall];
    column_partials_block<T, OP_DOT>(A, B, I, R, S, part);
    if (last_block(counter)) fit_finish_block<T>(part, S, R, w, scales, G, n, V, sc);
}

} // namespace

template <typename T>
tf_status tf_gpu_weighted_inner(const T *A, const T *B, uint64_t I, uint32_t R, const T *w,
                                const T *const *scales, uint32_t ns, double *partial, tf_gpu_scalars *sc,
                                cudaStream_t st)
{
    if (ns > 16) return tf_fail(TF_ERR_ARG, "weighted inner product: at most 16 scale vectors");
    gram_ptrs<T> p;
    for (uint32_t k = 0; k < 16; ++k) p.g[k] = k < ns ? scales[k] : nullptr;
    const uint32_t S = tf_gpu_slabs(I);
    TF_TRY((launch_partials<T, OP_DOT>(A, B, I, R, S, partial, st)));
    weighted_finish<T><<<1, kThreads, 0, st>>>(partial, S, R, w, p, ns, sc);
    TF_CU_LAUNCH("weighted_finish");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_fit_terms(const T *A, const T *B, uint64_t I, uint32_t R, const T *w, const T *const *scales,
                           const T *const *G, uint32_t n, double *partial, unsigned *counter, tf_gpu_scalars *sc,
                           cudaStream_t st)
{
    if (n > 16) return tf_fail(TF_ERR_ARG, "fit terms: at most 16 modes");
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "fit terms: rank %u is outside 1..%d", R, kSmall);
    gram_ptrs<T> p, q;
    for (uint32_t k = 0; k < 16; ++k) {
        p.g[k] = k < n ? scales[k] : nullptr;
        q.g[k] = k < n ? G[k] : nullptr;
    }
    const uint32_t S = tf_gpu_slabs(I);
    fit_terms_kernel<T><<<dim3(S, (R + 31) / 32), dim3(32, 8), 0, st>>>(A, B, I, R, S, partial, w, p, q, n, counter,
                                                                         sc);
    TF_CU_LAUNCH("fit_terms_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_quadratic(const T *V, const T *x, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st)
{
    quadratic_kernel<T><<<1, kThreads, 0, st>>>(V, x, R, sc);
    TF_CU_LAUNCH("quadratic_kernel");
    return TF_OK;
}

#define TF_FIT_INSTANTIATE(T)                                                                           \
    template tf_status tf_gpu_weighted_inner<T>(const T *, const T *, uint64_t, uint32_t, const T *,    \
                                                const T *const *, uint32_t, double *, tf_gpu_scalars *, \
                                                cudaStream_t);                                          \
    template tf_status tf_gpu_quadratic<T>(const T *, const T *, uint32_t, tf_gpu_scalars *,            \
                                           cudaStream_t);                                               \
    template tf_status tf_gpu_fit_terms<T>(const T *, const T *, uint64_t, uint32_t, const T *,         \
                                           const T *const *, const T *const *, uint32_t, double *,      \
                                           unsigned *, tf_gpu_scalars *, cudaStream_t);
TF_FIT_INSTANTIATE(float)
TF_FIT_INSTANTIATE(double)
