/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO copies built on the device (see fcoo_build.cuh). The order is the
 * host builder's: a stable LSD sort by the modes (output mode most
 * significant, then the product modes ascending), the least significant
 * modes packed into one 64-bit key as long as their bits fit, one CUB
 * radix sort per key (stable, over the key's bits only). */
#include <algorithm>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "gpu/engine/fcoo_build.cuh"
#include "gpu/runtime/timing.cuh"

namespace {

constexpr unsigned BLOCK = 256;

unsigned blocks_for(uint64_t n)
{
    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>((n + BLOCK - 1) / BLOCK, 1u << 20));
}

int bits_for(uint64_t n) /* bits to represent 0..n-1 */
{
    int b = 0;
    while (b < 64 && (n - 1) >> b) ++b;
    return b;
}

uint64_t words32(uint64_t bits) { return (bits + 31) / 32; }

/* A key of several modes' indices: src[0] most significant. */
struct key_args {
    const uint32_t *src[TF_MAX_ORDER];
    int width[TF_MAX_ORDER];
    int nk;
    const uint32_t *perm; /* nullptr: identity, and write it to iota */
    uint32_t *iota;
    uint64_t *key;
    uint64_t n;
};

__global__ void key_kernel(key_args a)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a.n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t p = a.perm ? a.perm[k] : k;
        uint64_t key = 0;
        for (int j = 0; j < a.nk; ++j) key = (a.width[j] ? key << a.width[j] : key) | a.src[j][p];
        a.key[k] = key;
        if (!a.perm) a.iota[k] = (uint32_t)k;
    }
}

template <typename T>
struct gather_args {
    const uint32_t *perm;
    const uint32_t *src[TF_MAX_ORDER]; /* src[0]: output mode, then the product modes */
    uint32_t *dst[TF_MAX_ORDER];       /* dst[0]: output indices (scratch), then pind */
    int nsrc;
    const T *vin;
    T *vout;
    uint64_t n;
};

template <typename T>
__global__ void gather_kernel(gather_args<T> a)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < a.n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t p = a.perm[k];
        for (int j = 0; j < a.nsrc; ++j) a.dst[j][k] = a.src[j][p];
        a.vout[k] = a.vin[p];
    }
}

/* Head bit k = non-zero k starts a run of one output index; one warp per
 * word (the stride is a whole number of warps, so a warp's lanes stay in
 * one word); cnt[w] = heads in word w. */
__global__ void head_kernel(const uint32_t *oi, uint64_t n, uint64_t nwords, uint32_t *head, uint32_t *cnt)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < nwords * 32;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const bool h = k < n && (k == 0 || oi[k] != oi[k - 1]);
        const unsigned b = __ballot_sync(0xffffffffu, h);
        if ((threadIdx.x & 31) == 0) {
            head[k >> 5] = b;
            cnt[k >> 5] = (uint32_t)__popc(b);
        }
    }
}

/* seg_row[segment of head k] = its output index. */
__global__ void seg_row_kernel(const uint32_t *oi, const uint32_t *head, const uint32_t *wpre, uint64_t n,
                               uint32_t *seg_row)
{
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k < n;
         k += (uint64_t)gridDim.x * blockDim.x) {
        const uint32_t w = head[k >> 5], bit = (uint32_t)(k & 31);
        if ((w >> bit) & 1u) seg_row[wpre[k >> 5] + __popc(w & ((1u << bit) - 1u))] = oi[k];
    }
}

/* Partition p starts at word p * wpp: its start bit is that word's first
 * head bit, its segment the heads before it plus that bit, less one (as
 * tf_fcoo_repartition). Whole warps per step, as head_kernel. */
__global__ void cut_kernel(const uint32_t *head, const uint32_t *wpre, uint64_t nparts, uint32_t wpp,
                           uint32_t *start, uint32_t *part_seg)
{
    const uint64_t end = (nparts + 31) / 32 * 32;
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; p < end;
         p += (uint64_t)gridDim.x * blockDim.x) {
        uint32_t h = 0;
        if (p < nparts) {
            const uint64_t w = p * wpp;
            h = head[w] & 1u;
            part_seg[p] = wpre[w] + h - 1u;
        }
        const unsigned b = __ballot_sync(0xffffffffu, h != 0);
        if ((threadIdx.x & 31) == 0) start[p >> 5] = b;
    }
}

/* mark[row] = 1 for a row with a segment. */
__global__ void mark_rows_kernel(const uint32_t *seg_row, uint64_t nseg, uint32_t *mark)
{
    for (uint64_t s = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; s < nseg;
         s += (uint64_t)gridDim.x * blockDim.x)
        mark[seg_row[s]] = 1;
}

