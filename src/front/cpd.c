/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_cpd, the front end of CP-ALS: checks the options, brings values of
 * any magnitude into range (a power-of-two scaled view), picks and creates
 * the backend (CPU, or the GPU of the run's context), then runs the
 * algorithm (algo/cp_als.c) on it. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "algo/checkpoint.h"
#include "algo/cp_als.h"
#include "algo/cp_ends.h"
#include "seams/dist.h"
#include "seams/plan.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "core/rng.h"
#include "front/auto_backend.h"
#include "front/device_choice.h"
#include "front/partition.h"

void tf_cpd_opts_default(tf_cpd_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->rank = 10;
    o->max_iters = 50;
    o->tol = 1e-5;
    o->seed = TF_DEFAULT_SEED;
    o->backend = TF_BACKEND_AUTO;
    o->format = TF_FORMAT_AUTO;
    o->precision = TF_DOUBLE;
}

void tf_cpd_update_default(tf_cpd_update *u)
{
    if (!u) return;
    memset(u, 0, sizeof *u);
    u->size = (uint32_t)sizeof *u;
    u->kind = TF_CPD_UPDATE_ALS;
    u->max_inner = 25;
    u->inner_tol = 1e-2;
    u->hals_max_inner = 5;
    u->hals_tol = 1e-8;
}

/* The size of tf_cpd_update's first layout (fields are appended after mode[]). */
#define UPDATE_SIZE_FIRST (offsetof(tf_cpd_update, mode) + sizeof(((tf_cpd_update *)0)->mode))

/* *out <- the caller's update (NULL: ALS) over the defaults -- the `size`
 * bytes its header knew -- checked against a tensor of `order` modes. */
static tf_status resolve_update(const tf_cpd_update *in, uint32_t order, tf_cpd_update *out)
{
    tf_cpd_update_default(out);
    if (!in) return TF_OK;
    if (in->size < UPDATE_SIZE_FIRST)
        return tf_fail(TF_ERR_ARG, "cpd: tf_cpd_update.size is %u, expected at least %zu (set it up with "
                                   "tf_cpd_update_default)", in->size, (size_t)UPDATE_SIZE_FIRST);
    /* an earlier header's struct keeps our defaults past its end; a later
     * one's fields past ours are not read */
    memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
    out->size = (uint32_t)sizeof *out;
    if (out->kind != TF_CPD_UPDATE_ALS && out->kind != TF_CPD_UPDATE_AO_ADMM && out->kind != TF_CPD_UPDATE_HALS &&
        out->kind != TF_CPD_UPDATE_AUTO)
        return tf_fail(TF_ERR_ARG, "cpd: unknown update kind %d", (int)out->kind);
    if (out->max_inner < 1 || out->max_inner > 100000)
        return tf_fail(TF_ERR_ARG, "cpd: max_inner %u is outside 1..100000", out->max_inner);
    if (!(out->inner_tol >= 0.0 && out->inner_tol < 1.0))
        return tf_fail(TF_ERR_ARG, "cpd: inner_tol %g is outside [0, 1)", out->inner_tol);
    if (out->hals_max_inner < 1 || out->hals_max_inner > 100000)
        return tf_fail(TF_ERR_ARG, "cpd: hals_max_inner %u is outside 1..100000", out->hals_max_inner);
    if (!(out->hals_tol >= 0.0 && out->hals_tol < 1.0))
        return tf_fail(TF_ERR_ARG, "cpd: hals_tol %g is outside [0, 1)", out->hals_tol);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        const tf_cpd_constraint *c = &out->mode[m];
        if (c->nonneg != 0 && c->nonneg != 1)
            return tf_fail(TF_ERR_ARG, "cpd: mode %u: nonneg is %d (expected 0 or 1)", m + 1, c->nonneg);
        if (!(c->l1 >= 0.0) || isinf(c->l1) || !(c->l2 >= 0.0) || isinf(c->l2))
            return tf_fail(TF_ERR_ARG, "cpd: mode %u: l1 %g and l2 %g must be finite numbers >= 0", m + 1, c->l1,
                           c->l2);
        const int set = c->nonneg || c->l1 > 0.0 || c->l2 > 0.0;
        if (set && m >= order)
            return tf_fail(TF_ERR_ARG, "cpd: mode %u has a constraint, but the tensor has %u modes", m + 1, order);
        if (set && out->kind == TF_CPD_UPDATE_ALS)
            return tf_fail(TF_ERR_ARG, "cpd: mode %u has a constraint (nonneg %d, l1 %g, l2 %g), which ALS does not "
                                       "impose: set the update kind TF_CPD_UPDATE_AO_ADMM, _HALS or _AUTO", m + 1,
                           c->nonneg, c->l1, c->l2);
        if (out->kind == TF_CPD_UPDATE_HALS && c->l1 > 0.0 && !c->nonneg)
            return tf_fail(TF_ERR_ARG, "cpd: mode %u has l1 %g without nonneg, which HALS does not impose (it solves "
                                       "modes without nonneg by least squares): use AO-ADMM", m + 1, c->l1);
    }
    return TF_OK;
}

/* TF_CPD_UPDATE_AUTO with non-negativity alone: AO-ADMM at ranks up to
 * HALS_SPARSE_RANK when a mode has fewer than HALS_SPARSE_ROWS non-zeros per
 * row on average, else HALS. */
#define HALS_SPARSE_RANK 16
#define HALS_SPARSE_ROWS 4.0

