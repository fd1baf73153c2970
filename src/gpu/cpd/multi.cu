/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS over several GPUs (AMPED, Wijeratne et al., ICPP'25, sec. 4): the
 * vtable of backend/cpd.h around one CP-ALS state per GPU of this process
 * (backend.cuh), each holding, per mode, the shard of the non-zeros whose
 * index lies in its rows. A mode's step on every GPU:
 *   MTTKRP of its shard -> its rows of M (no two GPUs write one row);
 *   solve: its rows of the new factor (the R x R inverse from the Grams,
 *     which every GPU holds alike);
 *   exchange: every GPU broadcasts its rows to the others (NCCL, one
 *     group of in-place broadcasts: the ranges are unequal);
 *   normalisation and Gram on the whole factor, the same on every GPU.
 * The fit's inner product is summed over the GPUs in a fixed order (GPU 0
 * first; across MPI ranks by MPI_Allreduce), the model norm comes from the
 * Grams. All GPUs are driven from this thread: each step is queued on all of
 * them before any wait, and every wait is bounded (tf_nccl_wait).
 * With MPI (sh->dist) the process drives its one GPU and the group spans
 * the ranks; rank 0 makes NCCL's id and MPI hands it out. */
#include <stdio.h>
#include <string.h>

#include <new>

#include "gpu/cpd/backend.cuh"
#include "gpu/runtime/nccl.cuh"
#include "backend/cuda_module.h"
extern "C" {
#include "backend/cpd.h"
#include "backend/dist.h"
#include "core/alloc.h"
}

namespace {

double wall()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

struct multi_cpd {
    int n = 0;                                    /* GPUs of this process */
    gpu_cpd_base *part[TF_MAX_GPUS] = {nullptr};
    tf_nccl_group grp;
    bool failed = false; /* a step failed: the communicators are aborted, not destroyed */
    uint32_t order = 0;
    uint64_t R = 0;
    uint64_t *row_lo[TF_MAX_ORDER] = {nullptr}; /* per mode, grp.nranks + 1 */
    const tf_dist *dist = nullptr;
    double t_exchange = 0.0;

    ~multi_cpd()
    {
        if (grp.n) tf_nccl_group_free(&grp, failed);
        for (int g = 0; g < n; ++g) delete part[g];
        for (uint64_t *r : row_lo) tf_free(r);
    }

