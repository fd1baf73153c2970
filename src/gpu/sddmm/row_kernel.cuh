/* SPDX-License-Identifier: BSD-3-Clause */
/* The row scheme's SDDMM kernel: non-zero-parallel over S in CSR order, no
 * tiles and no shared memory, results written at their CSR position. For
 * small problems (A and B in L2) latency and parallelism matter more than
 * reuse, so each non-zero costs only two index loads before its dot product.
 *
 * A virtual warp of V lanes (a power of two <= 32) owns `nper` consecutive
 * non-zeros and takes them ILP at a time: every lane loads its VPL 16-byte
 * vectors of B[col] and A[row] for the ILP non-zeros with no branch or
 * dependence between the loads (ptxas for sm_90 keeps about 4 of them in
 * flight per lane and relies on occupancy for the rest), then ILP
 * independent shuffle reductions. Rows of A hit L1, as consecutive
 * non-zeros mostly share their row. With A_REGS a lane instead keeps its
 * slice of the current row of A in registers and skips A's loads while a
 * step stays in that row; this needs the whole padded row in one pass
 * (Kp / W <= V VPL). Otherwise lanes walk K in passes of V VPL vectors, so
 * any Kp works. */
#ifndef TF_GPU_SDDMM_ROW_KERNEL_CUH
#define TF_GPU_SDDMM_ROW_KERNEL_CUH
#include "gpu/sddmm/tile_kernel.cuh"

#define TF_SDDMM_ROW_THREADS 256

template <typename T>
struct tf_sddmm_row_args {
    const uint32_t *row, *col; /* nnz: row and column of each non-zero, CSR order          */
    const T *sval;             /* nnz: S's values (read when beta != 0 or op is SCALE)     */
    const T *A, *B;            /* M x Kp and N x Kp, row-major, zero-padded                */
    T *out;                    /* nnz: results in CSR order                                */
    uint64_t nnz;
    uint32_t Kp, V, nper;
    int scale;
    T alpha, beta;
};

/* Non-zeros per step: 2 ILP VPL loads of 16 bytes per lane (16 at VPL 2 and 4, 8 at VPL 1). */
template <int VPL> struct tf_sddmm_row_ilp { static constexpr int value = VPL == 4 ? 2 : 4; };

template <typename T, int VPL, bool A_REGS, bool PERSIST>
__global__ void __launch_bounds__(TF_SDDMM_ROW_THREADS) tf_sddmm_row_kernel(tf_sddmm_row_args<T> a)
{
    typedef typename tf_vec16<T>::type VT;
    constexpr int W = tf_vec16<T>::width, ILP = tf_sddmm_row_ilp<VPL>::value;
    const uint32_t V = a.V, lane = threadIdx.x & (V - 1), Kpv = a.Kp / W;
    /* chunk vw of nper non-zeros; PERSIST (a resident-sized grid, which
     * leaves no partial last wave): then vw + (virtual warps in the grid),
     * ... (a separate instantiation, so the one-chunk kernel keeps its code) */
    const uint64_t nchunk = (a.nnz + a.nper - 1) / a.nper, stride = (uint64_t)gridDim.x * blockDim.x / V;
    uint64_t vw = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / V;
    if (vw >= nchunk) return; /* the whole virtual warp: its shuffles name only its own lanes */
    const unsigned mask = (unsigned)(0xffffffffull >> (32 - V)) << (threadIdx.x & 31 & ~(V - 1));
    const VT *Av = reinterpret_cast<const VT *>(a.A), *Bv = reinterpret_cast<const VT *>(a.B);
    VT ar[VPL];                /* A_REGS: this lane's slice of row `rr` of A */
    uint32_t rr = 0xffffffffu; /* no row yet (rows < 2^32 - 1)               */

    do {
        const uint64_t e0 = vw * a.nper, e1 = min(e0 + a.nper, a.nnz);
        for (uint64_t e = e0; e < e1; e += ILP) {
            uint32_t r[ILP], c[ILP];
#pragma unroll
            for (int j = 0; j < ILP; ++j) {
                const uint64_t ej = min(e + j, e1 - 1); /* past the end: the last non-zero again (L1), not written */
                r[j] = __ldg(a.row + ej);
                c[j] = __ldg(a.col + ej);
            }
            /* CSR order: rows ascend, so the step stays in row rr iff its ends do.
             * (The registers hold one pass over K: the driver sets A_REGS only
             * when Kpv <= V VPL; checked here too, as a wrong result is silent.) */
            const bool reuse = A_REGS && Kpv <= V * VPL && r[0] == rr && r[ILP - 1] == rr;
            T acc[ILP];
#pragma unroll
            for (int j = 0; j < ILP; ++j) acc[j] = 0;
            for (uint32_t k0 = lane; k0 < Kpv; k0 += V * VPL) {
                /* Vectors past the row's end (Kpv not a multiple of V VPL) load the
                 * last one again and are not added: no branch between the loads. */
                uint32_t t[VPL];
#pragma unroll
                for (int v = 0; v < VPL; ++v) t[v] = min(k0 + v * V, Kpv - 1);
                VT av[ILP][VPL], bv[ILP][VPL];
#pragma unroll
                for (int j = 0; j < ILP; ++j)
#pragma unroll
                    for (int v = 0; v < VPL; ++v) bv[j][v] = __ldg(Bv + (size_t)c[j] * Kpv + t[v]);
#pragma unroll
                for (int j = 0; j < ILP; ++j)
#pragma unroll
                    for (int v = 0; v < VPL; ++v) av[j][v] = reuse ? ar[v] : __ldg(Av + (size_t)r[j] * Kpv + t[v]);
#pragma unroll
                for (int j = 0; j < ILP; ++j)
#pragma unroll
                    for (int v = 0; v < VPL; ++v)
                        acc[j] += k0 + v * V < Kpv ? tf_vec16<T>::dot(av[j][v], bv[j][v]) : T(0);
                if (A_REGS && !reuse) { /* one pass only (Kpv <= V VPL): keep the step's last row */
#pragma unroll
                    for (int v = 0; v < VPL; ++v) ar[v] = av[ILP - 1][v];
                    rr = r[ILP - 1];
                }
            }
            for (uint32_t off = V / 2; off > 0; off /= 2)
#pragma unroll
                for (int j = 0; j < ILP; ++j) acc[j] += __shfl_xor_sync(mask, acc[j], off, V);
#pragma unroll
            for (int j = 0; j < ILP; ++j) /* every lane has each sum: spread the writes over the lanes */
                if (lane == (j & (V - 1)) && e + j < e1)
                    a.out[e + j] = tf_sddmm_result(acc[j], a.sval, e + j, a.scale, a.alpha, a.beta);
        }
        vw += stride;
    } while (PERSIST && vw < nchunk);
}
#endif
