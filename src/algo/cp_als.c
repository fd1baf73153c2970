/* SPDX-License-Identifier: BSD-3-Clause */
/* CP (Tensor Toolbox cp_als conventions), written only against the backend
 * vtable of seams/cpd.h: the backend holds the factors, Grams and MTTKRP
 * output and implements the per-mode update of each kind (ALS, AO-ADMM);
 * this file owns the initialisation, the iteration, timers, convergence and
 * the fit formula, and sees only scalars until the end. */
#include "algo/cp_als.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo/checkpoint.h"
#include "algo/cp_ends.h"
#include "core/alloc.h"
#include "core/error.h"

/* The iterations on an initialised backend; fills rep as it goes. One loop
 * for every update kind: per mode MTTKRP, the update o->update names (ALS,
 * AO-ADMM, ...: the backend's), normalisation, Gram; the fit. */
/* A checkpoint of iteration it (every rank takes part; rank 0 writes). */
static tf_status save(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o, tf_ckpt *ck, uint32_t it,
                      int converged)
{
    tf_ktensor k;
    tf_matrix aux[TF_MAX_ORDER];
    memset(aux, 0, sizeof aux);
    TF_TRY(tf_ktensor_alloc(&k, X->order, X->dims, o->rank));
    tf_status s = be->ops->result(be->ctx, &k);
    if (s == TF_OK && be->ops->aux_get) s = tf_ckpt_aux(X->order, X->dims, o->rank, be->ops->aux_get, be->ctx, aux);
    if (s == TF_OK) s = tf_ckpt_write(ck, &k, aux, NULL, it, converged);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&aux[m]);
    tf_ktensor_free(&k);
    return s;
}

static tf_status iterate(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o,
                         double normx2, tf_ckpt *ck, tf_cpd_report *rep)
{
    const tf_cpd_backend_ops *ops = be->ops;
    void *ctx = be->ctx;
    const uint32_t N = X->order;
    const tf_cpd_update *u = o->update; /* resolved by the front end */
    if (!u) return tf_fail(TF_ERR_ARG, "cpd: the update is not resolved (the front end sets it)");
    /* a backend's fused iteration is ALS's */
    const int fused = ops->sweep && u->kind == TF_CPD_UPDATE_ALS;
    double t = tf_wtime();
    for (uint32_t m = 0; m < N; ++m) TF_TRY(ops->gram(ctx, m));
    rep->t_dense += tf_wtime() - t;

    const uint32_t first = ck && ck->done ? ck->done + 1 : 1; /* a resumed run goes on after the checkpoint */
    double fit_old = first > 1 ? ck->fits[first - 2] : 0.0;
    for (uint32_t it = first; it <= o->max_iters; ++it) {
        const double t_iter = tf_wtime();
        double inner = 0.0, knorm2 = 0.0, mtt0 = 0.0;
        for (uint32_t n = 0; n < N; ++n) mtt0 += rep->t_mttkrp[n];
        const double dense0 = rep->t_dense, fit0 = rep->t_fit;
        uint32_t inner_iters = 0;
        if (fused) {
            TF_TRY(ops->sweep(ctx, it > 1, &inner, &knorm2, rep->t_mttkrp, &rep->t_dense, &rep->t_fit,
                              &rep->pinv_fallbacks));
        } else {
            for (uint32_t n = 0; n < N; ++n) {
                t = tf_wtime();
                TF_TRY(ops->mttkrp(ctx, n));
                rep->t_mttkrp[n] += tf_wtime() - t;
                t = tf_wtime();
                const tf_cpd_update_step step = {u, it};
                tf_cpd_step_report sr = {0, 0};
                TF_TRY(ops->update(ctx, n, &step, &sr));
                rep->pinv_fallbacks += (uint64_t)(sr.used_pinv != 0);
                inner_iters += sr.inner;
                TF_TRY(ops->normalize(ctx, n, it > 1));
                TF_TRY(ops->gram(ctx, n));
                rep->t_dense += tf_wtime() - t;
            }
            t = tf_wtime();
            TF_TRY(ops->fit_terms(ctx, N - 1, &inner, &knorm2));
            rep->t_fit += tf_wtime() - t;
        }
        const double res = normx2 + knorm2 - 2.0 * inner;
        const double fit = 1.0 - sqrt(res > 0.0 ? res : 0.0) / sqrt(normx2);
        if (!isfinite(fit))
            return tf_fail(TF_ERR_NUMERIC, "cpd: iteration %u: the fit is not finite "
                                           "(<X,K> = %g, ||K||^2 = %g)", it, inner, knorm2);
        rep->iters = it;
        rep->fit = fit;
        rep->inner_iters += inner_iters;
        double mtt = 0.0;
        for (uint32_t n = 0; n < N; ++n) mtt += rep->t_mttkrp[n];
        tf_cpd_iter info = {it, fit, fit - fit_old, tf_wtime() - t_iter, mtt - mtt0, rep->t_dense - dense0,
                            rep->t_fit - fit0, inner_iters};
        if (o->callback) o->callback(&info, o->user);
        const int stopped = o->stop && *o->stop, converged = it > 1 && fabs(fit - fit_old) < o->tol;
        if (ck) {
            int due = 0;
            TF_TRY(tf_ckpt_due(ck, it, fit, stopped || converged || it == o->max_iters, &due));
            if (due) TF_TRY(save(be, X, o, ck, it, converged && !stopped));
        }
        if (stopped) {
            rep->stopped = 1;
            break;
        }
        if (converged) {
            rep->converged = 1;
            break;
        }
        fit_old = fit;
    }
    return TF_OK;
}

