/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend of CP-APR (the vtable of src/seams/cp_apr.h): per mode the
 * non-zeros grouped by that mode's index (X itself where it is so, else a
 * sorted copy), the factors, every mode's Phi and lambda in host memory;
 * the Phi pass is cpu/apr_phi.c (with a cache of the Khatri-Rao rows of the
 * mode being updated where it pays), the row steps cpu/apr_rows.c, the
 * 1-norm normalisation dense.c's.
 *
 * Distributed (several ranks, seams/dist.h; as CP-ALS's CPU ranks): rank
 * r holds, per mode, the non-zeros whose index lies in its rows [row_lo[r],
 * row_lo[r+1]), so its Phi pass is exact on those rows; it scooches,
 * updates and multiplies them alone, and in end_mode every rank's rows go
 * to every rank, after which the normalisation runs on the whole factor on
 * every rank (the same numbers everywhere, and the single process's). The
 * KKT violation is the largest over the ranks and the scooch count and the
 * log-likelihood's sum are summed, so every rank stops alike. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "seams/cp_apr.h"
#include "seams/dist.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/apr_newton.h"
#include "cpu/apr_phi.h"
#include "cpu/apr_rows.h"
#include "cpu/dense.h"

typedef struct cpu_apr {
    uint32_t order;
    uint64_t rank;
    uint64_t dims[TF_MAX_ORDER];
    int threads;
    /* per mode: the non-zeros of this process's rows grouped by the mode's
     * index; nz[m] points at X (borrowed) or at own[m] */
    const tf_tensor *nz[TF_MAX_ORDER];
    tf_tensor own[TF_MAX_ORDER];
    uint32_t levels[TF_MAX_ORDER][TF_MAX_ORDER]; /* the other modes, in the order nz[m] is sorted by */
    tf_matrix A[TF_MAX_ORDER]; /* factors, dims[m] x R (B in A[n]'s place during mode n) */
    double *Phi[TF_MAX_ORDER]; /* dims[m] x R: the last Phi of each mode (this process's rows) */
    double *lambda;            /* R */
    int started;               /* init ran                                                 */
    /* The Khatri-Rao cache (pyttb's Pi) of the mode being updated: written by
     * the mode's first Phi pass when its last subproblem took more than one
     * (each later pass then reads nnz x R doubles in order instead of the
     * other factors' rows at random: 1.7x on a scattered 5M-non-zero tensor),
     * at most cache_bytes; the same bits with or without it */
    double *pi;
    uint64_t pi_bytes, cache_bytes, pi_peak;
    uint32_t pi_mode;                   /* the mode pi holds (order: none)         */
    uint32_t passes[TF_MAX_ORDER];      /* Phi passes of the mode's subproblem     */
    uint32_t last_passes[TF_MAX_ORDER]; /* ... and of its previous one (0: none)   */
    uint64_t cached_passes, all_passes;
    const tf_dist *dist;                  /* NULL: one process                          */
    const uint64_t *row_lo[TF_MAX_ORDER]; /* distributed: rank r's rows [row_lo[r], row_lo[r+1]) */
} cpu_apr;

/* This process's rows of mode m: all of them, or its rank's range. */
static void my_rows(const cpu_apr *c, uint32_t m, uint64_t *lo, uint64_t *hi)
{
    *lo = c->dist ? c->row_lo[m][c->dist->rank] : 0;
    *hi = c->dist ? c->row_lo[m][c->dist->rank + 1] : c->dims[m];
}

static tf_status check_mode(const cpu_apr *c, uint32_t mode)
{
    if (mode >= c->order)
        return tf_fail(TF_ERR_ARG, "CP-APR backend: mode %u is outside 1..%u", mode + 1, c->order);
    if (!c->started) return tf_fail(TF_ERR_ARG, "CP-APR backend: init was not called");
    return TF_OK;
}

static tf_status cpu_init(void *ctx, const tf_ktensor *start)
{
    cpu_apr *c = ctx;
    const uint64_t R = c->rank;
    if (!start || start->order != c->order || start->rank != R || !start->lambda)
        return tf_fail(TF_ERR_ARG, "CP-APR backend: the start does not match order %u rank %llu", c->order,
                       (unsigned long long)R);
    for (uint32_t m = 0; m < c->order; ++m) {
        if (start->factors[m].rows != c->dims[m] || start->factors[m].cols != R)
            return tf_fail(TF_ERR_ARG, "CP-APR backend: start factor %u is %llu x %llu, expected %llu x %llu", m + 1,
                           (unsigned long long)start->factors[m].rows, (unsigned long long)start->factors[m].cols,
                           (unsigned long long)c->dims[m], (unsigned long long)R);
        if (!c->A[m].data) TF_TRY(tf_matrix_alloc(&c->A[m], c->dims[m], R));
        memcpy(c->A[m].data, start->factors[m].data, c->dims[m] * R * sizeof(double));
        if (!c->Phi[m]) TF_TRY(TF_ALLOC(c->Phi[m], c->dims[m] * R, "CP-APR Phi")); /* dims, R >= 1 */
        memset(c->Phi[m], 0, c->dims[m] * R * sizeof(double));
    }
    if (!c->lambda) TF_TRY(TF_ALLOC(c->lambda, R, "lambda"));
    memcpy(c->lambda, start->lambda, R * sizeof(double));
    c->started = 1;
    return TF_OK;
}

static tf_status cpu_begin_mode(void *ctx, uint32_t mode, double kappa, double kappatol, uint64_t *scooched)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, mode));
    const uint64_t R = c->rank;
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
    *scooched = 0;
    if (kappa > 0.0) {
        uint64_t moved = tf_apr_scooch(c->A[mode].data, c->Phi[mode], lo, hi, R, kappa, kappatol, c->threads);
        if (c->dist) { /* a count, exact in a double up to 2^53 */
            double d = (double)moved;
            TF_TRY(c->dist->allreduce_sum(&d, 1));
            moved = (uint64_t)d;
        }
        *scooched = moved;
    }
    tf_apr_scale_columns(c->A[mode].data, c->lambda, lo, hi, R, c->threads);
    for (uint64_t r = 0; r < R; ++r) c->lambda[r] = 1.0;
    c->last_passes[mode] = c->passes[mode];
    c->passes[mode] = 0;
    c->pi_mode = c->order; /* the other factors changed since it was made */
    return TF_OK;
}

