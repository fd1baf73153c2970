/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the shards cut on the GPU; see shard_check.h. */
#include "hooks/shard_check.h"

#include <stdio.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <thread>
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
 * part (p + i) mod P, and both are compared with the host's. With keep,
 * both keep X on the GPU: the first pass fills the copies from the feed,
 * every later one cuts from them without it. */
constexpr int READERS = 2;

tf_status check_all(tf_gpu_dev *ctx, const tf_tensor *X, const tf_partition *pt, int pairs, tf_precision prec,
                    uint64_t chunk, bool keep, char *diff, size_t len)
{
    tf_shard_feed feed;
    TF_TRY(tf_gpu_dev_use(&ctx[0]));
    TF_TRY(feed.open(X, READERS, chunk));
    tf_shard_cutter c[READERS];
    for (int i = 0; i < READERS; ++i) {
        TF_TRY(tf_gpu_dev_use(&ctx[i]));
        TF_TRY(c[i].open(&ctx[i], X, pt->relabel, feed.chunk));
        if (keep) TF_TRY(c[i].keep());
    }
    const int P = pt->parts, nout = pairs ? 2 * P : P;
    std::vector<tf_tensor> host((size_t)nout);
    for (uint32_t m = 0; m < X->order && !diff[0]; ++m) {
        TF_TRY(tf_partition_split(X, pt, 1, m, pairs, 0, P, host.data()));
        tf_status s = TF_OK;
        const uint32_t prev = (m + X->order - 1) % X->order;
        for (int p = 0; p < P && s == TF_OK && !diff[0]; ++p) {
            tf_gpu_shard out[READERS][2];
            const bool fed = !(keep && c[0].filled); /* kept copies filled: no feed (NULL) */
            if (fed) feed.restart();
            s = tf_per_gpu(READERS, [&](int i) {
                TF_TRY(tf_gpu_dev_use(&ctx[i]));
                const int q = (p + i) % P;
                return c[i].cut(fed ? &feed : nullptr, m, pt->row_lo[m][q], pt->row_lo[m][q + 1], pairs != 0, pt->row_lo[prev][q],
                                pt->row_lo[prev][q + 1], pt->nnz[m][q], prec == TF_SINGLE ? 4 : 8, out[i]);
            });
            for (int i = 0; i < READERS && s == TF_OK && !diff[0]; ++i)
                for (int h = 0; h < (pairs ? 2 : 1) && s == TF_OK && !diff[0]; ++h) {
                    const int q = (p + i) % P;
                    char what[64];
                    snprintf(what, sizeof what, "mode %u, part %d%s%s", m + 1, q,
                             pairs ? (h ? ", remote" : ", local") : "", keep ? ", X kept on the GPU" : "");
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
    for (int keep = 0; keep < 2 && s == TF_OK && !(len && diff[0]); ++keep)
        s = check_all(ctx, X, &pt, pairs, prec, chunk, keep != 0, diff, len);
    for (int i = 0; i < made; ++i) tf_gpu_dev_destroy(&ctx[i]);
    tf_partition_free(&pt);
    return s;
}

tf_status tf_gpu_check_feed(int readers, uint64_t chunks, char *diff, size_t len)
{
    if (len) diff[0] = 0;
    if (readers < 1 || readers > 8) return tf_fail(TF_ERR_ARG, "feed check: %d readers", readers);
    const uint64_t chunk = 64, nnz = chunks * chunk - 17; /* the last chunk part full */
    std::vector<uint32_t> ind[3];
    std::vector<double> vals(nnz);
    tf_tensor X = {};
    X.order = 3;
    X.nnz = nnz;
    for (uint32_t m = 0; m < 3; ++m) {
        ind[m].resize(nnz);
        for (uint64_t k = 0; k < nnz; ++k) ind[m][k] = (uint32_t)(k * (m + 7) % 1000);
        X.ind[m] = ind[m].data();
        X.dims[m] = 1000;
    }
    for (uint64_t k = 0; k < nnz; ++k) vals[k] = 0.5 + (double)k;
    X.vals = vals.data();
    for (int failing = 0; failing < 2 && !diff[0]; ++failing) {
        tf_shard_feed feed; /* its slots in plain memory: the protocol without a GPU */
        feed.X = &X;
        feed.readers = readers;
        feed.chunk = chunk;
        feed.nchunks = chunks;
        feed.slot_bytes = chunk * (3 * sizeof(uint32_t) + sizeof(double));
        feed.timeout = 20.0;
        std::vector<char> mem(TF_FEED_SLOTS * feed.slot_bytes);
        feed.pinned = mem.data();
        feed.restart();
        std::atomic<int> bad(0), errors(0);
        std::vector<std::thread> th;
        const auto t0 = std::chrono::steady_clock::now();
        for (int r = 0; r < readers; ++r)
            th.emplace_back([&, r]() {
                unsigned seed = 12345u + 977u * (unsigned)r;
                for (uint64_t q = 0; q < chunks; ++q) {
                    if (failing && r == 0 && q == chunks / 2) { /* as cut() does on a failure */
                        feed.abort("reader 0 failed (on purpose)");
                        errors++;
                        return;
                    }
                    int slot = -1;
                    if (feed.acquire(q, &slot) != TF_OK) {
                        errors++;
                        return;
                    }
                    const uint64_t k0 = q * chunk, n = std::min<uint64_t>(chunk, nnz - k0);
                    for (uint64_t k = 0; k < n; ++k) {
                        for (uint32_t m = 0; m < 3; ++m) bad += feed.ind(slot, m)[k] != ind[m][k0 + k];
                        bad += feed.vals(slot)[k] != vals[k0 + k];
                    }
                    seed = seed * 1103515245u + 12345u;
                    std::this_thread::sleep_for(std::chrono::microseconds((seed >> 16) % 300));
                    feed.release(slot);
                }
            });
        for (auto &t : th) t.join();
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        feed.pinned = nullptr; /* not the feed's own */
        if (bad) snprintf(diff, len, "%d readers%s: %d entries wrong in a taken chunk", readers,
                          failing ? " (one failing)" : "", bad.load());
        else if (!failing && errors) snprintf(diff, len, "%d readers: %d failed", readers, errors.load());
        else if (failing && errors != readers)
            snprintf(diff, len, "%d readers, one failing: %d of them stopped", readers, errors.load());
        else if (secs > 10.0)
            snprintf(diff, len, "%d readers%s: %.1f s (a reader waited for the bound)", readers,
                     failing ? " (one failing)" : "", secs);
    }
    tf_clear_error();
    return TF_OK;
}
