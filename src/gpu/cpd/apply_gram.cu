/* SPDX-License-Identifier: BSD-3-Clause */
/* A = M W and the Gram partials of A in one pass over M (rank 32), for the
 * long factors of GPU CP-ALS: there the separate Gram pass (a second read
 * of A, on the side stream beside the next MTTKRP) costs that MTTKRP about
 * as much time as the bytes it reads (20M-non-zero tensor, H200: 0.42 ms
 * per iteration in fp64).
 *
 * A warp takes 8 rows of M at a time (a task). Its A = M W block comes
 * from tensor-core MMAs with W's fragments staged once per thread block in
 * shared memory (in fragment order), in one of two lane layouts:
 *   double (dmma_apply): FP64 MMAs m8n8k4, 4 output blocks x 8 k-steps;
 *     lane (g, q) = (lane / 4, lane % 4) ends with row g, columns
 *     8 j + 2 q + e.
 *   float (tf32x3_apply): the block transposed, A^T = W^T M^T, by TF32
 *     MMAs m16n8k8 (2 output tiles x 4 k-steps), each product split as
 *     3xTF32 (hi hi + hi lo + lo hi, the lo terms in their own
 *     accumulators): about fp32 accuracy, while the FP64 pipe keeps only
 *     the Gram's MMAs (in FP64 both it and the apply made the fp32 kernel
 *     FP64-MMA bound: 80 % busy, DRAM 40 %, measured with ncu on an H200).
 *     Lane (g, q) ends with rows 2 q + e, column 8 j + g.
 * Either way the k index is permuted so that a lane's M values are 8
 * adjacent values of its row (16-byte loads). The block is rounded to T
 * and stored, then redistributed by shuffles so that the values rounded to
 * T feed A^T A (the Gram of the stored factor) in FP64 MMAs: 10
 * upper-triangle 8 x 8 blocks x 2 k-steps into per-warp accumulators. The
 * next task's M fragments are loaded (as T, converted at use) before the
 * current one is multiplied (two tasks in flight, or M copied 1-3 tasks
 * ahead into shared memory by cp.async: no faster, measured on an H200).
 * At the end each block adds its warps' Grams in warp order through
 * shared memory (deterministic) and writes one slab partial in
 * tf_gpu_gram's layout (and, for max-norm normalisation, the slab's column
 * maxima), so tf_gpu_gram_finish completes lambda, the scales and G. With
 * FIT (the last mode of a CP-ALS iteration) each lane also sums M times the
 * stored A at its block's places (M re-read there: L1 hits), and the block
 * writes those per-column dot products after the maxima, so
 * tf_gpu_gram_fit_finish completes the fit terms too. Rows are dealt to
 * warps in a fixed order: the result does not depend on timing. */
#include <type_traits>

#include "gpu/cpd/dense.cuh"
#include "gpu/runtime/ld16.cuh"

namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32, kR = TF_GPU_APPLY_GRAM_RANK;
static_assert(kR == 32, "the fragment loops below are written for 4 column blocks of 8");

/* d += a b (8 x 4 by 4 x 8, double) */
__device__ __forceinline__ void dmma(double (&d)[2], double a, double b)
{
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

/* d += a b (16 x 8 by 8 x 8, TF32 inputs, float accumulators) */
__device__ __forceinline__ void tmma(float (&d)[4], uint4 a, uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a.x), "r"(a.y), "r"(a.z), "r"(a.w), "r"(b0), "r"(b1));
}

