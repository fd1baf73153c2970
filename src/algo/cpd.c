/* CP-ALS driver (Tensor Toolbox cp_als conventions), written only against
 * the backend vtable of cpd_backend.h: the backend holds the factors, Grams
 * and MTTKRP output; the driver owns initialisation, the iteration, timers,
 * convergence and the fit formula, and sees only scalars until the end. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "algo/cpd_backend.h"
#include "core/alloc.h"
#include "core/context.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"

void tf_cpd_opts_default(tf_cpd_opts *o)
{
    memset(o, 0, sizeof *o);
    o->rank = 10;
    o->max_iters = 50;
    o->tol = 1e-5;
    o->seed = TF_DEFAULT_SEED;
    o->backend = TF_BACKEND_AUTO;
    o->format = TF_FORMAT_AUTO;
    o->precision = TF_DOUBLE;
}

static tf_status check_opts(const tf_cpd_opts *o)
{
    if (o->rank < 1 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "cpd: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    if (o->max_iters < 1) return tf_fail(TF_ERR_ARG, "cpd: max_iters is 0 (expected at least 1)");
    if (!(o->tol >= 0.0) || isinf(o->tol))
        return tf_fail(TF_ERR_ARG, "cpd: tolerance %g is not a finite number >= 0", o->tol);
    if (o->threads < 0) return tf_fail(TF_ERR_ARG, "cpd: threads %d is negative", o->threads);
    if (o->backend != TF_BACKEND_AUTO && o->backend != TF_BACKEND_CPU && o->backend != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "cpd: unknown backend %d", (int)o->backend);
    if ((unsigned)o->format > TF_FORMAT_BLCO)
        return tf_fail(TF_ERR_ARG, "cpd: unknown format %d", (int)o->format);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "cpd: unknown precision %d", (int)o->precision);
    return TF_OK;
}

/* GPU when asked, or under auto when a device is present and the format
 * exists there (falling back to the CPU if the GPU backend is unavailable). */
static tf_status create_gpu_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                    tf_context **own)
{
    /* The backend borrows the context's device; without one in the
     * options, a private context lives as long as the backend (*own). */
    tf_cpd_opts go = *o;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, own));
    tf_status s = tf_cuda_cpd_backend_create(X, &go, be);
    if (s != TF_OK) {
        tf_context_free(*own);
        *own = NULL;
    }
    return s;
}

static tf_status create_backend(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *be,
                                tf_context **own)
{
    *own = NULL;
    if (o->backend == TF_BACKEND_GPU) return create_gpu_backend(X, o, be, own);
    const int gpu = o->context ? o->context->backend == TF_BACKEND_GPU : tf_gpu_count() > 0;
    if (o->backend == TF_BACKEND_AUTO && gpu &&
        (o->format == TF_FORMAT_AUTO || o->format == TF_FORMAT_COO ||
         o->format == TF_FORMAT_FCOO || o->format == TF_FORMAT_BLCO)) {
        tf_status s = create_gpu_backend(X, o, be, own);
        if (s != TF_ERR_UNAVAILABLE) return s;
        tf_clear_error();
    }
    return tf_cpu_cpd_backend_create(X, o, be);
}

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
static tf_status arrange(tf_ktensor *k)
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

