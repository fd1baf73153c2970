/* SPDX-License-Identifier: BSD-3-Clause */
/* An MTTKRP plan over several GPUs of one process (the CUDA side of
 * tf_plan_build with a context of several devices), on the device-set
 * executor (exec/devset.cuh): per GPU and mode, the engine of that GPU's
 * shard (the non-zeros of its rows of the mode), every factor on every
 * GPU. A run queues each GPU's shard, then waits for them all (bounded);
 * each GPU's rows of the output come back into their place. No GPU waits
 * on another, so the plan opens no exchange. Timed runs: the wall clock
 * from the first launch to the last GPU's end, after warm-up. */
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>

#include "gpu/exec/devset.cuh"
#include "gpu/exec/placement.cuh"
#include "gpu/runtime/timing.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/plan.h"
}

namespace {

struct part_gpu {
    tf_gpu_engine *eng[TF_MAX_ORDER] = {nullptr};   /* NULL where it owns no rows */
    uint64_t maxrows = 0;
    void *fac[TF_MAX_ORDER] = {nullptr};
    void *out = nullptr;
};

struct multi_plan {
    tf_devset set;
    part_gpu g[TF_MAX_GPUS];
    tf_precision prec = TF_DOUBLE;
    size_t vbytes = 8;
    uint32_t order = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint64_t R = 0;

    void free_buffers()
    {
        for (int i = 0; i < set.n; ++i) {
            if (set.gpu[i]) cudaSetDevice(set.gpu[i]->device);
            for (void *&f : g[i].fac) {
                tf_gpu_free(f);
                f = nullptr;
            }
            tf_gpu_free(g[i].out);
            g[i].out = nullptr;
        }
        R = 0;
    }
    ~multi_plan()
    {
        free_buffers();
        for (int i = 0; i < set.n; ++i) {
            if (set.gpu[i]) cudaSetDevice(set.gpu[i]->device);
            for (tf_gpu_engine *e : g[i].eng) delete e;
        }
    }

    tf_status prepare(uint32_t mode, const tf_matrix *factors, const tf_matrix *out)
    {
        if (out->cols > 0xffffffffu)
            return tf_fail(TF_ERR_RANGE, "GPU MTTKRP: rank %llu is too large", (unsigned long long)out->cols);
        if (out->cols != R) {
            free_buffers();
            TF_TRY(set.each([&](int i) {
                for (uint32_t m = 0; m < order; ++m)
                    TF_TRY(tf_gpu_alloc_bytes(&g[i].fac[m], dims[m] * out->cols * vbytes, "factor matrix"));
                return tf_gpu_alloc_bytes(&g[i].out, std::max<uint64_t>(g[i].maxrows, 1) * out->cols * vbytes,
                                           "MTTKRP output");
            }));
            R = out->cols;
        }
        return set.each([&](int i) {
            cudaStream_t st = set.gpu[i]->stream;
            for (uint32_t m = 0; m < order; ++m) {
                if (m == mode) continue;
                const uint64_t k = dims[m] * R;
                if (prec == TF_SINGLE) TF_TRY(tf_gpu_put_values((float *)g[i].fac[m], factors[m].data, k, st));
                else TF_TRY(tf_gpu_put_values((double *)g[i].fac[m], factors[m].data, k, st));
            }
            return TF_OK;
        });
    }

    /* every GPU's shard of mode queued, then all waited for */
    tf_status run(uint32_t mode)
    {
        TF_TRY(set.each([&](int i) {
            part_gpu &p = g[i];
            if (!p.eng[mode]) return TF_OK;
            const tf_gpu_dev *c = set.gpu[i];
            if (c->tune.gpu_poison) TF_CU(cudaMemsetAsync(p.out, 0xff, set.rows(i, mode) * R * vbytes, c->stream));
            return p.eng[mode]->mttkrp(mode, (const void *const *)p.fac, p.out, (uint32_t)R);
        }));
        return set.wait();
    }

