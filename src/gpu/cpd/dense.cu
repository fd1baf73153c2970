/* SPDX-License-Identifier: BSD-3-Clause */
/* Small dense kernels of GPU CP-ALS; see dense.cuh. */
#include <algorithm>

#include <mma.h>

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
__device__ bool last_block(unsigned *counter)
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

__device__ double block_sum(double v) { return block_reduce<kThreads>(v); }

/* block_sum of a and of b at once (the same tree order for each: the
 * results equal two block_sum calls, with half the barriers); buf: 2 *
 * kThreads doubles of shared memory, free once every thread has arrived. */
__device__ void block_sum2(double &a, double &b, double *buf)
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
__device__ void column_totals_block(const double *part, uint32_t S, uint32_t R, double *buf)
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

/* ---- small-rank solve (see tf_gpu_small_solve in dense.cuh) */
const int kSolveThreads = 1024; /* one element of a 32 x 32 matrix per thread */

/* Pseudo-inverse of the symmetric R x R matrix in S (destroyed) by cyclic
 * Jacobi in one block: rotations of disjoint pairs (round-robin order) are
 * applied in parallel, columns then rows; jq (global, row-major) collects
 * the eigenvectors. Out[i][j] = P_i sum_k Q_ik Q_jk / w_k over the kept
 * eigenvalues (w_k > rcond * max|w|). Rarely run: clarity over speed. */
template <typename T>
__device__ void small_pinv_jacobi(double (*S)[kSmall + 1], uint32_t R, double rcond, const double *P, double *jq,
                                  T *W)
{
    __shared__ double cs[kSmall / 2 + 1], sn[kSmall / 2 + 1];
    __shared__ uint32_t pp[kSmall / 2 + 1], qq[kSmall / 2 + 1];
    __shared__ int done;
    const uint32_t t = threadIdx.x, RR = R * R, Rp = R + (R & 1), half = Rp / 2;
    for (uint32_t e = t; e < RR; e += blockDim.x) jq[e] = e / R == e % R ? 1.0 : 0.0;
    __syncthreads();
    for (int sweep = 0; sweep < 64; ++sweep) {
        double off = 0.0, dia = 0.0;
        for (uint32_t e = t; e < RR; e += blockDim.x) {
            const double v = S[e / R][e % R];
            if (e / R == e % R) dia += v * v;
            else off += v * v;
        }
        off = block_reduce<kSolveThreads>(off);
        __syncthreads(); /* the buffer is reused */
        dia = block_reduce<kSolveThreads>(dia);
        if (t == 0) done = !(off > 1e-32 * dia); /* also stops on NaN */
        __syncthreads();
        if (done) break;
        for (uint32_t step = 0; step + 1 < Rp; ++step) {
            if (t < half) {
                /* circle method: position 0 fixed, the others rotate */
                auto at = [&](uint32_t pos) { return pos == 0 ? 0u : 1u + (pos - 1 + step) % (Rp - 1); };
                const uint32_t x = at(t), y = at(Rp - 1 - t);
                const uint32_t p = x < y ? x : y, q = x < y ? y : x;
                double c = 1.0, s = 0.0;
                if (q < R && S[p][q] != 0.0) {
                    const double tau = (S[q][q] - S[p][p]) / (2.0 * S[p][q]);
                    const double tt = (tau >= 0.0 ? 1.0 : -1.0) / (fabs(tau) + sqrt(1.0 + tau * tau));
                    c = 1.0 / sqrt(1.0 + tt * tt);
                    s = tt * c;
                }
                pp[t] = p;
                qq[t] = q;
                cs[t] = c;
                sn[t] = s;
            }
            __syncthreads();
            /* (a, b) <- (c a - s b, s a + c b) */
            auto rotate = [](double &a, double &b, double c, double s) {
                const double x = a, y = b;
                a = c * x - s * y;
                b = s * x + c * y;
            };
            for (uint32_t x = t; x < half * R; x += blockDim.x) { /* S <- S J, Q <- Q J */
                const uint32_t k = x / R, i = x % R, p = pp[k], q = qq[k];
                if (q >= R) continue;
                rotate(S[i][p], S[i][q], cs[k], sn[k]);
                rotate(jq[i * R + p], jq[i * R + q], cs[k], sn[k]);
            }
            __syncthreads();
            for (uint32_t x = t; x < half * R; x += blockDim.x) { /* S <- J^T S */
                const uint32_t k = x / R, j = x % R, p = pp[k], q = qq[k];
                if (q >= R) continue;
                rotate(S[p][j], S[q][j], cs[k], sn[k]);
            }
            __syncthreads();
        }
    }
    __shared__ double winv[kSmall];
    double m = 0.0;
    for (uint32_t k = t; k < R; k += blockDim.x) m = fmax(m, fabs(S[k][k]));
    __syncthreads(); /* the reduction buffer is reused */
    const double cutoff = rcond * block_reduce<kSolveThreads>(m, true);
    for (uint32_t k = t; k < R; k += blockDim.x) winv[k] = S[k][k] > cutoff ? 1.0 / S[k][k] : 0.0;
    __syncthreads();
    for (uint32_t e = t; e < RR; e += blockDim.x) {
        const uint32_t i = e / R, j = e % R;
        double v = 0.0;
        for (uint32_t k = 0; k < R; ++k) v += jq[i * R + k] * winv[k] * jq[j * R + k];
        W[e] = (T)(P[i] * v);
    }
}

/* Gauss-Jordan inversion for R <= 32 with one matrix element per thread
 * of a 1024-thread block, in registers: thread (i, j) = (warp, lane) holds
 * v = S[i][j] (the padding beyond R is the identity and never changes).
 * At step k, warp k takes the pivot p = S[k][k] by a shuffle and publishes
 * the scaled pivot row rk = S[k][:] / p (with 1/p in place of the pivot)
 * and p, the lanes k of all warps publish the old column k, all through
 * shared memory, double buffered (one barrier per step); then every
 * thread updates its element with one FMA:
 *   row k: v = rk[j];  else v = (j == k ? 0 : v) - S[i][k] rk[j].
 * Only the pivot warp divides: the chain per step is a shuffle, a
 * reciprocal, a store, a barrier, loads and an FMA. (Every thread dividing
 * and tracking the pivot range issued ~70 instructions per warp per step,
 * 15 us on an H200; one warp holding the matrix in 32 registers per lane,
 * ~250 per step, 24 us.) The pivots are the Cholesky factor's squared
 * diagonal (Schur complements): one elimination gives potrf's info, the
 * diagonal range and V^-1. Returns (uniformly) whether V passed the
 * positive-definiteness test; then W = diag(P) V^-1 is written. */
