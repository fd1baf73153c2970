/* SPDX-License-Identifier: BSD-3-Clause */
/* The front end of TTMc (tf_ttmc) and sparse Tucker (tf_tucker): options,
 * argument checks, the device choice (the CPU, one GPU, several GPUs, or
 * the CPUs of MPI ranks), the memory check, the start, then the algorithm
 * (algo/tucker.c) on the backend (seams/tucker.h). */
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "algo/checkpoint.h"
#include "algo/tucker.h"
#include "core/alloc.h"
#include "core/check_args.h"
#include "core/error.h"
#include "front/device_choice.h"
#include "seams/dist.h"

/* ------------------------------------------------------------ the result */

tf_status tf_ttensor_alloc(tf_ttensor *t, uint32_t order, const uint64_t *dims, const uint64_t *ranks)
{
    TF_ARG_NOT_NULL("tf_ttensor_alloc", t);
    memset(t, 0, sizeof *t);
    TF_ARG_NOT_NULL("tf_ttensor_alloc", dims);
    TF_ARG_NOT_NULL("tf_ttensor_alloc", ranks);
    if (order < TF_MIN_ORDER || order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "tf_ttensor_alloc: order %u is outside %d..%d", order, TF_MIN_ORDER, TF_MAX_ORDER);
    uint64_t core = 1;
    for (uint32_t m = 0; m < order; ++m) {
        if (ranks[m] < 1 || dims[m] < 1)
            return tf_fail(TF_ERR_ARG, "tf_ttensor_alloc: mode %u has length %llu and rank %llu (both must be >= 1)",
                           m + 1, (unsigned long long)dims[m], (unsigned long long)ranks[m]);
        if (core > UINT64_MAX / 8 / ranks[m])
            return tf_fail(TF_ERR_RANGE, "tf_ttensor_alloc: the core's size overflows");
        core *= ranks[m];
    }
    t->order = order;
    tf_status s = TF_ALLOC(t->core, core, "Tucker core");
    for (uint32_t m = 0; m < order && s == TF_OK; ++m) {
        t->dims[m] = dims[m];
        t->ranks[m] = ranks[m];
        s = tf_matrix_alloc(&t->factors[m], dims[m], ranks[m]);
    }
    if (s != TF_OK) tf_ttensor_free(t);
    return s;
}

void tf_ttensor_free(tf_ttensor *t)
{
    if (!t) return;
    tf_free(t->core);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&t->factors[m]);
    memset(t, 0, sizeof *t);
}

void tf_tucker_report_free(tf_tucker_report *r)
{
    if (!r) return;
    free(r->iterations);
    r->iterations = NULL;
}

/* ------------------------------------------------------------------ TTMc */

void tf_ttmc_opts_default(tf_ttmc_opts *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->backend = TF_BACKEND_AUTO;
}

/* The factors of every mode but `skip` fit X: dims[k] rows, >= 1 column,
 * data; *cols = the product of their columns (overflow checked). */
static tf_status check_factors(const char *who, const tf_tensor *X, uint32_t skip, const tf_matrix *U, uint64_t *cols)
{
    uint64_t C = 1;
    for (uint32_t k = 0; k < X->order; ++k) {
        if (k == skip) continue;
        const tf_matrix *u = &U[k];
        if (u->rows != X->dims[k] || u->cols < 1)
            return tf_fail(TF_ERR_ARG, "%s: factor %u is %llu x %llu, expected %llu x R (the length of mode %u, "
                           "R >= 1)", who, k + 1, (unsigned long long)u->rows, (unsigned long long)u->cols,
                           (unsigned long long)X->dims[k], k + 1);
        if (!u->data) return tf_fail(TF_ERR_ARG, "%s: factor %u has no data (NULL)", who, k + 1);
        if (C > UINT64_MAX / u->cols) return tf_fail(TF_ERR_RANGE, "%s: the product of the ranks overflows", who);
        C *= u->cols;
    }
    *cols = C;
    return TF_OK;
}

