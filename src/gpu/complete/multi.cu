/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by ALS over several GPUs (the vtable of seams/complete.h):
 * one part of complete.cuh per GPU of this process, or, on MPI ranks, the
 * one GPU of this rank -- the GPU analogue of the CPU's ranks
 * (cpu/complete_cpu.c). The front end cuts every mode's rows into
 * contiguous ranges balanced by training entries (src/front/partition.c);
 * GPU g holds every factor whole and, per mode, the training entries of
 * its rows, sorted by the mode's index as one GPU sorts them (the shard
 * keeps the tensor's order, the sort is stable), so each row's system is
 * summed in the one GPU's order, its long rows cut into the one GPU's
 * segments: every row comes out with the one GPU's bits. A mode's update
 * runs on every GPU on its rows alone (rows.cu's kernels), then every
 * GPU's rows go to every other (exec/devset.cuh's exchange: peer copies
 * or NCCL). The sums: each GPU's part (the update's error over its rows;
 * the training entries of its mode-1 rows; a contiguous range of the
 * validation and test entries) added on the host in GPU order, then over
 * the ranks (tf_dist) -- the same on every rank, so every rank keeps and
 * stops alike; the norms and the result from GPU 0's whole factors. A
 * singular row fails every rank with the lowest such GPU's message (the
 * one GPU's). Every step is queued on every GPU before anything waits,
 * and every wait is the executor's bounded one. */
#include <stdio.h>
#include <string.h>

#include <new>

#include "gpu/complete/complete.cuh"
#include "gpu/exec/devset.cuh"
#include "gpu/runtime/limits.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/dist.h"
}

namespace {

struct multi_complete {
    tf_devset set; /* this process's GPUs, rows, exchange */
    int n = 0;     /* set.n */
    tfc_part *part[TF_MAX_GPUS] = {nullptr};
    uint32_t order = 0, R = 0;
    const tf_dist *dist = nullptr;

    ~multi_complete()
    {
        tf_exchange_free(&set.xchg, set.failed); /* before the parts whose streams it waits on go */
        for (int g = 0; g < n; ++g) tfc_part_delete(part[g]);
    }
    tf_status check(tf_status s) { return set.check(s); }
    tf_status wait() { return set.wait(); }
};

multi_complete *self(void *c)
{
    return (multi_complete *)c;
}

/* The sum over every GPU of the run of the step's scalar: each GPU's read
 * in GPU order, then over the ranks. */
tf_status sum_parts(multi_complete *m, double *out)
{
    *out = 0.0;
    TF_TRY(m->wait());
    double t = 0.0;
    for (int g = 0; g < m->n; ++g) {
        double x = 0.0;
        TF_TRY(m->check(tfc_part_read(m->part[g], &x)));
        t += x;
    }
    if (m->dist) TF_TRY(m->check(m->dist->allreduce_sum(&t, 1)));
    *out = t;
    return TF_OK;
}

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    multi_complete *m = self(ctx);
    /* every GPU at once (the start's pageable uploads side by side) */
    return m->set.at_once([&](int g) { return tfc_part_start(m->part[g], start); });
}

/* Every GPU solves its rows, the rows go to every GPU, then the scalars:
 * the first singular row (the lowest GPU's: rows are cut in GPU order),
 * agreed over the ranks, and the error summed. */
tf_status op_update(void *ctx, uint32_t mode, double l2, double *sse)
{
    multi_complete *m = self(ctx);
    if (mode >= m->order) return tf_fail(TF_ERR_ARG, "GPU completion backend: mode %u outside 1..%u", mode + 1, m->order);
    TF_TRY(m->set.each([&](int g) { return tfc_part_update_async(m->part[g], mode, l2, sse != nullptr); }));
    void *a[TF_MAX_GPUS];
    for (int g = 0; g < m->n; ++g) a[g] = tfc_part_factor(m->part[g], mode);
    TF_TRY(m->set.share_rows(mode, a, m->R, (uint32_t)sizeof(double)));
    TF_TRY(m->wait());
    double total = 0.0;
    tf_status s = TF_OK;
    for (int g = 0; g < m->n && s == TF_OK; ++g) {
        double x = 0.0;
        s = tfc_part_update_read(m->part[g], mode, l2, &x);
        total += x;
    }
    s = tf_devset::agree(m->dist, s);
    if (s != TF_OK) return m->check(s);
    if (m->dist && sse) TF_TRY(m->check(m->dist->allreduce_sum(&total, 1)));
    if (sse) *sse = total;
    return TF_OK;
}

