/* SPDX-License-Identifier: BSD-3-Clause */
/* Plan front end: option defaults, backend/format choice, argument checks. */
#include <stdio.h>
#include <string.h>

#include "seams/plan.h"
#include "core/alloc.h"
#include "core/check_args.h"
#include "core/error.h"
#include "core/mttkrp_args.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "front/device_choice.h"
#include "front/partition.h"

void tf_plan_opts_default(tf_plan_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = TF_BACKEND_AUTO;
    o->format = TF_FORMAT_AUTO;
    o->precision = TF_DOUBLE;
}

/* mode < 0: every mode's MTTKRP; else that mode's alone (CPU CSF plans),
 * of a shard the front end cut itself from a tensor it checked (so not
 * checked again: a rank would read every shard once more for nothing). */
static tf_status plan_build(const tf_tensor *X, const tf_plan_opts *o, int mode, tf_plan **out);

/* ops->mttkrp warmup + reps times, each rep timed by the wall clock. */
static tf_status wall_time(const tf_plan_ops *ops, void *impl, uint32_t mode, const tf_matrix *factors,
                           tf_matrix *out, int warmup, int reps, double *times_ms)
{
    for (int i = 0; i < warmup; ++i) TF_TRY(ops->mttkrp(impl, mode, factors, out));
    for (int i = 0; i < reps; ++i) {
        double t0 = tf_wtime();
        TF_TRY(ops->mttkrp(impl, mode, factors, out));
        times_ms[i] = 1e3 * (tf_wtime() - t0);
    }
    return TF_OK;
}

/* A plan over several GPUs whose partition relabeled a mode (partition.h):
 * the GPUs' plan in the run's labels, wrapped so that the caller's factors
 * go in, and M comes out, in the caller's. */
typedef struct relabeled_plan {
    const tf_plan_ops *ops;
    void *impl;
    tf_partition pt;
} relabeled_plan;

/* The GPUs' plan on the factors (but factor `mode`, unread) and out mapped
 * into the run's labels; reps 0: one MTTKRP, else timed. */
static tf_status relabeled_run(relabeled_plan *rp, uint32_t mode, const tf_matrix *factors, tf_matrix *out,
                               int warmup, int reps, double *times_ms)
{
    tf_matrix f[TF_MAX_ORDER], o = *out;
    double *tmp[TF_MAX_ORDER + 1] = {NULL};
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < rp->pt.order && s == TF_OK; ++m) {
        f[m] = factors[m];
        if (m == mode || !rp->pt.relabel[m]) continue;
        s = TF_ALLOC(tmp[m], f[m].rows * f[m].cols, "factor in the run's row order");
        if (s == TF_OK) tf_partition_rows_in(rp->pt.relabel[m], f[m].rows, f[m].cols, factors[m].data, tmp[m]);
        f[m].data = tmp[m];
    }
    if (s == TF_OK && rp->pt.relabel[mode]) {
        s = TF_ALLOC(tmp[TF_MAX_ORDER], o.rows * o.cols, "MTTKRP in the run's row order");
        o.data = tmp[TF_MAX_ORDER];
    }
    if (s == TF_OK)
        s = !reps                 ? rp->ops->mttkrp(rp->impl, mode, f, &o)
            : rp->ops->time_mttkrp ? rp->ops->time_mttkrp(rp->impl, mode, f, &o, warmup, reps, times_ms)
                                   : wall_time(rp->ops, rp->impl, mode, f, &o, warmup, reps, times_ms);
    if (s == TF_OK && o.data != out->data) tf_partition_rows_out(rp->pt.relabel[mode], o.rows, o.cols, o.data, out->data);
    for (uint32_t m = 0; m <= TF_MAX_ORDER; ++m) tf_free(tmp[m]);
    return s;
}

static tf_status relabeled_mttkrp(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out)
{
    return relabeled_run(impl, mode, factors, out, 0, 0, NULL);
}

static tf_status relabeled_time(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out, int warmup,
                                int reps, double *times_ms)
{
    return relabeled_run(impl, mode, factors, out, warmup, reps, times_ms);
}

static void relabeled_destroy(void *impl)
{
    relabeled_plan *rp = impl;
    rp->ops->destroy(rp->impl);
    tf_partition_free(&rp->pt);
    tf_free(rp);
}

static const tf_plan_ops relabeled_ops = {relabeled_mttkrp, relabeled_destroy, relabeled_time, NULL};

/* An MTTKRP plan over the several GPUs of go.context: F-COO shards per GPU
 * and mode, the rows cut by the partitioner. */