template <typename T>
__device__ int block_gauss_jordan(double v, uint32_t R, double rcond, const double *P, T *W, tf_gpu_scalars *sc)
{
    __shared__ double row[2][32], col[2][32], piv[32];
    __shared__ int spd;
    const uint32_t i = threadIdx.x >> 5, j = threadIdx.x & 31;
    uint32_t k = 0;
    for (; k < R; ++k) {
        const uint32_t b = k & 1;
        if (i == k) {
            const double p = __shfl_sync(TF_WARP_ALL, v, k);
            const double ip = 1.0 / p;
            row[b][j] = j == k ? ip : v * ip;
            if (j == 0) piv[k] = p;
        }
        if (j == k) col[b][i] = v;
        __syncthreads();
        if (!(piv[k] > 0.0)) break; /* as potrf: not positive, or NaN (uniform) */
        const double rk = row[b][j];
        v = i == k ? rk : (j == k ? 0.0 : v) - col[b][i] * rk;
    }
    double lo = 0.0, hi = 0.0; /* the range of the accepted pivots (k <= 32): warp 0, by shuffles */
    if (i == 0) {
        lo = j < k ? piv[j] : INFINITY;
        hi = j < k ? piv[j] : 0.0;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            lo = fmin(lo, __shfl_xor_sync(TF_WARP_ALL, lo, o));
            hi = fmax(hi, __shfl_xor_sync(TF_WARP_ALL, hi, o));
        }
        if (!k) lo = 0.0;
    }
    if (threadIdx.x == 0) {
        const int bad = k < R ? (int)k + 1 : 0;
        const double ratio2 = hi > 0.0 ? lo / hi : 0.0;
        spd = !bad && ratio2 > rcond;
        sc->info = bad;
        sc->diag_min = sqrt(lo);
        sc->diag_max = sqrt(hi);
        if (!spd) sc->pinv += 1;
    }
    __syncthreads();
    if (spd && i < R && j < R) W[i * R + j] = (T)(P[i] * v);
    return spd;
}

/* What a solve reads of the other modes (k < n, k != skip): P[r] = the
 * product of their scales (in double) and V[e] = the Hadamard product of
 * their Grams (in T), in mode order. Mode g (g < n; none when g >= n) is
 * read from shared memory instead (gs: its Gram as doubles, exactly its T
 * values; sv: its scale), for the Gram + solve kernel. References to the
 * kernel's parameters: indexed with constant k after unrolling, the
 * pointer arrays stay in parameter space. */
template <typename T>
struct solve_inputs {
    const gram_ptrs<T> &G, &scales;
    uint32_t n, skip, g;
    const double *gs, *sv;
    __device__ double p(uint32_t r) const
    {
        double v = 1.0;
#pragma unroll
        for (uint32_t k = 0; k < 16; ++k)
            if (k < n && k != skip && (k == g || scales.g[k])) v *= k == g ? sv[r] : (double)scales.g[k][r];
        return v;
    }
    __device__ T h(uint64_t e) const
    {
        T v = T(1);
#pragma unroll
        for (uint32_t k = 0; k < 16; ++k)
            if (k < n && k != skip && (k == g || G.g[k])) v *= k == g ? (T)gs[e] : G.g[k][e];
        return v;
    }
};

/* The solve of tf_gpu_small_solve in one block of kSolveThreads threads.
 * S: kSmall x (kSmall + 1) doubles of shared scratch, not touched before
 * every in.h call has returned (gram_solve_kernel keeps its new Gram
 * there). */
template <typename T>
__device__ void small_solve_block(const solve_inputs<T> &in, uint32_t R, double rcond, T *V, T *W, double *jq,
                                  tf_gpu_scalars *sc, double (*S)[kSmall + 1])
{
    __shared__ double rowk[kSmall], colk[kSmall], piv[kSmall], P[kSmall];
    __shared__ int bad, spd;
    const uint32_t t = threadIdx.x, RR = R * R;
    if (t == 0) bad = 0;
    for (uint32_t r = t; r < R; r += blockDim.x) P[r] = in.p(r);
    if (R <= 32) { /* the common case: an element per thread, in registers */
        const uint32_t i = t >> 5, j = t & 31;
        double v = i == j ? 1.0 : 0.0;
        if (i < R && j < R) {
            const T h = in.h(i * R + j);
            V[i * R + j] = h;
            if (!isfinite((double)h)) sc->nonfinite = 1;
            v = (double)h;
        }
        __syncthreads(); /* P */
        if (block_gauss_jordan<T>(v, R, rcond, P, W, sc)) return;
        for (uint32_t e = t; e < RR; e += blockDim.x) S[e / R][e % R] = (double)V[e]; /* this block wrote V */
        __syncthreads();
        small_pinv_jacobi<T>(S, R, rcond, P, jq, W);
        return;
    }
    for (uint32_t e = t; e < RR; e += blockDim.x) {
        const T v = in.h(e);
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
        const double ratio = hi > 0.0 ? lo / hi : 0.0;
        spd = !bad && ratio * ratio > rcond; /* as the host's check on potrf + the diagonal */
        if (!spd) sc->pinv += 1;
    }
    __syncthreads();
    if (spd) {
        for (uint32_t e = t; e < RR; e += blockDim.x) W[e] = (T)(P[e / R] * S[e / R][e % R]);
        return;
    }
    for (uint32_t e = t; e < RR; e += blockDim.x) S[e / R][e % R] = (double)V[e]; /* this block wrote V */
    __syncthreads();
    small_pinv_jacobi<T>(S, R, rcond, P, jq, W);
}

template <typename T>
__global__ void __launch_bounds__(kSolveThreads) small_solve_kernel(gram_ptrs<T> G, gram_ptrs<T> scales,
                                                                    uint32_t n, uint32_t skip, uint32_t R,
                                                                    double rcond, T *V, T *W, double *jq,
                                                                    tf_gpu_scalars *sc)
{
    __shared__ double S[kSmall][kSmall + 1];
    const solve_inputs<T> in = {G, scales, n, skip, 16, nullptr, nullptr};
    small_solve_block<T>(in, R, rcond, V, W, jq, sc, S);
}

