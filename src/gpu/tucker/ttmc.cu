/* SPDX-License-Identifier: BSD-3-Clause */
/* TTMc on one GPU: the F-COO paper's segmented pass over the non-zeros
 * sorted by the output mode's index, writing Kronecker-product rows.
 *
 * The copy of mode n (a stable counting sort on the host, uploaded once)
 * is cut into chunks of L non-zeros (64 .. 4096: twice the columns, so the
 * edge rows stay within about a double a non-zero). A chunk belongs to a
 * group of W lanes (W = the power of two >= C, at most a block of 256;
 * 256 / W groups a block); lane l of the group holds column c = slab W + l
 * of Y (slabs over grid.y and a loop when C > W), its digits r_k(c)
 * decoded once. The group walks its chunk in order: per non-zero the lane
 * forms x prod_{k != n} U_k(i_k, r_k(c)) and adds it to its sum; where the
 * row changes the sum is stored. A row inside the chunk goes straight to Y
 * (one writer, no atomics); the chunk's first row, when it began in the
 * chunk before, goes to the chunk's head edge row, its last, when it goes
 * on into the next, to its tail edge row (the CP-APR Phi pass's cut,
 * src/gpu/apr, with edge rows only for the rows that cross: slots
 * numbered on the host). ttmc_merge_kernel then writes each crossing row:
 * its edge rows summed in chunk order. Rows without non-zeros are 0 (Y is
 * cleared first). No atomics and a fixed order: the same bits every run.
 * The work is nnz C (N - 1) products, as the paper's SpTTM; the CPU's
 * trees (src/cpu/ttmc_cpu.c) save the shared prefixes instead. */
#include <string.h>

#include <algorithm>
#include <vector>

#include "gpu/tucker/ttmc.cuh"
#include "gpu/engine/mode_sort.cuh"
#include "gpu/runtime/warp.cuh"
#include "seams/cuda_module.h"

#define TTMC_THREADS 256
#define TTMC_MAX_SLABS 65535u

