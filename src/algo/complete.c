/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by alternating least squares on the observed entries, as
 * SPLATT's `complete -a als` (Smith, Park & Karypis, SC16), written only
 * against the backend vtable of seams/complete.h: per iteration every mode
 * in turn has its rows solve their regularised normal equations; then the
 * training and validation RMSE; the best model by validation RMSE is kept,
 * and the run stops after `patience` iterations without an improvement of
 * more than tol, or at max_iters. */
#include "algo/complete.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/cp_ends.h"
#include "core/alloc.h"
#include "core/error.h"

tf_status tf_complete_start(const tf_tensor *X, const tf_complete_opts *o, tf_ktensor *k)
{
    TF_TRY(tf_ktensor_alloc(k, X->order, X->dims, o->rank));
    if (o->init) {
        tf_cp_start_given(k, o->init, 1);
        return TF_OK;
    }
    tf_cp_start_random(k, o->seed);
    for (uint32_t m = 0; m < k->order; ++m) {
        double *a = k->factors[m].data;
        for (uint64_t j = 0; j < k->dims[m] * k->rank; ++j) a[j] = 2.0 * a[j] - 1.0;
    }
    return TF_OK;
}

typedef struct run_state {
    const tf_complete_backend *be;
    const tf_complete_opts *o;
    uint64_t n_train, n_val;
    double best;      /* the best stopping RMSE so far        */
    uint32_t bad;     /* iterations in a row without improving */
} run_state;

static double rmse(double sse, uint64_t n)
{
    return n ? sqrt(sse / (double)n) : NAN;
}

/* The current model's RMSEs and objective (its training error *train when
 * not NULL, as the last update computed it); keeps it when it improves.
 * Returns through *improved. */
static tf_status measure(run_state *st, const double *train, tf_complete_iter *it, int *improved)
{
    const tf_complete_backend_ops *ops = st->be->ops;
    void *ctx = st->be->ctx;
    double sse = 0.0, vsse = 0.0, fro = 0.0;
    if (train) sse = *train;
    else TF_TRY(ops->sse(ctx, TF_COMPLETE_TRAIN, &sse));
    if (st->n_val) TF_TRY(ops->sse(ctx, TF_COMPLETE_VAL, &vsse));
    TF_TRY(ops->frob_sq(ctx, &fro));
    it->train_rmse = rmse(sse, st->n_train);
    it->val_rmse = rmse(vsse, st->n_val);
    it->objective = sse + st->o->l2 * fro;
    if (!isfinite(it->objective))
        return tf_fail(TF_ERR_NUMERIC, "complete: the model is not finite after iteration %u (objective %g)",
                       it->iter, it->objective);
    const double v = st->n_val ? it->val_rmse : it->train_rmse;
    *improved = v - st->best < -st->o->tol;
    if (*improved) {
        st->best = v;
        st->bad = 0;
        TF_TRY(ops->keep(ctx));
    } else {
        ++st->bad;
    }
    return TF_OK;
}

static tf_status iterate(run_state *st, tf_complete_report *rep, uint32_t N)
{
    const tf_complete_backend_ops *ops = st->be->ops;
    const tf_complete_opts *o = st->o;
    tf_complete_iter start;
    memset(&start, 0, sizeof start);
    int improved = 0;
    TF_TRY(measure(st, NULL, &start, &improved)); /* iteration 0: the start, as SPLATT's epoch 0 */
    rep->best_iter = 0;
    rep->train_rmse = start.train_rmse;
    rep->val_rmse = start.val_rmse;
    rep->objective = start.objective;
    TF_TRY(TF_ALLOC(rep->iterations, o->max_iters, "completion iterations"));
    for (uint32_t it = 1; it <= o->max_iters; ++it) {
        tf_complete_iter info;
        memset(&info, 0, sizeof info);
        info.iter = it;
        const double t0 = tf_wtime();
        double train_sse = 0.0; /* from the last mode's update */
        for (uint32_t n = 0; n < N; ++n) TF_TRY(ops->update(st->be->ctx, n, o->l2, n + 1 == N ? &train_sse : NULL));
        const double t1 = tf_wtime();
        TF_TRY(measure(st, &train_sse, &info, &improved));
        info.t_solve = t1 - t0;
        info.t_rmse = tf_wtime() - t1;
        info.seconds = tf_wtime() - t0;
        rep->iterations[rep->iters++] = info;
        rep->t_solve += info.t_solve;
        rep->t_rmse += info.t_rmse;
        if (improved) {
            rep->best_iter = it;
            rep->train_rmse = info.train_rmse;
            rep->val_rmse = info.val_rmse;
            rep->objective = info.objective;
        }
        if (o->callback) o->callback(&info, o->user);
        if (o->stop && *o->stop) {
            rep->stopped = 1;
            break;
        }
        if (st->bad >= o->patience) {
            rep->converged = 1;
            break;
        }
    }
    return TF_OK;
}

tf_status tf_complete_run(const tf_complete_backend *be, const tf_tensor *train, uint64_t n_val, uint64_t n_test,
                          const tf_complete_opts *o, tf_ktensor *out, tf_complete_report *rep)
{
    tf_ktensor start;
    memset(&start, 0, sizeof start);
    tf_status s = tf_complete_start(train, o, &start);
    if (s == TF_OK) s = be->ops->init(be->ctx, &start);
    tf_ktensor_free(&start);
    run_state st = {be, o, train->nnz, n_val, INFINITY, 0};
    rep->test_rmse = NAN;
    if (s == TF_OK) s = iterate(&st, rep, train->order);
    if (s == TF_OK && n_test) {
        const double t = tf_wtime();
        double sse = 0.0;
        s = be->ops->kept_sse(be->ctx, TF_COMPLETE_TEST, &sse);
        rep->test_rmse = rmse(sse, n_test);
        rep->t_test = tf_wtime() - t;
    }
    if (s == TF_OK) s = tf_ktensor_alloc(out, train->order, train->dims, o->rank);
    if (s == TF_OK) {
        for (uint64_t r = 0; r < o->rank; ++r) out->lambda[r] = 1.0;
        s = be->ops->result(be->ctx, out);
    }
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}