/* ---- small-rank Gram (see tf_gpu_gram_partials in dense.cuh)
 *
 * Slab blockIdx.x of A is walked in tiles of NR rows: a tile is loaded
 * coalesced, converted to double and zero-padded to R8 = 8 NB columns in
 * shared memory; the Gram's 8 x 8 blocks are accumulated with FP64 tensor
 * core MMAs (wmma m8n8k4: A^T's column block ib times A's column block jb
 * over 4 rows at a time). Warps split the i-blocks (PER per warp, at most
 * 16 accumulator fragments) and the 4-row steps (NPH phases); at the end
 * the phases are added in a fixed order through shared memory, so the slab
 * partial is deterministic. The slab's column max |a| is kept while the
 * tiles are staged. (A CUDA-core version with 4 x 4 register tiles was
 * shared-memory bound: 0.5 ms for 2M x 32 doubles on an H200.) */
constexpr int max_of(int a, int b) { return a > b ? a : b; }
template <int NB>
struct gram_shape {
    static constexpr int R8 = 8 * NB;
    static constexpr int PER = NB <= 4 ? NB : 16 / NB;      /* i-blocks per warp   */
    static constexpr int NG = (NB + PER - 1) / PER;          /* warp groups         */
    static constexpr int NPH = (kThreads / 32) / NG;         /* step phases         */
    static constexpr int NR = NB <= 4 ? 64 : 32;             /* rows per tile (registers) */
    static constexpr int LD = R8 + 4;                        /* tile row stride     */
    static constexpr int PF = (NR * R8 + kThreads - 1) / kThreads; /* tile slots per thread */
    /* a thread's slots share one column when R8 divides the block size */
    static constexpr int NCM = kThreads % R8 == 0 ? 1 : PF;
    static constexpr int NSLOT = NCM == 1 ? kThreads : NR * R8; /* column slots staged */
    /* phases whose R8 x R8 results are combined per round (32 KB) */
    static constexpr int REG = 4096 / (R8 * R8) < 1 ? 1 : 4096 / (R8 * R8) > NPH ? NPH : 4096 / (R8 * R8);
    /* doubles: the tile, then the combine rounds, then the column slots */
    static constexpr int BUF = max_of(max_of(NR * LD, REG * R8 * R8), 2 * NSLOT);
};

template <typename T>
__device__ void gram_scale_block(const double *gpart, uint32_t S, uint32_t R, int norm, int sum, double *graw,
                                 T *s, T *lambda, T *G, tf_gpu_scalars *sc, double *gsh);

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

/* The finishing step fused into gram_partials_kernel (few slabs): the
 * last block runs gram_scale_block with sum = 1. counter == NULL: no.
 * With M (the last mode of an iteration), the same pass also forms the
 * fit terms' column dot products sum_i M(i,c) A(i,c) per slab, and the
 * last block then sets sc->inner and sc->knorm2 as tf_gpu_fit_terms would
 * (weights: the new lambda times all scales; G: all n Grams, the new one
 * included). */
template <typename T>
struct gram_fin {
    unsigned *counter;
    int norm;
    double *graw;
    T *s, *lambda, *G;
    tf_gpu_scalars *sc;
    const T *M;             /* fit: MTTKRP output of this mode, or NULL */
    gram_ptrs<T> scales, Gs; /* fit: every mode's scales and Grams */
    uint32_t n;             /* fit: modes */
};