tf_status sse_of(multi_complete *m, tf_complete_set set, bool kept, double *sse)
{
    *sse = 0.0;
    TF_TRY(m->set.each([&](int g) { return tfc_part_sse_async(m->part[g], (int)set, kept); }));
    return sum_parts(m, sse);
}

tf_status op_sse(void *ctx, tf_complete_set set, double *sse)
{
    return sse_of(self(ctx), set, false, sse);
}

tf_status op_kept_sse(void *ctx, tf_complete_set set, double *sse)
{
    return sse_of(self(ctx), set, true, sse);
}

tf_status op_frob_sq(void *ctx, double *sq)
{
    multi_complete *m = self(ctx);
    return m->check(tfc_part_frob_sq(m->part[0], sq));
}

tf_status op_keep(void *ctx)
{
    multi_complete *m = self(ctx);
    return m->set.each([&](int g) { return tfc_part_keep_async(m->part[g]); });
}

tf_status op_result(void *ctx, tf_ktensor *out)
{
    multi_complete *m = self(ctx);
    TF_TRY(m->wait());
    return m->check(tfc_part_result(m->part[0], out));
}

void op_destroy(void *ctx)
{
    delete self(ctx);
}

const tf_complete_backend_ops multi_ops = {op_init, op_update, op_sse, op_frob_sq, op_keep, op_kept_sse, op_result,
                                           op_destroy};

/* need bytes more on part c's GPU, or TF_ERR_NOMEM naming what. */
tf_status room(tfc_part *c, uint64_t need, const char *what)
{
    uint64_t budget = 0;
    tf_gpu_dev *dev = tfc_part_dev(c);
    TF_TRY(tf_gpu_budget(dev, &budget));
    if (need > budget)
        return tf_fail(TF_ERR_NOMEM, "GPU completion on GPU %d: %s (%llu bytes) do not fit the %llu bytes the GPU has "
                                     "left (--device cpu runs it)",
                       dev->device, what, (unsigned long long)need, (unsigned long long)budget);
    return TF_OK;
}

/* Mode m's shard (its index shifted down by lo) up, sorted into its copy. */
tf_status add_mode(multi_complete *m, int g, uint32_t mode, const tf_tensor *nz)
{
    tfc_part *c = m->part[g];
    const uint64_t n = nz->nnz, rows = m->set.rows(g, mode);
    const uint64_t per = m->order * sizeof(uint32_t) + sizeof(double);
    uint64_t sorting = 0;
    TF_TRY(tf_gpu_mode_sort_bytes(tfc_part_dev(c), m->order, n, &sorting));
    TF_TRY(room(c, n * per + sorting + (rows + 1) * sizeof(uint64_t) +
                       2 * rows * sizeof(uint32_t),
                "a copy of its training entries, and its sort"));
    tf_gpu_mode_sort u;
    TF_TRY(tf_gpu_mode_sort_put(u, tfc_part_dev(c), nz));
    return tfc_part_add_mode(c, mode, u, m->set.lo(g, mode), rows);
}

/* GPU g's range of the held-out sets (part p of parts, contiguous), then
 * the factors and the scratch. */
tf_status add_rest(multi_complete *m, int g, const tf_tensor *val, const tf_tensor *test, const uint64_t *dims,
                   uint64_t max_seg_bytes)
{
    tfc_part *c = m->part[g];
    const uint64_t p = (uint64_t)(m->set.first + g), P = (uint64_t)m->set.parts;
    const uint64_t per = m->order * sizeof(uint32_t) + sizeof(double);
    const tf_tensor *held[3] = {nullptr, val, test};
    uint64_t sumdims = 0, max_rows = 0, need = 0;
    for (uint32_t k = 0; k < m->order; ++k) {
        sumdims += dims[k];
        if (m->set.rows(g, k) > max_rows) max_rows = m->set.rows(g, k);
    }
    for (int s = 1; s < 3; ++s)
        if (held[s]) need += (held[s]->nnz * (p + 1) / P - held[s]->nnz * p / P) * per;
    need += 2 * sumdims * m->R * sizeof(double) + max_rows * (sizeof(double) + sizeof(uint32_t)) + max_seg_bytes;
    TF_TRY(room(c, need, "the factors, its held-out entries and scratch"));
    for (int s = 1; s < 3; ++s)
        if (held[s]) {
            const uint64_t n = held[s]->nnz;
            TF_TRY(tfc_part_add_set(c, s, held[s], n * p / P, n * (p + 1) / P));
        }
    return tfc_part_finish(c);
}

