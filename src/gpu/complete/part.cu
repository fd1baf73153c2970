/* SPDX-License-Identifier: BSD-3-Clause */
/* One GPU's part of completion by ALS (complete.cuh): its copies of the
 * training entries, the whole factors and the kept ones, its range of the
 * held-out entries, and the steps on them. A mode's copy is sorted on the
 * device: a CUB radix sort of the mode's index (stable: within a row the
 * entries keep their order) gives the permutation that gathers every
 * mode's index and the values, and a kernel the row offsets (each boundary
 * written by one thread). The offsets come to the host once, to cut the
 * rows into short ones (a block each) and long ones (more than a segment
 * of entries: a block per segment, then a block per row; rows are very
 * skewed in ratings data) -- rows.cu. The sums are sums.cu's fixed-order
 * reductions; only scalars come back (the sum of squares, the first
 * singular row), and the start and the result once each. */
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "gpu/complete/complete.cuh"
#include "gpu/runtime/gpu_dev.cuh"
extern "C" {
#include "seams/complete.h"
}

/* Entries of a segment of a long row (doubled while the segments' partial
 * systems would take more than TFC_PARTIAL_BYTES). */
#define TFC_SEGMENT 2048u
#define TFC_PARTIAL_BYTES ((uint64_t)256 << 20)

namespace {

/* One mode's copy of the training entries of this GPU's rows and its row lists. */
struct cmode {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    uint64_t *ptr = nullptr; /* rows + 1 offsets */
    uint32_t *short_rows = nullptr, *long_rows = nullptr;
    uint64_t *row_seg = nullptr, *seg_k0 = nullptr, *seg_k1 = nullptr;
    uint64_t nshort = 0, nlong = 0, nseg = 0;
    uint64_t lo = 0, rows = 0, nnz = 0;
};

/* A held-out set's range (its own order). */
struct cset {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    uint64_t nnz = 0;
};

__global__ void tfc_offsets_kernel(const uint32_t *key, uint64_t n, uint64_t I, uint64_t *ptr)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k <= n; k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t lo = k == 0 ? 0 : (uint64_t)key[k - 1] + 1, hi = k == n ? I : (uint64_t)key[k];
        for (uint64_t i = lo; i <= hi; ++i) ptr[i] = k;
    }
}

} // namespace

struct tfc_part {
    tf_gpu_dev *dev = nullptr; /* borrowed (the context's) */
    uint32_t order = 0, R = 0;
    uint64_t dims[TF_GPU_MAX_ORDER] = {0}, segment = TFC_SEGMENT, max_rows = 0, max_seg = 0;
    cmode md[TF_GPU_MAX_ORDER];
    cset sets[3]; /* train: mode 1's copy (pointers borrowed), val, test */
    double *A[TF_GPU_MAX_ORDER] = {nullptr}, *K[TF_GPU_MAX_ORDER] = {nullptr};
    double *row_sse = nullptr, *partial = nullptr, *part = nullptr, *scalars = nullptr;
    uint32_t *bad = nullptr;
    unsigned long long *pmin = nullptr, *first_bad = nullptr;
    bool started = false;

    ~tfc_part()
    {
        if (dev) tf_gpu_dev_use(dev);
        for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) {
            for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) tf_gpu_free(md[m].ind[k]);
            tf_gpu_free(md[m].vals);
            tf_gpu_free(md[m].ptr);
            tf_gpu_free(md[m].short_rows);
            tf_gpu_free(md[m].long_rows);
            tf_gpu_free(md[m].row_seg);
            tf_gpu_free(md[m].seg_k0);
            tf_gpu_free(md[m].seg_k1);
            tf_gpu_free(A[m]);
            tf_gpu_free(K[m]);
        }
        for (int s = 1; s < 3; ++s) {
            for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) tf_gpu_free(sets[s].ind[k]);
            tf_gpu_free(sets[s].vals);
        }
        double *d[] = {row_sse, partial, part, scalars};
        for (double *p : d) tf_gpu_free(p);
        tf_gpu_free(bad);
        tf_gpu_free(pmin);
        tf_gpu_free(first_bad);
    }
};

