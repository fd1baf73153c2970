/* SPDX-License-Identifier: BSD-3-Clause */
/* The SDDMM kernel of both GPU schemes (cuSDDMM, section IV), one template
 * over the value type T and STAGE_B:
 *   SM-L2 (STAGE_B = false): a block stages the active rows of A of its
 *     group (one column panel, <= Ti rows) in shared memory, K-slice by
 *     K-slice (Tk); rows of B are read through L2/the read-only cache.
 *   SM-SM (STAGE_B = true): the block also stages its panel's Tj rows of B.
 * Each non-zero is handled by a virtual warp of V lanes (V | 32): lanes walk
 * the slice with 16-byte vector loads (float4 / double2), keep per-lane
 * partial sums in registers across the slices (each virtual warp owns at
 * most NPER non-zeros of the group), and one shuffle reduction at the end
 * gives the dot product, written at the entry's CSR position (so P needs
 * no reordering, in host or GPU memory). Rows of A and B are padded to Kp (a multiple of the
 * vector width) with zeros on upload, so every vector load is aligned. */
#ifndef TF_GPU_SDDMM_TILE_KERNEL_CUH
#define TF_GPU_SDDMM_TILE_KERNEL_CUH
#include <stdint.h>

#define TF_SDDMM_THREADS 512
#define TF_SDDMM_NPER 4

template <typename T> struct tf_vec16;
template <> struct tf_vec16<float> {
    typedef float4 type;
    static constexpr int width = 4;
    __device__ static inline float dot(float4 a, float4 b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
};
template <> struct tf_vec16<double> {
    typedef double2 type;
    static constexpr int width = 2;
    __device__ static inline double dot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }
};

/* P at entry e from its dot product: alpha * dot (times S's value for SCALE)
 * + beta * S's value; S's value is read only when needed. */
template <typename T>
__device__ inline T tf_sddmm_result(T dot, const T *sval, uint64_t e, int scale, T alpha, T beta)
{
    T r = (scale ? dot * sval[e] : dot) * alpha;
    if (beta != T(0)) r += beta * sval[e];
    return r;
}

/* Device view of the tiles (see fmt/sddmm_tiles.h) and of the operands. */
template <typename T>
struct tf_sddmm_args {
    const uint32_t *group_nnz, *group_rows, *group_col0, *rows, *col;
    const uint32_t *pos; /* CSR position of each entry (tile order)                  */
    const uint16_t *rloc;
    const T *sval;   /* S's values in tile order (read when beta != 0 or op is SCALE) */
    const T *A, *B;  /* M x Kp and N x Kp, row-major, zero-padded                   */
    T *out;          /* results in CSR order (entry e at pos[e])                     */
    uint32_t Kp, Tk, V, tile_j, ncols;
    int scale;       /* TF_SDDMM_SCALE                                               */
    T alpha, beta;
};

template <typename T, bool STAGE_B>
__global__ void __launch_bounds__(TF_SDDMM_THREADS) tf_sddmm_kernel(tf_sddmm_args<T> a)
{
    typedef typename tf_vec16<T>::type VT;
    constexpr int W = tf_vec16<T>::width;
    extern __shared__ __align__(16) unsigned char tf_sddmm_smem[];
    VT *sA = reinterpret_cast<VT *>(tf_sddmm_smem);

    const uint32_t g = blockIdx.x;
    const uint32_t e0 = a.group_nnz[g], e1 = a.group_nnz[g + 1];
    const uint32_t r0 = a.group_rows[g], nr = a.group_rows[g + 1] - r0;
    const uint32_t col0 = a.group_col0[g];
    const uint32_t nb = STAGE_B ? min(a.tile_j, a.ncols - col0) : 0;
    const uint32_t Tkv = a.Tk / W, Kpv = a.Kp / W;
    VT *sB = sA + (size_t)nr * Tkv;

    const uint32_t V = a.V, lane = threadIdx.x % V, vw = threadIdx.x / V, nvw = blockDim.x / V;
    const VT *Av = reinterpret_cast<const VT *>(a.A), *Bv = reinterpret_cast<const VT *>(a.B);

    /* Entries of this virtual warp: e0 + vw + j * nvw, j < NPER. */
    uint32_t rl[TF_SDDMM_NPER], cl[TF_SDDMM_NPER];
    T acc[TF_SDDMM_NPER];
#pragma unroll
    for (int j = 0; j < TF_SDDMM_NPER; ++j) {
        const uint32_t e = e0 + vw + j * nvw;
        acc[j] = 0;
        rl[j] = e < e1 ? a.rloc[e] : 0;
        cl[j] = e < e1 ? a.col[e] : 0;
    }
    for (uint32_t kk = 0; kk < Kpv; kk += Tkv) {
        const uint32_t tkv = min(Tkv, Kpv - kk);
        __syncthreads(); /* the previous slice is no longer read */
        for (uint32_t x = threadIdx.x; x < nr * tkv; x += blockDim.x) {
            const uint32_t r = x / tkv, c = x % tkv;
            sA[r * Tkv + c] = __ldg(Av + (size_t)a.rows[r0 + r] * Kpv + kk + c);
        }
        if (STAGE_B)
            for (uint32_t x = threadIdx.x; x < nb * tkv; x += blockDim.x) {
                const uint32_t r = x / tkv, c = x % tkv;
                sB[r * Tkv + c] = __ldg(Bv + (size_t)(col0 + r) * Kpv + kk + c);
            }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TF_SDDMM_NPER; ++j) {
            if (e0 + vw + j * nvw >= e1) continue;
            const VT *arow = sA + (size_t)rl[j] * Tkv;
            const VT *brow = STAGE_B ? sB + (size_t)(cl[j] - col0) * Tkv : Bv + (size_t)cl[j] * Kpv + kk;
            T sum = 0;
#pragma unroll 4
            for (uint32_t t = lane; t < tkv; t += V) {
                const VT bv = STAGE_B ? brow[t] : __ldg(brow + t);
                sum += tf_vec16<T>::dot(arow[t], bv);
            }
            acc[j] += sum;
        }
    }
#pragma unroll
    for (int j = 0; j < TF_SDDMM_NPER; ++j) {
        T v = acc[j];
        for (uint32_t off = V / 2; off > 0; off /= 2) v += __shfl_xor_sync(0xffffffffu, v, off, V);
        const uint32_t e = e0 + vw + j * nvw;
        if (lane == 0 && e < e1) a.out[a.pos[e]] = tf_sddmm_result(v, a.sval, e, a.scale, a.alpha, a.beta);
    }
}
#endif
