/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend of CP (the vtable of src/seams/cpd.h): an MTTKRP plan for
 * the tensor plus the factors, Grams and lambda in host memory; the dense
 * steps are the BLAS/LAPACK helpers of dense.c; the updates ALS (dense.c's
 * solve), AO-ADMM (admm.c) and HALS (hals.c). ALS's iteration is
 * cpu_sweep: per mode the MTTKRP and dense.c's fused passes (one process:
 * solve, normalisation, Gram and the fit's inner product in two passes).
 *
 * Distributed (several ranks, seams/dist.h; AMPED's layout on CPU ranks):
 * rank r holds, for each mode, a plan of the non-zeros whose index lies in
 * its rows [row_lo[r], row_lo[r+1]) (that index counted from row_lo[r]), so
 * its MTTKRP is exact on those rows and writes them alone;
 * it solves them, and the new rows are all-gathered so every rank holds the
 * whole factor. Normalisation and Grams then run on the whole factor on
 * every rank (the same numbers everywhere, as in one process: no reduction
 * of partial Grams to reorder), and the fit's inner product is summed over
 * the ranks' rows. */
#include <stdio.h>
#include <string.h>

#include "seams/cpd.h"
#include "seams/dist.h"
#include "seams/plan.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/admm.h"
#include "cpu/blas_threads.h"
#include "cpu/dense.h"
#include "cpu/hals.h"

typedef struct cpu_cpd {
    tf_plan *plan; /* borrowed from the front end */
    uint32_t order;
    uint64_t rank;
    uint64_t dims[TF_MAX_ORDER];
    int threads;
    tf_matrix A[TF_MAX_ORDER];   /* factors, dims[m] x R                   */
    double *G[TF_MAX_ORDER];     /* Grams A_m^T A_m, R x R                 */
    double *M;                   /* MTTKRP output, max dim x R             */
    uint32_t m_mode;             /* mode M holds (order: none yet)         */
    double *V;                   /* Hadamard product of Grams, R x R       */
    double *lambda;              /* R                                      */
    int blas_threads;       /* OpenBLAS thread count before this run, restored at the end */
    const tf_dist *dist;           /* NULL: one process                      */
    tf_plan *shard[TF_MAX_ORDER];  /* distributed: this rank's plan per mode (borrowed) */
    const uint64_t *row_lo[TF_MAX_ORDER]; /* distributed: rank r's rows [row_lo[r], row_lo[r+1]) */
    /* AO-ADMM: the scaled dual variable of each mode with a proximal
     * operator (this process's rows, in the scale of the normalised factor:
     * normalize divides it with the factor), made on the mode's first update */
    double *U[TF_MAX_ORDER];
} cpu_cpd;

/* This process's rows of mode m: all of them, or its rank's range. */
static void my_rows(const cpu_cpd *c, uint32_t m, uint64_t *lo, uint64_t *hi)
{
    *lo = c->dist ? c->row_lo[m][c->dist->rank] : 0;
    *hi = c->dist ? c->row_lo[m][c->dist->rank + 1] : c->dims[m];
}

static tf_status check_mode(const cpu_cpd *c, uint32_t mode)
{
    if (mode >= c->order)
        return tf_fail(TF_ERR_ARG, "CP-ALS backend: mode %u is outside 1..%u", mode + 1, c->order);
    if (!c->M) return tf_fail(TF_ERR_ARG, "CP-ALS backend: init was not called");
    return TF_OK;
}

static tf_status cpu_init(void *ctx, const tf_ktensor *init)
{
    cpu_cpd *c = ctx;
    const uint64_t R = c->rank;
    if (!init || init->order != c->order || init->rank != R)
        return tf_fail(TF_ERR_ARG, "CP-ALS backend: initial ktensor does not match order %u rank %llu",
                       c->order, (unsigned long long)R);
    uint64_t maxdim = 0;
    for (uint32_t m = 0; m < c->order; ++m) {
        if (init->factors[m].rows != c->dims[m] || init->factors[m].cols != R)
            return tf_fail(TF_ERR_ARG, "CP-ALS backend: initial factor %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)init->factors[m].rows,
                           (unsigned long long)init->factors[m].cols,
                           (unsigned long long)c->dims[m], (unsigned long long)R);
        if (c->dims[m] > maxdim) maxdim = c->dims[m];
        TF_TRY(tf_matrix_alloc(&c->A[m], c->dims[m], R));
        tf_copy_parallel(c->A[m].data, init->factors[m].data, c->dims[m] * R * sizeof(double), c->threads);
        TF_TRY(TF_ALLOC(c->G[m], R * R, "Gram matrix"));
    }
    TF_TRY(TF_ALLOC(c->V, R * R, "Hadamard of Grams"));
    TF_TRY(TF_ALLOC(c->lambda, R, "lambda"));
    for (uint64_t r = 0; r < R; ++r) c->lambda[r] = 1.0;
    TF_TRY(TF_ALLOC(c->M, maxdim * R, "MTTKRP output"));
    c->m_mode = c->order;
    return TF_OK;
}

static tf_status cpu_mttkrp(void *ctx, uint32_t mode)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, mode));
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
    /* a rank's shard counts its rows from lo: its MTTKRP writes them alone */
    tf_matrix out = {hi - lo, c->rank, c->M + lo * c->rank};
    c->m_mode = c->order;
    tf_plan *p = c->dist ? c->shard[mode] : c->plan;
    if (hi > lo) TF_TRY(p->ops->mttkrp(p->impl, mode, c->A, &out)); /* shapes are the backend's own */
    c->m_mode = mode;
    return TF_OK;
}

