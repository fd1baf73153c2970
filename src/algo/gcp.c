/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP-Adam (Kolda & Hong, SIMODS 2020), step for step GenTen's gcp-sgd with
 * the Adam step, written only against the backend vtable of seams/gcp.h:
 * epochs of epoch_iters iterations, each a fresh gradient sample and an
 * Adam step of size rate sqrt(1 - b2^t) / (1 - b1^t); after an epoch the
 * fixed sample's loss estimate against the last good one: higher is a
 * failed epoch -- the factors and moments restored from the checkpoint, the
 * bias corrections wound back by the epoch's iterations, the rate times
 * decay -- and more than max_fails failed epochs end the run. */
#include "algo/gcp.h"

#include <math.h>
#include <string.h>

#include "algo/cp_ends.h"
#include "core/alloc.h"
#include "core/error.h"

/* ||K||_F^2 = sum_{r,s} prod_n (A_n^T A_n)(r, s), lambda ones. */
static tf_status model_norm2(const tf_ktensor *k, double *out)
{
    const uint64_t R = k->rank;
    double *h = NULL, *gram = NULL;
    TF_TRY(TF_ALLOC(h, 2 * R * R, "GCP start Gram matrices"));
    gram = h + R * R;
    for (uint64_t e = 0; e < R * R; ++e) h[e] = 1.0;
    for (uint32_t n = 0; n < k->order; ++n) {
        const double *a = k->factors[n].data;
        memset(gram, 0, R * R * sizeof(double));
        for (uint64_t i = 0; i < k->dims[n]; ++i)
            for (uint64_t r = 0; r < R; ++r)
                for (uint64_t s = 0; s < R; ++s) gram[r * R + s] += a[i * R + r] * a[i * R + s];
        for (uint64_t e = 0; e < R * R; ++e) h[e] *= gram[e];
    }
    double sum = 0.0;
    for (uint64_t e = 0; e < R * R; ++e) sum += h[e];
    tf_free(h);
    *out = sum;
    return TF_OK;
}

/* The random start, every factor scaled by (||X|| / ||K||)^(1/N) so that
 * the model's norm is the tensor's (GenTen scales its start so too). */
static tf_status scale_start(tf_ktensor *k, double x)
{
    double k2 = 0.0;
    TF_TRY(model_norm2(k, &k2));
    if (!(k2 > 0.0) || !(x > 0.0) || !isfinite(k2)) return TF_OK;
    const double f = pow(x / sqrt(k2), 1.0 / k->order);
    for (uint32_t n = 0; n < k->order; ++n)
        for (uint64_t e = 0; e < k->dims[n] * k->rank; ++e) k->factors[n].data[e] *= f;
    return TF_OK;
}

tf_status tf_gcp_adam_epoch(const tf_gcp_backend *be, tf_gcp_adam *a, tf_gcp_epoch *info)
{
    const tf_gcp_backend_ops *ops = be->ops;
    for (uint32_t i = 0; i < a->epoch_iters; ++i, ++a->iter) {
        double ts = 0.0, t = tf_wtime();
        TF_TRY(ops->gradient(be->ctx, a->iter, &ts));
        info->t_sample += ts;
        info->t_gradient += tf_wtime() - t - ts;
        a->b1t *= a->beta1;
        a->b2t *= a->beta2;
        t = tf_wtime();
        TF_TRY(ops->adam(be->ctx, a->rate * sqrt(1.0 - a->b2t) / (1.0 - a->b1t), a->beta1, a->beta2, a->eps,
                         a->lower));
        info->t_step += tf_wtime() - t;
    }
    return TF_OK;
}

void tf_gcp_adam_undo(tf_gcp_adam *a)
{
    a->b1t /= pow(a->beta1, a->epoch_iters);
    a->b2t /= pow(a->beta2, a->epoch_iters);
    a->rate *= a->decay;
}

