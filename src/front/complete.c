/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_complete, the front end of completion: resolves and checks the
 * options, the entry sets and the start, creates the backend (one GPU,
 * the CPU of one process or of MPI ranks, several GPUs of one process or
 * GPU ranks), then runs the algorithm
 * (algo/complete.c) on it. Also the RMSE and prediction helpers. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "algo/complete.h"
#include "seams/gcp.h"
#include "core/alloc.h"
#include "core/check_args.h"
#include "core/error.h"
#include "cpu/model_values.h"
#include "front/auto_backend.h"
#include "front/device_choice.h"
#include "front/partition.h"
#include "seams/dist.h"

void tf_complete_opts_default(tf_complete_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = (uint32_t)sizeof *o;
    o->method = TF_COMPLETE_ALS;
    o->rank = 10;
    o->max_iters = 1000;
    o->l2 = 100.0;
    o->tol = 1e-4;
    o->patience = 20;
    o->seed = TF_DEFAULT_SEED;
    o->backend = TF_BACKEND_AUTO;
    o->rate = 1e-3;
    o->decay = 0.1;
    o->epoch_iters = 1000;
    o->max_fails = 1;
}

void tf_complete_report_free(tf_complete_report *r)
{
    if (!r) return;
    tf_free(r->iterations);
    r->iterations = NULL;
}

/* The size of tf_complete_opts's first layout (fields are appended after it). */
#define OPTS_SIZE_FIRST (offsetof(tf_complete_opts, stop) + sizeof(const volatile int *))

static tf_status resolve_opts(const tf_complete_opts *in, tf_complete_opts *out)
{
    tf_complete_opts_default(out);
    if (!in) return TF_OK;
    if (in->size < OPTS_SIZE_FIRST)
        return tf_fail(TF_ERR_ARG, "complete: tf_complete_opts.size is %u, expected at least %zu (set it up with "
                                   "tf_complete_opts_default)", in->size, (size_t)OPTS_SIZE_FIRST);
    memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
    out->size = (uint32_t)sizeof *out;
    const tf_complete_opts *o = out;
    if (o->method != TF_COMPLETE_ALS && o->method != TF_COMPLETE_ADAM)
        return tf_fail(TF_ERR_ARG, "complete: unknown method %d (TF_COMPLETE_ALS or TF_COMPLETE_ADAM)",
                       (int)o->method);
    if (o->rank < 1 || o->rank > TF_COMPLETE_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "complete: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_COMPLETE_MAX_RANK);
    if (o->max_iters < 1 || o->max_iters > 1000000)
        return tf_fail(TF_ERR_ARG, "complete: max_iters %u is outside 1..1000000", o->max_iters);
    if (!(o->l2 >= 0.0) || isinf(o->l2))
        return tf_fail(TF_ERR_ARG, "complete: l2 %g is not a finite number >= 0", o->l2);
    if (!(o->tol >= 0.0) || isinf(o->tol))
        return tf_fail(TF_ERR_ARG, "complete: tol %g is not a finite number >= 0", o->tol);
    if (o->patience < 1) return tf_fail(TF_ERR_ARG, "complete: patience is 0 (expected at least 1)");
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "complete: threads %d is negative", o->threads);
    if (!(o->rate > 0.0) || isinf(o->rate))
        return tf_fail(TF_ERR_ARG, "complete: rate %g is not a finite number > 0", o->rate);
    if (!(o->decay > 0.0 && o->decay <= 1.0))
        return tf_fail(TF_ERR_ARG, "complete: decay %g is outside (0, 1]", o->decay);
    if (o->epoch_iters < 1) return tf_fail(TF_ERR_ARG, "complete: epoch_iters is 0 (expected at least 1)");
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "complete: unknown backend %d", (int)o->backend);
    return TF_OK;
}

/* Where the run goes: a context of several GPUs, or of MPI ranks on GPUs,
 * to those GPUs (*multi); the ranks of a distributed context on their CPUs
 * (*dist alone); else this process's one GPU (asked for, or under auto
 * where the context's device -- without a context, the machine -- has
 * one: *gpu), else its CPU. ALS and Adam alike. */