/* AO-ADMM's update of this process's rows of A_mode (V holds the Hadamard
 * product of the other Grams). A mode without a proximal operator is the
 * closed-form ridge solve A = M (V + l2 I)^-1 (ALS's when l2 = 0). Else the
 * ADMM iterations (cpu/admm.h) from the warm start H = A diag(lambda), U =
 * U diag(lambda): the model is [[lambda; A_1..A_N]] with every factor but
 * this one normalised, so the new factor carries lambda; on the mode's
 * first update from the least-squares solution (cold). */
static tf_status admm_update(cpu_cpd *c, uint32_t mode, const tf_cpd_update *u, uint64_t lo, uint64_t hi,
                             tf_cpd_step_report *rep)
{
    const uint64_t R = c->rank, n = hi - lo;
    const tf_cpd_constraint *k = &u->mode[mode];
    for (uint64_t r = 0; r < R; ++r) c->V[r * R + r] += k->l2;
    double *H = c->A[mode].data + lo * R;
    if (!k->nonneg && !(k->l1 > 0.0))
        return tf_dense_solve(c->M + lo * R, H, n, R, c->V, c->threads, &rep->used_pinv);
    /* the mode's first update: no ADMM state yet, and the start's factor
     * may be far from the solution's scale (random entries in [0,1) against
     * M V^-1 of a large sparse tensor: ADMM drove the whole factor to zero
     * before the solution's scale emerged, and a zero factor stays zero),
     * so it starts cold, from the least-squares solution */
    const int cold = !c->U[mode];
    if (cold) TF_TRY(TF_ALLOC(c->U[mode], n > 0 ? n * R : 1, "AO-ADMM dual variable"));
    double *U = c->U[mode];
    if (!cold) {
#pragma omp parallel for num_threads(tf_dense_team(n, R, c->threads)) schedule(static)
        for (int64_t i = 0; i < (int64_t)n; ++i)
            for (uint64_t r = 0; r < R; ++r) {
                H[(uint64_t)i * R + r] *= c->lambda[r];
                U[(uint64_t)i * R + r] *= c->lambda[r];
            }
    }
    const tf_admm_mode am = {cold, k->nonneg, k->l1, u->max_inner, u->inner_tol,
                             c->dist ? c->dist->allreduce_sum : NULL};
    return tf_dense_admm(c->M + lo * R, H, U, n, R, c->V, &am, c->threads, &rep->inner, &rep->used_pinv);
}

/* HALS's update of this process's rows of A_mode (V holds the Hadamard
 * product of the other Grams). A mode without nonneg is the closed-form
 * ridge solve A = M (V + l2 I)^-1. Else the column sweeps (cpu/hals.h) from
 * the factor as the model has it, A diag(lambda) (every other factor is
 * normalised, so the new factor carries lambda; tensorly's
 * non_negative_parafac_hals keeps its factors unnormalised and starts from
 * the factor itself: the same model, and HALS is equivariant under the
 * column scaling, so the iterates are the same). A column with V(r,r) = 0
 * is not updated (tensorly skips it) and keeps its scale: with lambda_r = 0
 * (a zero column elsewhere) it is not zeroed, as tensorly keeps it. */