/* x rounded to TF32 (nearest, ties away), as the bits of a float */
__device__ __forceinline__ uint32_t tf32_hi(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
/* the rest of x after its TF32 part hi (exact in float), rounded to TF32 */
__device__ __forceinline__ uint32_t tf32_lo(float x, uint32_t hi) { return tf32_hi(x - __uint_as_float(hi)); }

/* Two adjacent values in one store (p is 16-byte aligned). */
__device__ __forceinline__ void store_pair(double *p, double a, double b) { *reinterpret_cast<double2 *>(p) = make_double2(a, b); }

/* The 8 values p[0..7] (16-byte aligned) into v, 16 bytes at a time. */
template <typename T>
__device__ __forceinline__ void load8(const T *p, T (&v)[8])
{
    constexpr int N = 16 / sizeof(T); /* values per load */
#pragma unroll
    for (int i = 0; i < 8 / N; ++i) tf_ld16(p + N * i, *reinterpret_cast<T(*)[N]>(v + N * i));
}

/* Upper-triangle block pairs (pb <= qb) of the 4 x 4 block Gram. */
__device__ __forceinline__ constexpr int pair_index(int pb, int qb) { return pb * 4 - pb * (pb - 1) / 2 + (qb - pb); }

/* A task's apply in FP64 MMAs (fragment layouts: A row g, column q; B row
 * q, column g; C/D row g, columns 2q, 2q + 1). Step kb takes column 8 q + kb
 * of M. Value r[j][e] is A[g][8 j + 2 q + e]. */
struct dmma_apply {
    /* wf[kb][nb][lane] = W[8 q + kb][8 nb + g] (lanes read consecutive doubles) */
    struct stage {
        double wf[8][4][32];
    };
    __device__ static void fill(stage &s, const double *W)
    {
        for (uint32_t e = threadIdx.x; e < 8 * 4 * 32; e += kThreads) {
            const uint32_t kb = e / 128, nb = (e / 32) % 4, l = e % 32;
            s.wf[kb][nb][l] = W[(8 * (l & 3) + kb) * kR + 8 * nb + (l >> 2)];
        }
    }
    /* mf[kb] = M[g][8 q + kb]; r: the block */
    __device__ static void apply(const double (&mf)[8], const stage &s, uint32_t lane, double (&r)[4][2])
    {
#pragma unroll
        for (int nb = 0; nb < 4; ++nb) {
            r[nb][0] = r[nb][1] = 0.0;
#pragma unroll
            for (int kb = 0; kb < 8; ++kb) dmma(r[nb], mf[kb], s.wf[kb][nb][lane]);
        }
    }
    __device__ static uint32_t col(uint32_t g, uint32_t q, int j, int e) { return 8 * j + 2 * q + e; }
    /* r[j][0], r[j][1] are adjacent columns of one row */
    __device__ static void store(double *a, uint32_t g, uint32_t q, uint64_t row0, uint64_t I,
                                 const double (&r)[4][2])
    {
        const uint64_t rw = row0 + g;
#pragma unroll
        for (int j = 0; j < 4; ++j)
            if (rw < I) store_pair(a + rw * kR + 8 * j + 2 * q, r[j][0], r[j][1]);
    }
    /* v[j][e] = M at r[j][e]'s place (0 past row I): the fit's dot products */
    __device__ static void load_at(const double *m, uint32_t g, uint32_t q, uint64_t row0, uint64_t I,
                                   double (&v)[4][2])
    {
        const uint64_t rw = row0 + g;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (rw < I) tf_ld16(m + rw * kR + 8 * j + 2 * q, v[j]);
            else v[j][0] = v[j][1] = 0.0;
        }
    }
    /* A[4 ks + q][8 b + g] is lane (16 ks + 4 q + g / 2)'s r[b][g % 2] */
    __device__ static int gram_src(uint32_t g, uint32_t q, int ks) { return 16 * ks + 4 * (int)q + (int)(g >> 1); }
    __device__ static bool gram_odd(uint32_t g, uint32_t q) { return g & 1; }
    /* lanes holding the same columns differ in g; those with g = 0 report */
    static constexpr unsigned same_col_lo = 4, same_col_hi = 16;
    __device__ static bool col_writer(uint32_t g, uint32_t q) { return g == 0; }
};

/* A task's apply as A^T = W^T M^T in TF32 MMAs, 3xTF32 (layouts: A rows
 * g, g + 8, columns q, q + 4; B rows q, q + 4, column g; C/D rows g, g + 8,
 * columns 2q, 2q + 1). The MMA's M dimension is A's column (two tiles of
 * 16), N its row (the task's 8), K M's column: step ks takes columns
 * 8 q + 2 ks (slot q) and 8 q + 2 ks + 1 (slot q + 4). Value r[j][e] is
 * A[2 q + e][8 j + g]. */