template <typename T, int NB>
__global__ void __launch_bounds__(kThreads, 2) gram_partials_kernel(const T *A, uint64_t I, uint32_t R,
                                                                 uint32_t S, double *gpart, const gram_fin<T> fin)
{
    using namespace nvcuda;
    typedef gram_shape<NB> Sh;
    constexpr int R8 = Sh::R8, PER = Sh::PER, NG = Sh::NG, NPH = Sh::NPH, NR = Sh::NR, LD = Sh::LD,
                  PF = Sh::PF;
    __shared__ __align__(32) double tile[Sh::BUF];
    const uint32_t t = threadIdx.x, w = t / 32, g = w % NG, ph = w / NG;
    const bool active = ph < (uint32_t)NPH;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc[PER][NB];
#pragma unroll
    for (int i = 0; i < PER; ++i)
#pragma unroll
        for (int j = 0; j < NB; ++j) wmma::fill_fragment(acc[i][j], 0.0);
    double cmax[Sh::NCM], cdot[Sh::NCM]; /* running max |a| and sum of m a of tile slot u's column */
#pragma unroll
    for (int u = 0; u < Sh::NCM; ++u) cmax[u] = cdot[u] = 0.0;
    const bool fit = fin.M != nullptr;
    const uint64_t lo = I * blockIdx.x / S, hi = I * (blockIdx.x + 1) / S;
    /* the next tile (and with the fit, M's where registers allow: R <= 32)
     * is fetched into registers while this one is reduced */
    constexpr bool PM = NB <= 4;
    T pv[PF], pm[PM ? PF : 1];
    auto fetch = [&](uint64_t r0) {
        const uint64_t nr = min((uint64_t)NR, hi - r0);
#pragma unroll
        for (int u = 0; u < PF; ++u) {
            const uint32_t x = t + u * kThreads, r = x / R8, c = x % R8;
            const bool in = x < (uint32_t)(NR * R8) && r < nr && c < R;
            pv[u] = in ? A[(r0 + r) * R + c] : T(0);
            if constexpr (PM) pm[u] = in && fit ? fin.M[(r0 + r) * R + c] : T(0);
        }
    };
    if (lo < hi) fetch(lo);
    for (uint64_t r0 = lo; r0 < hi; r0 += NR) {
        const uint32_t nr = (uint32_t)min((uint64_t)NR, hi - r0);
        __syncthreads(); /* the previous tile is consumed */
#pragma unroll
        for (int u = 0; u < PF; ++u) {
            const uint32_t x = t + u * kThreads;
            if (x < (uint32_t)(NR * R8)) {
                const double d = (double)pv[u]; /* zero past nr and in the padding */
                cmax[Sh::NCM == 1 ? 0 : u] = max_abs(cmax[Sh::NCM == 1 ? 0 : u], d);
                tile[(x / R8) * LD + x % R8] = d;
                if (fit && x / R8 < nr && x % R8 < R)
                    cdot[Sh::NCM == 1 ? 0 : u] += /* (pm has one slot without PM) */
                        d * (double)(PM ? pm[PM ? u : 0] : fin.M[(r0 + x / R8) * R + x % R8]);
            }
        }
        __syncthreads();
        if (r0 + NR < hi) fetch(r0 + NR);
        if (active)
            for (uint32_t k0 = 4 * ph; k0 < nr; k0 += 4 * NPH) { /* rows past nr are zeros */
                wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> b[NB];
#pragma unroll
                for (int j = 0; j < NB; ++j) wmma::load_matrix_sync(b[j], tile + k0 * LD + 8 * j, LD);
#pragma unroll
                for (int i = 0; i < PER; ++i) {
                    const int ib = (int)g * PER + i;
                    if (ib >= NB) break;
                    /* A^T block (ib, rows k0..k0+3): column-major view of the tile */
                    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::col_major> a;
                    wmma::load_matrix_sync(a, tile + k0 * LD + 8 * ib, LD);
#pragma unroll
                    for (int j = 0; j < NB; ++j) wmma::mma_sync(acc[i][j], a, b[j], acc[i][j]);
                }
            }
    }
    /* Phases 0, 1, ... store their blocks, REG phases per round into
     * regions of their own; each thread adds its entries of the R8 x R8
     * result in registers, in phase order. */
    constexpr int PE = (R8 * R8 + kThreads - 1) / kThreads, REG = Sh::REG, RS = R8 * R8;
    double sum[PE];
#pragma unroll
    for (int q = 0; q < PE; ++q) sum[q] = 0.0;
    for (int p0 = 0; p0 < NPH; p0 += REG) {
        __syncthreads();
        if (active && ph >= (uint32_t)p0 && ph < (uint32_t)(p0 + REG))
#pragma unroll
            for (int i = 0; i < PER; ++i) {
                const int ib = (int)g * PER + i;
                if (ib >= NB) break;
#pragma unroll
                for (int j = 0; j < NB; ++j)
                    wmma::store_matrix_sync(tile + (ph - p0) * RS + (8 * ib) * R8 + 8 * j, acc[i][j], R8,
                                            wmma::mem_row_major);
            }
        __syncthreads();
        const int np = NPH - p0 < REG ? NPH - p0 : REG;
#pragma unroll
        for (int q = 0; q < PE; ++q) {
            const uint32_t e = t + q * kThreads;
            if (e < (uint32_t)RS)
                for (int p = 0; p < np; ++p) sum[q] += tile[p * RS + e];
        }
    }
#pragma unroll
    for (int q = 0; q < PE; ++q) {
        const uint32_t e = t + q * kThreads, i = e / R8, j = e % R8;
        if (e < (uint32_t)(R8 * R8) && i < R && j < R) gpart[(uint64_t)blockIdx.x * R * R + i * R + j] = sum[q];
    }
    /* Per-column slot values (slot x holds a running max or sum of column
     * x % R8), the maxima and (fit) the dot products staged together: each
     * column's slots reduced into gpart's maxima and the fit's dots. */
    constexpr int NSLOT = Sh::NSLOT;
    __syncthreads();
#pragma unroll
    for (int u = 0; u < Sh::NCM; ++u) {
        const uint32_t x = t + u * kThreads;
        if (x < (uint32_t)NSLOT) {
            tile[x] = cmax[u];
            if (fit) tile[NSLOT + x] = cdot[u];
        }
    }
    __syncthreads();
    double *dots = gpart + (uint64_t)S * R * (R + 1); /* fit: slab x column dot products */
    for (uint32_t c = t; c < R; c += kThreads) {
        double m = 0.0, d = 0.0;
        for (uint32_t r = 0; r < (uint32_t)(NSLOT / R8); ++r) {
            m = max_abs(m, tile[r * R8 + c]);
            if (fit) d += tile[NSLOT + r * R8 + c];
        }
        gpart[(uint64_t)S * R * R + (uint64_t)blockIdx.x * R + c] = m; /* column maxima */
        if (fit) dots[(uint64_t)blockIdx.x * R + c] = d;
    }
    /* (last_block's barrier: the slots are read before tile holds G_raw) */
    if (!fin.counter || !last_block(fin.counter)) return;
    gram_scale_block<T>(gpart, S, R, fin.norm, 1, fin.graw, fin.s, fin.lambda, fin.G, fin.sc, tile);
    if (!fit) return;
    __syncthreads(); /* lambda, s and G of this mode are written, tile is read */
    fit_finish_block<T>(dots, S, R, fin.lambda, fin.scales, fin.Gs, fin.n, tile, fin.sc);
}

/* graw[e] = sum of the slab partials: block (32, 32) over 32 entries,
 * thread (x, y) sums slabs y*S/32 .. in order, then the 32 chunk sums are
 * added in order (deterministic). */
__global__ void gram_sum_kernel(const double *gpart, uint32_t S, uint32_t RR, double *graw)
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
        graw[e] = tot;
    }
}

/* One block: with `sum`, first graw = the slab partials summed in order
 * (few slabs: one launch instead of two); then lambda and the scales
 * (norm 1: 2-norm from the Gram's diagonal, 2: max(max|a|, 1) from the slab
 * maxima; 0: keep s), and G = diag(s) G_raw diag(s). gsh: R*R doubles of
 * shared memory holding G_raw for the last step (no reload of graw); the
 * Gram's slab partials are read two entries at a time (one L2 round trip
 * per batch instead of one per entry). */
template <typename T>
__device__ void gram_scale_block(const double *gpart, uint32_t S, uint32_t R, int norm, int sum, double *graw,
                                 T *s, T *lambda, T *G, tf_gpu_scalars *sc, double *gsh)
{
    __shared__ double sv[kSmall];
    const uint32_t RR = R * R, t = threadIdx.x;
    const double *cmax = gpart + (uint64_t)S * RR;
    /* column t's value (R <= kSmall <= blockDim.x) */
    double x = 0.0;
    if (t < R) x = norm == 2 ? column_total<OP_MAXABS>(cmax, S, R, t) : norm == 0 ? (double)s[t] : 0.0;
    constexpr int NE = 2;
    for (uint32_t e0 = t; e0 < RR; e0 += NE * blockDim.x) {
        uint64_t e[NE];
        bool ok[NE];
        double v[NE];
#pragma unroll
        for (int q = 0; q < NE; ++q) {
            e[q] = e0 + q * blockDim.x;
            ok[q] = e[q] < RR;
        }
        if (sum) {
            slab_totals<OP_SUMSQ, NE>(gpart, S, RR, e, ok, v); /* written by other blocks when fused */
        } else {
#pragma unroll
            for (int q = 0; q < NE; ++q) v[q] = ok[q] ? graw[e[q]] : 0.0;
        }
#pragma unroll
        for (int q = 0; q < NE; ++q)
            if (ok[q]) {
                if (sum) graw[e[q]] = v[q];
                gsh[e[q]] = v[q];
            }
    }
    __syncthreads(); /* gsh is read across threads below */
    if (t < R) {
        double v = x;
        if (norm) {
            if (norm == 1) x = gsh[(uint64_t)t * R + t];
            if (!isfinite(x)) sc->nonfinite = 1;
            const T lam = column_lambda<T>(x, norm), inv = scale_of(lam);
            lambda[t] = lam;
            s[t] = inv;
            v = (double)inv;
        }
        sv[t] = v;
    }
    __syncthreads();
    for (uint32_t e = t; e < RR; e += blockDim.x) {
        const T g = (T)(sv[e / R] * gsh[e] * sv[e % R]);
        if (!isfinite((double)g)) sc->nonfinite = 1;
        G[e] = g;
    }
}

