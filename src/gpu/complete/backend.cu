/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of completion by ALS (the vtable of seams/complete.h), one
 * GPU, double precision. Built on the device: the training entries go up
 * once, and per mode a CUB radix sort of that mode's index (stable: within
 * a row the entries keep their order) gives the permutation that gathers
 * every mode's index and the values into the mode's copy, and a kernel its
 * row offsets (each boundary written by one thread). The offsets come to
 * the host once, to cut the rows into short ones (a block each) and long
 * ones (more than a segment of entries: a block per segment, then a block
 * per row; rows are very skewed in ratings data) -- rows.cu. The factors,
 * the kept ones, the validation and test entries (their own order) live
 * on the device; the sums are sums.cu's fixed-order reductions; only
 * scalars come back (the sum of squares, the first singular row), and the
 * start and the result once each. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include <cub/device/device_radix_sort.cuh>

#include "gpu/complete/complete.cuh"
#include "gpu/runtime/gpu_dev.cuh"
#include "seams/cuda_module.h"

/* Entries of a segment of a long row (doubled while the segments' partial
 * systems would take more than TFC_PARTIAL_BYTES). */
#define TFC_SEGMENT 2048u
#define TFC_PARTIAL_BYTES ((uint64_t)256 << 20)

namespace {

/* One mode's copy of the training entries and its row lists. */
struct cmode {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    uint64_t *ptr = nullptr;
    uint32_t *short_rows = nullptr, *long_rows = nullptr;
    uint64_t *row_seg = nullptr, *seg_k0 = nullptr, *seg_k1 = nullptr;
    uint64_t nshort = 0, nlong = 0, nseg = 0;
};

/* A held-out set (original order). */
struct cset {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    uint64_t nnz = 0;
};

struct gpu_complete {
    tf_gpu_dev *dev = nullptr; /* borrowed (the context's) */
    uint32_t order = 0, R = 0;
    uint64_t dims[TF_GPU_MAX_ORDER] = {0}, nnz = 0, max_dim = 0, segment = TFC_SEGMENT, max_seg = 0;
    cmode md[TF_GPU_MAX_ORDER];
    cset sets[3]; /* train: mode 1's copy (pointers borrowed), val, test */
    double *A[TF_GPU_MAX_ORDER] = {nullptr}, *K[TF_GPU_MAX_ORDER] = {nullptr};
    double *row_sse = nullptr, *partial = nullptr, *part = nullptr, *scalars = nullptr;
    uint32_t *bad = nullptr;
    unsigned long long *pmin = nullptr, *first_bad = nullptr;
    bool started = false;

    ~gpu_complete()
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

__global__ void tfc_iota_kernel(uint32_t *x, uint64_t n)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (uint64_t)gridDim.x * blockDim.x)
        x[e] = (uint32_t)e;
}

template <class T> __global__ void tfc_gather_kernel(T *out, const T *in, const uint32_t *perm, uint64_t n)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (uint64_t)gridDim.x * blockDim.x)
        out[e] = in[perm[e]];
}

/* ptr[i] = the first entry of row i (rows 0..I, keys sorted): entry k
 * writes the offsets of the rows after its predecessor's up to its own. */
__global__ void tfc_offsets_kernel(const uint32_t *key, uint64_t n, uint64_t I, uint64_t *ptr)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k <= n; k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t lo = k == 0 ? 0 : (uint64_t)key[k - 1] + 1, hi = k == n ? I : (uint64_t)key[k];
        for (uint64_t i = lo; i <= hi; ++i) ptr[i] = k;
    }
}

unsigned grid_of(const gpu_complete *c, uint64_t n)
{
    const uint64_t b = (n + 255) / 256, cap = (uint64_t)c->dev->sm_count * 16;
    return (unsigned)std::max<uint64_t>(1, std::min(b, cap));
}

/* The training entries on the device in their order (ind, vals). */
struct upload {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    uint32_t *keys = nullptr, *perm[2] = {nullptr, nullptr};
    void *tmp = nullptr;
    ~upload()
    {
        for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) tf_gpu_free(ind[k]);
        tf_gpu_free(vals);
        tf_gpu_free(keys);
        tf_gpu_free(perm[0]);
        tf_gpu_free(perm[1]);
        tf_gpu_free(tmp);
    }
};

