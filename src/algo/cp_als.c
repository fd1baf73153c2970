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

#include "core/alloc.h"
#include "core/error.h"
#include "core/rng.h"

/* All factors uniform in [0,1), drawn from one stream in mode, row, column
 * order: the same seed gives the same start on every machine and thread count. */
static void random_init(tf_ktensor *k, uint64_t seed)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    for (uint32_t m = 0; m < k->order; ++m) {
        double *a = k->factors[m].data;
        for (uint64_t e = 0; e < k->dims[m] * k->rank; ++e) a[e] = tf_rng_uniform(&rng);
    }
    for (uint64_t r = 0; r < k->rank; ++r) k->lambda[r] = 1.0;
}

/* The given start (checked by the front end): the factors, lambda folded
 * into the first (no lambda: ones); the model is the same, lambda is 1. */
static void given_init(tf_ktensor *k, const tf_ktensor *init)
{
    const uint64_t R = k->rank;
    for (uint32_t m = 0; m < k->order; ++m)
        memcpy(k->factors[m].data, init->factors[m].data, k->dims[m] * R * sizeof(double));
    if (init->lambda) {
        double *a = k->factors[0].data;
        for (uint64_t i = 0; i < k->dims[0]; ++i)
            for (uint64_t r = 0; r < R; ++r) a[i * R + r] *= init->lambda[r];
    }
    for (uint64_t r = 0; r < R; ++r) k->lambda[r] = 1.0;
}

/* row[r] <- row[perm[r]] through buf (R doubles). */
static void permute_row(double *row, const uint64_t *perm, uint64_t R, double *buf)
{
    memcpy(buf, row, R * sizeof *buf);
    for (uint64_t r = 0; r < R; ++r) row[r] = buf[perm[r]];
}

/* Tensor Toolbox `arrange`: every factor column scaled to unit 2-norm (the
 * norms go into lambda; a zero column makes its lambda 0), then components
 * sorted by lambda, largest first (stable, so ties keep their order). Also
 * the final finiteness check: a non-finite entry makes its column norm
 * non-finite. Row-major passes only (factors can have millions of rows). */
tf_status tf_als_arrange(tf_ktensor *k)
{
    const uint64_t R = k->rank;
    double *norm = NULL, *tmp = NULL;
    uint64_t *perm = NULL;
    tf_status s = TF_ALLOC(norm, R, "ktensor column norms");
    if (s == TF_OK) s = TF_ALLOC(perm, R, "ktensor order");
    if (s != TF_OK) goto done;
    for (uint32_t m = 0; m < k->order; ++m) {
        double *a = k->factors[m].data;
        const uint64_t I = k->dims[m];
        for (uint64_t r = 0; r < R; ++r) norm[r] = 0.0;
        for (uint64_t i = 0; i < I; ++i)
            for (uint64_t r = 0; r < R; ++r) norm[r] += a[i * R + r] * a[i * R + r];
        for (uint64_t r = 0; r < R; ++r) {
            if (!isfinite(norm[r]) || !isfinite(k->lambda[r])) {
                s = tf_fail(TF_ERR_NUMERIC, "cpd: factor %u column %llu is not finite", m + 1,
                            (unsigned long long)r + 1);
                goto done;
            }
            norm[r] = sqrt(norm[r]);
            k->lambda[r] *= norm[r];
            norm[r] = norm[r] > 0.0 ? 1.0 / norm[r] : 1.0;
        }
        for (uint64_t i = 0; i < I; ++i)
            for (uint64_t r = 0; r < R; ++r) a[i * R + r] *= norm[r];
    }
    int sorted = 1;
    for (uint64_t r = 0; r < R; ++r) perm[r] = r;
    for (uint64_t r = 1; r < R; ++r) { /* insertion sort: R is small */
        uint64_t p = perm[r], j = r;
        for (; j > 0 && k->lambda[perm[j - 1]] < k->lambda[p]; --j) perm[j] = perm[j - 1];
        perm[j] = p;
        sorted &= j == r;
    }
    if (sorted) goto done;
    s = TF_ALLOC(tmp, R, "ktensor reorder buffer");
    if (s != TF_OK) goto done;
    permute_row(k->lambda, perm, R, tmp);
    for (uint32_t m = 0; m < k->order; ++m)
        for (uint64_t i = 0; i < k->dims[m]; ++i) permute_row(k->factors[m].data + i * R, perm, R, tmp);
done:
    tf_free(norm);
    tf_free(perm);
    tf_free(tmp);
    return s;
}

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
        if (o->init) given_init(out, o->init);
        else random_init(out, o->seed);
        s = be->ops->init(be->ctx, out); /* every backend starts from out */
    }
    if (s == TF_OK) s = iterate(be, X, o, normx2, rep);
    if (s == TF_OK) s = be->ops->result(be->ctx, out);
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}
