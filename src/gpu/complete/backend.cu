/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU backend of completion by ALS (the vtable of seams/complete.h) on one
 * GPU, double precision: one part (part.cu) holding every row. The
 * training entries go up once and every mode's copy is sorted from them;
 * the budget is checked first, in one message. */
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "gpu/complete/complete.cuh"
#include "gpu/runtime/gpu_dev.cuh"
#include "seams/cuda_module.h"

namespace {

tfc_part *self(void *ctx)
{
    return (tfc_part *)ctx;
}

/* Everything on the device: the budget checked first (one message); the
 * training entries up once, every mode's copy sorted from them. */
tf_status build(tfc_part *c, tf_gpu_dev *dev, const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                uint32_t R)
{
    const uint32_t N = train->order;
    const uint64_t n = train->nnz;
    const uint64_t segment = tfc_segment_for(n, R);
    TF_TRY(tfc_part_setup(c, dev, N, train->dims, R, segment));
    uint64_t sumdims = 0, max_dim = 0;
    for (uint32_t m = 0; m < N; ++m) {
        sumdims += train->dims[m];
        max_dim = std::max(max_dim, train->dims[m]);
    }
    const uint64_t per = N * sizeof(uint32_t) + sizeof(double);
    const uint64_t held = (val ? val->nnz : 0) + (test ? test->nnz : 0);
    const uint64_t pairs = tfc_pairs(R);
    const uint64_t partial = (2 * n / segment + 1) * pairs * sizeof(double);
    const uint64_t copies = (uint64_t)N * n * per + (sumdims + N) * sizeof(uint64_t) + sumdims * 2 * sizeof(uint32_t);
    const uint64_t dense = 2 * sumdims * R * sizeof(double) + max_dim * (sizeof(double) + sizeof(uint32_t));
    uint64_t sorting = 0;
    TF_TRY(tf_gpu_mode_sort_bytes(dev, N, n, &sorting));
    const uint64_t need = copies + dense + held * per + partial + sorting;
    uint64_t budget = 0;
    TF_TRY(tf_gpu_budget(dev, &budget));
    if (need > budget)
        return tf_fail(TF_ERR_NOMEM,
                       "GPU completion on GPU %d: %u copies of the training entries (%llu bytes), the factors "
                       "(%llu bytes), the held-out entries (%llu bytes) and scratch (%llu bytes) do not fit the "
                       "%llu bytes the GPU has left (--device cpu runs it)",
                       dev->device, N, (unsigned long long)copies, (unsigned long long)dense,
                       (unsigned long long)(held * per), (unsigned long long)(partial + sorting),
                       (unsigned long long)budget);
    {
        tf_gpu_mode_sort u;
        TF_TRY(tf_gpu_mode_sort_put(u, dev, train));
        for (uint32_t m = 0; m < N; ++m) TF_TRY(tfc_part_add_mode(c, m, u, 0, train->dims[m]));
    }
    if (val) TF_TRY(tfc_part_add_set(c, TF_COMPLETE_VAL, val, 0, val->nnz));
    if (test) TF_TRY(tfc_part_add_set(c, TF_COMPLETE_TEST, test, 0, test->nnz));
    return tfc_part_finish(c);
}

tf_status op_init(void *ctx, const tf_ktensor *start)
{
    return tfc_part_start(self(ctx), start);
}

tf_status op_update(void *ctx, uint32_t mode, double l2, double *sse)
{
    TF_TRY(tfc_part_update_async(self(ctx), mode, l2, sse != nullptr));
    return tfc_part_update_read(self(ctx), mode, l2, sse);
}

tf_status sse_of(tfc_part *c, bool kept, tf_complete_set set, double *sse)
{
    *sse = 0.0;
    TF_TRY(tfc_part_sse_async(c, (int)set, kept));
    return tfc_part_read(c, sse);
}

tf_status op_sse(void *ctx, tf_complete_set set, double *sse)
{
    return sse_of(self(ctx), false, set, sse);
}

tf_status op_kept_sse(void *ctx, tf_complete_set set, double *sse)
{
    return sse_of(self(ctx), true, set, sse);
}

tf_status op_frob_sq(void *ctx, double *sq)
{
    return tfc_part_frob_sq(self(ctx), sq);
}

tf_status op_keep(void *ctx)
{
    return tfc_part_keep_async(self(ctx));
}

tf_status op_result(void *ctx, tf_ktensor *out)
{
    return tfc_part_result(self(ctx), out);
}

void op_destroy(void *ctx)
{
    tfc_part_delete(self(ctx));
}

const tf_complete_backend_ops gpu_ops = {op_init, op_update, op_sse, op_frob_sq, op_keep, op_kept_sse, op_result,
                                         op_destroy};

} // namespace