/* mark[row] = 3 for the row of a segment that continues into partition p
 * (no start bit): its partial sums are added atomically, so it is cleared. */
__global__ void mark_cross_kernel(const uint32_t *start, const uint32_t *part_seg, const uint32_t *seg_row,
                                  uint64_t nparts, uint32_t *mark)
{
    for (uint64_t p = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x + 1; p < nparts;
         p += (uint64_t)gridDim.x * blockDim.x)
        if (!((start[p >> 5] >> (p & 31)) & 1u)) mark[seg_row[part_seg[p]]] = 3;
}

/* flag[row] = the row must be cleared (no segment, or a continued one); flag[len] = 0. */
__global__ void clear_flag_kernel(const uint32_t *mark, uint64_t len, uint32_t *flag)
{
    for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r <= len;
         r += (uint64_t)gridDim.x * blockDim.x)
        flag[r] = r < len && mark[r] != 1;
}

__global__ void scatter_rows_kernel(const uint32_t *flag, const uint32_t *pos, uint64_t len, uint32_t *rows)
{
    for (uint64_t r = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; r < len;
         r += (uint64_t)gridDim.x * blockDim.x)
        if (flag[r]) rows[pos[r]] = (uint32_t)r;
}

/* Exclusive sum of n uint32 (n < 2^32) through s's scratch, growing it if needed. */
tf_status exclusive_sum(tf_fcoo_dsrc *s, const uint32_t *in, uint32_t *out, uint64_t n, cudaStream_t st)
{
    size_t need = 0;
    TF_CU(cub::DeviceScan::ExclusiveSum(nullptr, need, in, out, (uint32_t)n, st));
    if (need > s->tmp_bytes) {
        tf_gpu_free(s->tmp);
        s->tmp = nullptr;
        s->tmp_bytes = 0;
        TF_TRY(tf_gpu_alloc_bytes(&s->tmp, need, "F-COO build scratch"));
        s->tmp_bytes = need;
    }
    TF_CU(cub::DeviceScan::ExclusiveSum(s->tmp, need, in, out, (uint32_t)n, st));
    return TF_OK;
}

tf_status read_u32(const uint32_t *d, uint32_t *h, cudaStream_t st)
{
    TF_CU(cudaMemcpyAsync(h, d, sizeof *h, cudaMemcpyDeviceToHost, st));
    TF_CU(cudaStreamSynchronize(st));
    return TF_OK;
}

} // namespace

uint64_t tf_fcoo_dsrc_bytes(const tf_tensor *X, uint32_t value_bytes)
{
    const uint64_t n = X->nnz;
    uint64_t maxdim = 0;
    for (uint32_t m = 0; m < X->order; ++m) maxdim = X->dims[m] > maxdim ? X->dims[m] : maxdim;
    return 2 * (maxdim + 1) * sizeof(uint32_t) +                 /* the cuts' row marks and flags */
           n * (X->order * sizeof(uint32_t) + value_bytes) +   /* the COO */
           n * 2 * (sizeof(uint64_t) + sizeof(uint32_t)) +        /* keys, permutation */
           (words32(n) + 1) * 2 * sizeof(uint32_t);               /* word counts, prefix */
}

void tf_fcoo_dsrc_free(tf_fcoo_dsrc *s)
{
    if (!s->borrowed) {
        for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_gpu_free(s->ind[m]);
        tf_gpu_free(s->vals);
    }
    for (int b = 0; b < 2; ++b) {
        tf_gpu_free(s->key[b]);
        tf_gpu_free(s->perm[b]);
    }
    tf_gpu_free(s->wpre);
    tf_gpu_free(s->wcnt);
    tf_gpu_free(s->rows[0]);
    tf_gpu_free(s->rows[1]);
    tf_gpu_free(s->tmp);
    if (s->vals_ready) cudaEventDestroy(s->vals_ready);
    *s = tf_fcoo_dsrc();
}

/* The shape of X into s, and the checks of both ways in. */
static tf_status dsrc_shape(const tf_tensor *X, tf_fcoo_dsrc *s)
{
    *s = tf_fcoo_dsrc();
    const uint64_t n = X->nnz;
    if (n >= (1ULL << 32))
        return tf_fail(TF_ERR_RANGE, "F-COO device build: %llu non-zeros (at most 2^32 - 1)",
                       (unsigned long long)n);
    s->order = X->order;
    s->nnz = n;
    for (uint32_t m = 0; m < X->order; ++m) s->dims[m] = X->dims[m];
    return TF_OK;
}

