/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels of AO-ADMM on the GPU; see admm.cuh (and src/cpu/admm.c, the
 * reference: the same formulas, in the same order, on the same values). */
#include "gpu/cpd/admm.cuh"
#include "gpu/cpd/dense_common.cuh"

namespace {

/* the most blocks grid_for gives: the prox step's partial sums */
const uint64_t kMaxBlocks = 4096;

/* prox of l1 |x| / rho (+ the indicator of x >= 0) at v: the soft threshold
 * at t (t = 0: the identity, or the projection), as admm.c's prox. */
__device__ __forceinline__ double prox(double v, double t, int nonneg)
{
    const double up = v - t > 0.0 ? v - t : 0.0; /* +0 at and below t */
    if (nonneg) return up;
    const double down = v + t < 0.0 ? v + t : 0.0;
    return up + down;
}

#define TF_GRID_LOOP(e, n) \
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < (n); e += (uint64_t)gridDim.x * blockDim.x)

template <typename T>
__global__ void normal_kernel(gram_ptrs<T> G, uint32_t n, uint32_t skip, uint32_t R, double l2, double *V,
                              double *Vc, double *X, tf_gpu_scalars *sc)
{
    const uint64_t RR = (uint64_t)R * R;
    TF_GRID_LOOP(e, RR)
    {
        double v = 1.0;
#pragma unroll
        for (uint32_t k = 0; k < 16; ++k)
            if (k < n && k != skip && G.g[k]) v *= (double)G.g[k][e];
        const bool diag = e / R == e % R;
        if (diag) v += l2;
        V[e] = v;
        Vc[e] = v;
        X[e] = diag ? 1.0 : 0.0;
        if (!isfinite(v)) sc->nonfinite = 1;
    }
}

template <typename T>
__global__ void begin_kernel(const double *V, gram_ptrs<T> scales, uint32_t n, uint32_t skip, uint32_t R, double l1,
                             double *p, tf_gpu_admm_state *s)
{
    for (uint32_t r = threadIdx.x; r < R; r += blockDim.x) {
        double v = 1.0;
#pragma unroll
        for (uint32_t k = 0; k < 16; ++k)
            if (k < n && k != skip && scales.g[k]) v *= (double)scales.g[k][r];
        p[r] = v;
    }
    if (threadIdx.x == 0) {
        double rho = 0.0; /* the trace in order, as admm.c sums it */
        for (uint32_t r = 0; r < R; ++r) rho += V[(uint64_t)r * R + r];
        rho /= (double)R;
        if (!(rho > 0.0) && isfinite(rho)) rho = 1.0; /* V = 0: the other factors are zero */
        s->rho = rho;
        s->t = l1 / rho;
        s->iters = 0;
        s->stop = 0;
        s->neg = 0;
        s->diverged = 0;
        s->info = 0;
    }
}

__global__ void shift_kernel(const double *V, uint32_t R, const tf_gpu_admm_state *s, double *L, double *X)
{
    const uint64_t RR = (uint64_t)R * R;
    const double rho = s->rho;
    TF_GRID_LOOP(e, RR)
    {
        const bool diag = e / R == e % R;
        L[e] = diag ? V[e] + rho : V[e];
        X[e] = diag ? 1.0 : 0.0;
    }
}

template <typename T>
__global__ void fold_kernel(const double *X, const double *p, uint32_t R, T *W)
{
    const uint64_t RR = (uint64_t)R * R;
    TF_GRID_LOOP(e, RR) W[e] = (T)(p ? p[e / R] * X[e] : X[e]);
}

template <typename T>
__global__ void warm_kernel(T *H, T *U, uint64_t n, uint32_t R, const T *s, const T *lambda)
{
    TF_GRID_LOOP(e, n)
    {
        const uint32_t r = (uint32_t)(e % R);
        const double l = (double)lambda[r];
        H[e] = (T)((double)H[e] * (double)s[r] * l);
        U[e] = (T)((double)U[e] * l);
    }
}

template <typename T>
__global__ void negative_kernel(const T *S, uint64_t n, double *row)
{
    bool neg = false;
    TF_GRID_LOOP(e, n) neg |= S[e] < T(0);
    if (neg) row[0] = 1.0; /* every writer writes the same value */
}