/* graw already summed (gram_sum_kernel) */
template <typename T>
__global__ void gram_scale_kernel(const double *gpart, uint32_t S, uint32_t R, int norm, double *graw, T *s,
                                  T *lambda, T *G, tf_gpu_scalars *sc)
{
    __shared__ double gsh[kSmall * kSmall];
    gram_scale_block<T>(gpart, S, R, norm, 0, graw, s, lambda, G, sc, gsh);
}

/* gram_scale_kernel (graw from gram_sum_kernel) and then, in the same
 * block, the fit terms from the dot partials gram_partials_kernel formed
 * beside the Gram's (tf_gpu_gram_fit with many slabs) */
template <typename T>
__global__ void gram_scale_fit_kernel(const double *gpart, uint32_t S, uint32_t R, const gram_fin<T> fin)
{
    __shared__ double buf[kSmall * kSmall];
    gram_scale_block<T>(gpart, S, R, fin.norm, 0, fin.graw, fin.s, fin.lambda, fin.G, fin.sc, buf);
    __syncthreads(); /* lambda, s and G are written, buf is read */
    fit_finish_block<T>(gpart + (uint64_t)S * R * (R + 1), S, R, fin.lambda, fin.scales, fin.Gs, fin.n, buf, fin.sc);
}

/* ---- a short factor's Gram fused with the next solve (tf_gpu_gram_solve)
 *
 * Raw Gram and column max |a| of A (I x R row-major, R <= 32) in one
 * block of kSolveThreads threads: tiles of NR rows staged as doubles
 * (zero-padded to R8 = 8 NB columns) while the next D tiles are in flight
 * in registers (one tile's MMAs are far too short to hide an L2 round
 * trip); warp w accumulates 8 x 8 block w % NBLK of A^T A by FP64 MMAs
 * (m8n8k4) over the 4-row steps of phase w / NBLK; the phases are added in
 * a fixed order. Into gs (R x R) and cm (R); buf: SCRATCH doubles of
 * scratch. Measured on an H200 (clock64 inside the kernel): ~5000 cycles
 * for one tile, ~2700 more per 64 rows (the MMA chains of 32 warps on one
 * SM), so CP-ALS uses it for short factors only. */
template <int NB>
struct short_gram_shape {
    static constexpr int R8 = 8 * NB, NR = 64, LD = R8 + 4, NBLK = NB * NB;
    static constexpr int NPH = (kSolveThreads / 32) / NBLK;                 /* step phases   */
    static constexpr int PF = (NR * R8 + kSolveThreads - 1) / kSolveThreads; /* slots a thread */
    static constexpr int NCM = kSolveThreads % R8 == 0 ? 1 : PF;             /* column maxima */
    static constexpr int NSLOT = NCM == 1 ? kSolveThreads : NR * R8;
    static constexpr int PHASES = NPH * NBLK * 64;
    static constexpr int TILE = NR * LD;
    static constexpr int SCRATCH = max_of(max_of(TILE, PHASES), NSLOT); /* tiles, then phases, then maxima */
};

template <typename T, int NB>
__device__ void short_gram_block(const T *A, uint32_t I, uint32_t R, double *buf, double *gs, double *cm)
{
    using namespace nvcuda;
    typedef short_gram_shape<NB> Sh;
    constexpr int R8 = Sh::R8, NR = Sh::NR, LD = Sh::LD, NBLK = Sh::NBLK, NPH = Sh::NPH, PF = Sh::PF;
    constexpr int D = 4;
    const uint32_t t = threadIdx.x, w = t / 32, blk = w % NBLK, ph = w / NBLK, ib = blk / NB, jb = blk % NB;
    const bool active = ph < (uint32_t)NPH;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc;
    wmma::fill_fragment(acc, 0.0);
    double cmax[Sh::NCM];
#pragma unroll
    for (int u = 0; u < Sh::NCM; ++u) cmax[u] = 0.0;
    T pv[D][PF];
    auto fetch = [&](T(&v)[PF], uint32_t r0) {
#pragma unroll
        for (int u = 0; u < PF; ++u) {
            const uint32_t x = t + u * kSolveThreads, r = x / R8, c = x % R8;
            v[u] = x < (uint32_t)(NR * R8) && r0 + r < I && c < R ? A[(size_t)(r0 + r) * R + c] : T(0);
        }
    };
#pragma unroll
    for (int d = 0; d < D; ++d) fetch(pv[d], d * NR);
    for (uint32_t r1 = 0; r1 < I; r1 += D * NR)
#pragma unroll
        for (int d = 0; d < D; ++d) {
            const uint32_t r0 = r1 + d * NR;
            if (r0 >= I) break;
            const uint32_t nr = min((uint32_t)NR, I - r0);
            __syncthreads(); /* the previous tile is consumed */
#pragma unroll
            for (int u = 0; u < PF; ++u) {
                const uint32_t x = t + u * kSolveThreads;
                if (x < (uint32_t)(NR * R8)) {
                    const double v = (double)pv[d][u]; /* zero past I and in the padding */
                    cmax[Sh::NCM == 1 ? 0 : u] = max_abs(cmax[Sh::NCM == 1 ? 0 : u], v);
                    buf[(x / R8) * LD + x % R8] = v;
                }
            }
            __syncthreads();
            if (r0 + D * NR < I) fetch(pv[d], r0 + D * NR);
            if (active)
                for (uint32_t k0 = 4 * ph; k0 < nr; k0 += 4 * NPH) { /* rows past nr are zeros */
                    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::col_major> a;
                    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::row_major> b;
                    wmma::load_matrix_sync(a, buf + k0 * LD + 8 * ib, LD);
                    wmma::load_matrix_sync(b, buf + k0 * LD + 8 * jb, LD);
                    wmma::mma_sync(acc, a, b, acc);
                }
        }
    __syncthreads();
    if (active) wmma::store_matrix_sync(buf + (ph * NBLK + blk) * 64, acc, 8, wmma::mem_row_major);
    __syncthreads();
    for (uint32_t e = t; e < R * R; e += kSolveThreads) {
        const uint32_t i = e / R, j = e % R;
        const double *p = buf + ((i / 8) * NB + j / 8) * 64 + (i % 8) * 8 + j % 8;
        double v = 0.0;
#pragma unroll
        for (int q = 0; q < NPH; ++q) v += p[q * NBLK * 64];
        gs[e] = v;
    }
    __syncthreads(); /* the phases are read */
#pragma unroll
    for (int u = 0; u < Sh::NCM; ++u) {
        const uint32_t x = t + u * kSolveThreads;
        if (x < (uint32_t)Sh::NSLOT) buf[x] = cmax[u];
    }
    __syncthreads();
    for (uint32_t c = t; c < R; c += kSolveThreads) {
        double m = 0.0;
        for (uint32_t r = 0; r < (uint32_t)(Sh::NSLOT / R8); ++r) m = max_abs(m, buf[r * R8 + c]);
        cm[c] = m;
    }
    __syncthreads();
}

