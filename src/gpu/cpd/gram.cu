/* SPDX-License-Identifier: BSD-3-Clause */
/* The small-rank Gram of GPU CP-ALS (R <= TF_GPU_SMALL_RANK): slab
 * partials by FP64 tensor-core MMAs, their in-order sum, lambda, the
 * scales and the scaled Gram (tf_gpu_gram, tf_gpu_gram_finish), and the
 * same with the fit terms of the last mode (tf_gpu_gram_fit,
 * tf_gpu_gram_fit_finish); see dense.cuh. */
#include <mma.h>

#include "gpu/cpd/dense_common.cuh"

namespace {

/* ---- small-rank Gram (tf_gpu_gram in dense.cuh)
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

} // namespace

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

#define TF_GRAM_INSTANTIATE(T)                                                                           \
    template tf_status tf_gpu_gram_finish<T>(const double *, uint32_t, uint32_t, int, double *, T *,     \
                                             T *, T *, tf_gpu_scalars *, cudaStream_t);                  \
    template tf_status tf_gpu_gram<T>(const T *, uint64_t, uint32_t, int, double *, double *,            \
                                      unsigned *, T *, T *, T *, tf_gpu_scalars *, cudaStream_t);        \
    template tf_status tf_gpu_gram_fit<T>(const T *, const T *, uint64_t, uint32_t, int, double *,       \
                                          double *, unsigned *, T *, T *, T *, const T *const *,         \
                                          const T *const *, uint32_t, tf_gpu_scalars *, cudaStream_t);   \
    template tf_status tf_gpu_gram_fit_finish<T>(const double *, uint32_t, uint32_t, int, double *, T *, \
                                                 T *, T *, const T *const *, const T *const *, uint32_t, \
                                                 tf_gpu_scalars *, cudaStream_t);
TF_GRAM_INSTANTIATE(float)
TF_GRAM_INSTANTIATE(double)
