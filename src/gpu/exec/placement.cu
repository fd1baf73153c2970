/* SPDX-License-Identifier: BSD-3-Clause */
/* The one decision of format and residency (placement.cuh). */
#include <stdio.h>

#include "gpu/exec/placement.cuh"
#include "gpu/engine/fcoo_stream.cuh"
#include "gpu/runtime/timing.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "fmt/auto_format.h"
}

namespace {

/* F-COO's copies of `modes` (about the same size each), the rank-R factors
 * and CP-ALS's dense work over the budget, or forced by tuning.stream. */
bool streams(tf_gpu_dev *ctx, const tf_tensor *X, uint32_t value_bytes, uint64_t R, uint32_t modes)
{
    if (X->nnz == 0 || ctx->tune.stream == 2) return false;
    if (ctx->tune.stream == 1) return true;
    uint64_t budget = 0;
    if (tf_gpu_budget(ctx, &budget) != TF_OK) return false;
    const double need = (double)tf_gpu_format_bytes(X, TF_FORMAT_FCOO, value_bytes) * tf_mode_count(modes) / X->order +
                        (double)tf_gpu_stream_reserve(X, R, value_bytes);
    return need > (double)budget;
}

/* The uploads (cudaMemcpy from pageable memory, legacy stream) are not
 * ordered with the context's non-blocking streams: a new engine waits for
 * them (and is deleted if they failed). */
tf_status settle(tf_gpu_engine **out)
{
    const cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) return TF_OK;
    delete *out;
    *out = nullptr;
    return tf_gpu_fail(__FILE__, __LINE__, "cudaDeviceSynchronize()", e);
}

tf_status order_fits(const tf_tensor *X)
{
    if (X->order > TF_GPU_MAX_ORDER)
        return tf_fail(TF_ERR_UNAVAILABLE, "GPU formats handle tensors of order 2..%d; this one has order %u",
                       TF_GPU_MAX_ORDER, X->order);
    return TF_OK;
}

} // namespace

tf_status tf_gpu_place(tf_gpu_dev *ctx, const tf_tensor *X, tf_format fmt, tf_precision prec, uint64_t R,
                       uint32_t modes, tf_gpu_placement *pl)
{
    *pl = tf_gpu_placement();
    const uint32_t vb = prec == TF_SINGLE ? 4 : 8;
    if (!R) R = 32;
    if (fmt == TF_FORMAT_AUTO) {
        uint64_t budget = 0;
        TF_TRY(tf_gpu_budget(ctx, &budget));
        TF_TRY(tf_gpu_auto_format(X, R, vb, budget, ctx->tune.stream != 2, &fmt, pl->why, sizeof pl->why));
    }
    pl->format = fmt;
    pl->streamed = fmt == TF_FORMAT_FCOO && streams(ctx, X, vb, R, modes);
    return TF_OK;
}

tf_status tf_gpu_engine_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_format fmt, tf_precision prec, uint64_t R,
                               tf_gpu_engine **out, char *why, size_t why_len)
{
    *out = nullptr;
    if (why && why_len) why[0] = 0;
    TF_TRY(order_fits(X));
    tf_gpu_placement pl;
    TF_TRY(tf_gpu_place(ctx, X, fmt, prec, R, tf_all_modes(X->order), &pl));
    if (why && why_len) snprintf(why, why_len, "%s", pl.why);
    tf_phase_clock clock(ctx->tune.build_report, ctx->stream);
    tf_status s;
    switch (pl.format) {
    case TF_FORMAT_COO: s = tf_gpu_coo_create(ctx, X, prec, out); break;
    case TF_FORMAT_FCOO:
        s = tf_gpu_fcoo_create_modes(ctx, X, prec, R ? R : 32, tf_all_modes(X->order), pl.streamed, out);
        break;
    case TF_FORMAT_BLCO: s = tf_gpu_blco_create(ctx, X, prec, out); break;
    default:
        return tf_fail(TF_ERR_UNAVAILABLE, "format '%s' is not available on the GPU backend (use coo, fcoo, blco or auto)",
                       tf_format_name(pl.format));
    }
    if (s != TF_OK) return s;
    clock.mark("create");
    s = settle(out);
    clock.mark("device_sync");
    clock.report("engine");
    return s;
}

