/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entries to GPU GCP; see gcp_check.h. */
#include "hooks/gcp_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu/gcp/gcp.cuh"
#include "seams/cuda_module.h"

namespace {

/* The backend of X under o in a context of its own on GPU 0 (*ctx: freed by the caller). */
tf_status make(const tf_tensor *X, const tf_gcp_opts *o, tf_context **ctx, tf_gcp_backend *be)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    *ctx = NULL;
    TF_TRY(tf_context_create(&co, ctx));
    tf_gcp_opts go = *o;
    go.context = *ctx;
    go.backend = TF_BACKEND_GPU;
    const tf_status s = tf_cuda_gcp_backend_create_impl(X, &go, be);
    if (s != TF_OK) {
        tf_context_free(*ctx);
        *ctx = NULL;
    }
    return s;
}

/* A context of GPUs 0 .. gpus - 1 (freed by the caller). */
tf_status gpus_context(int gpus, tf_context **ctx)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = gpus;
    for (int i = 0; i < gpus; ++i) co.devices[i] = i;
    *ctx = NULL;
    return tf_context_create(&co, ctx);
}

} // namespace

extern "C" tf_status tf_gpu_check_gcp_draw(const tf_tensor *X, const tf_gcp_opts *o, uint64_t iter,
                                           uint32_t *const *ind, double *vals, uint64_t *n, uint64_t *nz,
                                           double *w_nz, double *w_z)
{
    if (!X || !o || !ind || !vals) return tf_fail(TF_ERR_ARG, "tf_gpu_check_gcp_draw: bad arguments");
    tf_context *ctx = NULL;
    tf_gcp_backend be;
    TF_TRY(make(X, o, &ctx, &be));
    const tf_status s = tf_gpu_gcp_draw_sample(be.ctx, iter, ind, vals, n, nz, w_nz, w_z);
    be.ops->destroy(be.ctx);
    tf_context_free(ctx);
    return s;
}

/* One step on a made backend: init from K, the estimate f and the gradient
 * (the state poisoned before each, so every entry read back was written),
 * then each GPU's gradient into g (gpus > 1: GPU d's at g + d total, total
 * the entries of one copy of the factors). */
static tf_status one_step(tf_gcp_backend &be, const tf_ktensor *K, uint64_t iter, int gpus, uint64_t total,
                          double *f, double *g)
{
    auto poison = [&]() { return gpus > 1 ? tf_gpu_gcp_multi_poison(be.ctx) : tf_gpu_gcp_poison(be.ctx); };
    double ts = 0.0;
    tf_status s = be.ops->init(be.ctx, K);
    if (s == TF_OK) s = poison();
    if (s == TF_OK) s = be.ops->estimate(be.ctx, f);
    if (s == TF_OK) s = poison();
    if (s == TF_OK) s = be.ops->gradient(be.ctx, iter, &ts);
    if (gpus > 1)
        for (int d = 0; d < gpus && s == TF_OK; ++d)
            s = tf_gpu_gcp_multi_get_gradient(be.ctx, d, g + (uint64_t)d * total);
    else if (s == TF_OK)
        s = tf_gpu_gcp_get_gradient(be.ctx, g);
    return s;
}

static uint64_t factor_entries(const tf_tensor *X, uint64_t rank)
{
    uint64_t total = 0;
    for (uint32_t n = 0; n < X->order; ++n) total += X->dims[n] * rank;
    return total;
}

extern "C" tf_status tf_gpu_check_gcp_step(const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K,
                                           uint64_t iter, double *f, double *g)
{
    if (!X || !o || !K || !f || !g) return tf_fail(TF_ERR_ARG, "tf_gpu_check_gcp_step: bad arguments");
    tf_context *ctx = NULL;
    tf_gcp_backend be;
    TF_TRY(make(X, o, &ctx, &be));
    const tf_status s = one_step(be, K, iter, 1, 0, f, g);
    be.ops->destroy(be.ctx);
    tf_context_free(ctx);
    return s;
}

extern "C" tf_status tf_gpu_check_gcp_step_multi(const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K,
                                                 uint64_t iter, int gpus, double *f, double *g, char plan[96])
{
    if (!X || !o || !K || !f || !g || gpus < 2 || gpus > TF_MAX_GPUS)
        return tf_fail(TF_ERR_ARG, "tf_gpu_check_gcp_step_multi: bad arguments");
    tf_context *ctx = NULL;
    TF_TRY(gpus_context(gpus, &ctx));
    tf_gcp_opts go = *o;
    go.context = ctx;
    go.backend = TF_BACKEND_GPU;
    tf_gcp_backend be;
    tf_status s = tf_cuda_gcp_backend_create_multi_impl(X, &go, nullptr, &be);
    if (s != TF_OK) {
        tf_context_free(ctx);
        return s;
    }
    snprintf(plan, 96, "%s", be.plan_desc);
    s = one_step(be, K, iter, gpus, factor_entries(X, o->rank), f, g);
    be.ops->destroy(be.ctx);
    tf_context_free(ctx);
    return s;
}

extern "C" tf_status tf_gpu_check_gcp_observed_step(const tf_tensor *X, const tf_gcp_opts *o, double l2,
                                                    const tf_ktensor *K, uint64_t iter, int gpus, double adam_step,
                                                    double *f, double *g, double *u, char plan[96])
{
    if (!X || !o || !K || !f || !g || !u || gpus < 1 || gpus > TF_MAX_GPUS)
        return tf_fail(TF_ERR_ARG, "tf_gpu_check_gcp_observed_step: bad arguments");
    tf_context *ctx = NULL;
    TF_TRY(gpus_context(gpus, &ctx));
    tf_gcp_opts go = *o;
    go.context = ctx;
    go.backend = TF_BACKEND_GPU;
    tf_gcp_backend be;
    tf_status s = tf_cuda_gcp_backend_create_observed_impl(X, &go, l2, gpus > 1, nullptr, &be);
    if (s != TF_OK) {
        tf_context_free(ctx);
        return s;
    }
    snprintf(plan, 96, "%s", be.plan_desc);
    s = one_step(be, K, iter, gpus, factor_entries(X, o->rank), f, g);
    if (s == TF_OK && adam_step > 0.0) {
        tf_ktensor out;
        s = tf_ktensor_alloc(&out, X->order, X->dims, o->rank);
        if (s == TF_OK) s = be.ops->adam(be.ctx, adam_step, 0.9, 0.999, 1e-8, -HUGE_VAL);
        if (s == TF_OK) s = be.ops->result(be.ctx, &out);
        for (uint32_t n = 0; n < X->order && s == TF_OK; ++n) {
            memcpy(u, out.factors[n].data, X->dims[n] * o->rank * sizeof(double));
            u += X->dims[n] * o->rank;
        }
        tf_ktensor_free(&out);
    }
    be.ops->destroy(be.ctx);
    tf_context_free(ctx);
    return s;
}