tf_cpd_update_kind tf_cpd_update_choose(const tf_tensor *X, uint64_t rank, const tf_cpd_update *u,
                                        tf_backend backend, char *why, size_t why_len)
{
    char none[1];
    if (!why || !why_len) why = none, why_len = sizeof none;
    why[0] = '\0';
    if (!u) return TF_CPD_UPDATE_ALS;
    if (u->kind != TF_CPD_UPDATE_AUTO) return u->kind;
    const uint32_t order = X && X->order <= TF_MAX_ORDER ? X->order : TF_MAX_ORDER;
    int nonneg = 0, penalty = 0;
    for (uint32_t m = 0; m < order; ++m) {
        nonneg |= u->mode[m].nonneg != 0;
        penalty |= u->mode[m].l1 > 0.0 || u->mode[m].l2 > 0.0;
    }
    if (penalty) {
        snprintf(why, why_len, "l1 / l2 penalties: AO-ADMM");
        return TF_CPD_UPDATE_AO_ADMM;
    }
    if (!nonneg) {
        snprintf(why, why_len, "no constraint: ALS");
        return TF_CPD_UPDATE_ALS;
    }
    /* the measured rule (bench/RESULTS.md, "Non-negative CP: HALS against
     * AO-ADMM"): HALS reached the higher fit in 60 iterations in 27 of 36
     * runs (2 even) on the shared tensors (ranks 8-32) at 0.12-0.93x
     * AO-ADMM's dense time; AO-ADMM's fits were higher in all 4 runs at rank
     * <= 16 on the tensor whose sparsest mode has 3.1 non-zeros per row
     * (wordnet30), also per second */
    double sparsest = INFINITY;
    uint32_t mode = 0;
    for (uint32_t m = 0; X && m < order; ++m)
        if (X->dims[m] > 0 && (double)X->nnz / (double)X->dims[m] < sparsest)
            sparsest = (double)X->nnz / (double)X->dims[m], mode = m;
    if (backend == TF_BACKEND_GPU) { /* HALS is the CPU's alone (gpu_has_update) */
        snprintf(why, why_len, "non-negativity alone on the GPU: AO-ADMM (HALS runs on the CPU)");
        return TF_CPD_UPDATE_AO_ADMM;
    }
    if (rank <= HALS_SPARSE_RANK && sparsest < HALS_SPARSE_ROWS) {
        snprintf(why, why_len, "non-negativity alone: AO-ADMM (rank %llu <= %d and %.3g non-zeros per row of mode "
                 "%u, < %g)", (unsigned long long)rank, HALS_SPARSE_RANK, sparsest, mode + 1, HALS_SPARSE_ROWS);
        return TF_CPD_UPDATE_AO_ADMM;
    }
    if (isfinite(sparsest))
        snprintf(why, why_len, "non-negativity alone: HALS (rank %llu, %.3g non-zeros per row of mode %u)",
                 (unsigned long long)rank, sparsest, mode + 1);
    else
        snprintf(why, why_len, "non-negativity alone: HALS");
    return TF_CPD_UPDATE_HALS;
}

static tf_status check_opts(const tf_cpd_opts *o)
{
    if (o->rank < 1 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "cpd: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    if (o->max_iters < 1) return tf_fail(TF_ERR_ARG, "cpd: max_iters is 0 (expected at least 1)");
    if (!(o->tol >= 0.0) || isinf(o->tol))
        return tf_fail(TF_ERR_ARG, "cpd: tolerance %g is not a finite number >= 0", o->tol);
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "cpd: threads %d is negative", o->threads);
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "cpd: unknown backend %d", (int)o->backend);
    if (o->start != TF_START_RANDOM && o->start != TF_START_NVECS)
        return tf_fail(TF_ERR_ARG, "cpd: unknown start %d", (int)o->start);
    if ((unsigned)o->format > TF_FORMAT_CSF_SHORT)
        return tf_fail(TF_ERR_ARG, "cpd: unknown format %d", (int)o->format);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "cpd: unknown precision %d", (int)o->precision);
    return TF_OK;
}

/* The given start fits X and the rank, and is finite. */
static tf_status check_init(const tf_tensor *X, const tf_cpd_opts *o)
{
    const tf_ktensor *k = o->init;
    if (!k) return TF_OK;
    if (k->order != X->order)
        return tf_fail(TF_ERR_ARG, "cpd: the initial Kruskal tensor has order %u, the tensor %u", k->order,
                       X->order);
    if (k->rank != o->rank)
        return tf_fail(TF_ERR_ARG, "cpd: the initial Kruskal tensor has rank %llu, the run %llu",
                       (unsigned long long)k->rank, (unsigned long long)o->rank);
    for (uint32_t m = 0; m < X->order; ++m) {
        const tf_matrix *f = &k->factors[m];
        if (!f->data && f->rows && f->cols)
            return tf_fail(TF_ERR_ARG, "cpd: initial factor %u has no data (NULL)", m + 1);
        if (f->rows != X->dims[m] || f->cols != o->rank || !f->data || k->dims[m] != X->dims[m])
            return tf_fail(TF_ERR_ARG, "cpd: initial factor %u is %llu x %llu, expected %llu x %llu (mode %u's "
                           "length x the rank)", m + 1, (unsigned long long)f->rows,
                           (unsigned long long)f->cols, (unsigned long long)X->dims[m],
                           (unsigned long long)o->rank, m + 1);
        for (uint64_t e = 0; e < f->rows * f->cols; ++e)
            if (!isfinite(f->data[e]))
                return tf_fail(TF_ERR_ARG, "cpd: initial factor %u has a non-finite value at row %llu, column %llu",
                               m + 1, (unsigned long long)(e / f->cols + 1), (unsigned long long)(e % f->cols + 1));
    }
    for (uint64_t r = 0; k->lambda && r < k->rank; ++r)
        if (!isfinite(k->lambda[r]))
            return tf_fail(TF_ERR_ARG, "cpd: initial lambda %llu is not finite", (unsigned long long)r + 1);
    return TF_OK;
}