tf_status tf_gpu_engine_create_shard(tf_gpu_dev *ctx, const tf_gpu_shard *S, uint32_t mode, tf_precision prec,
                                     uint64_t R, tf_gpu_engine **out)
{
    *out = nullptr;
    const tf_tensor *X = S->tensor();
    TF_TRY(order_fits(X));
    if (mode >= X->order) return tf_fail(TF_ERR_ARG, "GPU shard of mode %u of an order-%u tensor", mode + 1, X->order);
    if (S->dev && X->nnz) { /* cut on this GPU: resident, sorted here */
        TF_TRY(tf_gpu_fcoo_create_from_device(ctx, X, S->dev, prec, R ? R : 32, 1u << mode, out));
        return settle(out);
    }
    if (S->dev) { /* an empty shard cut on the GPU: as the host split's empty one (arrays, none read) */
        static uint32_t no_index = 0;
        static double no_value = 0.0;
        tf_tensor empty = *X;
        for (uint32_t m = 0; m < empty.order; ++m) empty.ind[m] = &no_index;
        empty.vals = &no_value;
        tf_gpu_shard h;
        h.host = &empty;
        return tf_gpu_engine_create_shard(ctx, &h, mode, prec, R, out);
    }
    tf_gpu_placement pl;
    TF_TRY(tf_gpu_place(ctx, X, TF_FORMAT_FCOO, prec, R, 1u << mode, &pl));
    TF_TRY(tf_gpu_fcoo_create_modes(ctx, X, prec, R ? R : 32, 1u << mode, pl.streamed, out));
    return settle(out);
}

bool tf_gpu_shard_cut_here(tf_gpu_dev *ctx, const tf_tensor *shape, uint32_t mode, tf_precision prec, uint64_t R,
                           uint64_t extra)
{
    if (ctx->tune.gpu_shards == 1 || ctx->tune.fcoo_build == 1 || shape->nnz >= (1ULL << 32)) return false;
    if (order_fits(shape) != TF_OK) {
        tf_clear_error();
        return false;
    }
    tf_gpu_placement pl;
    if (tf_gpu_place(ctx, shape, TF_FORMAT_FCOO, prec, R, 1u << mode, &pl) != TF_OK) {
        tf_clear_error();
        return false;
    }
    if (pl.streamed) return false;
    if (ctx->tune.gpu_shards == 2 || !shape->nnz) return true;
    uint64_t budget = 0;
    if (tf_gpu_budget(ctx, &budget) != TF_OK) {
        tf_clear_error();
        return false;
    }
    const uint32_t vb = prec == TF_SINGLE ? 4 : 8;
    /* fcoo.cu's test for a device sort (build_on_device), with the cutter's buffers */
    return (double)extra + (double)tf_fcoo_dsrc_bytes(shape, vb) +
               1.1 * (double)tf_gpu_format_bytes(shape, TF_FORMAT_FCOO, vb) / shape->order + 64.0 * (1 << 20) <=
           (double)budget;
}

void tf_gpu_describe_engine(char *dst, size_t len, const tf_gpu_engine *eng, tf_precision prec, const char *why)
{
    char full[512];
    snprintf(full, sizeof full, "gpu %s, %s, %s%s%s%s", eng->desc, prec == TF_SINGLE ? "fp32" : "fp64",
             eng->ctx->name, why && why[0] ? " [auto " : "", why ? why : "", why && why[0] ? "]" : "");
    snprintf(dst, len, "%.*s", (int)(len ? len - 1 : 0), full);
}
