/* SPDX-License-Identifier: BSD-3-Clause */
/* Checkpoints of GCP-Adam (algo/gcp.h): after an epoch the factors (the
 * set), Adam's moments (aux: per mode m and v side by side, dims x 2R) and
 * the schedule's scalars (extra: rate, beta1^t, beta2^t, the gradient
 * samples' counter, the failed epochs, the start's estimate), every epoch's
 * estimate (fits); a resumed run puts them back, so its epochs draw the
 * same samples and take the same steps as a run never stopped. */
#include <stdio.h>
#include <string.h>

#include "algo/gcp.h"
#include "core/alloc.h"
#include "core/error.h"

/* The extra scalars, in order. */
enum { X_RATE, X_B1T, X_B2T, X_ITER, X_FAILS, X_INITIAL, X_COUNT };

void tf_gcp_ckpt_options(const tf_gcp_opts *o, char *opt, size_t len)
{
    snprintf(opt, len,
             "loss %s sampling %s samples %llu %llu fsamples %llu %llu epoch_iters %u rate %.17g decay %.17g "
             "beta1 %.17g beta2 %.17g adam_eps %.17g seed %llu",
             tf_gcp_loss_name(o->loss), tf_gcp_sampling_name(o->sampling), (unsigned long long)o->gnz,
             (unsigned long long)o->gz, (unsigned long long)o->fnz, (unsigned long long)o->fz, o->epoch_iters,
             o->rate, o->decay, o->beta1, o->beta2, o->adam_eps, (unsigned long long)o->seed);
}

static uint64_t nparams_of(const tf_tensor *X, uint64_t R)
{
    uint64_t n = 0;
    for (uint32_t m = 0; m < X->order; ++m) n += X->dims[m] * R;
    return n;
}

tf_status tf_gcp_ckpt_epoch(const tf_gcp_backend *be, const tf_tensor *X, const tf_gcp_opts *o, tf_ckpt *ck,
                            const tf_gcp_adam *a, const tf_gcp_report *rep, uint32_t epoch, double f, int last)
{
    int due = 0;
    TF_TRY(tf_ckpt_due(ck, epoch, f, last, &due));
    if (!due) return TF_OK;
    if (!be->ops->moments_get)
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: checkpoints are not available on this backend");
    const uint64_t R = o->rank, P = nparams_of(X, R);
    tf_ktensor k;
    tf_matrix aux[TF_MAX_ORDER];
    memset(aux, 0, sizeof aux);
    double *m = NULL;
    TF_TRY(tf_ktensor_alloc(&k, X->order, X->dims, R));
    tf_status s = TF_ALLOC(m, 2 * (P ? P : 1), "GCP checkpoint moments");
    if (s == TF_OK) s = be->ops->result(be->ctx, &k);
    if (s == TF_OK) s = be->ops->moments_get(be->ctx, m, m + P);
    for (uint32_t n = 0, off = 0; s == TF_OK && n < X->order; off += (uint32_t)(X->dims[n] * R), ++n) {
        s = tf_matrix_alloc(&aux[n], X->dims[n], 2 * R);
        for (uint64_t i = 0; s == TF_OK && i < X->dims[n]; ++i) {
            memcpy(aux[n].data + i * 2 * R, m + off + i * R, R * sizeof(double));
            memcpy(aux[n].data + i * 2 * R + R, m + P + off + i * R, R * sizeof(double));
        }
    }
    if (s == TF_OK) {
        ck->extra[X_RATE] = a->rate;
        ck->extra[X_B1T] = a->b1t;
        ck->extra[X_B2T] = a->b2t;
        ck->extra[X_ITER] = (double)a->iter;
        ck->extra[X_FAILS] = (double)rep->fails;
        ck->extra[X_INITIAL] = rep->loss_initial;
        ck->nextra = X_COUNT;
        s = tf_ckpt_write(ck, &k, aux, NULL, epoch, rep->converged);
    }
    for (uint32_t n = 0; n < TF_MAX_ORDER; ++n) tf_matrix_free(&aux[n]);
    tf_free(m);
    tf_ktensor_free(&k);
    return s;
}

tf_status tf_gcp_ckpt_resume(const tf_gcp_backend *be, const tf_tensor *X, const tf_gcp_opts *o, const tf_ckpt *ck,
                             tf_gcp_adam *a, tf_gcp_report *rep, double *fprev)
{
    const uint64_t R = o->rank, P = nparams_of(X, R);
    const char *stem = ck->opts->resume;
    if (ck->nextra != X_COUNT || !(ck->extra[X_ITER] >= 0.0) || !(ck->extra[X_FAILS] >= 0.0))
        return tf_fail(TF_ERR_PARSE, "%s.state: expected GCP's 'extra' line of %d numbers", stem, X_COUNT);
    for (uint32_t n = 0; n < X->order; ++n)
        if (ck->aux[n].rows != X->dims[n] || ck->aux[n].cols != 2 * R)
            return tf_fail(TF_ERR_PARSE, "%s.state: expected 'aux %u %llu %llu' (mode %u's Adam moments)", stem,
                           n + 1, (unsigned long long)X->dims[n], (unsigned long long)(2 * R), n + 1);
    if (!be->ops->moments_put)
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: checkpoints are not available on this backend");
    double *m = NULL;
    TF_TRY(TF_ALLOC(m, 2 * (P ? P : 1), "GCP resumed moments"));
    for (uint32_t n = 0, off = 0; n < X->order; off += (uint32_t)(X->dims[n] * R), ++n)
        for (uint64_t i = 0; i < X->dims[n]; ++i) {
            memcpy(m + off + i * R, ck->aux[n].data + i * 2 * R, R * sizeof(double));
            memcpy(m + P + off + i * R, ck->aux[n].data + i * 2 * R + R, R * sizeof(double));
        }
    const tf_status s = be->ops->moments_put(be->ctx, m, m + P);
    tf_free(m);
    TF_TRY(s);
    a->rate = ck->extra[X_RATE];
    a->b1t = ck->extra[X_B1T];
    a->b2t = ck->extra[X_B2T];
    a->iter = (uint64_t)ck->extra[X_ITER];
    rep->fails = (uint32_t)ck->extra[X_FAILS];
    rep->loss_initial = ck->extra[X_INITIAL];
    rep->epochs = ck->done;
    rep->iters = (uint64_t)ck->done * o->epoch_iters;
    rep->loss_estimate = *fprev = ck->fits[ck->done - 1];
    rep->converged = ck->converged;
    return TF_OK;
}