/* tf_gpu_gram_solve: mode g's Gram with lambda and the new scale (as
 * gram_scale_block), then the solve of mode skip (as small_solve_kernel)
 * with mode g's new Gram and scale taken from shared memory. */
template <typename T, int NB>
__global__ void __launch_bounds__(kSolveThreads) gram_solve_kernel(const T *A, uint32_t I, uint32_t g, int norm, T *s,
                                                                   T *lambda, T *Gg, gram_ptrs<T> G, gram_ptrs<T> scales,
                                                                   uint32_t n, uint32_t skip, uint32_t R,
                                                                   double rcond, T *V, T *W, double *jq,
                                                                   tf_gpu_scalars *sc)
{
    typedef short_gram_shape<NB> Sh;
    static_assert(Sh::SCRATCH + 32 * 32 + 32 <= kSmall * (kSmall + 1), "the Gram's scratch fits in S");
    __shared__ __align__(32) double S[kSmall][kSmall + 1];
    __shared__ double sv[32];
    /* until the solve: the tiles and phases, then the raw Gram and the column maxima */
    double *buf = &S[0][0], *gs = buf + Sh::SCRATCH, *cm = gs + 32 * 32;
    short_gram_block<T, NB>(A, I, R, buf, gs, cm);
    const uint32_t t = threadIdx.x, RR = R * R;
    for (uint32_t r = t; r < R; r += kSolveThreads) {
        const double x = norm == 2 ? cm[r] : gs[r * R + r];
        if (!isfinite(x)) sc->nonfinite = 1;
        const T lam = column_lambda<T>(x, norm), inv = scale_of(lam);
        lambda[r] = lam;
        s[r] = inv;
        sv[r] = (double)inv;
    }
    __syncthreads();
    for (uint32_t e = t; e < RR; e += kSolveThreads) {
        const T v = (T)(sv[e / R] * gs[e] * sv[e % R]);
        if (!isfinite((double)v)) sc->nonfinite = 1;
        Gg[e] = v;
        gs[e] = (double)v; /* exact: what the solve would read back from Gg */
    }
    __syncthreads();
    const solve_inputs<T> in = {G, scales, n, skip, g, gs, sv};
    small_solve_block<T>(in, R, rcond, V, W, jq, sc, S);
}

/* A = M W for a short factor (row-major I x R, W R x R, R <= 64): W in
 * shared memory, a warp takes AR rows at a time, lane c their columns c
 * and c + 32 (NC = 2 pieces when R > 32); M's entries are broadcast by
 * shuffles from the lanes that loaded them. (Reading W through L1 instead
 * of staging it was 2x slower: every k step waited for its load.) */