/* A set's entries up (ind, vals; n of them). */
tf_status put_entries(gpu_complete *c, const tf_tensor *X, uint32_t **ind, double **vals, const char *what)
{
    const cudaStream_t st = c->dev->stream;
    for (uint32_t k = 0; k < c->order; ++k) {
        TF_TRY(tf_gpu_alloc(&ind[k], X->nnz, what));
        TF_TRY(tf_gpu_h2d_staged(c->dev, ind[k], X->ind[k], X->nnz * sizeof(uint32_t), st));
    }
    TF_TRY(tf_gpu_alloc(vals, X->nnz, what));
    return tf_gpu_h2d_staged(c->dev, *vals, X->vals, X->nnz * sizeof(double), st);
}

/* Mode m's copy, sorted on the device, its offsets and row lists. */
tf_status build_mode(gpu_complete *c, upload &u, size_t tmp_bytes, uint32_t m)
{
    const cudaStream_t st = c->dev->stream;
    const uint64_t n = c->nnz, I = c->dims[m];
    cmode &md = c->md[m];
    int bits = 1;
    while (bits < 32 && (I - 1) >> bits) ++bits;
    tfc_iota_kernel<<<grid_of(c, n), 256, 0, st>>>(u.perm[0], n);
    TF_CU_LAUNCH("tfc_iota_kernel");
    size_t bytes = tmp_bytes;
    TF_CU(cub::DeviceRadixSort::SortPairs(u.tmp, bytes, u.ind[m], u.keys, u.perm[0], u.perm[1], (uint32_t)n, 0, bits,
                                          st));
    for (uint32_t k = 0; k < c->order; ++k) {
        TF_TRY(tf_gpu_alloc(&md.ind[k], n, "completion sorted indices"));
        tfc_gather_kernel<uint32_t><<<grid_of(c, n), 256, 0, st>>>(md.ind[k], u.ind[k], u.perm[1], n);
        TF_CU_LAUNCH("tfc_gather_kernel");
    }
    TF_TRY(tf_gpu_alloc(&md.vals, n, "completion sorted values"));
    tfc_gather_kernel<double><<<grid_of(c, n), 256, 0, st>>>(md.vals, u.vals, u.perm[1], n);
    TF_CU_LAUNCH("tfc_gather_kernel");
    TF_TRY(tf_gpu_alloc(&md.ptr, I + 1, "completion row offsets"));
    tfc_offsets_kernel<<<grid_of(c, n + 1), 256, 0, st>>>(u.keys, n, I, md.ptr);
    TF_CU_LAUNCH("tfc_offsets_kernel");
    std::vector<uint64_t> ptr(I + 1);
    TF_CU(cudaMemcpyAsync(ptr.data(), md.ptr, (I + 1) * sizeof(uint64_t), cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
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
    return TF_OK;
}

/* Everything on the device: the budget checked first (one message). */
tf_status build(gpu_complete *c, const tf_tensor *train, const tf_tensor *val, const tf_tensor *test)
{
    const uint32_t N = c->order, R = c->R;
    const uint64_t n = c->nnz;
    uint64_t sumdims = 0;
    for (uint32_t m = 0; m < N; ++m) sumdims += c->dims[m];
    const uint64_t per = N * sizeof(uint32_t) + sizeof(double);
    const uint64_t held = (val ? val->nnz : 0) + (test ? test->nnz : 0);
    const uint64_t pairs = tfc_pairs(R);
    /* segments: at most one more than entries / segment per mode's long rows */
    while ((2 * n / c->segment + 1) * pairs * sizeof(double) > TFC_PARTIAL_BYTES) c->segment *= 2;
    const uint64_t partial = (2 * n / c->segment + 1) * pairs * sizeof(double);
    const uint64_t copies = (uint64_t)N * n * per + (sumdims + N) * sizeof(uint64_t) + sumdims * 2 * sizeof(uint32_t);
    const uint64_t dense = 2 * sumdims * R * sizeof(double) + c->max_dim * (sizeof(double) + sizeof(uint32_t));
    const uint64_t sorting = n * per + 3 * n * sizeof(uint32_t);
    size_t tmp_bytes = 0;
    TF_CU(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, (const uint32_t *)nullptr, (uint32_t *)nullptr,
                                          (const uint32_t *)nullptr, (uint32_t *)nullptr, (uint32_t)n, 0, 32,
                                          c->dev->stream));
    const uint64_t need = copies + dense + held * per + partial + sorting + tmp_bytes;
    uint64_t budget = 0;
    TF_TRY(tf_gpu_budget(c->dev, &budget));
    if (need > budget)
        return tf_fail(TF_ERR_NOMEM,
                       "GPU completion on GPU %d: %u copies of the training entries (%llu bytes), the factors "
                       "(%llu bytes), the held-out entries (%llu bytes) and scratch (%llu bytes) do not fit the "
                       "%llu bytes the GPU has left (--device cpu runs it)",
                       c->dev->device, N, (unsigned long long)copies, (unsigned long long)dense,
                       (unsigned long long)(held * per), (unsigned long long)(partial + sorting + tmp_bytes),
                       (unsigned long long)budget);
    const cudaStream_t st = c->dev->stream;
    {
        upload u;
        TF_TRY(put_entries(c, train, u.ind, &u.vals, "completion training entries"));
        TF_TRY(tf_gpu_alloc(&u.keys, n, "completion sort keys"));
        TF_TRY(tf_gpu_alloc(&u.perm[0], n, "completion sort order"));
        TF_TRY(tf_gpu_alloc(&u.perm[1], n, "completion sort order"));
        TF_TRY(tf_gpu_alloc_bytes(&u.tmp, std::max<size_t>(tmp_bytes, 1), "completion sort scratch"));
        for (uint32_t m = 0; m < N; ++m) TF_TRY(build_mode(c, u, tmp_bytes, m));
        TF_CU(cudaStreamSynchronize(st)); /* before u's buffers go */
    }
    for (uint32_t k = 0; k < N; ++k) c->sets[0].ind[k] = c->md[0].ind[k];
    c->sets[0].vals = c->md[0].vals;
    c->sets[0].nnz = n;
    const tf_tensor *held_sets[3] = {nullptr, val, test};
    for (int s = 1; s < 3; ++s)
        if (held_sets[s] && held_sets[s]->nnz) {
            TF_TRY(put_entries(c, held_sets[s], c->sets[s].ind, &c->sets[s].vals, "completion held-out entries"));
            c->sets[s].nnz = held_sets[s]->nnz;
        }
    for (uint32_t m = 0; m < N; ++m) {
        TF_TRY(tf_gpu_alloc(&c->A[m], c->dims[m] * R, "completion factor"));
        TF_TRY(tf_gpu_alloc(&c->K[m], c->dims[m] * R, "completion kept factor"));
    }
    TF_TRY(tf_gpu_alloc(&c->row_sse, c->max_dim, "completion row errors"));
    TF_TRY(tf_gpu_alloc(&c->bad, c->max_dim, "completion row pivots"));
    if (c->max_seg) TF_TRY(tf_gpu_alloc(&c->partial, c->max_seg * pairs, "completion partial systems"));
    TF_TRY(tf_gpu_alloc(&c->part, TFC_RED_BLOCKS, "completion partial sums"));
    TF_TRY(tf_gpu_alloc(&c->pmin, TFC_RED_BLOCKS, "completion partial minima"));
    TF_TRY(tf_gpu_alloc(&c->scalars, N + 1, "completion sums"));
    TF_TRY(tf_gpu_alloc(&c->first_bad, 1, "completion singular row"));
    TF_CU(cudaStreamSynchronize(st));
    return TF_OK;
}

tf_status check_started(const gpu_complete *c, uint32_t mode)
{
    if (mode >= c->order || !c->started)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: mode %u outside 1..%u, or init not called", mode + 1,
                       c->order);
    return tf_gpu_dev_use(c->dev);
}

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    gpu_complete *c = (gpu_complete *)ctx;
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

