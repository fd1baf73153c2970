/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_cp_apr, the front end of CP-APR: resolves and checks the options, the
 * counts and the start, picks and creates the backend (one GPU, several
 * GPUs or the GPUs of MPI ranks, or the CPU: one process or its MPI
 * ranks), then runs the algorithm
 * (algo/cp_apr.c) on it. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/checkpoint.h"
#include "algo/cp_apr.h"
#include "seams/dist.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "front/auto_backend.h"
#include "front/device_choice.h"
#include "front/partition.h"

void tf_cp_apr_opts_default(tf_cp_apr_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->size = (uint32_t)sizeof *o;
    o->algorithm = TF_CP_APR_MU;
    o->rank = 10;
    o->max_iters = 1000;
    o->max_inner = 10;
    o->stoptol = 1e-4;
    o->kappa = 1e-2;
    o->kappatol = 1e-10;
    o->epsdivzero = 1e-10;
    o->epsactive = 1e-8;
    o->seed = TF_DEFAULT_SEED;
    o->backend = TF_BACKEND_AUTO;
    o->cache_bytes = TF_CP_APR_CACHE_AUTO;
    o->mu0 = 1e-5;
    o->inexact = 1;
}

/* The size of tf_cp_apr_opts's first layout (fields are appended after it). */
#define OPTS_SIZE_FIRST (offsetof(tf_cp_apr_opts, cache_bytes) + sizeof(uint64_t))

/* TF_CP_APR_CACHE_AUTO: a quarter of the physical memory (none where it is not known). */
static uint64_t auto_cache_bytes(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 4 : 0;
}

static tf_status check_param(const char *name, double v, int zero_ok)
{
    if (!(v >= 0.0) || isinf(v) || (!zero_ok && v == 0.0))
        return tf_fail(TF_ERR_ARG, "cpd: CP-APR's %s %g is not a finite number %s 0", name, v, zero_ok ? ">=" : ">");
    return TF_OK;
}

/* *out <- the caller's options (NULL: the defaults) over the defaults --
 * the `size` bytes its header knew -- checked. */
static tf_status resolve_opts(const tf_cp_apr_opts *in, tf_cp_apr_opts *out)
{
    tf_cp_apr_opts_default(out);
    if (!in) return TF_OK;
    if (in->size < OPTS_SIZE_FIRST)
        return tf_fail(TF_ERR_ARG, "cpd: tf_cp_apr_opts.size is %u, expected at least %zu (set it up with "
                                   "tf_cp_apr_opts_default)", in->size, (size_t)OPTS_SIZE_FIRST);
    /* an earlier header's struct keeps our defaults past its end; a later
     * one's fields past ours are not read */
    memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
    out->size = (uint32_t)sizeof *out;
    const tf_cp_apr_opts *o = out;
    if (o->algorithm != TF_CP_APR_MU && o->algorithm != TF_CP_APR_PDNR)
        return tf_fail(TF_ERR_UNAVAILABLE, "cpd: CP-APR algorithm %d is not available (TF_CP_APR_MU and "
                                           "TF_CP_APR_PDNR are)", (int)o->algorithm);
    if (o->rank < 1 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "cpd: rank %llu is outside 1..%u", (unsigned long long)o->rank, TF_MAX_RANK);
    if (o->max_iters < 1) return tf_fail(TF_ERR_ARG, "cpd: max_iters is 0 (expected at least 1)");
    if (o->max_inner < 1 || o->max_inner > 100000)
        return tf_fail(TF_ERR_ARG, "cpd: CP-APR's max_inner %u is outside 1..100000", o->max_inner);
    TF_TRY(check_param("stoptol", o->stoptol, 1));
    TF_TRY(check_param("kappa", o->kappa, 1));
    TF_TRY(check_param("kappatol", o->kappatol, 1));
    TF_TRY(check_param("epsdivzero", o->epsdivzero, 0));
    TF_TRY(check_param("epsactive", o->epsactive, 1));
    TF_TRY(check_param("mu0", o->mu0, 1));
    if (o->inexact != 0 && o->inexact != 1) return tf_fail(TF_ERR_ARG, "cpd: CP-APR's inexact %d is not 0 or 1", o->inexact);
    if (o->algorithm == TF_CP_APR_PDNR && o->checkpoint &&
        ((o->checkpoint->path && *o->checkpoint->path) || (o->checkpoint->resume && *o->checkpoint->resume)))
        return tf_fail(TF_ERR_UNAVAILABLE, "cpd: checkpoints are not available for CP-APR's pdnr yet (mu has them)");
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "cpd: threads %d is negative", o->threads);
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "cpd: unknown backend %d", (int)o->backend);
    if (out->cache_bytes == TF_CP_APR_CACHE_AUTO) out->cache_bytes = auto_cache_bytes();
    return TF_OK;
}

