/* SPDX-License-Identifier: BSD-3-Clause */
/* The device-set executor: the GPUs of one run as one object, used by
 * every operation over several GPUs (MTTKRP plans: mttkrp/multi_plan.cu;
 * CP-ALS: cpd/multi.cu) and by the ones to come. It owns
 *   - the devices: this process's GPUs of the run (a context's devices, or
 *     the one GPU of this MPI rank);
 *   - the partition: per mode, every GPU's contiguous rows (the front end
 *     cuts them: src/front/partition.c, the one partitioner) and the shards of
 *     this process's GPUs, built on all GPUs at once, each placed resident
 *     or streamed by exec/placement.cuh (the one residency decision);
 *   - the exchange of rows (exec/exchange.cuh: peer copies, NCCL or host
 *     staging over MPI), opened when the operation needs one;
 *   - bounded waits: a GPU or rank that stops answering fails the run.
 * An operation supplies what each GPU does with its shard (a lambda per
 * step) and which rows to exchange. Every step is queued on all GPUs
 * before anything waits. */
#ifndef TF_GPU_EXEC_DEVSET_CUH
#define TF_GPU_EXEC_DEVSET_CUH
#include "gpu/exec/exchange.cuh"
#include "gpu/exec/placement.cuh"
#include "gpu/runtime/per_gpu.cuh"
#include "gpu/runtime/timing.cuh"
extern "C" {
#include "seams/shards.h"
}

struct tf_devset {
    int n = 0;                                  /* GPUs of this process              */
    int parts = 0, first = 0;                   /* GPUs of the run; this process's first */
    const tf_dist *dist = nullptr;              /* MPI ranks of one GPU each, else NULL */
    tf_gpu_dev *gpu[TF_MAX_GPUS] = {nullptr};  /* borrowed from the context          */
    uint32_t order = 0;
    uint64_t *row_lo[TF_MAX_ORDER] = {nullptr}; /* per mode, parts + 1 (a copy)       */
    uint64_t *unit_lo = nullptr;                /* 0, 1, ..., parts: one row per part (gather_rows) */
    tf_exchange xchg;                           /* its transport opened by open_exchange */
    bool exchanging = false;
    bool failed = false; /* a step failed: communicators are aborted, not destroyed */
    char how[64] = "";   /* transport()'s */

    tf_devset() = default;
    tf_devset(const tf_devset &) = delete;
    tf_devset &operator=(const tf_devset &) = delete;
    ~tf_devset();

    /* The GPUs of sh (this process's count of them, or this rank's one) in
     * context c, and sh's rows of every mode of an order-`order` tensor. */
    tf_status open(tf_context *c, const tf_shards *sh, uint32_t order);
    /* The first `count` GPUs of context c, without rows (an operation that
     * cuts its own: SDDMM's row panels of S); peers reach each other
     * directly where the GPUs allow it. */
    tf_status open_devices(tf_context *c, int count);
    /* Peer copies, NCCL or host staging among the run's GPUs (MPI ranks:
     * chosen alike on every rank, tf_exchange_init_ranks; a collective). */
    tf_status open_exchange();

    /* GPU g's rows of mode: [lo, lo + rows). */
    uint64_t lo(int g, uint32_t mode) const { return row_lo[mode][first + g]; }
    uint64_t rows(int g, uint32_t mode) const { return row_lo[mode][first + g + 1] - row_lo[mode][first + g]; }
    bool peer() const { return exchanging && xchg.peer; }
    /* The transport for a plan line ("NCCL", "host staging (shared GPU)",
     * ...). */
    const char *transport()
    {
        tf_exchange_describe(&xchg, how, sizeof how);
        return how;
    }