static tf_status build_multi(const tf_tensor *X, const tf_plan_opts *go, tf_plan *p)
{
    const int n = go->context->opts.ndevices;
    tf_partition pt;
    tf_partition_shards set;
    tf_shards sh;
    TF_TRY(tf_partition_make(&pt, X, n, (int)go->context->tuning.partition, NULL));
    relabeled_plan *rp = NULL;
    tf_status s = tf_partition_relabels(&pt) ? TF_CALLOC(rp, 1, "relabeled plan") : TF_OK;
    if (s == TF_OK) s = tf_partition_shards_make(&set, X, &pt, 0, n, 0, NULL, 0, &sh);
    if (s == TF_OK) {
        s = tf_cuda_plan_build_multi(X, go, &sh, p);
        tf_partition_shards_free(&set);
    }
    if (s != TF_OK || !rp) {
        tf_free(rp);
        tf_partition_free(&pt);
        return s;
    }
    rp->ops = p->ops;
    rp->impl = p->impl;
    rp->pt = pt;
    p->ops = &relabeled_ops;
    p->impl = rp;
    return TF_OK;
}

static tf_status check_opts(const tf_plan_opts *o)
{
    static const char who[] = "tf_plan_build";
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "%s: unknown backend %d", who, (int)o->backend);
    if ((unsigned)o->format > TF_FORMAT_CSF_SHORT) return tf_fail(TF_ERR_ARG, "%s: unknown format %d", who, (int)o->format);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "%s: unknown precision %d", who, (int)o->precision);
    return tf_threads_arg(who, o->threads);
}

static tf_status build_checked(const tf_tensor *X, const tf_plan_opts *o, int mode, tf_plan **out)
{
    tf_plan_opts d;
    if (!o) { tf_plan_opts_default(&d); o = &d; }
    TF_ARG_NOT_NULL("tf_plan_build", out);
    *out = NULL;
    TF_TRY(check_opts(o));
    tf_progress_report(o->progress, o->progress_user, TF_STEP_BUILD, 0, 0, 0);
    const uint64_t held = tf_alloc_peak_reset();
    tf_status s = plan_build(X, o, mode, out);
    if (s == TF_OK) (*out)->build_peak = tf_alloc_peak() - held;
    tf_progress_report(o->progress, o->progress_user, TF_STEP_BUILD, 0, 0, 1);
    return s;
}

tf_status tf_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan **out)
{
    return build_checked(X, o, -1, out);
}

tf_status tf_plan_build_mode(const tf_tensor *X, const tf_plan_opts *o, uint32_t mode, tf_plan **out)
{
    if (X && mode >= X->order)
        return tf_fail(TF_ERR_ARG, "tf_plan_build_mode: mode %u of a tensor of order %u", mode + 1, X->order);
    return build_checked(X, o, (int)mode, out);
}

static tf_status plan_build(const tf_tensor *X, const tf_plan_opts *o, int mode, tf_plan **out)
{
    if (!X) return tf_fail(TF_ERR_ARG, "tf_plan_build: X is NULL");
    if (mode < 0) TF_TRY(tf_tensor_validate(X)); /* a plan of one mode: a shard cut from a checked tensor */
    /* every format exists on the GPU but the CSF ones */
    const tf_backend be = tf_choose_backend(o->context, o->backend,
                                            o->format != TF_FORMAT_CSF && o->format != TF_FORMAT_CSF_SHORT);
    if (be == TF_BACKEND_CPU && o->precision == TF_SINGLE)
        return tf_fail(TF_ERR_UNAVAILABLE, "the CPU backend computes in double precision only");
    tf_format fmt = o->format;
    if (be == TF_BACKEND_CPU && fmt == TF_FORMAT_AUTO) fmt = TF_FORMAT_CSF;

    tf_plan *p = NULL;
    TF_TRY(TF_CALLOC(p, 1, "plan"));
    p->order = X->order;
    p->nnz = X->nnz;
    memcpy(p->dims, X->dims, sizeof p->dims);
    p->backend = be;
    p->format = fmt;
    p->threads = tf_resolve_threads(o->threads);
    tf_status s;
    if (be == TF_BACKEND_GPU) {
        /* The GPU plan borrows the context's device; without one, the plan
         * owns a private context for its lifetime. */
        tf_plan_opts go = *o;
        s = tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context,
                                &p->own_context);
        if (s == TF_OK && go.context->opts.ndevices > 1) {
            s = build_multi(X, &go, p);
        } else if (s == TF_OK) {
            s = tf_cuda_plan_build(X, &go, p);
        }
        if (s == TF_OK) {
            *out = p;
            return TF_OK;
        }
        tf_plan_free(p);
        char why[256];
        if (!tf_gpu_fallback(s, o->backend, why, sizeof why)) return s;
        tf_plan_opts co = *o;
        co.backend = TF_BACKEND_CPU;
        co.format = TF_FORMAT_AUTO;
        co.precision = TF_DOUBLE; /* the CPU computes in double */
        TF_TRY(plan_build(X, &co, mode, out));
        snprintf((*out)->note, sizeof (*out)->note, "%s", why);
        return TF_OK;
    }
    switch (fmt) {
    case TF_FORMAT_COO: s = tf_cpu_coo_plan_build(X, o, p); break;
    case TF_FORMAT_CSF: /* auto too: o->format says which (the fibre order's rule) */
    case TF_FORMAT_CSF_SHORT:
        s = mode < 0 ? tf_cpu_csf_plan_build(X, o, p) : tf_cpu_csf_plan_build_mode(X, o, (uint32_t)mode, p);
        break;
    default:
        s = tf_fail(TF_ERR_UNAVAILABLE, "format '%s' is not available on the CPU backend (use coo, csf or csf-short)",
                    tf_format_name(fmt));
    }
    if (s != TF_OK) { tf_free(p); return s; }
    *out = p;
    return TF_OK;
}

