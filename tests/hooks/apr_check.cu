/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the Phi pass of GPU CP-APR; see apr_check.h. */
#include "hooks/apr_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/apr/apr.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "algo/cp_apr.h"
}

extern "C" tf_status tf_gpu_check_apr_phi(const tf_tensor *X, const tf_ktensor *K, uint32_t mode, double eps,
                                          double *phi, double *kkt)
{
    if (!X || !K || mode >= X->order || K->order != X->order)
        return tf_fail(TF_ERR_ARG, "tf_gpu_check_apr_phi: bad arguments");
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    tf_context *ctx = NULL;
    TF_TRY(tf_context_create(&co, &ctx));
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.rank = K->rank;
    o.context = ctx;
    tf_cp_apr_backend be;
    tf_status s = tf_cuda_cp_apr_backend_create_impl(X, &o, &be);
    if (s != TF_OK) {
        tf_context_free(ctx);
        return s;
    }
    /* the start with lambda 1, so that begin_mode leaves B = K's factor */
    tf_ktensor start = *K;
    double *ones = (double *)malloc(K->rank * sizeof(double));
    if (!ones) s = tf_fail(TF_ERR_NOMEM, "tf_gpu_check_apr_phi: out of memory");
    for (uint64_t r = 0; ones && r < K->rank; ++r) ones[r] = 1.0;
    start.lambda = ones;
    uint64_t moved = 0;
    if (s == TF_OK) s = be.ops->init(be.ctx, &start);
    if (s == TF_OK) s = be.ops->begin_mode(be.ctx, mode, 0.0, 0.0, &moved);
    if (s == TF_OK) s = tf_gpu_apr_poison(be.ctx, mode);
    if (s == TF_OK) s = be.ops->phi(be.ctx, mode, eps, kkt);
    if (s == TF_OK) s = tf_gpu_apr_get_phi(be.ctx, mode, phi);
    be.ops->destroy(be.ctx);
    free(ones);
    tf_context_free(ctx);
    return s;
}

extern "C" tf_status tf_gpu_check_apr_streamed(const tf_tensor *X, const tf_cp_apr_opts *o, uint64_t batch,
                                               tf_ktensor *out, tf_cp_apr_report *rep)
{
    memset(out, 0, sizeof *out);
    memset(rep, 0, sizeof *rep);
    if (!X || !o || !batch) return tf_fail(TF_ERR_ARG, "tf_gpu_check_apr_streamed: bad arguments");
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    tf_context *ctx = NULL;
    TF_TRY(tf_context_create(&co, &ctx));
    tf_cp_apr_opts go = *o;
    go.context = ctx;
    tf_cp_apr_backend be;
    tf_status s = tf_gpu_apr_backend_make(X, &go, batch, &be);
    if (s == TF_OK) {
        snprintf(rep->plan, sizeof rep->plan, "%s", be.plan_desc);
        s = tf_apr_run(&be, X, &go, NULL, NULL, out, rep);
        be.ops->destroy(be.ctx);
    }
    tf_context_free(ctx);
    return s;
}
