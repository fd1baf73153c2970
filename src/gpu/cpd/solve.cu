/* SPDX-License-Identifier: BSD-3-Clause */
/* The small-rank solve of GPU CP-ALS in one thread block (Gauss-Jordan
 * in double, the pseudo-inverse by cyclic Jacobi when V is not positive
 * definite enough): tf_gpu_small_solve, and tf_gpu_gram_solve (a short
 * factor's Gram fused with the next solve); see dense.cuh. */
#include <mma.h>

#include "gpu/cpd/dense_common.cuh"

namespace {

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

} // namespace

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

#define TF_SOLVE_INSTANTIATE(T)                                                                      \
    template tf_status tf_gpu_small_solve<T>(const T *const *, const T *const *, uint32_t, uint32_t, \
                                             uint32_t, double, T *, T *, double *, tf_gpu_scalars *, \
                                             cudaStream_t);                                          \
    template tf_status tf_gpu_gram_solve<T>(const T *, uint64_t, uint32_t, int, T *, T *,            \
                                            const T *const *, const T *const *, uint32_t, uint32_t,  \
                                            uint32_t, double, T *, T *, double *, tf_gpu_scalars *,  \
                                            cudaStream_t);
TF_SOLVE_INSTANTIATE(float)
TF_SOLVE_INSTANTIATE(double)
