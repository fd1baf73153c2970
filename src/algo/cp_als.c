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

#include "algo/cp_ends.h"
#include "core/alloc.h"
#include "core/error.h"

/* The iterations on an initialised backend; fills rep as it goes. One loop
 * for every update kind: per mode MTTKRP, the update o->update names (ALS,
 * AO-ADMM, ...: the backend's), normalisation, Gram; the fit. */
static tf_status iterate(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o,
                         double normx2, tf_cpd_report *rep)
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

    double fit_old = 0.0;
    for (uint32_t it = 1; it <= o->max_iters; ++it) {
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
        if (o->stop && *o->stop) {
            rep->stopped = 1;
            break;
        }
        if (it > 1 && fabs(fit - fit_old) < o->tol) {
            rep->converged = 1;
            break;
        }
        fit_old = fit;
    }
    return TF_OK;
}

tf_status tf_als_run(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o, double normx2,
                     tf_ktensor *out, tf_cpd_report *rep)
{
    tf_status s = tf_ktensor_alloc(out, X->order, X->dims, o->rank);
    if (s == TF_OK) {
        if (o->init) tf_cp_start_given(out, o->init, 1);
        else tf_cp_start_random(out, o->seed);
        s = be->ops->init(be->ctx, out); /* every backend starts from out */
    }
    if (s == TF_OK) s = iterate(be, X, o, normx2, rep);
    if (s == TF_OK) s = be->ops->result(be->ctx, out);
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}

tf_status tf_als_arrange(tf_ktensor *k)
{
    return tf_cp_arrange(k, 0);
}
