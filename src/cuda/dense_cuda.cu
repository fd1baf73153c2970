/* Small dense kernels of GPU CP-ALS; see dense_cuda.cuh. */
#include <algorithm>

#include "cuda/dense_cuda.cuh"

namespace {

const int kThreads = 256;

enum col_op { OP_SUMSQ = 0, OP_DOT, OP_MAXABS };

/* NaN-sticky running maximum of |x| (as the CPU backend computes it). */
__device__ __forceinline__ double max_abs(double m, double x)
{
    const double v = fabs(x);
    return (!(v <= m) && m == m) ? v : m;
}

template <int OP>
__device__ __forceinline__ double combine(double a, double b)
{
    return OP == OP_MAXABS ? max_abs(a, b) : a + b;
}

/* part[s*R + c] = reduction over the rows of slab s of column c.
 * Block (32, 8): x over 32 columns (blockIdx.y selects the tile), y over rows. */
template <typename T, int OP>
__global__ void column_partials(const T *A, const T *B, uint64_t I, uint32_t R, uint32_t S,
                                double *part)
{
    __shared__ double sh[8][33];
    const uint32_t c = blockIdx.y * 32 + threadIdx.x;
    const uint64_t s = blockIdx.x;
    const uint64_t lo = I * s / S, hi = I * (s + 1) / S;
    double acc = 0.0;
    if (c < R)
#pragma unroll 8
        for (uint64_t i = lo + threadIdx.y; i < hi; i += 8) {
            const double a = (double)A[i * R + c];
            if (OP == OP_SUMSQ) acc += a * a;
            else if (OP == OP_DOT) acc += a * (double)B[i * R + c];
            else acc = max_abs(acc, a);
        }
    sh[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && c < R) {
        double r = sh[0][threadIdx.x];
        for (int y = 1; y < 8; ++y) r = combine<OP>(r, sh[y][threadIdx.x]);
        part[s * R + c] = r;
    }
}

template <typename T, int OP>
tf_status launch_partials(const T *A, const T *B, uint64_t I, uint32_t R, uint32_t S, double *part,
                          cudaStream_t st)
{
    column_partials<T, OP><<<dim3(S, (R + 31) / 32), dim3(32, 8), 0, st>>>(A, B, I, R, S, part);
    TF_CU_LAUNCH("column_partials");
    return TF_OK;
}

/* Column r's total over the slabs, in slab order. */
template <int OP>
__device__ __forceinline__ double column_total(const double *part, uint32_t S, uint32_t R, uint32_t r)
{
    double v = part[r];
    /* unrolled so that the loads are in flight together (same order of sums) */
#pragma unroll 16
    for (uint32_t s = 1; s < S; ++s) v = combine<OP>(v, part[(uint64_t)s * R + r]);
    return v;
}

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

/* Block-wide sum of one double per thread in a fixed tree order (kThreads threads). */
__device__ double block_sum(double v)
{
    __shared__ double sh[kThreads];
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    return sh[0];
}

template <typename T>
__global__ void weighted_finish(const double *part, uint32_t S, uint32_t R, const T *w,
                                tf_gpu_scalars *sc)
{
    double acc = 0.0;
    for (uint32_t r = threadIdx.x; r < R; r += blockDim.x)
        acc += (double)w[r] * column_total<OP_DOT>(part, S, R, r);
    const double total = block_sum(acc);
    if (threadIdx.x == 0) {
        sc->inner = total;
        if (!isfinite(total)) sc->nonfinite = 1;
    }
}

template <typename T>
__global__ void quadratic_kernel(const T *V, const T *x, uint32_t R, tf_gpu_scalars *sc)
{
    double acc = 0.0;
    for (uint32_t i = threadIdx.x; i < R; i += blockDim.x) {
        double row = 0.0;
        for (uint32_t j = 0; j < R; ++j) row += (double)V[(uint64_t)i * R + j] * (double)x[j];
        acc += (double)x[i] * row;
    }
    const double total = block_sum(acc);
    if (threadIdx.x == 0) {
        sc->knorm2 = total;
        if (!isfinite(total)) sc->nonfinite = 1;
    }
}

template <typename T>
struct gram_ptrs {
    const T *g[16];
};

template <typename T>
__global__ void hadamard_kernel(gram_ptrs<T> G, uint32_t n, uint32_t skip, uint64_t RR, T *V,
                                tf_gpu_scalars *sc)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < RR;
         e += (uint64_t)gridDim.x * blockDim.x) {
        T v = T(1);
        for (uint32_t k = 0; k < n; ++k)
            if (k != skip) v *= G.g[k][e];
        V[e] = v;
        if (!isfinite((double)v)) sc->nonfinite = 1;
    }
}