static tf_status choose(const tf_complete_opts *o, tf_complete_report *rep, const tf_dist **dist, int *gpu,
                        int *multi)
{
    tf_context *c = o->context;
    *dist = c ? c->dist : NULL;
    *gpu = *multi = 0;
    if (c && (c->dist || c->opts.ndevices > 1)) {
        const int on_gpu = tf_context_resolve(c) == TF_BACKEND_GPU;
        tf_status (*fail)(tf_status, const char *, ...) = *dist ? tf_fail_shared : tf_fail;
        if (on_gpu && o->backend == TF_BACKEND_CPU)
            return fail(TF_ERR_ARG, "complete: the run's context is on %s GPUs; the CPU backend was asked for",
                        c->dist ? "its ranks'" : "several");
        if (!on_gpu && o->backend == TF_BACKEND_GPU)
            return fail(TF_ERR_UNAVAILABLE, "complete: this distributed run is on the CPU (its context has no GPU: "
                                            "--device gpu puts one rank on each GPU)");
        *multi = on_gpu;
        return TF_OK;
    }
    const tf_backend asked = o->backend == TF_BACKEND_AUTO && c && c->opts.backend == TF_BACKEND_GPU
                                 ? TF_BACKEND_GPU : o->backend;
    *gpu = tf_choose_backend(c, asked, 1) == TF_BACKEND_GPU;
    return TF_OK;
}

/* The GPU backend (src/gpu/complete) in o's context or a private one
 * (*own, freed by the caller after the backend); under auto a GPU backend
 * that is not there after all (TF_ERR_UNAVAILABLE: a CPU-only module, a
 * rank or order above the GPU's) or a problem the GPU cannot hold
 * (TF_ERR_NOMEM) runs on the CPU, the note saying why. */
static tf_status create_gpu(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                            const tf_complete_opts *o, tf_complete_backend *be, tf_context **own, tf_context **used,
                            char *note, size_t note_len)
{
    tf_complete_opts go = *o;
    *used = NULL;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, own));
    tf_status s = tf_cuda_complete_backend_create(train, val, test, &go, be);
    if (s == TF_OK) {
        *used = go.context;
        return s;
    }
    tf_context_free(*own);
    *own = NULL;
    if (s == TF_ERR_UNAVAILABLE && o->backend == TF_BACKEND_AUTO) {
        tf_cpu_fallback_note(note, note_len);
        return tf_cpu_complete_backend_create(train, val, test, o, be);
    }
    if (!tf_gpu_fallback(s, o->backend, note, note_len)) return s;
    return tf_cpu_complete_backend_create(train, val, test, o, be);
}

/* A held-out set: valid, of train's order, every index inside train's dims. */
static tf_status check_set(const tf_tensor *X, const tf_tensor *train, const char *what)
{
    if (!X) return TF_OK;
    if (X->order != train->order)
        return tf_fail(TF_ERR_ARG, "complete: the %s entries have %u modes, the training entries %u", what, X->order,
                       train->order);
    if (X->nnz && !X->vals) return tf_fail(TF_ERR_ARG, "complete: the %s entries have no values", what);
    for (uint32_t m = 0; m < X->order; ++m) {
        if (X->nnz && !X->ind[m]) return tf_fail(TF_ERR_ARG, "complete: the %s entries lack mode %u", what, m + 1);
        for (uint64_t k = 0; k < X->nnz; ++k)
            if (X->ind[m][k] >= train->dims[m])
                return tf_fail(TF_ERR_ARG, "complete: %s entry %llu has mode-%u index %llu, outside the training "
                                           "tensor's 1..%llu", what, (unsigned long long)k + 1, m + 1,
                               (unsigned long long)X->ind[m][k] + 1, (unsigned long long)train->dims[m]);
    }
    for (uint64_t k = 0; k < X->nnz; ++k)
        if (!isfinite(X->vals[k]))
            return tf_fail(TF_ERR_ARG, "complete: %s entry %llu has the value %g (expected a finite number)", what,
                           (unsigned long long)k + 1, X->vals[k]);
    return TF_OK;
}