static tf_status hals_update(cpu_cpd *c, uint32_t mode, const tf_cpd_update *u, uint64_t lo, uint64_t hi,
                             tf_cpd_step_report *rep)
{
    const uint64_t R = c->rank, n = hi - lo;
    const tf_cpd_constraint *k = &u->mode[mode];
    double *A = c->A[mode].data + lo * R;
    if (!k->nonneg) { /* l1 there is refused by the front end */
        for (uint64_t r = 0; r < R; ++r) c->V[r * R + r] += k->l2;
        return tf_dense_solve(c->M + lo * R, A, n, R, c->V, c->threads, &rep->used_pinv);
    }
#pragma omp parallel for num_threads(tf_dense_team(n, R, c->threads)) schedule(static)
    for (int64_t i = 0; i < (int64_t)n; ++i)
        for (uint64_t r = 0; r < R; ++r)
            if (c->V[r * R + r] != 0.0) A[(uint64_t)i * R + r] *= c->lambda[r];
    const tf_hals_mode hm = {u->hals_max_inner, u->hals_tol, k->l1, k->l2, c->dist ? c->dist->allreduce_sum : NULL};
    return tf_dense_hals(c->M + lo * R, A, A, n, R, c->V, &hm, c->threads, &rep->inner);
}

/* The update of A_mode: ALS, AO-ADMM or HALS, on this process's rows (a rank's
 * rows come out as in one process), then every rank's rows to every rank. */
static tf_status cpu_update(void *ctx, uint32_t mode, const tf_cpd_update_step *step, tf_cpd_step_report *rep)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, mode));
    if (c->m_mode != mode)
        return tf_fail(TF_ERR_ARG, "CP-ALS backend: update of mode %u without its MTTKRP", mode + 1);
    const uint64_t R = c->rank;
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
    tf_dense_hadamard((const double *const *)c->G, c->order, mode, R, c->V);
    switch (step->u->kind) {
    case TF_CPD_UPDATE_ALS:
        TF_TRY(tf_dense_solve(c->M + lo * R, c->A[mode].data + lo * R, hi - lo, R, c->V, c->threads,
                              &rep->used_pinv));
        break;
    case TF_CPD_UPDATE_AO_ADMM:
        TF_TRY(admm_update(c, mode, step->u, lo, hi, rep));
        break;
    case TF_CPD_UPDATE_HALS:
        TF_TRY(hals_update(c, mode, step->u, lo, hi, rep));
        break;
    default:
        return tf_cpd_update_unavailable(step->u, c->dist ? "CPU ranks" : "the CPU");
    }
    return c->dist ? c->dist->allgather_rows(c->A[mode].data, c->row_lo[mode], R, c->dist->round_bytes) : TF_OK;
}

/* AO-ADMM's dual of mode m (if it has one) in the normalised factor's scale,
 * as the factor (admm_update): divided by lambda. */
static void scale_dual(cpu_cpd *c, uint32_t mode)
{
    double *U = c->U[mode];
    if (!U) return;
    const uint64_t R = c->rank;
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
#pragma omp parallel for num_threads(tf_dense_team(hi - lo, R, c->threads)) schedule(static)
    for (int64_t i = 0; i < (int64_t)(hi - lo); ++i)
        for (uint64_t r = 0; r < R; ++r)
            if (c->lambda[r] > 0.0) U[(uint64_t)i * R + r] /= c->lambda[r];
}

static tf_status cpu_normalize(void *ctx, uint32_t mode, int max_norm)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, mode));
    TF_TRY(tf_dense_normalize(c->A[mode].data, c->dims[mode], c->rank,
                              max_norm ? TF_DENSE_NORM_MAX : TF_DENSE_NORM2, c->threads, c->lambda));
    scale_dual(c, mode);
    return TF_OK;
}

static tf_status cpu_gram(void *ctx, uint32_t mode)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, mode));
    return tf_dense_gram(c->A[mode].data, c->dims[mode], c->rank, c->threads, c->G[mode]);
}

/* ||K||^2 = lambda^T (Hadamard of all Grams) lambda. */
static double model_norm2_of(cpu_cpd *c)
{
    tf_dense_hadamard((const double *const *)c->G, c->order, c->order, c->rank, c->V);
    return tf_dense_quadratic(c->V, c->lambda, c->rank);
}

