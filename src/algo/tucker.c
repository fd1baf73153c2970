/* SPDX-License-Identifier: BSD-3-Clause */
/* HOOI -- the Tensor Toolbox's and pyttb's tucker_als -- written only
 * against the backend table of seams/tucker.h: the backend holds the
 * tensor, the factors, Y_(n) and the core; this file owns the random start,
 * the mode order, timers, convergence and the fit formula, and sees only
 * scalars until the end. */
#include "algo/tucker.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "algo/checkpoint.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/rng.h"

/* Every factor but skip's uniform in [0,1), one stream in mode, row, column
 * order: the same seed gives the same start on every machine and thread count. */
static tf_status random_start(const tf_tensor *X, const tf_tucker_opts *o, uint32_t skip, tf_matrix *f)
{
    tf_rng rng;
    tf_rng_seed(&rng, o->seed);
    for (uint32_t m = 0; m < X->order; ++m) {
        if (m == skip) continue;
        TF_TRY(tf_matrix_alloc(&f[m], X->dims[m], o->ranks[m]));
        for (uint64_t e = 0; e < X->dims[m] * o->ranks[m]; ++e) f[m].data[e] = tf_rng_uniform(&rng);
    }
    return TF_OK;
}

static tf_status add_iter(tf_tucker_report *rep, const tf_tucker_iter *it, uint32_t *cap)
{
    if (rep->iters == *cap) {
        const uint32_t c = *cap ? 2 * *cap : 64;
        tf_tucker_iter *p = realloc(rep->iterations, c * sizeof *p);
        if (!p) return tf_fail(TF_ERR_NOMEM, "tucker: out of memory for the iterations' report");
        rep->iterations = p;
        *cap = c;
    }
    rep->iterations[rep->iters++] = *it;
    return TF_OK;
}

/* A checkpoint of iteration it: the factors and the core as the backend holds them. */
static tf_status save(const tf_tucker_backend *be, const tf_tensor *X, const tf_tucker_opts *o, tf_ckpt *ck,
                      uint32_t it, int converged)
{
    tf_ttensor t;
    TF_TRY(tf_ttensor_alloc(&t, X->order, X->dims, o->ranks));
    tf_status s = be->ops->result(be->ctx, &t);
    if (s == TF_OK) s = tf_ckpt_write(ck, NULL, NULL, &t, it, converged);
    tf_ttensor_free(&t);
    return s;
}

static tf_status iterate(const tf_tucker_backend *be, const tf_tensor *X, const tf_tucker_opts *o,
                         const uint32_t *order, double normx2, tf_ckpt *ck, tf_tucker_report *rep)
{
    const tf_tucker_backend_ops *ops = be->ops;
    void *ctx = be->ctx;
    const uint32_t N = X->order;
    const double normx = sqrt(normx2);
    double fit_old = 0.0;
    uint32_t cap = 0, first = 1;
    if (ck && ck->done) { /* a resumed run: the checkpoint's iterations (their times unknown: 0) */
        for (uint32_t i = 0; i < ck->done; ++i) {
            const tf_tucker_iter info = {i + 1, ck->fits[i], ck->fits[i] - fit_old, 0.0, 0.0, 0.0, 0.0};
            TF_TRY(add_iter(rep, &info, &cap));
            fit_old = ck->fits[i];
        }
        rep->fit = fit_old;
        rep->converged = ck->converged;
        first = ck->done + 1;
        if (ck->converged) return TF_OK;
    }
    for (uint32_t it = first; it <= o->max_iters; ++it) {
        const double t_iter = tf_wtime();
        double t_ttmc = 0.0, t_svd = 0.0;
        for (uint32_t j = 0; j < N; ++j) {
            const uint32_t n = order[j];
            double t = tf_wtime();
            TF_TRY(ops->ttmc(ctx, n));
            const double dt = tf_wtime() - t;
            rep->t_ttmc[n] += dt;
            t_ttmc += dt;
            t = tf_wtime();
            TF_TRY(ops->leading(ctx, n, &rep->svd_method[n]));
            t_svd += tf_wtime() - t;
        }
        rep->t_svd += t_svd;
        double t = tf_wtime(), g2 = 0.0;
        TF_TRY(ops->core(ctx, order[N - 1], &g2));
        /* pyttb's tucker_als: sqrt(abs(normX^2 - core.norm()^2)) */
        const double fit = 1.0 - sqrt(fabs(normx2 - g2)) / normx;
        const double t_core = tf_wtime() - t;
        rep->t_core += t_core;
        if (!isfinite(fit))
            return tf_fail(TF_ERR_NUMERIC, "tucker: iteration %u: the fit is not finite (||G||^2 = %g)", it, g2);
        rep->fit = fit;
        const tf_tucker_iter info = {it, fit, fit - fit_old, tf_wtime() - t_iter, t_ttmc, t_svd, t_core};
        TF_TRY(add_iter(rep, &info, &cap));
        if (o->callback) o->callback(&info, o->user);
        const int stopped = o->stop && *o->stop, converged = fabs(fit - fit_old) < o->tol;
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

tf_status tf_hooi_run(const tf_tucker_backend *be, const tf_tensor *X, const tf_tucker_opts *o, const uint32_t *order,
                      double normx2, const tf_matrix *start, tf_ckpt *ck, tf_ttensor *out, tf_tucker_report *rep)
{
    tf_matrix drawn[TF_MAX_ORDER];
    memset(drawn, 0, sizeof drawn);
    tf_status s = TF_OK;
    if (!start) {
        s = random_start(X, o, order[0], drawn);
        start = drawn;
    }
    /* a resumed run with nothing left computes the last mode's factor and the
     * core again from the others, as its last iteration did */
    const int nothing = ck && ck->done && (ck->converged || ck->done >= o->max_iters);
    const uint32_t last = order[X->order - 1];
    if (s == TF_OK) s = be->ops->init(be->ctx, start, nothing ? last : order[0]);
    for (uint32_t m = 0; m < X->order; ++m) tf_matrix_free(&drawn[m]);
    if (s == TF_OK) s = iterate(be, X, o, order, normx2, ck, rep);
    if (s == TF_OK && nothing) {
        double g2 = 0.0;
        s = be->ops->ttmc(be->ctx, last);
        if (s == TF_OK) s = be->ops->leading(be->ctx, last, &rep->svd_method[last]);
        if (s == TF_OK) s = be->ops->core(be->ctx, last, &g2);
    }
    if (s == TF_OK) s = tf_ttensor_alloc(out, X->order, X->dims, o->ranks);
    if (s == TF_OK) s = be->ops->result(be->ctx, out);
    if (s != TF_OK) tf_ttensor_free(out);
    return s;
}