/* What a backend borrows and the front end frees after it: a private
 * context (GPU without one in the options) or the CPU's MTTKRP plan. */
typedef struct backend_hold {
    tf_context *own;
    tf_plan *plan;
    tf_plan *shard[TF_MAX_ORDER];     /* distributed: this rank's plan per mode */
    tf_partition part;                /* several GPUs or ranks: their rows      */
} backend_hold;

static void hold_free(backend_hold *h)
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_plan_free(h->shard[m]);
        h->shard[m] = NULL;
    }
    tf_partition_free(&h->part);
    tf_plan_free(h->plan);
    tf_context_free(h->own); /* after everything on its device is gone */
    h->plan = NULL;
    h->own = NULL;
}

/* The update kinds the GPU backends have (src/gpu/cpd: op_update); a new
 * kind on the GPU is added here. */
static int gpu_has_update(const tf_cpd_update *u)
{
    return u->kind == TF_CPD_UPDATE_ALS || u->kind == TF_CPD_UPDATE_AO_ADMM;
}

static tf_status create_gpu_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                    backend_hold *h)
{
    tf_cpd_opts go = *o;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, &h->own));
    tf_status s = tf_cuda_cpd_backend_create(X, &go, be);
    if (s != TF_OK) hold_free(h);
    return s;
}

static tf_status create_cpu_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                    backend_hold *h)
{
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.backend = TF_BACKEND_CPU;
    po.format = o->format;
    po.precision = o->precision;
    po.threads = o->threads;
    po.rank_hint = o->rank;
    TF_TRY(tf_plan_build(X, &po, &h->plan));
    tf_status s = tf_cpu_cpd_backend_create(X, o, h->plan, be);
    if (s != TF_OK) hold_free(h);
    return s;
}

/* One rank of a distributed run: for every mode, the ranks' rows balanced
 * by non-zeros (src/front/partition.c) and a CPU plan of this rank's shard. */
static tf_status create_dist_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                     backend_hold *h)
{
    const tf_dist *d = o->context->dist;
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.backend = TF_BACKEND_CPU;
    po.format = o->format == TF_FORMAT_COO || o->format == TF_FORMAT_CSF_SHORT ? o->format : TF_FORMAT_AUTO;
    po.threads = o->threads;
    po.rank_hint = o->rank;
    const double t0 = tf_wtime();
    tf_status s = tf_partition_make(&h->part, X, d->size, (int)o->context->tuning.partition,
                                    o->distributed_input ? d : NULL);
    double t_part = tf_wtime() - t0, t_shard = 0, t_plan = 0;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        tf_tensor part;
        memset(&part, 0, sizeof part);
        /* this rank's rows of mode m, from its copy of X or gathered from
         * the ranks' parts, the mode's index shifted down to them: the
         * plan's tree and output span its rows, not the mode's */
        const double a = tf_wtime();
        s = o->distributed_input ? tf_partition_exchange(X, &h->part, m, d, 1, &part)
                                 : tf_partition_split(X, &h->part, 1, m, 0, d->rank, 1, &part);
        const double b = tf_wtime();
        if (s == TF_OK) s = tf_plan_build_mode(&part, &po, m, &h->shard[m]); /* only ever run along m */
        t_shard += b - a;
        t_plan += tf_wtime() - b;
        tf_tensor_free(&part);
    }
    if (o->context->tuning.build_report) /* TF_BUILD_REPORT=1 */
        fprintf(stderr, "BUILD-PHASES cpd-ranks rank=%d total_ms=%.2f partition=%.2f shards=%.2f plans=%.2f\n",
                d->rank, 1e3 * (tf_wtime() - t0), 1e3 * t_part, 1e3 * t_shard, 1e3 * t_plan);
    if (s == TF_OK)
        s = tf_cpu_cpd_backend_create_dist(X, o, h->shard, (const uint64_t *const *)h->part.row_lo, d, be);
    if (s != TF_OK) hold_free(h);
    return s;
}

/* Several GPUs of this process (the context's devices), or this rank's GPU
 * of a distributed run: shards per mode built on the GPUs by the module. */