/* A resumed run's backend state beyond init: the checkpoint's aux (AO-ADMM's
 * duals), mode 1's in the scale init's lambda folded into its factor has
 * (the update multiplies the dual by lambda as it does the factor). */
static tf_status resume_aux(const tf_cpd_backend *be, const tf_cpd_opts *o, tf_ckpt *ck)
{
    int any = 0;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) any |= ck->aux[m].rows != 0;
    if (!any) return TF_OK;
    if (!be->ops->aux_put)
        return tf_fail(TF_ERR_UNAVAILABLE, "cpd: resuming AO-ADMM is not available on this backend yet (its dual "
                                           "variables stay on the device): --device cpu");
    tf_matrix *u = &ck->aux[0];
    for (uint64_t i = 0; o->init->lambda && i < u->rows; ++i)
        for (uint64_t r = 0; r < u->cols; ++r) u->data[i * u->cols + r] *= o->init->lambda[r];
    return be->ops->aux_put(be->ctx, ck->aux);
}

tf_status tf_als_run(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o, double normx2,
                     tf_ckpt *ck, tf_ktensor *out, tf_cpd_report *rep)
{
    if (ck && o->update && o->update->kind == TF_CPD_UPDATE_AO_ADMM && !be->ops->aux_get && ck->opts->path &&
        *ck->opts->path)
        return (ck->dist ? tf_fail_shared : tf_fail)(TF_ERR_UNAVAILABLE, "cpd: checkpoints of AO-ADMM are not "
                                                     "available on this backend yet (its dual variables stay on the "
                                                     "device): --device cpu");
    const int resumed = ck && ck->done;
    if (resumed && !o->init) return tf_fail(TF_ERR_ARG, "cpd: a resumed run without the checkpoint's model");
    tf_status s = tf_ktensor_alloc(out, X->order, X->dims, o->rank);
    if (s == TF_OK && resumed) {
        rep->iters = ck->done;
        rep->fit = ck->fits[ck->done - 1];
        rep->converged = ck->converged;
        if (ck->converged || ck->done >= o->max_iters) { /* nothing left to do: the checkpoint's model */
            tf_cp_start_given(out, o->init, 0);
            return TF_OK;
        }
    }
    double t = tf_wtime();
    if (s == TF_OK) {
        if (o->init) tf_cp_start_given(out, o->init, 1);
        else tf_cp_start_random(out, o->seed);
        s = be->ops->init(be->ctx, out); /* every backend starts from out */
    }
    if (s == TF_OK && resumed) s = resume_aux(be, o, ck);
    rep->t_setup += tf_wtime() - t;
    if (s == TF_OK) s = iterate(be, X, o, normx2, ck, rep);
    t = tf_wtime();
    if (s == TF_OK) s = be->ops->result(be->ctx, out);
    rep->t_finish += tf_wtime() - t;
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}

tf_status tf_als_arrange(tf_ktensor *k)
{
    return tf_cp_arrange(k, 0);
}
