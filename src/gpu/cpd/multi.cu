/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS over several GPUs (AMPED, Wijeratne et al., ICPP'25, sec. 4): the
 * vtable of seams/cpd.h around one CP-ALS state per GPU of this process
 * (backend.cuh), each holding, per mode, the shard of the non-zeros whose
 * index lies in its rows. A mode's step on every GPU:
 *   MTTKRP of its shard -> its rows of M (no two GPUs write one row);
 *   solve: its rows of the new factor (the R x R inverse from the Grams,
 *     which every GPU holds alike);
 *   exchange: every GPU sends its rows to the others (in one process
 *     with peer access, copies on the copy engines; else NCCL, one group
 *     of in-place broadcasts: the ranges are unequal);
 *   normalisation and Gram on the whole factor, the same on every GPU.
 * The fit's inner product is summed over the GPUs in a fixed order (GPU 0
 * first; across MPI ranks by MPI_Allreduce), the model norm comes from the
 * Grams. All GPUs are driven from this thread: each step is queued on all of
 * them before any wait, and every wait is bounded. The GPUs, their rows,
 * the shards' placement and the exchange are the device-set executor's
 * (exec/devset.cuh); with MPI (sh->dist) the process drives its one GPU
 * and the exchange spans the ranks. At small rank
 * with the shards split by the previous mode (tf_shards.pairs), a whole
 * iteration is queued at once with each exchange beside the next mode's
 * MTTKRP (sweep_step); otherwise the driver runs the steps one by one.
 * AO-ADMM: each GPU's rows by tf_gpu_admm_update (backend.cu), its residual
 * sums all-gathered every inner iteration (multi_sync), then the rows'
 * exchange as ALS's. */
#include <stdio.h>
#include <string.h>

#include <new>

#include "gpu/cpd/admm.cuh"
#include "gpu/cpd/backend.cuh"
#include "gpu/exec/devset.cuh"
#include "gpu/runtime/timing.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/cpd.h"
#include "seams/dist.h"
#include "core/alloc.h"
}

namespace {

struct multi_cpd {
    tf_devset set;                                /* this process's GPUs, rows, exchange */
    int n = 0;                                    /* set.n */
    gpu_cpd_base *part[TF_MAX_GPUS] = {nullptr};
    uint32_t order = 0;
    uint64_t R = 0;
    const tf_dist *dist = nullptr;
    double t_exchange = 0.0;
    /* The overlapped sweep (sweep()): per GPU a stream for the exchange and
     * events; on GPU 0 the step boundaries for the timers. */
    bool overlap = false;
    cudaStream_t comm[TF_MAX_GPUS] = {nullptr};
    cudaEvent_t solved[TF_MAX_GPUS] = {nullptr}, shared[TF_MAX_GPUS] = {nullptr};
    cudaEvent_t ev[4 * TF_MAX_ORDER + 2] = {nullptr}, xs[TF_MAX_ORDER] = {nullptr}, xe[TF_MAX_ORDER] = {nullptr};

    ~multi_cpd()
    {
        tf_exchange_free(&set.xchg, set.failed); /* before the streams it waits on go */
        for (int g = 0; g < n; ++g) {
            if (part[g] && part[g]->gpu()) cudaSetDevice(part[g]->gpu()->device);
            if (comm[g]) cudaStreamSynchronize(comm[g]);
            if (comm[g]) cudaStreamDestroy(comm[g]);
            if (solved[g]) cudaEventDestroy(solved[g]);
            if (shared[g]) cudaEventDestroy(shared[g]);
            if (g == 0) {
                for (cudaEvent_t e : ev)
                    if (e) cudaEventDestroy(e);
                for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
                    if (xs[m]) cudaEventDestroy(xs[m]);
                    if (xe[m]) cudaEventDestroy(xe[m]);
                }
            }
        }
        for (int g = 0; g < n; ++g) delete part[g];
    }

    /* s, remembering a failure (the exchange is then aborted, not destroyed) */
    tf_status check(tf_status s) { return set.check(s); }
    /* every GPU's queued work done (bounded) */
    tf_status wait() { return set.wait(); }
};

