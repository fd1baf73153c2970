/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP-Adam over several GPUs (the vtable of seams/gcp.h), GenTen's way:
 * one state of the one-GPU backend (backend.cu) per GPU of this process,
 * or, on MPI ranks, on the one GPU of this rank. Every GPU holds the whole
 * tensor, its hash set, the factors, the moments and their checkpoint (the
 * memory of one GPU's run, per GPU) and draws every sample whole -- the
 * draws are a function of (seed, iteration, entry), so every GPU's are the
 * same -- but evaluates only its part of the entries (the run's GPU p of
 * P: [n p / P, n (p + 1) / P) of the sample's n). A gradient is then every
 * GPU's partial gradient (the whole I_n x R of every mode) summed over the
 * GPUs (exec/exchange.cuh's sum: peer copies adding the GPUs' parts in GPU
 * order, or NCCL's all-reduce over GPUs and ranks), the same bits on every
 * GPU, so Adam runs alike on every GPU on the whole factors and the
 * factors stay the same everywhere without an exchange of their own (the
 * factors are small beside the tensor: uber-apr14's 49,000 parameters at
 * rank 16; Adam on all of them is a few microseconds, less than a second
 * exchange of rows would take). An estimate is the GPUs' partial losses
 * summed on the host in GPU order, then over the ranks (tf_dist). Every
 * step is queued on every GPU before anything waits; the host waits,
 * bounded (the executor's tf_exchange_wait), at every estimate and every
 * 64th gradient, so that a GPU or rank that stops answering fails the run. */
#include <stdio.h>
#include <string.h>

#include <new>

#include "gpu/exec/devset.cuh"
#include "gpu/gcp/gcp.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/dist.h"
}

#define WAIT_EVERY 64 /* gradients between bounded waits */

namespace {

struct multi_gcp {
    tf_devset set; /* this process's GPUs, the exchange */
    int n = 0;     /* set.n */
    void *part[TF_MAX_GPUS] = {nullptr};
    double *scratch[TF_MAX_GPUS] = {nullptr}; /* the sum's (peer copies) */
    uint64_t nparams = 0;
    const tf_dist *dist = nullptr;
    const tf_gcp_backend_ops *ops = nullptr; /* a state's */
    bool add_l2 = false; /* observed-only mode over several GPUs: l2's term after the sum */

    ~multi_gcp()
    {
        tf_exchange_free(&set.xchg, set.failed); /* before the states whose streams it waits on go */
        for (int g = 0; g < n; ++g) {
            if (set.gpu[g]) tf_gpu_dev_use(set.gpu[g]);
            tf_gpu_free(scratch[g]);
            if (part[g]) ops->destroy(part[g]);
        }
    }
    tf_status check(tf_status s) { return set.check(s); }
};

multi_gcp *self(void *c)
{
    return (multi_gcp *)c;
}

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    multi_gcp *m = self(ctx);
    /* every GPU at once: the start is uploaded from pageable memory, and one
     * GPU after another took twice one GPU's time (CP-ALS's 1B setup) */
    return m->set.at_once([&](int g) { return m->ops->init(m->part[g], start); });
}

tf_status op_estimate(void *ctx, double *f)
{
    multi_gcp *m = self(ctx);
    *f = 0.0;
    TF_TRY(m->set.each([&](int g) { return tf_gpu_gcp_loss_async(m->part[g]); }));
    TF_TRY(m->set.wait());
    double sum = 0.0;
    for (int g = 0; g < m->n; ++g) { /* in GPU order */
        double p = 0.0;
        TF_TRY(m->check(tf_gpu_gcp_loss_read(m->part[g], &p)));
        sum += p;
    }
    if (m->dist) TF_TRY(m->check(m->dist->allreduce_sum(&sum, 1)));
    *f = sum;
    return TF_OK;
}

tf_status op_gradient(void *ctx, uint64_t iter, double *t_sample)
{
    multi_gcp *m = self(ctx);
    *t_sample = 0.0; /* drawn inside the pass */
    double t = 0.0;
    TF_TRY(m->set.each([&](int g) { return m->ops->gradient(m->part[g], iter, &t); }));
    double *gr[TF_MAX_GPUS];
    for (int g = 0; g < m->n; ++g) {
        uint64_t np = 0;
        gr[g] = tf_gpu_gcp_gradient_of(m->part[g], &np);
    }
    TF_TRY(m->check(tf_exchange_sum(&m->set.xchg, gr, m->scratch, m->nparams, nullptr)));
    if (m->add_l2) TF_TRY(m->set.each([&](int g) { return tf_gpu_gcp_add_l2(m->part[g]); }));
    if (iter % WAIT_EVERY == WAIT_EVERY - 1) TF_TRY(m->set.wait());
    return TF_OK;
}

tf_status op_adam(void *ctx, double step, double beta1, double beta2, double eps, double lower)
{
    multi_gcp *m = self(ctx);
    return m->set.each([&](int g) { return m->ops->adam(m->part[g], step, beta1, beta2, eps, lower); });
}

tf_status op_save(void *ctx)
{
    multi_gcp *m = self(ctx);
    return m->set.each([&](int g) { return m->ops->save(m->part[g]); });
}

tf_status op_restore(void *ctx)
{
    multi_gcp *m = self(ctx);
    return m->set.each([&](int g) { return m->ops->restore(m->part[g]); });
}

tf_status op_dense_fg(void *ctx, const double *u, double *f, double *g)
{
    (void)ctx;
    (void)u;
    (void)f;
    (void)g;
    return tf_fail(TF_ERR_UNAVAILABLE, "gcp: the dense loss mode runs on the CPU only (--device cpu)");
}

/* GPU 0's factors (every GPU's are the same). */
tf_status op_result(void *ctx, tf_ktensor *out)
{
    multi_gcp *m = self(ctx);
    TF_TRY(m->set.wait());
    return m->check(m->ops->result(m->part[0], out));
}

void op_destroy(void *ctx)
{
    delete self(ctx);
}

/* A checkpoint's moments: GPU 0's (every GPU's are the same); put on every GPU. */
tf_status op_moments_get(void *ctx, double *mo, double *v)
{
    multi_gcp *m = self(ctx);
    TF_TRY(m->set.wait());
    return m->check(m->ops->moments_get(m->part[0], mo, v));
}

tf_status op_moments_put(void *ctx, const double *mo, const double *v)
{
    multi_gcp *m = self(ctx);
    for (int g = 0; g < m->n; ++g) TF_TRY(m->check(m->ops->moments_put(m->part[g], mo, v)));
    return TF_OK;
}

const tf_gcp_backend_ops multi_ops = {op_init,    op_estimate, op_gradient,    op_adam,       op_save,
                                      op_restore, op_dense_fg, op_result,      op_destroy,
                                      op_moments_get, op_moments_put};

/* This process's GPUs, a state on each (built on all at once), on ranks
 * the statuses agreed before the exchange's collective opening; then the
 * exchange and the sum's scratch. */
tf_status build(multi_gcp *m, const tf_tensor *X, const tf_gcp_opts *o, const tf_dist *d,
                const tf_gcp_gpu_observed *obs, char *desc, size_t len)
{
    tf_shards sh;
    memset(&sh, 0, sizeof sh);
    sh.parts = d ? d->size : o->context->opts.ndevices;
    sh.first = d ? d->rank : 0;
    sh.count = d ? 1 : sh.parts;
    sh.dist = d;
    m->dist = d;
    m->ops = tf_gpu_gcp_state_ops();
    tf_status s = m->set.open(o->context, &sh, 0); /* no rows: every GPU holds everything */
    m->n = s == TF_OK ? m->set.n : 0;
    if (s == TF_OK)
        s = m->set.at_once([&](int g) {
            char one[96];
            return tf_gpu_gcp_state_new(m->set.gpu[g], X, o, sh.first + g, sh.parts, obs, &m->part[g], one,
                                        sizeof one);
        });
    TF_TRY(m->check(tf_devset::agree(d, s)));
    uint64_t np = 0;
    (void)tf_gpu_gcp_gradient_of(m->part[0], &np);
    m->nparams = np;
    m->add_l2 = obs && sh.parts > 1; /* with one part the state adds it */
    TF_TRY(m->set.open_exchange());
    const uint64_t need = tf_exchange_sum_scratch(&m->set.xchg, np);
    if (need)
        for (int g = 0; g < m->n; ++g) {
            TF_TRY(m->check(tf_gpu_dev_use(m->set.gpu[g])));
            TF_TRY(m->check(tf_gpu_alloc(&m->scratch[g], need, "GCP gradient sum scratch")));
        }
    snprintf(desc, len, "%d GPUs%s, fp64, %s samples split, summed by %s", sh.parts,
             d ? " (MPI ranks)" : "", obs ? "observed-entry"
                                      : o->sampling == TF_GCP_SEMI_STRATIFIED ? "semi-stratified" : "stratified",
             m->set.transport());
    return TF_OK;
}

} // namespace

tf_status tf_gpu_gcp_multi_get_gradient(void *ctx, int g, double *out)
{
    multi_gcp *m = self(ctx);
    if (g < 0 || g >= m->n) return tf_fail(TF_ERR_ARG, "GPU GCP test: no GPU %d", g);
    TF_TRY(m->set.wait());
    return tf_gpu_gcp_get_gradient(m->part[g], out);
}

tf_status tf_gpu_gcp_multi_poison(void *ctx)
{
    multi_gcp *m = self(ctx);
    for (int g = 0; g < m->n; ++g) TF_TRY(tf_gpu_gcp_poison(m->part[g]));
    return TF_OK;
}

tf_status tf_gpu_gcp_multi_create(const tf_tensor *X, const tf_gcp_opts *o, const tf_dist *dist,
                                  const tf_gcp_gpu_observed *obs, tf_gcp_backend *out)
{
    memset(out, 0, sizeof *out);
    TF_TRY(tf_gpu_gcp_check(X, o));
    if (!o->context || (!dist && o->context->opts.ndevices < 1))
        return tf_fail(TF_ERR_ARG, "GPU GCP over several GPUs: no context of GPUs");
    multi_gcp *m = new (std::nothrow) multi_gcp();
    if (!m) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU GCP backend");
    const tf_status s = build(m, X, o, dist, obs, out->plan_desc, sizeof out->plan_desc);
    if (s != TF_OK) {
        m->set.failed = true;
        delete m;
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &multi_ops;
    out->ctx = m;
    return TF_OK;
}

extern "C" tf_status tf_cuda_gcp_backend_create_multi_impl(const tf_tensor *X, const tf_gcp_opts *o,
                                                           const tf_dist *dist, tf_gcp_backend *out)
{
    return tf_gpu_gcp_multi_create(X, o, dist, nullptr, out);
}