static tf_status cpu_fit_terms(void *ctx, uint32_t mode, double *inner, double *model_norm2)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, mode));
    if (c->m_mode != mode)
        return tf_fail(TF_ERR_ARG, "CP-ALS backend: fit of mode %u without its MTTKRP", mode + 1);
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
    TF_TRY(tf_dense_weighted_inner(c->M + lo * c->rank, c->A[mode].data + lo * c->rank, hi - lo, c->rank,
                                   c->lambda, c->threads, inner));
    if (c->dist) TF_TRY(c->dist->allreduce_sum(inner, 1));
    *model_norm2 = model_norm2_of(c);
    return TF_OK;
}

/* The dense part of ALS's mode n in a sweep (V: the Hadamard of the other
 * Grams). One process: tf_dense_als_step, two passes over the factor, the
 * fit's inner product on the last mode (fit_inner not NULL). Ranks: this
 * rank's rows solved, every rank's rows to every rank, then normalisation
 * and Gram of the whole factor in one pass after the column norms' one. */
static tf_status als_mode(cpu_cpd *c, uint32_t n, int max_norm, double *fit_inner, int *used_pinv)
{
    const uint64_t R = c->rank;
    const int norm = max_norm ? TF_DENSE_NORM_MAX : TF_DENSE_NORM2;
    tf_dense_hadamard((const double *const *)c->G, c->order, n, R, c->V);
    if (!c->dist)
        return tf_dense_als_step(c->M, c->A[n].data, c->dims[n], R, c->V, norm, c->threads, c->lambda, c->G[n],
                                 fit_inner, used_pinv);
    uint64_t lo, hi;
    my_rows(c, n, &lo, &hi);
    TF_TRY(tf_dense_solve(c->M + lo * R, c->A[n].data + lo * R, hi - lo, R, c->V, c->threads, used_pinv));
    TF_TRY(c->dist->allgather_rows(c->A[n].data, c->row_lo[n], R, c->dist->round_bytes));
    return tf_dense_normalize_gram(c->A[n].data, c->dims[n], R, norm, c->threads, c->lambda, c->G[n]);
}

/* One ALS iteration (seams/cpd.h, sweep): per mode the MTTKRP, then the
 * solve, normalisation and Gram -- on one process with the last mode's fit
 * inner product -- in two passes over the factor (als_mode: the bits of the
 * steps one by one, which read and write the 0.4 GB of factors of the 20M
 * tensor four to six times per mode, issue 48). The fused passes count as
 * dense time; the fit's time is ||K||^2 (ranks: and the inner product of
 * this rank's rows, summed over the ranks). */
static tf_status cpu_sweep(void *ctx, int max_norm, double *inner, double *model_norm2, double *t_mttkrp,
                           double *t_dense, double *t_fit, uint64_t *pinv)
{
    cpu_cpd *c = ctx;
    for (uint32_t n = 0; n < c->order; ++n) {
        double t = tf_wtime();
        TF_TRY(cpu_mttkrp(c, n));
        t_mttkrp[n] += tf_wtime() - t;
        t = tf_wtime();
        int used_pinv = 0;
        TF_TRY(als_mode(c, n, max_norm, n + 1 == c->order && !c->dist ? inner : NULL, &used_pinv));
        *pinv += (uint64_t)(used_pinv != 0);
        scale_dual(c, n);
        *t_dense += tf_wtime() - t;
    }
    const double t = tf_wtime();
    if (c->dist) TF_TRY(cpu_fit_terms(c, c->order - 1, inner, model_norm2));
    else *model_norm2 = model_norm2_of(c);
    *t_fit += tf_wtime() - t;
    return TF_OK;
}

static tf_status cpu_result(void *ctx, tf_ktensor *out)
{
    cpu_cpd *c = ctx;
    if (!c->M) return tf_fail(TF_ERR_ARG, "CP-ALS backend: init was not called");
    if (out->order != c->order || out->rank != c->rank)
        return tf_fail(TF_ERR_ARG, "CP-ALS backend: result ktensor does not match order %u rank %llu",
                       c->order, (unsigned long long)c->rank);
    for (uint32_t m = 0; m < c->order; ++m) {
        if (out->factors[m].rows != c->dims[m] || out->factors[m].cols != c->rank)
            return tf_fail(TF_ERR_ARG, "CP-ALS backend: result factor %u has the wrong shape", m + 1);
        memcpy(out->factors[m].data, c->A[m].data, c->dims[m] * c->rank * sizeof(double));
    }
    memcpy(out->lambda, c->lambda, c->rank * sizeof(double));
    return TF_OK;
}