/* ---- small-rank solve (see tf_gpu_small_cholesky in dense_cuda.cuh) */
const int kSmall = TF_GPU_SMALL_RANK;

template <typename T>
__global__ void __launch_bounds__(kThreads) small_cholesky_kernel(gram_ptrs<T> G, uint32_t n,
                                                                  uint32_t skip, uint32_t R, T *V,
                                                                  T *W, tf_gpu_scalars *sc)
{
    __shared__ double S[kSmall][kSmall + 1];
    __shared__ double rowk[kSmall], colk[kSmall], piv[kSmall];
    __shared__ int bad;
    const uint32_t t = threadIdx.x, RR = R * R;
    if (t == 0) bad = 0;
    for (uint32_t e = t; e < RR; e += blockDim.x) {
        T v = T(1);
        for (uint32_t k = 0; k < n; ++k)
            if (k != skip) v *= G.g[k][e];
        V[e] = v;
        if (!isfinite((double)v)) sc->nonfinite = 1;
        S[e / R][e % R] = (double)v;
    }
    __syncthreads();
    /* Gauss-Jordan inversion in place without pivoting (V symmetric positive
     * definite; anything else shows as a pivot that is not positive). Its
     * pivots are the Cholesky factor's squared diagonal (the Schur
     * complements), so one elimination gives potrf's info, the diagonal
     * range and V^-1; every step is parallel over the whole matrix. */
    for (uint32_t k = 0; k < R; ++k) {
        const double p = S[k][k];
        if (!(p > 0.0)) { /* as potrf: not positive, or NaN (uniform: all read the same p) */
            if (t == 0) bad = (int)k + 1;
            break;
        }
        if (t < R) {
            rowk[t] = S[k][t] / p;
            colk[t] = S[t][k];
        }
        if (t == 0) piv[k] = sqrt(p);
        __syncthreads();
        for (uint32_t e = t; e < RR; e += blockDim.x) {
            const uint32_t i = e / R, j = e % R;
            double v;
            if (i == k && j == k) v = 1.0 / p;
            else if (i == k) v = rowk[j];
            else if (j == k) v = -colk[i] / p;
            else v = S[i][j] - colk[i] * rowk[j];
            S[i][j] = v;
        }
        __syncthreads();
    }
    __syncthreads();
    if (t == 0) {
        const uint32_t nk = bad ? (uint32_t)bad - 1 : R;
        double lo = nk ? INFINITY : 0.0, hi = 0.0;
        for (uint32_t i = 0; i < nk; ++i) {
            lo = piv[i] < lo ? piv[i] : lo;
            hi = piv[i] > hi ? piv[i] : hi;
        }
        sc->info = bad;
        sc->diag_min = lo;
        sc->diag_max = hi;
    }
    if (bad) return; /* the host falls back to the pseudo-inverse */
    for (uint32_t e = t; e < RR; e += blockDim.x) W[e] = (T)S[e / R][e % R];
}

/* ---- small-rank Gram (see tf_gpu_gram_partials in dense_cuda.cuh) */
const int kGramRows = 32; /* rows per shared-memory tile */
const int kGramBuf = 16 * kThreads; /* doubles: the tile, then the groups' partials */

/* Gram register tiles: R is padded to R4 (a multiple of 4); a thread owns a
 * 4 x 4 tile of the R4 x R4 Gram and one of NG row groups (NG x tiles <=
 * kThreads threads), so each row costs it 4 16-byte shared loads for 16
 * FMAs. */