static tf_status create_multi_gpu_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                          backend_hold *h)
{
    const tf_context *c = o->context;
    const tf_dist *d = c->dist;
    if (!gpu_has_update(o->update)) /* before the shards are cut (the backend refuses it too) */
        return tf_cpd_update_unavailable(o->update, d ? "GPUs of MPI ranks" : "several GPUs");
    if (o->format != TF_FORMAT_AUTO && o->format != TF_FORMAT_FCOO)
        return tf_fail(TF_ERR_UNAVAILABLE, "cpd: several GPUs run F-COO shards (format fcoo or auto, not %s)",
                       tf_format_name(o->format));
    tf_partition_shards set;
    tf_shards sh;
    /* split in two per mode where the exchange overlaps the next MTTKRP
     * (multi.cu: R <= 32 on the one-block solve path; ALS's fused sweep
     * alone, so not for other updates) */
    const int pairs = o->update->kind == TF_CPD_UPDATE_ALS && c->tuning.cpd_overlap && o->rank <= 32 &&
                      !c->tuning.cpd_cusolver;
    const double t0 = tf_wtime();
    tf_status s = tf_partition_make(&h->part, X, d ? d->size : c->opts.ndevices, (int)c->tuning.partition,
                                    d && o->distributed_input ? d : NULL);
    const double t1 = tf_wtime();
    if (s == TF_OK)
        s = d ? tf_partition_shards_make(&set, X, &h->part, d->rank, 1, pairs, d, o->distributed_input, &sh)
              : tf_partition_shards_make(&set, X, &h->part, 0, c->opts.ndevices, pairs, NULL, 0, &sh);
    const double t2 = tf_wtime();
    if (s == TF_OK) {
        s = tf_cuda_cpd_backend_create_multi(X, o, &sh, be);
        tf_partition_shards_free(&set);
    }
    if (c->tuning.build_report) { /* TF_BUILD_REPORT=1: the host's part of the build beside the GPUs' lines */
        const double t3 = tf_wtime();
        fprintf(stderr, "BUILD-PHASES cpd-several-gpus total_ms=%.2f partition=%.2f shard_lists=%.2f backend=%.2f\n",
                1e3 * (t3 - t0), 1e3 * (t1 - t0), 1e3 * (t2 - t1), 1e3 * (t3 - t2));
    }
    if (s != TF_OK) hold_free(h);
    return s;
}

/* The CPU backend in place of the GPU under auto, with the note saying
 * why (fcoo / blco and fp32 exist on the GPU only). */
static tf_status create_cpu_instead(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                    backend_hold *h, char *note, size_t note_len)
{
    tf_cpd_opts co = *o;
    if (co.format != TF_FORMAT_COO && co.format != TF_FORMAT_CSF_SHORT) co.format = TF_FORMAT_AUTO;
    if (co.precision == TF_SINGLE) {
        co.precision = TF_DOUBLE;
        const size_t n = strlen(note);
        snprintf(note + n, note_len - n, " (in double precision)");
    }
    return create_cpu_backend(X, &co, be, h);
}

/* Iterations the cost rule counts on: the limit when the run cannot stop
 * early (tol 0), else at most 25 (CP-ALS with a tolerance stops after 8-50
 * on the shared tensors; counting 50 sent wordnet30, done in 12, to the
 * GPU, which took 0.3 s longer end to end). */
static uint32_t expected_iters(const tf_cpd_opts *o)
{
    return o->tol > 0.0 && o->max_iters > 25 ? 25 : o->max_iters;
}

/* GPU when asked, or under auto when the context (or, without one, the
 * machine) has a GPU, the format exists there and the problem is not so
 * small that the CPU finishes first (auto_backend.h); falling back to the
 * CPU if the GPU backend is unavailable or cannot hold the problem. */
static tf_status create_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                backend_hold *h, char *note, size_t note_len)
{
    memset(h, 0, sizeof *h);
    const tf_context *c = o->context;
    if (c && (c->dist || c->opts.ndevices > 1)) {
        const int gpu = tf_context_resolve(o->context) == TF_BACKEND_GPU;
        if (gpu && o->backend == TF_BACKEND_CPU)
            return tf_fail(TF_ERR_ARG, "cpd: the run's context is on %s GPUs; the CPU backend was asked for",
                           c->dist ? "its ranks'" : "several");
        if (gpu) return create_multi_gpu_backend(X, o, be, h);
        if (o->backend == TF_BACKEND_GPU || o->precision == TF_SINGLE ||
            o->format == TF_FORMAT_FCOO || o->format == TF_FORMAT_BLCO)
            return tf_fail(TF_ERR_UNAVAILABLE, "cpd: this distributed run is on the CPU, in double precision "
                                               "(its context has no GPU: --device gpu puts one rank on each GPU)");
        return create_dist_backend(X, o, be, h);
    }
    if (o->backend == TF_BACKEND_GPU) return create_gpu_backend(X, o, be, h);
    const int gpu_format = o->format == TF_FORMAT_AUTO || o->format == TF_FORMAT_COO ||
                           o->format == TF_FORMAT_FCOO || o->format == TF_FORMAT_BLCO;
    if (o->backend != TF_BACKEND_AUTO || !gpu_format) return create_cpu_backend(X, o, be, h);
    if (!gpu_has_update(o->update) && !(c && c->opts.backend == TF_BACKEND_GPU)) {
        /* auto picks a backend that has the update (a context made for the
         * GPU goes on to the GPU backend, which refuses it) */
        if (tf_gpu_maybe_present()) {
            char what[96];
            snprintf(note, note_len, "%s runs on the CPU: not on the GPU yet",
                     tf_cpd_update_what(o->update, what, sizeof what));
        }
        return create_cpu_instead(X, o, be, h, note, note_len);
    }
    /* The cost rule comes before anything asks CUDA whether a GPU is there
     * (an unresolved context, or none): a small problem never starts it. */
    const int cost = o->context ? (int)o->context->tuning.auto_cost : 1;
    const int ready = o->context && o->context->gpu;
    if (cost && (o->format == TF_FORMAT_AUTO || o->format == TF_FORMAT_COO) && tf_gpu_maybe_present() &&
        (!o->context || o->context->backend != TF_BACKEND_CPU) &&
        tf_auto_prefers_cpu(X, o->rank, expected_iters(o), tf_resolve_threads(o->threads), ready, note, note_len))
        return create_cpu_instead(X, o, be, h, note, note_len);
    if (tf_choose_backend(o->context, o->backend, 1) == TF_BACKEND_GPU) {
        tf_status s = create_gpu_backend(X, o, be, h);
        if (s == TF_OK) return s;
        if (s == TF_ERR_UNAVAILABLE) { /* no usable GPU backend after all (a CPU-only module) */
            tf_clear_error();
            return create_cpu_backend(X, o, be, h);
        }
        /* a problem the GPU cannot hold runs on the CPU, which says why */
        if (!tf_gpu_fallback(s, o->backend, note, note_len)) return s;
        return create_cpu_instead(X, o, be, h, note, note_len);
    }
    return create_cpu_backend(X, o, be, h);
}