__global__ void decide_kernel(const double *table, uint32_t parts, int project_only, tf_gpu_admm_state *s)
{
    int neg = 0;
    for (uint32_t q = 0; q < parts; ++q) neg |= table[(uint64_t)q * TF_GPU_ADMM_TERMS] > 0.0;
    s->neg = neg;
    if (project_only && !neg) s->stop = 1; /* the least-squares solution is the update */
}

template <typename T>
__global__ void settle_kernel(T *H, T *U, const T *S, uint64_t n, int cold, int project_only,
                              const tf_gpu_admm_state *s)
{
    const int neg = s->neg;
    TF_GRID_LOOP(e, n)
    {
        if (cold || !neg) U[e] = T(0);
        if (project_only && !neg) {
            const T v = S[e]; /* S may be H: this thread's entry alone */
            H[e] = v > T(0) ? v : T(0); /* -0 (an empty row) is +0 */
        }
    }
}

template <typename T>
__global__ void rhs_kernel(const T *M, const double *p, const T *H, const T *U, uint64_t n, uint32_t R,
                           const tf_gpu_admm_state *s, T *B)
{
    if (s->stop) return; /* uniform: written by an earlier kernel */
    const double rho = s->rho;
    TF_GRID_LOOP(e, n)
    B[e] = (T)((double)M[e] * p[e % R] + rho * ((double)H[e] + (double)U[e]));
}

/* One block's part of the prox step: its grid-stride entries, then the
 * four sums reduced in a fixed tree order into partial[block][0..3]. */
template <typename T>
__global__ void __launch_bounds__(kThreads) prox_kernel(const T *Ht, T *H, T *U, uint64_t n, int nonneg,
                                                        const tf_gpu_admm_state *s, double *partial)
{
    __shared__ double buf[2 * kThreads];
    if (s->stop) return; /* uniform over the grid, before any barrier */
    const double t = s->t;
    double pr = 0.0, dr = 0.0, hn = 0.0, un = 0.0;
    TF_GRID_LOOP(e, n)
    {
        const double ht = (double)Ht[e], uo = (double)U[e];
        const T hv = (T)prox(ht - uo, t, nonneg);
        const double h = (double)hv, u = uo + (h - ht), d = h - (double)H[e];
        pr += (h - ht) * (h - ht);
        dr += d * d;
        hn += h * h;
        un += u * u;
        H[e] = hv;
        U[e] = (T)u;
    }
    block_sum2(pr, dr, buf);
    block_sum2(hn, un, buf);
    if (threadIdx.x == 0) {
        double *o = partial + (uint64_t)blockIdx.x * TF_GPU_ADMM_TERMS;
        o[0] = pr;
        o[1] = dr;
        o[2] = hn;
        o[3] = un;
    }
}

/* The prox step's nb block partials summed into row: thread t adds the
 * blocks of its contiguous range in order, then a fixed tree. */
__global__ void __launch_bounds__(kThreads) totals_kernel(const double *partial, uint32_t nb,
                                                          const tf_gpu_admm_state *s, double *row)
{
    __shared__ double buf[2 * kThreads];
    if (s->stop) return;
    const uint32_t t = threadIdx.x;
    const uint32_t lo = (uint32_t)((uint64_t)nb * t / kThreads), hi = (uint32_t)((uint64_t)nb * (t + 1) / kThreads);
    double a[TF_GPU_ADMM_TERMS] = {0.0, 0.0, 0.0, 0.0};
    for (uint32_t b = lo; b < hi; ++b)
#pragma unroll
        for (int k = 0; k < TF_GPU_ADMM_TERMS; ++k) a[k] += partial[(uint64_t)b * TF_GPU_ADMM_TERMS + k];
    block_sum2(a[0], a[1], buf);
    block_sum2(a[2], a[3], buf);
    if (t == 0)
        for (int k = 0; k < TF_GPU_ADMM_TERMS; ++k) row[k] = a[k];
}