__host__ __device__ inline uint32_t gram_r4(uint32_t R) { return (R + 3) / 4 * 4; }
__host__ __device__ inline uint32_t gram_groups(uint32_t R)
{
    const uint32_t nt = gram_r4(R) / 4, tiles = nt * nt;
    return tiles >= (uint32_t)kThreads ? 1u : (uint32_t)kThreads / tiles;
}

/* Slab blockIdx.x of A: tiles of kGramRows rows (a contiguous stretch of
 * A) are loaded coalesced, optionally scaled by inv (written back), padded
 * to R4 columns with zeros; thread (g, ti, tj) accumulates Gram entries
 * (4ti.., 4tj..) over the tile's rows g, g + NG, ...; the groups' sums
 * are added in order into gpart[slab * R * R + entry]. */
template <typename T>
__global__ void __launch_bounds__(kThreads, 3) gram_partials_kernel(T *A, uint64_t I, uint32_t R,
                                                                 const T *inv, uint32_t S,
                                                                 double *gpart)
{
    __shared__ __align__(16) double tile[kGramBuf];
    const uint32_t t = threadIdx.x, R4 = gram_r4(R), nt = R4 / 4, NG = gram_groups(R);
    const uint32_t g = t / (nt * nt), id = t % (nt * nt), ti = id / nt, tj = id % nt;
    const bool active = g < NG;
    double acc[4][4];
#pragma unroll
    for (int p = 0; p < 4; ++p)
#pragma unroll
        for (int q = 0; q < 4; ++q) acc[p][q] = 0.0;
    /* element u of a tile for this thread: x = t + u * kThreads, at tile row
     * xr[u], column xc[u] (the same in every tile); the next tile's values
     * are fetched into registers while this one is reduced */
    constexpr int PF = kGramRows * kSmall / kThreads;
    uint32_t xr[PF], xc[PF];
    T pv[PF];
#pragma unroll
    for (int u = 0; u < PF; ++u) {
        const uint32_t x = t + u * kThreads;
        xr[u] = x / R4;
        xc[u] = x % R4;
    }
    const uint64_t lo = I * blockIdx.x / S, hi = I * (blockIdx.x + 1) / S;
    auto fetch = [&](uint64_t r0) {
        const uint64_t nr = min((uint64_t)kGramRows, hi - r0);
#pragma unroll
        for (int u = 0; u < PF; ++u)
            pv[u] = xr[u] < nr && xc[u] < R ? A[(r0 + xr[u]) * R + xc[u]] : T(0);
    };
    if (lo < hi) fetch(lo);
    for (uint64_t r0 = lo; r0 < hi; r0 += kGramRows) {
        const uint32_t nr = (uint32_t)min((uint64_t)kGramRows, hi - r0);
        __syncthreads(); /* the previous tile is consumed */
#pragma unroll
        for (int u = 0; u < PF; ++u)
            if (xr[u] < nr) {
                double d = 0.0;
                if (xc[u] < R) {
                    T v = pv[u];
                    if (inv) {
                        v *= inv[xc[u]];
                        A[(r0 + xr[u]) * R + xc[u]] = v;
                    }
                    d = (double)v;
                }
                tile[t + u * kThreads] = d;
            }
        __syncthreads();
        if (r0 + kGramRows < hi) fetch(r0 + kGramRows);
        if (active)
            for (uint32_t r = g; r < nr; r += NG) {
                const double2 *row = reinterpret_cast<const double2 *>(tile + r * R4);
                const double2 i01 = row[2 * ti], i23 = row[2 * ti + 1];
                const double2 j01 = row[2 * tj], j23 = row[2 * tj + 1];
                const double ai[4] = {i01.x, i01.y, i23.x, i23.y}, aj[4] = {j01.x, j01.y, j23.x, j23.y};
#pragma unroll
                for (int p = 0; p < 4; ++p)
#pragma unroll
                    for (int q = 0; q < 4; ++q) acc[p][q] += ai[p] * aj[q];
            }
    }
    /* combine the NG groups in order in shared memory: one partial per slab */
    __syncthreads();
    double *buf = tile; /* NG * R * R <= kGramBuf doubles */
    if (active)
#pragma unroll
        for (int p = 0; p < 4; ++p)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const uint32_t i = 4 * ti + p, j = 4 * tj + q;
                if (i < R && j < R) buf[g * R * R + i * R + j] = acc[p][q];
            }
    __syncthreads();
    for (uint32_t e = t; e < R * R; e += kThreads) {
        double v = buf[e];
        for (uint32_t h = 1; h < NG; ++h) v += buf[h * R * R + e];
        gpart[(uint64_t)blockIdx.x * R * R + e] = v;
    }
}

