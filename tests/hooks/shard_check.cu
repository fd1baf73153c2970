/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the shards cut on the GPU; see shard_check.h. */
#include "hooks/shard_check.h"

#include <stdio.h>
#include <string.h>

#include <vector>

#include "gpu/exec/shard_cut.cuh"
#include "gpu/runtime/per_gpu.cuh"
extern "C" {
#include "front/partition.h"
}

namespace {

/* The first difference of the device shard s from the host's h, or "". */
template <typename T>
tf_status compare(tf_gpu_dev *ctx, const tf_gpu_shard &s, const tf_tensor *h, const char *what, char *diff,
                  size_t len)
{
    const tf_tensor *d = &s.shape;
    if (d->order != h->order || d->nnz != h->nnz) {
        snprintf(diff, len, "%s: order %u, %llu non-zeros vs %u, %llu", what, d->order, (unsigned long long)d->nnz,
                 h->order, (unsigned long long)h->nnz);
        return TF_OK;
    }
    for (uint32_t m = 0; m < h->order; ++m)
        if (d->dims[m] != h->dims[m]) {
            snprintf(diff, len, "%s: dims[%u] %llu vs %llu", what, m, (unsigned long long)d->dims[m],
                     (unsigned long long)h->dims[m]);
            return TF_OK;
        }
    const uint64_t n = h->nnz;
    if (!n) return TF_OK;
    std::vector<uint32_t> ind(n);
    for (uint32_t m = 0; m < h->order; ++m) {
        TF_CU(cudaMemcpyAsync(ind.data(), s.dev->ind[m], n * sizeof(uint32_t), cudaMemcpyDeviceToHost, ctx->stream));
        TF_CU(cudaStreamSynchronize(ctx->stream));
        for (uint64_t k = 0; k < n; ++k)
            if (ind[k] != h->ind[m][k]) {
                snprintf(diff, len, "%s: ind[%u][%llu] %u vs %u", what, m, (unsigned long long)k, ind[k],
                         h->ind[m][k]);
                return TF_OK;
            }
    }
    std::vector<T> v(n);
    TF_CU(cudaMemcpyAsync(v.data(), s.dev->vals, n * sizeof(T), cudaMemcpyDeviceToHost, ctx->stream));
    TF_CU(cudaStreamSynchronize(ctx->stream));
    for (uint64_t k = 0; k < n; ++k) {
        const T want = (T)h->vals[k];
        if (memcmp(&v[k], &want, sizeof want) != 0) {
            snprintf(diff, len, "%s: vals[%llu] %.17g vs %.17g", what, (unsigned long long)k, (double)v[k],
                     h->vals[k]);
            return TF_OK;
        }
    }
    return TF_OK;
}

/* Two readers of one feed (two contexts on GPU 0, as TF_TEST_GPUS makes
 * them, each on a thread of its own): in pass p of mode m reader i cuts
 * part (p + i) mod P, and both are compared with the host's. */
constexpr int READERS = 2;

tf_status check_all(tf_gpu_dev *ctx, const tf_tensor *X, const tf_partition *pt, int pairs, tf_precision prec,
                    uint64_t chunk, char *diff, size_t len)
{
    tf_shard_feed feed;
    TF_TRY(tf_gpu_dev_use(&ctx[0]));
    TF_TRY(feed.open(X, READERS, chunk));
    tf_shard_cutter c[READERS];
    for (int i = 0; i < READERS; ++i) {
        TF_TRY(tf_gpu_dev_use(&ctx[i]));
        TF_TRY(c[i].open(&ctx[i], X, pt->relabel, feed.chunk));
    }
    const int P = pt->parts, nout = pairs ? 2 * P : P;
    std::vector<tf_tensor> host((size_t)nout);
    for (uint32_t m = 0; m < X->order && !diff[0]; ++m) {
        TF_TRY(tf_partition_split(X, pt, 1, m, pairs, 0, P, host.data()));
        tf_status s = TF_OK;
        const uint32_t prev = (m + X->order - 1) % X->order;
        for (int p = 0; p < P && s == TF_OK && !diff[0]; ++p) {
            tf_gpu_shard out[READERS][2];
            feed.restart();
            s = tf_per_gpu(READERS, [&](int i) {
                TF_TRY(tf_gpu_dev_use(&ctx[i]));
                const int q = (p + i) % P;
                return c[i].cut(&feed, m, pt->row_lo[m][q], pt->row_lo[m][q + 1], pairs != 0, pt->row_lo[prev][q],
                                pt->row_lo[prev][q + 1], pt->nnz[m][q], prec == TF_SINGLE ? 4 : 8, out[i]);
            });
            for (int i = 0; i < READERS && s == TF_OK && !diff[0]; ++i)
                for (int h = 0; h < (pairs ? 2 : 1) && s == TF_OK && !diff[0]; ++h) {
                    const int q = (p + i) % P;
                    char what[64];
                    snprintf(what, sizeof what, "mode %u, part %d%s", m + 1, q,
                             pairs ? (h ? ", remote" : ", local") : "");
                    const tf_tensor *ht = &host[(size_t)(pairs ? 2 * q + h : q)];
                    s = tf_gpu_dev_use(&ctx[i]);
                    if (s == TF_OK)
                        s = prec == TF_SINGLE ? compare<float>(&ctx[i], out[i][h], ht, what, diff, len)
                                              : compare<double>(&ctx[i], out[i][h], ht, what, diff, len);
                }
        }
        for (auto &t : host) tf_tensor_free(&t);
        TF_TRY(s);
    }
    for (int i = 0; i < READERS; ++i) { /* freed with their context current */
        TF_TRY(tf_gpu_dev_use(&ctx[i]));
        c[i].close();
    }
    return TF_OK;
}

} // namespace

tf_status tf_gpu_check_shards(const tf_tensor *X, int parts, int schedule, int pairs, tf_precision prec,
                              uint64_t chunk, int *relabeled, char *diff, size_t len)
{
    if (len) diff[0] = 0;
    *relabeled = 0;
    tf_partition pt;
    TF_TRY(tf_partition_make(&pt, X, parts, schedule, NULL));
    *relabeled = tf_partition_relabels(&pt);
    tf_gpu_dev ctx[READERS];
    tf_status s = TF_OK;
    int made = 0;
    for (; made < READERS && s == TF_OK; ++made) {
        s = tf_gpu_dev_init(&ctx[made], 0);
        tf_tuning_default(&ctx[made].tune); /* as in a run */
        ctx[made].tune.gpu_poison = 1;      /* every output entry written */
    }
    if (s == TF_OK) s = check_all(ctx, X, &pt, pairs, prec, chunk, diff, len);
    for (int i = 0; i < made; ++i) tf_gpu_dev_destroy(&ctx[i]);
    tf_partition_free(&pt);
    return s;
}
