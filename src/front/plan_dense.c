/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_plan_mttkrp_dense, front end: the operands' shapes, where each is
 * (host arrays only for plans without a dense path: CPU and multi-GPU
 * plans), host arrays as plain doubles, then the backend's dense path or
 * its host-matrix one. */
#include <stdio.h>

#include "seams/plan.h"
#include "core/alloc.h"
#include "core/error.h"
#include "front/dense_args.h"

static const char who[] = "tf_plan_mttkrp_dense";

/* Operand k: factor k (k < order) or out (k = order). */
static const tf_dense *operand(const tf_dense *factors, const tf_dense *out, uint32_t order, uint32_t k,
                               char *name, size_t len)
{
    if (k == order) {
        snprintf(name, len, "out");
        return out;
    }
    snprintf(name, len, "factor %u", k + 1);
    return &factors[k];
}

static tf_status check_operands(const tf_plan *p, uint32_t mode, const tf_dense *factors, const tf_dense *out,
                                int *gpu)
{
    const char *fix = p->backend == TF_BACKEND_CPU
                          ? "this plan runs on the CPU: pass host arrays, or build the plan for the GPU"
                          : "this plan runs on several GPUs and takes host arrays only";
    const uint64_t R = out->cols;
    char name[32];
    for (uint32_t k = 0; k <= p->order; ++k) {
        if (k == mode) continue;
        const tf_dense *X = operand(factors, out, p->order, k, name, sizeof name);
        const uint32_t m = k == p->order ? mode : k;
        TF_TRY(tf_dense_check(X, name, p->dims[m], k == p->order ? "the length of the mode" : "the length of its mode",
                              R, k == p->order ? "the rank" : "the rank: out's columns", who));
        gpu[k] = 0;
        if (p->ops->mttkrp_dense) TF_TRY(tf_dense_locate(X, name, who, &gpu[k]));
        else TF_TRY(tf_dense_check_host(X, name, who, fix));
    }
    return TF_OK;
}

tf_status tf_plan_mttkrp_dense(tf_plan *p, uint32_t mode, const tf_dense *factors, const tf_dense *out,
                               const tf_mttkrp_run_opts *ro)
{
    if (!p) return tf_fail(TF_ERR_ARG, "%s: no plan", who);
    if (mode >= p->order) return tf_fail(TF_ERR_ARG, "%s: mode %llu is outside 1..%u", who, (unsigned long long)mode + 1, p->order);
    if (!factors || !out) return tf_fail(TF_ERR_ARG, "%s: factors or out is NULL", who);
    if (out->cols == 0) return tf_fail(TF_ERR_ARG, "%s: out has 0 columns (the rank must be at least 1)", who);
    int gpu[TF_MAX_ORDER + 1];
    TF_TRY(check_operands(p, mode, factors, out, gpu));
    /* host operands as doubles with ld = cols; tmp[k] what was made for operand k */
    tf_dense use[TF_MAX_ORDER + 1] = {{0}};
    tf_matrix mat[TF_MAX_ORDER + 1] = {{0}};
    double *tmp[TF_MAX_ORDER + 1] = {NULL};
    char name[32];
    tf_status s = TF_OK;
    for (uint32_t k = 0; k <= p->order && s == TF_OK; ++k) {
        if (k == mode) continue;
        const tf_dense *X = operand(factors, out, p->order, k, name, sizeof name);
        use[k] = *X;
        if (gpu[k]) continue;
        s = tf_dense_host_matrix(X, k < p->order, &mat[k], &tmp[k]);
        use[k] = tf_dense_host(&mat[k]);
    }
    if (s == TF_OK) {
        if (p->ops->mttkrp_dense) s = p->ops->mttkrp_dense(p->impl, mode, use, &use[p->order], ro ? ro->stream : NULL);
        else s = p->ops->mttkrp(p->impl, mode, mat, &mat[p->order]);
    }
    if (s == TF_OK && tmp[p->order]) tf_dense_host_store(out, &mat[p->order]);
    for (uint32_t k = 0; k <= p->order; ++k) tf_free(tmp[k]);
    return s;
}
