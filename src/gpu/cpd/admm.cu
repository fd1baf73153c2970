/* SPDX-License-Identifier: BSD-3-Clause */
/* The kernels of AO-ADMM on the GPU; see admm.cuh (and src/cpu/admm.c, the
 * reference: the same formulas, in the same order, on the same values). */
#include "gpu/cpd/admm.cuh"
#include "gpu/cpd/dense_common.cuh"

namespace {

/* the most blocks grid_for gives: the prox step's partial sums */
const uint64_t kMaxBlocks = 4096;
/* the fused inner iteration's grid (at most; fewer tiles, fewer blocks) */
const unsigned kFusedBlocks = 1024;

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

/* The prox step of one entry and the residual terms it adds (prox_kernel
 * and inner_kernel): H = prox(Ht - U), U += H - Ht (Ht already rounded to
 * T; h0 = H before), then this block's four sums reduced in a fixed tree
 * order into partial[block][0..3]. */
struct prox_sums {
    double pr = 0.0, dr = 0.0, hn = 0.0, un = 0.0;
    template <typename T>
    __device__ void step(double ht, double u0, double h0, double t, int nonneg, T *H, T *U, uint64_t e)
    {
        const T hv = (T)prox(ht - u0, t, nonneg);
        const double h = (double)hv, u = u0 + (h - ht), d = h - h0;
        pr += (h - ht) * (h - ht);
        dr += d * d;
        hn += h * h;
        un += u * u;
        H[e] = hv;
        U[e] = (T)u;
    }
    __device__ void store(double *partial, double *buf)
    {
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
};

/* One block's part of the prox step: its grid-stride entries, then the
 * four sums reduced in a fixed tree order into partial[block][0..3]. */
template <typename T>
__global__ void __launch_bounds__(kThreads) prox_kernel(const T *Ht, T *H, T *U, uint64_t n, int nonneg,
                                                        const tf_gpu_admm_state *s, double *partial)
{
    __shared__ double buf[2 * kThreads];
    if (s->stop) return; /* uniform over the grid, before any barrier */
    const double t = s->t;
    prox_sums ps;
    TF_GRID_LOOP(e, n) ps.step((double)Ht[e], (double)U[e], (double)H[e], t, nonneg, H, U, e);
    ps.store(partial, buf);
}

/* The block partials of one inner iteration (nb of them) summed into row
 * in a fixed order: thread t adds the blocks of its contiguous range, then
 * a fixed tree (totals_kernel and inner_kernel's last block). */
__device__ void sum_partials(const double *partial, uint32_t nb, double *row, double *buf)
{
    const uint32_t t = threadIdx.x;
    const uint32_t lo = (uint32_t)((uint64_t)nb * t / kThreads), hi = (uint32_t)((uint64_t)nb * (t + 1) / kThreads);
    double a[TF_GPU_ADMM_TERMS] = {0.0, 0.0, 0.0, 0.0};
    for (uint32_t b = lo; b < hi; ++b)
#pragma unroll
        for (int k = 0; k < TF_GPU_ADMM_TERMS; ++k) a[k] += __ldcg(partial + (uint64_t)b * TF_GPU_ADMM_TERMS + k);
    block_sum2(a[0], a[1], buf);
    block_sum2(a[2], a[3], buf);
    if (t == 0)
        for (int k = 0; k < TF_GPU_ADMM_TERMS; ++k) row[k] = a[k];
}

/* Column c of W = (V + rho I)^-1 for the fused inner iteration: in RM
 * registers per thread (RM >= R; the broadcast B row is then the only
 * shared-memory read of the product), or, RM = 0, all of W in shared
 * memory (ranks past the registers). */
template <int RM>
struct w_column {
    double w[RM];
    __device__ void load(const double *, const void *W, bool dbl, uint32_t R, uint32_t c)
    {
#pragma unroll
        for (int k = 0; k < RM; ++k)
            w[k] = (uint32_t)k < R ? (dbl ? ((const double *)W)[(uint64_t)k * R + c]
                                          : (double)((const float *)W)[(uint64_t)k * R + c])
                                   : 0.0;
    }
    __device__ double dot(const double *b, uint32_t R) const
    {
        double acc = 0.0;
#pragma unroll
        for (int k = 0; k < RM; ++k)
            if ((uint32_t)k < R) acc += b[k] * w[k];
        return acc;
    }
};
template <>
struct w_column<0> {
    const double *ws;
    uint32_t c, R;
    __device__ void load(const double *shared_w, const void *, bool, uint32_t r, uint32_t col)
    {
        ws = shared_w;
        R = r;
        c = col;
    }
    __device__ double dot(const double *b, uint32_t) const
    {
        double acc = 0.0;
        for (uint32_t k = 0; k < R; ++k) acc += b[k] * ws[(uint64_t)k * R + c];
        return acc;
    }
};

/* One whole inner iteration in one pass over the rows (R <=
 * TF_GPU_ADMM_FUSED_RANK): per tile of kThreads / R rows (a thread per
 * entry), B = M diag(p) + rho (H + U) into shared memory (double; rows
 * padded to R + 1 so that a warp's rows fall in different banks), Ht = B W
 * with W = (V + rho I)^-1 (w_column<RM>), then prox_kernel's step on the
 * entry: H = prox(Ht - U), U += H - Ht and the residual sums. Reads M, H, U
 * and writes H, U once each (the unfused steps move B and Ht through memory
 * as well: 11 passes against 5); the last block to finish sums the block
 * partials into row. Ht is rounded to T as the unfused gemm's output is. */
template <typename T, int RM>
__global__ void __launch_bounds__(kThreads)
    inner_kernel(const T *M, const double *p, T *H, T *U, uint64_t I, uint32_t R, const T *W, int nonneg,
                 const tf_gpu_admm_state *s, double *partial, unsigned *counter, double *row)
{
    extern __shared__ double sm[]; /* one tile of B (kThreads + its padding), then W when RM = 0 */
    __shared__ double buf[2 * kThreads];
    if (s->stop) return; /* uniform over the grid, before any barrier */
    const double rho = s->rho, t = s->t;
    const uint32_t rows_t = kThreads / R, li = threadIdx.x / R, c = threadIdx.x % R, stride = R + 1;
    double *Bs = sm, *Ws = sm + (uint64_t)rows_t * stride;
    if (RM == 0)
        for (uint32_t e = threadIdx.x; e < R * R; e += kThreads) Ws[e] = (double)W[e];
    const bool lane_on = li < rows_t;
    w_column<RM> wc;
    wc.load(Ws, W, sizeof(T) == 8, R, lane_on ? c : 0);
    const uint64_t tiles = (I + rows_t - 1) / rows_t;
    const double pc = lane_on ? p[c] : 0.0;
    prox_sums ps;
    /* the next tile's entry is read before this one's product (more loads
     * in flight: at 112 registers two blocks fit on an SM) */
    uint64_t tile = blockIdx.x;
    double mn = 0.0, hnx = 0.0, unx = 0.0;
    auto fetch = [&](uint64_t tl) {
        const uint64_t i = tl * rows_t + li;
        if (tl < tiles && lane_on && i < I) {
            const uint64_t e = i * R + c;
            mn = (double)M[e];
            hnx = (double)H[e];
            unx = (double)U[e];
        }
    };
    fetch(tile);
    for (; tile < tiles; tile += gridDim.x) {
        const uint64_t i = tile * rows_t + li, e = i * R + c;
        const bool on = lane_on && i < I;
        const double h0 = hnx, u0 = unx;
        __syncthreads(); /* the previous tile's B is read (and W is loaded) */
        if (on) Bs[(uint64_t)li * stride + c] = mn * pc + rho * (h0 + u0);
        __syncthreads();
        fetch(tile + gridDim.x);
        if (!on) continue;
        ps.step((double)(T)wc.dot(Bs + (uint64_t)li * stride, R), u0, h0, t, nonneg, H, U, e);
    }
    ps.store(partial, buf);
    if (last_block(counter)) sum_partials(partial, gridDim.x, row, buf);
}

template <typename T, int RM>
tf_status launch_inner(unsigned nb, const T *M, const double *p, T *H, T *U, uint64_t I, uint32_t R, const T *W,
                       int nonneg, const tf_gpu_admm_state *s, double *partial, unsigned *counter, double *row,
                       cudaStream_t st)
{
    const uint32_t rows_t = kThreads / R;
    const size_t shm = ((size_t)rows_t * (R + 1) + (RM == 0 ? (size_t)R * R : 0)) * sizeof(double);
    if (shm > 48 * 1024)
        TF_CU(cudaFuncSetAttribute(inner_kernel<T, RM>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
    inner_kernel<T, RM><<<nb, kThreads, shm, st>>>(M, p, H, U, I, R, W, nonneg, s, partial, counter, row);
    TF_CU_LAUNCH("admm inner_kernel");
    return TF_OK;
}

/* The prox step's nb block partials summed into row: thread t adds the
 * blocks of its contiguous range in order, then a fixed tree. */
__global__ void __launch_bounds__(kThreads) totals_kernel(const double *partial, uint32_t nb,
                                                          const tf_gpu_admm_state *s, double *row)
{
    __shared__ double buf[2 * kThreads];
    if (s->stop) return;
    sum_partials(partial, nb, row, buf);
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

template <typename T>
tf_status tf_gpu_admm_inner(const T *M, const double *p, T *H, T *U, uint64_t I, uint32_t R, const T *W, int nonneg,
                            const tf_gpu_admm_state *s, double *partial, unsigned *counter, double *row,
                            cudaStream_t st)
{
    if (R == 0 || R > TF_GPU_ADMM_FUSED_RANK)
        return tf_fail(TF_ERR_ARG, "AO-ADMM fused inner iteration: rank %u is outside 1..%d", R,
                       TF_GPU_ADMM_FUSED_RANK);
    const uint32_t rows_t = kThreads / R;
    const uint64_t tiles = (I + rows_t - 1) / rows_t;
    const unsigned nb = (unsigned)std::max<uint64_t>(1, std::min<uint64_t>(tiles, kFusedBlocks));
    /* W's column in registers up to rank 32 (64 doubles a thread past it
     * spill); in shared memory above */
    if (R <= 16) return launch_inner<T, 16>(nb, M, p, H, U, I, R, W, nonneg, s, partial, counter, row, st);
    if (R <= 32) return launch_inner<T, 32>(nb, M, p, H, U, I, R, W, nonneg, s, partial, counter, row, st);
    return launch_inner<T, 0>(nb, M, p, H, U, I, R, W, nonneg, s, partial, counter, row, st);
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
    template tf_status tf_gpu_admm_unscale<T>(T *, uint64_t, uint32_t, const T *, cudaStream_t);                   \
    template tf_status tf_gpu_admm_inner<T>(const T *, const double *, T *, T *, uint64_t, uint32_t, const T *, int,  \
                                            const tf_gpu_admm_state *, double *, unsigned *, double *, cudaStream_t);
TF_ADMM_INSTANTIATE(float)
TF_ADMM_INSTANTIATE(double)
