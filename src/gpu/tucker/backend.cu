/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of sparse Tucker (the vtable of seams/tucker.h), one GPU,
 * double precision: the sorted copies of the non-zeros and the TTMc pass
 * (ttmc.cu), the factors, one Y_(n) buffer of the largest mode, the leading
 * vectors' work (vectors.cu) and the core's unfolding live on the device.
 * Per iteration the host sees the core (prod R_n doubles, for ||G||^2 and
 * its mode-1-fastest order, summed and placed as the CPU backend does). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "gpu/tucker/common.cuh"
#include "gpu/tucker/multi.cuh"
#include "gpu/tucker/ttmc.cuh"
#include "gpu/tucker/vectors.cuh"
#include "seams/cuda_module.h"

namespace {

struct gpu_tucker {
    tf_gpu_dev *dev = nullptr; /* the context's GPU (borrowed) */
    uint32_t N = 0, ymode = 0;
    bool started = false;
    uint64_t dims[TF_GPU_MAX_ORDER] = {0}, ranks[TF_GPU_MAX_ORDER] = {0};
    tf_tucker_svd method[TF_GPU_MAX_ORDER] = {};
    tf_gpu_ttmc tt;
    tf_gpu_lead lead;
    double *U[TF_GPU_MAX_ORDER] = {nullptr};
    double *Y = nullptr, *Gt = nullptr; /* Y_(n); the core's unfolding (C x r column-major) */
    std::vector<double> hG, core;