    tf_status get(uint32_t mode, tf_matrix *out)
    {
        return set.each([&](int i) {
            const uint64_t rows = set.rows(i, mode);
            if (!rows) return TF_OK;
            double *dst = out->data + set.lo(i, mode) * R;
            const uint64_t k = rows * R;
            cudaStream_t st = set.gpu[i]->stream;
            if (prec == TF_SINGLE) return tf_gpu_get_values(dst, (const float *)g[i].out, k, st);
            return tf_gpu_get_values(dst, (const double *)g[i].out, k, st);
        });
    }
};

tf_status plan_mttkrp(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out)
{
    multi_plan *p = (multi_plan *)impl;
    TF_TRY(p->prepare(mode, factors, out));
    TF_TRY(p->run(mode));
    return p->get(mode, out);
}

tf_status plan_time(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out, int warmup, int reps,
                    double *times_ms)
{
    multi_plan *p = (multi_plan *)impl;
    TF_TRY(p->prepare(mode, factors, out));
    for (int i = 0; i < warmup; ++i) TF_TRY(p->run(mode));
    for (int i = 0; i < reps; ++i) {
        const double t = tf_gpu_wall();
        TF_TRY(p->run(mode));
        times_ms[i] = 1e3 * (tf_gpu_wall() - t);
    }
    return p->get(mode, out);
}

void plan_destroy(void *impl) { delete (multi_plan *)impl; }

const tf_plan_ops multi_plan_ops = {plan_mttkrp, plan_destroy, plan_time, nullptr}; /* host arrays only */

tf_status build(multi_plan *mp, const tf_tensor *X, const tf_plan_opts *o, const tf_shards *sh, tf_plan *p)
{
    mp->prec = o->precision;
    mp->vbytes = o->precision == TF_SINGLE ? sizeof(float) : sizeof(double);
    mp->order = X->order;
    for (uint32_t m = 0; m < X->order; ++m) mp->dims[m] = X->dims[m];
    TF_TRY(mp->set.open(o->context, sh, X->order));
    /* every GPU sorts and lays out its shard of a mode at once */
    TF_TRY(mp->set.build_shards(sh, o->precision, o->rank_hint, [&](int i, uint32_t m, const tf_gpu_shard *local,
                                                                     const tf_gpu_shard *) {
        part_gpu &q = mp->g[i];
        const uint64_t rows = mp->set.rows(i, m);
        q.maxrows = std::max(q.maxrows, rows);
        if (!rows) return TF_OK;
        return tf_gpu_engine_create_shard(mp->set.gpu[i], local, m, o->precision, o->rank_hint, &q.eng[m]);
    }));
    char first[64] = "";
    for (uint32_t m = 0; m < X->order; ++m)
        for (int i = 0; i < mp->set.n; ++i) {
            const tf_gpu_engine *e = mp->g[i].eng[m];
            if (!e) continue;
            p->bytes += e->bytes;
            p->streamed[m] += e->streamed_bytes(m);
            if (!first[0]) snprintf(first, sizeof first, "%s", e->desc);
        }
    char full[512];
    snprintf(full, sizeof full, "%d GPUs: gpu %s, %s, %s", mp->set.n, first, o->precision == TF_SINGLE ? "fp32" : "fp64",
             mp->set.gpu[0]->name);
    snprintf(p->desc, sizeof p->desc, "%.*s", (int)sizeof p->desc - 1, full);
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_plan_build_multi_impl(const tf_tensor *X, const tf_plan_opts *o, const tf_shards *sh,
                                                   tf_plan *p)
{
    if (!X || !o || !sh || !o->context || sh->dist)
        return tf_fail(TF_ERR_ARG, "GPU MTTKRP plan over several GPUs: bad shard description");
    if (o->format != TF_FORMAT_AUTO && o->format != TF_FORMAT_FCOO)
        return tf_fail(TF_ERR_UNAVAILABLE, "several GPUs run F-COO shards (format fcoo or auto, not %s)",
                       tf_format_name(o->format));
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "unknown precision %d", (int)o->precision);
    multi_plan *mp = new (std::nothrow) multi_plan();
    if (!mp) return tf_fail(TF_ERR_NOMEM, "out of memory creating a GPU plan");
    const tf_status s = build(mp, X, o, sh, p);
    if (s != TF_OK) {
        delete mp;
        p->bytes = 0;
        memset(p->streamed, 0, sizeof p->streamed);
        return s;
    }
    p->ops = &multi_plan_ops;
    p->impl = mp;
    p->format = TF_FORMAT_FCOO;
    return TF_OK;
}
