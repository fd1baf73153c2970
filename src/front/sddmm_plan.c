/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans, front end: option and operand checks, the backend choice
 * (with the CPU fallback of TF_BACKEND_AUTO), the plan's life. The
 * backends' plans sit behind it (seams/sddmm_backends.h). A plan carries
 * a magic number that tf_sddmm_plan_free clears; debug builds (no NDEBUG)
 * also keep the last freed plans' headers allocated, so a run after free
 * is always caught there instead of reading freed memory. */
#include "front/sddmm_plan.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "seams/context.h"
#include "seams/dist.h"
#include "seams/sddmm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "fmt/csr.h"
#include "front/device_choice.h"
#include "front/dense_args.h"
#include "front/partition.h"

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
    uint32_t npanels;         /* row panels: one per GPU of the plan, else 1 */
    tf_sddmm_panel panels[TF_MAX_GPUS];
    /* Over MPI ranks (the context's dist): this rank's panel (panels[0], in
     * S's rows and non-zeros) planned alone in `inner`; rank r's non-zeros
     * start at rank_nnz_lo[r] (dist->size + 1 entries). */
    const tf_dist *dist;
    tf_sddmm_plan *inner;
    uint64_t *rank_nnz_lo;
};

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
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "%s: threads %d is negative (0: the default)", who, o->threads);
    return TF_OK;
}

tf_status tf_sddmm_pick_backend(const tf_sddmm_opts *o, tf_backend *out)
{
    tf_backend be = o->backend;
    if (o->algo == TF_SDDMM_ALGO_REFERENCE) be = TF_BACKEND_CPU;
    else if (o->algo != TF_SDDMM_ALGO_AUTO) be = TF_BACKEND_GPU;
    else be = tf_choose_backend(o->context, be, 1);
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
    tf_sddmm_plan_free(p->inner);
    tf_free(p->rank_nnz_lo);
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

/* One panel, all of S, on the CPU (the GPU build fills in its device). */
static void whole_panel(tf_sddmm_plan *p)
{
    memset(p->panels, 0, sizeof p->panels);
    p->npanels = 1;
    p->panels[0].device = -1;
    p->panels[0].row_hi = p->rows;
    p->panels[0].nnz_hi = p->nnz;
    p->info.panels = 1;
}

/* On a context of several GPUs, one row panel per GPU with about nnz / GPUs
 * non-zeros each (cuSDDMM sec. V-D: by the prefix sums of the row counts,
 * S's row offsets; a plain cut by rows put 91 % of NYTimes on one GPU). */
static void cut_panels(tf_sddmm_plan *p, const tf_csr *S, int gpus)
{
    if (gpus <= 1) return;
    uint64_t lo[TF_MAX_GPUS + 1];
    (void)tf_partition_contiguous(S->rowptr, S->rows, gpus, lo);
    p->npanels = (uint32_t)gpus;
    for (int g = 0; g < gpus; ++g) {
        tf_sddmm_panel *q = &p->panels[g];
        memset(q, 0, sizeof *q);
        q->device = -1;
        q->row_lo = lo[g];
        q->row_hi = lo[g + 1];
        q->nnz_lo = S->rowptr[lo[g]];
        q->nnz_hi = S->rowptr[lo[g + 1]];
    }
}

static tf_status build_ranks(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, const tf_dist *d, int once,
                             tf_sddmm_plan **out);

/* A plan's header for S, K and o: the shapes and precision a run checks against. */
static tf_status new_header(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out)
{
    tf_sddmm_plan *p = NULL;
    TF_TRY(TF_CALLOC(p, 1, "SDDMM plan"));
    p->magic = PLAN_MAGIC;
    p->rows = S->rows;
    p->cols = S->cols;
    p->nnz = S->nnz;
    p->K = K;
    p->precision = o->precision;
    *out = p;
    return TF_OK;
}

/* local: plan S here even on a context of several MPI ranks (a rank's own panel);
 * once: a plan for one run (TF_SDDMM_ALGO_QUICK on a GPU under auto). */
static tf_status build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int borrow, int local, int once,
                       tf_sddmm_plan **out)
{
    const tf_dist *d = o->context ? o->context->dist : NULL;
    if (d && d->size > 1 && !local) return build_ranks(S, K, o, d, once, out);
    tf_backend be;
    TF_TRY(tf_sddmm_pick_backend(o, &be));
    tf_sddmm_plan *p = NULL;
    TF_TRY(new_header(S, K, o, &p));
    p->backend = TF_BACKEND_CPU;
    p->info.backend = TF_BACKEND_CPU;
    p->info.algo = o->algo == TF_SDDMM_ALGO_REFERENCE ? TF_SDDMM_ALGO_REFERENCE : TF_SDDMM_ALGO_AUTO;
    whole_panel(p);
    if (S->nnz == 0) { /* nothing to compute: no backend */
        *out = p;
        return TF_OK;
    }
    tf_status s = TF_OK;
    if (be == TF_BACKEND_GPU) {
        tf_sddmm_opts go = *o;
        if (once && o->algo == TF_SDDMM_ALGO_AUTO) go.algo = TF_SDDMM_ALGO_QUICK;
        s = tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, &p->own_context);
        if (s == TF_OK) {
            cut_panels(p, S, go.context->opts.ndevices);
            s = tf_cuda_sddmm_plan_build(S, K, &go, p->npanels, p->panels, &p->gpu);
        }
        if (s == TF_OK) {
            p->backend = TF_BACKEND_GPU;
            uint32_t first = 0; /* the first panel with non-zeros speaks for the plan */
            while (first + 1 < p->npanels && p->panels[first].nnz_hi == p->panels[first].nnz_lo) ++first;
            p->info = p->panels[first].info;
            p->info.panels = p->npanels;
            *out = p;
            return TF_OK;
        }
        tf_context_free(p->own_context);
        p->own_context = NULL;
        /* under auto, a problem the GPU cannot hold runs on the CPU, which says why */
        memset(&p->info, 0, sizeof p->info);
        if (o->algo != TF_SDDMM_ALGO_AUTO || !tf_gpu_fallback(s, o->backend, p->info.note, sizeof p->info.note)) {
            release_header(p);
            return s;
        }
        p->info.backend = TF_BACKEND_CPU;
        whole_panel(p);
    }
    const double t0 = tf_wtime();
    s = tf_cpu_sddmm_plan_build(S, K, o, borrow, &p->cpu);
    if (s != TF_OK) {
        release_header(p);
        return s;
    }
    p->panels[0].build_ms = (tf_wtime() - t0) * 1e3;
    p->panels[0].info = p->info;
    *out = p;
    return TF_OK;
}