static tf_status check_start(const tf_tensor *X, const tf_complete_opts *o)
{
    const tf_ktensor *k = o->init;
    if (!k) return TF_OK;
    if (k->order != X->order)
        return tf_fail(TF_ERR_ARG, "complete: the initial Kruskal tensor has order %u, the tensor %u", k->order,
                       X->order);
    if (k->rank != o->rank)
        return tf_fail(TF_ERR_ARG, "complete: the initial Kruskal tensor has rank %llu, expected %llu",
                       (unsigned long long)k->rank, (unsigned long long)o->rank);
    for (uint32_t m = 0; m < X->order; ++m) {
        const tf_matrix *f = &k->factors[m];
        if (f->rows != X->dims[m] || f->cols != o->rank || !f->data)
            return tf_fail(TF_ERR_ARG, "complete: initial factor %u is %llu x %llu, expected %llu x %llu", m + 1,
                           (unsigned long long)f->rows, (unsigned long long)f->cols, (unsigned long long)X->dims[m],
                           (unsigned long long)o->rank);
        for (uint64_t j = 0; j < f->rows * f->cols; ++j)
            if (!isfinite(f->data[j]))
                return tf_fail(TF_ERR_ARG, "complete: initial factor %u has the value %g at row %llu column %llu",
                               m + 1, f->data[j], (unsigned long long)(j / f->cols) + 1,
                               (unsigned long long)(j % f->cols) + 1);
    }
    if (k->lambda)
        for (uint64_t r = 0; r < o->rank; ++r)
            if (!isfinite(k->lambda[r]))
                return tf_fail(TF_ERR_ARG, "complete: the initial lambda %llu is %g", (unsigned long long)r + 1,
                               k->lambda[r]);
    return TF_OK;
}

/* The GCP engine's options for the Adam method: the Gaussian loss, the
 * samples of the training entries only (GCP's default sizes for 100 epochs
 * where not given; at most every entry), the seed and threads. */
static void gcp_opts_of(const tf_tensor *train, const tf_complete_opts *o, tf_gcp_opts *g)
{
    const uint64_t n = train->nnz;
    tf_gcp_opts_default(g);
    g->loss = TF_GCP_GAUSSIAN;
    g->rank = o->rank;
    g->seed = o->seed;
    g->threads = o->threads;
    uint64_t gs = o->samples, fs = o->fsamples;
    if (!gs) gs = (3 * n + 99) / 100 > 1000 ? (3 * n + 99) / 100 : 1000;
    if (!fs) fs = (n + 99) / 100 > 100000 ? (n + 99) / 100 : 100000;
    g->gnz = gs < n ? gs : n;
    g->fnz = fs < n ? fs : n;
    g->fz = g->gz = 0;
    g->epoch_iters = o->epoch_iters;
}

/* The checks of the inputs (every rank holds them all, so on ranks a
 * failure is every rank's alike). */
static tf_status check_inputs(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                              const tf_complete_opts *o)
{
    TF_TRY(tf_tensor_validate(train));
    if (!train->nnz) return tf_fail(TF_ERR_ARG, "complete: the training tensor has no entries");
    for (uint32_t m = 0; m < train->order; ++m)
        if (train->dims[m] > UINT32_MAX)
            return tf_fail(TF_ERR_ARG, "complete: mode %u has %llu rows (at most 2^32 - 1)", m + 1,
                           (unsigned long long)train->dims[m]);
    TF_TRY(check_set(val, train, "validation"));
    TF_TRY(check_set(test, train, "test"));
    return check_start(train, o);
}

/* One rank's backend: every mode's rows cut over the ranks by training
 * entries (contiguous ranges: the rows keep their labels; the partitioner
 * of every distributed run), this rank's shard of each mode. */
static tf_status create_dist(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                             const tf_complete_opts *o, const tf_dist *d, tf_partition *pt, tf_complete_backend *be)
{
    TF_TRY(tf_partition_make(pt, train, d->size, TF_PARTITION_CONTIGUOUS, NULL));
    tf_tensor shard[TF_MAX_ORDER];
    memset(shard, 0, sizeof shard);
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < train->order && s == TF_OK; ++m) s = tf_partition_shard(train, pt, m, d->rank, &shard[m]);
    if (s == TF_OK)
        return tf_cpu_complete_backend_create_dist(train, val, test, o, shard, (const uint64_t *const *)pt->row_lo, d,
                                                   be);
    for (uint32_t m = 0; m < train->order; ++m) tf_tensor_free(&shard[m]);
    return s;
}

/* Several GPUs of this process (the context's devices), or this rank's
 * GPU of a run on GPU ranks: every mode's rows cut over the GPUs by
 * training entries (contiguous ranges, as the CPU's ranks), the shards
 * built on the GPUs by the module (src/gpu/complete/multi.cu), one mode at
 * a time. */
