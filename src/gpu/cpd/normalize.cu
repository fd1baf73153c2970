/* SPDX-License-Identifier: BSD-3-Clause */
/* Column norms and scales of GPU CP-ALS: tf_gpu_normalize (lambda from
 * the columns' 2-norms or max-norms, by slab partials; see dense.cuh),
 * tf_gpu_scale_columns, tf_gpu_fill, and tf_gpu_slabs (the slab count of
 * the row reductions). */
#include "gpu/cpd/dense_common.cuh"

namespace {

template <typename T>
__global__ void normalize_finish(const double *part, uint32_t S, uint32_t R, int max_norm,
                                 T *lambda, T *inv, tf_gpu_scalars *sc)
{
    for (uint32_t r = blockIdx.x * blockDim.x + threadIdx.x; r < R; r += gridDim.x * blockDim.x) {
        const double v = max_norm ? column_total<OP_MAXABS>(part, S, R, r)
                                  : column_total<OP_SUMSQ>(part, S, R, r);
        if (!isfinite(v)) sc->nonfinite = 1;
        const T lam = max_norm ? (T)(v > 1.0 ? v : 1.0) : (T)sqrt(v);
        lambda[r] = lam;
        inv[r] = lam > T(0) ? T(1) / lam : T(1);
    }
}

template <typename T>
__global__ void scale_columns(T *A, uint64_t n, uint32_t R, const T *inv)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (uint64_t)gridDim.x * blockDim.x)
        A[e] *= inv[e % R];
}

template <typename T>
__global__ void fill_kernel(T *x, uint64_t n, T v)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (uint64_t)gridDim.x * blockDim.x)
        x[e] = v;
}

} // namespace

uint32_t tf_gpu_slabs(uint64_t I)
{
    /* 256 slabs instead of up to 1024 measured 2x slower on an H200 */
    return (uint32_t)std::max<uint64_t>(1, std::min<uint64_t>((I + 255) / 256, 1024));
}

/* lambda and inv of tf_gpu_normalize (column norms from slab partials). */
template <typename T>
static tf_status normalize_partials(const T *A, uint64_t I, uint32_t R, int max_norm, T *lambda, T *inv,
                                    double *partial, tf_gpu_scalars *sc, cudaStream_t st)
{
    const uint32_t S = tf_gpu_slabs(I);
    if (max_norm) TF_TRY((launch_partials<T, OP_MAXABS>(A, A, I, R, S, partial, st)));
    else TF_TRY((launch_partials<T, OP_SUMSQ>(A, A, I, R, S, partial, st)));
    normalize_finish<T><<<(R + kThreads - 1) / kThreads, kThreads, 0, st>>>(partial, S, R, max_norm,
                                                                            lambda, inv, sc);
    TF_CU_LAUNCH("normalize_finish");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_scale_columns(T *A, uint64_t I, uint32_t R, const T *s, cudaStream_t st)
{
    if (I == 0) return TF_OK;
    scale_columns<T><<<grid_for(I * R), kThreads, 0, st>>>(A, I * R, R, s);
    TF_CU_LAUNCH("scale_columns");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_normalize(T *A, uint64_t I, uint32_t R, int max_norm, T *lambda, T *inv,
                           double *partial, tf_gpu_scalars *sc, cudaStream_t st)
{
    TF_TRY(normalize_partials(A, I, R, max_norm, lambda, inv, partial, sc, st));
    return tf_gpu_scale_columns(A, I, R, inv, st);
}

template <typename T>
tf_status tf_gpu_fill(T *x, uint64_t n, T v, cudaStream_t st)
{
    if (n == 0) return TF_OK;
    fill_kernel<T><<<grid_for(n), kThreads, 0, st>>>(x, n, v);
    TF_CU_LAUNCH("fill_kernel");
    return TF_OK;
}

#define TF_NORMALIZE_INSTANTIATE(T)                                                               \
    template tf_status tf_gpu_normalize<T>(T *, uint64_t, uint32_t, int, T *, T *, double *,      \
                                           tf_gpu_scalars *, cudaStream_t);                       \
    template tf_status tf_gpu_scale_columns<T>(T *, uint64_t, uint32_t, const T *, cudaStream_t); \
    template tf_status tf_gpu_fill<T>(T *, uint64_t, T, cudaStream_t);
TF_NORMALIZE_INSTANTIATE(float)
TF_NORMALIZE_INSTANTIATE(double)