struct tf32x3_apply {
    /* wt[mt][ks][h][lane] = the A fragment {W[c][16 mt + g], W[c][16 mt + g + 8],
     * W[c + 1][16 mt + g], W[c + 1][16 mt + g + 8]}, c = 8 q + 2 ks, as TF32
     * hi (h = 0) and lo (h = 1) parts (lanes read consecutive 16 bytes) */
    struct stage {
        uint4 wt[2][4][2][32];
    };
    __device__ static void fill(stage &s, const float *W)
    {
        for (uint32_t e = threadIdx.x; e < 2 * 4 * 32; e += kThreads) {
            const uint32_t mt = e / 128, ks = (e / 32) % 4, l = e % 32, g = l >> 2, q = l & 3;
            const uint32_t c = 8 * q + 2 * ks, n = 16 * mt + g;
            const float w[4] = {W[c * kR + n], W[c * kR + n + 8], W[(c + 1) * kR + n], W[(c + 1) * kR + n + 8]};
            uint32_t hi[4], lo[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                hi[i] = tf32_hi(w[i]);
                lo[i] = tf32_lo(w[i], hi[i]);
            }
            s.wt[mt][ks][0][l] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
            s.wt[mt][ks][1][l] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
        }
    }
    /* mf[i] = M[g][8 q + i]; r: the block (float accumulators) */
    __device__ static void apply(const float (&mf)[8], const stage &s, uint32_t lane, float (&r)[4][2])
    {
        float big[2][4], small[2][4];
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int i = 0; i < 4; ++i) big[mt][i] = small[mt][i] = 0.f;
#pragma unroll
        for (int ks = 0; ks < 4; ++ks) {
            const uint32_t bh0 = tf32_hi(mf[2 * ks]), bh1 = tf32_hi(mf[2 * ks + 1]);
            const uint32_t bl0 = tf32_lo(mf[2 * ks], bh0), bl1 = tf32_lo(mf[2 * ks + 1], bh1);
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const uint4 wh = s.wt[mt][ks][0][lane], wl = s.wt[mt][ks][1][lane];
                tmma(small[mt], wl, bh0, bh1);
                tmma(small[mt], wh, bl0, bl1);
                tmma(big[mt], wh, bh0, bh1);
            }
        }
        /* C element i of tile mt: row 2 q + (i & 1), column 16 mt + 8 (i >> 1) + g */
#pragma unroll
        for (int mt = 0; mt < 2; ++mt)
#pragma unroll
            for (int i = 0; i < 4; ++i) r[2 * mt + (i >> 1)][i & 1] = big[mt][i] + small[mt][i];
    }
    __device__ static uint32_t col(uint32_t g, uint32_t q, int j, int e) { return 8 * j + g; }
    __device__ static void store(float *a, uint32_t g, uint32_t q, uint64_t row0, uint64_t I,
                                 const float (&r)[4][2])
    {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const uint64_t rw = row0 + 2 * q + e;
#pragma unroll
            for (int j = 0; j < 4; ++j)
                if (rw < I) a[rw * kR + 8 * j + g] = r[j][e];
        }
    }
    __device__ static void load_at(const float *m, uint32_t g, uint32_t q, uint64_t row0, uint64_t I,
                                   float (&v)[4][2])
    {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const uint64_t rw = row0 + 2 * q + e;
#pragma unroll
            for (int j = 0; j < 4; ++j) v[j][e] = rw < I ? __ldg(m + rw * kR + 8 * j + g) : 0.f;
        }
    }
    /* A[4 ks + q][8 b + g] is lane (4 g + 2 ks + q / 2)'s r[b][q % 2] */
    __device__ static int gram_src(uint32_t g, uint32_t q, int ks) { return 4 * (int)g + 2 * ks + (int)(q >> 1); }
    __device__ static bool gram_odd(uint32_t g, uint32_t q) { return q & 1; }
    /* lanes holding the same columns differ in q (and e); q = 0 reports */
    static constexpr unsigned same_col_lo = 1, same_col_hi = 2;
    __device__ static bool col_writer(uint32_t g, uint32_t q) { return q == 0; }
};

template <typename T>
using apply_of = typename std::conditional<sizeof(T) == 8, dmma_apply, tf32x3_apply>::type;