static tf_status create_multi(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                              const tf_complete_opts *o, tf_partition *pt, tf_complete_backend *be)
{
    const tf_context *c = o->context;
    const tf_dist *d = c->dist;
    TF_TRY(tf_partition_make(pt, train, d ? d->size : c->opts.ndevices, TF_PARTITION_CONTIGUOUS, NULL));
    tf_partition_shards set;
    tf_shards sh;
    tf_status s = d ? tf_partition_shards_make(&set, train, pt, d->rank, 1, 0, d, 0, &sh)
                    : tf_partition_shards_make(&set, train, pt, 0, c->opts.ndevices, 0, NULL, 0, &sh);
    if (s != TF_OK) return s;
    s = tf_cuda_complete_backend_create_multi(train, val, test, o, &sh, be);
    tf_partition_shards_free(&set);
    return s;
}

/* Adam's GCP engine in observed-only mode beside the completion backend,
 * on the same devices: the several GPUs or GPU ranks (multi), one GPU in
 * the context gpu_ctx (under auto, one it cannot hold or lacks runs on
 * the CPU, the note saying why), the CPU's ranks (dist), else the CPU. */
static tf_status create_adam(const tf_tensor *train, const tf_complete_opts *o, const tf_dist *dist, int multi,
                             tf_context *gpu_ctx, tf_gcp_backend *gb, char *note, size_t note_len)
{
    tf_gcp_opts go;
    gcp_opts_of(train, o, &go);
    go.device = o->device;
    if (multi) {
        go.context = o->context;
        return tf_cuda_gcp_backend_create_observed(train, &go, o->l2, 1, dist, gb);
    }
    if (gpu_ctx) {
        go.context = gpu_ctx;
        const tf_status s = tf_cuda_gcp_backend_create_observed(train, &go, o->l2, 0, NULL, gb);
        if (s == TF_OK || !tf_gpu_fallback(s, o->backend, note, note_len)) return s;
        go.context = o->context;
        return tf_cpu_gcp_backend_create_observed(train, &go, o->l2, NULL, gb);
    }
    if (dist) {
        const tf_gcp_ranks ranks = {dist, train->nnz, 0, NULL};
        return tf_cpu_gcp_backend_create_observed(train, &go, o->l2, &ranks, gb);
    }
    return tf_cpu_gcp_backend_create_observed(train, &go, o->l2, NULL, gb);
}

static tf_status run(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test, const tf_complete_opts *o,
                     tf_ktensor *out, tf_complete_report *rep)
{
    const tf_dist *dist = NULL;
    int gpu = 0, multi = 0;
    TF_TRY(choose(o, rep, &dist, &gpu, &multi));
    tf_status s = check_inputs(train, val, test, o);
    if (s != TF_OK && dist) { /* every rank found it alike: rank 0 says it */
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tf_last_error());
        return tf_fail_shared(s, "%s", msg);
    }
    if (s != TF_OK) return s;
    if (val && !val->nnz) val = NULL;
    if (test && !test->nnz) test = NULL;
    tf_complete_backend be;
    tf_context *own = NULL;    /* the GPU's private context, when o has none */
    tf_context *gpu_ctx = NULL; /* one GPU's: the context its backend runs in */
    tf_partition pt;
    memset(&pt, 0, sizeof pt);
    const double t = tf_wtime();
    s = multi ? create_multi(train, val, test, o, &pt, &be)
        : dist  ? create_dist(train, val, test, o, dist, &pt, &be)
        : gpu   ? create_gpu(train, val, test, o, &be, &own, &gpu_ctx, rep->note, sizeof rep->note)
                : tf_cpu_complete_backend_create(train, val, test, o, &be);
    if (s == TF_OK && o->method == TF_COMPLETE_ADAM) {
        tf_gcp_backend gb;
        s = create_adam(train, o, dist, multi, gpu_ctx, &gb, rep->note, sizeof rep->note);
        rep->t_build = tf_wtime() - t;
        if (s == TF_OK) {
            snprintf(rep->plan, sizeof rep->plan, "Adam: %.88s", gb.plan_desc);
            s = tf_complete_adam_run(&gb, &be, train, val ? val->nnz : 0, test ? test->nnz : 0, o, out, rep);
            gb.ops->destroy(gb.ctx);
        }
        be.ops->destroy(be.ctx);
        tf_context_free(own);
        tf_partition_free(&pt);
        return s;
    }
    if (s != TF_OK) {
        tf_partition_free(&pt);
        return s;
    }
    rep->t_build = tf_wtime() - t;
    snprintf(rep->plan, sizeof rep->plan, "%s", be.plan_desc);
    s = tf_complete_run(&be, train, val ? val->nnz : 0, test ? test->nnz : 0, o, out, rep);
    be.ops->destroy(be.ctx);
    tf_context_free(own);
    tf_partition_free(&pt);
    return s;
}

