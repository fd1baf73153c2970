/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of CP-APR (the vtable of seams/cp_apr.h), one GPU, double
 * precision: per mode a copy of the non-zeros grouped by that mode's index
 * (a stable counting sort on the host, uploaded once), the factors, every
 * mode's Phi and lambda on the device; the host sees scalars (and lambda,
 * R values, to check it is finite and to form the model's sum as the CPU
 * does).
 *
 * The Phi pass (apr_phi_kernel): the mode's non-zeros cut into chunks of L
 * (64; R / 2 above rank 128), one per group of C lanes (C = min(32, the
 * power of two >= R); G = 32 / C groups a warp), each lane holding columns
 * c, c + C, ... of the rank. A group walks its chunk in order: per non-zero
 * the Khatri-Rao row of the other modes (its lanes' columns), m = <B(i,:),
 * kr> by a shuffle reduction over the group, v = x / max(m, eps), acc +=
 * v kr; where the row changes, acc is stored. A row inside the chunk goes
 * straight to Phi (one writer, no atomics); the chunk's first row, when it
 * began in the chunk before, goes to the chunk's head edge row, its last,
 * when it goes on into the next, to its tail -- the CPU's cut
 * (cpu/apr_phi.c) with chunks for blocks. apr_merge_kernel then sums every
 * row that crosses chunks: tail of the chunk it starts in plus the heads
 * of the chunks it runs through (a block per such row, its warps over the
 * chunks in a fixed stride, their sums added in warp order), the list of
 * those rows made once per mode on the host. Rows without non-zeros are 0
 * (Phi is cleared before the pass). No atomics, the same order every pass:
 * Phi, and so the fit, has the same bits on every run. Ranks above 256
 * (8 columns a lane) take two steps: the weights v first
 * (apr_model_kernel), then the sums in column slabs of 256 (grid.y).
 *
 * The KKT violation max |min(B, 1 - Phi)| (NaN wins, as on the CPU) is a
 * fixed grid of block maxima, then one block; the scooch counts into an
 * integer; the column 1-norms (end_mode, the log-likelihood's model sum)
 * are row slabs of 1024 summed per column in order, then the slabs in
 * order; the log-likelihood's data term sum x log m walks mode 1's copy in
 * the same chunks (a sum per chunk, then the chunks' sums in a fixed
 * tree).
 *
 * The state (tf_gpu_apr, apr.cuh) is also one GPU's part of a run over
 * several (multi.cu): there mode n's copy holds the non-zeros of the GPU's
 * rows [lo, lo + rows) of the mode, that index shifted down by lo, and the
 * scooch, the passes (B read at A_n + lo R), Phi, the KKT violation and the
 * multiplication cover those rows alone; every factor is whole on every GPU
 * (the column 1-norms, the normalisation and the model's sum read it all).
 * One GPU is the case lo = 0, rows = the mode's length.
 *
 * Streamed (one GPU, when the copies do not fit its budget; batch > 0):
 * every mode's copy sorted into pinned host memory instead, and each pass
 * (Phi, the log-likelihood's) sends it through two device slots of `batch`
 * non-zeros -- whole chunks -- on the side stream, a batch's upload beside
 * the kernels of the one before (events: a slot is refilled once the
 * kernels that read it are done). A batch's kernels get its first chunk's
 * place in the copy (q0: the edge rows and the per-chunk sums are the
 * copy's) and the mode index just before and after it (a row that goes on
 * across batches goes to the edge rows as across chunks), so every chunk,
 * edge row and merge is the resident pass's: the same bits. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "gpu/apr/apr.cuh"
#include "gpu/engine/mode_sort.cuh"
#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/warp.cuh"
#include "seams/cuda_module.h"

#define APR_THREADS 256
#define APR_WARPS (APR_THREADS / 32)
#define APR_FUSED_RANK 256   /* up to here one pass (8 columns a lane) */
#define APR_SLAB_ROWS 1024   /* rows per block of the column sums     */
#define APR_MAX_BLOCKS 1024  /* blocks of the KKT reduction           */
#define APR_STREAM_BATCH ((uint64_t)1 << 25) /* non-zeros a streamed batch at most */

namespace {

/* A row of Phi that crosses chunks: its partial sums are the tail edge row
 * of chunk b0 and the head edge rows of chunks b0 + 1 .. b1. */
struct apr_cross {
    uint64_t row;
    uint64_t b0, b1;
};

struct apr_args {
    const uint32_t *ind[TF_GPU_MAX_ORDER]; /* the mode's copy: every mode's indices */
    const double *A[TF_GPU_MAX_ORDER];     /* the factors; A[mode] is B            */
    const double *vals;
    const double *w;   /* column weights of the model (log-likelihood: lambda); NULL: ones */
    const double *v;   /* two-step pass: x / max(m, eps) per non-zero                   */
    double *Phi;
    double *edges;     /* 2 R per chunk: head, tail                                     */
    double *out;       /* apr_model_kernel: per chunk x log m sums, or per non-zero v   */
    uint64_t nnz, nchunks;
    uint32_t order, mode, R, C, L;
    double eps;
    /* streamed: these non-zeros are a batch of the mode's copy, whose first
     * chunk is chunk q0 of the copy (the edge rows and the per-chunk sums
     * are the copy's: indexed q0 + q), and the mode index just before and
     * after the batch where there is one (has_*: 0 on one resident pass) */
    uint64_t q0;
    uint32_t key_before, key_after, has_before, has_after;
};

__device__ __forceinline__ double max_nan(double m, double x)
{
    return (x > m || x != x) && m == m ? x : m;
}

/* The chunk of group q: [k0, k1), its first and last row, and whether they
 * continue from the chunk before / into the next. */
struct chunk_rows {
    uint64_t k0, k1;
    uint32_t first, last;
    bool from_prev, into_next;
};

__device__ __forceinline__ chunk_rows chunk_of(const apr_args &a, uint64_t q)
{
    const uint32_t *row = a.ind[a.mode];
    chunk_rows c;
    c.k0 = q * a.L;
    c.k1 = c.k0 + a.L < a.nnz ? c.k0 + a.L : a.nnz;
    c.first = __ldg(row + c.k0);
    c.last = __ldg(row + c.k1 - 1);
    c.from_prev = c.k0 > 0 ? __ldg(row + c.k0 - 1) == c.first : a.has_before && a.key_before == c.first;
    c.into_next = c.k1 < a.nnz ? __ldg(row + c.k1) == c.last : a.has_after && a.key_after == c.last;
    return c;
}

/* The Phi pass of a.mode. S: columns per lane (R <= S C, or, with PRE,
 * the slab blockIdx.y of S 32 columns); PRE: the weights a.v are given. */
template <int ORDER, int S, bool PRE>
__global__ void __launch_bounds__(APR_THREADS) apr_phi_kernel(apr_args a)
{
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    const uint32_t N = ORDER > 0 ? (uint32_t)ORDER : a.order;
    const uint32_t C = a.C, R = a.R, c = (threadIdx.x & 31) % C;
    const uint64_t q = ((uint64_t)blockIdx.x * APR_THREADS + threadIdx.x) / C; /* this group's chunk */
    const bool live = q < a.nchunks;
    const uint32_t col0 = PRE ? blockIdx.y * (uint32_t)(S * 32) : 0;
    const uint32_t *row = a.ind[a.mode];
    const double *B = a.A[a.mode];
    chunk_rows ch = {0, 0, 0, 0, false, false};
    if (live) ch = chunk_of(a, q);
    double acc[S];
#pragma unroll
    for (int s = 0; s < S; ++s) acc[s] = 0.0;
    uint32_t cur = ch.first;
    /* the whole warp runs L steps, so every lane takes part in the shuffles */
    for (uint32_t t = 0; t < a.L; ++t) {
        const uint64_t j = ch.k0 + t;
        const bool on = live && j < ch.k1;
        const uint32_t i = on ? __ldg(row + j) : cur;
        if (i != cur) { /* cur is finished: its sums to Phi or an edge row */
            double *dst = cur == ch.first && ch.from_prev ? a.edges + 2 * (a.q0 + q) * R
                          : cur == ch.last && ch.into_next ? a.edges + (2 * (a.q0 + q) + 1) * R
                                                           : a.Phi + (uint64_t)cur * R;
#pragma unroll
            for (int s = 0; s < S; ++s) {
                const uint32_t r = col0 + c + (uint32_t)s * C;
                if (r < R) dst[r] = acc[s];
                acc[s] = 0.0;
            }
            cur = i;
        }
        double kr[S];
#pragma unroll
        for (int s = 0; s < S; ++s) kr[s] = 1.0;
        double part = 0.0;
        if (on) {
#pragma unroll
            for (uint32_t n = 0; n < NMAX; ++n) {
                if ((ORDER == 0 && n >= N) || n == a.mode) continue;
                const double *f = a.A[n] + (uint64_t)__ldg(a.ind[n] + j) * R;
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const uint32_t r = col0 + c + (uint32_t)s * C;
                    if (r < R) kr[s] *= __ldg(f + r);
                }
            }
            if (!PRE) {
                const double *b = B + (uint64_t)i * R;
#pragma unroll
                for (int s = 0; s < S; ++s) {
                    const uint32_t r = c + (uint32_t)s * C;
                    if (r < R) part += __ldg(b + r) * kr[s];
                }
            }
        }
        double v;
        if (PRE) {
            v = on ? __ldg(a.v + j) : 0.0;
        } else {
            for (uint32_t off = C / 2; off > 0; off >>= 1) part += __shfl_xor_sync(TF_FULL_MASK, part, off, C);
            v = on ? __ldg(a.vals + j) / (part > a.eps ? part : a.eps) : 0.0;
        }
        if (on) {
#pragma unroll
            for (int s = 0; s < S; ++s) acc[s] += v * kr[s];
        }
    }
    if (live) {
        double *dst = cur == ch.first && ch.from_prev ? a.edges + 2 * (a.q0 + q) * R
                      : cur == ch.last && ch.into_next ? a.edges + (2 * (a.q0 + q) + 1) * R
                                                       : a.Phi + (uint64_t)cur * R;
#pragma unroll
        for (int s = 0; s < S; ++s) {
            const uint32_t r = col0 + c + (uint32_t)s * C;
            if (r < R) dst[r] = acc[s];
        }
    }
}

/* Per non-zero m = sum_r B(i,r) w_r kr_r over the whole rank (lanes over
 * columns, a shuffle sum), by the chunks of apr_phi_kernel. LOGLIK: the sum
 * of x log m over the chunk's non-zeros with x != 0 into out[q]; else the
 * weight x / max(m, eps) into out[j]. */
template <int ORDER, bool LOGLIK>
__global__ void __launch_bounds__(APR_THREADS) apr_model_kernel(apr_args a)
{
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    const uint32_t N = ORDER > 0 ? (uint32_t)ORDER : a.order;
    const uint32_t C = a.C, R = a.R, c = (threadIdx.x & 31) % C;
    const uint64_t q = ((uint64_t)blockIdx.x * APR_THREADS + threadIdx.x) / C;
    const bool live = q < a.nchunks;
    const uint64_t k0 = live ? q * a.L : 0, k1 = live ? (k0 + a.L < a.nnz ? k0 + a.L : a.nnz) : 0;
    double sum = 0.0;
    for (uint32_t t = 0; t < a.L; ++t) {
        const uint64_t j = k0 + t;
        const bool on = live && j < k1;
        double part = 0.0;
        if (on) {
            const double *f[NMAX];
#pragma unroll
            for (uint32_t n = 0; n < NMAX; ++n)
                if (ORDER > 0 || n < N) f[n] = a.A[n] + (uint64_t)__ldg(a.ind[n] + j) * R;
            for (uint32_t r = c; r < R; r += C) {
                double p = a.w ? __ldg(a.w + r) : 1.0;
                p *= __ldg(f[a.mode] + r);
#pragma unroll
                for (uint32_t n = 0; n < NMAX; ++n)
                    if ((ORDER > 0 || n < N) && n != a.mode) p *= __ldg(f[n] + r);
                part += p;
            }
        }
        for (uint32_t off = C / 2; off > 0; off >>= 1) part += __shfl_xor_sync(TF_FULL_MASK, part, off, C);
        if (on && c == 0) {
            const double x = __ldg(a.vals + j);
            if (LOGLIK) {
                if (x != 0.0) sum += x * log(part);
            } else {
                a.out[j] = x / (part > a.eps ? part : a.eps);
            }
        }
    }
    if (LOGLIK && live && c == 0) a.out[a.q0 + q] = sum;
}

/* Every row that crosses chunks: tail(b0) + the heads of b0 + 1 .. b1. A
 * block per row; warp w sums the heads b0 + 1 + w, + APR_WARPS, ..., the
 * warps' sums are added in order. */
__global__ void __launch_bounds__(APR_THREADS)
    apr_merge_kernel(const apr_cross *x, uint64_t n, const double *edges, double *Phi, uint32_t R)
{
    __shared__ double part[APR_WARPS][32];
    const uint32_t w = threadIdx.x / 32, lane = threadIdx.x & 31;
    for (uint64_t e = blockIdx.x; e < n; e += gridDim.x) {
        const apr_cross cr = x[e];
        for (uint32_t r0 = 0; r0 < R; r0 += 32) {
            const uint32_t r = r0 + lane;
            double s = 0.0;
            if (r < R)
                for (uint64_t b = cr.b0 + 1 + w; b <= cr.b1; b += APR_WARPS) s += edges[2 * b * R + r];
            part[w][lane] = s;
            __syncthreads();
            if (w == 0 && r < R) {
                double t = edges[(2 * cr.b0 + 1) * R + r];
#pragma unroll
                for (uint32_t k = 0; k < APR_WARPS; ++k) t += part[k][lane];
                Phi[cr.row * R + r] = t;
            }
            __syncthreads();
        }
    }
}

/* Block maxima of |min(B, 1 - Phi)| over n entries (NaN wins). */
__global__ void __launch_bounds__(APR_THREADS)
    apr_kkt_kernel(const double *B, const double *Phi, uint64_t n, double *part)
{
    __shared__ double sh[APR_THREADS];
    double m = 0.0;
    for (uint64_t e = (uint64_t)blockIdx.x * APR_THREADS + threadIdx.x; e < n; e += (uint64_t)gridDim.x * APR_THREADS) {
        const double b = B[e], c = 1.0 - Phi[e];
        const double t = b != b ? b : b < c ? b : c;
        m = max_nan(m, fabs(t));
    }
    sh[threadIdx.x] = m;
    __syncthreads();
    for (uint32_t h = APR_THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) sh[threadIdx.x] = max_nan(sh[threadIdx.x], sh[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* One block: out[0] = the maximum (NaN wins) or the sum of part[0..n), in a
 * fixed order (thread t's stride, then a fixed tree). */
template <bool MAX>
__global__ void __launch_bounds__(APR_THREADS) apr_reduce_kernel(const double *part, uint64_t n, double *out)
{
    __shared__ double sh[APR_THREADS];
    double m = 0.0;
    for (uint64_t e = threadIdx.x; e < n; e += APR_THREADS) m = MAX ? max_nan(m, part[e]) : m + part[e];
    sh[threadIdx.x] = m;
    __syncthreads();
    for (uint32_t h = APR_THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h)
            sh[threadIdx.x] = MAX ? max_nan(sh[threadIdx.x], sh[threadIdx.x + h]) : sh[threadIdx.x] + sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = sh[0];
}

/* The scooch: A += kappa where Phi > 0 and A < kappatol; the count into *moved. */
__global__ void __launch_bounds__(APR_THREADS) apr_scooch_kernel(double *A, const double *Phi, uint64_t n, double kappa,
                                                                  double kappatol, unsigned long long *moved)
{
    __shared__ unsigned long long sh[APR_THREADS];
    unsigned long long k = 0;
    for (uint64_t e = (uint64_t)blockIdx.x * APR_THREADS + threadIdx.x; e < n; e += (uint64_t)gridDim.x * APR_THREADS)
        if (Phi[e] > 0.0 && A[e] < kappatol) {
            A[e] += kappa;
            ++k;
        }
    sh[threadIdx.x] = k;
    __syncthreads();
    for (uint32_t h = APR_THREADS / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0 && sh[0]) atomicAdd(moved, sh[0]); /* an integer: exact in any order */
}

/* A(i, r) *= w(r) (INVERT: by 1 / w(r) where w(r) > 0, else 1). */
template <bool INVERT>
__global__ void __launch_bounds__(APR_THREADS) apr_scale_kernel(double *A, const double *w, uint64_t n, uint32_t R)
{
    for (uint64_t e = (uint64_t)blockIdx.x * APR_THREADS + threadIdx.x; e < n; e += (uint64_t)gridDim.x * APR_THREADS) {
        const double s = w[e % R];
        A[e] *= INVERT ? (s > 0.0 ? 1.0 / s : 1.0) : s;
    }
}

__global__ void __launch_bounds__(APR_THREADS) apr_multiply_kernel(double *A, const double *Phi, uint64_t n)
{
    for (uint64_t e = (uint64_t)blockIdx.x * APR_THREADS + threadIdx.x; e < n; e += (uint64_t)gridDim.x * APR_THREADS)
        A[e] *= Phi[e];
}

__global__ void apr_fill_kernel(double *x, uint64_t n, double value)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (uint64_t)gridDim.x * blockDim.x)
        x[e] = value;
}

/* Column sums of |A| over the rows of slab blockIdx.x, columns blockIdx.y
 * APR_THREADS + threadIdx.x, in row order, into part[slab R + r]. */
__global__ void __launch_bounds__(APR_THREADS)
    apr_colsum_kernel(const double *A, uint64_t I, uint32_t R, double *part)
{
    const uint32_t r = blockIdx.y * APR_THREADS + threadIdx.x;
    if (r >= R) return;
    const uint64_t i0 = (uint64_t)blockIdx.x * APR_SLAB_ROWS, i1 = i0 + APR_SLAB_ROWS < I ? i0 + APR_SLAB_ROWS : I;
    double s = 0.0;
    for (uint64_t i = i0; i < i1; ++i) s += fabs(A[i * R + r]);
    part[(uint64_t)blockIdx.x * R + r] = s;
}

/* out[r] = the slabs' sums of column r, in slab order. */
__global__ void __launch_bounds__(APR_THREADS)
    apr_colsum_final_kernel(const double *part, uint64_t slabs, uint32_t R, double *out)
{
    const uint32_t r = blockIdx.x * APR_THREADS + threadIdx.x;
    if (r >= R) return;
    double s = 0.0;
    for (uint64_t b = 0; b < slabs; ++b) s += part[b * R + r];
    out[r] = s;
}

} // namespace

/* One mode's copy of the non-zeros on the device: those of this GPU's rows
 * [lo, lo + rows) of the mode (all of them on one GPU), the mode's index
 * shifted down by lo. */
struct apr_mode {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    apr_cross *cross = nullptr;
    uint64_t ncross = 0;
    uint64_t nnz = 0, nchunks = 0, lo = 0, rows = 0;
    /* streamed: the copy in pinned host memory instead (one block) */
    void *h_block = nullptr;
    uint32_t *h_ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *h_vals = nullptr;
};

struct tf_gpu_apr {
    tf_gpu_dev *dev = nullptr; /* the GPU (borrowed) */
    uint32_t order = 0, R = 0, L = 0, C = 0;
    uint64_t maxchunks = 0, maxnnz = 0, maxdim = 0, npart = 0;
    uint64_t dims[TF_GPU_MAX_ORDER] = {0};
    apr_mode md[TF_GPU_MAX_ORDER];
    /* A[m]: the whole factor (dims x R) on every GPU; Phi[m]: this GPU's rows of mode m */
    double *A[TF_GPU_MAX_ORDER] = {nullptr}, *Phi[TF_GPU_MAX_ORDER] = {nullptr};
    double *lambda = nullptr, *edges = nullptr, *v = nullptr, *part = nullptr, *colsum = nullptr, *scalar = nullptr;
    unsigned long long *counter = nullptr;
    std::vector<double> h_lambda;
    bool started = false;
    uint64_t passes = 0;
    /* Streamed (batch > 0): every mode's copy in pinned host memory, sent
     * through two device slots of `batch` non-zeros (whole chunks) on the
     * side stream, a slot refilled once the work stream's kernels of its
     * last batch are done (consumed), a batch's kernels run once it is in
     * (uploaded). */
    uint64_t batch = 0;
    uint32_t *s_ind[2][TF_GPU_MAX_ORDER] = {{nullptr}};
    double *s_vals[2] = {nullptr};
    cudaEvent_t uploaded[2] = {nullptr}, consumed[2] = {nullptr};
    /* Resident: the non-zeros sent up to sort into mode copies on the
     * device; with same_nz (one GPU: every add_mode gets the same whole
     * tensor) one upload serves every mode until finish, else each
     * add_mode's own is dropped when its copy is made. */
    tf_gpu_mode_sort up;
    bool same_nz = false;

    ~tf_gpu_apr()
    {
        if (dev && dev->device >= 0) cudaSetDevice(dev->device);
        if (batch && dev) { /* streamed (one GPU): nothing reads a slot or a host copy after */
            cudaStreamSynchronize(dev->stream);
            cudaStreamSynchronize(dev->side);
        }
        for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) {
            for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) tf_gpu_free(md[m].ind[k]);
            tf_gpu_free(md[m].vals);
            tf_gpu_free(md[m].cross);
            if (md[m].h_block) cudaFreeHost(md[m].h_block);
            tf_gpu_free(A[m]);
            tf_gpu_free(Phi[m]);
        }
        for (int s = 0; s < 2; ++s) {
            for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) tf_gpu_free(s_ind[s][k]);
            tf_gpu_free(s_vals[s]);
            if (uploaded[s]) cudaEventDestroy(uploaded[s]);
            if (consumed[s]) cudaEventDestroy(consumed[s]);
        }
        double *bufs[] = {lambda, edges, v, part, colsum, scalar};
        for (double *b : bufs) tf_gpu_free(b);
        tf_gpu_free(counter);
    }

    unsigned grid(uint64_t n) const
    {
        const uint64_t b = (n + APR_THREADS - 1) / APR_THREADS, cap = (uint64_t)dev->sm_count * 16;
        return (unsigned)std::max<uint64_t>(1, std::min(b, cap));
    }
    /* this GPU's rows of mode m in the whole factor, and their entries */
    double *mine(uint32_t m) const { return A[m] + md[m].lo * R; }
    uint64_t entries(uint32_t m) const { return md[m].rows * R; }
};

namespace {

typedef tf_gpu_apr gpu_apr;

tf_status check(const gpu_apr *c, uint32_t mode)
{
    if (mode >= c->order)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: mode %u is outside 1..%u", mode + 1, c->order);
    if (!c->started) return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: init was not called");
    return tf_gpu_dev_use(c->dev);
}

/* The pass's arguments for mode: its copy, B = this GPU's rows of A[mode]
 * (the copy's mode index is local to them). */
apr_args args_of(const gpu_apr *c, uint32_t mode)
{
    apr_args a;
    memset(&a, 0, sizeof a);
    for (uint32_t k = 0; k < c->order; ++k) {
        a.ind[k] = c->md[mode].ind[k];
        a.A[k] = c->A[k];
    }
    a.A[mode] = c->mine(mode);
    a.vals = c->md[mode].vals;
    a.nnz = c->md[mode].nnz;
    a.nchunks = c->md[mode].nchunks;
    a.order = c->order;
    a.mode = mode;
    a.R = c->R;
    a.C = c->C;
    a.L = c->L;
    return a;
}

/* Blocks of APR_THREADS for one group of C lanes per chunk. */
unsigned chunk_blocks(const gpu_apr *c, uint64_t nchunks)
{
    return (unsigned)((nchunks * c->C + APR_THREADS - 1) / APR_THREADS);
}

/* fn(a, blocks) over the non-zeros of mode's copy (at least one): resident,
 * once over all of it; streamed, once per batch of c->batch non-zeros
 * (whole chunks, so every chunk is the resident pass's), each copied from
 * pinned host memory into a device slot on the side stream beside the
 * kernels of the batch before. Queued only: the host waits for nothing. */
template <class Fn> tf_status over_copy(gpu_apr *c, uint32_t mode, Fn &&fn)
{
    const apr_mode &md = c->md[mode];
    apr_args a = args_of(c, mode);
    if (!c->batch) return fn(a, chunk_blocks(c, md.nchunks));
    const cudaStream_t st = c->dev->stream, side = c->dev->side;
    const uint32_t *keys = md.h_ind[mode];
    for (uint64_t k0 = 0, b = 0; k0 < md.nnz; k0 += c->batch, ++b) {
        const int s = (int)(b & 1);
        const uint64_t n = std::min<uint64_t>(c->batch, md.nnz - k0);
        TF_CU(cudaStreamWaitEvent(side, c->consumed[s], 0)); /* the slot's last batch is done */
        for (uint32_t k = 0; k < c->order; ++k) {
            TF_CU(cudaMemcpyAsync(c->s_ind[s][k], md.h_ind[k] + k0, n * sizeof(uint32_t), cudaMemcpyHostToDevice, side));
            a.ind[k] = c->s_ind[s][k];
        }
        TF_CU(cudaMemcpyAsync(c->s_vals[s], md.h_vals + k0, n * sizeof(double), cudaMemcpyHostToDevice, side));
        TF_CU(cudaEventRecord(c->uploaded[s], side));
        TF_CU(cudaStreamWaitEvent(st, c->uploaded[s], 0));
        a.vals = c->s_vals[s];
        a.nnz = n;
        a.nchunks = (n + c->L - 1) / c->L;
        a.q0 = k0 / c->L; /* k0: a multiple of batch, itself of L */
        a.has_before = k0 > 0;
        a.key_before = k0 > 0 ? keys[k0 - 1] : 0;
        a.has_after = k0 + n < md.nnz;
        a.key_after = k0 + n < md.nnz ? keys[k0 + n] : 0;
        TF_TRY(fn(a, chunk_blocks(c, a.nchunks)));
        TF_CU(cudaEventRecord(c->consumed[s], st));
    }
    return TF_OK;
}

/* Column 1-norms of A (I x R) into out (device, R). */
tf_status colsums(gpu_apr *c, const double *A, uint64_t I, double *out)
{
    const cudaStream_t st = c->dev->stream;
    const uint64_t slabs = (I + APR_SLAB_ROWS - 1) / APR_SLAB_ROWS;
    const unsigned cols = (c->R + APR_THREADS - 1) / APR_THREADS;
    apr_colsum_kernel<<<dim3((unsigned)slabs, cols), APR_THREADS, 0, st>>>(A, I, c->R, c->part);
    TF_CU_LAUNCH("apr_colsum_kernel");
    apr_colsum_final_kernel<<<cols, APR_THREADS, 0, st>>>(c->part, slabs, c->R, out);
    TF_CU_LAUNCH("apr_colsum_final_kernel");
    return TF_OK;
}

/* The pass of a mode into Phi[mode] (this GPU's rows, cleared first), without the KKT. */
tf_status phi_pass(gpu_apr *c, uint32_t mode, double eps)
{
    const cudaStream_t st = c->dev->stream;
    const uint32_t R = c->R;
    TF_CU(cudaMemsetAsync(c->Phi[mode], 0, c->entries(mode) * sizeof(double), st));
    if (c->md[mode].nnz == 0) return TF_OK;
    TF_TRY(over_copy(c, mode, [&](apr_args a, unsigned blocks) -> tf_status {
        a.Phi = c->Phi[mode];
        a.edges = c->edges;
        a.eps = eps;
        return tf_with_order(c->order, [&](auto ord) -> tf_status {
            constexpr int ORDER = decltype(ord)::value;
            if (R > APR_FUSED_RANK) { /* the weights first, then the sums in slabs of 256 columns */
                a.out = c->v;
                apr_model_kernel<ORDER, false><<<blocks, APR_THREADS, 0, st>>>(a);
                TF_CU_LAUNCH("apr_model_kernel");
                a.v = c->v;
                const unsigned slabs = (R + APR_FUSED_RANK - 1) / APR_FUSED_RANK;
                apr_phi_kernel<ORDER, 8, true><<<dim3(blocks, slabs), APR_THREADS, 0, st>>>(a);
            } else if (R > 128) {
                apr_phi_kernel<ORDER, 8, false><<<blocks, APR_THREADS, 0, st>>>(a);
            } else if (R > 64) {
                apr_phi_kernel<ORDER, 4, false><<<blocks, APR_THREADS, 0, st>>>(a);
            } else if (R > 32) {
                apr_phi_kernel<ORDER, 2, false><<<blocks, APR_THREADS, 0, st>>>(a);
            } else {
                apr_phi_kernel<ORDER, 1, false><<<blocks, APR_THREADS, 0, st>>>(a);
            }
            TF_CU_LAUNCH("apr_phi_kernel");
            return TF_OK;
        });
    }));
    const apr_mode &md = c->md[mode];
    if (md.ncross) {
        const unsigned mb = (unsigned)std::min<uint64_t>(md.ncross, (uint64_t)c->dev->sm_count * 16);
        apr_merge_kernel<<<mb, APR_THREADS, 0, st>>>(md.cross, md.ncross, c->edges, c->Phi[mode], R);
        TF_CU_LAUNCH("apr_merge_kernel");
    }
    return TF_OK;
}

/* Chunk length of the pass at rank R: 64 non-zeros, R / 2 above rank 128,
 * so the edge rows (2 R doubles a chunk) stay within 4 doubles a non-zero. */
uint32_t chunk_len(uint32_t R)
{
    return R > 128 ? R / 2 : 64;
}

/* The rows of a mode's sorted copy that cross chunks, and where, from
 * each chunk's first and last row (head[b], tail[b]: the copy's index at b L
 * and at the chunk's last entry). */
void crossing_rows(const uint32_t *head, const uint32_t *tail, uint64_t nchunks, std::vector<apr_cross> &out)
{
    out.clear();
    for (uint64_t b = 0; b < nchunks; ++b) {
        const uint32_t first = head[b], last = tail[b];
        const bool from_prev = b > 0 && tail[b - 1] == first, into_next = b + 1 < nchunks && head[b + 1] == last;
        if (!into_next || (from_prev && first == last)) continue;
        uint64_t b1 = b;
        for (uint64_t d = b + 1; d < nchunks; ++d) { /* head[d] == last: into_next */
            if (head[d] != last) break;
            b1 = d;
            if (!(tail[d] == last && d + 1 < nchunks && head[d + 1] == last)) break;
        }
        out.push_back({last, b, b1});
    }
}

/* bytes more fit what the GPU has left for the run (its budget), else
 * TF_ERR_NOMEM naming them. */
tf_status room_for(const gpu_apr *c, uint64_t bytes, const char *what)
{
    uint64_t budget = 0;
    TF_TRY(tf_gpu_budget(c->dev, &budget));
    if (bytes > budget)
        return tf_fail(TF_ERR_NOMEM,
                       "GPU CP-APR on GPU %d: %s (%llu bytes) does not fit the %llu bytes the GPU has left for it "
                       "(%s)",
                       c->dev->device, what, (unsigned long long)bytes, (unsigned long long)budget,
                       c->batch ? "not even with the copies streamed from host memory"
                                : "over several GPUs CP-APR is not streamed: more GPUs, one GPU, or --device cpu");
    return TF_OK;
}

/* Mode m's crossing rows (of its chunks' first and last rows) to the device. */
tf_status send_cross(gpu_apr *c, uint32_t m, const uint32_t *head, const uint32_t *tail)
{
    apr_mode &md = c->md[m];
    std::vector<apr_cross> cross;
    crossing_rows(head, tail, md.nchunks, cross);
    md.ncross = cross.size();
    if (!md.ncross) return TF_OK;
    TF_TRY(tf_gpu_alloc(&md.cross, md.ncross, "CP-APR crossing rows"));
    TF_TRY(tf_gpu_h2d_staged(c->dev, md.cross, cross.data(), md.ncross * sizeof(apr_cross), c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

/* The same from the sorted row index on the host. */
tf_status send_cross_host(gpu_apr *c, uint32_t m, const uint32_t *keys)
{
    std::vector<uint32_t> head, tail;
    tf_host_chunk_ends(keys, c->md[m].nnz, c->L, head, tail);
    return send_cross(c, m, head.data(), tail.data());
}

/* Streamed: mode m's copy sorted straight into pinned host memory (its
 * index arrays, then the values, in one block). */
tf_status add_host_copy(gpu_apr *c, uint32_t m, const tf_tensor *nz)
{
    apr_mode &md = c->md[m];
    const uint32_t N = c->order;
    const uint64_t nnz = nz->nnz, ibytes = (N * nnz * sizeof(uint32_t) + 7) & ~(uint64_t)7;
    if (nnz) {
        const cudaError_t e = cudaHostAlloc(&md.h_block, ibytes + nnz * sizeof(double), cudaHostAllocDefault);
        if (e != cudaSuccess) {
            cudaGetLastError();
            md.h_block = nullptr;
            return tf_fail(TF_ERR_NOMEM, "GPU CP-APR, streamed: %llu bytes of pinned host memory for a mode's copy "
                                         "of the non-zeros could not be had (%s)",
                           (unsigned long long)(ibytes + nnz * sizeof(double)), cudaGetErrorString(e));
        }
        for (uint32_t k = 0; k < N; ++k) md.h_ind[k] = (uint32_t *)md.h_block + (uint64_t)k * nnz;
        md.h_vals = (double *)((char *)md.h_block + ibytes);
    }
    std::vector<uint64_t> perm;
    tf_host_sort_by_mode(nz, m, perm);
    for (uint32_t k = 0; k < N; ++k)
        for (uint64_t j = 0; j < nnz; ++j) md.h_ind[k][j] = nz->ind[k][perm[j]];
    for (uint64_t j = 0; j < nnz; ++j) md.h_vals[j] = nz->vals[perm[j]];
    return send_cross_host(c, m, md.h_ind[m]);
}

} // namespace

/* ------------------------------------------------ one GPU's state (apr.cuh) */

tf_gpu_apr *tf_gpu_apr_new()
{
    return new (std::nothrow) tf_gpu_apr();
}

void tf_gpu_apr_delete(tf_gpu_apr *c)
{
    if (!c) return;
    if (c->dev) tf_gpu_dev_use(c->dev);
    delete c;
}

tf_gpu_dev *tf_gpu_apr_dev(const tf_gpu_apr *c)
{
    return c->dev;
}

double *tf_gpu_apr_factor(tf_gpu_apr *c, uint32_t mode)
{
    return c->A[mode];
}

uint64_t tf_gpu_apr_passes(const tf_gpu_apr *c)
{
    return c->passes;
}

tf_status tf_gpu_apr_setup(tf_gpu_apr *c, tf_gpu_dev *dev, uint32_t order, const uint64_t *dims, uint32_t R)
{
    if (order < 1 || order > TF_GPU_MAX_ORDER || R < 1)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: order %u or rank %u is out of range", order, R);
    c->dev = dev;
    TF_TRY(tf_gpu_dev_use(dev));
    c->order = order;
    c->R = R;
    c->L = chunk_len(R);
    c->C = R >= 32 ? 32 : tf_pow2_ceil(R);
    uint64_t sumdims = 0;
    for (uint32_t m = 0; m < order; ++m) {
        c->dims[m] = dims[m];
        c->maxdim = std::max(c->maxdim, dims[m]);
        sumdims += dims[m];
    }
    TF_TRY(room_for(c, (sumdims * R + R + (uint64_t)order * R + 2) * sizeof(double), "the factors"));
    for (uint32_t m = 0; m < order; ++m) TF_TRY(tf_gpu_alloc(&c->A[m], dims[m] * R, "CP-APR factor"));
    TF_TRY(tf_gpu_alloc(&c->lambda, R, "CP-APR lambda"));
    TF_TRY(tf_gpu_alloc(&c->colsum, (uint64_t)order * R, "CP-APR column sums"));
    TF_TRY(tf_gpu_alloc(&c->scalar, 1, "CP-APR scalar"));
    TF_TRY(tf_gpu_alloc(&c->counter, 1, "CP-APR count"));
    return TF_OK;
}

tf_status tf_gpu_apr_stream(tf_gpu_apr *c, uint64_t batch)
{
    if (c->order == 0 || c->md[0].h_block || c->md[0].ind[0] || c->edges)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: streaming is chosen before the copies are made");
    c->batch = batch ? std::max<uint64_t>(batch / c->L, 1) * c->L : 0; /* whole chunks */
    return TF_OK;
}

tf_status tf_gpu_apr_add_mode(tf_gpu_apr *c, uint32_t m, const tf_tensor *nz, uint64_t lo, uint64_t rows)
{
    if (m >= c->order || !nz || nz->order != c->order || lo + rows > c->dims[m] || (nz->nnz && nz->dims[m] < rows))
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: bad copy of mode %u", m + 1);
    TF_TRY(tf_gpu_dev_use(c->dev));
    const uint32_t N = c->order, R = c->R;
    const uint64_t nnz = nz->nnz;
    apr_mode &md = c->md[m];
    md.lo = lo;
    md.rows = rows;
    md.nnz = nnz;
    md.nchunks = (nnz + c->L - 1) / c->L;
    c->maxnnz = std::max(c->maxnnz, nnz);
    c->maxchunks = std::max(c->maxchunks, md.nchunks);
    const uint64_t copy = nnz * (N * sizeof(uint32_t) + sizeof(double));
    TF_TRY(room_for(c, (c->batch ? 0 : copy) + std::max<uint64_t>(rows, 1) * R * sizeof(double) +
                           md.nchunks * sizeof(apr_cross),
                    c->batch ? "a mode's Phi" : "a copy of the non-zeros by a mode's rows and its Phi"));
    TF_TRY(tf_gpu_alloc(&c->Phi[m], std::max<uint64_t>(rows, 1) * R, "CP-APR Phi"));
    if (c->batch) return add_host_copy(c, m, nz);
    for (uint32_t k = 0; k < N; ++k) TF_TRY(tf_gpu_alloc(&md.ind[k], nnz, "CP-APR sorted indices"));
    TF_TRY(tf_gpu_alloc(&md.vals, nnz, "CP-APR sorted values"));
    if (!nnz) return TF_OK;
    /* the stable sort on the device where the non-zeros and the sort's
     * scratch fit beside the copies still to come (one GPU: every mode's
     * copy from the same non-zeros, sent up once) */
    if (!c->same_nz || c->up.src != nz) {
        c->up.release();
        uint64_t need = 0, budget = 0, later = 0;
        TF_TRY(tf_gpu_mode_sort_bytes(c->dev, N, nnz, &need));
        TF_TRY(tf_gpu_budget(c->dev, &budget));
        for (uint32_t k = m + 1; k < N; ++k) later += copy + std::max<uint64_t>(c->dims[k], 1) * R * sizeof(double);
        if (c->dev->tune.fcoo_build != 1 && nnz <= UINT32_MAX && need + later <= budget) /* 1: host sorts */
            TF_TRY(tf_gpu_mode_sort_put(c->up, c->dev, nz));
    }
    if (c->up.src == nz) {
        TF_TRY(tf_gpu_mode_sort_by(c->up, m, std::max<uint64_t>(nz->dims[m], 1), 0, md.ind, md.vals));
        std::vector<uint32_t> head, tail;
        TF_TRY(tf_gpu_mode_sort_chunk_ends(c->up, c->L, head, tail));
        TF_TRY(send_cross(c, m, head.data(), tail.data()));
        if (!c->same_nz) c->up.release();
        return TF_OK;
    }
    /* else on the host: the stable sort, the copy gathered into one host
     * buffer an index array at a time and sent up (the staging returns once
     * it may be reused) */
    const cudaStream_t st = c->dev->stream;
    std::vector<uint64_t> perm;
    std::vector<uint32_t> ibuf(nnz), keys(nnz);
    std::vector<double> vbuf(nnz);
    tf_host_sort_by_mode(nz, m, perm);
    for (uint32_t k = 0; k < N; ++k) {
        uint32_t *h = k == m ? keys.data() : ibuf.data();
        for (uint64_t j = 0; j < nnz; ++j) h[j] = nz->ind[k][perm[j]];
        TF_TRY(tf_gpu_h2d_staged(c->dev, md.ind[k], h, nnz * sizeof(uint32_t), st));
    }
    for (uint64_t j = 0; j < nnz; ++j) vbuf[j] = nz->vals[perm[j]];
    TF_TRY(tf_gpu_h2d_staged(c->dev, md.vals, vbuf.data(), nnz * sizeof(double), st));
    TF_CU(cudaStreamSynchronize(st)); /* this GPU's own copies only */
    return send_cross_host(c, m, keys.data());
}

tf_status tf_gpu_apr_finish(tf_gpu_apr *c)
{
    TF_TRY(tf_gpu_dev_use(c->dev));
    c->up.release(); /* the sorts are done: the copies are made */
    const uint32_t R = c->R;
    const uint64_t slabs = (c->maxdim + APR_SLAB_ROWS - 1) / APR_SLAB_ROWS;
    c->npart = std::max<uint64_t>({c->maxchunks, slabs * R, (uint64_t)APR_MAX_BLOCKS, 1});
    const uint64_t each = c->batch ? std::min(c->batch, c->maxnnz) : c->maxnnz; /* non-zeros a pass's kernel sees */
    const uint64_t nv = R > APR_FUSED_RANK ? each : 0;
    const uint64_t slots = c->batch ? 2 * each * (c->order * sizeof(uint32_t) + sizeof(double)) : 0;
    TF_TRY(room_for(c, (std::max<uint64_t>(2 * c->maxchunks * R, 1) + nv + c->npart) * sizeof(double) + slots,
                    c->batch ? "the pass's scratch and the two slots of streamed non-zeros" : "the pass's scratch"));
    TF_TRY(tf_gpu_alloc(&c->edges, std::max<uint64_t>(2 * c->maxchunks * R, 1), "CP-APR edge rows"));
    if (nv) TF_TRY(tf_gpu_alloc(&c->v, nv, "CP-APR weights"));
    TF_TRY(tf_gpu_alloc(&c->part, c->npart, "CP-APR partial sums"));
    if (c->batch) {
        for (int s = 0; s < 2; ++s) {
            for (uint32_t k = 0; k < c->order; ++k) TF_TRY(tf_gpu_alloc(&c->s_ind[s][k], each, "CP-APR streamed indices"));
            TF_TRY(tf_gpu_alloc(&c->s_vals[s], each, "CP-APR streamed values"));
            TF_CU(cudaEventCreateWithFlags(&c->uploaded[s], cudaEventDisableTiming));
            TF_CU(cudaEventCreateWithFlags(&c->consumed[s], cudaEventDisableTiming));
        }
    }
    return TF_OK;
}

tf_status tf_gpu_apr_start(tf_gpu_apr *c, const tf_ktensor *start)
{
    if (!start || start->order != c->order || start->rank != c->R || !start->lambda)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: the start does not match order %u rank %u", c->order, c->R);
    for (uint32_t m = 0; m < c->order; ++m)
        if (start->factors[m].rows != c->dims[m] || start->factors[m].cols != c->R)
            return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: start factor %u is %llu x %llu, expected %llu x %u", m + 1,
                           (unsigned long long)start->factors[m].rows, (unsigned long long)start->factors[m].cols,
                           (unsigned long long)c->dims[m], c->R);
    TF_TRY(tf_gpu_dev_use(c->dev));
    const cudaStream_t st = c->dev->stream;
    for (uint32_t m = 0; m < c->order; ++m) {
        TF_TRY(tf_gpu_put_values<double>(c->A[m], start->factors[m].data, c->dims[m] * c->R, st));
        TF_CU(cudaMemsetAsync(c->Phi[m], 0, c->entries(m) * sizeof(double), st));
    }
    TF_TRY(tf_gpu_put_values<double>(c->lambda, start->lambda, c->R, st));
    c->h_lambda.assign(start->lambda, start->lambda + c->R);
    TF_CU(cudaStreamSynchronize(st));
    c->started = true;
    return TF_OK;
}

tf_status tf_gpu_apr_begin_async(tf_gpu_apr *c, uint32_t mode, double kappa, double kappatol)
{
    TF_TRY(check(c, mode));
    const cudaStream_t st = c->dev->stream;
    const uint64_t n = c->entries(mode);
    TF_CU(cudaMemsetAsync(c->counter, 0, sizeof *c->counter, st));
    if (kappa > 0.0) {
        apr_scooch_kernel<<<c->grid(n), APR_THREADS, 0, st>>>(c->mine(mode), c->Phi[mode], n, kappa, kappatol,
                                                              c->counter);
        TF_CU_LAUNCH("apr_scooch_kernel");
    }
    apr_scale_kernel<false><<<c->grid(n), APR_THREADS, 0, st>>>(c->mine(mode), c->lambda, n, c->R);
    TF_CU_LAUNCH("apr_scale_kernel");
    apr_fill_kernel<<<1, APR_THREADS, 0, st>>>(c->lambda, c->R, 1.0);
    TF_CU_LAUNCH("apr_fill_kernel");
    std::fill(c->h_lambda.begin(), c->h_lambda.end(), 1.0);
    return TF_OK;
}

tf_status tf_gpu_apr_phi_async(tf_gpu_apr *c, uint32_t mode, double eps)
{
    TF_TRY(check(c, mode));
    TF_TRY(phi_pass(c, mode, eps));
    ++c->passes;
    const cudaStream_t st = c->dev->stream;
    const uint64_t n = c->entries(mode);
    const unsigned blocks = std::min<unsigned>(c->grid(n), APR_MAX_BLOCKS);
    apr_kkt_kernel<<<blocks, APR_THREADS, 0, st>>>(c->mine(mode), c->Phi[mode], n, c->part);
    TF_CU_LAUNCH("apr_kkt_kernel");
    apr_reduce_kernel<true><<<1, APR_THREADS, 0, st>>>(c->part, blocks, c->scalar);
    TF_CU_LAUNCH("apr_reduce_kernel");
    return TF_OK;
}

tf_status tf_gpu_apr_multiply_async(tf_gpu_apr *c, uint32_t mode)
{
    TF_TRY(check(c, mode));
    const uint64_t n = c->entries(mode);
    apr_multiply_kernel<<<c->grid(n), APR_THREADS, 0, c->dev->stream>>>(c->mine(mode), c->Phi[mode], n);
    TF_CU_LAUNCH("apr_multiply_kernel");
    return TF_OK;
}

tf_status tf_gpu_apr_normalize(tf_gpu_apr *c, uint32_t mode)
{
    TF_TRY(check(c, mode));
    const cudaStream_t st = c->dev->stream;
    TF_TRY(colsums(c, c->A[mode], c->dims[mode], c->lambda));
    TF_TRY(tf_gpu_get_values<double>(c->h_lambda.data(), c->lambda, c->R, st));
    for (uint32_t r = 0; r < c->R; ++r)
        if (!isfinite(c->h_lambda[r]))
            return tf_fail(TF_ERR_NUMERIC, "factor column %u is not finite; the factors diverged", r + 1);
    const uint64_t n = c->dims[mode] * c->R;
    apr_scale_kernel<true><<<c->grid(n), APR_THREADS, 0, st>>>(c->A[mode], c->lambda, n, c->R);
    TF_CU_LAUNCH("apr_scale_kernel");
    return TF_OK;
}

tf_status tf_gpu_apr_loglik_async(tf_gpu_apr *c)
{
    TF_TRY(check(c, 0));
    const cudaStream_t st = c->dev->stream;
    if (c->md[0].nnz == 0) { /* no non-zeros here: the data term is 0 */
        TF_CU(cudaMemsetAsync(c->scalar, 0, sizeof(double), st));
        return TF_OK;
    }
    /* x log m over mode 1's copy, a sum per chunk, then the chunks' */
    TF_TRY(over_copy(c, 0, [&](apr_args a, unsigned blocks) -> tf_status {
        a.w = c->lambda;
        a.out = c->part;
        return tf_with_order(c->order, [&](auto ord) -> tf_status {
            constexpr int ORDER = decltype(ord)::value;
            apr_model_kernel<ORDER, true><<<blocks, APR_THREADS, 0, st>>>(a);
            TF_CU_LAUNCH("apr_model_kernel");
            return TF_OK;
        });
    }));
    apr_reduce_kernel<false><<<1, APR_THREADS, 0, st>>>(c->part, c->md[0].nchunks, c->scalar);
    TF_CU_LAUNCH("apr_reduce_kernel");
    return TF_OK;
}

tf_status tf_gpu_apr_read(tf_gpu_apr *c, double *scalar, uint64_t *count)
{
    TF_TRY(tf_gpu_dev_use(c->dev));
    const cudaStream_t st = c->dev->stream;
    unsigned long long k = 0;
    if (scalar) TF_CU(cudaMemcpyAsync(scalar, c->scalar, sizeof(double), cudaMemcpyDeviceToHost, st));
    if (count) TF_CU(cudaMemcpyAsync(&k, c->counter, sizeof k, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    if (count) *count = k;
    return TF_OK;
}

tf_status tf_gpu_apr_model_sum(tf_gpu_apr *c, double *model)
{
    TF_TRY(check(c, 0));
    const uint32_t R = c->R;
    for (uint32_t m = 0; m < c->order; ++m) TF_TRY(colsums(c, c->A[m], c->dims[m], c->colsum + (uint64_t)m * R));
    std::vector<double> sums((size_t)c->order * R);
    TF_TRY(tf_gpu_get_values<double>(sums.data(), c->colsum, sums.size(), c->dev->stream));
    std::vector<double> prod(c->h_lambda);
    for (uint32_t m = 0; m < c->order; ++m)
        for (uint32_t r = 0; r < R; ++r) prod[r] *= sums[(size_t)m * R + r];
    double s = 0.0;
    for (uint32_t r = 0; r < R; ++r) s += prod[r];
    *model = s;
    return TF_OK;
}

tf_status tf_gpu_apr_result(tf_gpu_apr *c, tf_ktensor *out)
{
    TF_TRY(check(c, 0));
    if (out->order != c->order || out->rank != c->R)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: the result does not match order %u rank %u", c->order, c->R);
    for (uint32_t m = 0; m < c->order; ++m) {
        if (out->factors[m].rows != c->dims[m] || out->factors[m].cols != c->R)
            return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: result factor %u has the wrong shape", m + 1);
        TF_TRY(tf_gpu_get_values<double>(out->factors[m].data, c->A[m], c->dims[m] * c->R, c->dev->stream));
    }
    TF_TRY(tf_gpu_get_values<double>(out->lambda, c->lambda, c->R, c->dev->stream));
    return TF_OK;
}

/* ------------------------------------------- the one-GPU backend (vtable) */

namespace {

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    return tf_gpu_apr_start((gpu_apr *)ctx, start);
}

tf_status op_begin_mode(void *ctx, uint32_t mode, double kappa, double kappatol, uint64_t *scooched)
{
    gpu_apr *c = (gpu_apr *)ctx;
    *scooched = 0;
    TF_TRY(tf_gpu_apr_begin_async(c, mode, kappa, kappatol));
    return kappa > 0.0 ? tf_gpu_apr_read(c, nullptr, scooched) : TF_OK;
}

tf_status op_phi(void *ctx, uint32_t mode, double epsdivzero, double *kkt)
{
    gpu_apr *c = (gpu_apr *)ctx;
    *kkt = 0.0;
    TF_TRY(tf_gpu_apr_phi_async(c, mode, epsdivzero));
    return tf_gpu_apr_read(c, kkt, nullptr);
}

tf_status op_multiply(void *ctx, uint32_t mode)
{
    return tf_gpu_apr_multiply_async((gpu_apr *)ctx, mode);
}

tf_status op_end_mode(void *ctx, uint32_t mode)
{
    return tf_gpu_apr_normalize((gpu_apr *)ctx, mode);
}

tf_status op_loglik(void *ctx, double *ll)
{
    gpu_apr *c = (gpu_apr *)ctx;
    *ll = 0.0;
    double data = 0.0, model = 0.0;
    TF_TRY(tf_gpu_apr_loglik_async(c));
    TF_TRY(tf_gpu_apr_read(c, &data, nullptr));
    TF_TRY(tf_gpu_apr_model_sum(c, &model));
    *ll = data - model;
    return TF_OK;
}

tf_status op_result(void *ctx, tf_ktensor *out)
{
    return tf_gpu_apr_result((gpu_apr *)ctx, out);
}

void op_report(void *ctx, tf_cp_apr_report *rep)
{
    const gpu_apr *c = (const gpu_apr *)ctx;
    rep->passes = c->passes;
    rep->cached_passes = 0;
    rep->cache_bytes = 0;
}

void op_destroy(void *ctx)
{
    tf_gpu_apr_delete((gpu_apr *)ctx);
}

/* Checkpoints: every mode's last Phi (the next scooch reads it), to the
 * host and back; one GPU holds every row of every mode's Phi. */
tf_status op_aux_get(void *ctx, tf_matrix *aux, int *has)
{
    gpu_apr *c = (gpu_apr *)ctx;
    TF_TRY(tf_gpu_dev_use(c->dev));
    for (uint32_t m = 0; m < c->order; ++m) {
        if (aux[m].rows != c->dims[m] || aux[m].cols != c->R || c->md[m].rows != c->dims[m])
            return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: the Phi of mode %u does not fit the matrix given", m + 1);
        has[m] = 1;
        TF_TRY(tf_gpu_get_values<double>(aux[m].data, c->Phi[m], c->dims[m] * c->R, c->dev->stream));
    }
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

tf_status op_aux_put(void *ctx, const tf_matrix *aux)
{
    gpu_apr *c = (gpu_apr *)ctx;
    TF_TRY(tf_gpu_dev_use(c->dev));
    for (uint32_t m = 0; m < c->order; ++m) {
        if (!aux[m].rows) continue;
        if (aux[m].rows != c->dims[m] || aux[m].cols != c->R || c->md[m].rows != c->dims[m])
            return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: the Phi of mode %u is %llu x %llu, expected %llu x %u",
                           m + 1, (unsigned long long)aux[m].rows, (unsigned long long)aux[m].cols,
                           (unsigned long long)c->dims[m], c->R);
        TF_TRY(tf_gpu_put_values<double>(c->Phi[m], aux[m].data, c->dims[m] * c->R, c->dev->stream));
    }
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

/* several GPUs (multi.cu) keep no aux: their checkpoints are refused with kappa > 0 */
const tf_cp_apr_backend_ops gpu_ops = {op_init,   op_begin_mode, op_phi,    op_multiply, op_end_mode, op_loglik,
                                       op_result, op_destroy,    op_report, op_aux_get,  op_aux_put,
                                       nullptr /* row_newton: pdnr stays on the CPU (front/cp_apr.c) */};

/* The whole of X on one GPU: what it holds, against the budget first (one
 * message naming every part), then the state with every mode's copy. */
tf_status build(gpu_apr *c, tf_gpu_dev *dev, const tf_tensor *X, const tf_cp_apr_opts *o, uint64_t force,
                char *desc, size_t desc_len)
{
    const uint32_t N = X->order, R = (uint32_t)o->rank, L = chunk_len(R);
    const uint64_t nchunks = (X->nnz + L - 1) / L;
    uint64_t sumdims = 0, maxdim = 0;
    for (uint32_t m = 0; m < N; ++m) {
        sumdims += X->dims[m];
        maxdim = std::max(maxdim, X->dims[m]);
    }
    const uint64_t slabs = (maxdim + APR_SLAB_ROWS - 1) / APR_SLAB_ROWS;
    const uint64_t npart = std::max<uint64_t>({nchunks, slabs * R, (uint64_t)APR_MAX_BLOCKS, 1});
    const uint64_t per_nnz = N * sizeof(uint32_t) + sizeof(double);
    const uint64_t copies = (uint64_t)N * X->nnz * per_nnz;
    const uint64_t dense = (2 * sumdims * R + R + (uint64_t)N * R) * sizeof(double); /* factors and Phi */
    const uint64_t scratch = (2 * nchunks * R + (R > APR_FUSED_RANK ? X->nnz : 0) + npart + 1) * sizeof(double) +
                             nchunks * sizeof(apr_cross) * 2;
    uint64_t budget = 0;
    TF_TRY(tf_gpu_dev_use(dev));
    TF_TRY(tf_gpu_budget(dev, &budget));
    uint64_t batch = force;
    if (!force && copies + dense + scratch > budget) {
        /* streamed: the copies in pinned host memory, two device slots of a
         * batch of non-zeros each (a tenth of the room left as a margin) */
        const uint64_t fixed =
            dense + (2 * nchunks * R + npart + 1) * sizeof(double) + nchunks * sizeof(apr_cross) * N;
        const uint64_t slot = 2 * per_nnz + (R > APR_FUSED_RANK ? sizeof(double) : 0);
        const uint64_t room = budget > fixed ? (budget - fixed) / 10 * 9 : 0;
        batch = std::min<uint64_t>(room / slot, APR_STREAM_BATCH) / L * L;
        if (batch < L)
            return tf_fail(TF_ERR_NOMEM,
                           "GPU CP-APR: %u copies of the non-zeros (%llu bytes), the factors and Phi (%llu bytes) "
                           "and scratch (%llu bytes) do not fit the GPU's %llu bytes, not even streamed from host "
                           "memory",
                           N, (unsigned long long)copies, (unsigned long long)dense, (unsigned long long)scratch,
                           (unsigned long long)budget);
    }
    TF_TRY(tf_gpu_apr_setup(c, dev, N, X->dims, R));
    TF_TRY(tf_gpu_apr_stream(c, batch));
    c->same_nz = true; /* every mode's copy from X: one upload to sort from */
    for (uint32_t m = 0; m < N; ++m) TF_TRY(tf_gpu_apr_add_mode(c, m, X, 0, X->dims[m]));
    TF_TRY(tf_gpu_apr_finish(c));
    if (c->batch)
        snprintf(desc, desc_len, "GPU %d, fp64, %u copies of the non-zeros (%.1f MB) streamed from host, %llu a batch",
                 dev->device, N, (double)copies / 1e6, (unsigned long long)c->batch);
    else
        snprintf(desc, desc_len, "GPU %d, fp64, the non-zeros by each mode's rows (%u copies, %.1f MB)", dev->device,
                 N, (double)copies / 1e6);
    return TF_OK;
}

} // namespace

tf_status tf_gpu_apr_poison(void *ctx, uint32_t mode)
{
    gpu_apr *c = (gpu_apr *)ctx;
    TF_TRY(check(c, mode));
    const cudaStream_t st = c->dev->stream;
    TF_CU(cudaMemsetAsync(c->Phi[mode], 0xff, c->entries(mode) * sizeof(double), st)); /* all ones: NaN */
    TF_CU(cudaMemsetAsync(c->edges, 0xff, std::max<uint64_t>(2 * c->maxchunks * c->R, 1) * sizeof(double), st));
    TF_CU(cudaStreamSynchronize(st));
    return TF_OK;
}

tf_status tf_gpu_apr_get_phi(void *ctx, uint32_t mode, double *phi)
{
    gpu_apr *c = (gpu_apr *)ctx;
    TF_TRY(check(c, mode));
    return tf_gpu_get_values<double>(phi, c->Phi[mode], c->entries(mode), c->dev->stream);
}

tf_status tf_gpu_apr_backend_make(const tf_tensor *X, const tf_cp_apr_opts *o, uint64_t stream_batch,
                                  tf_cp_apr_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o) return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: missing tensor or options");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    if (X->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "GPU CP-APR backend: order %u is above the GPU's %u", X->order,
                       TF_GPU_MAX_ORDER);
    gpu_apr *c = tf_gpu_apr_new();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-APR backend");
    tf_gpu_dev *dev = nullptr;
    tf_status s = tf_gpu_dev_of(o->context, &dev);
    if (s == TF_OK) s = build(c, dev, X, o, stream_batch, out->plan_desc, sizeof out->plan_desc);
    if (s != TF_OK) {
        tf_gpu_apr_delete(c);
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &gpu_ops;
    out->ctx = c;
    return TF_OK;
}

extern "C" tf_status tf_cuda_cp_apr_backend_create_impl(const tf_tensor *X, const tf_cp_apr_opts *o,
                                                        tf_cp_apr_backend *out)
{
    return tf_gpu_apr_backend_make(X, o, 0, out);
}