__global__ void test_kernel(const double *table, uint32_t parts, double tol, uint32_t max_inner,
                            tf_gpu_admm_state *s)
{
    if (s->stop) return;
    double sum[TF_GPU_ADMM_TERMS] = {0.0, 0.0, 0.0, 0.0};
    for (uint32_t q = 0; q < parts; ++q)
        for (int k = 0; k < TF_GPU_ADMM_TERMS; ++k) sum[k] += table[(uint64_t)q * TF_GPU_ADMM_TERMS + k];
    const unsigned it = s->iters + 1;
    s->iters = it;
    if (!isfinite(sum[0] + sum[1] + sum[2] + sum[3]) || s->info != 0) {
        s->diverged = 1;
        s->stop = 1;
        return;
    }
    /* admm.c's rule: the dual's scale is at least tol ||H|| */
    const double hn = sqrt(sum[2]), un = fmax(sqrt(sum[3]), tol * hn);
    if ((sqrt(sum[0]) <= tol * hn && sqrt(sum[1]) <= tol * un) || it >= max_inner) s->stop = 1;
}

template <typename T>
__global__ void unscale_kernel(T *U, uint64_t n, uint32_t R, const T *lambda)
{
    TF_GRID_LOOP(e, n)
    {
        const T l = lambda[e % R];
        if (l > T(0)) U[e] = (T)((double)U[e] / (double)l);
    }
}

template <typename T>
gram_ptrs<T> pack(const T *const *a, uint32_t n)
{
    gram_ptrs<T> p;
    for (uint32_t k = 0; k < 16; ++k) p.g[k] = a && k < n ? a[k] : nullptr;
    return p;
}

} // namespace

uint64_t tf_gpu_admm_partial_count() { return kMaxBlocks * TF_GPU_ADMM_TERMS; }