multi_cpd *self(void *c) { return (multi_cpd *)c; }

#define TF_EACH(m, call)                                                          \
    do {                                                                          \
        for (int g_ = 0; g_ < (m)->n; ++g_) TF_TRY((m)->check((m)->part[g_]->call)); \
    } while (0)

/* The start on every GPU at once (one host thread per GPU): its upload from
 * pageable memory (GBs at billion scale) and each GPU's handles in turn
 * doubled the set-up on two GPUs. */
tf_status op_init(void *c, const tf_ktensor *k)
{
    multi_cpd *m = self(c);
    return m->set.at_once([&](int g) { return m->part[g]->init(k); });
}

tf_status op_mttkrp(void *c, uint32_t mode)
{
    multi_cpd *m = self(c);
    TF_EACH(m, mttkrp_async(mode));
    return m->wait();
}

/* Where the update kinds these GPUs lack are not available (messages). */
const char *multi_where(const multi_cpd *m) { return m->dist ? "GPUs of MPI ranks" : "several GPUs"; }

/* AO-ADMM's sums over the GPUs: the residual table's rows all-gathered by
 * the executor's exchange (peer copies or NCCL, across MPI ranks too), and
 * its bounded wait. */
struct multi_sync : tf_gpu_admm_sync {
    multi_cpd *m;
    explicit multi_sync(multi_cpd *x) : m(x) {}
    tf_status gather() override
    {
        double *t[TF_MAX_GPUS];
        for (int g = 0; g < m->n; ++g) t[g] = m->part[g]->admm_table();
        return m->set.gather_rows(t, TF_GPU_ADMM_TERMS);
    }
    tf_status wait() override { return m->wait(); }
};

/* The update: each GPU's rows of the new factor (ALS's solve, or AO-ADMM
 * with its residual sums gathered so every GPU takes the same inner
 * iterations as one GPU would), then every GPU gets the others' rows. */
tf_status op_update(void *c, uint32_t mode, const tf_cpd_update_step *step, tf_cpd_step_report *rep)
{
    multi_cpd *m = self(c);
    int host = 0;
    if (step->u->kind == TF_CPD_UPDATE_ALS) {
        for (int g = 0; g < m->n; ++g) {
            int hp = 0;
            TF_TRY(m->check(m->part[g]->solve_async(mode, &hp)));
            if (g == 0) host = hp; /* the same R x R system on every GPU */
        }
    } else if (step->u->kind == TF_CPD_UPDATE_AO_ADMM) {
        multi_sync sync(m);
        TF_TRY(m->check(tf_gpu_admm_update(m->part, m->n, sync, mode, step->u, &host, &rep->inner)));
    } else {
        return tf_cpd_update_unavailable(step->u, multi_where(m));
    }
    TF_TRY(m->wait());
    const double t = tf_gpu_wall();
    void *a[TF_MAX_GPUS];
    for (int g = 0; g < m->n; ++g) a[g] = m->part[g]->factor(mode);
    TF_TRY(m->set.share_rows(mode, a, m->R, m->part[0]->value_bytes()));
    TF_TRY(m->wait());
    m->t_exchange += tf_gpu_wall() - t;
    double inner = 0.0, knorm2 = 0.0;
    unsigned dev_pinv = 0;
    TF_TRY(m->check(m->part[0]->scalars(&inner, &knorm2, &dev_pinv)));
    for (int g = 1; g < m->n; ++g) {
        unsigned p = 0;
        TF_TRY(m->check(m->part[g]->scalars(&inner, &knorm2, &p))); /* its flags; counts as GPU 0's */
    }
    rep->used_pinv = host + (int)dev_pinv;
    return TF_OK;
}

tf_status op_normalize(void *c, uint32_t mode, int max_norm)
{
    TF_EACH(self(c), normalize(mode, max_norm));
    return TF_OK;
}

tf_status op_gram(void *c, uint32_t mode)
{
    multi_cpd *m = self(c);
    TF_EACH(m, gram_async(mode));
    return m->wait();
}