tf_status tf_complete(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test, const tf_complete_opts *o,
                      tf_ktensor *out, tf_complete_report *rep)
{
    const double t_start = tf_wtime();
    tf_complete_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    rep->train_rmse = rep->val_rmse = rep->test_rmse = rep->objective = NAN;
    if (out) memset(out, 0, sizeof *out);
    TF_ARG_NOT_NULL("tf_complete", train);
    TF_ARG_NOT_NULL("tf_complete", out);
    tf_complete_opts ro;
    TF_TRY(resolve_opts(o, &ro));
    const tf_status s = run(train, val, test, &ro, out, rep);
    if (s != TF_OK || rep == &local) tf_complete_report_free(rep);
    rep->t_total = tf_wtime() - t_start;
    return s;
}

/* K's shape and finiteness, and C's indices inside K's dims. */
static tf_status check_model_at(const char *fn, const tf_tensor *C, const tf_ktensor *K)
{
    TF_ARG_NOT_NULL(fn, C);
    TF_ARG_NOT_NULL(fn, K);
    if (C->order != K->order)
        return tf_fail(TF_ERR_ARG, "%s: the coordinates have %u modes, the model %u", fn, C->order, K->order);
    if (K->rank < 1) return tf_fail(TF_ERR_ARG, "%s: the model has rank 0", fn);
    for (uint32_t m = 0; m < K->order; ++m) {
        if (K->factors[m].rows != K->dims[m] || K->factors[m].cols != K->rank || !K->factors[m].data)
            return tf_fail(TF_ERR_ARG, "%s: factor %u is %llu x %llu, expected %llu x %llu", fn, m + 1,
                           (unsigned long long)K->factors[m].rows, (unsigned long long)K->factors[m].cols,
                           (unsigned long long)K->dims[m], (unsigned long long)K->rank);
        if (C->nnz && !C->ind[m]) return tf_fail(TF_ERR_ARG, "%s: the coordinates lack mode %u", fn, m + 1);
        for (uint64_t k = 0; k < C->nnz; ++k)
            if (C->ind[m][k] >= K->dims[m])
                return tf_fail(TF_ERR_ARG, "%s: entry %llu has mode-%u index %llu, outside the model's 1..%llu", fn,
                               (unsigned long long)k + 1, m + 1, (unsigned long long)C->ind[m][k] + 1,
                               (unsigned long long)K->dims[m]);
    }
    return TF_OK;
}

tf_status tf_complete_rmse(const tf_tensor *X, const tf_ktensor *K, int threads, double *rmse)
{
    TF_TRY(check_model_at("tf_complete_rmse", X, K));
    TF_ARG_NOT_NULL("tf_complete_rmse", rmse);
    if (threads < 0) return tf_fail(TF_ERR_ARG, "tf_complete_rmse: threads %d is negative", threads);
    if (X->nnz && !X->vals) return tf_fail(TF_ERR_ARG, "tf_complete_rmse: X has no values");
    if (!X->nnz) {
        *rmse = NAN;
        return TF_OK;
    }
    double sse = 0.0;
    TF_TRY(tf_cpu_model_sse(X, K, threads, &sse));
    *rmse = sqrt(sse / (double)X->nnz);
    return TF_OK;
}

tf_status tf_complete_predict(const tf_tensor *C, const tf_ktensor *K, int threads, double *out)
{
    TF_TRY(check_model_at("tf_complete_predict", C, K));
    if (C->nnz) TF_ARG_NOT_NULL("tf_complete_predict", out);
    if (threads < 0) return tf_fail(TF_ERR_ARG, "tf_complete_predict: threads %d is negative", threads);
    if (!C->nnz) return TF_OK;
    /* the pass reads values for its dot product: give it zeros when C has none */
    tf_tensor view = *C;
    double *zeros = NULL;
    if (!view.vals) {
        TF_TRY(TF_ALLOC(zeros, C->nnz, "prediction values"));
        memset(zeros, 0, C->nnz * sizeof *zeros);
        view.vals = zeros;
    }
    const tf_status s = tf_cpu_model_values(&view, K, threads, out, NULL);
    tf_free(zeros);
    return s;
}