/* This process's GPUs (the executor's), a part on each, then every mode's
 * shards, one mode at a time (the front end holds one mode's parts at
 * once; on ranks gathering them is a collective), each GPU sorting and
 * sending up its part at once; on ranks every step's status agreed before
 * the next collective. */
tf_status build_parts(multi_complete *m, const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                      const tf_complete_opts *o, const tf_shards *sh)
{
    tf_status s = m->set.open(o->context, sh, train->order);
    m->n = m->set.n;
    m->order = train->order;
    m->R = (uint32_t)o->rank;
    m->dist = sh->dist;
    const uint64_t segment = tfc_segment_for(train->nnz, m->R); /* the one GPU's: the same segments */
    for (int g = 0; g < m->n && s == TF_OK; ++g) {
        s = tfc_check_smem(m->set.gpu[g], m->R);
        if (s != TF_OK) break;
        m->part[g] = tfc_part_new();
        s = m->part[g] ? tfc_part_setup(m->part[g], m->set.gpu[g], train->order, train->dims, m->R, segment)
                       : tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU completion backend");
    }
    TF_TRY(m->check(tf_devset::agree(sh->dist, s)));
    tf_tensor part[2 * TF_MAX_GPUS];
    for (uint32_t mode = 0; mode < train->order; ++mode) {
        s = sh->split(sh->user, mode, part);
        if (s == TF_OK) s = m->set.at_once([&](int g) { return add_mode(m, g, mode, &part[g]); });
        TF_TRY(m->check(tf_devset::agree(sh->dist, s)));
    }
    /* the segments' partial systems: at most one more than entries / segment per mode (the one GPU's bound) */
    const uint64_t seg_bytes = (2 * train->nnz / segment + 1) * tfc_pairs(m->R) * sizeof(double);
    s = m->set.at_once([&](int g) { return add_rest(m, g, val, test, train->dims, seg_bytes); });
    return m->check(tf_devset::agree(sh->dist, s));
}

tf_status build(multi_complete *m, const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                const tf_complete_opts *o, const tf_shards *sh, char *desc, size_t len)
{
    TF_TRY(build_parts(m, train, val, test, o, sh));
    TF_TRY(m->set.open_exchange());
    const int k = snprintf(desc, len, "%d GPUs%s, fp64, per-row Cholesky, rows cut by entries, ", sh->parts,
                           sh->dist ? " (MPI ranks)" : "");
    if (k > 0 && (size_t)k < len) tf_exchange_describe(&m->set.xchg, desc + k, len - (size_t)k); /* the transport */
    return TF_OK;
}

} // namespace

/* For the tests (tests/hooks): the current factor of a mode set to NaN on
 * every GPU. */
tf_status tf_gpu_complete_multi_poison(void *ctx, uint32_t mode)
{
    multi_complete *m = self(ctx);
    for (int g = 0; g < m->n; ++g) TF_TRY(tfc_part_poison(m->part[g], mode));
    return TF_OK;
}

extern "C" tf_status tf_cuda_complete_backend_create_multi_impl(const tf_tensor *train, const tf_tensor *val,
                                                                const tf_tensor *test, const tf_complete_opts *o,
                                                                const tf_shards *sh, tf_complete_backend *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!train || !o || !out || !sh || !o->context || sh->pairs)
        return tf_fail(TF_ERR_ARG, "GPU completion over several GPUs: missing tensor, options, context or output, "
                                   "or a bad shard description");
    TF_TRY(tfc_check_problem(train, o));
    multi_complete *m = new (std::nothrow) multi_complete();
    if (!m) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU completion backend");
    const tf_status s = build(m, train, val, test, o, sh, out->plan_desc, sizeof out->plan_desc);
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
