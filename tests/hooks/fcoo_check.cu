/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the device F-COO builder; see fcoo_check.h. */
#include "hooks/fcoo_check.h"

#include <stdio.h>
#include <string.h>

#include <vector>

#include "gpu/engine/fcoo_build.cuh"
extern "C" {
#include "core/alloc.h"
#include "fmt/fcoo.h"
}

namespace {

template <typename T>
tf_status download(std::vector<T> &h, const T *d, uint64_t n, cudaStream_t st)
{
    h.assign(n, T(0));
    if (n) {
        TF_CU(cudaMemcpyAsync(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost, st));
        TF_CU(cudaStreamSynchronize(st));
    }
    return TF_OK;
}

/* Index of the first difference of a and b[0..n), or -1. */
template <typename T>
long long first_diff(const std::vector<T> &a, const T *b, uint64_t n)
{
    for (uint64_t k = 0; k < n; ++k)
        if (!(a[k] == b[k])) return (long long)k;
    return -1;
}

/* The device copy of one mode, freed on scope exit. */
template <typename T>
struct dcopy {
    uint32_t *pind[TF_MAX_ORDER] = {nullptr};
    T *vals = nullptr;
    uint32_t *head = nullptr, *seg_row = nullptr;
    uint64_t nseg = 0;
    uint32_t pmodes[TF_MAX_ORDER] = {0};
    ~dcopy()
    {
        for (auto p : pind) tf_gpu_free(p);
        tf_gpu_free(vals);
        tf_gpu_free(head);
        tf_gpu_free(seg_row);
    }
};
struct dcut_hold {
    tf_fcoo_dcut_out o;
    ~dcut_hold()
    {
        tf_gpu_free(o.start);
        tf_gpu_free(o.part_seg);
        tf_gpu_free(o.zrows);
    }
};

#define DIFF(...)                                                                                                  \
    do {                                                                                                         \
        snprintf(diff, len, __VA_ARGS__);                                                                        \
        return TF_OK;                                                                                            \
    } while (0)

template <typename T>
tf_status check(tf_gpu_dev *ctx, tf_fcoo_dsrc *src, const tf_fcoo *f, uint32_t mode, const uint32_t *parts,
                int np, tf_fcoo *hf, char *diff, size_t len)
{
    cudaStream_t st = ctx->stream;
    dcopy<T> d;
    TF_TRY(tf_fcoo_dbuild_mode<T>(ctx, src, mode, d.pmodes, d.pind, &d.vals, &d.head, &d.seg_row, &d.nseg));
    const uint64_t n = f->nnz;
    const unsigned M = mode + 1;
    for (uint32_t j = 0; j + 1 < f->order; ++j) {
        if (d.pmodes[j] != f->pmodes[j]) DIFF("mode %u: product mode %u is %u vs %u", M, j, d.pmodes[j], f->pmodes[j]);
        std::vector<uint32_t> h;
        TF_TRY(download(h, d.pind[j], n, st));
        long long k = first_diff(h, f->pind[j], n);
        if (k >= 0) DIFF("mode %u: pind[%u][%lld] %u vs %u", M, j, k, h[k], f->pind[j][k]);
    }
    std::vector<T> v;
    TF_TRY(download(v, d.vals, n, st));
    for (uint64_t k = 0; k < n; ++k)
        if (!(v[k] == (T)f->vals[k])) DIFF("mode %u: vals[%llu] %.17g vs %.17g", M, (unsigned long long)k, (double)v[k], f->vals[k]);
    std::vector<uint32_t> h;
    TF_TRY(download(h, d.head, (n + 31) / 32, st));
    long long k = first_diff(h, f->head, (n + 31) / 32);
    if (k >= 0) DIFF("mode %u: head word %lld %08x vs %08x", M, k, h[k], f->head[k]);
    if (d.nseg != f->nseg) DIFF("mode %u: %llu segments vs %llu", M, (unsigned long long)d.nseg, (unsigned long long)f->nseg);
    TF_TRY(download(h, d.seg_row, d.nseg, st));
    k = first_diff(h, f->seg_row, f->nseg);
    if (k >= 0) DIFF("mode %u: seg_row[%lld] %u vs %u", M, k, h[k], f->seg_row[k]);
    for (int q = 0; q < np; ++q) {
        const uint32_t P = parts[q];
        if (hf->part_nnz != P) TF_TRY(tf_fcoo_repartition(hf, P));
        dcut_hold c;
        TF_TRY(tf_fcoo_dcut(ctx, src, mode, d.head, d.seg_row, d.nseg, P, &c.o));
        if (c.o.nparts != hf->nparts) DIFF("mode %u, part %u: %llu partitions vs %llu", M, P,
                                           (unsigned long long)c.o.nparts, (unsigned long long)hf->nparts);
        TF_TRY(download(h, c.o.start, (hf->nparts + 31) / 32, st));
        k = first_diff(h, hf->start, (hf->nparts + 31) / 32);
        if (k >= 0) DIFF("mode %u, part %u: start word %lld %08x vs %08x", M, P, k, h[k], hf->start[k]);
        TF_TRY(download(h, c.o.part_seg, hf->nparts, st));
        k = first_diff(h, hf->part_seg, hf->nparts);
        if (k >= 0) DIFF("mode %u, part %u: part_seg[%lld] %u vs %u", M, P, k, h[k], hf->part_seg[k]);
        uint32_t *rows = nullptr;
        uint64_t nz = 0;
        const uint64_t L = f->dims[mode];
        TF_TRY(tf_fcoo_zero_rows(hf, L / 4, &rows, &nz));
        const bool clear_all = nz > L / 4;
        std::vector<uint32_t> zr;
        tf_status s = TF_OK;
        if (!clear_all && !c.o.clear_all) s = download(zr, c.o.zrows, c.o.nzero, st);
        const bool same = s == TF_OK && clear_all == c.o.clear_all &&
                          (clear_all || (nz == c.o.nzero && (nz == 0 || first_diff(zr, rows, nz) < 0)));
        tf_free(rows);
        TF_TRY(s);
        if (!same) DIFF("mode %u, part %u: rows to clear differ (%s %llu vs %s %llu)", M, P,
                        c.o.clear_all ? "all" : "list of", (unsigned long long)c.o.nzero,
                        clear_all ? "all" : "list of", (unsigned long long)nz);
    }
    return TF_OK;
}

} // namespace