    ~gpu_tucker()
    {
        if (dev && dev->device >= 0) cudaSetDevice(dev->device);
        for (uint32_t m = 0; m < TF_GPU_MAX_ORDER; ++m) tf_gpu_free(U[m]);
        tf_gpu_free(Y);
        tf_gpu_free(Gt);
    }
};

tf_status check(const gpu_tucker *c, uint32_t mode, bool ymode)
{
    if (mode >= c->N) return tf_fail(TF_ERR_ARG, "GPU Tucker backend: mode %u is outside 1..%u", mode + 1, c->N);
    if (!c->started) return tf_fail(TF_ERR_ARG, "GPU Tucker backend: init was not called");
    if (ymode && c->ymode != mode)
        return tf_fail(TF_ERR_ARG, "GPU Tucker backend: mode %u's vectors or core before its TTMc", mode + 1);
    return tf_gpu_dev_use(c->dev);
}

tf_status op_init(void *ctx, const tf_matrix *factors, uint32_t skip)
{
    gpu_tucker *c = (gpu_tucker *)ctx;
    TF_TRY(tf_gpu_dev_use(c->dev));
    const cudaStream_t st = c->dev->stream;
    for (uint32_t m = 0; m < c->N; ++m) {
        const uint64_t n = c->dims[m] * c->ranks[m];
        if (m == skip) {
            TF_CU(cudaMemsetAsync(c->U[m], 0, n * sizeof(double), st));
            continue;
        }
        if (factors[m].rows != c->dims[m] || factors[m].cols != c->ranks[m] || !factors[m].data)
            return tf_fail(TF_ERR_ARG, "GPU Tucker backend: start factor %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)factors[m].rows, (unsigned long long)factors[m].cols,
                           (unsigned long long)c->dims[m], (unsigned long long)c->ranks[m]);
        TF_TRY(tf_gpu_put_values<double>(c->U[m], factors[m].data, n, st));
    }
    TF_CU(cudaStreamSynchronize(st));
    c->started = true;
    c->ymode = c->N;
    return TF_OK;
}

tf_status op_ttmc(void *ctx, uint32_t mode)
{
    gpu_tucker *c = (gpu_tucker *)ctx;
    TF_TRY(check(c, mode, false));
    TF_TRY(tf_gpu_ttmc_run(&c->tt, mode, c->U, c->Y, 0, c->dims[mode]));
    TF_CU(cudaStreamSynchronize(c->dev->stream)); /* the algorithm times the phases */
    c->ymode = mode;
    return TF_OK;
}

tf_status op_leading(void *ctx, uint32_t mode, tf_tucker_svd *method)
{
    gpu_tucker *c = (gpu_tucker *)ctx;
    TF_TRY(check(c, mode, true));
    const uint64_t I = c->dims[mode], C = tf_tucker_cols(c->N, c->ranks, mode), r = c->ranks[mode];
    *method = c->method[mode];
    TF_TRY(tf_gpu_lead_run(&c->lead, c->Y, I, C, r, c->method[mode], c->U[mode]));
    TF_CU(cudaStreamSynchronize(c->dev->stream));
    return TF_OK;
}

tf_status op_core(void *ctx, uint32_t mode, double *norm2)
{
    gpu_tucker *c = (gpu_tucker *)ctx;
    TF_TRY(check(c, mode, true));
    const uint32_t N = c->N;
    const uint64_t I = c->dims[mode], C = tf_tucker_cols(N, c->ranks, mode), r = c->ranks[mode];
    const double one = 1.0, zero = 0.0;
    /* G_(n)^T (C x r column-major) = Y^T U: row-major Y is the column-major C x I matrix, U the r x I one */
    TF_CUBLAS(cublasDgemm(c->dev->blas, CUBLAS_OP_N, CUBLAS_OP_T, (int)C, (int)r, (int)I, &one, c->Y, (int)C,
                          c->U[mode], (int)r, &zero, c->Gt, (int)C));
    TF_TRY(tf_gpu_get_values<double>(c->hG.data(), c->Gt, r * C, c->dev->stream));
    *norm2 = tf_tucker_core_place(N, c->ranks, mode, c->hG.data(), c->core.data());
    return TF_OK;
}

tf_status op_result(void *ctx, tf_ttensor *out)
{
    gpu_tucker *c = (gpu_tucker *)ctx;
    TF_TRY(check(c, 0, false));
    for (uint32_t m = 0; m < c->N; ++m) {
        if (out->factors[m].rows != c->dims[m] || out->factors[m].cols != c->ranks[m])
            return tf_fail(TF_ERR_ARG, "GPU Tucker backend: result factor %u has the wrong shape", m + 1);
        TF_TRY(tf_gpu_get_values<double>(out->factors[m].data, c->U[m], c->dims[m] * c->ranks[m], c->dev->stream));
    }
    memcpy(out->core, c->core.data(), c->core.size() * sizeof(double));
    return TF_OK;
}

void op_destroy(void *ctx)
{
    gpu_tucker *c = (gpu_tucker *)ctx;
    if (!c) return;
    if (c->dev) tf_gpu_dev_use(c->dev);
    delete c;
}

const tf_tucker_backend_ops gpu_ops = {op_init, op_ttmc, op_leading, op_core, op_result, op_destroy};

tf_status build(gpu_tucker *c, const tf_tensor *X, const tf_tucker_opts *o, char *desc, size_t desc_len)
{
    const uint32_t N = X->order;
    c->N = N;
    c->ymode = N;
    uint64_t ymax = 1, gmax = 1, factors = 0, core = 1, lead = 0;
    uint64_t I[TF_GPU_MAX_ORDER], C[TF_GPU_MAX_ORDER];
    for (uint32_t m = 0; m < N; ++m) {
        c->dims[m] = X->dims[m];
        c->ranks[m] = o->ranks[m];
    }
    for (uint32_t m = 0; m < N; ++m) {
        I[m] = X->dims[m];
        C[m] = tf_tucker_cols(N, o->ranks, m);
        c->method[m] = tf_tucker_svd_choose(I[m], C[m], o->svd);
        if (c->method[m] != TF_TUCKER_SVD_ROW_GRAM && c->method[m] != TF_TUCKER_SVD_COL_GRAM)
            return tf_fail(TF_ERR_UNAVAILABLE, "tucker: the leading vectors of Y_(%u) (%llu x %llu) by the subspace "
                           "method are not on the GPU yet (the CPU runs it: --device cpu)", m + 1,
                           (unsigned long long)I[m], (unsigned long long)C[m]);
        ymax = std::max(ymax, I[m] * C[m]);
        gmax = std::max(gmax, o->ranks[m] * C[m]);
        factors += I[m] * o->ranks[m];
        core *= o->ranks[m];
        lead = std::max(lead, tf_gpu_lead_doubles(c->dev, I[m], C[m], o->ranks[m], c->method[m]));
    }
    const uint64_t dense = (ymax + gmax + factors + lead) * sizeof(double);
    TF_TRY(tf_gpu_ttmc_build(c->dev, X, o->ranks, NULL, dense, NULL, NULL, &c->tt));
    for (uint32_t m = 0; m < N; ++m) TF_TRY(tf_gpu_alloc(&c->U[m], I[m] * o->ranks[m], "Tucker factor"));
    TF_TRY(tf_gpu_alloc(&c->Y, ymax, "Tucker Y_(n)"));
    TF_TRY(tf_gpu_alloc(&c->Gt, gmax, "Tucker core unfolding"));
    TF_TRY(tf_gpu_lead_alloc(&c->lead, c->dev, N, I, C, o->ranks, c->method));
    try {
        c->hG.assign(gmax, 0.0);
        c->core.assign(core, 0.0);
    } catch (const std::bad_alloc &) {
        return tf_fail(TF_ERR_NOMEM, "out of memory for the GPU Tucker backend's core (%llu doubles)",
                       (unsigned long long)core);
    }
    snprintf(desc, desc_len, "GPU %d, fp64, the non-zeros sorted by each mode (%u copies, %.1f MB)", c->dev->device, N,
             (double)c->tt.copy_bytes / 1e6);
    return TF_OK;
}

} // namespace

extern "C" tf_status tf_cuda_tucker_backend_create_impl(const tf_tensor *X, const tf_tucker_opts *o,
                                                        tf_tucker_backend *out)
{
    memset(out, 0, sizeof *out);
    if (!X || !o) return tf_fail(TF_ERR_ARG, "GPU Tucker backend: missing tensor or options");
    if (X->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "GPU Tucker backend: order %u is above the GPU's %u", X->order,
                       TF_GPU_MAX_ORDER);
    if (o->context && o->context->opts.ndevices > 1) return tf_gpu_tucker_multi_create(X, o, out);
    gpu_tucker *c = new (std::nothrow) gpu_tucker();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU Tucker backend");
    tf_status s = tf_gpu_dev_of(o->context, &c->dev);
    if (s == TF_OK) s = tf_gpu_dev_use(c->dev);
    if (s == TF_OK) s = build(c, X, o, out->desc, sizeof out->desc);
    if (s != TF_OK) {
        if (c->dev) tf_gpu_dev_use(c->dev);
        delete c;
        memset(out, 0, sizeof *out);
        return s;
    }
    out->ops = &gpu_ops;
    out->ctx = c;
    return TF_OK;
}
