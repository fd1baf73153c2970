/* A = M W and the Gram partials of A in one pass over M (rank 32), for the
 * long factors of GPU CP-ALS: there the separate Gram pass (a second read
 * of A, on the side stream beside the next MTTKRP) costs that MTTKRP about
 * as much time as the bytes it reads (20M-non-zero tensor, H200: 0.42 ms
 * per iteration in fp64).
 *
 * FP64 tensor-core MMAs (mma.sync m8n8k4, PTX fragment layouts: A row
 * g = lane / 4, column q = lane % 4; B row q, column g; C/D row g, columns
 * 2q, 2q + 1). A warp takes 8 rows of M at a time (a task): its A = M W
 * block is 4 output blocks x 8 k-steps of MMAs with W's B fragments staged
 * once per thread block in shared memory (in fragment order). The k index
 * is permuted so that a lane's A fragments are 8 adjacent values of its
 * row (step kb takes column 8 q + kb): they arrive in 16-byte loads. The
 * block is rounded to T and stored,
 * then redistributed by shuffles so that the values rounded to T feed
 * A^T A (the Gram of the stored factor), 10 upper-triangle 8 x 8 blocks x 2
 * k-steps of MMAs into per-warp accumulators. The next task's M fragments
 * are loaded (as T, converted at use) before the current one is multiplied
 * (two tasks in flight: no faster, measured on an H200). At the end each block
 * adds its warps' Grams in warp order through shared memory (deterministic)
 * and writes one slab partial in tf_gpu_gram's layout (and, for max-norm
 * normalisation, the slab's column maxima), so tf_gpu_gram_finish
 * completes lambda, the scales and G. Rows are dealt to warps in a fixed
 * order: the result does not depend on timing. */
#include "cuda/dense_cuda.cuh"
#include "cuda/ld16.cuh"

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

/* Two adjacent values in one store (p is 2-element aligned). */
__device__ __forceinline__ void store_pair(double *p, double a, double b) { *reinterpret_cast<double2 *>(p) = make_double2(a, b); }
__device__ __forceinline__ void store_pair(float *p, float a, float b) { *reinterpret_cast<float2 *>(p) = make_float2(a, b); }

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

template <typename T, bool MAXN>
__global__ void __launch_bounds__(kThreads, 2) apply_gram_kernel(const T *__restrict__ M, uint64_t I,
                                                                 const T *__restrict__ W, T *__restrict__ A,
                                                                 double *gpart, uint32_t S)
{
    const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    /* B fragments of W in fragment order, k permuted as M's:
     * wf[kb][nb][lane] = W[8 q + kb][8 nb + g] (each lane reads consecutive
     * doubles: no bank conflicts) */
    __shared__ double wf[8][4][32];
    for (uint32_t e = threadIdx.x; e < 8 * 4 * 32; e += kThreads) {
        const uint32_t kb = e / 128, nb = (e / 32) % 4, l = e % 32;
        wf[kb][nb][l] = (double)W[(8 * (l & 3) + kb) * kR + 8 * nb + (l >> 2)];
    }
    __syncthreads();
    double gacc[10][2];
#pragma unroll
    for (int p = 0; p < 10; ++p) gacc[p][0] = gacc[p][1] = 0.0;
    double cmax[4][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}}; /* columns 8 nb + 2q + c */

    const uint64_t ntask = (I + 7) / 8, stride = (uint64_t)gridDim.x * kWarps;
    uint64_t t = (uint64_t)blockIdx.x * kWarps + warp;
    /* A fragments of the next task's M rows, kept as T until used:
     * mf[kb] = M[8 t + g][8 q + kb] */
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
        double cur[8];
#pragma unroll
        for (int kb = 0; kb < 8; ++kb) cur[kb] = (double)mf[kb];
        if (t + stride < ntask) load(t + stride);
        double acc[4][2];
#pragma unroll
        for (int nb = 0; nb < 4; ++nb) {
            acc[nb][0] = acc[nb][1] = 0.0;
#pragma unroll
            for (int kb = 0; kb < 8; ++kb) dmma(acc[nb], cur[kb], wf[kb][nb][lane]);
        }
        /* round to T, store (two adjacent columns per lane and block) */
        const uint64_t row = t * 8 + g;
