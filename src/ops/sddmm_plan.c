/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans, front end: option and operand checks, the backend choice
 * (with the CPU fallback of TF_BACKEND_AUTO), the plan's life. The
 * backends' plans sit behind it (backend/sddmm_backends.h). A plan carries
 * a magic number that tf_sddmm_plan_free clears; debug builds (no NDEBUG)
 * also keep the last freed plans' headers allocated, so a run after free
 * is always caught there instead of reading freed memory. */
#include "ops/sddmm_plan.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "backend/sddmm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "ops/call_context.h"
#include "ops/dense_args.h"

#define PLAN_MAGIC 0x504d4444u /* "DDMP" */
#define PLAN_FREED 0x45455246u /* "FREE" */

struct tf_sddmm_plan {
    uint32_t magic;
    uint64_t rows, cols, nnz, K;
    tf_precision precision;
    tf_backend backend;       /* where it runs (TF_BACKEND_CPU also for nnz = 0) */
    tf_context *own_context;  /* made for this plan when its options named none */
    tf_sddmm_cpu *cpu;        /* the backend's plan (neither when nnz = 0) */
    tf_sddmm_gpu *gpu;
    tf_sddmm_info info;
};

tf_dense tf_dense_host(const tf_matrix *m)
{
    tf_dense d;
    memset(&d, 0, sizeof d);
    if (!m) return d;
    d.data = m->data;
    d.rows = m->rows;
    d.cols = m->cols;
    d.ld = m->cols;
    d.precision = TF_DOUBLE;
    d.memory = TF_MEMORY_HOST;
    return d;
}

tf_status tf_sddmm_check_opts(const tf_sddmm_opts *o, const char *who)
{
    if (o->op != TF_SDDMM_SAMPLE && o->op != TF_SDDMM_SCALE) return tf_fail(TF_ERR_ARG, "%s: unknown op %d", who, (int)o->op);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "%s: unknown precision %d", who, (int)o->precision);
    if ((int)o->algo < TF_SDDMM_ALGO_AUTO || o->algo > TF_SDDMM_ALGO_REFERENCE)
        return tf_fail(TF_ERR_ARG, "%s: unknown algorithm %d", who, (int)o->algo);
    if (o->vwarp > 32 || (o->vwarp & (o->vwarp - 1)))
        return tf_fail(TF_ERR_ARG, "%s: vwarp %u is not 0 (auto) or a power of two up to 32", who, o->vwarp);
    if (o->a_regs < -1 || o->a_regs > 1)
        return tf_fail(TF_ERR_ARG, "%s: a_regs %d is not -1, 0 (auto) or 1", who, o->a_regs);
    return TF_OK;
}