    /* s, remembering a failure (so that destruction aborts the exchange). */
    tf_status check(tf_status s)
    {
        if (s != TF_OK) failed = true;
        return s;
    }
    /* On ranks (d), s agreed by every rank (a collective, so that no rank
     * goes on into the next collective while another has stopped): TF_OK
     * where every rank's is; else the lowest failing rank's status and
     * message, on every rank. One process (d NULL): s. */
    static tf_status agree(const tf_dist *d, tf_status s);
    /* fn(g) for every GPU in turn, g's device current: queues work, never waits. */
    template <class Fn> tf_status each(Fn &&fn)
    {
        for (int g = 0; g < n; ++g) {
            TF_TRY(check(tf_gpu_dev_use(gpu[g])));
            TF_TRY(check(fn(g)));
        }
        return TF_OK;
    }
    /* fn(g) for every GPU at once, one host thread per GPU (builds). */
    template <class Fn> tf_status at_once(Fn &&fn)
    {
        return check(tf_per_gpu(n, [&](int g) {
            TF_TRY(tf_gpu_dev_use(gpu[g]));
            return fn(g);
        }));
    }
    /* Until every GPU's work stream is idle, bounded (TF_NCCL_TIMEOUT). */
    tf_status wait() { return check(tf_exchange_wait(&xchg)); }
    /* Every GPU's rows of mode (a[g]: GPU g's copy of the whole matrix, cols
     * columns of value_bytes) to every other GPU, in place, queued on
     * streams[g] (NULL: the work streams). */
    tf_status share_rows(uint32_t mode, void *const *a, uint64_t cols, uint32_t value_bytes,
                         const cudaStream_t *streams = nullptr)
    {
        return check(tf_exchange_share_rows(&xchg, a, row_lo[mode], cols, value_bytes, streams));
    }
    /* Small per-GPU totals to every GPU: a[g] is GPU g's table of `parts`
     * rows of `count` doubles, row r (the run's GPU r) written by its owner;
     * after it every GPU's table holds every row, and each adds them in the
     * same order (AO-ADMM's residual sums: the same stop test everywhere).
     * Queued on the work streams. */
    tf_status gather_rows(double *const *a, uint32_t count)
    {
        return check(
            tf_exchange_share_rows(&xchg, (void *const *)a, unit_lo, count, (uint32_t)sizeof(double), nullptr));
    }
    /* The shards of every mode, one mode at a time: make(g, mode, local,
     * remote) (tf_gpu_shard pointers) on every GPU at once, remote NULL
     * unless sh->pairs (then local holds the non-zeros whose previous-mode
     * index lies in this GPU's rows, remote the others). Where every GPU of
     * the mode takes it (tf_gpu_shard_cut_here, for copies of precision
     * prec at rank R), each cuts its shards itself from sh->whole, whose
     * chunks the GPUs read from one pinned copy (exec/shard_cut.cuh), and
     * they are freed once made; otherwise the front end splits the mode on
     * the host (sh->split). */
    template <class Fn> tf_status build_shards(const tf_shards *sh, tf_precision prec, uint64_t R, Fn &&make)
    {
        tf_tensor part[2 * TF_MAX_GPUS];
        tf_shard_cutter cutter[TF_MAX_GPUS];
        tf_shard_feed feed; /* X's chunks in pinned memory, read by every GPU */
        /* X kept on every GPU after the first mode's pass (where each has
         * room for it beside that mode's shard): the later modes are cut
         * from there, without the host's copy into the feed and the
         * uploads. kept: every cutter holds X; keep_tried: decided once */
        bool kept = false, keep_tried = false;
        const uint64_t extra = sh->whole ? tf_shard_cutter::bytes(sh->whole, sh->relabel, 0) : 0;
        for (uint32_t m = 0; m < order; ++m) {
            bool all = sh->whole && sh->nnz[m];
            auto every_gpu_here = [&](uint64_t more) {
                bool here[TF_MAX_GPUS] = {false}, yes = true;
                const tf_status st = at_once([&](int g) {
                    here[g] = cut_here(sh, m, g, prec, R, (cutter[g].ctx ? 0 : extra) + more);
                    return TF_OK;
                });
                for (int g = 0; g < n; ++g) yes = yes && here[g];
                return st == TF_OK && yes;
            };
            if (all) {
                all = every_gpu_here(0);
                if (!all && kept) { /* X's copies in the way: give them back, stream X again */
                    TF_TRY(at_once([&](int g) {
                        cutter[g].unkeep();
                        return TF_OK;
                    }));
                    kept = false;
                    all = every_gpu_here(0);
                }
            }
            if (gpu[0]->tune.nccl_timeout > 0) feed.timeout = gpu[0]->tune.nccl_timeout; /* the waits' bound */
            if (all && !kept && !feed.pinned && feed.open(sh->whole, n, 0) != TF_OK) {
                tf_clear_error(); /* no pinned chunks: the host splits */
                all = false;
            }
            bool keep = false;
            if (all && !keep_tried) {
                keep_tried = true;
                keep = order > 1 && gpu[0]->tune.gpu_shards != 3 &&
                       every_gpu_here(tf_shard_cutter::kept_bytes(sh->whole));
            }
            if (all) {
                if (!kept) feed.restart();
                TF_TRY(at_once([&](int g) {
                    tf_shard_cutter &c = cutter[g];
                    const int p = first + g;
                    const uint32_t prev = (m + order - 1) % order;
                    tf_gpu_shard s[2];
                    tf_phase_clock clock(gpu[g]->tune.build_report, gpu[g]->stream); /* TF_BUILD_REPORT */
                    tf_status st =
                        c.ctx ? TF_OK : c.open(gpu[g], sh->whole, sh->relabel, tf_shard_cutter::chunk_for(sh->whole));
                    if (st == TF_OK && keep) st = c.keep();
                    if (st != TF_OK && !kept) feed.abort(tf_last_error()); /* the others stop waiting for this GPU */
                    if (st == TF_OK)
                        st = c.cut(kept ? nullptr : &feed, m, row_lo[m][p], row_lo[m][p + 1], sh->pairs != 0,
                                   row_lo[prev][p], row_lo[prev][p + 1], sh->nnz[m][p], prec == TF_SINGLE ? 4 : 8, s);
                    clock.mark("cut");
                    if (st == TF_OK) st = make(g, m, &s[0], sh->pairs ? &s[1] : nullptr);
                    clock.mark("engines");
                    c.drop();
                    clock.report(kept ? (sh->pairs ? "gpu-shards-cut-on-gpu-kept-pairs" : "gpu-shards-cut-on-gpu-kept")
                                      : (sh->pairs ? "gpu-shards-cut-on-gpu-pairs" : "gpu-shards-cut-on-gpu"));
                    return st;
                }));
                if (keep) { /* every GPU's copy filled by this pass: the pinned chunks
                             * go (a later unkeep opens them again) */
                    kept = true;
                    feed.close();
                }
                continue;
            }
            tf_phase_clock clock(gpu[0]->tune.build_report, gpu[0]->stream);
            TF_TRY(check(sh->split(sh->user, m, part)));
            clock.mark("split");
            clock.report("gpu-shards-split-on-host");
            TF_TRY(at_once([&](int g) {
                tf_gpu_shard local, remote;
                local.host = sh->pairs ? &part[2 * g] : &part[g];
                remote.host = sh->pairs ? &part[2 * g + 1] : nullptr;
                return make(g, m, &local, sh->pairs ? &remote : nullptr);
            }));
        }
        return at_once([&](int g) { /* each GPU's buffers freed with it current */
            cutter[g].close();
            return TF_OK;
        });
    }

private:
    /* GPU g's shard of mode m can be cut on it (extra: the cutter's bytes
     * still to allocate). */
    bool cut_here(const tf_shards *sh, uint32_t m, int g, tf_precision prec, uint64_t R, uint64_t extra) const
    {
        tf_tensor shape = {};
        shape.order = order;
        for (uint32_t q = 0; q < order; ++q) shape.dims[q] = sh->whole->dims[q];
        shape.dims[m] = rows(g, m) ? rows(g, m) : 1;
        shape.nnz = sh->nnz[m][first + g];
        return tf_gpu_shard_cut_here(gpu[g], &shape, m, prec, R, extra);
    }
    void no_transport();
};
#endif