/* tf_ttmc on one GPU (src/gpu/tucker/ttmc.cu) of o's context or a private one. */
static tf_status ttmc_gpu(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_ttmc_opts *o, uint64_t I,
                          uint64_t C, tf_matrix *out)
{
    if (o->context && (o->context->dist || o->context->opts.ndevices > 1))
        return tf_fail(TF_ERR_UNAVAILABLE, "ttmc: not available on %s yet (one GPU or the CPU runs it)",
                       o->context->dist ? "GPUs of MPI ranks" : "several GPUs");
    tf_context *use = NULL, *own = NULL;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, 0, o->threads, &use, &own));
    tf_status s = tf_matrix_alloc(out, I, C);
    if (s == TF_OK) s = tf_cuda_ttmc(X, mode, U, use, out->data);
    tf_context_free(own);
    if (s != TF_OK) tf_matrix_free(out);
    else if (o->info) o->info->backend = TF_BACKEND_GPU;
    return s;
}

tf_status tf_ttmc(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_ttmc_opts *o, tf_matrix *out)
{
    if (out) memset(out, 0, sizeof *out);
    tf_ttmc_opts defaults;
    if (!o) {
        tf_ttmc_opts_default(&defaults);
        o = &defaults;
    }
    if (o->info) memset(o->info, 0, sizeof *o->info);
    TF_ARG_NOT_NULL("tf_ttmc", X);
    TF_ARG_NOT_NULL("tf_ttmc", U);
    TF_ARG_NOT_NULL("tf_ttmc", out);
    TF_TRY(tf_tensor_validate(X));
    if (mode >= X->order)
        return tf_fail(TF_ERR_ARG, "tf_ttmc: mode %u is outside 1..%u (1-based)", mode + 1, X->order);
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "tf_ttmc: threads %d is negative (0: the default)", o->threads);
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_ttmc: unknown backend %d", (int)o->backend);
    uint64_t C = 0;
    TF_TRY(check_factors("tf_ttmc", X, mode, U, &C));
    const uint64_t I = X->dims[mode];
    if (C > UINT64_MAX / 8 / I)
        return tf_fail(TF_ERR_RANGE, "tf_ttmc: the output of %llu x %llu doubles overflows", (unsigned long long)I,
                       (unsigned long long)C);
    if (o->backend == TF_BACKEND_GPU || (o->context && o->context->opts.backend == TF_BACKEND_GPU))
        return ttmc_gpu(X, mode, U, o, I, C, out);
    /* auto: the CPU (one TTMc does not pay for the GPU's set-up and the sorted copy) */
    const tf_backend be = tf_choose_backend(o->context, o->backend, 0);
    if (o->info) o->info->backend = be;
    int want[TF_MAX_ORDER] = {0};
    want[mode] = 1;
    tf_cpu_ttmc *p = NULL;
    tf_status s = tf_matrix_alloc(out, I, C);
    if (s == TF_OK) s = tf_cpu_ttmc_create(X, want, o->threads, &p);
    if (s == TF_OK) s = tf_cpu_ttmc_run(p, mode, U, out->data);
    tf_cpu_ttmc_free(p);
    if (s != TF_OK) tf_matrix_free(out);
    return s;
}

/* ------------------------------------------------------------ HOOI */

static void opts_defaults(tf_tucker_opts *o)
{
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->max_iters = 50;
    o->tol = 1e-4;
    o->init = TF_TUCKER_INIT_RANDOM;
    o->seed = TF_DEFAULT_SEED;
    o->backend = TF_BACKEND_AUTO;
    o->svd = TF_TUCKER_SVD_AUTO;
}

void tf_tucker_opts_init(tf_tucker_opts *o, size_t size)
{
    if (!o || size < sizeof(size_t)) return;
    tf_tucker_opts d;
    opts_defaults(&d);
    memcpy(o, &d, size < sizeof d ? size : sizeof d);
    if (size > sizeof d) memset((char *)o + sizeof d, 0, size - sizeof d); /* a later header's fields */
    o->size = size;
}

/* The size of tf_tucker_opts's first layout (fields are appended after svd). */
#define OPTS_SIZE_FIRST (offsetof(tf_tucker_opts, svd) + sizeof(((tf_tucker_opts *)0)->svd))