tf_status tf_gpu_check_fcoo_build(const tf_tensor *X, uint32_t mode, tf_precision prec, const uint32_t *parts,
                                  int np, char *diff, size_t len)
{
    if (len) diff[0] = 0;
    if (np < 1) return tf_fail(TF_ERR_ARG, "fcoo check: no partition size");
    tf_gpu_dev ctx;
    tf_status s = tf_gpu_dev_init(&ctx, 0);
    tf_tuning_default(&ctx.tune); /* the uploads through the pinned staging, as in a plan */
    if (s == TF_OK) s = tf_gpu_dev_use(&ctx);
    tf_fcoo f, hf;
    memset(&f, 0, sizeof f);
    memset(&hf, 0, sizeof hf);
    tf_fcoo_dsrc src;
    if (s == TF_OK) s = tf_fcoo_build(X, mode, parts[0], &f);
    if (s == TF_OK) s = tf_fcoo_build(X, mode, parts[0], &hf); /* re-cut per size */
    if (s == TF_OK) s = tf_fcoo_dsrc_create(&ctx, X, prec == TF_SINGLE ? 4 : 8, &src);
    if (s == TF_OK)
        s = prec == TF_SINGLE ? check<float>(&ctx, &src, &f, mode, parts, np, &hf, diff, len)
                              : check<double>(&ctx, &src, &f, mode, parts, np, &hf, diff, len);
    tf_fcoo_dsrc_free(&src);
    tf_fcoo_free(&f);
    tf_fcoo_free(&hf);
    tf_gpu_dev_destroy(&ctx);
    return s;
}