/* The pass of mode `mode` reads the cache (it holds the mode), writes it
 * (it fits, and the mode's last subproblem took more than one pass or
 * there was none), or neither. */
static void choose_cache(cpu_apr *c, uint32_t mode, tf_apr_phi_in *in)
{
    if (c->pi_mode == mode) {
        in->pi = c->pi;
        return;
    }
    const uint64_t need = c->nz[mode]->nnz * c->rank * sizeof(double);
    if (!need || need > c->cache_bytes || c->last_passes[mode] == 1) return;
    if (c->pi_bytes < need) {
        tf_free(c->pi);
        c->pi = NULL;
        c->pi_bytes = 0;
        if (TF_ALLOC(c->pi, need / sizeof(double), "CP-APR Khatri-Rao cache") != TF_OK) {
            tf_clear_error(); /* no room: the passes build the rows, as without a cache */
            return;
        }
        c->pi_bytes = need;
        if (need > c->pi_peak) c->pi_peak = need;
    }
    in->pi_store = c->pi;
}

static tf_status cpu_phi(void *ctx, uint32_t mode, double epsdivzero, double *kkt)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, mode));
    const double *A[TF_MAX_ORDER];
    for (uint32_t m = 0; m < c->order; ++m) A[m] = c->A[m].data;
    tf_apr_phi_in in = {c->nz[mode], mode, c->levels[mode], A, c->rank, epsdivzero, 0, 0, c->threads, NULL, NULL};
    my_rows(c, mode, &in.row_lo, &in.row_hi);
    choose_cache(c, mode, &in);
    ++c->passes[mode];
    ++c->all_passes;
    c->cached_passes += in.pi != NULL;
    TF_TRY(tf_cpu_apr_phi(&in, c->Phi[mode], kkt));
    if (in.pi_store) c->pi_mode = mode;
    return c->dist ? c->dist->allreduce_max(kkt, 1) : TF_OK;
}

static tf_status cpu_multiply(void *ctx, uint32_t mode)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, mode));
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
    tf_apr_multiply(c->A[mode].data, c->Phi[mode], lo, hi, c->rank, c->threads);
    return TF_OK;
}

static tf_status cpu_end_mode(void *ctx, uint32_t mode)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, mode));
    if (c->dist)
        TF_TRY(c->dist->allgather_rows(c->A[mode].data, c->row_lo[mode], c->rank, c->dist->round_bytes));
    return tf_dense_normalize(c->A[mode].data, c->dims[mode], c->rank, TF_DENSE_NORM1, c->threads, c->lambda);
}