tf_status tf_plan_mttkrp(tf_plan *p, uint32_t mode, const tf_matrix *factors, tf_matrix *out)
{
    if (!p) return tf_fail(TF_ERR_ARG, "tf_plan_mttkrp: p is NULL");
    TF_TRY(tf_check_mttkrp_args("tf_plan_mttkrp", p->order, p->dims, mode, factors, out));
    return p->ops->mttkrp(p->impl, mode, factors, out);
}

tf_status tf_plan_time_mttkrp(tf_plan *p, uint32_t mode, const tf_matrix *factors, tf_matrix *out,
                              int warmup, int reps, double *times_ms)
{
    if (!p) return tf_fail(TF_ERR_ARG, "tf_plan_time_mttkrp: p is NULL");
    if (warmup < 0 || reps < 1 || !times_ms)
        return tf_fail(TF_ERR_ARG, "tf_plan_time_mttkrp: need warmup >= 0, reps >= 1 and times_ms (got %d, %d, %s)",
                       warmup, reps, times_ms ? "an array" : "NULL");
    TF_TRY(tf_check_mttkrp_args("tf_plan_time_mttkrp", p->order, p->dims, mode, factors, out));
    if (p->ops->time_mttkrp)
        return p->ops->time_mttkrp(p->impl, mode, factors, out, warmup, reps, times_ms);
    return wall_time(p->ops, p->impl, mode, factors, out, warmup, reps, times_ms);
}

void tf_plan_free(tf_plan *p)
{
    if (!p) return;
    if (p->ops && p->ops->destroy) p->ops->destroy(p->impl);
    tf_context_free(p->own_context); /* after the plan's device memory is gone */
    tf_free(p);
}

/* The accessors take a NULL plan as one without anything: "", 0, the CPU,
 * TF_FORMAT_AUTO -- and leave a message (tf_last_error) saying so. */
static int no_plan(const tf_plan *p, const char *fn)
{
    if (p) return 0;
    tf_fail(TF_ERR_ARG, "%s: p is NULL", fn);
    return 1;
}

const char *tf_plan_describe(const tf_plan *p) { return no_plan(p, "tf_plan_describe") ? "" : p->desc; }
const char *tf_plan_note(const tf_plan *p) { return no_plan(p, "tf_plan_note") ? "" : p->note; }
uint64_t tf_plan_streamed_bytes(const tf_plan *p, uint32_t mode)
{
    if (no_plan(p, "tf_plan_streamed_bytes")) return 0;
    if (mode >= p->order || mode >= TF_MAX_ORDER) {
        tf_fail(TF_ERR_ARG, "tf_plan_streamed_bytes: mode %llu is outside 1..%u", (unsigned long long)mode + 1,
                p->order);
        return 0;
    }
    return p->streamed[mode];
}
uint64_t tf_plan_bytes(const tf_plan *p) { return no_plan(p, "tf_plan_bytes") ? 0 : p->bytes; }
uint64_t tf_plan_build_peak(const tf_plan *p) { return no_plan(p, "tf_plan_build_peak") ? 0 : p->build_peak; }
tf_backend tf_plan_backend(const tf_plan *p) { return no_plan(p, "tf_plan_backend") ? TF_BACKEND_CPU : p->backend; }
tf_format tf_plan_format(const tf_plan *p) { return no_plan(p, "tf_plan_format") ? TF_FORMAT_AUTO : p->format; }
