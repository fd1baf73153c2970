/* SPDX-License-Identifier: BSD-3-Clause */
/* The R x R kernels beside cuBLAS / cuSOLVER on the large-rank path of
 * GPU CP-ALS (R > TF_GPU_SMALL_RANK): the Hadamard product of the Grams,
 * syrk's triangle mirrored, the Cholesky diagonal's range, the
 * pseudo-inverse's eigenvector scaling; see dense.cuh. */
#include "gpu/cpd/dense_common.cuh"

namespace {

template <typename T>
__global__ void hadamard_kernel(gram_ptrs<T> G, uint32_t n, uint32_t skip, uint64_t RR, T *V,
                                tf_gpu_scalars *sc)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < RR;
         e += (uint64_t)gridDim.x * blockDim.x) {
        const T v = product_at(G, n, skip, e);
        V[e] = v;
        if (!isfinite((double)v)) sc->nonfinite = 1;
    }
}

template <typename T>
__global__ void symmetrize_kernel(T *G, uint32_t R)
{
    /* column-major upper (i <= j) at j*R + i -> (j, i) at i*R + j */
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < (uint64_t)R * R;
         e += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t i = (uint32_t)(e % R), j = (uint32_t)(e / R);
        if (i > j) G[e] = G[(uint64_t)i * R + j];
    }
}

template <typename T>
__global__ void diag_kernel(const T *L, uint32_t R, tf_gpu_scalars *sc)
{
    __shared__ double lo[kThreads], hi[kThreads];
    double a = INFINITY, b = 0.0;
    for (uint32_t i = threadIdx.x; i < R; i += blockDim.x) {
        const double d = fabs((double)L[(uint64_t)i * R + i]);
        a = d < a ? d : a;
        b = d > b ? d : b;
        if (!(d == d)) a = b = NAN;
    }
    lo[threadIdx.x] = a;
    hi[threadIdx.x] = b;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) {
            const double x = lo[threadIdx.x + w], y = hi[threadIdx.x + w];
            lo[threadIdx.x] = (x < lo[threadIdx.x] || x != x) ? x : lo[threadIdx.x];
            hi[threadIdx.x] = (y > hi[threadIdx.x] || y != y) ? y : hi[threadIdx.x];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        sc->diag_min = lo[0];
        sc->diag_max = hi[0];
    }
}

template <typename T>
__global__ void pinv_scale_kernel(const T *Q, const T *w, uint32_t R, double rcond, T *Qs)
{
    __shared__ double sh[kThreads];
    double m = 0.0;
    for (uint32_t j = threadIdx.x; j < R; j += blockDim.x) m = fmax(m, fabs((double)w[j]));
    sh[threadIdx.x] = m;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] = fmax(sh[threadIdx.x], sh[threadIdx.x + s]);
        __syncthreads();
    }
    const double cutoff = rcond * sh[0];
    /* column-major Q: column j (eigenvector j) is Q[j*R .. j*R + R) */
    for (uint64_t e = threadIdx.x; e < (uint64_t)R * R; e += blockDim.x) {
        const double wj = (double)w[e / R];
        Qs[e] = wj > cutoff ? (T)((double)Q[e] / wj) : T(0);
    }
}

} // namespace

template <typename T>
tf_status tf_gpu_hadamard(const T *const *G, uint32_t n, uint32_t skip, uint32_t R, T *V,
                          tf_gpu_scalars *sc, cudaStream_t st)
{
    gram_ptrs<T> p;
    if (n > 16) return tf_fail(TF_ERR_ARG, "Hadamard of %u Grams: at most 16", n);
    for (uint32_t k = 0; k < 16; ++k) p.g[k] = k < n ? G[k] : nullptr;
    const uint64_t RR = (uint64_t)R * R;
    hadamard_kernel<T><<<grid_for(RR), kThreads, 0, st>>>(p, n, skip, RR, V, sc);
    TF_CU_LAUNCH("hadamard_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_symmetrize(T *G, uint32_t R, cudaStream_t st)
{
    symmetrize_kernel<T><<<grid_for((uint64_t)R * R), kThreads, 0, st>>>(G, R);
    TF_CU_LAUNCH("symmetrize_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_diag_range(const T *L, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st)
{
    diag_kernel<T><<<1, kThreads, 0, st>>>(L, R, sc);
    TF_CU_LAUNCH("diag_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_pinv_scale(const T *Q, const T *w, uint32_t R, double rcond, T *Qs, cudaStream_t st)
{
    pinv_scale_kernel<T><<<1, kThreads, 0, st>>>(Q, w, R, rcond, Qs);
    TF_CU_LAUNCH("pinv_scale_kernel");
    return TF_OK;
}

#define TF_LARGE_RANK_INSTANTIATE(T)                                                                    \
    template tf_status tf_gpu_hadamard<T>(const T *const *, uint32_t, uint32_t, uint32_t, T *,          \
                                          tf_gpu_scalars *, cudaStream_t);                              \
    template tf_status tf_gpu_symmetrize<T>(T *, uint32_t, cudaStream_t);                               \
    template tf_status tf_gpu_diag_range<T>(const T *, uint32_t, tf_gpu_scalars *, cudaStream_t);       \
    template tf_status tf_gpu_pinv_scale<T>(const T *, const T *, uint32_t, double, T *, cudaStream_t);
TF_LARGE_RANK_INSTANTIATE(float)
TF_LARGE_RANK_INSTANTIATE(double)