namespace {

struct ttmc_args {
    const uint32_t *ind[TF_GPU_MAX_ORDER]; /* the mode's copy: every mode's indices */
    const double *U[TF_GPU_MAX_ORDER];
    uint32_t R[TF_GPU_MAX_ORDER];
    const double *vals;
    const int64_t *slot;
    double *Y, *edges;
    uint64_t nnz, nchunks, C, nslabs, row_lo; /* Y holds the rows from row_lo on */
    uint32_t order, mode, L, W;
};

template <int ORDER>
__global__ void __launch_bounds__(TTMC_THREADS) ttmc_kernel(ttmc_args a)
{
    constexpr uint32_t NMAX = ORDER > 0 ? (uint32_t)ORDER : TF_GPU_MAX_ORDER;
    const uint32_t N = ORDER > 0 ? (uint32_t)ORDER : a.order;
    const uint32_t W = a.W, lane = threadIdx.x % W;
    const uint64_t q = (uint64_t)blockIdx.x * (TTMC_THREADS / W) + threadIdx.x / W; /* this group's chunk */
    if (q >= a.nchunks) return; /* no barrier below */
    const uint32_t *row = a.ind[a.mode];
    const uint64_t k0 = q * a.L, k1 = k0 + a.L < a.nnz ? k0 + a.L : a.nnz;
    const uint32_t first = __ldg(row + k0), last = __ldg(row + k1 - 1);
    const bool from_prev = k0 > 0 && __ldg(row + k0 - 1) == first;
    const bool into_next = k1 < a.nnz && __ldg(row + k1) == last;
    const int64_t hs = from_prev ? __ldg(a.slot + 2 * q) : -1, ts = into_next ? __ldg(a.slot + 2 * q + 1) : -1;
    for (uint64_t slab = blockIdx.y; slab < a.nslabs; slab += gridDim.y) {
        const uint64_t c = slab * W + lane;
        if (c >= a.C) continue;
        uint32_t off[NMAX];
        uint64_t rest = c;
#pragma unroll
        for (uint32_t n = 0; n < NMAX; ++n) {
            off[n] = 0;
            if ((ORDER > 0 || n < N) && n != a.mode) {
                off[n] = (uint32_t)(rest % a.R[n]);
                rest /= a.R[n];
            }
        }
        double acc = 0.0;
        uint32_t cur = first;
        for (uint64_t j = k0; j <= k1; ++j) {
            const uint32_t i = j < k1 ? __ldg(row + j) : cur + 1; /* past the end: a change that flushes cur */
            if (i != cur) {
                double *dst = cur == first && hs >= 0  ? a.edges + (uint64_t)hs * a.C
                              : cur == last && ts >= 0 ? a.edges + (uint64_t)ts * a.C
                                                       : a.Y + (uint64_t)(cur - a.row_lo) * a.C;
                dst[c] = acc;
                acc = 0.0;
                cur = i;
                if (j == k1) break;
            }
            double v = __ldg(a.vals + j);
#pragma unroll
            for (uint32_t n = 0; n < NMAX; ++n)
                if ((ORDER > 0 || n < N) && n != a.mode)
                    v *= __ldg(a.U[n] + (uint64_t)__ldg(a.ind[n] + j) * a.R[n] + off[n]);
            acc += v;
        }
    }
}

/* Every row that crosses chunks: its edge rows summed in order. A block per
 * row (grid-stride), the threads over the columns. */
__global__ void __launch_bounds__(TTMC_THREADS)
    ttmc_merge_kernel(const tf_ttmc_cross *x, uint64_t n, const double *edges, double *Y, uint64_t C, uint64_t row_lo)
{
    for (uint64_t e = blockIdx.x; e < n; e += gridDim.x) {
        const tf_ttmc_cross cr = x[e];
        for (uint64_t c = threadIdx.x; c < C; c += TTMC_THREADS) {
            double s = 0.0;
            for (uint64_t k = 0; k < cr.count; ++k) s += edges[(cr.slot + k) * C + c];
            Y[(cr.row - row_lo) * C + c] = s;
        }
    }
}

/* Columns of Y_(mode): the product of the other ranks. */
uint64_t cols_of(uint32_t N, const uint64_t *ranks, uint32_t mode)
{
    uint64_t C = 1;
    for (uint32_t k = 0; k < N; ++k)
        if (k != mode) C *= ranks[k];
    return C;
}

/* Non-zeros per chunk for C columns: 2 C within 64 .. 4096. */
uint32_t chunk_len(uint64_t C)
{
    return (uint32_t)std::min<uint64_t>(4096, std::max<uint64_t>(64, 2 * C));
}

/* The edge slots of a sorted copy's chunks (the kernel's cut: a chunk's
 * first row goes to its head when it began before, its last to its tail
 * when it goes on; a chunk of one row that began before is a head) and
 * the rows that cross, with their slots in chunk order, from each chunk's
 * first and last row (head[b], tail[b]). */
void cross_slots(const uint32_t *head, const uint32_t *tail, uint64_t nchunks, std::vector<int64_t> &slot,
                 std::vector<tf_ttmc_cross> &out, uint64_t *nslots)
{
    slot.assign(2 * nchunks, -1);
    out.clear();
    uint64_t next = 0;
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
        slot[2 * b + 1] = (int64_t)next;
        for (uint64_t d = b + 1; d <= b1; ++d) slot[2 * d] = (int64_t)(next + (d - b));
        out.push_back({last, next, b1 - b + 1});
        next += b1 - b + 1;
    }
    *nslots = next;
}

} // namespace

tf_gpu_ttmc::~tf_gpu_ttmc()
{
    if (dev && dev->device >= 0) cudaSetDevice(dev->device);
    for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) {
        for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) tf_gpu_free(md[m].ind[k]);
        tf_gpu_free(md[m].vals);
        tf_gpu_free(md[m].slot);
        tf_gpu_free(md[m].cross);
    }
    tf_gpu_free(edges);
}