/* Over the MPI ranks of d (cuSDDMM sec. V-C: 1-D panels of about nnz / ranks
 * non-zeros, the row offsets' prefix sums; a row is never split): every rank
 * plans its own panel on its device (the CPU, or its GPU) and a run
 * all-gathers P, so every rank ends with all of it, as one process would. */
static tf_status build_ranks(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, const tf_dist *d, int once,
                             tf_sddmm_plan **out)
{
    tf_sddmm_plan *p = NULL;
    uint64_t *lo = NULL, *rp = NULL;
    TF_TRY(new_header(S, K, o, &p));
    p->dist = d;
    tf_status s = TF_ALLOC(lo, (uint64_t)d->size + 1, "rank rows");
    if (s == TF_OK) s = TF_ALLOC(p->rank_nnz_lo, (uint64_t)d->size + 1, "rank non-zeros");
    uint64_t r0 = 0, r1 = 0;
    tf_csr sub; /* this rank's rows */
    if (s == TF_OK) {
        (void)tf_partition_contiguous(S->rowptr, S->rows, d->size, lo);
        for (int r = 0; r <= d->size; ++r) p->rank_nnz_lo[r] = S->rowptr[lo[r]];
        r0 = lo[d->rank];
        r1 = lo[d->rank + 1];
        s = tf_csr_rows(S, r0, r1, &sub, &rp);
    }
    if (s == TF_OK) s = build(&sub, K, o, 0, 1, once, &p->inner); /* copies what it keeps of sub */
    tf_free(lo);
    tf_free(rp);
    if (s != TF_OK) {
        tf_free(p->rank_nnz_lo);
        release_header(p);
        return s;
    }
    p->backend = p->inner->backend;
    p->info = p->inner->info;
    whole_panel(p);
    p->panels[0] = p->inner->panels[0];
    p->panels[0].row_lo = r0;
    p->panels[0].row_hi = r1;
    p->panels[0].nnz_lo = S->rowptr[r0];
    p->panels[0].nnz_hi = S->rowptr[r1];
    p->info.panels = 1;
    *out = p;
    return TF_OK;
}