static tf_status cpu_loglik(void *ctx, double *ll)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, 0));
    const uint64_t R = c->rank;
    const double *A[TF_MAX_ORDER];
    for (uint32_t m = 0; m < c->order; ++m) A[m] = c->A[m].data;
    /* mode 1's non-zeros: every one is in exactly one rank's shard of it */
    const tf_apr_phi_in in = {c->nz[0], 0, c->levels[0], A, R, 0.0, 0, 0, c->threads, NULL, NULL};
    double data = 0.0;
    TF_TRY(tf_cpu_apr_logdot(&in, c->lambda, &data));
    if (c->dist) TF_TRY(c->dist->allreduce_sum(&data, 1));
    /* the model's sum: sum_r lambda_r prod_n (column sum r of A_n) */
    double *sums = NULL, *prod = NULL;
    TF_TRY(TF_ALLOC(sums, 2 * R, "CP-APR column sums"));
    prod = sums + R;
    tf_status s = TF_OK;
    for (uint64_t r = 0; r < R; ++r) prod[r] = c->lambda[r];
    for (uint32_t m = 0; m < c->order && s == TF_OK; ++m) {
        s = tf_dense_column_abs_sums(c->A[m].data, c->dims[m], R, c->threads, sums);
        for (uint64_t r = 0; s == TF_OK && r < R; ++r) prod[r] *= sums[r];
    }
    double model = 0.0;
    for (uint64_t r = 0; r < R; ++r) model += prod[r];
    tf_free(sums);
    *ll = data - model;
    return s;
}

static tf_status cpu_result(void *ctx, tf_ktensor *out)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, 0));
    if (out->order != c->order || out->rank != c->rank)
        return tf_fail(TF_ERR_ARG, "CP-APR backend: the result does not match order %u rank %llu", c->order,
                       (unsigned long long)c->rank);
    for (uint32_t m = 0; m < c->order; ++m) {
        if (out->factors[m].rows != c->dims[m] || out->factors[m].cols != c->rank)
            return tf_fail(TF_ERR_ARG, "CP-APR backend: result factor %u has the wrong shape", m + 1);
        memcpy(out->factors[m].data, c->A[m].data, c->dims[m] * c->rank * sizeof(double));
    }
    memcpy(out->lambda, c->lambda, c->rank * sizeof(double));
    return TF_OK;
}

static void cpu_report(void *ctx, tf_cp_apr_report *rep)
{
    const cpu_apr *c = ctx;
    rep->cache_bytes = c->pi_peak;
    rep->cached_passes = c->cached_passes;
    rep->passes = c->all_passes;
}

static void cpu_destroy(void *ctx)
{
    cpu_apr *c = ctx;
    if (!c) return;
    tf_free(c->pi);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_tensor_free(&c->own[m]);
        tf_matrix_free(&c->A[m]);
        tf_free(c->Phi[m]);
    }
    tf_free(c->lambda);
    tf_free(c);
}

/* Every mode's last Phi, every row (this process's rows gathered from the ranks). */
static tf_status cpu_aux_get(void *ctx, tf_matrix *aux, int *has)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, 0));
    const uint64_t R = c->rank;
    for (uint32_t m = 0; m < c->order; ++m) {
        uint64_t lo, hi;
        my_rows(c, m, &lo, &hi);
        has[m] = 1;
        memset(aux[m].data, 0, c->dims[m] * R * sizeof(double));
        memcpy(aux[m].data + lo * R, c->Phi[m] + lo * R, (hi - lo) * R * sizeof(double));
        if (c->dist) TF_TRY(c->dist->allgather_rows(aux[m].data, c->row_lo[m], R, c->dist->round_bytes));
    }
    return TF_OK;
}

static tf_status cpu_aux_put(void *ctx, const tf_matrix *aux)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, 0));
    for (uint32_t m = 0; m < c->order; ++m) {
        if (!aux[m].rows) continue;
        if (aux[m].rows != c->dims[m] || aux[m].cols != c->rank)
            return tf_fail(TF_ERR_ARG, "CP-APR backend: the Phi of mode %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)aux[m].rows, (unsigned long long)aux[m].cols,
                           (unsigned long long)c->dims[m], (unsigned long long)c->rank);
        memcpy(c->Phi[m], aux[m].data, c->dims[m] * c->rank * sizeof(double));
    }
    return TF_OK;
}

static tf_status cpu_row_newton(void *ctx, uint32_t mode, const tf_apr_newton_params *p, tf_apr_newton_stats *st)
{
    cpu_apr *c = ctx;
    TF_TRY(check_mode(c, mode));
    const double *A[TF_MAX_ORDER];
    for (uint32_t m = 0; m < c->order; ++m) A[m] = c->A[m].data;
    tf_apr_newton_in in = {c->nz[mode], mode, A, c->rank, 0, 0, c->threads};
    my_rows(c, mode, &in.row_lo, &in.row_hi);
    TF_TRY(tf_cpu_apr_newton(&in, p, c->A[mode].data, st));
    if (!c->dist) return TF_OK;
    double sums[3] = {(double)st->steps, (double)st->rows_changed, (double)st->evals}; /* exact below 2^53 */
    TF_TRY(c->dist->allreduce_max(&st->kkt, 1));
    TF_TRY(c->dist->allreduce_sum(sums, 3));
    st->steps = (uint64_t)sums[0];
    st->rows_changed = (uint64_t)sums[1];
    st->evals = (uint64_t)sums[2];
    return TF_OK;
}