tf_status tf_sddmm_pick_backend(const tf_sddmm_opts *o, tf_backend *out)
{
    tf_backend be = o->backend;
    if (o->algo == TF_SDDMM_ALGO_REFERENCE) be = TF_BACKEND_CPU;
    else if (o->algo != TF_SDDMM_ALGO_AUTO) be = TF_BACKEND_GPU;
    else if (be == TF_BACKEND_AUTO) {
        const int gpu = o->context ? tf_context_resolve(o->context) == TF_BACKEND_GPU : tf_gpu_count() > 0;
        be = gpu ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    }
    if (be != TF_BACKEND_CPU && be != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: unknown backend %d", (int)o->backend);
    if (be == TF_BACKEND_CPU && o->backend == TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: the reference algorithm runs on the CPU, not the GPU backend");
    if (be == TF_BACKEND_GPU && o->backend == TF_BACKEND_CPU)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: algorithm %d runs on the GPU, not the CPU backend", (int)o->algo);
    *out = be;
    return TF_OK;
}

/* ------------------------------------------------------------ the life of a plan */

#ifndef NDEBUG
/* Debug builds: freed headers wait here (magic PLAN_FREED) until 64 later
 * plans were freed, so a run on a freed plan reads a live header. */
#define QUARANTINE 64
static tf_sddmm_plan *quarantine[QUARANTINE];
static unsigned quarantine_next;
static pthread_mutex_t quarantine_mu = PTHREAD_MUTEX_INITIALIZER;
#endif

static void release_header(tf_sddmm_plan *p)
{
    p->magic = PLAN_FREED;
#ifndef NDEBUG
    pthread_mutex_lock(&quarantine_mu);
    tf_sddmm_plan *old = quarantine[quarantine_next];
    quarantine[quarantine_next] = p;
    quarantine_next = (quarantine_next + 1) % QUARANTINE;
    pthread_mutex_unlock(&quarantine_mu);
    tf_free(old);
#else
    tf_free(p);
#endif
}

void tf_sddmm_plan_free(tf_sddmm_plan *p)
{
    if (!p || p->magic != PLAN_MAGIC) return; /* NULL, or freed already */
    tf_cpu_sddmm_plan_free(p->cpu);
    tf_cuda_sddmm_plan_free(p->gpu);
    tf_context_free(p->own_context); /* after the plan's device memory is gone */
    release_header(p);
}

static tf_status check_plan(const tf_sddmm_plan *p, const char *who)
{
    if (!p) return tf_fail(TF_ERR_ARG, "%s: the plan is NULL", who);
    if (p->magic == PLAN_FREED) return tf_fail(TF_ERR_ARG, "%s: the plan was freed (tf_sddmm_plan_free)", who);
    if (p->magic != PLAN_MAGIC) return tf_fail(TF_ERR_ARG, "%s: not an SDDMM plan (freed, or never built)", who);
    return TF_OK;
}

static tf_status build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int borrow, tf_sddmm_plan **out)
{
    tf_backend be;
    TF_TRY(tf_sddmm_pick_backend(o, &be));
    tf_sddmm_plan *p = NULL;
    TF_TRY(TF_CALLOC(p, 1, "SDDMM plan"));
    p->magic = PLAN_MAGIC;
    p->rows = S->rows;
    p->cols = S->cols;
    p->nnz = S->nnz;
    p->K = K;
    p->precision = o->precision;
    p->backend = TF_BACKEND_CPU;
    p->info.backend = TF_BACKEND_CPU;
    p->info.algo = o->algo == TF_SDDMM_ALGO_REFERENCE ? TF_SDDMM_ALGO_REFERENCE : TF_SDDMM_ALGO_AUTO;
    if (S->nnz == 0) { /* nothing to compute: no backend */
        *out = p;
        return TF_OK;
    }
    tf_status s = TF_OK;
    if (be == TF_BACKEND_GPU) {
        tf_sddmm_opts go = *o;
        s = tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, &p->own_context);
        if (s == TF_OK) s = tf_cuda_sddmm_plan_build(S, K, &go, &p->gpu, &p->info);
        if (s == TF_OK) {
            p->backend = TF_BACKEND_GPU;
            *out = p;
            return TF_OK;
        }
        tf_context_free(p->own_context);
        p->own_context = NULL;
        /* under auto, a problem the GPU cannot hold runs on the CPU, which says why */
        if (s != TF_ERR_NOMEM || o->backend != TF_BACKEND_AUTO || o->algo != TF_SDDMM_ALGO_AUTO) {
            release_header(p);
            return s;
        }
        memset(&p->info, 0, sizeof p->info);
        p->info.backend = TF_BACKEND_CPU;
        tf_cpu_fallback_note(p->info.note, sizeof p->info.note);
    }
    s = tf_cpu_sddmm_plan_build(S, K, o, borrow, &p->cpu);
    if (s != TF_OK) {
        release_header(p);
        return s;
    }
    *out = p;
    return TF_OK;
}

tf_status tf_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_build: no place for the plan (out is NULL)");
    *out = NULL;
    tf_sddmm_opts d;
    if (!o) {
        tf_sddmm_opts_default(&d);
        o = &d;
    }
    if (!S) return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_build: S is NULL");
    if (K == 0) return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_build: K = 0 (A and B need at least one column)");
    TF_TRY(tf_csr_validate(S));
    TF_TRY(tf_sddmm_check_opts(o, "tf_sddmm_plan_build"));
    return build(S, K, o, 0, out);
}

tf_status tf_sddmm_plan_build_borrowed(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out)
{
    *out = NULL;
    return build(S, K, o, 1, out);
}