tf_status op_update(void *ctx, uint32_t mode, double l2, double *sse)
{
    gpu_complete *c = (gpu_complete *)ctx;
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
    a.out = c->A[mode];
    a.order = c->order;
    a.mode = mode;
    a.R = c->R;
    a.want_sse = sse != nullptr;
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
    const cudaStream_t st = c->dev->stream;
    TF_TRY(tfc_solve_rows(c->dev, a));
    TF_TRY(tfc_rows_reduce(c->dev, sse ? c->row_sse : nullptr, c->bad, c->dims[mode], c->part, c->pmin, c->scalars,
                           c->first_bad));
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
                       first + 1, mode + 1, (unsigned long long)count, count == 1 ? "y" : "ies", c->R, col,
                       l2 > 0.0 ? "the factors are not finite (scale the values, or a larger --l2)"
                                : "give an L2 penalty > 0 (--l2)");
    }
    if (sse) *sse = total;
    return TF_OK;
}

tf_status sse_of(gpu_complete *c, double *const *F, tf_complete_set set, double *sse)
{
    *sse = 0.0;
    if ((unsigned)set > TF_COMPLETE_TEST) return tf_fail(TF_ERR_ARG, "GPU completion backend: unknown set %d", (int)set);
    TF_TRY(check_started(c, 0));
    const cset &s = c->sets[set];
    if (!s.nnz) return TF_OK;
    TF_TRY(tfc_model_sse(c->dev, c->order, c->R, (const double *const *)F, (const uint32_t *const *)s.ind, s.vals,
                         s.nnz, c->part, c->scalars));
    TF_CU(cudaMemcpyAsync(sse, c->scalars, sizeof *sse, cudaMemcpyDeviceToHost, c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

tf_status op_sse(void *ctx, tf_complete_set set, double *sse)
{
    gpu_complete *c = (gpu_complete *)ctx;
    return sse_of(c, c->A, set, sse);
}

tf_status op_kept_sse(void *ctx, tf_complete_set set, double *sse)
{
    gpu_complete *c = (gpu_complete *)ctx;
    return sse_of(c, c->K, set, sse);
}

tf_status op_frob_sq(void *ctx, double *sq)
{
    gpu_complete *c = (gpu_complete *)ctx;
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

tf_status op_keep(void *ctx)
{
    gpu_complete *c = (gpu_complete *)ctx;
    TF_TRY(check_started(c, 0));
    for (uint32_t m = 0; m < c->order; ++m)
        TF_CU(cudaMemcpyAsync(c->K[m], c->A[m], c->dims[m] * c->R * sizeof(double), cudaMemcpyDeviceToDevice,
                              c->dev->stream));
    return TF_OK;
}

tf_status op_result(void *ctx, tf_ktensor *out)
{
    gpu_complete *c = (gpu_complete *)ctx;
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

void op_destroy(void *ctx)
{
    delete (gpu_complete *)ctx;
}

const tf_complete_backend_ops gpu_ops = {op_init, op_update, op_sse, op_frob_sq, op_keep, op_kept_sse, op_result,
                                         op_destroy};

} // namespace

/* For the tests (tests/hooks): the current factor of a mode set to NaN on
 * the device, so that a row an update leaves out shows. */
tf_status tf_gpu_complete_poison(void *ctx, uint32_t mode)
{
    gpu_complete *c = (gpu_complete *)ctx;
    TF_TRY(check_started(c, mode));
    TF_CU(cudaMemsetAsync(c->A[mode], 0xff, c->dims[mode] * c->R * sizeof(double), c->dev->stream));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

extern "C" tf_status tf_cuda_complete_backend_create_impl(const tf_tensor *train, const tf_tensor *val,
                                                          const tf_tensor *test, const tf_complete_opts *o,
                                                          tf_complete_backend *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!train || !o || !out || !o->context)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: missing tensor, options, context or output");
    if (train->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: order %u is above the GPU's %u (--device cpu runs it)",
                       train->order, TF_GPU_MAX_ORDER);
    if (o->rank < 1 || o->rank > TF_GPU_COMPLETE_MAX_RANK)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: rank %llu is above the GPU's %u (--device cpu runs it)",
                       (unsigned long long)o->rank, TF_GPU_COMPLETE_MAX_RANK);
    if (train->nnz == 0 || train->nnz >= UINT32_MAX)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: %llu training entries: the GPU takes 1..%u (--device cpu runs "
                                           "it)", (unsigned long long)train->nnz, UINT32_MAX - 1);
    for (uint32_t m = 0; m < train->order; ++m)
        if (train->dims[m] > INT32_MAX) /* a block per row */
            return tf_fail(TF_ERR_UNAVAILABLE, "complete: mode %u has %llu rows, above the GPU's 2^31 - 1 (--device "
                                               "cpu runs it)", m + 1, (unsigned long long)train->dims[m]);
    tf_gpu_dev *dev = nullptr;
    TF_TRY(tf_gpu_dev_of(o->context, &dev));
    TF_TRY(tf_gpu_dev_use(dev));
    const uint32_t R = (uint32_t)o->rank;
    if (tfc_smem_bytes(R) > dev->smem_optin)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: rank %u needs %llu bytes of shared memory a block, GPU %d has "
                                           "%zu (--device cpu runs it)", R, (unsigned long long)tfc_smem_bytes(R),
                       dev->device, dev->smem_optin);
    gpu_complete *c = new (std::nothrow) gpu_complete();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU completion backend");
    c->dev = dev;
    c->order = train->order;
    c->R = R;
    c->nnz = train->nnz;
    for (uint32_t m = 0; m < c->order; ++m) {
        c->dims[m] = train->dims[m];
        c->max_dim = std::max(c->max_dim, train->dims[m]);
    }
    const tf_status s = build(c, train, val, test);
    if (s != TF_OK) {
        delete c;
        return s;
    }
    out->ops = &gpu_ops;
    out->ctx = c;
    snprintf(out->plan_desc, sizeof out->plan_desc, "GPU %d, fp64, per-row Cholesky in shared memory, %u sorted "
                                                    "cop%s", dev->device, c->order, c->order == 1 ? "y" : "ies");
    return TF_OK;
}
