/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend of GCP (the vtable of src/seams/gcp.h): the factors, the
 * gradient, Adam's moments and their checkpoint in host memory; the
 * samples of cpu/gcp_sample.c (the fixed one drawn at creation, stream 0;
 * gradient sample t from stream t + 1), the fused pass of cpu/gcp_kernel.c.
 * On MPI ranks every rank draws every sample and evaluates the ones it owns
 * (cpu/gcp_sample.h); the loss sums and the gradient (every factor, dense)
 * are summed over the ranks, so every rank takes the same Adam steps. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "seams/gcp.h"
#include "seams/dist.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/gcp_kernel.h"

typedef struct cpu_gcp {
    uint32_t order;
    uint64_t rank, dims[TF_MAX_ORDER], nparams;
    int loss, threads;
    uint64_t seed, gnz, gz;
    double l2; /* observed-only mode's penalty: 2 l2 u added to the gradient (in adam's pass) */
    tf_gcp_samples all;      /* observed-only mode: every entry, weight 1 (when a sample asks for them all) */
    int fixed_all, grad_all; /* the fixed / gradient samples are `all` */
    tf_gcp_nzset set;
    tf_gcp_samples fixed, grad;
    /* one block of nparams doubles each, mode after mode: */
    double *u, *g, *m, *v, *u0, *m0, *v0;
    int started;
    const tf_dist *dist; /* MPI ranks, else NULL */
    tf_gcp_pass_ws ws;   /* the passes' buffers, kept between iterations */
} cpu_gcp;

static void mode_ptrs(const cpu_gcp *c, double *base, double **p)
{
    for (uint32_t n = 0; n < c->order; ++n) {
        p[n] = base;
        base += c->dims[n] * c->rank;
    }
}

static tf_status pass(cpu_gcp *c, const tf_gcp_samples *s, int want_grad, int want_f, double *f,
                      const tf_gcp_nzset *draw, uint64_t stream)
{
    if (!c->started) return tf_fail(TF_ERR_ARG, "GCP backend: init was not called");
    double *A[TF_MAX_ORDER], *G[TF_MAX_ORDER];
    mode_ptrs(c, c->u, A);
    mode_ptrs(c, c->g, G);
    const tf_gcp_pass_in in = {s, (const double *const *)A, c->dims, c->rank, c->loss, c->threads, want_f,
                               draw, c->seed, stream, &c->ws};
    return tf_cpu_gcp_pass(&in, want_grad ? G : NULL, f);
}

static tf_status cpu_save(void *ctx);

static tf_status cpu_init(void *ctx, const tf_ktensor *start)
{
    cpu_gcp *c = ctx;
    if (!start || start->order != c->order || start->rank != c->rank)
        return tf_fail(TF_ERR_ARG, "GCP backend: the start does not match order %u rank %llu", c->order,
                       (unsigned long long)c->rank);
    double *A[TF_MAX_ORDER];
    mode_ptrs(c, c->u, A);
    for (uint32_t n = 0; n < c->order; ++n) {
        if (start->factors[n].rows != c->dims[n] || start->factors[n].cols != c->rank)
            return tf_fail(TF_ERR_ARG, "GCP backend: start factor %u has the wrong shape", n + 1);
        memcpy(A[n], start->factors[n].data, c->dims[n] * c->rank * sizeof(double));
    }
    memset(c->m, 0, c->nparams * sizeof(double));
    memset(c->v, 0, c->nparams * sizeof(double));
    c->started = 1;
    return cpu_save(c);
}

static tf_status cpu_estimate(void *ctx, double *f)
{
    cpu_gcp *c = ctx;
    TF_TRY(pass(c, c->fixed_all ? &c->all : &c->fixed, 0, 1, f, NULL, 0));
    return c->dist ? c->dist->allreduce_sum(f, 1) : TF_OK;
}

static tf_status cpu_gradient(void *ctx, uint64_t iter, double *t_sample)
{
    cpu_gcp *c = ctx;
    /* drawn inside the pass, a block at a time (no sample arrays): its
     * time is the gradient's */
    *t_sample = 0.0;
    double f;
    if (c->grad_all) {
        TF_TRY(pass(c, &c->all, 1, 0, &f, NULL, 0));
    } else {
        tf_gcp_draw_setup(&c->set, c->gnz, c->gz, &c->grad);
        TF_TRY(pass(c, &c->grad, 1, 0, &f, &c->set, iter + 1));
    }
    /* the penalty's 2 l2 u (after the ranks' sum: once) is added in adam's
     * pass, which reads u anyway: two fewer passes over the parameters */
    return c->dist ? c->dist->allreduce_sum(c->g, c->nparams) : TF_OK;
}