template <typename T, bool MAXN, bool FIT>
__global__ void __launch_bounds__(kThreads, 2) apply_gram_kernel(const T *__restrict__ M, uint64_t I,
                                                                 const T *__restrict__ W, T *__restrict__ A,
                                                                 double *gpart, uint32_t S)
{
    using AP = apply_of<T>;
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    __shared__ typename AP::stage ws;
    AP::fill(ws, W);
    __syncthreads();
    double gacc[10][2];
#pragma unroll
    for (int p = 0; p < 10; ++p) gacc[p][0] = gacc[p][1] = 0.0;
    double cmax[4][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}}; /* columns AP::col(j, e) */
    /* FIT: each thread's running sums of M A at its 8 places, in shared
     * memory (in registers the fp64 max-norm kernel spilled) */
    __shared__ double sdot[FIT ? 8 : 1][kThreads];
    if (FIT)
#pragma unroll
        for (int k = 0; k < 8; ++k) sdot[k][threadIdx.x] = 0.0;

    const uint64_t ntask = (I + 7) / 8, stride = (uint64_t)gridDim.x * kWarps;
    uint64_t t = (uint64_t)blockIdx.x * kWarps + warp;
    /* the next task's M values, kept as T until used: mf[i] = M[8 t + g][8 q + i] */
    T mf[8];
    auto load = [&](uint64_t task) {
        const uint64_t row = task * 8 + g;
        if (row < I) load8(M + row * kR + 8 * q, mf);
        else
#pragma unroll
            for (int kb = 0; kb < 8; ++kb) mf[kb] = (T)0;
    };
    if (t < ntask) load(t);
    for (; t < ntask; t += stride) {
        T cur[8];
#pragma unroll
        for (int kb = 0; kb < 8; ++kb) cur[kb] = mf[kb];
        if (t + stride < ntask) load(t + stride);
        T r[4][2]; /* the task's block of A, rounded to T */
        AP::apply(cur, ws, lane, r);
        AP::store(A, g, q, t * 8, I, r);
        if (MAXN)
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) cmax[j][e] = fmax(cmax[j][e], fabs((double)r[j][e]));
        if (FIT) { /* M at the block's places: its rows were just read, so L1 hits */
            T mv[4][2];
            AP::load_at(M, g, q, t * 8, I, mv);
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) sdot[2 * j + e][threadIdx.x] += (double)mv[j][e] * (double)r[j][e];
        }
        /* x[b][ks] = A[4 ks + q][8 b + g] (the A and B fragments of A^T A) */
        const bool odd = AP::gram_odd(g, q);
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
            const int src = AP::gram_src(g, q, ks);
            double x[4];
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const T v0 = __shfl_sync(0xffffffffu, r[b][0], src);
                const T v1 = __shfl_sync(0xffffffffu, r[b][1], src);
                x[b] = (double)(odd ? v1 : v0);
            }
#pragma unroll
            for (int pb = 0; pb < 4; ++pb)
#pragma unroll
                for (int qb = pb; qb < 4; ++qb) dmma(gacc[pair_index(pb, qb)], x[pb], x[qb]);
        }
    }

    /* The block's Gram: warps add theirs in order (both triangles). */
    __shared__ double red[kR][kR + 1];
    __shared__ double bmax[kR], bdot[kR];
    for (uint32_t e = threadIdx.x; e < kR * kR; e += kThreads) red[e / kR][e % kR] = 0.0;
    if (threadIdx.x < kR) bmax[threadIdx.x] = bdot[threadIdx.x] = 0.0;
    if (MAXN) /* combine over the lanes that hold the same columns */
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e)
#pragma unroll
                for (unsigned d = AP::same_col_lo; d <= AP::same_col_hi; d <<= 1)
                    cmax[j][e] = fmax(cmax[j][e], __shfl_xor_sync(0xffffffffu, cmax[j][e], d));
    double cdot[4][2];
    if (FIT) /* the same butterfly: every lane ends with the same sum, in the same order */
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                cdot[j][e] = sdot[2 * j + e][threadIdx.x];
#pragma unroll
                for (unsigned d = AP::same_col_lo; d <= AP::same_col_hi; d <<= 1)
                    cdot[j][e] += __shfl_xor_sync(0xffffffffu, cdot[j][e], d);
            }
    for (uint32_t w = 0; w < (uint32_t)kWarps; ++w) {
        __syncthreads();
        if (warp != w) continue;
#pragma unroll
        for (int pb = 0; pb < 4; ++pb)
#pragma unroll
            for (int qb = pb; qb < 4; ++qb)
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    const uint32_t i = 8 * pb + g, j = 8 * qb + 2 * q + c;
                    const double v = gacc[pair_index(pb, qb)][c];
                    red[i][j] += v;
                    if (pb != qb) red[j][i] += v;
                }
        if (MAXN && AP::col_writer(g, q))
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const uint32_t col = AP::col(g, q, j, e);
                    bmax[col] = fmax(bmax[col], cmax[j][e]);
                }
        if (FIT && AP::col_writer(g, q)) /* (in float e = 0, 1 share a column: added in e order) */