template <typename T>
tf_status tf_gpu_admm_normal(const T *const *G, uint32_t n, uint32_t skip, uint32_t R, double l2, double *V,
                             double *Vc, double *X, tf_gpu_scalars *sc, cudaStream_t st)
{
    if (n > 16) return tf_fail(TF_ERR_ARG, "Hadamard of %u Grams: at most 16", n);
    normal_kernel<T><<<grid_for((uint64_t)R * R), kThreads, 0, st>>>(pack(G, n), n, skip, R, l2, V, Vc, X, sc);
    TF_CU_LAUNCH("admm normal_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_begin(const double *V, const T *const *scales, uint32_t n, uint32_t skip, uint32_t R,
                            double l1, double *p, tf_gpu_admm_state *s, cudaStream_t st)
{
    if (n > 16) return tf_fail(TF_ERR_ARG, "AO-ADMM: %u modes, at most 16", n);
    begin_kernel<T><<<1, kThreads, 0, st>>>(V, pack(scales, n), n, skip, R, l1, p, s);
    TF_CU_LAUNCH("admm begin_kernel");
    return TF_OK;
}

tf_status tf_gpu_admm_shift(const double *V, uint32_t R, const tf_gpu_admm_state *s, double *L, double *X,
                            cudaStream_t st)
{
    shift_kernel<<<grid_for((uint64_t)R * R), kThreads, 0, st>>>(V, R, s, L, X);
    TF_CU_LAUNCH("admm shift_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_fold(const double *X, const double *p, uint32_t R, T *W, cudaStream_t st)
{
    fold_kernel<T><<<grid_for((uint64_t)R * R), kThreads, 0, st>>>(X, p, R, W);
    TF_CU_LAUNCH("admm fold_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_warm(T *H, T *U, uint64_t I, uint32_t R, const T *s, const T *lambda, cudaStream_t st)
{
    if (I == 0) return TF_OK;
    warm_kernel<T><<<grid_for(I * R), kThreads, 0, st>>>(H, U, I * R, R, s, lambda);
    TF_CU_LAUNCH("admm warm_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_negative(const T *S, uint64_t I, uint32_t R, double *row, cudaStream_t st)
{
    TF_CU(cudaMemsetAsync(row, 0, TF_GPU_ADMM_TERMS * sizeof(double), st));
    if (I == 0) return TF_OK;
    negative_kernel<T><<<grid_for(I * R), kThreads, 0, st>>>(S, I * R, row);
    TF_CU_LAUNCH("admm negative_kernel");
    return TF_OK;
}

tf_status tf_gpu_admm_decide(const double *table, uint32_t parts, int project_only, tf_gpu_admm_state *s,
                             cudaStream_t st)
{
    decide_kernel<<<1, 1, 0, st>>>(table, parts, project_only, s);
    TF_CU_LAUNCH("admm decide_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_settle(T *H, T *U, const T *S, uint64_t I, uint32_t R, int cold, int project_only,
                             const tf_gpu_admm_state *s, cudaStream_t st)
{
    if (I == 0) return TF_OK;
    settle_kernel<T><<<grid_for(I * R), kThreads, 0, st>>>(H, U, S, I * R, cold, project_only, s);
    TF_CU_LAUNCH("admm settle_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_rhs(const T *M, const double *p, const T *H, const T *U, uint64_t I, uint32_t R,
                          const tf_gpu_admm_state *s, T *B, cudaStream_t st)
{
    if (I == 0) return TF_OK;
    rhs_kernel<T><<<grid_for(I * R), kThreads, 0, st>>>(M, p, H, U, I * R, R, s, B);
    TF_CU_LAUNCH("admm rhs_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_prox(const T *Ht, T *H, T *U, uint64_t I, uint32_t R, int nonneg,
                           const tf_gpu_admm_state *s, double *partial, double *row, cudaStream_t st)
{
    /* a GPU without rows of the mode writes zero sums (one block of none) */
    const unsigned nb = grid_for(I * R);
    prox_kernel<T><<<nb, kThreads, 0, st>>>(Ht, H, U, I * R, nonneg, s, partial);
    TF_CU_LAUNCH("admm prox_kernel");
    totals_kernel<<<1, kThreads, 0, st>>>(partial, nb, s, row);
    TF_CU_LAUNCH("admm totals_kernel");
    return TF_OK;
}

tf_status tf_gpu_admm_test(const double *table, uint32_t parts, double tol, uint32_t max_inner,
                           tf_gpu_admm_state *s, cudaStream_t st)
{
    test_kernel<<<1, 1, 0, st>>>(table, parts, tol, max_inner, s);
    TF_CU_LAUNCH("admm test_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_admm_unscale(T *U, uint64_t I, uint32_t R, const T *lambda, cudaStream_t st)
{
    if (I == 0) return TF_OK;
    unscale_kernel<T><<<grid_for(I * R), kThreads, 0, st>>>(U, I * R, R, lambda);
    TF_CU_LAUNCH("admm unscale_kernel");
    return TF_OK;
}

#define TF_ADMM_INSTANTIATE(T)                                                                                      \
    template tf_status tf_gpu_admm_normal<T>(const T *const *, uint32_t, uint32_t, uint32_t, double, double *,     \
                                             double *, double *, tf_gpu_scalars *, cudaStream_t);                  \
    template tf_status tf_gpu_admm_begin<T>(const double *, const T *const *, uint32_t, uint32_t, uint32_t, double, \
                                            double *, tf_gpu_admm_state *, cudaStream_t);                         \
    template tf_status tf_gpu_admm_fold<T>(const double *, const double *, uint32_t, T *, cudaStream_t);            \
    template tf_status tf_gpu_admm_warm<T>(T *, T *, uint64_t, uint32_t, const T *, const T *, cudaStream_t);       \
    template tf_status tf_gpu_admm_negative<T>(const T *, uint64_t, uint32_t, double *, cudaStream_t);              \
    template tf_status tf_gpu_admm_settle<T>(T *, T *, const T *, uint64_t, uint32_t, int, int,                     \
                                             const tf_gpu_admm_state *, cudaStream_t);                             \
    template tf_status tf_gpu_admm_rhs<T>(const T *, const double *, const T *, const T *, uint64_t, uint32_t,      \
                                          const tf_gpu_admm_state *, T *, cudaStream_t);                           \
    template tf_status tf_gpu_admm_prox<T>(const T *, T *, T *, uint64_t, uint32_t, int, const tf_gpu_admm_state *, \
                                           double *, double *, cudaStream_t);                                      \
    template tf_status tf_gpu_admm_unscale<T>(T *, uint64_t, uint32_t, const T *, cudaStream_t);
TF_ADMM_INSTANTIATE(float)
TF_ADMM_INSTANTIATE(double)