/* The given start fits X and the rank, and is finite and >= 0 (pyttb's
 * checks of a ktensor init). */
static tf_status check_start(const tf_tensor *X, const tf_cp_apr_opts *o)
{
    const tf_ktensor *k = o->init;
    if (!k) return TF_OK;
    if (k->order != X->order)
        return tf_fail(TF_ERR_ARG, "cpd: the initial Kruskal tensor has order %u, the tensor %u", k->order, X->order);
    if (k->rank != o->rank)
        return tf_fail(TF_ERR_ARG, "cpd: the initial Kruskal tensor has rank %llu, the run %llu",
                       (unsigned long long)k->rank, (unsigned long long)o->rank);
    for (uint32_t m = 0; m < X->order; ++m) {
        const tf_matrix *f = &k->factors[m];
        if (f->rows != X->dims[m] || f->cols != o->rank || !f->data || k->dims[m] != X->dims[m])
            return tf_fail(TF_ERR_ARG, "cpd: initial factor %u is %llu x %llu%s, expected %llu x %llu (mode %u's "
                           "length x the rank)", m + 1, (unsigned long long)f->rows, (unsigned long long)f->cols,
                           f->data ? "" : " without data", (unsigned long long)X->dims[m],
                           (unsigned long long)o->rank, m + 1);
        for (uint64_t e = 0; e < f->rows * f->cols; ++e)
            if (!(f->data[e] >= 0.0) || isinf(f->data[e]))
                return tf_fail(TF_ERR_ARG, "cpd: CP-APR's initial factor %u has %g at row %llu, column %llu (its "
                               "entries must be finite and >= 0)", m + 1, f->data[e],
                               (unsigned long long)(e / f->cols + 1), (unsigned long long)(e % f->cols + 1));
    }
    for (uint64_t r = 0; k->lambda && r < k->rank; ++r)
        if (!(k->lambda[r] >= 0.0) || isinf(k->lambda[r]))
            return tf_fail(TF_ERR_ARG, "cpd: CP-APR's initial lambda %llu is %g (expected finite and >= 0)",
                           (unsigned long long)r + 1, k->lambda[r]);
    return TF_OK;
}

/* The first non-zero of X whose value is not a count (an integer >= 0);
 * UINT64_MAX if none. Blocks in parallel, the least position kept. */
static uint64_t first_non_count(const tf_tensor *X, int threads)
{
    enum { BLOCK = 1 << 16 };
    const uint64_t n = X->nnz, nb = (n + BLOCK - 1) / BLOCK;
    const double *v = X->vals;
    uint64_t bad = UINT64_MAX;
    const int nt = tf_team_for_work(threads, nb, 4 * n);
#pragma omp parallel for num_threads(nt) schedule(static) reduction(min : bad) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        const uint64_t lo = (uint64_t)b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        for (uint64_t k = lo; k < hi; ++k)
            if (!(v[k] >= 0.0) || v[k] != floor(v[k])) {
                if (k < bad) bad = k;
                break;
            }
    }
    return bad;
}

/* "the non-zero at (3, 5, 2) (1-based) is -1": the shortest %g that reads
 * back as the value. */