    /* s, remembering a failure (tf_nccl_wait has aborted the group itself) */
    tf_status check(tf_status s)
    {
        if (s != TF_OK) failed = true;
        return s;
    }
    /* every GPU's queued work done (bounded) */
    tf_status wait() { return check(tf_nccl_wait(&grp)); }
};

multi_cpd *self(void *c) { return (multi_cpd *)c; }

#define TF_EACH(m, call)                                                          \
    do {                                                                          \
        for (int g_ = 0; g_ < (m)->n; ++g_) TF_TRY((m)->check((m)->part[g_]->call)); \
    } while (0)

tf_status op_init(void *c, const tf_ktensor *k)
{
    TF_EACH(self(c), init(k));
    return TF_OK;
}

tf_status op_mttkrp(void *c, uint32_t mode)
{
    multi_cpd *m = self(c);
    TF_EACH(m, mttkrp_async(mode));
    return m->wait();
}

/* Each GPU's rows of the new factor, then every GPU gets the others'. */
tf_status op_solve(void *c, uint32_t mode, int *used_pinv)
{
    multi_cpd *m = self(c);
    int host = 0;
    for (int g = 0; g < m->n; ++g) {
        int hp = 0;
        TF_TRY(m->check(m->part[g]->solve_async(mode, &hp)));
        if (g == 0) host = hp; /* the same R x R system on every GPU */
    }
    TF_TRY(m->wait());
    const double t = wall();
    void *a[TF_MAX_GPUS];
    for (int g = 0; g < m->n; ++g) a[g] = m->part[g]->factor(mode);
    TF_TRY(m->check(tf_nccl_share_rows(&m->grp, a, m->row_lo[mode], m->R, m->part[0]->value_bytes())));
    TF_TRY(m->wait());
    m->t_exchange += wall() - t;
    double inner = 0.0, knorm2 = 0.0;
    unsigned dev_pinv = 0;
    TF_TRY(m->check(m->part[0]->scalars(&inner, &knorm2, &dev_pinv)));
    for (int g = 1; g < m->n; ++g) {
        unsigned p = 0;
        TF_TRY(m->check(m->part[g]->scalars(&inner, &knorm2, &p))); /* its flags; counts as GPU 0's */
    }
    *used_pinv = host + (int)dev_pinv;
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

tf_status op_result(void *c, tf_ktensor *out) { return self(c)->part[0]->result(out); }

void op_destroy(void *c) { delete self(c); }

void op_report(void *c, tf_cpd_report *rep)
{
    rep->t_exchange = self(c)->t_exchange;
}

const tf_cpd_backend_ops multi_ops = {op_init, op_mttkrp, op_solve,   op_normalize, op_gram,
                                      op_fit,  op_result, op_destroy, nullptr,      op_report};

/* This process's GPUs, the states on them, their shards (one mode at a
 * time, each part freed by the front end before the next mode's), then the
 * NCCL group. desc: "2 GPUs: <GPU 0's first shard> ...". */
tf_status build(multi_cpd *m, const tf_tensor *X, const tf_cpd_opts *o, const tf_shards *sh, char *desc,
                size_t len)
{
    m->n = sh->count;
    m->order = X->order;
    m->R = o->rank;
    m->dist = sh->dist;
    tf_cuda_ctx *gpu[TF_MAX_GPUS] = {nullptr};
    for (int g = 0; g < m->n; ++g) {
        TF_TRY(sh->dist ? tf_cuda_ctx_of(o->context, &gpu[g]) : tf_cuda_ctx_at(o->context, g, &gpu[g]));
        m->part[g] = tf_gpu_cpd_new(o->precision);
        if (!m->part[g]) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-ALS backend");
        TF_TRY(m->part[g]->setup_sharded(gpu[g], X, o));
    }
    for (uint32_t mode = 0; mode < X->order; ++mode) {
        TF_TRY(TF_ALLOC(m->row_lo[mode], (uint64_t)sh->parts + 1, "shard rows"));
        memcpy(m->row_lo[mode], sh->row_lo[mode], ((size_t)sh->parts + 1) * sizeof(uint64_t));
    }
    tf_tensor parts[TF_MAX_GPUS];
    char first[96] = "";
    for (uint32_t mode = 0; mode < X->order; ++mode) {
        TF_TRY(sh->split(sh->user, mode, parts));
        for (int g = 0; g < m->n; ++g) {
            char d[96];
            const uint64_t *lo = m->row_lo[mode] + sh->first + g;
            TF_TRY(m->part[g]->add_shard(mode, &parts[g], lo[0], lo[1] - lo[0], o, d, sizeof d));
            if (!first[0]) snprintf(first, sizeof first, "%s", d);
        }
    }
    if (sh->dist) {
        unsigned char id[TF_NCCL_ID_BYTES] = {0};
        if (sh->dist->rank == 0) TF_TRY(tf_nccl_unique_id(id));
        TF_TRY(sh->dist->bcast_bytes(id, sizeof id));
        TF_TRY(tf_nccl_group_init_rank(&m->grp, gpu[0], sh->parts, sh->first, id));
    } else {
        TF_TRY(tf_nccl_group_init_all(&m->grp, gpu, m->n));
    }
    snprintf(desc, len, "%d GPUs%s: %s", sh->parts, sh->dist ? " (MPI ranks)" : "", first);
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_cpd_backend_create_multi_impl(const tf_tensor *X, const tf_cpd_opts *o,
                                                           const tf_shards *sh, tf_cpd_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o || !sh || !o->context || sh->count < 1 || sh->count > TF_MAX_GPUS || sh->parts < sh->count ||
        (sh->dist && sh->count != 1))
        return tf_fail(TF_ERR_ARG, "GPU CP-ALS over several GPUs: bad shard description");
    if (o->rank == 0 || o->rank > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "GPU CP-ALS backend: rank %llu is outside 1..%u", (unsigned long long)o->rank,
                       TF_MAX_RANK);
    multi_cpd *m = new (std::nothrow) multi_cpd();
    if (!m) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU CP-ALS backend");
    const tf_status s = build(m, X, o, sh, out->plan_desc, sizeof out->plan_desc);
    if (s != TF_OK) {
        m->failed = true;
        delete m;
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &multi_ops;
    out->ctx = m;
    return TF_OK;
}