/* <X, K> over every GPU's rows, summed in a fixed order; ||K||^2 from the
 * Grams (GPU 0's; every GPU's are the same). */
tf_status op_fit(void *c, uint32_t mode, double *inner, double *knorm2)
{
    multi_cpd *m = self(c);
    TF_EACH(m, fit_async(mode));
    TF_TRY(m->wait());
    double sum = 0.0;
    for (int g = 0; g < m->n; ++g) {
        double in = 0.0, kn = 0.0;
        unsigned p = 0;
        TF_TRY(m->check(m->part[g]->scalars(&in, &kn, &p)));
        sum += in;
        if (g == 0) *knorm2 = kn;
    }
    if (m->dist) TF_TRY(m->check(m->dist->allreduce_sum(&sum, 1)));
    *inner = sum;
    return TF_OK;
}

/* Seconds between two events of GPU 0 (0 if either did not fire). */
double secs(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0.f;
    return cudaEventElapsedTime(&ms, a, b) == cudaSuccess ? 1e-3 * ms : 0.0;
}

/* Queues the exchange of mode's rows on the comm streams, after each GPU's
 * solve. */
tf_status share_async(multi_cpd *m, uint32_t mode)
{
    void *a[TF_MAX_GPUS];
    for (int g = 0; g < m->n; ++g) {
        TF_TRY(tf_gpu_dev_use(m->part[g]->gpu()));
        TF_CU(cudaEventRecord(m->solved[g], m->part[g]->gpu()->stream));
        TF_CU(cudaStreamWaitEvent(m->comm[g], m->solved[g], 0));
        if (g == 0) TF_CU(cudaEventRecord(m->xs[mode], m->comm[0]));
        a[g] = m->part[g]->factor(mode);
    }
    TF_TRY(m->set.share_rows(mode, a, m->R, m->part[0]->value_bytes(), m->comm));
    for (int g = 0; g < m->n; ++g) {
        TF_TRY(tf_gpu_dev_use(m->part[g]->gpu()));
        TF_CU(cudaEventRecord(m->shared[g], m->comm[g]));
        if (g == 0) TF_CU(cudaEventRecord(m->xe[mode], m->comm[0]));
    }
    return TF_OK;
}

/* Every GPU's work stream waits for its exchange, then normalises mode
 * (lambda, scales and Gram from the whole factor). */
tf_status normalize_shared(multi_cpd *m, uint32_t mode, int max_norm)
{
    for (int g = 0; g < m->n; ++g) {
        TF_TRY(tf_gpu_dev_use(m->part[g]->gpu()));
        TF_CU(cudaStreamWaitEvent(m->part[g]->gpu()->stream, m->shared[g], 0));
        TF_TRY(m->part[g]->normalize(mode, max_norm));
    }
    return TF_OK;
}

tf_status mark(multi_cpd *m, uint32_t e)
{
    TF_TRY(tf_gpu_dev_use(m->part[0]->gpu()));
    TF_CU(cudaEventRecord(m->ev[e], m->part[0]->gpu()->stream));
    return TF_OK;
}

/* One iteration with each mode's exchange beside the next mode's MTTKRP of
 * the non-zeros that read only this GPU's rows of the exchanged factor
 * (the shards come split: tf_shards.pairs). Mode n on every GPU: the first
 * part of MTTKRP(n) (it reads factor n-1 as this GPU solved it: the small
 * path's MTTKRP reads factors unscaled); then wait for factor n-1's rows
 * and normalise it; the second part of MTTKRP(n); the solve of its rows;
 * the exchange queued on the comm stream. The last mode's exchange is
 * waited for at the end (its normalisation and the fit terms need it).
 * Timers from GPU 0's events: MTTKRP = both parts, dense = the wait for the
 * exchange, the normalisation and the solve; t_exchange = the exchanges'
 * own durations on the comm stream (mostly hidden). */