/* G[e] = sum of the slab partials: block (32, 32) over 32 entries, thread
 * (x, y) sums slabs y*S/32 .. in order, then the 32 chunk sums are added in
 * order (deterministic). */
template <typename T>
__global__ void gram_finish_kernel(const double *gpart, uint32_t S, uint32_t RR, T *G)
{
    __shared__ double sh[32][33];
    const uint32_t e = blockIdx.x * 32 + threadIdx.x, y = threadIdx.y;
    double v = 0.0;
    if (e < RR) {
        const uint32_t lo = (uint32_t)((uint64_t)S * y / 32), hi = (uint32_t)((uint64_t)S * (y + 1) / 32);
#pragma unroll 8
        for (uint32_t s = lo; s < hi; ++s) v += gpart[(uint64_t)s * RR + e];
    }
    sh[y][threadIdx.x] = v;
    __syncthreads();
    if (y == 0 && e < RR) {
        double tot = sh[0][threadIdx.x];
        for (int k = 1; k < 32; ++k) tot += sh[k][threadIdx.x];
        G[e] = (T)tot;
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

template <typename T>
__global__ void fill_kernel(T *x, uint64_t n, T v)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n;
         e += (uint64_t)gridDim.x * blockDim.x)
        x[e] = v;
}

unsigned grid_for(uint64_t n)
{
    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n + kThreads - 1) / kThreads, 4096));
}

} // namespace

uint32_t tf_gpu_slabs(uint64_t I)
{
    /* 256 slabs instead of up to 1024 measured 2x slower on an H200 */
    return (uint32_t)std::max<uint64_t>(1, std::min<uint64_t>((I + 255) / 256, 1024));
}

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

uint32_t tf_gpu_gram_slabs(uint64_t I)
{
    /* at most 384 blocks: about one wave at 3 blocks per SM (the kernel's
     * registers) on a 132-SM device */
    return (uint32_t)std::max<uint64_t>(1, std::min<uint64_t>((I + 127) / 128, 384));
}

uint64_t tf_gpu_gram_partial_count(uint64_t I, uint32_t R)
{
    return (uint64_t)tf_gpu_gram_slabs(I) * R * R;
}