/* The ALS iterations on an initialised backend; fills rep as it goes. */
static tf_status iterate(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o,
                         double normx2, tf_cpd_report *rep)
{
    const tf_cpd_backend_ops *ops = be->ops;
    void *ctx = be->ctx;
    const uint32_t N = X->order;
    double t = tf_wtime();
    for (uint32_t m = 0; m < N; ++m) TF_TRY(ops->gram(ctx, m));
    rep->t_dense += tf_wtime() - t;

    double fit_old = 0.0;
    for (uint32_t it = 1; it <= o->max_iters; ++it) {
        const double t_iter = tf_wtime();
        double inner = 0.0, knorm2 = 0.0;
        if (ops->sweep) {
            TF_TRY(ops->sweep(ctx, it > 1, &inner, &knorm2, rep->t_mttkrp, &rep->t_dense, &rep->t_fit,
                              &rep->pinv_fallbacks));
        } else {
            for (uint32_t n = 0; n < N; ++n) {
                t = tf_wtime();
                TF_TRY(ops->mttkrp(ctx, n));
                rep->t_mttkrp[n] += tf_wtime() - t;
                t = tf_wtime();
                int used_pinv = 0;
                TF_TRY(ops->solve(ctx, n, &used_pinv));
                rep->pinv_fallbacks += (uint64_t)(used_pinv != 0);
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
        tf_cpd_iter info = {it, fit, fit - fit_old, tf_wtime() - t_iter};
        if (o->callback) o->callback(&info, o->user);
        if (it > 1 && fabs(fit - fit_old) < o->tol) {
            rep->converged = 1;
            break;
        }
        fit_old = fit;
    }
    return TF_OK;
}

/* Values whose largest magnitude is 2^e with |e| <= SAFE_EXP are used as
 * they are: squares and sums of up to 2^40 of them stay well inside the
 * normal range of a float (2^-126..2^128), so the fp32 GPU path and the fit
 * terms neither under- nor overflow. Others are scaled by 2^-e. */
#define SAFE_EXP 40

/* The exponent e of the largest |value| (0 when all are zero). */
static int max_exponent(const tf_tensor *X, int threads)
{
    double amax = 0.0;
#pragma omp parallel for num_threads(tf_resolve_threads(threads)) reduction(max : amax) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) amax = fmax(amax, fabs(X->vals[k]));
    return amax > 0.0 ? ilogb(amax) : 0;
}

/* *view shares X's index arrays and gets a copy of the values times 2^-e
 * (exact: a power of two; values far below the largest may round to zero). */
static tf_status scaled_view(const tf_tensor *X, int e, int threads, tf_tensor *view, double **vals)
{
    *view = *X;
    TF_TRY(TF_ALLOC(*vals, X->nnz ? X->nnz : 1, "scaled tensor values"));
    double *v = *vals;
#pragma omp parallel for num_threads(tf_resolve_threads(threads)) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) v[k] = ldexp(X->vals[k], -e);
    view->vals = v;
    return TF_OK;
}

/* lambda *= 2^e after the run on the scaled view. */
static tf_status unscale_lambda(tf_ktensor *k, int e)
{
    for (uint64_t r = 0; r < k->rank; ++r) {
        const double l = ldexp(k->lambda[r], e);
        if (!isfinite(l))
            return tf_fail(TF_ERR_RANGE, "cpd: component %llu's weight (%g x 2^%d) exceeds the double "
                                         "range; rescale the values", (unsigned long long)r + 1,
                           k->lambda[r], e);
        k->lambda[r] = l;
    }
    return TF_OK;
}

static tf_status cpd_run(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                         double t_start);

tf_status tf_cpd(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep)
{
    const double t_start = tf_wtime();
    tf_cpd_opts defaults;
    tf_cpd_report local;
    if (!o) { tf_cpd_opts_default(&defaults); o = &defaults; }
    if (!rep) rep = &local;
    memset(rep, 0, sizeof *rep);
    if (out) memset(out, 0, sizeof *out);
    if (!X || !out) return tf_fail(TF_ERR_ARG, "tf_cpd: missing tensor or output ktensor");
    TF_TRY(check_opts(o));
    TF_TRY(tf_tensor_validate(X));
    const int e = max_exponent(X, o->threads);
    if (e >= -SAFE_EXP && e <= SAFE_EXP) return cpd_run(X, o, out, rep, t_start);
    /* CP-ALS is scale-equivariant: run on X 2^-e, then lambda *= 2^e. The
     * GPU backend gets the same view, so fp32 never sees the raw values. */
    tf_tensor view;
    double *vals = NULL;
    TF_TRY(scaled_view(X, e, o->threads, &view, &vals));
    tf_status s = cpd_run(&view, o, out, rep, t_start);
    tf_free(vals);
    if (s == TF_OK) s = unscale_lambda(out, e);
    if (s != TF_OK) tf_ktensor_free(out);
    return s;
}

/* tf_cpd on values within the safe range. */
static tf_status cpd_run(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep,
                         double t_start)
{
    const double normx2 = tf_tensor_norm2(X); /* deterministic for any thread count */
    if (!(normx2 > 0.0))
        return tf_fail(TF_ERR_ARG, "cpd: the tensor has no non-zero values (||X|| = 0), so there is "
                                   "nothing to decompose");
    if (!isfinite(normx2)) /* not reached: the values are scaled into a safe range */
        return tf_fail(TF_ERR_RANGE, "cpd: ||X||^2 overflows a double; rescale the values");

    tf_cpd_backend be;
    tf_context *own = NULL;
    double t = tf_wtime();
    TF_TRY(create_backend(X, o, &be, &own));
    rep->t_build = tf_wtime() - t;
    snprintf(rep->plan, sizeof rep->plan, "%s", be.plan_desc);

    tf_status s = tf_ktensor_alloc(out, X->order, X->dims, o->rank);
    if (s == TF_OK) {
        random_init(out, o->seed);
        s = be.ops->init(be.ctx, out);
    }
    if (s == TF_OK) s = iterate(&be, X, o, normx2, rep);
    if (s == TF_OK) s = be.ops->result(be.ctx, out);
    be.ops->destroy(be.ctx);
    tf_context_free(own); /* after the backend's device memory is gone */
    if (s == TF_OK) s = arrange(out);
    if (s != TF_OK) tf_ktensor_free(out);
    rep->t_total = tf_wtime() - t_start;
    return s;
}
