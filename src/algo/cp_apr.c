/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR with multiplicative updates (Chi & Kolda 2012), step for step
 * pyttb's tt_cp_apr_mu, written only against the backend vtable of
 * seams/cp_apr.h: the backend holds the factors, lambda and every mode's
 * Phi; this file owns the start, the loops and their stopping rules, the
 * timers and the log-likelihood per outer iteration, and sees only scalars
 * until the end. */
#include "algo/cp_apr.h"

#include <math.h>
#include <string.h>

#include "algo/cp_ends.h"
#include "core/alloc.h"
#include "core/error.h"

/* pyttb's M.normalize(normtype=1) of the start, on the host: every column
 * of unit 1-norm, the norms multiplied into lambda (a zero column left, its
 * lambda 0). */
static tf_status normalize_start(tf_ktensor *k)
{
    const uint64_t R = k->rank;
    double *sum = NULL;
    TF_TRY(TF_ALLOC(sum, R, "CP-APR start column sums"));
    for (uint32_t m = 0; m < k->order; ++m) {
        double *a = k->factors[m].data;
        for (uint64_t r = 0; r < R; ++r) sum[r] = 0.0;
        for (uint64_t i = 0; i < k->dims[m]; ++i)
            for (uint64_t r = 0; r < R; ++r) sum[r] += fabs(a[i * R + r]);
        for (uint64_t r = 0; r < R; ++r) {
            k->lambda[r] *= sum[r];
            sum[r] = sum[r] > 0.0 ? 1.0 / sum[r] : 1.0;
        }
        for (uint64_t i = 0; i < k->dims[m]; ++i)
            for (uint64_t r = 0; r < R; ++r) a[i * R + r] *= sum[r];
    }
    tf_free(sum);
    return TF_OK;
}

/* One outer iteration (1-based it): per mode the scooch (from the second
 * on), the weights into the mode, up to max_inner Phi passes -- each
 * stopping at a KKT violation below stoptol, else multiplying -- and the
 * normalisation. *converged stays 1 when no mode ran a multiplication. */
static tf_status outer(const tf_cp_apr_backend *be, uint32_t N, const tf_cp_apr_opts *o, uint32_t it,
                       tf_cp_apr_iter *info, int *converged)
{
    const tf_cp_apr_backend_ops *ops = be->ops;
    void *ctx = be->ctx;
    *converged = 1;
    info->kkt = 0.0;
    for (uint32_t n = 0; n < N; ++n) {
        double t = tf_wtime();
        uint64_t moved = 0;
        TF_TRY(ops->begin_mode(ctx, n, it > 1 ? o->kappa : 0.0, o->kappatol, &moved));
        info->scooched += moved;
        info->t_dense += tf_wtime() - t;
        double kkt = 0.0;
        for (uint32_t i = 0; i < o->max_inner; ++i) {
            ++info->inner_iters;
            t = tf_wtime();
            TF_TRY(ops->phi(ctx, n, o->epsdivzero, &kkt));
            info->t_phi += tf_wtime() - t;
            if (kkt < o->stoptol) break;
            *converged = 0;
            t = tf_wtime();
            TF_TRY(ops->multiply(ctx, n));
            info->t_dense += tf_wtime() - t;
        }
        /* np.max over the modes: NaN wins */
        if (kkt != kkt || (kkt > info->kkt && info->kkt == info->kkt)) info->kkt = kkt;
        t = tf_wtime();
        TF_TRY(ops->end_mode(ctx, n));
        info->t_dense += tf_wtime() - t;
    }
    return TF_OK;
}

static tf_status iterate(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o,
                         tf_cp_apr_report *rep)
{
    for (uint32_t it = 1; it <= o->max_iters; ++it) {
        const double t_iter = tf_wtime();
        tf_cp_apr_iter info;
        memset(&info, 0, sizeof info);
        info.iter = it;
        int converged = 1;
        TF_TRY(outer(be, X->order, o, it, &info, &converged));
        const double t = tf_wtime();
        TF_TRY(be->ops->loglik(be->ctx, &info.loglik));
        info.t_loglik = tf_wtime() - t;
        if (isnan(info.loglik) || info.kkt != info.kkt)
            return tf_fail(TF_ERR_NUMERIC, "cp_apr: outer iteration %u: the %s is not a number", it,
                           info.kkt != info.kkt ? "KKT violation" : "log-likelihood");
        info.seconds = tf_wtime() - t_iter;
        rep->iters = it;
        rep->loglik = info.loglik;
        rep->kkt = info.kkt;
        rep->inner_iters += info.inner_iters;
        rep->scooched += info.scooched;
        rep->t_phi += info.t_phi;
        rep->t_dense += info.t_dense;
        rep->t_loglik += info.t_loglik;
        if (o->callback) o->callback(&info, o->user);
        if (converged) { /* pyttb: every subproblem met the tolerance at once */
            rep->converged = 1;
            break;
        }
        if (o->stop && *o->stop) {
            rep->stopped = 1;
            break;
        }
    }
    return TF_OK;
}

tf_status tf_apr_run(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o, tf_ktensor *out,
                     tf_cp_apr_report *rep)
{
    tf_status s = tf_ktensor_alloc(out, X->order, X->dims, o->rank);
    if (s == TF_OK) {
        if (o->init) tf_cp_start_given(out, o->init, 0);
        else tf_cp_start_random(out, o->seed);
        s = normalize_start(out);
    }
    if (s == TF_OK) s = be->ops->init(be->ctx, out); /* every backend starts from out */
    if (s == TF_OK) s = iterate(be, X, o, rep);
    if (s == TF_OK) s = be->ops->result(be->ctx, out);
    if (s == TF_OK) s = tf_cp_arrange(out, 1); /* pyttb's normalize(sort=True, normtype=1) */
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}