/* Values whose largest magnitude is 2^e with |e| <= SAFE_EXP are used as
 * they are: squares and sums of up to 2^40 of them stay well inside the
 * normal range of a float (2^-126..2^128), so the fp32 GPU path and the fit
 * terms neither under- nor overflow. Others are scaled by 2^-e. */
#define SAFE_EXP 40

/* The exponent e of the largest |value| (0 when all are zero). */
static int max_exponent(const tf_tensor *X, int threads)
{
    double amax = 0.0;
#pragma omp parallel for num_threads(tf_resolve_threads(threads)) reduction(max : amax) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) amax = fmax(amax, fabs(X->vals[k]));
    return amax > 0.0 ? ilogb(amax) : 0;
}

/* *view shares X's index arrays and gets a copy of the values times 2^-e
 * (exact: a power of two; values far below the largest may round to zero). */
static tf_status scaled_view(const tf_tensor *X, int e, int threads, tf_tensor *view, double **vals)
{
    *view = *X;
    TF_TRY(TF_ALLOC(*vals, X->nnz ? X->nnz : 1, "scaled tensor values"));
    double *v = *vals;
#pragma omp parallel for num_threads(tf_resolve_threads(threads)) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) v[k] = ldexp(X->vals[k], -e);
    view->vals = v;
    return TF_OK;
}

/* lambda *= 2^e after the run on the scaled view. */
static tf_status unscale_lambda(tf_ktensor *k, int e)
{
    for (uint64_t r = 0; r < k->rank; ++r) {
        const double l = ldexp(k->lambda[r], e);
        if (!isfinite(l))
            return tf_fail(TF_ERR_RANGE, "cpd: component %llu's weight (%g x 2^%d) exceeds the double "
                                         "range; rescale the values", (unsigned long long)r + 1,
                           k->lambda[r], e);
        k->lambda[r] = l;
    }
    return TF_OK;
}

static tf_status run_in_range(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                         double t_start, tf_ckpt *ck);
static tf_status cpd_from_start(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                                double t_start, tf_ckpt *ck);

/* The ranks when X is this rank's part of the non-zeros, else NULL. */
static const tf_dist *input_parts(const tf_cpd_opts *o)
{
    return o->distributed_input && o->context ? o->context->dist : NULL;
}

/* The nvecs start (TF_START_NVECS): factors 2..N the R leading mode-n
 * vectors (tf_nvecs); factor 1 zero (CP-ALS solves for it first, from the
 * others); a mode shorter than R gets its dims[n] vectors, and the columns
 * past them the values the random start would have there. */
static tf_status nvecs_start(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *k)
{
    TF_TRY(tf_ktensor_alloc(k, X->order, X->dims, o->rank));
    const uint64_t R = o->rank;
    tf_status s = TF_OK;
    tf_nvecs_opts no;
    tf_nvecs_opts_default(&no);
    no.threads = o->threads;
    memset(k->factors[0].data, 0, X->dims[0] * R * sizeof(double));
    for (uint64_t r = 0; r < R; ++r) k->lambda[r] = 1.0;
    for (uint32_t m = 1; m < X->order && s == TF_OK; ++m) {
        const uint64_t I = X->dims[m], r = R < I ? R : I;
        double *a = k->factors[m].data;
        if (r < R) { /* the random start's values of this factor (random_init's stream order) */
            tf_rng rng;
            tf_rng_seed(&rng, o->seed);
            for (uint32_t p = 0; p < m; ++p)
                for (uint64_t e = 0; e < X->dims[p] * R; ++e) (void)tf_rng_uniform(&rng);
            for (uint64_t e = 0; e < I * R; ++e) a[e] = tf_rng_uniform(&rng);
        }
        tf_matrix v;
        s = tf_nvecs(X, m, r, &no, &v, NULL, NULL);
        if (s != TF_OK) break;
        for (uint64_t i = 0; i < I; ++i) memcpy(a + i * R, v.data + i * r, r * sizeof(double));
        tf_matrix_free(&v);
        if (o->update->mode[m].nonneg) /* a non-negative mode starts from |vectors| (tensorly's non_negative init) */
            for (uint64_t e = 0; e < I * R; ++e) a[e] = fabs(a[e]);
    }
    if (s != TF_OK) tf_ktensor_free(k);
    return s;
}

static tf_status cpd_resolved(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                              double t_start, tf_ckpt *ck);
static tf_status cpd_checkpointed(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                                  double t_start);