static tf_status epochs(const tf_gcp_backend *be, const tf_tensor *X, const tf_gcp_opts *o, tf_ckpt *ck,
                        tf_gcp_report *rep)
{
    const tf_gcp_backend_ops *ops = be->ops;
    void *ctx = be->ctx;
    const double lower = tf_gcp_loss_lower_bound(o->loss);
    double t = tf_wtime(), fprev = 0.0;
    tf_gcp_adam adam = {o->rate, o->decay, o->beta1, o->beta2, o->adam_eps, lower, o->epoch_iters, 1.0, 1.0, 0};
    uint32_t first = 1;
    if (ck && ck->done) { /* resumed: the checkpoint's moments, schedule and estimates */
        TF_TRY(tf_gcp_ckpt_resume(be, X, o, ck, &adam, rep, &fprev));
        if (rep->converged || rep->fails > o->max_fails) return TF_OK; /* it had ended */
        first = ck->done + 1;
    } else {
        TF_TRY(ops->estimate(ctx, &fprev));
        rep->t_estimate += tf_wtime() - t;
        rep->loss_initial = rep->loss_estimate = fprev;
        if (!isfinite(fprev))
            return tf_fail(TF_ERR_NUMERIC, "gcp: the loss estimate of the start is not finite (%g)", fprev);
    }
    for (uint32_t e = first; e <= o->max_epochs; ++e) {
        const double t_epoch = tf_wtime();
        tf_gcp_epoch info;
        memset(&info, 0, sizeof info);
        info.epoch = e;
        info.rate = adam.rate;
        TF_TRY(tf_gcp_adam_epoch(be, &adam, &info));
        rep->iters += o->epoch_iters;
        double f = 0.0;
        t = tf_wtime();
        TF_TRY(ops->estimate(ctx, &f));
        info.t_estimate = tf_wtime() - t;
        if (!(f <= fprev)) { /* a rise, or not a number: undo the epoch */
            info.failed = 1;
            ++rep->fails;
            TF_TRY(ops->restore(ctx));
            tf_gcp_adam_undo(&adam);
            f = fprev;
        } else {
            TF_TRY(ops->save(ctx));
            fprev = f;
        }
        info.loss_estimate = f;
        info.seconds = tf_wtime() - t_epoch;
        rep->epochs = e;
        rep->loss_estimate = f;
        rep->t_sample += info.t_sample;
        rep->t_gradient += info.t_gradient;
        rep->t_step += info.t_step;
        rep->t_estimate += info.t_estimate;
        if (o->callback) o->callback(&info, o->user);
        const int out = rep->fails > o->max_fails;
        if (!out && o->gtol > 0.0 && f < o->gtol) rep->converged = 1;
        const int stop = !out && !rep->converged && o->stop && *o->stop;
        if (ck) TF_TRY(tf_gcp_ckpt_epoch(be, X, o, ck, &adam, rep, e, f, out || rep->converged || stop || e == o->max_epochs));
        if (out || rep->converged) break;
        if (stop) {
            rep->stopped = 1;
            break;
        }
    }
    return TF_OK;
}

tf_status tf_gcp_run(const tf_gcp_backend *be, const tf_tensor *X, double xnorm, const tf_gcp_opts *o,
                     tf_ckpt *ck, const tf_ktensor *resume, tf_ktensor *out, tf_gcp_report *rep)
{
    if (ck && o->dense) return tf_fail(TF_ERR_ARG, "gcp: checkpoints are not available in the dense loss mode");
    tf_status s = tf_ktensor_alloc(out, X->order, X->dims, o->rank);
    if (s == TF_OK) {
        if (resume && ck && ck->done) { /* the factors as the backend held them (lambda ones) */
            tf_cp_start_given(out, resume, 1);
        } else if (o->init) {
            tf_cp_start_given(out, o->init, 1);
        } else {
            tf_cp_start_random(out, o->seed);
            s = scale_start(out, xnorm);
        }
    }
    uint64_t nparams = 0;
    for (uint32_t n = 0; n < X->order; ++n) nparams += X->dims[n] * o->rank;
    if (s == TF_OK) s = be->ops->init(be->ctx, out);
    if (s == TF_OK) s = o->dense ? tf_gcp_lbfgs(be, o, nparams, out, rep) : epochs(be, X, o, ck, rep);
    if (s == TF_OK) s = be->ops->result(be->ctx, out);
    if (s == TF_OK) s = tf_cp_arrange(out, 0);
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}