namespace {

unsigned grid_of(const tfc_part *c, uint64_t n)
{
    const uint64_t b = (n + 255) / 256, cap = (uint64_t)c->dev->sm_count * 16;
    return (unsigned)std::max<uint64_t>(1, std::min(b, cap));
}

/* Entries k0..k1-1 of X up (ind, vals). */
tf_status put_entries(tfc_part *c, const tf_tensor *X, uint64_t k0, uint64_t k1, uint32_t **ind, double **vals,
                      const char *what)
{
    const cudaStream_t st = c->dev->stream;
    const uint64_t n = k1 - k0;
    for (uint32_t k = 0; k < c->order; ++k) {
        TF_TRY(tf_gpu_alloc(&ind[k], n, what));
        if (n) TF_TRY(tf_gpu_h2d_staged(c->dev, ind[k], X->ind[k] + k0, n * sizeof(uint32_t), st));
    }
    TF_TRY(tf_gpu_alloc(vals, n, what));
    return n ? tf_gpu_h2d_staged(c->dev, *vals, X->vals + k0, n * sizeof(double), st) : TF_OK;
}

tf_status check_started(const tfc_part *c, uint32_t mode)
{
    if (mode >= c->order || !c->started)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: mode %u outside 1..%u, or init not called", mode + 1,
                       c->order);
    return tf_gpu_dev_use(c->dev);
}

} // namespace

uint64_t tfc_segment_for(uint64_t nnz, uint32_t R)
{
    uint64_t segment = TFC_SEGMENT;
    /* segments: at most one more than entries / segment per mode's long rows */
    while ((2 * nnz / segment + 1) * tfc_pairs(R) * sizeof(double) > TFC_PARTIAL_BYTES) segment *= 2;
    return segment;
}

tfc_part *tfc_part_new()
{
    return new (std::nothrow) tfc_part();
}

void tfc_part_delete(tfc_part *c)
{
    delete c;
}

tf_gpu_dev *tfc_part_dev(const tfc_part *c)
{
    return c->dev;
}

double *tfc_part_factor(tfc_part *c, uint32_t mode)
{
    return c->A[mode];
}

tf_status tfc_part_setup(tfc_part *c, tf_gpu_dev *dev, uint32_t order, const uint64_t *dims, uint32_t R,
                         uint64_t segment)
{
    c->dev = dev;
    c->order = order;
    c->R = R;
    c->segment = segment;
    for (uint32_t m = 0; m < order; ++m) c->dims[m] = dims[m];
    return tf_gpu_dev_use(dev);
}

tf_status tfc_part_add_mode(tfc_part *c, uint32_t m, tf_gpu_mode_sort &u, uint64_t lo, uint64_t rows)
{
    const cudaStream_t st = c->dev->stream;
    const uint64_t n = u.nnz, I = rows;
    cmode &md = c->md[m];
    md.lo = lo;
    md.rows = rows;
    md.nnz = n;
    c->max_rows = std::max(c->max_rows, rows);
    for (uint32_t k = 0; k < c->order; ++k) TF_TRY(tf_gpu_alloc(&md.ind[k], n, "completion sorted indices"));
    TF_TRY(tf_gpu_alloc(&md.vals, n, "completion sorted values"));
    TF_TRY(tf_gpu_mode_sort_by(u, m, I, (uint32_t)lo, md.ind, md.vals));
    TF_TRY(tf_gpu_alloc(&md.ptr, I + 1, "completion row offsets"));
    tfc_offsets_kernel<<<grid_of(c, n + 1), 256, 0, st>>>(u.keys, n, I, md.ptr);
    TF_CU_LAUNCH("tfc_offsets_kernel");
    std::vector<uint64_t> ptr(I + 1);
    TF_CU(cudaMemcpyAsync(ptr.data(), md.ptr, (I + 1) * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st)); /* the sort done before u's buffers go or change */
    std::vector<uint32_t> shorts, longs;
    std::vector<uint64_t> row_seg(1, 0), k0s, k1s;
    for (uint64_t i = 0; i < I; ++i) {
        const uint64_t a = ptr[i], b = ptr[i + 1];
        if (b - a <= c->segment) {
            shorts.push_back((uint32_t)i);
            continue;
        }
        longs.push_back((uint32_t)i);
        for (uint64_t k = a; k < b; k += c->segment) {
            k0s.push_back(k);
            k1s.push_back(std::min<uint64_t>(k + c->segment, b));
        }
        row_seg.push_back(k0s.size());
    }
    md.nshort = shorts.size();
    md.nlong = longs.size();
    md.nseg = k0s.size();
    c->max_seg = std::max(c->max_seg, md.nseg);
    TF_TRY(tf_gpu_upload_new(&md.short_rows, shorts.data(), md.nshort, "completion short rows"));
    TF_TRY(tf_gpu_upload_new(&md.long_rows, longs.data(), md.nlong, "completion long rows"));
    if (md.nlong) {
        TF_TRY(tf_gpu_upload_new(&md.row_seg, row_seg.data(), row_seg.size(), "completion long rows' segments"));
        TF_TRY(tf_gpu_upload_new(&md.seg_k0, k0s.data(), md.nseg, "completion segments"));
        TF_TRY(tf_gpu_upload_new(&md.seg_k1, k1s.data(), md.nseg, "completion segments"));
    }
    if (m == 0) {
        for (uint32_t k = 0; k < c->order; ++k) c->sets[0].ind[k] = md.ind[k];
        c->sets[0].vals = md.vals;
        c->sets[0].nnz = n;
    }
    return TF_OK;
}