uint64_t tf_gpu_ttmc_copy_bytes(const tf_tensor *X, const uint64_t *ranks, const int *want, const uint64_t *count)
{
    uint64_t b = 0;
    for (uint32_t m = 0; m < X->order; ++m) {
        if (want && !want[m]) continue;
        const uint64_t n = count ? count[m] : X->nnz;
        const uint64_t L = chunk_len(cols_of(X->order, ranks, m)), nchunks = (n + L - 1) / L;
        b += n * (X->order * sizeof(uint32_t) + sizeof(double)) + 2 * nchunks * sizeof(int64_t) +
             nchunks * sizeof(tf_ttmc_cross);
    }
    return b;
}

tf_status tf_gpu_ttmc_build(tf_gpu_dev *dev, const tf_tensor *X, const uint64_t *ranks, const int *want,
                            uint64_t other_bytes, const uint64_t *first, const uint64_t *count, tf_gpu_ttmc *p)
{
    const uint32_t N = X->order;
    if (N > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "GPU TTMc: order %u is above the GPU's %u", N, TF_GPU_MAX_ORDER);
    p->dev = dev;
    p->order = N;
    p->nnz = X->nnz;
    for (uint32_t m = 0; m < N; ++m) {
        p->dims[m] = X->dims[m];
        p->ranks[m] = ranks[m];
        if (ranks[m] < 1 || ranks[m] > UINT32_MAX)
            return tf_fail(TF_ERR_ARG, "GPU TTMc: rank %llu of mode %u is outside 1..2^32-1",
                           (unsigned long long)ranks[m], m + 1);
    }
    uint64_t budget = 0;
    TF_TRY(tf_gpu_budget(dev, &budget));
    for (uint32_t m = 0; m < N && count; ++m)
        if (first[m] > X->nnz || count[m] > X->nnz - first[m])
            return tf_fail(TF_ERR_ARG, "GPU TTMc: mode %u's copy of entries %llu..+%llu of %llu", m + 1,
                           (unsigned long long)first[m], (unsigned long long)count[m], (unsigned long long)X->nnz);
    const uint64_t copies = tf_gpu_ttmc_copy_bytes(X, ranks, want, count);
    if (copies + other_bytes > budget)
        return tf_fail(TF_ERR_NOMEM, "GPU Tucker: the sorted copies of the non-zeros (%llu bytes) and the dense arrays "
                       "(Y_(n), the Grams, the factors: %llu bytes) do not fit the %llu bytes the GPU has for them (they "
                       "are not streamed from host memory yet: several GPUs split the copies; the CPU or MPI ranks run it)",
                       (unsigned long long)copies, (unsigned long long)other_bytes, (unsigned long long)budget);
    p->copy_bytes = copies;
    const cudaStream_t st = dev->stream;
    /* the copies sorted on the device where the non-zeros and the sort's
     * scratch fit beside them (else on the host: a stable counting sort);
     * the scratch is gone before the dense arrays (other_bytes) are made */
    tf_gpu_mode_sort up;
    if (X->nnz && X->nnz <= UINT32_MAX && dev->tune.fcoo_build != 1) {
        uint64_t need = 0;
        TF_TRY(tf_gpu_mode_sort_bytes(dev, N, X->nnz, &need));
        if (copies + need <= budget) TF_TRY(tf_gpu_mode_sort_put(up, dev, X));
    }
    std::vector<uint64_t> perm;
    std::vector<uint32_t> ibuf, rows, head, tail;
    std::vector<double> vbuf;
    std::vector<int64_t> slot;
    std::vector<tf_ttmc_cross> cross;
    uint64_t edge_doubles = 0;
    for (uint32_t m = 0; m < N; ++m) {
        if (want && !want[m]) continue;
        tf_ttmc_mode &md = p->md[m];
        md.C = cols_of(N, ranks, m);
        md.L = chunk_len(md.C);
        md.W = md.C >= TTMC_THREADS ? TTMC_THREADS : tf_pow2_ceil((uint32_t)md.C);
        const uint64_t f0 = count ? first[m] : 0, n = count ? count[m] : X->nnz;
        md.nnz = n;
        md.nchunks = (n + md.L - 1) / md.L;
        md.built = true;
        if (n == 0) continue;
        for (uint32_t k = 0; k < N; ++k) TF_TRY(tf_gpu_alloc(&md.ind[k], n, "TTMc sorted indices"));
        TF_TRY(tf_gpu_alloc(&md.vals, n, "TTMc sorted values"));
        if (up.src == X) {
            up.first = f0;
            up.count = n;
            TF_TRY(tf_gpu_mode_sort_by(up, m, std::max<uint64_t>(X->dims[m], 1), 0, md.ind, md.vals));
            TF_TRY(tf_gpu_mode_sort_chunk_ends(up, (uint32_t)md.L, head, tail));
        } else {
            ibuf.resize(n);
            rows.resize(n);
            vbuf.resize(n);
            tf_host_sort_by_mode(X, m, perm);
            const uint64_t *at = perm.data() + f0;
            for (uint32_t k = 0; k < N; ++k) {
                uint32_t *h = k == m ? rows.data() : ibuf.data();
                for (uint64_t j = 0; j < n; ++j) h[j] = X->ind[k][at[j]];
                TF_TRY(tf_gpu_h2d_staged(dev, md.ind[k], h, n * sizeof(uint32_t), st));
            }
            for (uint64_t j = 0; j < n; ++j) vbuf[j] = X->vals[at[j]];
            TF_TRY(tf_gpu_h2d_staged(dev, md.vals, vbuf.data(), n * sizeof(double), st));
            tf_host_chunk_ends(rows.data(), n, (uint32_t)md.L, head, tail);
        }
        cross_slots(head.data(), tail.data(), md.nchunks, slot, cross, &md.nslots);
        TF_TRY(tf_gpu_alloc(&md.slot, slot.size(), "TTMc chunk slots"));
        TF_TRY(tf_gpu_h2d_staged(dev, md.slot, slot.data(), slot.size() * sizeof(int64_t), st));
        md.ncross = cross.size();
        if (md.ncross) {
            TF_TRY(tf_gpu_alloc(&md.cross, md.ncross, "TTMc crossing rows"));
            TF_TRY(tf_gpu_h2d_staged(dev, md.cross, cross.data(), md.ncross * sizeof(tf_ttmc_cross), st));
        }
        edge_doubles = std::max(edge_doubles, md.nslots * md.C);
    }
    TF_CU(cudaStreamSynchronize(st));
    up.release(); /* the copies are made */
    if (edge_doubles) {
        TF_TRY(tf_gpu_budget(dev, &budget));
        if (edge_doubles * sizeof(double) + other_bytes > budget)
            return tf_fail(TF_ERR_NOMEM, "GPU Tucker: the TTMc's edge rows (%llu bytes) and the dense arrays (%llu "
                           "bytes) do not fit the %llu bytes the GPU has left after the copies of the non-zeros",
                           (unsigned long long)(edge_doubles * sizeof(double)), (unsigned long long)other_bytes,
                           (unsigned long long)budget);
        TF_TRY(tf_gpu_alloc(&p->edges, edge_doubles, "TTMc edge rows"));
    }
    p->edge_doubles = edge_doubles;
    return TF_OK;
}