/* *out <- the caller's options over the defaults (the `size` bytes its header knew). */
static tf_status resolve_opts(const tf_tucker_opts *in, tf_tucker_opts *out)
{
    opts_defaults(out);
    if (in->size < OPTS_SIZE_FIRST)
        return tf_fail(TF_ERR_ARG, "tucker: tf_tucker_opts.size is %zu, expected at least %zu (set it up with "
                                   "tf_tucker_opts_default)", in->size, (size_t)OPTS_SIZE_FIRST);
    memcpy(out, in, in->size < sizeof *out ? in->size : sizeof *out);
    out->size = sizeof *out;
    return TF_OK;
}

static uint64_t physical_memory(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
}

static tf_status check_opts(const tf_tensor *X, const tf_tucker_opts *o, uint32_t *order)
{
    const uint32_t N = X->order;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        if (m >= N) {
            if (o->ranks[m])
                return tf_fail(TF_ERR_ARG, "tucker: %u ranks given for a tensor of %u modes (expected one per mode)",
                               m + 1, N);
            continue;
        }
        if (o->ranks[m] < 1 || o->ranks[m] > X->dims[m])
            return tf_fail(TF_ERR_ARG, "tucker: the rank of mode %u is %llu, expected 1..%llu (the mode's length)",
                           m + 1, (unsigned long long)o->ranks[m], (unsigned long long)X->dims[m]);
    }
    for (uint32_t m = 0; m < N; ++m) {
        uint64_t others = 1;
        for (uint32_t k = 0; k < N && others < o->ranks[m]; ++k)
            if (k != m) others *= o->ranks[k];
        if (o->ranks[m] > others)
            return tf_fail(TF_ERR_ARG, "tucker: the rank of mode %u is %llu, more than the product of the other ranks "
                           "(%llu): Y_(%u) has only that many columns, so the factor would not be determined",
                           m + 1, (unsigned long long)o->ranks[m], (unsigned long long)others, m + 1);
    }
    for (uint32_t m = 0; m < N; ++m) { /* LAPACK's and BLAS's sizes are ints */
        uint64_t C = 1;
        for (uint32_t k = 0; k < N; ++k)
            if (k != m) C *= o->ranks[k];
        if (X->dims[m] > INT_MAX || C > INT_MAX)
            return tf_fail(TF_ERR_RANGE, "tucker: Y_(%u) is %llu x %llu, more rows or columns than the 2^31 - 1 "
                           "LAPACK takes", m + 1, (unsigned long long)X->dims[m], (unsigned long long)C);
    }
    if (o->max_iters < 1) return tf_fail(TF_ERR_ARG, "tucker: max_iters is 0 (expected at least 1)");
    if (!(o->tol >= 0.0) || isinf(o->tol))
        return tf_fail(TF_ERR_ARG, "tucker: tolerance %g is not a finite number >= 0", o->tol);
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "tucker: threads %d is negative", o->threads);
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tucker: unknown backend %d", (int)o->backend);
    if ((unsigned)o->svd > TF_TUCKER_SVD_SUBSPACE) return tf_fail(TF_ERR_ARG, "tucker: unknown svd method %d", (int)o->svd);
    if ((unsigned)o->init > TF_TUCKER_INIT_GIVEN) return tf_fail(TF_ERR_ARG, "tucker: unknown init %d", (int)o->init);
    for (uint32_t m = 0; m < N; ++m) order[m] = o->dimorder ? o->dimorder[m] : m;
    uint32_t seen = 0;
    for (uint32_t m = 0; m < N; ++m) {
        if (order[m] >= N || (seen >> order[m] & 1u))
            return tf_fail(TF_ERR_ARG, "tucker: dimorder is not a permutation of the modes 0..%u (entry %u is %u)", N - 1,
                           m, order[m]);
        seen |= 1u << order[m];
    }
    if (o->init == TF_TUCKER_INIT_GIVEN) {
        if (!o->init_factors) return tf_fail(TF_ERR_ARG, "tucker: init is GIVEN but init_factors is NULL");
        for (uint32_t m = 0; m < N; ++m) {
            if (m == order[0]) continue;
            const tf_matrix *f = &o->init_factors[m];
            if (f->rows != X->dims[m] || f->cols != o->ranks[m] || !f->data)
                return tf_fail(TF_ERR_ARG, "tucker: initial factor %u is %llu x %llu, expected %llu x %llu (mode %u's "
                               "length x its rank)", m + 1, (unsigned long long)f->rows, (unsigned long long)f->cols,
                               (unsigned long long)X->dims[m], (unsigned long long)o->ranks[m], m + 1);
            for (uint64_t e = 0; e < f->rows * f->cols; ++e)
                if (!isfinite(f->data[e]))
                    return tf_fail(TF_ERR_ARG, "tucker: initial factor %u has a non-finite value at row %llu, column "
                                   "%llu", m + 1, (unsigned long long)(e / f->cols + 1),
                                   (unsigned long long)(e % f->cols + 1));
        }
    }
    return TF_OK;
}

