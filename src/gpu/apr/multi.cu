/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR over several GPUs (the vtable of seams/cp_apr.h): one GPU state
 * of apr.cuh per GPU of this process, or, on MPI ranks, the one GPU of
 * this rank. The front end cuts every mode's rows into contiguous ranges
 * balanced by non-zeros (src/front/partition.c); GPU g holds every factor
 * whole and, per mode, the non-zeros of its rows, grouped by row. CP-APR's
 * update of a row reads only the non-zeros of its slice and the other
 * factors' rows, so a mode's subproblem runs on every GPU on its rows
 * alone (the scooch, the Phi passes, the multiplications), and at the end
 * of the mode every GPU's rows go to every other (the exchange CP-ALS
 * uses: exec/devset.cuh, peer copies or NCCL); the normalisation then runs
 * on the whole factor on every GPU -- the same numbers everywhere, lambda
 * included. The scalars: the KKT violation is the largest over the GPUs
 * (NaN wins, as algo/cp_apr.c takes it), the scooch counts (integers) and
 * the log-likelihood's data term are summed on the host in GPU order, then
 * over the ranks (tf_dist); the model term comes from the whole factors,
 * alike on every GPU (GPU 0's). As the CPU's ranks (cpu/cp_apr_cpu.c) do,
 * every GPU's Phi of a row sums that row's non-zeros alone, so the run
 * equals one GPU's but for the order of the sums (the chunks start
 * elsewhere): 1e-10 relative. Every step is queued on every GPU before
 * anything waits, and every wait on the GPUs is the executor's bounded
 * one (a GPU or rank that stops answering fails the run). */
#include <stdio.h>
#include <string.h>

#include <new>

#include "gpu/apr/apr.cuh"
#include "gpu/exec/devset.cuh"
#include "gpu/runtime/limits.cuh"
#include "gpu/runtime/timing.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/dist.h"
}

namespace {

struct multi_apr {
    tf_devset set; /* this process's GPUs, rows, exchange */
    int n = 0;     /* set.n */
    tf_gpu_apr *part[TF_MAX_GPUS] = {nullptr};
    uint32_t order = 0, R = 0;
    const tf_dist *dist = nullptr;
    double t_exchange = 0.0;

    ~multi_apr()
    {
        tf_exchange_free(&set.xchg, set.failed); /* before the states whose streams it waits on go */
        for (int g = 0; g < n; ++g) tf_gpu_apr_delete(part[g]);
    }
    tf_status check(tf_status s) { return set.check(s); }
    tf_status wait() { return set.wait(); }
};

multi_apr *self(void *c)
{
    return (multi_apr *)c;
}

/* x over m, NaN wins (as the algorithm's np.max over the modes). */
double max_nan(double m, double x)
{
    return x != x || (x > m && m == m) ? x : m;
}

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    multi_apr *m = self(ctx);
    /* every GPU at once (the start's pageable uploads side by side) */
    return m->set.at_once([&](int g) { return tf_gpu_apr_start(m->part[g], start); });
}

tf_status op_begin_mode(void *ctx, uint32_t mode, double kappa, double kappatol, uint64_t *scooched)
{
    multi_apr *m = self(ctx);
    *scooched = 0;
    TF_TRY(m->set.each([&](int g) { return tf_gpu_apr_begin_async(m->part[g], mode, kappa, kappatol); }));
    if (!(kappa > 0.0)) return TF_OK;
    TF_TRY(m->wait());
    uint64_t moved = 0;
    for (int g = 0; g < m->n; ++g) {
        uint64_t k = 0;
        TF_TRY(m->check(tf_gpu_apr_read(m->part[g], nullptr, &k)));
        moved += k;
    }
    if (m->dist) { /* a count, exact in a double up to 2^53 (as the CPU's ranks) */
        double d = (double)moved;
        TF_TRY(m->check(m->dist->allreduce_sum(&d, 1)));
        moved = (uint64_t)d;
    }
    *scooched = moved;
    return TF_OK;
}

tf_status op_phi(void *ctx, uint32_t mode, double epsdivzero, double *kkt)
{
    multi_apr *m = self(ctx);
    *kkt = 0.0;
    TF_TRY(m->set.each([&](int g) { return tf_gpu_apr_phi_async(m->part[g], mode, epsdivzero); }));
    TF_TRY(m->wait());
    double worst = 0.0;
    for (int g = 0; g < m->n; ++g) {
        double k = 0.0;
        TF_TRY(m->check(tf_gpu_apr_read(m->part[g], &k, nullptr)));
        worst = max_nan(worst, k);
    }
    if (m->dist) TF_TRY(m->check(m->dist->allreduce_max(&worst, 1)));
    *kkt = worst;
    return TF_OK;
}

tf_status op_multiply(void *ctx, uint32_t mode)
{
    multi_apr *m = self(ctx);
    return m->set.each([&](int g) { return tf_gpu_apr_multiply_async(m->part[g], mode); });
}

/* Every GPU's rows of the mode to every GPU, then the normalisation of the
 * whole factor on each (the same numbers on all). */