tf_status tf_cpd(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep)
{
    const double t_start = tf_wtime();
    tf_cpd_opts defaults;
    if (!o) { tf_cpd_opts_default(&defaults); o = &defaults; }
    /* from here on o->update is the resolved update (never NULL), AUTO
     * replaced by the kind it chose */
    tf_cpd_update update;
    tf_cpd_opts ro = *o;
    ro.update = &update;
    const tf_status su = resolve_update(o->update, X && X->order <= TF_MAX_ORDER ? X->order : TF_MAX_ORDER, &update);
    if (su != TF_OK) {
        if (rep) memset(rep, 0, sizeof *rep);
        if (out) memset(out, 0, sizeof *out);
        return su;
    }
    char why[sizeof rep->update_note] = "";
    if (update.kind == TF_CPD_UPDATE_AUTO) {
        /* ranks holding parts of X choose from the whole tensor's count, alike */
        tf_tensor whole;
        const tf_tensor *Xc = X;
        if (X && o->distributed_input && o->context && o->context->dist) {
            double nnz = (double)X->nnz;
            const tf_status sa = o->context->dist->allreduce_sum(&nnz, 1);
            if (sa != TF_OK) {
                if (rep) memset(rep, 0, sizeof *rep);
                if (out) memset(out, 0, sizeof *out);
                return sa;
            }
            whole = *X;
            whole.nnz = (uint64_t)nnz;
            Xc = &whole;
        }
        const tf_backend asked = o->backend != TF_BACKEND_AUTO ? o->backend
                                 : o->context && o->context->opts.backend == TF_BACKEND_GPU ? TF_BACKEND_GPU
                                                                                            : TF_BACKEND_AUTO;
        update.kind = tf_cpd_update_choose(Xc, o->rank, &update, asked, why, sizeof why);
    }
    tf_cpd_report local;
    if (!rep) rep = &local;
    const tf_status s = ro.checkpoint ? cpd_checkpointed(X, &ro, out, rep, t_start)
                                      : cpd_resolved(X, &ro, out, rep, t_start, NULL);
    rep->update_kind = update.kind;
    snprintf(rep->update_note, sizeof rep->update_note, "%s", why);
    return s;
}

/* The options line of a checkpoint: what the trajectory depends on beyond
 * the tensor and the rank (the update and its constraints, the precision). */
static void ckpt_options(const tf_cpd_opts *o, uint32_t order, char *buf, size_t len)
{
    const tf_cpd_update *u = o->update;
    size_t at = (size_t)snprintf(buf, len, "precision %s", o->precision == TF_SINGLE ? "single" : "double");
    if (u->kind == TF_CPD_UPDATE_AO_ADMM)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, " max_inner %u inner_tol %.17g", u->max_inner,
                               u->inner_tol);
    if (u->kind == TF_CPD_UPDATE_HALS)
        at += (size_t)snprintf(buf + at, at < len ? len - at : 0, " hals_max_inner %u hals_tol %.17g",
                               u->hals_max_inner, u->hals_tol);
    for (uint32_t m = 0; u->kind != TF_CPD_UPDATE_ALS && m < order && at < len; ++m)
        at += (size_t)snprintf(buf + at, len - at, " mode%u %s,l1=%.17g,l2=%.17g", m + 1,
                               u->mode[m].nonneg ? "nonneg" : "free", u->mode[m].l1, u->mode[m].l2);
}

/* tf_cpd with o->checkpoint: the checkpoint's model as the start of a
 * resumed run, the state (ck) down to the loop. */
static tf_status cpd_checkpointed(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                                  double t_start)
{
    if (rep) memset(rep, 0, sizeof *rep);
    if (out) memset(out, 0, sizeof *out);
    if (!X || !out) return cpd_resolved(X, o, out, rep, t_start, NULL); /* its messages */
    TF_TRY(check_opts(o));
    TF_TRY(tf_tensor_validate(X));
    const char *method = o->update->kind == TF_CPD_UPDATE_AO_ADMM ? "ao-admm"
                         : o->update->kind == TF_CPD_UPDATE_HALS  ? "hals"
                                                                  : "cp-als";
    char opt[1024];
    ckpt_options(o, X->order, opt, sizeof opt);
    tf_ckpt ck;
    int on = 0;
    const tf_dist *dist = o->context ? o->context->dist : NULL;
    TF_TRY(tf_ckpt_begin(&ck, o->checkpoint, method, X, input_parts(o), dist, &o->rank, 1, opt, &on));
    if (!on) return cpd_resolved(X, o, out, rep, t_start, NULL);
    tf_ktensor loaded;
    memset(&loaded, 0, sizeof loaded);
    tf_status s = tf_ckpt_load(&ck, &loaded, NULL, NULL);
    tf_cpd_opts so = *o;
    if (s == TF_OK && ck.done) so.init = &loaded; /* in the caller's labels and scale, as written */
    if (s == TF_OK) s = cpd_resolved(X, &so, out, rep, t_start, &ck);
    tf_ktensor_free(&loaded);
    tf_ckpt_free(&ck);
    return s;
}

static tf_status cpd_resolved(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                              double t_start, tf_ckpt *ck)
{
    if (o->init || o->start != TF_START_NVECS || !X || !out) return cpd_from_start(X, o, out, rep, t_start, ck);
    if (rep) memset(rep, 0, sizeof *rep);
    memset(out, 0, sizeof *out);
    TF_TRY(check_opts(o));
    TF_TRY(tf_tensor_validate(X));
    if (o->distributed_input)
        return tf_fail(TF_ERR_UNAVAILABLE, "cpd: the nvecs start is not available on MPI ranks yet (each rank "
                                           "holds only its part of the tensor); use the random start");
    tf_ktensor start;
    TF_TRY(nvecs_start(X, o, &start));
    const double t_init = tf_wtime() - t_start;
    tf_cpd_opts so = *o;
    so.init = &start;
    tf_status s = cpd_from_start(X, &so, out, rep, t_start, ck);
    if (rep) rep->t_init = t_init;
    tf_ktensor_free(&start);
    return s;
}