/* "1.5 GB" */
static const char *bytes_text(uint64_t b, char *buf, size_t len)
{
    const double v = (double)b;
    if (v >= 1e9) snprintf(buf, len, "%.2f GB", v / 1e9);
    else if (v >= 1e6) snprintf(buf, len, "%.1f MB", v / 1e6);
    else snprintf(buf, len, "%.0f kB", v / 1e3 > 1 ? v / 1e3 : 1);
    return buf;
}

/* The dense arrays of the run against the limit: one line naming the sizes. */
static tf_status check_memory(const tf_tensor *X, const tf_tucker_opts *o, tf_tucker_report *rep)
{
    uint64_t y = 0;
    const uint64_t need = tf_tucker_work_bytes(X, o->ranks, o->svd, &y);
    rep->work_bytes = need;
    rep->y_bytes = y;
    const uint64_t phys = physical_memory();
    const uint64_t limit = o->memory_limit ? o->memory_limit : phys / 2;
    if (!limit || need <= limit) return TF_OK;
    uint32_t big = 0;
    uint64_t cols = 0;
    for (uint32_t n = 0; n < X->order; ++n) {
        uint64_t c = 1;
        for (uint32_t k = 0; k < X->order; ++k)
            if (k != n) c *= o->ranks[k];
        if (X->dims[n] * c >= X->dims[big] * cols) big = n, cols = c;
    }
    char core[160] = "", a[32], b[32], c[32];
    size_t at = 0;
    for (uint32_t n = 0; n < X->order && at < sizeof core; ++n)
        at += (size_t)snprintf(core + at, sizeof core - at, "%s%llu", n ? " x " : "", (unsigned long long)o->ranks[n]);
    const int ranks = o->context && o->context->dist;
    return tf_fail(TF_ERR_NOMEM, "tucker: Y_(%u) is %llu x %llu doubles (%s) and the core %s; with the other dense "
                   "arrays the run needs %s%s, over the limit of %s (%s)", big + 1, (unsigned long long)X->dims[big],
                   (unsigned long long)cols, bytes_text(y, a, sizeof a), core, bytes_text(need, b, sizeof b),
                   ranks ? " on each MPI rank (every rank holds the whole Y_(n))" : "", bytes_text(limit, c, sizeof c),
                   o->memory_limit ? "the memory limit" : "half the physical memory; a memory limit raises it");
}

/* Where the run goes: this process's GPUs (the context's devices, one or
 * several: asked for, or under auto where the context's device -- without
 * a context, the machine -- has one), else its CPU; a context of MPI ranks
 * to the ranks' CPUs (*dist). GPUs of MPI ranks lack Tucker:
 * TF_ERR_UNAVAILABLE (every rank's) when the run asks for them. */
static tf_status choose(const tf_tucker_opts *o, int *gpu, int *dist)
{
    tf_context *c = o->context;
    *gpu = *dist = 0;
    if (c && (c->dist || c->opts.ndevices > 1)) {
        const int on_gpu =
            o->backend == TF_BACKEND_GPU || (o->backend == TF_BACKEND_AUTO && tf_context_resolve(c) == TF_BACKEND_GPU);
        if (c->dist && on_gpu)
            return tf_fail_shared(TF_ERR_UNAVAILABLE, "tucker: not available on GPUs of MPI ranks yet (CPU ranks, "
                                                      "--device cpu, or the GPUs of one process run it)");
        *gpu = on_gpu && !c->dist;
        *dist = c->dist != NULL;
        return TF_OK;
    }
    /* a context made for the GPU asks for it as the backend would */
    const tf_backend asked = o->backend == TF_BACKEND_AUTO && c && c->opts.backend == TF_BACKEND_GPU
                                 ? TF_BACKEND_GPU : o->backend;
    *gpu = tf_choose_backend(c, asked, 1) == TF_BACKEND_GPU;
    return TF_OK;
}