template <typename T, int NC>
__global__ void __launch_bounds__(kThreads) apply_kernel(const T *M, uint64_t I, uint32_t R, const T *W, T *A)
{
    constexpr int AR = 4;
    __shared__ T w[kSmall * kSmall];
    const uint32_t lane = threadIdx.x & 31;
    const uint64_t nw = (uint64_t)gridDim.x * (kThreads / 32);
    uint64_t i0 = ((uint64_t)blockIdx.x * kThreads + threadIdx.x) / 32 * AR;
    T m[AR][NC];
    auto load = [&](uint64_t i) {
#pragma unroll
        for (int r = 0; r < AR; ++r)
#pragma unroll
            for (int q = 0; q < NC; ++q) {
                const uint32_t c = lane + 32 * q;
                m[r][q] = i + r < I && c < R ? M[(i + r) * R + c] : T(0);
            }
    };
    /* the first rows of M are requested before W is staged: the two
     * round trips overlap (short factors: one task per warp) */
    if (i0 < I) load(i0);
    for (uint32_t e = threadIdx.x; e < R * R; e += kThreads) w[e] = W[e];
    __syncthreads();
    for (; i0 < I; i0 += nw * AR) {
        T a[AR][NC];
#pragma unroll
        for (int r = 0; r < AR; ++r)
#pragma unroll
            for (int q = 0; q < NC; ++q) a[r][q] = T(0);
        for (uint32_t k = 0; k < R; ++k) {
            T wk[NC];
#pragma unroll
            for (int q = 0; q < NC; ++q) wk[q] = lane + 32 * q < R ? w[k * R + lane + 32 * q] : T(0);
#pragma unroll
            for (int r = 0; r < AR; ++r) {
                const T mk = __shfl_sync(TF_WARP_ALL, NC == 1 || k < 32 ? m[r][0] : m[r][NC - 1], k & 31);
#pragma unroll
                for (int q = 0; q < NC; ++q) a[r][q] += mk * wk[q];
            }
        }
        if (i0 + nw * AR < I) load(i0 + nw * AR); /* the next task's rows */
#pragma unroll
        for (int r = 0; r < AR; ++r)
#pragma unroll
            for (int q = 0; q < NC; ++q)
                if (i0 + r < I && lane + 32 * q < R) A[(i0 + r) * R + lane + 32 * q] = a[r][q];
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
    /* at most 256 blocks: one wave at 2 blocks per SM (the kernel's
     * registers) on a 132-SM device */
    return (uint32_t)std::max<uint64_t>(1, std::min<uint64_t>((I + 127) / 128, 256));
}

uint64_t tf_gpu_gram_partial_count(uint64_t I, uint32_t R)
{
    return (uint64_t)tf_gpu_gram_slabs(I) * R * (R + 2); /* Grams, column maxima, fit dot products */
}

template <typename T>
static tf_status launch_gram_partials(const T *A, uint64_t I, uint32_t R, uint32_t S, double *gpart,
                                      const gram_fin<T> &fin, cudaStream_t st)
{
    switch ((R + 7) / 8) { /* one instantiation per 8-column block count */
    case 1: gram_partials_kernel<T, 1><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    case 2: gram_partials_kernel<T, 2><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    case 3: gram_partials_kernel<T, 3><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    case 4: gram_partials_kernel<T, 4><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    case 5: gram_partials_kernel<T, 5><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    case 6: gram_partials_kernel<T, 6><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    case 7: gram_partials_kernel<T, 7><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    default: gram_partials_kernel<T, 8><<<S, kThreads, 0, st>>>(A, I, R, S, gpart, fin); break;
    }
    TF_CU_LAUNCH("gram_partials_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_gram(const T *A, uint64_t I, uint32_t R, int norm, double *gpart, double *graw, unsigned *counter,
                      T *s, T *lambda, T *G, tf_gpu_scalars *sc, cudaStream_t st)
{
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "small Gram: rank %u is outside 1..%d", R, kSmall);
    const uint32_t S = tf_gpu_gram_slabs(I);
    gram_fin<T> fin = {};
    if (S <= 16) { /* few slabs: the last block sums them and finishes */
        fin = {counter, norm, graw, s, lambda, G, sc, nullptr, {}, {}, 0};
        return launch_gram_partials<T>(A, I, R, S, gpart, fin, st);
    }
    TF_TRY(launch_gram_partials<T>(A, I, R, S, gpart, fin, st));
    return tf_gpu_gram_finish<T>(gpart, S, R, norm, graw, s, lambda, G, sc, st);
}

/* graw = the S slab partials of an R x R Gram summed (gram_sum_kernel) */
static tf_status launch_gram_sum(const double *gpart, uint32_t S, uint32_t R, double *graw, cudaStream_t st)
{
    const uint32_t RR = R * R;
    gram_sum_kernel<<<(RR + 31) / 32, dim3(32, 32), 0, st>>>(gpart, S, RR, graw);
    TF_CU_LAUNCH("gram_sum_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_gram_finish(const double *gpart, uint32_t S, uint32_t R, int norm, double *graw, T *s, T *lambda,
                             T *G, tf_gpu_scalars *sc, cudaStream_t st)
{
    TF_TRY(launch_gram_sum(gpart, S, R, graw, st));
    gram_scale_kernel<T><<<1, kThreads, 0, st>>>(gpart, S, R, norm, graw, s, lambda, G, sc);
    TF_CU_LAUNCH("gram_scale_kernel");
    return TF_OK;
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

/* The rank and mode count a Gram + fit takes. */
static tf_status fit_args(const char *what, uint32_t R, uint32_t n)
{
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "%s: rank %u is outside 1..%d", what, R, kSmall);
    if (n > 16) return tf_fail(TF_ERR_ARG, "%s: at most 16 modes", what);
    return TF_OK;
}

/* The finish of a Gram + fit: every mode's scales and Grams (n <= 16). */
template <typename T>
static gram_fin<T> fit_fin(unsigned *counter, int norm, double *graw, T *s, T *lambda, T *G, const T *M,
                           const T *const *scales, const T *const *Gs, uint32_t n, tf_gpu_scalars *sc)
{
    gram_fin<T> fin = {counter, norm, graw, s, lambda, G, sc, M, {}, {}, n};
    for (uint32_t k = 0; k < 16; ++k) {
        fin.scales.g[k] = k < n ? scales[k] : nullptr;
        fin.Gs.g[k] = k < n ? Gs[k] : nullptr;
    }
    return fin;
}

/* graw summed from gpart's S slabs, then lambda, s, G and the fit terms in one block */
template <typename T>
static tf_status launch_gram_fit_finish(const double *gpart, uint32_t S, uint32_t R, const gram_fin<T> &fin,
                                        cudaStream_t st)
{
    TF_TRY(launch_gram_sum(gpart, S, R, fin.graw, st));
    gram_scale_fit_kernel<T><<<1, kThreads, 0, st>>>(gpart, S, R, fin);
    TF_CU_LAUNCH("gram_scale_fit_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_gram_fit(const T *A, const T *M, uint64_t I, uint32_t R, int norm, double *gpart, double *graw,
                          unsigned *counter, T *s, T *lambda, T *G, const T *const *scales, const T *const *Gs,
                          uint32_t n, tf_gpu_scalars *sc, cudaStream_t st)
{
    TF_TRY(fit_args("Gram + fit", R, n));
    const uint32_t S = tf_gpu_gram_slabs(I);
    /* few slabs: the last block finishes the Gram and the fit; else the
     * partials' pass (M read beside A: the fit's dot partials too) is
     * followed by the Gram's sum and one block for the rest */
    gram_fin<T> fin = fit_fin<T>(S <= 16 ? counter : nullptr, norm, graw, s, lambda, G, M, scales, Gs, n, sc);
    TF_TRY(launch_gram_partials<T>(A, I, R, S, gpart, fin, st));
    if (S <= 16) return TF_OK;
    return launch_gram_fit_finish<T>(gpart, S, R, fin, st);
}

template <typename T>
tf_status tf_gpu_gram_fit_finish(const double *gpart, uint32_t S, uint32_t R, int norm, double *graw, T *s,
                                 T *lambda, T *G, const T *const *scales, const T *const *Gs, uint32_t n,
                                 tf_gpu_scalars *sc, cudaStream_t st)
{
    TF_TRY(fit_args("Gram + fit finish", R, n));
    const gram_fin<T> fin = fit_fin<T>(nullptr, norm, graw, s, lambda, G, nullptr, scales, Gs, n, sc);
    return launch_gram_fit_finish<T>(gpart, S, R, fin, st);
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
tf_status tf_gpu_small_solve(const T *const *G, const T *const *scales, uint32_t n, uint32_t skip, uint32_t R,
                             double rcond, T *V, T *W, double *jq, tf_gpu_scalars *sc, cudaStream_t st)
{
    gram_ptrs<T> p, q;
    if (n > 16) return tf_fail(TF_ERR_ARG, "Hadamard of %u Grams: at most 16", n);
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "small solve: rank %u is outside 1..%d", R, kSmall);
    for (uint32_t k = 0; k < 16; ++k) {
        p.g[k] = k < n ? G[k] : nullptr;
        q.g[k] = k < n && scales ? scales[k] : nullptr;
    }
    small_solve_kernel<T><<<1, kSolveThreads, 0, st>>>(p, q, n, skip, R, rcond, V, W, jq, sc);
    TF_CU_LAUNCH("small_solve_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_gram_solve(const T *A, uint64_t I, uint32_t g, int norm, T *s, T *lambda, const T *const *G,
                            const T *const *scales, uint32_t n, uint32_t skip, uint32_t R, double rcond, T *V, T *W,
                            double *jq, tf_gpu_scalars *sc, cudaStream_t st)
{
    if (n > 16 || g >= n || skip >= n || g == skip)
        return tf_fail(TF_ERR_ARG, "Gram + solve: modes %u and %u of %u (at most 16, distinct)", g + 1, skip + 1, n);
    if (R == 0 || R > 32 || I == 0 || I > TF_GPU_GRAM_SOLVE_MAX_ROWS)
        return tf_fail(TF_ERR_ARG, "Gram + solve: a %llu x %u factor is outside 1..%d x 1..32",
                       (unsigned long long)I, R, TF_GPU_GRAM_SOLVE_MAX_ROWS);
    if (norm != 1 && norm != 2) return tf_fail(TF_ERR_ARG, "Gram + solve: norm %d is not 1 or 2", norm);
    gram_ptrs<T> p, q;
    for (uint32_t k = 0; k < 16; ++k) {
        p.g[k] = k < n ? G[k] : nullptr;
        q.g[k] = k < n && scales ? scales[k] : nullptr;
    }
    const uint32_t i = (uint32_t)I;
    T *Gg = (T *)G[g]; /* mode g's Gram: written here (G is read-only for the solve) */
    switch ((R + 7) / 8) { /* one instantiation per 8-column block count */
    case 1: gram_solve_kernel<T, 1><<<1, kSolveThreads, 0, st>>>(A, i, g, norm, s, lambda, Gg, p, q, n, skip, R, rcond, V, W, jq, sc); break;
    case 2: gram_solve_kernel<T, 2><<<1, kSolveThreads, 0, st>>>(A, i, g, norm, s, lambda, Gg, p, q, n, skip, R, rcond, V, W, jq, sc); break;
    case 3: gram_solve_kernel<T, 3><<<1, kSolveThreads, 0, st>>>(A, i, g, norm, s, lambda, Gg, p, q, n, skip, R, rcond, V, W, jq, sc); break;
    default: gram_solve_kernel<T, 4><<<1, kSolveThreads, 0, st>>>(A, i, g, norm, s, lambda, Gg, p, q, n, skip, R, rcond, V, W, jq, sc); break;
    }
    TF_CU_LAUNCH("gram_solve_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_small_apply(const T *M, uint64_t I, uint32_t R, const T *W, T *A, cudaStream_t st)
{
    if (R == 0 || R > kSmall) return tf_fail(TF_ERR_ARG, "small apply: rank %u is outside 1..%d", R, kSmall);
    if (I == 0) return TF_OK;
    const unsigned blocks = (unsigned)std::min<uint64_t>((I + 31) / 32, 1024); /* 4 rows per warp */
    if (R > 32) apply_kernel<T, 2><<<blocks, kThreads, 0, st>>>(M, I, R, W, A);
    else apply_kernel<T, 1><<<blocks, kThreads, 0, st>>>(M, I, R, W, A);
    TF_CU_LAUNCH("apply_kernel");
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
                                                const T *, const T *const *, uint32_t, double *,  \
                                                tf_gpu_scalars *, cudaStream_t);                  \
    template tf_status tf_gpu_scale_columns<T>(T *, uint64_t, uint32_t, const T *, cudaStream_t); \
    template tf_status tf_gpu_quadratic<T>(const T *, const T *, uint32_t, tf_gpu_scalars *,     \
                                           cudaStream_t);                                         \
    template tf_status tf_gpu_diag_range<T>(const T *, uint32_t, tf_gpu_scalars *, cudaStream_t); \
    template tf_status tf_gpu_pinv_scale<T>(const T *, const T *, uint32_t, double, T *,         \
                                            cudaStream_t);                                        \
    template tf_status tf_gpu_small_solve<T>(const T *const *, const T *const *, uint32_t, uint32_t, \
                                             uint32_t, double, T *, T *, double *, tf_gpu_scalars *, \
                                             cudaStream_t);                                       \
    template tf_status tf_gpu_gram_solve<T>(const T *, uint64_t, uint32_t, int, T *, T *, const T *const *,       \
                                            const T *const *, uint32_t, uint32_t, uint32_t, double, T *, T *,   \
                                            double *, tf_gpu_scalars *, cudaStream_t);                          \
    template tf_status tf_gpu_gram_finish<T>(const double *, uint32_t, uint32_t, int, double *, T *, T *, T *, \
                                             tf_gpu_scalars *, cudaStream_t);                      \
    template tf_status tf_gpu_gram<T>(const T *, uint64_t, uint32_t, int, double *, double *, unsigned *, \
                                      T *, T *, T *, tf_gpu_scalars *, cudaStream_t);             \
    template tf_status tf_gpu_gram_fit<T>(const T *, const T *, uint64_t, uint32_t, int, double *, double *, \
                                          unsigned *, T *, T *, T *, const T *const *, const T *const *,   \
                                          uint32_t, tf_gpu_scalars *, cudaStream_t);                      \
    template tf_status tf_gpu_gram_fit_finish<T>(const double *, uint32_t, uint32_t, int, double *, T *, T *, T *, \
                                                 const T *const *, const T *const *, uint32_t, tf_gpu_scalars *, \
                                                 cudaStream_t);                                                  \
    template tf_status tf_gpu_fit_terms<T>(const T *, const T *, uint64_t, uint32_t, const T *,    \
                                           const T *const *, const T *const *, uint32_t, double *, \
                                           unsigned *, tf_gpu_scalars *, cudaStream_t);           \
    template tf_status tf_gpu_small_apply<T>(const T *, uint64_t, uint32_t, const T *, T *, cudaStream_t); \
    template tf_status tf_gpu_fill<T>(T *, uint64_t, T, cudaStream_t);
TF_DENSE_INSTANTIATE(float)
TF_DENSE_INSTANTIATE(double)
