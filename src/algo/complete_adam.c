/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by GCP-Adam with the Gaussian loss on the observed entries
 * only (issue 46), written against two seams: GCP's (seams/gcp.h: a backend
 * in observed-only mode draws its samples from the training entries alone,
 * weight n / s, and adds l2's gradient) runs the epochs of algo/gcp.c's
 * Adam schedule; completion's (seams/complete.h) measures each epoch's
 * model (its factors copied in), keeps the best by validation RMSE and
 * gives the test RMSE and the result, as ALS's. An epoch that raises the
 * validation RMSE (without validation entries: the fixed sample's estimate
 * of the objective) is undone and the rate decayed, as GCP's failed epochs. */
#include <math.h>
#include <string.h>

#include "algo/complete.h"
#include "algo/gcp.h"
#include "core/alloc.h"
#include "core/error.h"

typedef struct adam_state {
    const tf_gcp_backend *gb;
    const tf_complete_backend *cb;
    const tf_complete_opts *o;
    uint64_t n_train, n_val;
    tf_ktensor tmp; /* the factors on their way from gb to cb */
} adam_state;

static double rmse(double sse, uint64_t n)
{
    return n ? sqrt(sse / (double)n) : NAN;
}

/* gb's factors into cb, then the RMSEs and objective into it; *judge: the
 * failed-epoch test's value (validation RMSE, or the estimate of the
 * objective). */
static tf_status measure(adam_state *st, tf_complete_iter *it, double *judge)
{
    const tf_complete_backend_ops *ops = st->cb->ops;
    void *ctx = st->cb->ctx;
    TF_TRY(st->gb->ops->result(st->gb->ctx, &st->tmp));
    TF_TRY(ops->init(ctx, &st->tmp));
    double sse = 0.0, vsse = 0.0, fro = 0.0;
    TF_TRY(ops->sse(ctx, TF_COMPLETE_TRAIN, &sse));
    if (st->n_val) TF_TRY(ops->sse(ctx, TF_COMPLETE_VAL, &vsse));
    TF_TRY(ops->frob_sq(ctx, &fro));
    it->train_rmse = rmse(sse, st->n_train);
    it->val_rmse = rmse(vsse, st->n_val);
    it->objective = sse + st->o->l2 * fro;
    if (st->n_val) {
        *judge = it->val_rmse;
    } else {
        double f = 0.0;
        TF_TRY(st->gb->ops->estimate(st->gb->ctx, &f));
        *judge = f + st->o->l2 * fro;
    }
    return TF_OK;
}

static tf_status epochs(adam_state *st, tf_complete_report *rep)
{
    const tf_complete_opts *o = st->o;
    const tf_gcp_backend *gb = st->gb;
    void *cctx = st->cb->ctx;
    tf_complete_iter start;
    memset(&start, 0, sizeof start);
    double jprev = 0.0;
    TF_TRY(measure(st, &start, &jprev)); /* epoch 0: the start */
    if (!isfinite(start.objective) || !isfinite(jprev))
        return tf_fail(TF_ERR_NUMERIC, "complete: the start's objective is not finite (%g)", start.objective);
    double best = st->n_val ? start.val_rmse : start.train_rmse;
    TF_TRY(st->cb->ops->keep(cctx));
    rep->best_iter = 0;
    rep->train_rmse = start.train_rmse;
    rep->val_rmse = start.val_rmse;
    rep->objective = start.objective;
    TF_TRY(TF_ALLOC(rep->iterations, o->max_iters, "completion epochs"));
    tf_gcp_adam adam = {o->rate, o->decay, 0.9, 0.999, 1e-8, -HUGE_VAL, o->epoch_iters, 1.0, 1.0, 0};
    uint32_t bad = 0, fails = 0;
    for (uint32_t e = 1; e <= o->max_iters; ++e) {
        tf_complete_iter info;
        memset(&info, 0, sizeof info);
        info.iter = e;
        info.rate = adam.rate;
        tf_gcp_epoch ge;
        memset(&ge, 0, sizeof ge);
        const double t0 = tf_wtime();
        TF_TRY(tf_gcp_adam_epoch(gb, &adam, &ge));
        const double t1 = tf_wtime();
        double j = 0.0;
        TF_TRY(measure(st, &info, &j));
        if (!(j <= jprev)) { /* a rise, or not a number: undo the epoch */
            info.failed = 1;
            ++fails;
            TF_TRY(gb->ops->restore(gb->ctx));
            tf_gcp_adam_undo(&adam);
        } else {
            TF_TRY(gb->ops->save(gb->ctx));
            jprev = j;
        }
        const double v = st->n_val ? info.val_rmse : info.train_rmse;
        const int improved = !info.failed && v - best < -o->tol;
        if (improved) {
            best = v;
            bad = 0;
            TF_TRY(st->cb->ops->keep(cctx));
            rep->best_iter = e;
            rep->train_rmse = info.train_rmse;
            rep->val_rmse = info.val_rmse;
            rep->objective = info.objective;
        } else {
            ++bad;
        }
        info.t_solve = t1 - t0;
        info.t_rmse = tf_wtime() - t1;
        info.seconds = tf_wtime() - t0;
        rep->iterations[rep->iters++] = info;
        rep->t_solve += info.t_solve;
        rep->t_rmse += info.t_rmse;
        if (o->callback) o->callback(&info, o->user);
        if (o->stop && *o->stop) {
            rep->stopped = 1;
            break;
        }
        if (bad >= o->patience || fails > o->max_fails) {
            rep->converged = 1;
            break;
        }
    }
    return TF_OK;
}

tf_status tf_complete_adam_run(const tf_gcp_backend *gb, const tf_complete_backend *cb, const tf_tensor *train,
                               uint64_t n_val, uint64_t n_test, const tf_complete_opts *o, tf_ktensor *out,
                               tf_complete_report *rep)
{
    adam_state st = {gb, cb, o, train->nnz, n_val, {0}};
    memset(&st.tmp, 0, sizeof st.tmp);
    tf_status s = tf_complete_start(train, o, &st.tmp);
    if (s == TF_OK) s = gb->ops->init(gb->ctx, &st.tmp);
    rep->test_rmse = NAN;
    if (s == TF_OK) s = epochs(&st, rep);
    tf_ktensor_free(&st.tmp);
    if (s == TF_OK && n_test) {
        const double t = tf_wtime();
        double sse = 0.0;
        s = cb->ops->kept_sse(cb->ctx, TF_COMPLETE_TEST, &sse);
        rep->test_rmse = rmse(sse, n_test);
        rep->t_test = tf_wtime() - t;
    }
    if (s == TF_OK) s = tf_ktensor_alloc(out, train->order, train->dims, o->rank);
    if (s == TF_OK) {
        for (uint64_t r = 0; r < o->rank; ++r) out->lambda[r] = 1.0;
        s = cb->ops->result(cb->ctx, out);
    }
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}