static const tf_cp_apr_backend_ops cpu_ops = {
    .row_newton = cpu_row_newton,
    .init = cpu_init,
    .begin_mode = cpu_begin_mode,
    .phi = cpu_phi,
    .multiply = cpu_multiply,
    .end_mode = cpu_end_mode,
    .loglik = cpu_loglik,
    .result = cpu_result,
    .destroy = cpu_destroy,
    .report = cpu_report,
    .aux_get = cpu_aux_get,
    .aux_put = cpu_aux_put,
};

/* The other modes of m in increasing order (X's own order, as a canonical
 * X is sorted), or by increasing length (levels of the sort, as CSF orders
 * them: the shorter a mode, the more non-zeros share its index and so the
 * product of its row with those before it in the Phi pass). */
static void other_modes(const cpu_apr *c, uint32_t m, int by_length, uint32_t *lev)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < c->order; ++k)
        if (k != m) lev[n++] = k;
    for (uint32_t a = 1; by_length && a < n; ++a) /* insertion sort, stable */
        for (uint32_t b = a; b > 0 && c->dims[lev[b]] < c->dims[lev[b - 1]]; --b) {
            const uint32_t t = lev[b];
            lev[b] = lev[b - 1];
            lev[b - 1] = t;
        }
}

/* Mode m's copy t sorted by m, then by its levels. */
static tf_status group_by(cpu_apr *c, tf_tensor *t, uint32_t m)
{
    uint32_t order[TF_MAX_ORDER];
    other_modes(c, m, 1, c->levels[m]);
    order[0] = m;
    memcpy(order + 1, c->levels[m], (c->order - 1) * sizeof *order);
    return tf_tensor_sort(t, order);
}

static tf_status create(const tf_tensor *X, const tf_cp_apr_opts *o, tf_cp_apr_backend *out, cpu_apr **made)
{
    memset(out, 0, sizeof *out);
    *made = NULL;
    if (!X || !o) return tf_fail(TF_ERR_ARG, "CPU CP-APR backend: missing tensor or options");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "CPU CP-APR backend: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    cpu_apr *c = NULL;
    TF_TRY(TF_CALLOC(c, 1, "CP-APR CPU backend"));
    c->order = X->order;
    c->rank = o->rank;
    memcpy(c->dims, X->dims, sizeof c->dims);
    c->threads = tf_resolve_threads(o->threads);
    c->cache_bytes = o->cache_bytes; /* resolved by the front end (no AUTO here) */
    c->pi_mode = c->order;
    out->ops = &cpu_ops;
    out->ctx = c;
    *made = c;
    return TF_OK;
}

tf_status tf_cpu_cp_apr_backend_create(const tf_tensor *X, const tf_cp_apr_opts *o, tf_cp_apr_backend *out)
{
    cpu_apr *c;
    TF_TRY(create(X, o, out, &c));
    uint32_t copies = 0;
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        if (tf_cpu_apr_grouped(X, m, c->threads)) { /* X as it is (a canonical X: mode 1) */
            c->nz[m] = X;
            other_modes(c, m, 0, c->levels[m]);
            continue;
        }
        s = tf_tensor_copy(X, &c->own[m]);
        if (s == TF_OK) s = group_by(c, &c->own[m], m);
        c->nz[m] = &c->own[m];
        ++copies;
    }
    if (s != TF_OK) {
        cpu_destroy(c);
        memset(out, 0, sizeof *out);
        return s;
    }
    snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, the non-zeros by each mode's rows (%u sorted cop%s)",
             copies, copies == 1 ? "y" : "ies");
    return TF_OK;
}

tf_status tf_cpu_cp_apr_backend_create_dist(const tf_tensor *X, const tf_cp_apr_opts *o, tf_tensor *shard,
                                            const uint64_t *const *row_lo, const tf_dist *dist,
                                            tf_cp_apr_backend *out)
{
    cpu_apr *c;
    tf_status s = create(X, o, out, &c);
    if (s != TF_OK) {
        for (uint32_t m = 0; X && m < X->order; ++m) tf_tensor_free(&shard[m]);
        return s;
    }
    c->dist = dist;
    for (uint32_t m = 0; m < X->order; ++m) {
        c->own[m] = shard[m]; /* taken over: freed by cpu_destroy */
        memset(&shard[m], 0, sizeof shard[m]);
        c->nz[m] = &c->own[m];
        c->row_lo[m] = row_lo[m];
    }
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) s = group_by(c, &c->own[m], m);
    if (s != TF_OK) {
        cpu_destroy(c);
        memset(out, 0, sizeof *out);
        return s;
    }
    snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, the non-zeros by each mode's rows, %d ranks", dist->size);
    return TF_OK;
}