static void describe_non_zero(const tf_tensor *X, uint64_t k, char *buf, size_t len)
{
    size_t at = (size_t)snprintf(buf, len, "the non-zero at (");
    for (uint32_t m = 0; m < X->order && at < len; ++m)
        at += (size_t)snprintf(buf + at, len - at, "%s%llu", m ? ", " : "", (unsigned long long)X->ind[m][k] + 1);
    char num[40];
    for (int prec = 6; prec <= 17; ++prec) {
        snprintf(num, sizeof num, "%.*g", prec, X->vals[k]);
        if (strtod(num, NULL) == X->vals[k]) break;
    }
    if (at < len) snprintf(buf + at, len - at, ") (1-based) is %s", num);
}

/* X's values are counts, on every rank of a distributed input too: the
 * lowest rank holding a bad one words the message, which every rank then
 * fails with (none is left waiting in a later collective). On ranks the
 * failure is shared (tf_fail_shared: every rank has it, rank 0 says it):
 * ranks that hold all of X find the same one. */
static tf_status check_counts(const tf_tensor *X, const tf_cp_apr_opts *o, const tf_dist *parts, int ranks)
{
    char what[512] = "";
    const uint64_t bad = first_non_count(X, o->threads);
    if (bad != UINT64_MAX) describe_non_zero(X, bad, what, sizeof what);
    if (parts) {
        uint64_t holder = bad != UINT64_MAX ? (uint64_t)parts->rank : UINT64_MAX;
        TF_TRY(parts->allreduce_u64(&holder, 1, TF_RANKS_MIN));
        if (holder == UINT64_MAX) return TF_OK;
        TF_TRY(parts->bcast_from(what, sizeof what, (int)holder));
    } else if (bad == UINT64_MAX) {
        return TF_OK;
    }
    return (ranks ? tf_fail_shared : tf_fail)(TF_ERR_ARG, "cpd: CP-APR needs counts (integers >= 0): %s", what);
}

/* Where the run goes: a context of several GPUs, or of MPI ranks on GPUs,
 * to those GPUs (*multi); one of CPU ranks to its ranks (*dist); else this
 * process's one GPU (asked for, or under auto where the context's device
 * -- without a context, the machine -- has one), else its CPU. */
static tf_status choose(const tf_cp_apr_opts *o, int *dist, int *gpu, int *multi)
{
    tf_context *c = o->context;
    const int pdnr = o->algorithm == TF_CP_APR_PDNR;
    *dist = *gpu = *multi = 0;
    if (c && (c->dist || c->opts.ndevices > 1)) {
        const int on_gpu = tf_context_resolve(c) == TF_BACKEND_GPU;
        if (on_gpu && pdnr)
            return (c->dist ? tf_fail_shared : tf_fail)(TF_ERR_UNAVAILABLE, "cpd: pdnr: not available on the GPU yet "
                                                                            "(--device cpu)");
        if (on_gpu && o->backend == TF_BACKEND_CPU)
            return tf_fail(TF_ERR_ARG, "cpd: the run's context is on %s GPUs; the CPU backend was asked for",
                           c->dist ? "its ranks'" : "several");
        if (!on_gpu && o->backend == TF_BACKEND_GPU)
            return tf_fail(TF_ERR_UNAVAILABLE, "cpd: this distributed run is on the CPU (its context has no GPU: "
                                               "--device gpu puts one rank on each GPU)");
        *multi = on_gpu;
        *dist = c->dist != NULL;
        return TF_OK;
    }
    /* a context made for the GPU asks for it as the backend would */
    const tf_backend asked = o->backend == TF_BACKEND_AUTO && c && c->opts.backend == TF_BACKEND_GPU
                                 ? TF_BACKEND_GPU : o->backend;
    if (pdnr && asked == TF_BACKEND_GPU)
        return tf_fail(TF_ERR_UNAVAILABLE, "cpd: pdnr: not available on the GPU yet (--device cpu)");
    *gpu = !pdnr && tf_choose_backend(c, asked, 1) == TF_BACKEND_GPU; /* pdnr: the CPU's (auto too) */
    return TF_OK;
}

/* The GPU backend (src/gpu/apr) in o's context or a private one (*own,
 * freed by the caller after the backend); under auto a problem the GPU
 * cannot hold (TF_ERR_NOMEM), or a GPU backend that is not there after all
 * (TF_ERR_UNAVAILABLE: a CPU-only module, an order above the GPU's), runs
 * on the CPU, the note saying why. */