/* The sort's keys, permutation, head-bit words and CUB scratch of s. */
static tf_status dsrc_scratch(tf_gpu_dev *ctx, tf_fcoo_dsrc *s)
{
    const uint64_t n = s->nnz;
    for (int b = 0; b < 2; ++b) {
        TF_TRY(tf_gpu_alloc(&s->key[b], n, "F-COO sort keys"));
        TF_TRY(tf_gpu_alloc(&s->perm[b], n, "F-COO sort permutation"));
    }
    TF_TRY(tf_gpu_alloc(&s->wcnt, words32(n) + 1, "F-COO head counts"));
    TF_TRY(tf_gpu_alloc(&s->wpre, words32(n) + 1, "F-COO head prefix"));
    /* the radix sort's scratch, at its size for n pairs */
    size_t need = 0;
    cub::DoubleBuffer<uint64_t> kb(s->key[0], s->key[1]);
    cub::DoubleBuffer<uint32_t> pb(s->perm[0], s->perm[1]);
    TF_CU(cub::DeviceRadixSort::SortPairs(nullptr, need, kb, pb, (uint32_t)n, 0, 64, ctx->stream));
    if (need) {
        TF_TRY(tf_gpu_alloc_bytes(&s->tmp, need, "F-COO build scratch"));
        s->tmp_bytes = need;
    }
    return TF_OK;
}

tf_status tf_fcoo_dsrc_create(tf_gpu_dev *ctx, const tf_tensor *X, uint32_t value_bytes, tf_fcoo_dsrc *s)
{
    TF_TRY(dsrc_shape(X, s));
    const uint64_t n = X->nnz;
    tf_status st = TF_OK;
    for (uint32_t m = 0; m < X->order && st == TF_OK; ++m)
        st = tf_gpu_upload_staged(ctx, &s->ind[m], X->ind[m], n, "COO indices (F-COO build)", ctx->stream);
    s->value_bytes = value_bytes == 4 ? 4 : 8;
    s->host_vals = X->vals;
    if (st == TF_OK) st = tf_gpu_alloc_bytes(&s->vals, n * s->value_bytes, "COO values (F-COO build)");
    if (st == TF_OK && cudaEventCreateWithFlags(&s->vals_ready, cudaEventDisableTiming) != cudaSuccess) {
        s->vals_ready = nullptr;
        st = tf_gpu_fail(__FILE__, __LINE__, "cudaEventCreateWithFlags", cudaGetLastError());
    }
    if (st == TF_OK) st = dsrc_scratch(ctx, s);
    if (st != TF_OK) tf_fcoo_dsrc_free(s);
    return st;
}

tf_status tf_fcoo_dsrc_adopt(tf_gpu_dev *ctx, const tf_tensor *X, const tf_fcoo_dcoo *coo, tf_fcoo_dsrc *s)
{
    TF_TRY(dsrc_shape(X, s));
    s->borrowed = true;
    for (uint32_t m = 0; m < X->order; ++m) s->ind[m] = coo->ind[m];
    s->vals = coo->vals;
    s->value_bytes = coo->value_bytes == 4 ? 4 : 8;
    const tf_status st = dsrc_scratch(ctx, s);
    if (st != TF_OK) tf_fcoo_dsrc_free(s);
    return st;
}

/* Sorts s's permutation into the stable order of modes mo[0..N) (mo[0]
 * most significant); *perm gets the sorted permutation (inside s). */
static tf_status sort_modes(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, const uint32_t *mo, const uint32_t **perm)
{
    const uint64_t n = s->nnz;
    cub::DoubleBuffer<uint64_t> kb(s->key[0], s->key[1]);
    cub::DoubleBuffer<uint32_t> pb(s->perm[0], s->perm[1]);
    bool first = true;
    for (int l = (int)s->order - 1; l >= 0;) {
        int used = 0;
        const int last = l;
        while (l >= 0 && used + bits_for(s->dims[mo[l]]) <= 64) {
            used += bits_for(s->dims[mo[l]]);
            --l;
        }
        if (used == 0) continue; /* the remaining modes have length 1 */
        key_args a = {};
        for (int j = l + 1; j <= last; ++j) {
            a.width[a.nk] = bits_for(s->dims[mo[j]]);
            a.src[a.nk++] = s->ind[mo[j]];
        }
        a.perm = first ? nullptr : pb.Current();
        a.iota = pb.Current();
        a.key = kb.Current();
        a.n = n;
        key_kernel<<<blocks_for(n), BLOCK, 0, ctx->stream>>>(a);
        TF_CU_LAUNCH("key_kernel");
        size_t bytes = s->tmp_bytes;
        TF_CU(cub::DeviceRadixSort::SortPairs(s->tmp, bytes, kb, pb, (uint32_t)n, 0, used, ctx->stream));
        first = false;
    }
    if (first) { /* every mode has length 1: the identity */
        key_args a = {};
        a.iota = pb.Current();
        a.key = kb.Current();
        a.n = n;
        key_kernel<<<blocks_for(n), BLOCK, 0, ctx->stream>>>(a);
        TF_CU_LAUNCH("key_kernel");
    }
    *perm = pb.Current();
    return TF_OK;
}