/* The public builds: arguments checked, S copied (borrow 0). */
static tf_status build_checked(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int once, const char *who,
                               tf_sddmm_plan **out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "%s: no place for the plan (out is NULL)", who);
    *out = NULL;
    tf_sddmm_opts d;
    if (!o) {
        tf_sddmm_opts_default(&d);
        o = &d;
    }
    if (!S) return tf_fail(TF_ERR_ARG, "%s: S is NULL", who);
    if (K == 0) return tf_fail(TF_ERR_ARG, "%s: K = 0 (A and B need at least one column)", who);
    TF_TRY(tf_csr_validate(S));
    TF_TRY(tf_sddmm_check_opts(o, who));
    return build(S, K, o, 0, 0, once, out);
}

tf_status tf_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out)
{
    return build_checked(S, K, o, 0, "tf_sddmm_plan_build", out);
}

tf_status tf_sddmm_plan_build_once(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out)
{
    return build_checked(S, K, o, 1, "tf_sddmm_plan_build_once", out);
}

tf_status tf_sddmm_plan_build_borrowed(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int once,
                                       tf_sddmm_plan **out)
{
    *out = NULL;
    return build(S, K, o, 1, 0, once, out);
}

tf_status tf_sddmm_plan_info(const tf_sddmm_plan *p, tf_sddmm_info *info)
{
    TF_TRY(check_plan(p, "tf_sddmm_plan_info"));
    if (!info) return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_info: info is NULL");
    *info = p->info;
    return TF_OK;
}