#pragma unroll
        for (int nb = 0; nb < 4; ++nb) {
            const T a0 = (T)acc[nb][0], a1 = (T)acc[nb][1];
            if (row < I) store_pair(A + row * kR + 8 * nb + 2 * q, a0, a1);
            acc[nb][0] = (double)a0;
            acc[nb][1] = (double)a1;
            if (MAXN) {
                cmax[nb][0] = fmax(cmax[nb][0], fabs(acc[nb][0]));
                cmax[nb][1] = fmax(cmax[nb][1], fabs(acc[nb][1]));
            }
        }
        /* x[b][ks] = A[4 ks + q][8 b + g] (the A and B fragments of A^T A):
         * held by lane 16 ks + 4 q + g / 2 as its element g % 2 of block b */
#pragma unroll
        for (int ks = 0; ks < 2; ++ks) {
            const int src = 16 * ks + 4 * (int)q + (int)(g >> 1);
            double x[4];
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const double v0 = __shfl_sync(0xffffffffu, acc[b][0], src);
                const double v1 = __shfl_sync(0xffffffffu, acc[b][1], src);
                x[b] = (g & 1) ? v1 : v0;
            }
#pragma unroll
            for (int pb = 0; pb < 4; ++pb)
#pragma unroll
                for (int qb = pb; qb < 4; ++qb) dmma(gacc[pair_index(pb, qb)], x[pb], x[qb]);
        }
    }

    /* The block's Gram: warps add theirs in order (both triangles). */
    __shared__ double red[kR][kR + 1];
    __shared__ double bmax[kR];
    for (uint32_t e = threadIdx.x; e < kR * kR; e += kThreads) red[e / kR][e % kR] = 0.0;
    if (threadIdx.x < kR) bmax[threadIdx.x] = 0.0;
    if (MAXN) /* lanes of equal q hold the same columns: combine over g */
#pragma unroll
        for (int nb = 0; nb < 4; ++nb)
#pragma unroll
            for (int c = 0; c < 2; ++c)
#pragma unroll
                for (int d = 4; d < 32; d <<= 1)
                    cmax[nb][c] = fmax(cmax[nb][c], __shfl_xor_sync(0xffffffffu, cmax[nb][c], d));
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
        if (MAXN && g == 0)
#pragma unroll
            for (int nb = 0; nb < 4; ++nb)
#pragma unroll
                for (int c = 0; c < 2; ++c) {
                    const uint32_t col = 8 * nb + 2 * q + c;
                    bmax[col] = fmax(bmax[col], cmax[nb][c]);
                }
    }
    __syncthreads();
    for (uint32_t e = threadIdx.x; e < kR * kR; e += kThreads)
        gpart[(uint64_t)blockIdx.x * kR * kR + e] = red[e / kR][e % kR];
    if (MAXN && threadIdx.x < kR) gpart[(uint64_t)S * kR * kR + (uint64_t)blockIdx.x * kR + threadIdx.x] = bmax[threadIdx.x];
}

} // namespace

template <typename T>
tf_status tf_gpu_apply_gram(const T *M, uint64_t I, uint32_t R, const T *W, T *A, int norm, double *gpart,
                            double *graw, T *s, T *lambda, T *G, tf_gpu_scalars *sc, cudaStream_t st)
{
    if (R != kR) return tf_fail(TF_ERR_ARG, "fused apply and Gram: rank %u, only %d is handled", R, kR);
    if (I == 0) return tf_fail(TF_ERR_ARG, "fused apply and Gram: no rows");
    if (((uintptr_t)M & 15) != 0) return tf_fail(TF_ERR_ARG, "fused apply and Gram: M is not 16-byte aligned");
    const uint32_t S = tf_gpu_gram_slabs(I); /* the slab count gpart is sized for */
    if (norm == 2) apply_gram_kernel<T, true><<<S, kThreads, 0, st>>>(M, I, W, A, gpart, S);
    else apply_gram_kernel<T, false><<<S, kThreads, 0, st>>>(M, I, W, A, gpart, S);
    TF_CU_LAUNCH("apply_gram_kernel");
    return tf_gpu_gram_finish<T>(gpart, S, R, norm, graw, s, lambda, G, sc, st);
}

template tf_status tf_gpu_apply_gram<float>(const float *, uint64_t, uint32_t, const float *, float *, int, double *,
                                            double *, float *, float *, float *, tf_gpu_scalars *, cudaStream_t);
template tf_status tf_gpu_apply_gram<double>(const double *, uint64_t, uint32_t, const double *, double *, int,
                                             double *, double *, double *, double *, double *, tf_gpu_scalars *,
                                             cudaStream_t);