tf_status sweep_step(multi_cpd *m, int max_norm, double *inner, double *knorm2, double *t_mttkrp, double *t_dense,
                     double *t_fit, uint64_t *pinv)
{
    const uint32_t N = m->order;
    TF_TRY(mark(m, 0));
    for (uint32_t n = 0; n < N; ++n) {
        for (int g = 0; g < m->n; ++g) TF_TRY(m->part[g]->mttkrp_local_async(n));
        TF_TRY(mark(m, 4 * n + 1));
        if (n > 0) TF_TRY(normalize_shared(m, n - 1, max_norm));
        TF_TRY(mark(m, 4 * n + 2));
        for (int g = 0; g < m->n; ++g) TF_TRY(m->part[g]->mttkrp_remote_async(n));
        TF_TRY(mark(m, 4 * n + 3));
        for (int g = 0; g < m->n; ++g) {
            int hp = 0;
            TF_TRY(m->part[g]->solve_async(n, &hp)); /* the small path: never a host fallback */
        }
        TF_TRY(mark(m, 4 * n + 4));
        TF_TRY(share_async(m, n));
    }
    TF_TRY(normalize_shared(m, N - 1, max_norm));
    for (int g = 0; g < m->n; ++g) TF_TRY(m->part[g]->fit_async(N - 1));
    TF_TRY(mark(m, 4 * N + 1));
    TF_TRY(m->wait());
    double sum = 0.0;
    unsigned p0 = 0;
    for (int g = 0; g < m->n; ++g) {
        double in = 0.0, kn = 0.0;
        unsigned p = 0;
        TF_TRY(m->part[g]->scalars(&in, &kn, &p));
        sum += in;
        if (g == 0) {
            *knorm2 = kn;
            p0 = p;
        }
    }
    if (m->dist) TF_TRY(m->dist->allreduce_sum(&sum, 1));
    *inner = sum;
    *pinv += p0;
    for (uint32_t n = 0; n < N; ++n) {
        t_mttkrp[n] += secs(m->ev[4 * n], m->ev[4 * n + 1]) + secs(m->ev[4 * n + 2], m->ev[4 * n + 3]);
        *t_dense += secs(m->ev[4 * n + 1], m->ev[4 * n + 2]) + secs(m->ev[4 * n + 3], m->ev[4 * n + 4]);
        m->t_exchange += secs(m->xs[n], m->xe[n]);
    }
    *t_fit += secs(m->ev[4 * N], m->ev[4 * N + 1]);
    return TF_OK;
}

tf_status op_sweep(void *c, int max_norm, double *inner, double *knorm2, double *t_mttkrp, double *t_dense,
                   double *t_fit, uint64_t *pinv)
{
    multi_cpd *m = self(c);
    /* a sweep that failed half-way leaves peers inside a collective: abort */
    return m->check(sweep_step(m, max_norm, inner, knorm2, t_mttkrp, t_dense, t_fit, pinv));
}

/* every GPU applies its deferred scales (a checkpoint's result mid-run must
 * leave the GPUs with the same factors), then GPU 0's copy is read */
tf_status op_result(void *c, tf_ktensor *out)
{
    multi_cpd *m = self(c);
    for (int g = 1; g < m->n; ++g) TF_TRY(m->part[g]->flush_scales());
    return m->part[0]->result(out);
}

void op_destroy(void *c) { delete self(c); }

void op_report(void *c, tf_cpd_report *rep)
{
    const multi_cpd *m = self(c);
    rep->t_exchange = m->t_exchange;
    rep->device_bytes = 0;
    for (int g = 0; g < m->n; ++g) rep->device_bytes += m->part[g]->gpu()->allocated;
}

/* no aux_get / aux_put: AO-ADMM's duals stay on the devices (its checkpoints are refused) */
const tf_cpd_backend_ops multi_ops = {op_init, op_mttkrp, op_update,  op_normalize, op_gram, op_fit,
                                      op_result, op_destroy, nullptr, op_report, nullptr, nullptr};
/* the same with the overlapped sweep */
const tf_cpd_backend_ops multi_overlap_ops = {op_init,   op_mttkrp,  op_update, op_normalize, op_gram, op_fit,
                                              op_result, op_destroy, op_sweep,  op_report,    nullptr, nullptr};