static tf_status cpd_from_start(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                                double t_start, tf_ckpt *ck)
{
    tf_cpd_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    if (out) memset(out, 0, sizeof *out);
    if (!X) return tf_fail(TF_ERR_ARG, "tf_cpd: X is NULL");
    if (!out) return tf_fail(TF_ERR_ARG, "tf_cpd: out is NULL");
    TF_TRY(check_opts(o));
    TF_TRY(tf_tensor_validate(X));
    TF_TRY(check_init(X, o));
    const tf_dist *parts = input_parts(o);
    if (o->distributed_input && !parts)
        return tf_fail(TF_ERR_ARG, "cpd: distributed_input needs a distributed context (MPI ranks)");
    int e = max_exponent(X, o->threads);
    if (parts) { /* the same scale on every rank: the largest exponent of any part */
        double v = X->nnz ? (double)e : -1e9;
        TF_TRY(parts->allreduce_max(&v, 1));
        e = v > -1e8 ? (int)v : 0;
    }
    if (e >= -SAFE_EXP && e <= SAFE_EXP) return run_in_range(X, o, out, rep, t_start, ck);
    if (ck) ck->lambda_exp = e; /* checkpoints in the caller's scale */
    /* CP-ALS is scale-equivariant: run on X 2^-e, then lambda *= 2^e. The
     * GPU backend gets the same view, so fp32 never sees the raw values; a
     * given start is the model of X, so its lambda is scaled the same way. */
    tf_tensor view;
    double *vals = NULL, *lambda = NULL;
    tf_ktensor start;
    tf_cpd_opts so = *o;
    /* the l1 penalty scales with the values (the squared error with their
     * squares, the factor being updated with them), l2 stays: the problem
     * on X 2^-e is the one asked */
    tf_cpd_update scaled = *o->update;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) scaled.mode[m].l1 = ldexp(scaled.mode[m].l1, -e);
    so.update = &scaled;
    if (o->init) {
        TF_TRY(TF_ALLOC(lambda, o->rank, "scaled initial lambda"));
        for (uint64_t r = 0; r < o->rank; ++r) lambda[r] = ldexp(o->init->lambda ? o->init->lambda[r] : 1.0, -e);
        start = *o->init;
        start.lambda = lambda;
        so.init = &start;
    }
    tf_status s = scaled_view(X, e, o->threads, &view, &vals);
    if (s == TF_OK) s = run_in_range(&view, &so, out, rep, t_start, ck);
    tf_free(vals);
    tf_free(lambda);
    if (s == TF_OK) s = unscale_lambda(out, e);
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}

/* Frees what relabeled_start made (o the options it was given). */
static void start_free(tf_ktensor *k, const tf_cpd_opts *o, const tf_partition *pt)
{
    if (!o->init) {
        tf_ktensor_free(k);
        return;
    }
    for (uint32_t m = 0; m < k->order; ++m)
        if (pt->relabel[m]) tf_matrix_free(&k->factors[m]);
    memset(k, 0, sizeof *k);
}

/* The start in the run's labels where the partition relabeled a mode
 * (partition.h): a given one with its relabeled factors mapped (the others
 * borrowed), or the random start drawn in the caller's labels
 * (src/algo/cp_als.c's stream: mode, row, column) into the run's -- so the
 * run is the one the caller would get without relabeling. Free with
 * start_free. (A copy of the start beside tf_als_run's: set-up memory the
 * relabeled modes cost, or every factor's for the random start.) */
static tf_status relabeled_start(const tf_tensor *X, const tf_cpd_opts *o, const tf_partition *pt, tf_ktensor *k)
{
    const uint64_t R = o->rank;
    if (o->init) {
        *k = *o->init;
        for (uint32_t m = 0; m < X->order; ++m) /* none borrowed where one is made */
            if (pt->relabel[m]) memset(&k->factors[m], 0, sizeof k->factors[m]);
        for (uint32_t m = 0; m < X->order; ++m) {
            if (!pt->relabel[m]) continue;
            tf_status s = tf_matrix_alloc(&k->factors[m], X->dims[m], R);
            if (s != TF_OK) {
                start_free(k, o, pt);
                return s;
            }
            tf_partition_rows_in(pt->relabel[m], X->dims[m], R, o->init->factors[m].data, k->factors[m].data);
        }
        return TF_OK;
    }
    /* drawn in the caller's labels in parallel (tf_cp_start_random), then
     * each relabeled factor's rows moved to the run's labels */
    TF_TRY(tf_ktensor_alloc(k, X->order, X->dims, R));
    tf_cp_start_random(k, o->seed);
    for (uint32_t m = 0; m < X->order; ++m) {
        if (!pt->relabel[m]) continue;
        tf_matrix t;
        const tf_status s = tf_matrix_alloc(&t, X->dims[m], R);
        if (s != TF_OK) {
            tf_ktensor_free(k);
            return s;
        }
        tf_partition_rows_in(pt->relabel[m], X->dims[m], R, k->factors[m].data, t.data);
        tf_matrix_free(&k->factors[m]);
        k->factors[m] = t;
    }
    return TF_OK;
}

