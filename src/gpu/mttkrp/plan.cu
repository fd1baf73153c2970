/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU MTTKRP plans (the CUDA side of src/seams/plan.h): a device
 * context plus one format engine. A run takes each factor where it is:
 * GPU arrays in place (or copied on the device when their layout is not
 * the kernels'), host doubles uploaded (converted to float for single
 * precision); the output is written in place on the device or downloaded.
 * The work runs on the context's stream, ordered after the caller's stream
 * by events. The timing path keeps everything on the device and times
 * each run with CUDA events. */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <new>

#include "gpu/exec/placement.cuh"
#include "gpu/engine/engine.cuh"
#include "gpu/runtime/dense.cuh"
#include "gpu/runtime/timing.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/plan.h"
}

namespace {

/* A host tf_matrix as the dense path takes it. */
inline tf_dense host_view(const tf_matrix &m)
{
    return tf_dense{m.data, m.rows, m.cols, m.cols, TF_DOUBLE, TF_MEMORY_HOST};
}

struct cuda_plan {
    tf_gpu_dev *ctx = nullptr; /* the context's GPU (borrowed) */
    tf_gpu_engine *eng = nullptr;
    tf_precision prec = TF_DOUBLE;
    size_t vbytes = 8;
    uint32_t order = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint64_t maxdim = 0;
    void *d_fac[TF_MAX_ORDER] = {nullptr};
    void *d_out = nullptr;
    uint64_t R = 0; /* rank the buffers are sized for */
    cudaEvent_t ev_in = nullptr, ev_out = nullptr; /* the caller's stream <-> ctx->stream */

    void free_buffers()
    {
        for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_gpu_free(d_fac[m]);
        tf_gpu_free(d_out);
        memset(d_fac, 0, sizeof d_fac);
        d_out = nullptr;
        R = 0;
    }
    ~cuda_plan()
    {
        if (ctx) cudaSetDevice(ctx->device);
        free_buffers();
        if (ev_in) cudaEventDestroy(ev_in);
        if (ev_out) cudaEventDestroy(ev_out);
        delete eng;
    }

    /* The device and buffers of a run of rank `rank`. */
    tf_status begin(uint64_t rank)
    {
        TF_TRY(tf_gpu_dev_use(ctx));
        if (rank > 0xffffffffu) return tf_fail(TF_ERR_RANGE, "GPU MTTKRP: rank %llu is too large",
                                               (unsigned long long)rank);
        if (rank == R) return TF_OK;
        free_buffers();
        for (uint32_t m = 0; m < order; ++m)
            TF_TRY(tf_gpu_alloc_bytes(&d_fac[m], dims[m] * rank * vbytes, "factor matrix"));
        TF_TRY(tf_gpu_alloc_bytes(&d_out, maxdim * rank * vbytes, "MTTKRP output"));
        R = rank;
        return TF_OK;
    }

    /* GPU memory the kernels can use as it is: rows R values apart, 16-byte
     * aligned (their vector loads and stores). */
    bool in_place(const tf_dense &X) const { return (X.ld ? X.ld : X.cols) == R && (uintptr_t)X.data % 16 == 0; }

    /* rows x R values between GPU arrays, on ctx->stream. */
    tf_status copy_rows(void *dst, uint64_t dld, const void *src, uint64_t sld, uint64_t rows)
    {
        if (rows)
            TF_CU(cudaMemcpy2DAsync(dst, dld * vbytes, src, sld * vbytes, R * vbytes, rows, cudaMemcpyDeviceToDevice,
                                    ctx->stream));
        return TF_OK;
    }

    /* The array the engine reads for factor m: F itself when it is GPU
     * memory laid out for the kernels, else d_fac[m] filled from it on
     * ctx->stream (a copy on the device, or an upload of host doubles). */
    tf_status stage(uint32_t m, const tf_dense &F, bool gpu, const void **use)
    {
        if (gpu && in_place(F)) {
            *use = F.data;
            return TF_OK;
        }
        *use = d_fac[m];
        if (gpu) return copy_rows(d_fac[m], R, F.data, F.ld ? F.ld : F.cols, dims[m]);
        const uint64_t n = dims[m] * R;
        if (prec == TF_SINGLE) return tf_gpu_put_values((float *)d_fac[m], (const double *)F.data, n, ctx->stream);
        return tf_gpu_put_values((double *)d_fac[m], (const double *)F.data, n, ctx->stream);
    }

    tf_status get(uint32_t mode, double *out)
    {
        const uint64_t n = dims[mode] * R;
        if (prec == TF_SINGLE) return tf_gpu_get_values(out, (const float *)d_out, n, ctx->stream);
        return tf_gpu_get_values(out, (const double *)d_out, n, ctx->stream);
    }

    tf_status run(uint32_t mode, const void *const *fac, void *out)
    {
        /* tuning.gpu_poison (tests): NaN in the whole output first, so a row
         * the engine neither clears nor writes shows */
        if (ctx->tune.gpu_poison) TF_CU(cudaMemsetAsync(out, 0xff, dims[mode] * R * vbytes, ctx->stream));
        return eng->mttkrp(mode, fac, out, (uint32_t)R);
    }

    /* `waiter` goes on once `done` has reached this point. */
    static tf_status follow(cudaStream_t waiter, cudaStream_t done, cudaEvent_t *ev)
    {
        if (!*ev) TF_CU(cudaEventCreateWithFlags(ev, cudaEventDisableTiming));
        TF_CU(cudaEventRecord(*ev, done));
        TF_CU(cudaStreamWaitEvent(waiter, *ev, 0));
        return TF_OK;
    }

