/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR with multiplicative updates (Chi & Kolda 2012), step for step
 * pyttb's tt_cp_apr_mu, or with row-wise projected damped Newton steps
 * (Hansen, Plantenga & Kolda 2015), its tt_cp_apr_pdnr, written only against the backend vtable of
 * seams/cp_apr.h: the backend holds the factors, lambda and every mode's
 * Phi; this file owns the start, the loops and their stopping rules, the
 * timers and the log-likelihood per outer iteration, and sees only scalars
 * until the end. */
#include "algo/cp_apr.h"

#include <math.h>
#include <string.h>

#include "algo/checkpoint.h"
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

/* PDNR's start (pyttb): a factor row of all zeros gets 1e-8 in its first
 * column, so that no row subproblem starts at log 0. */
static void nonzero_rows(tf_ktensor *k)
{
    const uint64_t R = k->rank;
    for (uint32_t m = 0; m < k->order; ++m)
        for (uint64_t i = 0; i < k->dims[m]; ++i) {
            double *a = k->factors[m].data + i * R, sum = 0.0;
            for (uint64_t r = 0; r < R; ++r) sum += a[r];
            if (sum == 0.0) a[0] = 1e-8;
        }
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

/* One outer iteration of PDNR (pyttb's tt_cp_apr_pdnr): per mode the
 * weights into the mode, every row's Newton steps at tolerance row_tol
 * (at most two per row in the first iteration of an inexact run), the
 * normalisation. *converged stays 1 when no row moved. */
static tf_status outer_newton(const tf_cp_apr_backend *be, uint32_t N, const tf_cp_apr_opts *o, uint32_t it,
                              double row_tol, tf_cp_apr_iter *info, int *converged)
{
    const tf_cp_apr_backend_ops *ops = be->ops;
    void *ctx = be->ctx;
    const tf_apr_newton_params p = {o->epsdivzero, o->epsactive, o->mu0, row_tol,
                                    o->inexact && it == 1 && o->max_inner > 2 ? 2 : o->max_inner};
    *converged = 1;
    info->kkt = 0.0;
    for (uint32_t n = 0; n < N; ++n) {
        const double t = tf_wtime();
        uint64_t moved = 0;
        TF_TRY(ops->begin_mode(ctx, n, 0.0, o->kappatol, &moved));
        tf_apr_newton_stats st;
        TF_TRY(ops->row_newton(ctx, n, &p, &st));
        info->inner_iters += (uint32_t)st.steps;
        if (st.rows_changed) *converged = 0;
        if (st.kkt != st.kkt || (st.kkt > info->kkt && info->kkt == info->kkt)) info->kkt = st.kkt;
        TF_TRY(ops->end_mode(ctx, n));
        info->t_dense += tf_wtime() - t;
    }
    return TF_OK;
}

/* A checkpoint of outer iteration it (every rank takes part; rank 0
 * writes): the model as the backend holds it and, with kappa, every mode's
 * Phi (the next scooch reads it). */
static tf_status save(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o, tf_ckpt *ck,
                      uint32_t it, int converged)
{
    tf_ktensor k;
    tf_matrix aux[TF_MAX_ORDER];
    memset(aux, 0, sizeof aux);
    TF_TRY(tf_ktensor_alloc(&k, X->order, X->dims, o->rank));
    tf_status s = be->ops->result(be->ctx, &k);
    if (s == TF_OK && o->kappa > 0.0) s = tf_ckpt_aux(X->order, X->dims, o->rank, be->ops->aux_get, be->ctx, aux);
    if (s == TF_OK) s = tf_ckpt_write(ck, &k, aux, NULL, it, converged);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&aux[m]);
    tf_ktensor_free(&k);
    return s;
}

static tf_status iterate(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o, tf_ckpt *ck,
                         tf_cp_apr_report *rep)
{
    const int pdnr = o->algorithm == TF_CP_APR_PDNR;
    double row_tol = o->stoptol; /* PDNR's row tolerance (pyttb's rowsubprobStopTol) */
    for (uint32_t it = ck && ck->done ? ck->done + 1 : 1; it <= o->max_iters; ++it) {
        const double t_iter = tf_wtime();
        tf_cp_apr_iter info;
        memset(&info, 0, sizeof info);
        info.iter = it;
        int converged = 1;
        if (pdnr) {
            TF_TRY(outer_newton(be, X->order, o, it, row_tol, &info, &converged));
            if (o->inexact) { /* converged only at the final tolerance */
                row_tol = info.kkt / 100.0 > o->stoptol ? info.kkt / 100.0 : o->stoptol;
                converged = converged && row_tol <= o->stoptol;
            }
        } else {
            TF_TRY(outer(be, X->order, o, it, &info, &converged));
        }
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
        if (ck) {
            int due = 0;
            TF_TRY(tf_ckpt_due(ck, it, info.loglik, converged || (o->stop && *o->stop) || it == o->max_iters, &due));
            if (due) TF_TRY(save(be, X, o, ck, it, converged));
        }
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

tf_status tf_apr_run(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o, tf_ckpt *ck,
                     const tf_ktensor *resume, tf_ktensor *out, tf_cp_apr_report *rep)
{
    if (ck && o->kappa > 0.0 && (!be->ops->aux_get || !be->ops->aux_put))
        return tf_fail(TF_ERR_UNAVAILABLE, "cp_apr: checkpoints with kappa > 0 are not available on this backend yet "
                                           "(every mode's Phi stays on the device): --device cpu, or kappa 0");
    if (o->algorithm == TF_CP_APR_PDNR && !be->ops->row_newton)
        return tf_fail(TF_ERR_UNAVAILABLE, "cp_apr: pdnr is not available on this backend yet (--device cpu)");
    const int resumed = ck && ck->done && resume;
    tf_status s = tf_ktensor_alloc(out, X->order, X->dims, o->rank);
    int left = 1; /* iterations left to run */
    if (s == TF_OK && resumed) { /* the model as the backend held it after the checkpoint's iteration */
        tf_cp_start_given(out, resume, 0);
        rep->iters = ck->done;
        rep->loglik = ck->fits[ck->done - 1];
        rep->converged = ck->converged;
        left = !ck->converged && ck->done < o->max_iters;
    } else if (s == TF_OK) {
        if (o->init) tf_cp_start_given(out, o->init, 0);
        else tf_cp_start_random(out, o->seed);
        if (o->algorithm == TF_CP_APR_PDNR) nonzero_rows(out);
        s = normalize_start(out);
    }
    if (s == TF_OK && left) s = be->ops->init(be->ctx, out); /* every backend starts from out */
    if (s == TF_OK && left && resumed && o->kappa > 0.0) s = be->ops->aux_put(be->ctx, ck->aux);
    if (s == TF_OK && left) s = iterate(be, X, o, ck, rep);
    if (s == TF_OK && left) s = be->ops->result(be->ctx, out);
    if (s == TF_OK) s = tf_cp_arrange(out, 1); /* pyttb's normalize(sort=True, normtype=1) */
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}