#pragma unroll
            for (int j = 0; j < 4; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) bdot[AP::col(g, q, j, e)] += cdot[j][e];
    }
    __syncthreads();
    for (uint32_t e = threadIdx.x; e < kR * kR; e += kThreads)
        gpart[(uint64_t)blockIdx.x * kR * kR + e] = red[e / kR][e % kR];
    if (MAXN && threadIdx.x < kR) gpart[(uint64_t)S * kR * kR + (uint64_t)blockIdx.x * kR + threadIdx.x] = bmax[threadIdx.x];
    if (FIT && threadIdx.x < kR)
        gpart[(uint64_t)S * kR * (kR + 1) + (uint64_t)blockIdx.x * kR + threadIdx.x] = bdot[threadIdx.x];
}

} // namespace

template <typename T>
tf_status tf_gpu_apply_gram_partials(const T *M, uint64_t I, uint32_t R, const T *W, T *A, int norm, int fit,
                                     double *gpart, cudaStream_t st)
{
    if (R != kR) return tf_fail(TF_ERR_ARG, "fused apply and Gram: rank %u, only %d is handled", R, kR);
    if (I == 0) return tf_fail(TF_ERR_ARG, "fused apply and Gram: no rows");
    if (((uintptr_t)M & 15) != 0) return tf_fail(TF_ERR_ARG, "fused apply and Gram: M is not 16-byte aligned");
    const uint32_t S = tf_gpu_gram_slabs(I); /* the slab count gpart is sized for */
    if (norm == 2 && fit) apply_gram_kernel<T, true, true><<<S, kThreads, 0, st>>>(M, I, W, A, gpart, S);
    else if (norm == 2) apply_gram_kernel<T, true, false><<<S, kThreads, 0, st>>>(M, I, W, A, gpart, S);
    else if (fit) apply_gram_kernel<T, false, true><<<S, kThreads, 0, st>>>(M, I, W, A, gpart, S);
    else apply_gram_kernel<T, false, false><<<S, kThreads, 0, st>>>(M, I, W, A, gpart, S);
    TF_CU_LAUNCH("apply_gram_kernel");
    return TF_OK;
}

template <typename T>
tf_status tf_gpu_apply_gram(const T *M, uint64_t I, uint32_t R, const T *W, T *A, int norm, double *gpart,
                            double *graw, T *s, T *lambda, T *G, tf_gpu_scalars *sc, cudaStream_t st)
{
    TF_TRY(tf_gpu_apply_gram_partials<T>(M, I, R, W, A, norm, 0, gpart, st));
    return tf_gpu_gram_finish<T>(gpart, tf_gpu_gram_slabs(I), R, norm, graw, s, lambda, G, sc, st);
}

template tf_status tf_gpu_apply_gram_partials<float>(const float *, uint64_t, uint32_t, const float *, float *, int,
                                                     int, double *, cudaStream_t);
template tf_status tf_gpu_apply_gram_partials<double>(const double *, uint64_t, uint32_t, const double *, double *,
                                                      int, int, double *, cudaStream_t);

template tf_status tf_gpu_apply_gram<float>(const float *, uint64_t, uint32_t, const float *, float *, int, double *,
                                            double *, float *, float *, float *, tf_gpu_scalars *, cudaStream_t);
template tf_status tf_gpu_apply_gram<double>(const double *, uint64_t, uint32_t, const double *, double *, int,
                                             double *, double *, double *, double *, double *, tf_gpu_scalars *,
                                             cudaStream_t);