template <typename T>
tf_status tf_gpu_gram_partials(T *A, uint64_t I, uint32_t R, const T *inv, double *gpart,
                               cudaStream_t st)
{
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "small Gram: rank %u is outside 1..%d", R, kSmall);
    const uint32_t S = tf_gpu_gram_slabs(I);
    gram_partials_kernel<T><<<S, kThreads, 0, st>>>(A, I, R, inv, S, gpart);
    TF_CU_LAUNCH("gram_partials_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_gram_finish(const double *gpart, uint64_t I, uint32_t R, T *G, cudaStream_t st)
{
    const uint32_t RR = R * R;
    gram_finish_kernel<T><<<(RR + 31) / 32, dim3(32, 32), 0, st>>>(gpart, tf_gpu_gram_slabs(I), RR, G);
    TF_CU_LAUNCH("gram_finish_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_normalize_partials(const T *A, uint64_t I, uint32_t R, int max_norm, T *lambda, T *inv,
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
tf_status tf_gpu_normalize(T *A, uint64_t I, uint32_t R, int max_norm, T *lambda, T *inv,
                           double *partial, tf_gpu_scalars *sc, cudaStream_t st)
{
    TF_TRY(tf_gpu_normalize_partials(A, I, R, max_norm, lambda, inv, partial, sc, st));
    scale_columns<T><<<grid_for(I * R), kThreads, 0, st>>>(A, I * R, R, inv);
    TF_CU_LAUNCH("scale_columns");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_weighted_inner(const T *A, const T *B, uint64_t I, uint32_t R, const T *w,
                                double *partial, tf_gpu_scalars *sc, cudaStream_t st)
{
    const uint32_t S = tf_gpu_slabs(I);
    TF_TRY((launch_partials<T, OP_DOT>(A, B, I, R, S, partial, st)));
    weighted_finish<T><<<1, kThreads, 0, st>>>(partial, S, R, w, sc);
    TF_CU_LAUNCH("weighted_finish");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_quadratic(const T *V, const T *x, uint32_t R, tf_gpu_scalars *sc, cudaStream_t st)
{
    quadratic_kernel<T><<<1, kThreads, 0, st>>>(V, x, R, sc);
    TF_CU_LAUNCH("quadratic_kernel");
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

template <typename T>
tf_status tf_gpu_small_cholesky(const T *const *G, uint32_t n, uint32_t skip, uint32_t R, T *V,
                                T *W, tf_gpu_scalars *sc, cudaStream_t st)
{
    gram_ptrs<T> p;
    if (n > 16) return tf_fail(TF_ERR_ARG, "Hadamard of %u Grams: at most 16", n);
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "small Cholesky: rank %u is outside 1..%d", R, kSmall);
    for (uint32_t k = 0; k < 16; ++k) p.g[k] = k < n ? G[k] : nullptr;
    small_cholesky_kernel<T><<<1, kThreads, 0, st>>>(p, n, skip, R, V, W, sc);
    TF_CU_LAUNCH("small_cholesky_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_fill(T *x, uint64_t n, T v, cudaStream_t st)
{
    if (n == 0) return TF_OK;
    fill_kernel<T><<<grid_for(n), kThreads, 0, st>>>(x, n, v);
    TF_CU_LAUNCH("fill_kernel");
    return TF_OK;
}

#define TF_DENSE_INSTANTIATE(T)                                                                   \
    template tf_status tf_gpu_hadamard<T>(const T *const *, uint32_t, uint32_t, uint32_t, T *,   \
                                          tf_gpu_scalars *, cudaStream_t);                        \
    template tf_status tf_gpu_symmetrize<T>(T *, uint32_t, cudaStream_t);                        \
    template tf_status tf_gpu_normalize<T>(T *, uint64_t, uint32_t, int, T *, T *, double *,     \
                                           tf_gpu_scalars *, cudaStream_t);                       \
    template tf_status tf_gpu_weighted_inner<T>(const T *, const T *, uint64_t, uint32_t,        \
                                                const T *, double *, tf_gpu_scalars *,            \
                                                cudaStream_t);                                    \
    template tf_status tf_gpu_quadratic<T>(const T *, const T *, uint32_t, tf_gpu_scalars *,     \
                                           cudaStream_t);                                         \
    template tf_status tf_gpu_diag_range<T>(const T *, uint32_t, tf_gpu_scalars *, cudaStream_t); \
    template tf_status tf_gpu_pinv_scale<T>(const T *, const T *, uint32_t, double, T *,         \
                                            cudaStream_t);                                        \
    template tf_status tf_gpu_small_cholesky<T>(const T *const *, uint32_t, uint32_t, uint32_t, T *, \
                                                T *, tf_gpu_scalars *, cudaStream_t);           \
    template tf_status tf_gpu_gram_partials<T>(T *, uint64_t, uint32_t, const T *, double *,    \
                                               cudaStream_t);                                     \
    template tf_status tf_gpu_gram_finish<T>(const double *, uint64_t, uint32_t, T *, cudaStream_t); \
    template tf_status tf_gpu_normalize_partials<T>(const T *, uint64_t, uint32_t, int, T *, T *,  \
                                                    double *, tf_gpu_scalars *, cudaStream_t);     \
    template tf_status tf_gpu_fill<T>(T *, uint64_t, T, cudaStream_t);
TF_DENSE_INSTANTIATE(float)
TF_DENSE_INSTANTIATE(double)