tf_status tf_gpu_ttmc_run(tf_gpu_ttmc *p, uint32_t mode, const double *const *U, double *Y, uint64_t row_lo,
                          uint64_t rows)
{
    if (mode >= p->order || !p->md[mode].built)
        return tf_fail(TF_ERR_ARG, "GPU TTMc: mode %u has no sorted copy", mode + 1);
    const tf_ttmc_mode &md = p->md[mode];
    const cudaStream_t st = p->dev->stream;
    if (rows) TF_CU(cudaMemsetAsync(Y, 0, rows * md.C * sizeof(double), st));
    if (md.nnz == 0) return TF_OK;
    ttmc_args a;
    memset(&a, 0, sizeof a);
    for (uint32_t k = 0; k < p->order; ++k) {
        a.ind[k] = md.ind[k];
        a.U[k] = k == mode ? nullptr : U[k];
        a.R[k] = (uint32_t)p->ranks[k];
    }
    a.vals = md.vals;
    a.slot = md.slot;
    a.Y = Y;
    a.edges = p->edges;
    a.nnz = md.nnz;
    a.nchunks = md.nchunks;
    a.C = md.C;
    a.nslabs = (md.C + md.W - 1) / md.W;
    a.row_lo = row_lo;
    a.order = p->order;
    a.mode = mode;
    a.L = md.L;
    a.W = md.W;
    const uint64_t groups = TTMC_THREADS / md.W;
    const dim3 grid((unsigned)((md.nchunks + groups - 1) / groups), (unsigned)std::min<uint64_t>(a.nslabs, TTMC_MAX_SLABS));
    TF_TRY(tf_with_order(p->order, [&](auto ord) -> tf_status {
        constexpr int ORDER = decltype(ord)::value;
        ttmc_kernel<ORDER><<<grid, TTMC_THREADS, 0, st>>>(a);
        TF_CU_LAUNCH("ttmc_kernel");
        return TF_OK;
    }));
    if (md.ncross) {
        const unsigned mb = (unsigned)std::min<uint64_t>(md.ncross, (uint64_t)p->dev->sm_count * 16);
        ttmc_merge_kernel<<<mb, TTMC_THREADS, 0, st>>>(md.cross, md.ncross, p->edges, Y, md.C, row_lo);
        TF_CU_LAUNCH("ttmc_merge_kernel");
    }
    return TF_OK;
}