static tf_status create_gpu(const tf_tensor *X, const tf_cp_apr_opts *o, tf_cp_apr_backend *be, tf_context **own,
                            char *note, size_t note_len)
{
    tf_cp_apr_opts go = *o;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, own));
    tf_status s = tf_cuda_cp_apr_backend_create(X, &go, be);
    if (s == TF_OK) return s;
    tf_context_free(*own);
    *own = NULL;
    if (s == TF_ERR_UNAVAILABLE && o->backend == TF_BACKEND_AUTO) {
        tf_cpu_fallback_note(note, note_len);
        return tf_cpu_cp_apr_backend_create(X, o, be);
    }
    if (!tf_gpu_fallback(s, o->backend, note, note_len)) return s;
    return tf_cpu_cp_apr_backend_create(X, o, be);
}

/* One rank's backend: every mode's rows cut over the ranks by non-zeros
 * (contiguous ranges: the rows keep their labels), this rank's shard of
 * each mode (from its copy of X, or gathered from the ranks' parts). */
static tf_status create_dist(const tf_tensor *X, const tf_cp_apr_opts *o, tf_partition *pt, tf_cp_apr_backend *be)
{
    const tf_dist *d = o->context->dist;
    TF_TRY(tf_partition_make(pt, X, d->size, TF_PARTITION_CONTIGUOUS, o->distributed_input ? d : NULL));
    tf_tensor shard[TF_MAX_ORDER];
    memset(shard, 0, sizeof shard);
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m)
        s = o->distributed_input ? tf_partition_exchange(X, pt, m, d, 0, &shard[m])
                                 : tf_partition_shard(X, pt, m, d->rank, &shard[m]);
    if (s == TF_OK) return tf_cpu_cp_apr_backend_create_dist(X, o, shard, (const uint64_t *const *)pt->row_lo, d, be);
    for (uint32_t m = 0; m < X->order; ++m) tf_tensor_free(&shard[m]);
    return s;
}

/* Several GPUs of this process (the context's devices), or this rank's GPU
 * of a run on GPU ranks: every mode's rows cut over the GPUs by non-zeros
 * (contiguous ranges: the rows keep their labels), the shards built on the
 * GPUs by the module (src/gpu/apr/multi.cu), one mode at a time. */
static tf_status create_multi(const tf_tensor *X, const tf_cp_apr_opts *o, tf_partition *pt, tf_cp_apr_backend *be)
{
    const tf_context *c = o->context;
    const tf_dist *d = c->dist;
    const int input_part = d && o->distributed_input;
    TF_TRY(tf_partition_make(pt, X, d ? d->size : c->opts.ndevices, TF_PARTITION_CONTIGUOUS, input_part ? d : NULL));
    tf_partition_shards set;
    tf_shards sh;
    tf_status s = d ? tf_partition_shards_make(&set, X, pt, d->rank, 1, 0, d, input_part, &sh)
                    : tf_partition_shards_make(&set, X, pt, 0, c->opts.ndevices, 0, NULL, 0, &sh);
    if (s != TF_OK) return s;
    s = tf_cuda_cp_apr_backend_create_multi(X, o, &sh, be);
    tf_partition_shards_free(&set);
    return s;
}

/* The sum of X's values over every part (every rank's when X is a part). */
static tf_status value_sum(const tf_tensor *X, const tf_dist *parts, double *sum)
{
    double s = 0.0;
    for (uint64_t k = 0; k < X->nnz; ++k) s += X->vals[k];
    if (parts) TF_TRY(parts->allreduce_sum(&s, 1));
    *sum = s;
    return TF_OK;
}

/* tf_apr_run with o->checkpoint: the state to write and the one to go on
 * from (the checkpoint's model as the backend held it: no relabeling, no
 * scaling in CP-APR). */