    /* tf_plan_mttkrp_dense: host operands hold doubles with ld = cols (the
     * front end's); the work runs on ctx->stream after what the caller's
     * stream holds; with a GPU out the caller's stream then waits for it,
     * and the host too when `wait`. */
    tf_status mttkrp(uint32_t mode, const tf_dense *F, const tf_dense &out, cudaStream_t caller, bool wait)
    {
        static const char who[] = "tf_plan_mttkrp_dense";
        TF_TRY(begin(out.cols));
        bool gpu[TF_MAX_ORDER] = {false}, gout = false;
        char name[32];
        for (uint32_t m = 0; m < order; ++m) {
            if (m == mode) continue;
            snprintf(name, sizeof name, "factor %u", m + 1);
            TF_TRY(tf_gpu_dense_locate(F[m], name, who, ctx->device, prec, &gpu[m]));
        }
        TF_TRY(tf_gpu_dense_locate(out, "out", who, ctx->device, prec, &gout));
        if (gout && (uintptr_t)out.data % vbytes)
            return tf_fail(TF_ERR_ARG, "%s: out (GPU memory) is not aligned to its %zu-byte values", who, vbytes);
        TF_TRY(follow(ctx->stream, caller, &ev_in));
        const void *fac[TF_MAX_ORDER] = {nullptr};
        for (uint32_t m = 0; m < order; ++m)
            if (m != mode) TF_TRY(stage(m, F[m], gpu[m], &fac[m]));
        void *o = gout && in_place(out) ? out.data : d_out;
        TF_TRY(run(mode, fac, o));
        if (!gout) return get(mode, (double *)out.data);
        if (o != out.data) TF_TRY(copy_rows(out.data, out.ld ? out.ld : out.cols, d_out, R, dims[mode]));
        if (!wait) return follow(caller, ctx->stream, &ev_out);
        TF_CU(cudaStreamSynchronize(ctx->stream));
        return TF_OK;
    }
};

tf_status plan_mttkrp(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out)
{
    cuda_plan *p = (cuda_plan *)impl;
    tf_dense F[TF_MAX_ORDER];
    for (uint32_t m = 0; m < p->order; ++m) F[m] = host_view(factors[m]);
    return p->mttkrp(mode, F, host_view(*out), cudaStreamLegacy, true);
}

tf_status plan_mttkrp_dense(void *impl, uint32_t mode, const tf_dense *factors, const tf_dense *out, void *stream)
{
    cuda_plan *p = (cuda_plan *)impl;
    if (stream) return p->mttkrp(mode, factors, *out, (cudaStream_t)stream, false);
    return p->mttkrp(mode, factors, *out, cudaStreamLegacy, true);
}

tf_status plan_time(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out, int warmup,
                    int reps, double *times_ms)
{
    cuda_plan *p = (cuda_plan *)impl;
    TF_TRY(p->begin(out->cols));
    const void *fac[TF_MAX_ORDER] = {nullptr};
    for (uint32_t m = 0; m < p->order; ++m)
        if (m != mode) TF_TRY(p->stage(m, host_view(factors[m]), false, &fac[m]));
    TF_TRY(tf_gpu_time_runs(p->ctx->stream, warmup, reps, times_ms, [&]() { return p->run(mode, fac, p->d_out); }));
    return p->get(mode, out->data);
}

void plan_destroy(void *impl) { delete (cuda_plan *)impl; }

const tf_plan_ops cuda_plan_ops = {plan_mttkrp, plan_destroy, plan_time, plan_mttkrp_dense};

} // namespace

extern "C" tf_status tf_cuda_plan_build_impl(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p)
{
    if (o->format != TF_FORMAT_AUTO && o->format != TF_FORMAT_COO && o->format != TF_FORMAT_FCOO &&
        o->format != TF_FORMAT_BLCO)
        return tf_fail(TF_ERR_UNAVAILABLE,
                       "format '%s' is not available on the GPU backend (use coo, fcoo, blco or auto)",
                       tf_format_name(o->format));
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "unknown precision %d", (int)o->precision);
    cuda_plan *cp = new (std::nothrow) cuda_plan();
    if (!cp) return tf_fail(TF_ERR_NOMEM, "out of memory creating a GPU plan");
    cp->prec = o->precision;
    cp->vbytes = o->precision == TF_SINGLE ? sizeof(float) : sizeof(double);
    cp->order = X->order;
    for (uint32_t m = 0; m < X->order; ++m) {
        cp->dims[m] = X->dims[m];
        if (X->dims[m] > cp->maxdim) cp->maxdim = X->dims[m];
    }
    char why[128];
    tf_status s = tf_gpu_dev_of(o->context, &cp->ctx);
    if (s == TF_OK)
        s = tf_gpu_engine_create(cp->ctx, X, o->format, o->precision, o->rank_hint, &cp->eng, why,
                                 sizeof why);
    if (s != TF_OK) {
        delete cp;
        return s;
    }
    p->ops = &cuda_plan_ops;
    p->impl = cp;
    p->format = cp->eng->format;
    p->bytes = cp->eng->bytes;
    for (uint32_t m = 0; m < X->order; ++m) p->streamed[m] = cp->eng->streamed_bytes(m);
    if (cp->eng->note_text()[0]) snprintf(p->note, sizeof p->note, "%s", cp->eng->note_text());
    tf_gpu_describe_engine(p->desc, sizeof p->desc, cp->eng, o->precision, why);
    return TF_OK;
}