tf_status tf_sddmm_plan_info(const tf_sddmm_plan *p, tf_sddmm_info *info)
{
    TF_TRY(check_plan(p, "tf_sddmm_plan_info"));
    if (!info) return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_info: info is NULL");
    *info = p->info;
    return TF_OK;
}

/* ------------------------------------------------------------ operands */

/* X (named `name`) has `rows` x `cols` values and a precision this plan takes. */
static tf_status check_dense(const tf_sddmm_plan *p, const tf_dense *X, const char *name, uint64_t rows,
                             const char *rows_are, uint64_t cols, const char *cols_are, const char *who)
{
    TF_TRY(tf_dense_check(X, name, rows, rows_are, cols, cols_are, who));
    if (X->precision == TF_SINGLE && p->precision == TF_DOUBLE)
        return tf_fail(TF_ERR_ARG, "%s: %s holds floats; this plan computes in double and takes doubles", who,
                       name);
    return TF_OK;
}

/* A CPU plan reads and writes host memory only: a GPU array is an error. */
static tf_status check_host(const tf_dense *X, const char *name, const char *who)
{
    return tf_dense_check_host(X, name, who, "this plan runs on the CPU: pass host arrays, or build the plan for the GPU");
}

static tf_status check_operands(const tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                                const char *who)
{
    TF_TRY(check_dense(p, A, "A", p->rows, "the rows of S", p->K, "the plan's K", who));
    TF_TRY(check_dense(p, B, "B", p->cols, "the columns of S", p->K, "the plan's K", who));
    if (P) {
        TF_TRY(check_dense(p, P, "P", p->nnz, "the non-zeros of S", 1, "one value per non-zero", who));
        if (P->ld > 1)
            return tf_fail(TF_ERR_ARG, "%s: P has ld %llu; its values must be contiguous (ld 0 or 1)", who,
                           (unsigned long long)P->ld);
    }
    if (p->backend == TF_BACKEND_CPU) {
        TF_TRY(check_host(A, "A", who));
        TF_TRY(check_host(B, "B", who));
        if (P) TF_TRY(check_host(P, "P", who));
    }
    return TF_OK;
}

tf_status tf_sddmm_plan_run(tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                            const tf_sddmm_run_opts *ro)
{
    static const char who[] = "tf_sddmm_plan_run";
    TF_TRY(check_plan(p, who));
    if (!P) return tf_fail(TF_ERR_ARG, "%s: P is NULL", who);
    TF_TRY(check_operands(p, A, B, P, who));
    if (p->gpu) return tf_cuda_sddmm_plan_run(p->gpu, A, B, P, ro);
    if (p->cpu) return tf_cpu_sddmm_plan_run(p->cpu, A, B, P);
    return TF_OK; /* nnz = 0 */
}

tf_status tf_sddmm_plan_time(tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, int warmup, int reps,
                             double *times_ms)
{
    static const char who[] = "tf_sddmm_plan_time";
    TF_TRY(check_plan(p, who));
    if (warmup < 0 || reps < 1 || !times_ms)
        return tf_fail(TF_ERR_ARG, "%s: need warmup >= 0, reps >= 1 and times_ms", who);
    TF_TRY(check_operands(p, A, B, NULL, who));
    if (p->gpu) return tf_cuda_sddmm_plan_time(p->gpu, A, B, warmup, reps, times_ms);
    if (!p->cpu) { /* nnz = 0 */
        for (int r = 0; r < reps; ++r) times_ms[r] = 0.0;
        return TF_OK;
    }
    double *scratch = NULL;
    TF_TRY(TF_ALLOC(scratch, p->nnz, "SDDMM timing output"));
    const tf_dense P = {scratch, p->nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    tf_status s = TF_OK;
    for (int r = 0; r < warmup + reps && s == TF_OK; ++r) {
        const double t0 = tf_wtime();
        s = tf_cpu_sddmm_plan_run(p->cpu, A, B, &P);
        if (r >= warmup) times_ms[r - warmup] = (tf_wtime() - t0) * 1e3;
    }
    tf_free(scratch);
    return s;
}