/* The values' upload (see tf_fcoo_dsrc), after the first mode's sort is
 * queued: on the side stream, so its DMA runs beside the sort. */
static tf_status put_values(tf_gpu_dev *ctx, tf_fcoo_dsrc *s)
{
    if (!s->host_vals) return TF_OK;
    if (s->value_bytes == 4) TF_TRY(tf_gpu_h2d_values(ctx, (float *)s->vals, s->host_vals, s->nnz, ctx->side));
    else TF_TRY(tf_gpu_h2d_values(ctx, (double *)s->vals, s->host_vals, s->nnz, ctx->side));
    TF_CU(cudaEventRecord(s->vals_ready, ctx->side));
    TF_CU(cudaStreamWaitEvent(ctx->stream, s->vals_ready, 0));
    s->host_vals = nullptr;
    return TF_OK;
}

template <typename T>
tf_status tf_fcoo_dbuild_mode(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, uint32_t *pmodes,
                              uint32_t **pind, T **vals, uint32_t **head, uint32_t **seg_row,
                              uint64_t *nseg, tf_phase_clock *clock)
{
    if (s->value_bytes != sizeof(T))
        return tf_fail(TF_ERR_ARG, "F-COO device build: values uploaded as %u-byte, copies of %u-byte",
                       s->value_bytes, (unsigned)sizeof(T));
    const uint32_t N = s->order;
    const uint64_t n = s->nnz, nwords = words32(n);
    cudaStream_t st = ctx->stream;
    uint32_t mo[TF_MAX_ORDER];
    mo[0] = mode;
    for (uint32_t m = 0, j = 0; m < N; ++m)
        if (m != mode) {
            pmodes[j] = m;
            mo[1 + j] = m;
            ++j;
        }
    const uint32_t *perm = nullptr;
    TF_TRY(sort_modes(ctx, s, mo, &perm));
    const bool first = s->host_vals != nullptr;
    TF_TRY(put_values(ctx, s));
    if (clock) clock->mark(first ? "sort_and_values" : "sort");

    for (uint32_t j = 0; j + 1 < N; ++j) TF_TRY(tf_gpu_alloc(&pind[j], n, "F-COO indices"));
    TF_TRY(tf_gpu_alloc(vals, n, "F-COO values"));
    TF_TRY(tf_gpu_alloc(head, nwords, "F-COO head bits"));
    /* the output indices go to the key buffer the sort no longer needs */
    uint32_t *oi = (uint32_t *)s->key[0];
    gather_args<T> g = {};
    g.perm = perm;
    g.nsrc = (int)N;
    g.src[0] = s->ind[mode];
    g.dst[0] = oi;
    for (uint32_t j = 0; j + 1 < N; ++j) {
        g.src[1 + j] = s->ind[pmodes[j]];
        g.dst[1 + j] = pind[j];
    }
    g.vin = (const T *)s->vals;
    g.vout = *vals;
    g.n = n;
    gather_kernel<T><<<blocks_for(n), BLOCK, 0, st>>>(g);
    TF_CU_LAUNCH("gather_kernel");

    TF_CU(cudaMemsetAsync(s->wcnt + nwords, 0, sizeof(uint32_t), st));
    head_kernel<<<blocks_for(nwords * 32), BLOCK, 0, st>>>(oi, n, nwords, *head, s->wcnt);
    TF_CU_LAUNCH("head_kernel");
    TF_TRY(exclusive_sum(s, s->wcnt, s->wpre, nwords + 1, st));
    uint32_t segs = 0;
    TF_TRY(read_u32(s->wpre + nwords, &segs, st));
    *nseg = segs;
    TF_TRY(tf_gpu_alloc(seg_row, segs, "F-COO segment rows"));
    if (segs) {
        seg_row_kernel<<<blocks_for(n), BLOCK, 0, st>>>(oi, *head, s->wpre, n, *seg_row);
        TF_CU_LAUNCH("seg_row_kernel");
    }
    if (clock) clock->mark("gather");
    return TF_OK;
}