/* The backend: the GPU's (src/gpu/tucker) in o's context or a private one
 * (*own, freed by the caller after the backend) when gpu; under auto a
 * problem the GPU cannot hold (TF_ERR_NOMEM) or lacks (TF_ERR_UNAVAILABLE:
 * a CPU-only module, the subspace method) runs on the CPU, the note saying
 * why. */
static tf_status create_backend(const tf_tensor *X, const tf_tucker_opts *o, int gpu, tf_tucker_backend *be,
                                tf_context **own, tf_tucker_report *rep)
{
    if (gpu) {
        tf_tucker_opts go = *o;
        TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, own));
        const tf_status s = tf_cuda_tucker_backend_create(X, &go, be);
        if (s == TF_OK) {
            rep->backend = TF_BACKEND_GPU;
            return s;
        }
        tf_context_free(*own);
        *own = NULL;
        if (s == TF_ERR_UNAVAILABLE && o->backend == TF_BACKEND_AUTO) tf_cpu_fallback_note(rep->note, sizeof rep->note);
        else if (!tf_gpu_fallback(s, o->backend, rep->note, sizeof rep->note)) return s;
    }
    rep->backend = TF_BACKEND_CPU;
    return tf_cpu_tucker_backend_create(X, o, be);
}

/* The truncated HOSVD start (pyttb's init 'nvecs'): factor m the R_m leading
 * left singular vectors of X_(m) (tf_nvecs), every mode but skip. */
static tf_status hosvd_start(const tf_tensor *X, const tf_tucker_opts *o, uint32_t skip, tf_matrix *f)
{
    tf_nvecs_opts no;
    tf_nvecs_opts_default(&no);
    no.threads = o->threads;
    for (uint32_t m = 0; m < X->order; ++m) {
        if (m == skip) continue;
        TF_TRY(tf_nvecs(X, m, o->ranks[m], &no, &f[m], NULL, NULL));
    }
    return TF_OK;
}

/* The HOSVD start on ranks whose X is each one's part (parts): the
 * non-zeros gathered on rank 0 (in rank order: the input's order for parts
 * cut in it), the start computed there as one process would, then each
 * factor broadcast to every rank; a failure is every rank's. */
static tf_status hosvd_start_ranks(const tf_tensor *X, const tf_tucker_opts *o, uint32_t skip, const tf_dist *d,
                                   tf_matrix *f)
{
    const uint32_t N = X->order, rec = 4 * N + 8;
    uint64_t *send_n = NULL, n = 0;
    unsigned char *buf = NULL;
    void *got = NULL;
    tf_tensor all;
    memset(&all, 0, sizeof all);
    tf_status s = TF_CALLOC(send_n, (uint64_t)d->size, "tucker: the gather's counts");
    if (s == TF_OK) s = tf_alloc((void **)&buf, X->nnz ? X->nnz : 1, rec, "tucker: the non-zeros to gather");
    if (s == TF_OK) {
        send_n[0] = X->nnz;
        for (uint64_t k = 0; k < X->nnz; ++k) {
            unsigned char *r = buf + k * rec;
            for (uint32_t m = 0; m < N; ++m) memcpy(r + 4 * m, &X->ind[m][k], 4);
            memcpy(r + 4 * N, &X->vals[k], 8);
        }
    }
    s = tf_dist_shared(d, s);
    if (s == TF_OK) s = d->alltoall_records(buf, send_n, rec, d->round_bytes, &got, &n);
    tf_free(buf);
    tf_free(send_n);
    if (s == TF_OK && d->rank == 0) {
        s = tf_tensor_alloc(&all, N, X->dims, n);
        const unsigned char *g = got;
        for (uint64_t k = 0; s == TF_OK && k < n; ++k) {
            for (uint32_t m = 0; m < N; ++m) memcpy(&all.ind[m][k], g + k * rec + 4 * m, 4);
            memcpy(&all.vals[k], g + k * rec + 4 * N, 8);
        }
        tf_free(got);
        got = NULL;
        if (s == TF_OK) s = hosvd_start(&all, o, skip, f);
        tf_tensor_free(&all);
    }
    tf_free(got);
    for (uint32_t m = 0; m < N && s == TF_OK && d->rank != 0; ++m)
        if (m != skip) s = tf_matrix_alloc(&f[m], X->dims[m], o->ranks[m]);
    s = tf_dist_shared(d, s);
    for (uint32_t m = 0; m < N && s == TF_OK; ++m)
        if (m != skip) s = d->bcast_from(f[m].data, X->dims[m] * o->ranks[m] * sizeof(double), 0);
    return s;
}