static void cpu_destroy(void *ctx)
{
    cpu_cpd *c = ctx;
    if (!c) return;
    tf_blas_threads_restore(c->blas_threads);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_matrix_free(&c->A[m]);
        tf_free(c->G[m]);
        tf_free(c->U[m]);
    }
    tf_free(c->M);
    tf_free(c->V);
    tf_free(c->lambda);
    tf_free(c);
}

/* AO-ADMM's duals, every row: this process's rows gathered from the ranks. */
static tf_status cpu_aux_get(void *ctx, tf_matrix *aux, int *has)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, 0));
    const uint64_t R = c->rank;
    for (uint32_t m = 0; m < c->order; ++m) {
        if (!c->U[m]) continue;
        uint64_t lo, hi;
        my_rows(c, m, &lo, &hi);
        has[m] = 1;
        memcpy(aux[m].data + lo * R, c->U[m], (hi - lo) * R * sizeof(double));
        if (c->dist) TF_TRY(c->dist->allgather_rows(aux[m].data, c->row_lo[m], R, c->dist->round_bytes));
    }
    return TF_OK;
}

/* The duals aux_get gave (this process's rows of them). */
static tf_status cpu_aux_put(void *ctx, const tf_matrix *aux)
{
    cpu_cpd *c = ctx;
    TF_TRY(check_mode(c, 0));
    const uint64_t R = c->rank;
    for (uint32_t m = 0; m < c->order; ++m) {
        if (!aux[m].rows) continue;
        if (aux[m].rows != c->dims[m] || aux[m].cols != R)
            return tf_fail(TF_ERR_ARG, "CP-ALS backend: the dual of mode %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)aux[m].rows, (unsigned long long)aux[m].cols,
                           (unsigned long long)c->dims[m], (unsigned long long)R);
        uint64_t lo, hi;
        my_rows(c, m, &lo, &hi);
        tf_free(c->U[m]);
        c->U[m] = NULL;
        TF_TRY(TF_ALLOC(c->U[m], hi > lo ? (hi - lo) * R : 1, "AO-ADMM dual variable"));
        memcpy(c->U[m], aux[m].data + lo * R, (hi - lo) * R * sizeof(double));
    }
    return TF_OK;
}

static const tf_cpd_backend_ops cpu_ops = {
    .init = cpu_init,
    .mttkrp = cpu_mttkrp,
    .update = cpu_update,
    .normalize = cpu_normalize,
    .gram = cpu_gram,
    .fit_terms = cpu_fit_terms,
    .result = cpu_result,
    .destroy = cpu_destroy,
    .sweep = cpu_sweep, /* ALS's iteration; the other updates step by step */
    .aux_get = cpu_aux_get,
    .aux_put = cpu_aux_put,
};

tf_status tf_cpu_cpd_backend_create(const tf_tensor *X, const tf_cpd_opts *o, tf_plan *plan,
                                    tf_cpd_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o || !plan) return tf_fail(TF_ERR_ARG, "CPU CP-ALS backend: missing tensor, options or plan");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "CPU CP-ALS backend: rank %llu is outside 1..%u",
                       (unsigned long long)o->rank, TF_MAX_RANK);
    cpu_cpd *c = NULL;
    TF_TRY(TF_CALLOC(c, 1, "CP-ALS CPU backend"));
    c->order = X->order;
    c->rank = o->rank;
    memcpy(c->dims, X->dims, sizeof c->dims);
    c->threads = tf_resolve_threads(o->threads);
    c->m_mode = X->order;
    c->blas_threads = tf_blas_threads_pin_single(); /* restored by cpu_destroy */
    c->plan = plan;
    out->ops = &cpu_ops;
    out->ctx = c;
    snprintf(out->plan_desc, sizeof out->plan_desc, "%s", plan->desc);
    return TF_OK;
}

tf_status tf_cpu_cpd_backend_create_dist(const tf_tensor *X, const tf_cpd_opts *o, struct tf_plan *const *shard,
                                         const uint64_t *const *row_lo, const tf_dist *dist,
                                         tf_cpd_backend *out)
{
    TF_TRY(tf_cpu_cpd_backend_create(X, o, shard[0], out));
    cpu_cpd *c = out->ctx;
    c->dist = dist;
    for (uint32_t m = 0; m < X->order; ++m) {
        c->shard[m] = shard[m];
        c->row_lo[m] = row_lo[m];
    }
    snprintf(out->plan_desc, sizeof out->plan_desc, "%.80s, %d ranks", shard[0]->desc, dist->size);
    return TF_OK;
}