static tf_status cpu_adam(void *ctx, double step, double beta1, double beta2, double eps, double lower)
{
    cpu_gcp *c = ctx;
    const uint64_t P = c->nparams;
    double *u = c->u, *m = c->m, *v = c->v;
    const double *g = c->g;
    const double k = 2.0 * c->l2; /* the observed mode's penalty (gradient's comment) */
    const int nt = tf_team_for_work(c->threads, (P + 4095) / 4096, 8 * P);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t e = 0; e < (int64_t)P; ++e) {
        const double ge = k > 0.0 ? g[e] + k * u[e] : g[e];
        const double me = beta1 * m[e] + (1.0 - beta1) * ge;
        const double ve = beta2 * v[e] + (1.0 - beta2) * ge * ge;
        double ue = u[e] - step * me / sqrt(ve + eps);
        m[e] = me;
        v[e] = ve;
        u[e] = ue < lower ? lower : ue;
    }
    return TF_OK;
}

static tf_status cpu_save(void *ctx)
{
    cpu_gcp *c = ctx;
    const size_t b = c->nparams * sizeof(double);
    memcpy(c->u0, c->u, b);
    memcpy(c->m0, c->m, b);
    memcpy(c->v0, c->v, b);
    return TF_OK;
}

static tf_status cpu_restore(void *ctx)
{
    cpu_gcp *c = ctx;
    const size_t b = c->nparams * sizeof(double);
    memcpy(c->u, c->u0, b);
    memcpy(c->m, c->m0, b);
    memcpy(c->v, c->v0, b);
    return TF_OK;
}

static tf_status cpu_dense_fg(void *ctx, const double *u, double *f, double *g)
{
    cpu_gcp *c = ctx;
    if (c->dist) return tf_fail(TF_ERR_UNAVAILABLE, "gcp: the dense loss mode is not available on MPI ranks");
    memcpy(c->u, u, c->nparams * sizeof(double));
    TF_TRY(pass(c, &c->fixed, 1, 1, f, NULL, 0));
    memcpy(g, c->g, c->nparams * sizeof(double));
    return TF_OK;
}

static tf_status cpu_result(void *ctx, tf_ktensor *out)
{
    cpu_gcp *c = ctx;
    double *A[TF_MAX_ORDER];
    mode_ptrs(c, c->u, A);
    for (uint32_t n = 0; n < c->order; ++n)
        memcpy(out->factors[n].data, A[n], c->dims[n] * c->rank * sizeof(double));
    for (uint64_t r = 0; r < c->rank; ++r) out->lambda[r] = 1.0;
    return TF_OK;
}

static void cpu_destroy(void *ctx)
{
    cpu_gcp *c = ctx;
    if (!c) return;
    tf_gcp_nzset_free(&c->set);
    tf_gcp_samples_free(&c->fixed);
    tf_gcp_samples_free(&c->grad);
    tf_gcp_samples_free(&c->all);
    tf_cpu_gcp_pass_ws_free(&c->ws);
    tf_free(c->u);
    tf_free(c);
}

static tf_status cpu_moments_get(void *ctx, double *m, double *v)
{
    const cpu_gcp *c = ctx;
    memcpy(m, c->m, c->nparams * sizeof(double));
    memcpy(v, c->v, c->nparams * sizeof(double));
    return TF_OK;
}

static tf_status cpu_moments_put(void *ctx, const double *m, const double *v)
{
    cpu_gcp *c = ctx;
    if (!c->started) return tf_fail(TF_ERR_ARG, "GCP backend: init was not called");
    memcpy(c->m, m, c->nparams * sizeof(double));
    memcpy(c->v, v, c->nparams * sizeof(double));
    return cpu_save(c);
}

static const tf_gcp_backend_ops cpu_ops = {cpu_init,    cpu_estimate, cpu_gradient, cpu_adam,    cpu_save,
                                           cpu_restore, cpu_dense_fg, cpu_result,   cpu_destroy, cpu_moments_get,
                                           cpu_moments_put};