/* For the tests (tests/hooks): the current factor of a mode set to NaN on
 * the device, so that a row an update leaves out shows. */
tf_status tf_gpu_complete_poison(void *ctx, uint32_t mode)
{
    return tfc_part_poison(self(ctx), mode);
}

/* The checks every GPU backend of completion makes (one GPU or several). */
tf_status tfc_check_problem(const tf_tensor *train, const tf_complete_opts *o)
{
    if (train->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: order %u is above the GPU's %u (--device cpu runs it)",
                       train->order, TF_GPU_MAX_ORDER);
    if (o->rank < 1 || o->rank > TF_GPU_COMPLETE_MAX_RANK)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: rank %llu is above the GPU's %u (--device cpu runs it)",
                       (unsigned long long)o->rank, TF_GPU_COMPLETE_MAX_RANK);
    if (train->nnz == 0 || train->nnz >= UINT32_MAX)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: %llu training entries: the GPU takes 1..%u (--device cpu runs "
                                           "it)", (unsigned long long)train->nnz, UINT32_MAX - 1);
    for (uint32_t m = 0; m < train->order; ++m)
        if (train->dims[m] > INT32_MAX) /* a block per row */
            return tf_fail(TF_ERR_UNAVAILABLE, "complete: mode %u has %llu rows, above the GPU's 2^31 - 1 (--device "
                                               "cpu runs it)", m + 1, (unsigned long long)train->dims[m]);
    return TF_OK;
}

/* Rank R's shared memory a block on dev. */
tf_status tfc_check_smem(const tf_gpu_dev *dev, uint32_t R)
{
    if (tfc_smem_bytes(R) > dev->smem_optin)
        return tf_fail(TF_ERR_UNAVAILABLE, "complete: rank %u needs %llu bytes of shared memory a block, GPU %d has "
                                           "%zu (--device cpu runs it)", R, (unsigned long long)tfc_smem_bytes(R),
                       dev->device, dev->smem_optin);
    return TF_OK;
}

extern "C" tf_status tf_cuda_complete_backend_create_impl(const tf_tensor *train, const tf_tensor *val,
                                                          const tf_tensor *test, const tf_complete_opts *o,
                                                          tf_complete_backend *out)
{
    if (out) memset(out, 0, sizeof *out);
    if (!train || !o || !out || !o->context)
        return tf_fail(TF_ERR_ARG, "GPU completion backend: missing tensor, options, context or output");
    TF_TRY(tfc_check_problem(train, o));
    tf_gpu_dev *dev = nullptr;
    TF_TRY(tf_gpu_dev_of(o->context, &dev));
    TF_TRY(tf_gpu_dev_use(dev));
    const uint32_t R = (uint32_t)o->rank;
    TF_TRY(tfc_check_smem(dev, R));
    tfc_part *c = tfc_part_new();
    if (!c) return tf_fail(TF_ERR_NOMEM, "out of memory creating the GPU completion backend");
    const tf_status s = build(c, dev, train, val, test, R);
    if (s != TF_OK) {
        tfc_part_delete(c);
        return s;
    }
    out->ops = &gpu_ops;
    out->ctx = c;
    snprintf(out->plan_desc, sizeof out->plan_desc, "GPU %d, fp64, per-row Cholesky in shared memory, %u sorted "
                                                    "cop%s", dev->device, train->order, train->order == 1 ? "y" : "ies");
    return TF_OK;
}