tf_status op_end_mode(void *ctx, uint32_t mode)
{
    multi_apr *m = self(ctx);
    const double t = tf_gpu_wall();
    void *a[TF_MAX_GPUS];
    for (int g = 0; g < m->n; ++g) a[g] = tf_gpu_apr_factor(m->part[g], mode);
    TF_TRY(m->set.share_rows(mode, a, m->R, (uint32_t)sizeof(double)));
    TF_TRY(m->wait()); /* bounded: from here each stream holds its own GPU's work alone */
    m->t_exchange += tf_gpu_wall() - t;
    for (int g = 0; g < m->n; ++g) TF_TRY(m->check(tf_gpu_apr_normalize(m->part[g], mode)));
    return TF_OK;
}

tf_status op_loglik(void *ctx, double *ll)
{
    multi_apr *m = self(ctx);
    *ll = 0.0;
    TF_TRY(m->set.each([&](int g) { return tf_gpu_apr_loglik_async(m->part[g]); }));
    TF_TRY(m->wait());
    double data = 0.0, model = 0.0;
    for (int g = 0; g < m->n; ++g) { /* mode 1's non-zeros: each on one GPU; summed in GPU order */
        double d = 0.0;
        TF_TRY(m->check(tf_gpu_apr_read(m->part[g], &d, nullptr)));
        data += d;
    }
    if (m->dist) TF_TRY(m->check(m->dist->allreduce_sum(&data, 1)));
    TF_TRY(m->check(tf_gpu_apr_model_sum(m->part[0], &model)));
    *ll = data - model;
    return TF_OK;
}

tf_status op_result(void *ctx, tf_ktensor *out)
{
    multi_apr *m = self(ctx);
    return m->check(tf_gpu_apr_result(m->part[0], out));
}

void op_report(void *ctx, tf_cp_apr_report *rep)
{
    const multi_apr *m = self(ctx);
    rep->passes = m->n ? tf_gpu_apr_passes(m->part[0]) : 0;
    rep->cached_passes = 0;
    rep->cache_bytes = 0;
}

void op_destroy(void *ctx)
{
    delete self(ctx);
}

const tf_cp_apr_backend_ops multi_ops = {op_init, op_begin_mode, op_phi, op_multiply, op_end_mode,
                                         op_loglik, op_result, op_destroy, op_report,
                                         nullptr, nullptr, /* aux_get, aux_put: no checkpoints with kappa here */
                                         nullptr /* row_newton: pdnr stays on the CPU (front/cp_apr.c) */};

/* This process's GPUs (the executor's), a state on each, then every mode's
 * shards, one mode at a time (the front end holds one mode's parts at
 * once; on ranks gathering them is a collective), each GPU sorting and
 * sending up its part at once; on ranks every step's status agreed before
 * the next collective. Then the scratch. */
tf_status build_parts(multi_apr *m, const tf_tensor *X, const tf_cp_apr_opts *o, const tf_shards *sh)
{
    tf_status s = m->set.open(o->context, sh, X->order);
    m->n = m->set.n;
    m->order = X->order;
    m->R = (uint32_t)o->rank;
    m->dist = sh->dist;
    for (int g = 0; g < m->n && s == TF_OK; ++g) {
        m->part[g] = tf_gpu_apr_new();
        s = m->part[g] ? tf_gpu_apr_setup(m->part[g], m->set.gpu[g], X->order, X->dims, m->R)
                       : tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-APR backend");
    }
    TF_TRY(m->check(tf_devset::agree(sh->dist, s)));
    tf_tensor part[2 * TF_MAX_GPUS];
    for (uint32_t mode = 0; mode < X->order; ++mode) {
        s = sh->split(sh->user, mode, part);
        if (s == TF_OK)
            s = m->set.at_once([&](int g) {
                return tf_gpu_apr_add_mode(m->part[g], mode, &part[g], m->set.lo(g, mode), m->set.rows(g, mode));
            });
        TF_TRY(m->check(tf_devset::agree(sh->dist, s)));
    }
    s = m->set.at_once([&](int g) { return tf_gpu_apr_finish(m->part[g]); });
    return m->check(tf_devset::agree(sh->dist, s));
}

/* The parts, then the exchange (on ranks NCCL's communicators, opened
 * only once every rank holds its part). */
tf_status build(multi_apr *m, const tf_tensor *X, const tf_cp_apr_opts *o, const tf_shards *sh, char *desc,
                size_t len)
{
    TF_TRY(build_parts(m, X, o, sh));
    TF_TRY(m->set.open_exchange());
    const int k = snprintf(desc, len, "%d GPUs%s, fp64, each the non-zeros of its rows by mode, ", sh->parts,
                           sh->dist ? " (MPI ranks)" : "");
    if (k > 0 && (size_t)k < len) tf_exchange_describe(&m->set.xchg, desc + k, len - (size_t)k); /* the transport */
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_cp_apr_backend_create_multi_impl(const tf_tensor *X, const tf_cp_apr_opts *o,
                                                              const tf_shards *sh, tf_cp_apr_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o || !sh || !o->context || sh->pairs)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR over several GPUs: bad shard description");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "GPU CP-APR backend: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    if (X->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "GPU CP-APR backend: order %u is above the GPU's %u", X->order,
                       TF_GPU_MAX_ORDER);
    multi_apr *m = new (std::nothrow) multi_apr();
    if (!m) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-APR backend");
    const tf_status s = build(m, X, o, sh, out->plan_desc, sizeof out->plan_desc);
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