static tf_status checkpointed(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o,
                              const tf_dist *dist, const tf_dist *parts, tf_ktensor *out, tf_cp_apr_report *rep)
{
    char opt[512];
    snprintf(opt, sizeof opt, "max_inner %u stoptol %.17g kappa %.17g kappatol %.17g epsdivzero %.17g", o->max_inner,
             o->stoptol, o->kappa, o->kappatol, o->epsdivzero);
    tf_ckpt ck;
    int on = 0;
    TF_TRY(tf_ckpt_begin(&ck, o->checkpoint, "cp-apr", X, parts, dist, &o->rank, 1, opt, &on));
    if (!on) return tf_apr_run(be, X, o, NULL, NULL, out, rep);
    tf_ktensor loaded;
    memset(&loaded, 0, sizeof loaded);
    tf_status s = tf_ckpt_load(&ck, &loaded, NULL, NULL);
    if (s == TF_OK && ck.done) {
        tf_cp_apr_opts lo = *o;
        lo.init = &loaded;
        s = check_start(X, &lo); /* the shapes and values a start must have */
    }
    if (s == TF_OK) s = tf_apr_run(be, X, o, &ck, ck.done ? &loaded : NULL, out, rep);
    tf_ktensor_free(&loaded);
    tf_ckpt_free(&ck);
    return s;
}

static tf_status run(const tf_tensor *X, const tf_cp_apr_opts *o, tf_ktensor *out, tf_cp_apr_report *rep)
{
    TF_TRY(tf_tensor_validate(X));
    TF_TRY(check_start(X, o));
    int dist = 0, gpu = 0, multi = 0;
    TF_TRY(choose(o, &dist, &gpu, &multi));
    const tf_dist *parts = o->distributed_input && dist ? o->context->dist : NULL;
    if (o->distributed_input && !dist)
        return tf_fail(TF_ERR_ARG, "cpd: distributed_input needs a distributed context (MPI ranks)");
    TF_TRY(check_counts(X, o, parts, dist));
    double total = 0.0;
    TF_TRY(value_sum(X, parts, &total));
    if (!(total > 0.0))
        return (dist ? tf_fail_shared : tf_fail)(TF_ERR_ARG, "cpd: the tensor has no non-zero values, so there is "
                                                             "nothing to decompose");

    if (o->algorithm == TF_CP_APR_PDNR && !dist && o->backend == TF_BACKEND_AUTO && tf_gpu_maybe_present())
        snprintf(rep->note, sizeof rep->note, "CP-APR's pdnr runs on the CPU (the GPU has only mu yet)");
    tf_cp_apr_backend be;
    tf_context *own = NULL; /* the GPU's private context, when o has none */
    tf_partition pt;
    memset(&pt, 0, sizeof pt);
    const double t = tf_wtime();
    const uint64_t held = tf_alloc_peak_reset();
    tf_status s = multi ? create_multi(X, o, &pt, &be)
                  : dist  ? create_dist(X, o, &pt, &be)
                  : gpu   ? create_gpu(X, o, &be, &own, rep->note, sizeof rep->note)
                          : tf_cpu_cp_apr_backend_create(X, o, &be);
    rep->build_peak_bytes = tf_alloc_peak() - held;
    if (s != TF_OK) {
        tf_partition_free(&pt);
        return s;
    }
    rep->t_build = tf_wtime() - t;
    rep->parts = dist ? o->context->dist->size : 0;
    snprintf(rep->plan, sizeof rep->plan, "%s", be.plan_desc);
    s = checkpointed(&be, X, o, dist ? o->context->dist : NULL, parts, out, rep);
    if (be.ops->report) be.ops->report(be.ctx, rep);
    be.ops->destroy(be.ctx);
    tf_context_free(own);
    tf_partition_free(&pt);
    return s;
}

tf_status tf_cp_apr(const tf_tensor *X, const tf_cp_apr_opts *o, tf_ktensor *out, tf_cp_apr_report *rep)
{
    const double t_start = tf_wtime();
    tf_cp_apr_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    if (out) memset(out, 0, sizeof *out);
    if (!X) return tf_fail(TF_ERR_ARG, "tf_cp_apr: X is NULL");
    if (!out) return tf_fail(TF_ERR_ARG, "tf_cp_apr: out is NULL");
    tf_cp_apr_opts ro;
    TF_TRY(resolve_opts(o, &ro));
    const tf_status s = run(X, &ro, out, rep);
    rep->t_total = tf_wtime() - t_start;
    return s;
}