tf_status tf_cpu_gcp_backend_create_observed(const tf_tensor *X, const tf_gcp_opts *o, double l2,
                                             const tf_gcp_ranks *ranks, tf_gcp_backend *out)
{
    if (o->fz || o->gz || o->dense || !(l2 >= 0.0))
        return tf_fail(TF_ERR_ARG, "GCP backend: observed-only mode draws no zeros (fz %llu, gz %llu, dense %d, "
                                   "l2 %g)", (unsigned long long)o->fz, (unsigned long long)o->gz, o->dense, l2);
    if (ranks && (ranks->keys || ranks->held || ranks->nnz != X->nnz))
        return tf_fail(TF_ERR_ARG, "GCP backend: observed-only mode on ranks takes the whole tensor on every rank");
    tf_gcp_opts oo = *o;
    const int fixed_all = o->fnz >= X->nnz, grad_all = o->gnz >= X->nnz;
    if (fixed_all) oo.fnz = 0; /* drawn from `all` instead */
    TF_TRY(tf_cpu_gcp_backend_create(X, &oo, ranks, out));
    cpu_gcp *c = out->ctx;
    c->l2 = l2;
    c->fixed_all = fixed_all;
    c->grad_all = grad_all;
    if (fixed_all || grad_all) { /* every entry once, weight 1: on ranks, the rank's own ones */
        const uint64_t P = ranks ? (uint64_t)ranks->dist->size : 1, p = ranks ? (uint64_t)ranks->dist->rank : 0;
        const uint64_t k0 = (uint64_t)((unsigned __int128)X->nnz * p / P);
        const uint64_t k1 = (uint64_t)((unsigned __int128)X->nnz * (p + 1) / P);
        const tf_status s = tf_gcp_samples_alloc(&c->all, X->order, k1 - k0);
        if (s != TF_OK) {
            cpu_destroy(c);
            memset(out, 0, sizeof *out);
            return s;
        }
        for (uint32_t n = 0; n < X->order; ++n) memcpy(c->all.ind[n], X->ind[n] + k0, (k1 - k0) * sizeof(uint32_t));
        memcpy(c->all.vals, X->vals + k0, (k1 - k0) * sizeof(double));
        c->all.n = c->all.nnz_part = k1 - k0;
        c->all.w_nz = 1.0;
    }
    if (ranks)
        snprintf(out->plan_desc, sizeof out->plan_desc, "CPU of %d MPI ranks, samples of the observed entries, "
                 "gradient summed", ranks->dist->size);
    else
        snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, samples of the observed entries, fused model + "
                 "gradient pass");
    return TF_OK;
}

tf_status tf_cpu_gcp_backend_create(const tf_tensor *X, const tf_gcp_opts *o, const tf_gcp_ranks *ranks,
                                    tf_gcp_backend *out)
{
    if (ranks && o->dense)
        return tf_fail(TF_ERR_UNAVAILABLE, "gcp: the dense loss mode is not available on MPI ranks");
    memset(out, 0, sizeof *out);
    cpu_gcp *c = NULL;
    TF_TRY(TF_ALLOC(c, 1, "GCP backend"));
    memset(c, 0, sizeof *c);
    c->order = X->order;
    c->rank = o->rank;
    c->loss = (int)o->loss;
    c->threads = o->threads;
    c->seed = o->seed;
    c->gnz = o->gnz;
    c->gz = o->gz;
    c->dist = ranks ? ranks->dist : NULL;
    for (uint32_t n = 0; n < X->order; ++n) {
        c->dims[n] = X->dims[n];
        c->nparams += X->dims[n] * o->rank;
    }
    tf_status s = TF_ALLOC(c->u, 7 * c->nparams, "GCP factors, gradient, moments and checkpoint");
    if (s == TF_OK) {
        c->g = c->u + c->nparams;
        c->m = c->g + c->nparams;
        c->v = c->m + c->nparams;
        c->u0 = c->v + c->nparams;
        c->m0 = c->u0 + c->nparams;
        c->v0 = c->m0 + c->nparams;
    }
    if (s == TF_OK && o->dense) {
        s = tf_gcp_samples_dense(X, &c->fixed);
    } else if (s == TF_OK) {
        s = ranks ? tf_gcp_nzset_build_part(X, (uint32_t)ranks->dist->rank, (uint32_t)ranks->dist->size,
                                            ranks->nnz, ranks->held, ranks->keys, &c->set)
                  : tf_gcp_nzset_build(X, &c->set);
        if (s == TF_OK) s = tf_gcp_samples_alloc(&c->fixed, X->order, o->fnz + o->fz);
        if (s == TF_OK) s = tf_gcp_samples_alloc(&c->grad, X->order, 0); /* count and weights only */
        c->grad.semi = o->sampling == TF_GCP_SEMI_STRATIFIED;
        if (s == TF_OK) s = tf_gcp_draw(&c->set, o->seed, 0, o->fnz, o->fz, o->threads, &c->fixed);
    }
    if (s != TF_OK) {
        cpu_destroy(c);
        return s;
    }
    out->ops = &cpu_ops;
    out->ctx = c;
    if (o->dense)
        snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, dense loss over all %llu entries",
                 (unsigned long long)c->fixed.n);
    else if (ranks)
        snprintf(out->plan_desc, sizeof out->plan_desc, "CPU of %d MPI ranks, %s samples (each rank its own), "
                 "gradient summed", ranks->dist->size, tf_gcp_sampling_name(o->sampling));
    else
        snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, %s samples, fused model + gradient pass",
                 tf_gcp_sampling_name(o->sampling));
    return TF_OK;
}