tf_status tfc_part_add_set(tfc_part *c, int set, const tf_tensor *X, uint64_t k0, uint64_t k1)
{
    if (set != TF_COMPLETE_VAL && set != TF_COMPLETE_TEST)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: held-out set %d", set);
    cset &s = c->sets[set];
    TF_TRY(put_entries(c, X, k0, k1, s.ind, &s.vals, "completion held-out entries"));
    s.nnz = k1 - k0;
    return TF_OK;
}

tf_status tfc_part_finish(tfc_part *c)
{
    const uint32_t N = c->order, R = c->R;
    for (uint32_t m = 0; m < N; ++m) {
        TF_TRY(tf_gpu_alloc(&c->A[m], c->dims[m] * R, "completion factor"));
        TF_TRY(tf_gpu_alloc(&c->K[m], c->dims[m] * R, "completion kept factor"));
    }
    const uint64_t rows = std::max<uint64_t>(c->max_rows, 1);
    TF_TRY(tf_gpu_alloc(&c->row_sse, rows, "completion row errors"));
    TF_TRY(tf_gpu_alloc(&c->bad, rows, "completion row pivots"));
    if (c->max_seg) TF_TRY(tf_gpu_alloc(&c->partial, c->max_seg * tfc_pairs(R), "completion partial systems"));
    TF_TRY(tf_gpu_alloc(&c->part, TFC_RED_BLOCKS, "completion partial sums"));
    TF_TRY(tf_gpu_alloc(&c->pmin, TFC_RED_BLOCKS, "completion partial minima"));
    TF_TRY(tf_gpu_alloc(&c->scalars, N + 1, "completion sums"));
    TF_TRY(tf_gpu_alloc(&c->first_bad, 1, "completion singular row"));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

tf_status tfc_part_start(tfc_part *c, const tf_ktensor *start)
{
    if (!start || start->order != c->order || start->rank != c->R)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: the start does not match order %u rank %u", c->order,
                       c->R);
    TF_TRY(tf_gpu_dev_use(c->dev));
    for (uint32_t m = 0; m < c->order; ++m) {
        if (start->factors[m].rows != c->dims[m] || start->factors[m].cols != c->R)
            return tf_fail(TF_ERR_ARG, "GPU completion backend: start factor %u is %llu x %llu, expected %llu x %u",
                           m + 1, (unsigned long long)start->factors[m].rows,
                           (unsigned long long)start->factors[m].cols, (unsigned long long)c->dims[m], c->R);
        TF_TRY(tf_gpu_put_values<double>(c->A[m], start->factors[m].data, c->dims[m] * c->R, c->dev->stream));
    }
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    c->started = true;
    return TF_OK;
}

tf_status tfc_part_update_async(tfc_part *c, uint32_t mode, double l2, bool want_sse)
{
    TF_TRY(check_started(c, mode));
    const cmode &md = c->md[mode];
    tfc_solve a;
    memset(&a, 0, sizeof a);
    for (uint32_t k = 0; k < c->order; ++k) {
        a.ind[k] = md.ind[k];
        a.A[k] = c->A[k];
    }
    a.vals = md.vals;
    a.ptr = md.ptr;
    a.out = c->A[mode] + md.lo * c->R; /* the rows are this GPU's, numbered from lo */
    a.order = c->order;
    a.mode = mode;
    a.R = c->R;
    a.want_sse = want_sse;
    a.l2 = l2;
    a.short_rows = md.short_rows;
    a.nshort = md.nshort;
    a.long_rows = md.long_rows;
    a.nlong = md.nlong;
    a.row_seg = md.row_seg;
    a.seg_k0 = md.seg_k0;
    a.seg_k1 = md.seg_k1;
    a.nseg = md.nseg;
    a.partial = c->partial;
    a.row_sse = c->row_sse;
    a.bad = c->bad;
    TF_TRY(tfc_solve_rows(c->dev, a));
    return tfc_rows_reduce(c->dev, want_sse ? c->row_sse : nullptr, c->bad, md.rows, c->part, c->pmin, c->scalars,
                           c->first_bad);
}