tf_status tf_sddmm_plan_panel(const tf_sddmm_plan *p, uint32_t g, tf_sddmm_panel *panel)
{
    TF_TRY(check_plan(p, "tf_sddmm_plan_panel"));
    if (!panel) return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_panel: panel is NULL");
    if (g >= p->npanels)
        return tf_fail(TF_ERR_ARG, "tf_sddmm_plan_panel: panel %u of a plan of %u panel%s", g, p->npanels,
                       p->npanels == 1 ? "" : "s");
    *panel = p->panels[g];
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

/* Rows lo .. lo + rows - 1 of X (rows ld apart; P: one value each) as a tf_dense of their own. */
static tf_dense rows_of(const tf_dense *X, uint64_t lo, uint64_t rows)
{
    tf_dense v = *X;
    const uint64_t ld = X->ld ? X->ld : X->cols, w = X->precision == TF_SINGLE ? sizeof(float) : sizeof(double);
    if (v.data && lo) v.data = (char *)v.data + lo * ld * w;
    v.rows = rows;
    return v;
}

/* Part g of ro->parts checked for panel q: A the panel's rows or all of A,
 * B all of B, P (with_p) the panel's slice or all of P; whole arrays are cut
 * to the panel in *v. */
static tf_status check_part(const tf_sddmm_plan *p, uint32_t g, const tf_sddmm_part_operands *x, int with_p,
                            tf_sddmm_part_operands *v, const char *who)
{
    const tf_sddmm_panel *q = &p->panels[g];
    const uint64_t rows = q->row_hi - q->row_lo, nnz = q->nnz_hi - q->nnz_lo;
    char name[3][32], rows_are[64], nnz_are[64];
    for (int k = 0; k < 3; ++k) snprintf(name[k], sizeof name[k], "parts[%u].%c", g, "ABP"[k]);
    snprintf(rows_are, sizeof rows_are, "panel %u's rows %llu..%llu of S", g, (unsigned long long)q->row_lo,
             (unsigned long long)q->row_hi);
    snprintf(nnz_are, sizeof nnz_are, "panel %u's non-zeros, tf_sddmm_plan_panel", g);
    const int whole_a = x->A.rows == p->rows && rows != p->rows;
    TF_TRY(check_dense(p, &x->A, name[0], whole_a ? p->rows : rows, rows_are, p->K, "the plan's K", who));
    TF_TRY(check_dense(p, &x->B, name[1], p->cols, "the columns of S", p->K, "the plan's K", who));
    v->A = whole_a ? rows_of(&x->A, q->row_lo, rows) : x->A;
    v->B = x->B;
    memset(&v->P, 0, sizeof v->P);
    if (with_p) {
        const int whole_p = x->P.rows == p->nnz && nnz != p->nnz;
        TF_TRY(check_dense(p, &x->P, name[2], whole_p ? p->nnz : nnz, nnz_are, 1, "one value per non-zero", who));
        if (x->P.ld > 1)
            return tf_fail(TF_ERR_ARG, "%s: %s has ld %llu; its values must be contiguous (ld 0 or 1)", who, name[2],
                           (unsigned long long)x->P.ld);
        v->P = whole_p ? rows_of(&x->P, q->nnz_lo, nnz) : x->P;
    }
    if (p->backend == TF_BACKEND_CPU) {
        TF_TRY(check_host(&x->A, name[0], who));
        TF_TRY(check_host(&x->B, name[1], who));
        if (with_p) TF_TRY(check_host(&x->P, name[2], who));
    }
    return TF_OK;
}

/* The operands of a run or a timing, checked, one per panel in v (A its
 * rows, B whole, P its slice): from A, B and P, or from ro->parts. */
static tf_status panel_operands(const tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                                int with_p, const tf_sddmm_run_opts *ro, tf_sddmm_part_operands *v, const char *who)
{
    if (ro && ro->parts) {
        if (A || B || P)
            return tf_fail(TF_ERR_ARG, "%s: A, B and P come either as arguments or in ro->parts, not both (pass NULL "
                                       "for them with parts)", who);
        if (ro->nparts != p->npanels)
            return tf_fail(TF_ERR_ARG, "%s: ro->nparts is %u; the plan has %u panel%s (one per GPU: "
                                       "tf_sddmm_info.panels)", who, ro->nparts, p->npanels, p->npanels == 1 ? "" : "s");
        for (uint32_t g = 0; g < p->npanels; ++g) TF_TRY(check_part(p, g, &ro->parts[g], with_p, &v[g], who));
        return TF_OK;
    }
    if (ro && ro->nparts)
        return tf_fail(TF_ERR_ARG, "%s: ro->nparts is %u but ro->parts is NULL", who, ro->nparts);
    if (with_p && !P) return tf_fail(TF_ERR_ARG, "%s: P is NULL", who);
    TF_TRY(check_operands(p, A, B, with_p ? P : NULL, who));
    for (uint32_t g = 0; g < p->npanels; ++g) {
        const tf_sddmm_panel *q = &p->panels[g];
        v[g].A = rows_of(A, q->row_lo, q->row_hi - q->row_lo);
        v[g].B = *B;
        if (with_p) v[g].P = rows_of(P, q->nnz_lo, q->nnz_hi - q->nnz_lo);
        else memset(&v[g].P, 0, sizeof v[g].P);
    }
    return TF_OK;
}

/* A run of a plan over MPI ranks: this rank's panel, then P all-gathered
 * (host doubles: the collective's). */
static tf_status run_ranks(tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                           const tf_sddmm_run_opts *ro, const char *who)
{
    if (ro && (ro->parts || ro->nparts))
        return tf_fail(TF_ERR_ARG, "%s: per-GPU operands (ro->parts) are for a plan over the GPUs of one process, "
                                   "not over MPI ranks", who);
    if (!P) return tf_fail(TF_ERR_ARG, "%s: P is NULL", who);
    TF_TRY(check_operands(p, A, B, P, who));
    if (P->precision != TF_DOUBLE || P->memory == TF_MEMORY_DEVICE || tf_cuda_memory_of(P->data, NULL) != TF_CUDA_PTR_HOST)
        return tf_fail(TF_ERR_ARG, "%s: on a plan over MPI ranks P is all-gathered on the host: it must be host "
                                   "memory of doubles", who);
    const tf_sddmm_panel *q = &p->panels[0];
    if (q->nnz_hi > q->nnz_lo) {
        const tf_dense a = rows_of(A, q->row_lo, q->row_hi - q->row_lo), pp = rows_of(P, q->nnz_lo, q->nnz_hi - q->nnz_lo);
        TF_TRY(tf_sddmm_plan_run(p->inner, &a, B, &pp, ro));
    }
    return p->dist->allgather_rows((double *)P->data, p->rank_nnz_lo, 1, p->dist->round_bytes);
}

tf_status tf_sddmm_plan_run(tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                            const tf_sddmm_run_opts *ro)
{
    static const char who[] = "tf_sddmm_plan_run";
    TF_TRY(check_plan(p, who));
    if (p->dist) return run_ranks(p, A, B, P, ro, who);
    tf_sddmm_part_operands v[TF_MAX_GPUS];
    TF_TRY(panel_operands(p, A, B, P, 1, ro, v, who));
    const int given = ro && ro->parts;
    if (p->gpu) return tf_cuda_sddmm_plan_run(p->gpu, v, given, ro);
    if (p->cpu) return tf_cpu_sddmm_plan_run(p->cpu, &v[0].A, &v[0].B, &v[0].P);
    return TF_OK; /* nnz = 0 */
}

tf_status tf_sddmm_plan_time_panels(tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B,
                                    const tf_sddmm_run_opts *ro, int warmup, int reps, double *times_ms,
                                    double *part_ms)
{
    static const char who[] = "tf_sddmm_plan_time";
    TF_TRY(check_plan(p, who));
    if (warmup < 0 || reps < 1 || !times_ms)
        return tf_fail(TF_ERR_ARG, "%s: need warmup >= 0, reps >= 1 and times_ms", who);
    if (p->dist) { /* this rank's panel alone */
        if (ro && (ro->parts || ro->nparts))
            return tf_fail(TF_ERR_ARG, "%s: per-GPU operands are not for a plan over MPI ranks", who);
        TF_TRY(check_operands(p, A, B, NULL, who));
        const tf_sddmm_panel *q = &p->panels[0];
        const tf_dense a = rows_of(A, q->row_lo, q->row_hi - q->row_lo);
        return tf_sddmm_plan_time_panels(p->inner, &a, B, NULL, warmup, reps, times_ms, part_ms);
    }
    tf_sddmm_part_operands v[TF_MAX_GPUS];
    TF_TRY(panel_operands(p, A, B, NULL, 0, ro, v, who));
    if (p->gpu) return tf_cuda_sddmm_plan_time(p->gpu, v, ro && ro->parts, warmup, reps, times_ms, part_ms);
    if (!p->cpu) { /* nnz = 0 */
        for (int r = 0; r < reps; ++r) times_ms[r] = 0.0;
        if (part_ms)
            for (int r = 0; r < reps; ++r) part_ms[r] = 0.0;
        return TF_OK;
    }
    double *scratch = NULL;
    TF_TRY(TF_ALLOC(scratch, p->nnz, "SDDMM timing output"));
    const tf_dense Pd = {scratch, p->nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    tf_status s = TF_OK;
    for (int r = 0; r < warmup + reps && s == TF_OK; ++r) {
        const double t0 = tf_wtime();
        s = tf_cpu_sddmm_plan_run(p->cpu, &v[0].A, &v[0].B, &Pd);
        if (r >= warmup) times_ms[r - warmup] = (tf_wtime() - t0) * 1e3;
        if (r >= warmup && part_ms) part_ms[r - warmup] = times_ms[r - warmup];
    }
    tf_free(scratch);
    return s;
}

tf_status tf_sddmm_plan_time(tf_sddmm_plan *p, const tf_dense *A, const tf_dense *B, int warmup, int reps,
                             double *times_ms)
{
    return tf_sddmm_plan_time_panels(p, A, B, NULL, warmup, reps, times_ms, NULL);
}