/* Streams and events of the overlapped sweep. */
tf_status overlap_setup(multi_cpd *m)
{
    for (int g = 0; g < m->n; ++g) {
        TF_TRY(tf_gpu_dev_use(m->part[g]->gpu()));
        TF_CU(cudaStreamCreateWithFlags(&m->comm[g], cudaStreamNonBlocking));
        TF_CU(cudaEventCreateWithFlags(&m->solved[g], cudaEventDisableTiming));
        TF_CU(cudaEventCreateWithFlags(&m->shared[g], cudaEventDisableTiming));
    }
    TF_TRY(tf_gpu_dev_use(m->part[0]->gpu()));
    for (uint32_t e = 0; e < 4 * m->order + 2; ++e) TF_CU(cudaEventCreate(&m->ev[e]));
    for (uint32_t n = 0; n < m->order; ++n) {
        TF_CU(cudaEventCreate(&m->xs[n]));
        TF_CU(cudaEventCreate(&m->xe[n]));
    }
    return TF_OK;
}

/* This process's GPUs (the executor's), the states on them, their shards
 * (one mode at a time, each part freed by the front end before the next
 * mode's), then the exchange. desc: "2 GPUs: <GPU 0's first shard> ...". */
tf_status build(multi_cpd *m, const tf_tensor *X, const tf_cpd_opts *o, const tf_shards *sh, char *desc,
                size_t len)
{
    TF_TRY(m->set.open(o->context, sh, X->order));
    m->n = m->set.n;
    m->order = X->order;
    m->R = o->rank;
    m->dist = sh->dist;
    for (int g = 0; g < m->n; ++g) {
        m->part[g] = tf_gpu_cpd_new(o->precision);
        if (!m->part[g]) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-ALS backend");
        TF_TRY(m->part[g]->setup_sharded(m->set.gpu[g], X, o));
        m->part[g]->admm_layout((uint32_t)m->set.parts, (uint32_t)(m->set.first + g)); /* AO-ADMM's residual rows */
    }
    char d[TF_MAX_ORDER][TF_MAX_GPUS][96] = {};
    /* every GPU sorts and lays out its shard of a mode at once */
    TF_TRY(m->set.build_shards(sh, o->precision, m->R, [&](int g, uint32_t mode, const tf_gpu_shard *local,
                                                            const tf_gpu_shard *remote) {
        return m->part[g]->add_shard(mode, local, remote, m->set.lo(g, mode), m->set.rows(g, mode), o, d[mode][g],
                                     sizeof d[mode][g]);
    }));
    char first[96] = ""; /* the first shard described, by mode then GPU */
    for (uint32_t mode = 0; mode < X->order && !first[0]; ++mode)
        for (int g = 0; g < m->n && !first[0]; ++g) snprintf(first, sizeof first, "%.95s", d[mode][g]);
    m->overlap = sh->pairs && m->part[0]->small_rank();
    TF_TRY(m->set.open_exchange());
    if (m->overlap) TF_TRY(overlap_setup(m));
    snprintf(desc, len, "%d GPUs%s, %s%s: %s", sh->parts, sh->dist ? " (MPI ranks)" : "", m->set.transport(),
             m->overlap ? ", overlapped" : "", first);
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_cpd_backend_create_multi_impl(const tf_tensor *X, const tf_cpd_opts *o,
                                                           const tf_shards *sh, tf_cpd_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o || !sh || !o->context)
        return tf_fail(TF_ERR_ARG, "GPU CP-ALS over several GPUs: bad shard description");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    if (o->update && o->update->kind != TF_CPD_UPDATE_ALS &&
        o->update->kind != TF_CPD_UPDATE_AO_ADMM) /* before any work: op_update lacks it */
        return tf_cpd_update_unavailable(o->update, sh->dist ? "GPUs of MPI ranks" : "several GPUs");
    multi_cpd *m = new (std::nothrow) multi_cpd();
    if (!m) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-ALS backend");
    const tf_status s = build(m, X, o, sh, out->plan_desc, sizeof out->plan_desc);
    if (s != TF_OK) {
        m->set.failed = true;
        delete m;
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = m->overlap ? &multi_overlap_ops : &multi_ops;
    out->ctx = m;
    return TF_OK;
}
