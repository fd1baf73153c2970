/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU SDDMM plans (seams/sddmm_backends.h): one part (part.cuh) per row
 * panel of S, each on its GPU -- one over all of S on the context's GPU, or,
 * on a context of several GPUs, one per GPU over the panel the front end cut
 * (about nnz / GPUs non-zeros each; a panel without non-zeros has no part).
 *
 * Several GPUs: the parts are built at the same time, one host thread per
 * GPU on its device context (tiles, uploads and the timed choice of each
 * GPU's own panel). A run orders every GPU after the work queued before it
 * (events), queues each part on its GPU -- on one host thread per GPU when
 * an operand is in host memory, whose copies the host drives -- and then
 * waits for all (or, on the caller's stream, makes it wait for all). GPU
 * arrays on another of the plan's GPUs are copied peer-to-peer (peer access
 * is enabled at build where the GPUs allow it). No part reads another's
 * results, so there is no reduction and no collective. */
#include <stdio.h>
#include <string.h>

#include <memory>
#include <new>
#include <vector>

#include "gpu/sddmm/part.cuh"
#include "gpu/exec/devset.cuh"
#include "seams/cuda_module.h"

namespace {

/* One panel of the plan on its GPU. */
struct panel_gpu {
    tf_gpu_dev *ctx = nullptr;       /* borrowed from the plan's context      */
    std::unique_ptr<sddmm_part> part; /* NULL: the panel has no non-zeros      */
    cudaEvent_t start = nullptr;      /* several GPUs: a run's order across them */
    cudaEvent_t done = nullptr;
};

/* Events of one GPU for timing, destroyed on it. */
struct gpu_events {
    int device = -1;
    cudaEvent_t start = nullptr, stop = nullptr;
    gpu_events() = default;
    gpu_events(const gpu_events &) = delete;
    gpu_events &operator=(const gpu_events &) = delete;
    ~gpu_events()
    {
        if (device >= 0) cudaSetDevice(device);
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
    }
    tf_status make(const tf_gpu_dev *c)
    {
        TF_TRY(tf_gpu_dev_use(c));
        device = c->device;
        TF_CU(cudaEventCreate(&start));
        TF_CU(cudaEventCreate(&stop));
        return TF_OK;
    }
    tf_status ms(double *out) const
    {
        float m = 0;
        TF_CU(cudaSetDevice(device));
        TF_CU(cudaEventElapsedTime(&m, start, stop));
        *out = m;
        return TF_OK;
    }
};

/* fn(which[k]) for k < n at the same time, one host thread each
 * (tf_per_gpu: fn makes its GPU current itself). */
template <typename Fn>
tf_status on_threads(const int *which, int n, Fn &&fn)
{
    return tf_per_gpu(n, [&](int k) { return fn(which[k]); });
}

} // namespace

struct tf_sddmm_gpu {
    tf_devset set; /* the plan's GPUs (the executor's; panels are cut by the front end) */
    tf_precision prec = TF_DOUBLE;
    int n = 0;
    panel_gpu p[TF_MAX_GPUS];
    int active[TF_MAX_GPUS] = {0}; /* the panels with non-zeros */
    int nactive = 0;

    tf_sddmm_gpu() = default;
    tf_sddmm_gpu(const tf_sddmm_gpu &) = delete;
    tf_sddmm_gpu &operator=(const tf_sddmm_gpu &) = delete;
    ~tf_sddmm_gpu()
    {
        for (int i = 0; i < n; ++i) {
            if (!p[i].ctx) continue;
            if (tf_gpu_dev_use(p[i].ctx) != TF_OK) tf_clear_error(); /* frees on the part's device */
            p[i].part.reset();
            if (p[i].start) cudaEventDestroy(p[i].start);
            if (p[i].done) cudaEventDestroy(p[i].done);
        }
    }
    bool has_device(int dev) const
    {
        for (int i = 0; i < n; ++i)
            if (p[i].ctx->device == dev) return true;
        return false;
    }
    /* After a failure with work queued: waits for every GPU's streams (errors ignored). */
    void drain(cudaStream_t user) const
    {
        for (int i = 0; i < n; ++i) {
            if (cudaSetDevice(p[i].ctx->device) != cudaSuccess) continue;
            if (i == 0 && user) cudaStreamSynchronize(user);
            cudaStreamSynchronize(p[i].ctx->stream);
            cudaStreamSynchronize(cudaStreamLegacy);
            cudaGetLastError();
        }
    }
};

namespace {

/* Builds panel q's part on its GPU (on the calling thread): S's rows
 * row_lo .. row_hi - 1 as a CSR matrix of their own (row offsets rebased;
 * the columns and values are S's, in place). */
tf_status build_panel(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_panel *q, panel_gpu *pg)
{
    const double t0 = tf_gpu_wall();
    TF_TRY(tf_gpu_dev_use(pg->ctx));
    tf_csr v;
    uint64_t *rp = nullptr;
    TF_TRY(tf_csr_rows(S, q->row_lo, q->row_hi, &v, &rp));
    const tf_status s = tf_sddmm_part_new(pg->ctx, &v, K, o, &q->info, &pg->part);
    tf_free(rp);
    q->build_ms = 1e3 * (tf_gpu_wall() - t0);
    return s;
}

/* Panel i's operands located for its GPU (P too when with_p): a GPU array
 * of another GPU is a peer copy where allowed (whole arrays on one of the
 * plan's GPUs), else an error naming both GPUs. */
tf_status locate_panel(const tf_sddmm_gpu &g, int i, const tf_sddmm_part_operands &op, bool given_parts, bool with_p,
                       const char *who, sddmm_operand out[3])
{
    const tf_dense *x[3] = {&op.A, &op.B, &op.P};
    const int dev = g.p[i].ctx->device;
    for (int k = 0; k < (with_p ? 3 : 2); ++k) {
        char name[40];
        if (given_parts) snprintf(name, sizeof name, "parts[%d].%c", i, "ABP"[k]);
        else snprintf(name, sizeof name, "%c", "ABP"[k]);
        TF_TRY(tf_sddmm_locate(*x[k], name, who, dev, g.prec, &out[k]));
        if (out[k].loc != SDDMM_PEER) continue;
        if (g.n == 1)
            return tf_fail(TF_ERR_ARG, "%s: %s is memory of GPU %d; the plan runs on GPU %d", who, name, out[k].device,
                           dev);
        if (given_parts)
            return tf_fail(TF_ERR_ARG, "%s: %s is memory of GPU %d; panel %d runs on GPU %d (each part's GPU arrays "
                                       "must be on its own GPU)", who, name, out[k].device, i, dev);
        if (!g.has_device(out[k].device))
            return tf_fail(TF_ERR_ARG, "%s: %s is memory of GPU %d, which is not one of the plan's GPUs", who, name,
                           out[k].device);
    }
    return TF_OK;
}

/* A stream the caller gave a plan over several GPUs must be of its first GPU. */
tf_status check_stream(const tf_sddmm_gpu &g, cudaStream_t user, const char *who)
{
    int dev = -1;
    if (cudaStreamGetDevice(user, &dev) != cudaSuccess) {
        cudaGetLastError(); /* not known: cudaEventRecord will say */
        return TF_OK;
    }
    if (dev != g.p[0].ctx->device)
        return tf_fail(TF_ERR_ARG, "%s: ro->stream is a stream of GPU %d; a plan over several GPUs takes a stream of "
                                   "its first GPU (%d)", who, dev, g.p[0].ctx->device);
    return TF_OK;
}

/* A run over several GPUs (see tenfold.h: tf_sddmm_run_opts.stream). */
tf_status run_multi(tf_sddmm_gpu &g, const tf_sddmm_part_operands *ops, bool given_parts, cudaStream_t user)
{
    static const char who[] = "tf_sddmm_plan_run";
    sddmm_operand loc[TF_MAX_GPUS][3];
    bool host = false, peer = false;
    for (int k = 0; k < g.nactive; ++k) {
        const int i = g.active[k];
        TF_TRY(locate_panel(g, i, ops[i], given_parts, true, who, loc[i]));
        for (const sddmm_operand &x : loc[i]) {
            host |= x.loc == SDDMM_HOST;
            peer |= x.loc == SDDMM_PEER;
        }
    }
    if (user) TF_TRY(check_stream(g, user, who));
    cudaStream_t st[TF_MAX_GPUS];
    for (int i = 0; i < g.n; ++i) st[i] = !user ? cudaStreamLegacy : i == 0 ? user : g.p[i].ctx->stream;
    /* every panel after the work queued before the call */
    if (user) {
        TF_TRY(tf_gpu_dev_use(g.p[0].ctx));
        TF_CU(cudaEventRecord(g.p[0].start, user));
        for (int k = 0; k < g.nactive; ++k) {
            const int i = g.active[k];
            if (i == 0) continue;
            TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
            TF_CU(cudaStreamWaitEvent(st[i], g.p[0].start, 0));
        }
    } else if (peer) { /* a panel reads or writes another GPU's memory: after the work of every GPU */
        for (int i = 0; i < g.n; ++i) {
            TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
            TF_CU(cudaEventRecord(g.p[i].start, cudaStreamLegacy));
        }
        for (int k = 0; k < g.nactive; ++k) {
            const int i = g.active[k];
            TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
            for (int j = 0; j < g.n; ++j)
                if (j != i) TF_CU(cudaStreamWaitEvent(cudaStreamLegacy, g.p[j].start, 0));
        }
    }
    auto one = [&](int i) -> tf_status {
        TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
        return g.p[i].part->run(loc[i][0], loc[i][1], loc[i][2], st[i], false);
    };
    tf_status s = TF_OK;
    if (host && g.nactive > 1) {
        s = on_threads(g.active, g.nactive, one); /* the host drives host copies: one thread per GPU */
    } else {
        for (int k = 0; k < g.nactive && s == TF_OK; ++k) s = one(g.active[k]);
    }
    if (s != TF_OK) {
        g.drain(user);
        return s;
    }
    if (user) { /* the caller's stream waits for every panel */
        for (int k = 0; k < g.nactive; ++k) {
            const int i = g.active[k];
            if (i == 0) continue;
            TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
            TF_CU(cudaEventRecord(g.p[i].done, st[i]));
            TF_TRY(tf_gpu_dev_use(g.p[0].ctx));
            TF_CU(cudaStreamWaitEvent(user, g.p[i].done, 0));
        }
        return TF_OK;
    }
    for (int k = 0; k < g.nactive; ++k) {
        TF_TRY(tf_gpu_dev_use(g.p[g.active[k]].ctx));
        TF_CU(cudaStreamSynchronize(cudaStreamLegacy));
    }
    return TF_OK;
}

/* Timed runs over several GPUs (see tenfold.h: tf_sddmm_plan_time_panels). */
tf_status time_multi(tf_sddmm_gpu &g, const tf_sddmm_part_operands *ops, bool given_parts, int warmup, int reps,
                     double *times_ms, double *part_ms)
{
    static const char who[] = "tf_sddmm_plan_time";
    sddmm_operand loc[TF_MAX_GPUS][3];
    bool host = false;
    for (int k = 0; k < g.nactive; ++k) {
        const int i = g.active[k];
        TF_TRY(locate_panel(g, i, ops[i], given_parts, false, who, loc[i]));
        host |= loc[i][0].loc == SDDMM_HOST || loc[i][1].loc == SDDMM_HOST;
    }
    for (int i = 0; i < g.n; ++i) { /* the caller's work on the operands first (a benchmark: the host may wait) */
        TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
        TF_CU(cudaStreamSynchronize(cudaStreamLegacy));
    }
    auto stage = [&](int i) -> tf_status {
        TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
        TF_TRY(g.p[i].part->stage(loc[i][0], loc[i][1], g.p[i].ctx->stream));
        TF_CU(cudaStreamSynchronize(g.p[i].ctx->stream));
        return TF_OK;
    };
    tf_status s = TF_OK;
    if (host && g.nactive > 1) s = on_threads(g.active, g.nactive, stage);
    else
        for (int k = 0; k < g.nactive && s == TF_OK; ++k) s = stage(g.active[k]);
    if (s != TF_OK) {
        g.drain(nullptr);
        return s;
    }
    gpu_events all, ev[TF_MAX_GPUS];
    TF_TRY(all.make(g.p[0].ctx));
    for (int k = 0; k < g.nactive; ++k) TF_TRY(ev[g.active[k]].make(g.p[g.active[k]].ctx));
    const cudaStream_t s0 = g.p[0].ctx->stream;
    auto one_run = [&]() -> tf_status {
        TF_TRY(tf_gpu_dev_use(g.p[0].ctx));
        TF_CU(cudaEventRecord(all.start, s0));
        for (int k = 0; k < g.nactive; ++k) {
            const int i = g.active[k];
            const cudaStream_t si = g.p[i].ctx->stream;
            TF_TRY(tf_gpu_dev_use(g.p[i].ctx));
            if (i != 0) TF_CU(cudaStreamWaitEvent(si, all.start, 0));
            TF_CU(cudaEventRecord(ev[i].start, si));
            TF_TRY(g.p[i].part->launch(si));
            TF_CU(cudaEventRecord(ev[i].stop, si));
        }
        TF_TRY(tf_gpu_dev_use(g.p[0].ctx));
        for (int k = 0; k < g.nactive; ++k)
            if (g.active[k] != 0) TF_CU(cudaStreamWaitEvent(s0, ev[g.active[k]].stop, 0));
        TF_CU(cudaEventRecord(all.stop, s0));
        TF_CU(cudaEventSynchronize(all.stop));
        return TF_OK;
    };
    for (int r = 0; r < warmup + reps; ++r) {
        s = one_run();
        if (s != TF_OK) {
            g.drain(nullptr);
            return s;
        }
        if (r < warmup) continue;
        const int t = r - warmup;
        TF_TRY(all.ms(&times_ms[t]));
        if (!part_ms) continue;
        for (int i = 0; i < g.n; ++i) part_ms[(size_t)t * g.n + i] = 0.0;
        for (int k = 0; k < g.nactive; ++k) TF_TRY(ev[g.active[k]].ms(&part_ms[(size_t)t * g.n + g.active[k]]));
    }
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_sddmm_plan_build_impl(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, uint32_t n,
                                                   tf_sddmm_panel *panels, tf_sddmm_gpu **out)
{
    *out = nullptr;
    if (n < 1 || n > TF_MAX_GPUS)
        return tf_fail(TF_ERR_ARG, "GPU SDDMM: %u panels (1 to %d GPUs)", n, TF_MAX_GPUS);
    std::unique_ptr<tf_sddmm_gpu> g(new (std::nothrow) tf_sddmm_gpu());
    if (!g) return tf_fail(TF_ERR_NOMEM, "out of memory for a GPU SDDMM plan");
    g->prec = o->precision;
    TF_TRY(g->set.open_devices(o->context, (int)n)); /* the device contexts, made here (on this thread) */
    for (uint32_t i = 0; i < n; ++i) {
        g->p[i].ctx = g->set.gpu[i];
        g->n = (int)i + 1;
        panels[i].device = g->p[i].ctx->device;
        if (panels[i].nnz_hi > panels[i].nnz_lo) g->active[g->nactive++] = (int)i;
    }
    if (n == 1) {
        TF_TRY(build_panel(S, K, o, &panels[0], &g->p[0]));
        *out = g.release();
        return TF_OK;
    }
    TF_TRY(on_threads(g->active, g->nactive, [&](int i) { return build_panel(S, K, o, &panels[i], &g->p[i]); }));
    for (int i = 0; i < g->n; ++i) {
        TF_TRY(tf_gpu_dev_use(g->p[i].ctx));
        TF_CU(cudaEventCreateWithFlags(&g->p[i].start, cudaEventDisableTiming));
        TF_CU(cudaEventCreateWithFlags(&g->p[i].done, cudaEventDisableTiming));
    }
    *out = g.release();
    return TF_OK;
}

extern "C" tf_status tf_cuda_sddmm_plan_run_impl(tf_sddmm_gpu *g, const tf_sddmm_part_operands *ops, int given_parts,
                                                 const tf_sddmm_run_opts *ro)
{
    const cudaStream_t user = ro && ro->stream ? (cudaStream_t)ro->stream : nullptr;
    if (g->n > 1) return run_multi(*g, ops, given_parts != 0, user);
    panel_gpu &q = g->p[0];
    sddmm_operand loc[3];
    TF_TRY(tf_gpu_dev_use(q.ctx));
    TF_TRY(locate_panel(*g, 0, ops[0], given_parts != 0, true, "tf_sddmm_plan_run", loc));
    return q.part->run(loc[0], loc[1], loc[2], user ? user : cudaStreamLegacy, !user);
}

extern "C" tf_status tf_cuda_sddmm_plan_time_impl(tf_sddmm_gpu *g, const tf_sddmm_part_operands *ops,
                                                  int given_parts, int warmup, int reps, double *times_ms,
                                                  double *part_ms)
{
    if (g->n > 1) return time_multi(*g, ops, given_parts != 0, warmup, reps, times_ms, part_ms);
    panel_gpu &q = g->p[0];
    sddmm_operand loc[3];
    TF_TRY(tf_gpu_dev_use(q.ctx));
    TF_TRY(locate_panel(*g, 0, ops[0], given_parts != 0, false, "tf_sddmm_plan_time", loc));
    const cudaStream_t st = q.ctx->stream;
    TF_TRY(q.part->stage(loc[0], loc[1], st));
    TF_TRY(tf_gpu_time_runs(st, warmup, reps, times_ms, [&] { return q.part->launch(st); }));
    if (part_ms)
        for (int r = 0; r < reps; ++r) part_ms[r] = times_ms[r];
    return TF_OK;
}

extern "C" void tf_cuda_sddmm_plan_free_impl(tf_sddmm_gpu *g) { delete g; }