/* On ranks whose X is the whole tensor (not parts): this rank's share of
 * its non-zeros, a view (contiguous, by rank). */
static tf_tensor rank_view(const tf_tensor *X, const tf_dist *d)
{
    tf_tensor v = *X;
    const uint64_t lo = X->nnz * (uint64_t)d->rank / (uint64_t)d->size,
                   hi = X->nnz * (uint64_t)(d->rank + 1) / (uint64_t)d->size;
    for (uint32_t m = 0; m < X->order; ++m) v.ind[m] = X->ind[m] + lo;
    v.vals = X->vals + lo;
    v.nnz = hi - lo;
    return v;
}

/* Before the work, on ranks: X's part valid, the options (the same on every
 * rank), ||X||^2 summed over the parts; a failure every rank's. */
static tf_status check_ranks(const tf_tensor *X, const tf_tucker_opts *o, const tf_dist *d, const tf_dist *parts,
                             uint32_t *order, double *normx2)
{
    tf_status s = tf_tensor_validate(X);
    if (s == TF_OK) s = check_opts(X, o, order);
    if (s == TF_OK && o->checkpoint)
        s = tf_fail(TF_ERR_UNAVAILABLE, "tucker: checkpoints are not available on MPI ranks yet (one process "
                                        "writes them)");
    TF_TRY(tf_dist_shared(d, s));
    *normx2 = tf_tensor_norm2(X);
    return parts ? parts->allreduce_sum(normx2, 1) : TF_OK;
}