/* The result's factors of relabeled modes back in the caller's labels. */
static tf_status result_to_caller(const tf_partition *pt, tf_ktensor *k)
{
    uint64_t most = 0;
    for (uint32_t m = 0; m < k->order; ++m)
        if (pt->relabel[m] && k->dims[m] > most) most = k->dims[m];
    double *tmp = NULL;
    TF_TRY(TF_ALLOC(tmp, most * k->rank, "factor in the caller's row order"));
    for (uint32_t m = 0; m < k->order; ++m) {
        if (!pt->relabel[m]) continue;
        tf_partition_rows_out(pt->relabel[m], k->dims[m], k->rank, k->factors[m].data, tmp);
        memcpy(k->factors[m].data, tmp, k->dims[m] * k->rank * sizeof *tmp);
    }
    tf_free(tmp);
    return TF_OK;
}

/* A checkpoint's model and duals from the run's labels to the caller's (u:
 * the run's partition). */
static tf_status ckpt_to_caller(void *u, tf_ktensor *k, tf_matrix *aux)
{
    const tf_partition *pt = u;
    TF_TRY(result_to_caller(pt, k));
    for (uint32_t m = 0; aux && m < k->order; ++m) {
        if (!pt->relabel[m] || !aux[m].rows) continue;
        tf_matrix t;
        TF_TRY(tf_matrix_alloc(&t, aux[m].rows, aux[m].cols));
        tf_partition_rows_out(pt->relabel[m], t.rows, t.cols, aux[m].data, t.data);
        tf_matrix_free(&aux[m]);
        aux[m] = t;
    }
    return TF_OK;
}

/* A resumed run's duals (the caller's labels) in the run's. */
static tf_status ckpt_aux_in(const tf_partition *pt, tf_ckpt *ck, uint32_t order)
{
    for (uint32_t m = 0; m < order; ++m) {
        if (!pt->relabel[m] || !ck->aux[m].rows) continue;
        tf_matrix t;
        TF_TRY(tf_matrix_alloc(&t, ck->aux[m].rows, ck->aux[m].cols));
        tf_partition_rows_in(pt->relabel[m], t.rows, t.cols, ck->aux[m].data, t.data);
        tf_matrix_free(&ck->aux[m]);
        ck->aux[m] = t;
    }
    return TF_OK;
}

/* tf_cpd on values within the safe range. */
static tf_status run_in_range(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                         double t_start, tf_ckpt *ck)
{
    double normx2 = tf_tensor_norm2(X); /* deterministic for any thread count */
    if (input_parts(o)) TF_TRY(input_parts(o)->allreduce_sum(&normx2, 1)); /* summed over the parts */
    if (!(normx2 > 0.0))
        return tf_fail(TF_ERR_ARG, "cpd: the tensor has no non-zero values (||X|| = 0), so there is "
                                   "nothing to decompose");
    if (!isfinite(normx2)) /* not reached: the values are scaled into a safe range */
        return tf_fail(TF_ERR_RANGE, "cpd: ||X||^2 overflows a double; rescale the values");

    tf_cpd_backend be;
    backend_hold hold;
    double t = tf_wtime();
    const uint64_t held = tf_alloc_peak_reset();
    tf_progress_report(o->progress, o->progress_user, TF_STEP_BUILD, 0, 0, 0);
    tf_status sb = create_backend(X, o, &be, &hold, rep->note, sizeof rep->note);
    rep->build_peak_bytes = tf_alloc_peak() - held;
    tf_progress_report(o->progress, o->progress_user, TF_STEP_BUILD, 0, 0, 1);
    TF_TRY(sb);
    rep->t_build = tf_wtime() - t;
    snprintf(rep->plan, sizeof rep->plan, "%s", be.plan_desc);

    if (o->context && (o->context->dist || o->context->opts.ndevices > 1)) {
        rep->parts = o->context->dist ? o->context->dist->size : o->context->opts.ndevices;
        rep->imbalance = hold.part.worst;
        for (uint32_t m = 0; m < X->order; ++m) {
            rep->schedule[m] = hold.part.schedule[m];
            rep->mode_imbalance[m] = hold.part.imbalance[m];
        }
    }
    /* a relabeled run starts from the caller's start in its labels, and its
     * result goes back in the caller's */
    const int relabeled = tf_partition_relabels(&hold.part);
    tf_cpd_opts ro = *o;
    tf_ktensor start;
    memset(&start, 0, sizeof start);
    tf_status s = relabeled ? relabeled_start(X, o, &hold.part, &start) : TF_OK;
    if (relabeled) ro.init = &start;
    if (ck && relabeled) {
        ck->to_caller = ckpt_to_caller;
        ck->u = &hold.part;
        if (s == TF_OK) s = ckpt_aux_in(&hold.part, ck, X->order);
    }
    if (s == TF_OK) s = tf_als_run(&be, X, &ro, normx2, ck, out, rep);
    if (be.ops->report) be.ops->report(be.ctx, rep);
    be.ops->destroy(be.ctx);
    t = tf_wtime();
    if (s == TF_OK && relabeled) s = result_to_caller(&hold.part, out);
    if (relabeled) start_free(&start, o, &hold.part);
    hold_free(&hold);
    if (s == TF_OK) s = tf_als_arrange(out);
    rep->t_finish += tf_wtime() - t;
    if (s != TF_OK) tf_ktensor_free(out);
    rep->t_total = tf_wtime() - t_start;
    return s;
}
