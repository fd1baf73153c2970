/* SPDX-License-Identifier: BSD-3-Clause */
/* Device helpers shared by the dense kernels of GPU CP-ALS (normalize.cu,
 * fit.cu, gram.cu, solve.cu, small_apply.cu, large_rank.cu; the entry
 * points are declared in dense.cuh): the slab column partials and their
 * in-order totals, last-block completion, block reductions, the Gram
 * pointer packs and their products, the fit's finishing block, the column
 * lambda / scale rule, the launch grid. Internal to src/gpu/cpd.
 *
 * Everything is in an anonymous namespace, as when these kernels were one
 * translation unit: each file that includes it gets its own internal copy
 * of what it uses (separable compilation is off, so a device function must
 * be defined in every file that calls it), and nothing here is exported
 * from the library. The functions that are not templates are inline, so a
 * file emits only those it calls. */
#ifndef TF_GPU_CPD_DENSE_COMMON_CUH
#define TF_GPU_CPD_DENSE_COMMON_CUH
#include <algorithm>

#include "gpu/cpd/dense.cuh"

namespace {

#define TF_WARP_ALL 0xffffffffu

const int kThreads = 256;
const int kSmall = TF_GPU_SMALL_RANK; /* largest rank of the small-rank kernels */

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
__device__ __forceinline__ void column_partials_block(const T *A, const T *B, uint64_t I, uint32_t R, uint32_t S,
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
__global__ void column_partials(const T *A, const T *B, uint64_t I, uint32_t R, uint32_t S, double *part)
{
    column_partials_block<T, OP>(A, B, I, R, S, part);
}

/* Last-block completion: every block calls it after writing its partial
 * results; it returns true in the one block that arrives last, once the
 * others' writes are visible (read them with __ldcg), and resets the
 * counter for the next launch. Fuses a reduction's finishing step into the
 * kernel that computes its partials (one launch fewer on the critical
 * path). */
__device__ inline bool last_block(unsigned *counter)
{
    __shared__ bool last;
    __threadfence(); /* this block's partials are visible before it counts */
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        const unsigned blocks = gridDim.x * gridDim.y;
        last = atomicAdd(counter, 1u) == blocks - 1;
        if (last) *counter = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

template <typename T, int OP>
tf_status launch_partials(const T *A, const T *B, uint64_t I, uint32_t R, uint32_t S, double *part,
                          cudaStream_t st)
{
    column_partials<T, OP><<<dim3(S, (R + 31) / 32), dim3(32, 8), 0, st>>>(A, B, I, R, S, part);
    TF_CU_LAUNCH("column_partials");
    return TF_OK;
}

/* part[0 * stride + e] combined with part[s * stride + e], s = 1 .. S - 1,
 * in slab order, for the NE entries e[q] (ok[q]: wanted). The loads of a
 * chunk of 16 slabs of every entry are all issued before the first is
 * combined: a loop with a runtime bound (S is often below 16 for short
 * factors) ran one L2 round trip per slab, a loop over entries one per
 * entry. __ldcg: the partials may come from other blocks of the same
 * kernel. */
template <int OP, int NE>
__device__ __forceinline__ void slab_totals(const double *part, uint32_t S, uint64_t stride, const uint64_t (&e)[NE],
                                            const bool (&ok)[NE], double (&v)[NE])
{
    constexpr uint32_t C = 16;
#pragma unroll
    for (int q = 0; q < NE; ++q) v[q] = 0.0;
    for (uint32_t s0 = 0; s0 < S; s0 += C) {
        double x[NE][C];
#pragma unroll
        for (int q = 0; q < NE; ++q)
#pragma unroll
            for (uint32_t k = 0; k < C; ++k)
                x[q][k] = ok[q] && s0 + k < S ? __ldcg(part + (uint64_t)(s0 + k) * stride + e[q]) : 0.0;
#pragma unroll
        for (int q = 0; q < NE; ++q)
#pragma unroll
            for (uint32_t k = 0; k < C; ++k)
                if (s0 + k < S) v[q] = s0 + k == 0 ? x[q][k] : combine<OP>(v[q], x[q][k]);
    }
}

template <int OP>
__device__ __forceinline__ double slab_total(const double *part, uint32_t S, uint64_t stride, uint64_t e)
{
    const uint64_t ee[1] = {e};
    const bool ok[1] = {true};
    double v[1];
    slab_totals<OP, 1>(part, S, stride, ee, ok, v);
    return v[0];
}

/* Column r's total over the slabs (part[s * R + r]), in slab order. */
template <int OP>
__device__ __forceinline__ double column_total(const double *part, uint32_t S, uint32_t R, uint32_t r)
{
    return slab_total<OP>(part, S, R, r);
}

/* Block-wide sum (or, with max, NaN-blind maximum) of one double per
 * thread in a fixed tree order; NT = blockDim.x, a power of two. Every
 * thread gets the result; the buffer may be reused after a barrier. */
template <int NT = kThreads>
__device__ double block_reduce(double v, bool max = false)
{
    __shared__ double sh[NT];
    const int t = (int)(threadIdx.x + blockDim.x * threadIdx.y); /* blocks of (32, NT / 32) too */
    sh[t] = v;
    __syncthreads();
    for (int w = NT / 2; w > 0; w >>= 1) {
        if (t < w) sh[t] = max ? fmax(sh[t], sh[t + w]) : sh[t] + sh[t + w];
        __syncthreads();
    }
    return sh[0];
}

__device__ __forceinline__ uint32_t flat_thread() { return threadIdx.x + blockDim.x * threadIdx.y; }

__device__ inline double block_sum(double v) { return block_reduce<kThreads>(v); }

/* block_sum of a and of b at once (the same tree order for each: the
 * results equal two block_sum calls, with half the barriers); buf: 2 *
 * kThreads doubles of shared memory, free once every thread has arrived. */
__device__ inline void block_sum2(double &a, double &b, double *buf)
{
    double *sa = buf, *sb = buf + kThreads;
    const int t = (int)flat_thread();
    __syncthreads(); /* buf's previous use is over */
    sa[t] = a;
    sb[t] = b;
    __syncthreads();
    for (int w = kThreads / 2; w > 0; w >>= 1) {
        if (t < w) {
            sa[t] += sa[t + w];
            sb[t] += sb[t + w];
        }
        __syncthreads();
    }
    a = sa[0];
    b = sb[0];
}

/* Column totals of OP_DOT partials (part[s * R + c], S slabs) by a whole
 * block of kThreads threads, into buf[c] (c < R <= kThreads; buf: kThreads
 * doubles of shared memory): P = kThreads / R threads per column each sum
 * a contiguous range of slabs in order (16 loads in flight), then the P
 * range sums are added in order. Deterministic; one thread per column
 * walking hundreds of slabs took one L2 round trip per 16 (~20 us for
 * wordnet30's 460 slabs). Ends with a barrier. */
__device__ inline void column_totals_block(const double *part, uint32_t S, uint32_t R, double *buf)
{
    const uint32_t t = flat_thread(), P = kThreads / R, c = t % R, y = t / R;
    double v = 0.0;
    if (y < P) {
        const uint32_t lo = (uint32_t)((uint64_t)S * y / P), hi = (uint32_t)((uint64_t)S * (y + 1) / P);
        if (lo < hi) v = slab_total<OP_DOT>(part + (uint64_t)lo * R, hi - lo, R, c);
    }
    buf[t] = v;
    __syncthreads();
    if (t < R) { /* in place: thread t reads buf[t] before it writes it, the others read buf[>= R] */
        double a = buf[t];
        for (uint32_t k = 1; k < P; ++k) a += buf[k * R + t];
        buf[t] = a;
    }
    __syncthreads();
}

template <typename T>
struct gram_ptrs {
    const T *g[16];
};

/* prod over k < n, k != skip, of p.g[k][e] (null pointers count as 1).
 * The loop is unrolled so that p's pointers are read with constant
 * indices from parameter space (a variable index copies the whole array
 * to local memory in every thread). */
template <typename T>
__device__ __forceinline__ T product_at(const gram_ptrs<T> &p, uint32_t n, uint32_t skip, uint64_t e)
{
    T v = T(1);
#pragma unroll
    for (uint32_t k = 0; k < 16; ++k)
        if (k < n && k != skip && p.g[k]) v *= p.g[k][e];
    return v;
}

/* Column r's weight of the inner product: x (its weight) times the ns
 * scale vectors' entries, in double. */
template <typename T>
__device__ __forceinline__ double scaled_weight(double x, const gram_ptrs<T> &sc_ptr, uint32_t ns, uint32_t r)
{
#pragma unroll
    for (uint32_t k = 0; k < 16; ++k)
        if (k < ns) x *= (double)sc_ptr.g[k][r];
    return x;
}

/* Row i's term of x^T V x: x(i) * sum_j V(i, j) x(j), j in order; v(e) =
 * V(e / R, e % R), x(j) the vector. */
template <typename VF, typename XF>
__device__ __forceinline__ double quadratic_term(VF v, XF x, uint32_t R, uint32_t i)
{
    double row = 0.0;
#pragma unroll 8
    for (uint32_t j = 0; j < R; ++j) row += (double)v((uint64_t)i * R + j) * x(j);
    return x(i) * row;
}

/* Both fit terms from the slab dot partials, in one block of kThreads
 * threads: sc->inner as weighted_finish, sc->knorm2 = w^T (Hadamard of
 * G[0..n-1]) w as hadamard_kernel + quadratic_kernel; V: shared memory
 * for the Hadamard product, max(R * R, 2 * kThreads) doubles. It runs at
 * the end of the last block, on the critical path of every CP-ALS
 * iteration, so it keeps the L2 round trips few: V's loads issued in
 * batches, the dot partials summed by the whole block (column_totals_block:
 * range sums added in order, a different but fixed order from
 * weighted_finish's), the two block sums sharing their barriers. */
template <typename T>
__device__ void fit_finish_block(const double *dots, uint32_t S, uint32_t R, const T *w, const gram_ptrs<T> &scales,
                                 const gram_ptrs<T> &G, uint32_t n, double *V, tf_gpu_scalars *sc)
{
    __shared__ double xs[kSmall];
    /* V's entries four per thread at a time (R <= 32: one batch), their
     * loads issued before the first product is stored */
    constexpr int EB = 4;
    for (uint32_t e0 = flat_thread(); e0 < R * R; e0 += EB * kThreads) {
        double v[EB];
#pragma unroll
        for (int q = 0; q < EB; ++q) {
            const uint32_t e = e0 + q * kThreads;
            v[q] = e < R * R ? (double)product_at(G, n, n, e) : 0.0;
        }
#pragma unroll
        for (int q = 0; q < EB; ++q)
            if (e0 + q * kThreads < R * R) V[e0 + q * kThreads] = v[q];
    }
    __shared__ double dt[kThreads];
    const uint32_t r = flat_thread(); /* R <= kSmall <= kThreads: one column per thread */
    double wr = 0.0;
    if (r < R) {
        xs[r] = (double)w[r];
        wr = scaled_weight(xs[r], scales, n, r);
    }
    column_totals_block(dots, S, R, dt); /* its barriers publish V and xs */
    double inner = r < R ? wr * dt[r] : 0.0;
    double quad = r < R ? quadratic_term([&](uint64_t e) { return V[e]; }, [&](uint32_t j) { return xs[j]; }, R, r)
                        : 0.0;
    block_sum2(inner, quad, V); /* V is read */
    if (flat_thread() == 0) {
        sc->inner = inner;
        sc->knorm2 = quad;
        if (!isfinite(inner) || !isfinite(quad)) sc->nonfinite = 1;
    }
}

/* (the shared-memory shapes of gram.cu's and solve.cu's kernels) */
constexpr int max_of(int a, int b) { return a > b ? a : b; }

/* A column's lambda from x, its squared 2-norm (norm 1) or its max |a|
 * (norm 2: max(x, 1)), and the column scale 1 / lambda (1 for a zero
 * column), as the CPU's normalisation sets them. */
template <typename T>
__device__ __forceinline__ T column_lambda(double x, int norm)
{
    return norm == 2 ? (T)(x > 1.0 ? x : 1.0) : (T)sqrt(x);
}
template <typename T>
__device__ __forceinline__ T scale_of(T lambda)
{
    return lambda > T(0) ? T(1) / lambda : T(1);
}

inline unsigned grid_for(uint64_t n)
{
    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n + kThreads - 1) / kThreads, 4096));
}

} // namespace
#endif