tf_status tf_tucker(const tf_tensor *X, const tf_tucker_opts *opts, tf_ttensor *out, tf_tucker_report *rep)
{
    const double t_start = tf_wtime();
    tf_tucker_report local;
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    if (out) memset(out, 0, sizeof *out);
    TF_ARG_NOT_NULL("tf_tucker", X);
    TF_ARG_NOT_NULL("tf_tucker", out);
    tf_tucker_opts o;
    if (opts) TF_TRY(resolve_opts(opts, &o));
    else opts_defaults(&o);
    int gpu = 0, dist = 0;
    TF_TRY(choose(&o, &gpu, &dist));
    const tf_dist *d = dist ? o.context->dist : NULL, *parts = d && o.distributed_input ? d : NULL;
    if (o.distributed_input && !d)
        return tf_fail(TF_ERR_ARG, "tucker: distributed_input needs a distributed context (MPI ranks)");
    uint32_t order[TF_MAX_ORDER];
    double normx2 = 0.0;
    if (d) {
        TF_TRY(check_ranks(X, &o, d, parts, order, &normx2));
    } else {
        TF_TRY(tf_tensor_validate(X));
        TF_TRY(check_opts(X, &o, order));
        normx2 = tf_tensor_norm2(X);
    }
    /* every rank has the same ||X|| and options: a failure below is every rank's alike */
    tf_status (*const fail)(tf_status, const char *, ...) = d ? tf_fail_shared : tf_fail;
    rep->norm_x = sqrt(normx2);
    if (!(normx2 > 0.0))
        return fail(TF_ERR_ARG, "tucker: the tensor has no non-zero values (||X|| = 0), so there is nothing to "
                                "decompose");
    if (!isfinite(normx2)) return fail(TF_ERR_RANGE, "tucker: ||X||^2 overflows a double; rescale the values");
    if (check_memory(X, &o, rep) != TF_OK) { /* the same arrays on either device, and on each rank */
        if (!d) return TF_ERR_NOMEM;
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tf_last_error());
        return tf_fail_shared(TF_ERR_NOMEM, "%s", msg);
    }
    /* on ranks of the whole tensor, each computes with its share of the non-zeros */
    const tf_tensor view = d && !parts ? rank_view(X, d) : *X;
    const tf_tensor *whole = X;
    X = &view;
    /* the start */
    tf_matrix start[TF_MAX_ORDER];
    memset(start, 0, sizeof start);
    const tf_matrix *given = NULL;
    tf_status s = TF_OK;
    const int resuming = o.checkpoint && o.checkpoint->resume && *o.checkpoint->resume;
    if (o.init == TF_TUCKER_INIT_HOSVD && !resuming) { /* a resumed run starts from the checkpoint */
        s = parts ? hosvd_start_ranks(X, &o, order[0], parts, start) : hosvd_start(whole, &o, order[0], start);
        given = start;
    } else if (o.init == TF_TUCKER_INIT_GIVEN) {
        given = o.init_factors;
    }
    if (d) s = tf_dist_shared(d, s);
    rep->t_init = tf_wtime() - t_start;
    tf_tucker_backend be;
    memset(&be, 0, sizeof be);
    tf_context *own = NULL; /* the GPU's private context, when o has none */
    if (s == TF_OK) {
        const double t = tf_wtime();
        if (d) {
            rep->backend = TF_BACKEND_CPU;
            s = tf_cpu_tucker_backend_create_dist(X, &o, d, &be);
        } else {
            s = create_backend(X, &o, gpu, &be, &own, rep);
        }
        rep->t_build = tf_wtime() - t;
    }
    const int made = s == TF_OK;
    /* checkpoints: a resumed run starts from the checkpoint's factors */
    tf_ckpt ck;
    int on = 0;
    tf_matrix loaded[TF_MAX_ORDER];
    memset(loaded, 0, sizeof loaded);
    uint32_t nloaded = 0;
    if (s == TF_OK) {
        char opt[256];
        size_t at = (size_t)snprintf(opt, sizeof opt, "svd %d dimorder", (int)o.svd);
        for (uint32_t m = 0; m < X->order; ++m) at += (size_t)snprintf(opt + at, sizeof opt - at, " %u", order[m] + 1);
        s = tf_ckpt_begin(&ck, o.checkpoint, "tucker", X, NULL, NULL, o.ranks, X->order, opt, &on);
    }
    if (s == TF_OK && on) s = tf_ckpt_load(&ck, NULL, loaded, &nloaded);
    if (s == TF_OK && on && ck.done) {
        s = nloaded == X->order ? TF_OK
                                : tf_fail(TF_ERR_PARSE, "%s: %u factor files for a tensor of order %u", ck.opts->resume,
                                          nloaded, X->order);
        for (uint32_t m = 0; s == TF_OK && m < X->order; ++m)
            if (loaded[m].rows != X->dims[m] || loaded[m].cols != o.ranks[m])
                s = tf_fail(TF_ERR_PARSE, "%s.mode%u.mat is %llu x %llu, expected %llu x %llu", ck.opts->resume, m + 1,
                            (unsigned long long)loaded[m].rows, (unsigned long long)loaded[m].cols,
                            (unsigned long long)X->dims[m], (unsigned long long)o.ranks[m]);
        given = loaded;
    }
    if (s == TF_OK) {
        snprintf(rep->plan, sizeof rep->plan, "%s", be.desc);
        s = tf_hooi_run(&be, X, &o, order, normx2, given, on ? &ck : NULL, out, rep);
    }
    if (made) be.ops->destroy(be.ctx);
    tf_context_free(own);
    if (on) tf_ckpt_free(&ck);
    for (uint32_t m = 0; m < nloaded; ++m) tf_matrix_free(&loaded[m]);
    for (uint32_t m = 0; m < X->order; ++m) tf_matrix_free(&start[m]);
    if (s != TF_OK) {
        tf_tucker_report_free(rep);
        rep->iters = 0;
    }
    rep->t_total = tf_wtime() - t_start;
    if (rep == &local) tf_tucker_report_free(rep);
    return s;
}