template tf_status tf_fcoo_dbuild_mode<float>(tf_gpu_dev *, tf_fcoo_dsrc *, uint32_t, uint32_t *, uint32_t **,
                                              float **, uint32_t **, uint32_t **, uint64_t *, tf_phase_clock *);
template tf_status tf_fcoo_dbuild_mode<double>(tf_gpu_dev *, tf_fcoo_dsrc *, uint32_t, uint32_t *, uint32_t **,
                                               double **, uint32_t **, uint32_t **, uint64_t *, tf_phase_clock *);

static tf_status dcut(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, const uint32_t *head,
                     const uint32_t *seg_row, uint64_t nseg, uint32_t part_nnz, tf_fcoo_dcut_out *out)
{
    if (part_nnz < 32 || part_nnz % 32)
        return tf_fail(TF_ERR_ARG, "F-COO: partition size %u is not a positive multiple of 32", part_nnz);
    cudaStream_t st = ctx->stream;
    const uint64_t n = s->nnz, len = s->dims[mode];
    const uint64_t nparts = (n + part_nnz - 1) / part_nnz;
    out->nparts = nparts;
    TF_TRY(tf_gpu_alloc(&out->start, words32(nparts), "F-COO start flags"));
    TF_TRY(tf_gpu_alloc(&out->part_seg, nparts, "F-COO partition segments"));
    if (nparts) {
        cut_kernel<<<blocks_for(words32(nparts) * 32), BLOCK, 0, st>>>(head, s->wpre, nparts, part_nnz / 32,
                                                                       out->start, out->part_seg);
        TF_CU_LAUNCH("cut_kernel");
    }
    /* the rows to clear: no segment, or a segment continued across a cut */
    if (len - nseg > len / 4) return TF_OK; /* the empty rows alone: clear all */
    if (len >= 0xffffffffULL) return TF_OK;  /* positions would overflow 32 bits: clear all */
    if (s->rows_len < len + 1) { /* kept for the next cuts and modes: no cudaFree (a device sync) per cut */
        for (int b = 0; b < 2; ++b) {
            tf_gpu_free(s->rows[b]);
            s->rows[b] = nullptr;
        }
        s->rows_len = 0;
        TF_TRY(tf_gpu_alloc(&s->rows[0], len + 1, "F-COO row marks"));
        TF_TRY(tf_gpu_alloc(&s->rows[1], len + 1, "F-COO row flags"));
        s->rows_len = len + 1;
    }
    uint32_t *const mark = s->rows[0], *const flag = s->rows[1];
    TF_CU(cudaMemsetAsync(mark, 0, (len + 1) * sizeof(uint32_t), st));
    if (nseg) {
        mark_rows_kernel<<<blocks_for(nseg), BLOCK, 0, st>>>(seg_row, nseg, mark);
        TF_CU_LAUNCH("mark_rows_kernel");
    }
    if (nparts > 1) {
        mark_cross_kernel<<<blocks_for(nparts), BLOCK, 0, st>>>(out->start, out->part_seg, seg_row, nparts, mark);
        TF_CU_LAUNCH("mark_cross_kernel");
    }
    clear_flag_kernel<<<blocks_for(len + 1), BLOCK, 0, st>>>(mark, len, flag);
    TF_CU_LAUNCH("clear_flag_kernel");
    TF_TRY(exclusive_sum(s, flag, mark, len + 1, st)); /* mark now holds the positions */
    uint32_t nz = 0;
    TF_TRY(read_u32(mark + len, &nz, st));
    out->nzero = nz;
    out->clear_all = nz > len / 4;
    if (out->clear_all || nz == 0) return TF_OK;
    TF_TRY(tf_gpu_alloc(&out->zrows, nz, "F-COO rows to clear"));
    scatter_rows_kernel<<<blocks_for(len), BLOCK, 0, st>>>(flag, mark, len, out->zrows);
    TF_CU_LAUNCH("scatter_rows_kernel");
    return TF_OK;
}

tf_status tf_fcoo_dcut(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, const uint32_t *head,
                       const uint32_t *seg_row, uint64_t nseg, uint32_t part_nnz, tf_fcoo_dcut_out *out)
{
    *out = tf_fcoo_dcut_out();
    const tf_status st = dcut(ctx, s, mode, head, seg_row, nseg, part_nnz, out);
    if (st != TF_OK) {
        tf_gpu_free(out->start);
        tf_gpu_free(out->part_seg);
        tf_gpu_free(out->zrows);
        *out = tf_fcoo_dcut_out();
    }
    return st;
}