tf_status tf_gpu_ttmc_once(tf_gpu_dev *dev, const tf_tensor *X, uint32_t mode, const tf_matrix *U, double *Y,
                           bool poison, uint64_t *edge_rows)
{
    if (edge_rows) *edge_rows = 0;
    if (X->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "GPU TTMc: order %u is above the GPU's %u", X->order, TF_GPU_MAX_ORDER);
    uint64_t ranks[TF_GPU_MAX_ORDER], C = 1, factors = 0;
    int want[TF_GPU_MAX_ORDER] = {0};
    for (uint32_t k = 0; k < X->order; ++k) {
        ranks[k] = k == mode ? 1 : U[k].cols;
        if (k == mode) continue;
        C *= U[k].cols;
        factors += X->dims[k] * U[k].cols;
    }
    want[mode] = 1;
    const uint64_t n = X->dims[mode] * C;
    tf_gpu_ttmc p;
    TF_TRY(tf_gpu_ttmc_build(dev, X, ranks, want, (n + factors) * sizeof(double), nullptr, nullptr, &p));
    if (edge_rows) *edge_rows = p.md[mode].ncross;
    tf_dev_array<double> dU[TF_GPU_MAX_ORDER], dY;
    const double *Us[TF_GPU_MAX_ORDER] = {nullptr};
    const cudaStream_t st = dev->stream;
    for (uint32_t k = 0; k < X->order; ++k) {
        if (k == mode) continue;
        TF_TRY(dU[k].alloc(X->dims[k] * U[k].cols, "TTMc factor"));
        TF_TRY(tf_gpu_put_values<double>(dU[k].p, U[k].data, X->dims[k] * U[k].cols, st));
        Us[k] = dU[k].p;
    }
    TF_TRY(dY.alloc(n, "TTMc output"));
    if (poison) { /* all ones: NaN */
        TF_CU(cudaMemsetAsync(dY.p, 0xff, n * sizeof(double), st));
        if (p.edges) TF_CU(cudaMemsetAsync(p.edges, 0xff, p.edge_doubles * sizeof(double), st));
    }
    TF_TRY(tf_gpu_ttmc_run(&p, mode, Us, dY.p, 0, X->dims[mode]));
    return tf_gpu_get_values<double>(Y, dY.p, n, st);
}

extern "C" tf_status tf_cuda_ttmc_impl(const tf_tensor *X, uint32_t mode, const tf_matrix *U, tf_context *ctx,
                                       double *Y)
{
    if (!X || !U || !Y || mode >= X->order) return tf_fail(TF_ERR_ARG, "GPU TTMc: bad arguments");
    tf_gpu_dev *dev = nullptr;
    TF_TRY(tf_gpu_dev_of(ctx, &dev));
    TF_TRY(tf_gpu_dev_use(dev));
    return tf_gpu_ttmc_once(dev, X, mode, U, Y, false, nullptr);
}