tf_status tfc_part_update_read(tfc_part *c, uint32_t mode, double l2, double *sse)
{
    TF_TRY(check_started(c, mode));
    const cmode &md = c->md[mode];
    const cudaStream_t st = c->dev->stream;
    double total = 0.0;
    unsigned long long first = TFC_NONE;
    TF_CU(cudaMemcpyAsync(&total, c->scalars, sizeof total, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaMemcpyAsync(&first, c->first_bad, sizeof first, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    if (first != TFC_NONE) {
        uint32_t col = 0;
        uint64_t at[2] = {0, 0};
        TF_CU(cudaMemcpyAsync(&col, c->bad + first, sizeof col, cudaMemcpyDeviceToHost, st));
        TF_CU(cudaMemcpyAsync(at, md.ptr + first, sizeof at, cudaMemcpyDeviceToHost, st));
        TF_CU(cudaStreamSynchronize(st));
        const uint64_t count = at[1] - at[0];
        return tf_fail(TF_ERR_NUMERIC, "complete: row %llu of mode %u has a singular system (%llu observed entr%s for "
                                       "rank %u, pivot %u): %s",
                       md.lo + first + 1, mode + 1, (unsigned long long)count, count == 1 ? "y" : "ies", c->R, col,
                       l2 > 0.0 ? "the factors are not finite (scale the values, or a larger --l2)"
                                : "give an L2 penalty > 0 (--l2)");
    }
    if (sse) *sse = total;
    return TF_OK;
}

tf_status tfc_part_sse_async(tfc_part *c, int set, bool kept)
{
    if (set < TF_COMPLETE_TRAIN || set > TF_COMPLETE_TEST)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: unknown set %d", set);
    TF_TRY(check_started(c, 0));
    const cset &s = c->sets[set];
    if (!s.nnz) {
        TF_CU(cudaMemsetAsync(c->scalars, 0, sizeof(double), c->dev->stream));
        return TF_OK;
    }
    double *const *F = kept ? c->K : c->A;
    return tfc_model_sse(c->dev, c->order, c->R, (const double *const *)F, (const uint32_t *const *)s.ind, s.vals,
                         s.nnz, c->part, c->scalars);
}

tf_status tfc_part_read(tfc_part *c, double *x)
{
    TF_TRY(tf_gpu_dev_use(c->dev));
    TF_CU(cudaMemcpyAsync(x, c->scalars, sizeof *x, cudaMemcpyDeviceToHost, c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

tf_status tfc_part_frob_sq(tfc_part *c, double *sq)
{
    *sq = 0.0;
    TF_TRY(check_started(c, 0));
    for (uint32_t m = 0; m < c->order; ++m)
        TF_TRY(tfc_sumsq(c->dev, c->A[m], c->dims[m] * c->R, c->part, c->scalars + m));
    std::vector<double> s(c->order);
    TF_CU(cudaMemcpyAsync(s.data(), c->scalars, c->order * sizeof(double), cudaMemcpyDeviceToHost, c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    double t = 0.0;
    for (uint32_t m = 0; m < c->order; ++m) t += s[m];
    *sq = t;
    return TF_OK;
}

tf_status tfc_part_keep_async(tfc_part *c)
{
    TF_TRY(check_started(c, 0));
    for (uint32_t m = 0; m < c->order; ++m)
        TF_CU(cudaMemcpyAsync(c->K[m], c->A[m], c->dims[m] * c->R * sizeof(double), cudaMemcpyDeviceToDevice,
                              c->dev->stream));
    return TF_OK;
}

tf_status tfc_part_result(tfc_part *c, tf_ktensor *out)
{
    TF_TRY(check_started(c, 0));
    if (!out || out->order != c->order || out->rank != c->R)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: the result does not match order %u rank %u", c->order,
                       c->R);
    for (uint32_t m = 0; m < c->order; ++m) {
        if (out->factors[m].rows != c->dims[m] || out->factors[m].cols != c->R)
            return tf_fail(TF_ERR_ARG, "GPU completion backend: result factor %u has the wrong shape", m + 1);
        TF_TRY(tf_gpu_get_values<double>(out->factors[m].data, c->K[m], c->dims[m] * c->R, c->dev->stream));
    }
    return TF_OK;
}

tf_status tfc_part_poison(tfc_part *c, uint32_t mode)
{
    TF_TRY(check_started(c, mode));
    TF_CU(cudaMemsetAsync(c->A[mode], 0xff, c->dims[mode] * c->R * sizeof(double), c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}
