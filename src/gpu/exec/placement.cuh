/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the non-zeros of an operation live on one GPU, decided in one
 * place for every operation and every device of a run: the format (auto
 * resolved by the rule of fmt/auto_format.h) and the residency -- resident
 * in device memory, or streamed from pinned host memory through the device
 * during every run (BLCO's out-of-memory streaming, done on F-COO copies:
 * engine/fcoo_stream.cu). The format factories are told the residency;
 * none of them decides it. Engines of a whole tensor (one GPU) and of a
 * shard (one GPU of several: exec/devset.cuh) are made here. */
#ifndef TF_GPU_EXEC_PLACEMENT_CUH
#define TF_GPU_EXEC_PLACEMENT_CUH
#include "gpu/engine/engine.cuh"
#include "gpu/exec/shard_cut.cuh"

struct tf_gpu_placement {
    tf_format format = TF_FORMAT_AUTO;
    bool streamed = false; /* the copies stream from host memory (F-COO only) */
    char why[128] = "";    /* why auto chose the format ("" when asked for) */
};

/* The placement of X's copies of the modes in `modes` at rank R on ctx's
 * GPU: fmt auto resolved against the device budget; F-COO streamed when
 * tuning.stream is 1, never when 2, else when its copies, the rank-R
 * factors and CP-ALS's dense work do not fit the budget. */
tf_status tf_gpu_place(tf_gpu_dev *ctx, const tf_tensor *X, tf_format fmt, tf_precision prec, uint64_t R,
                       uint32_t modes, tf_gpu_placement *pl);

/* The engine of X on ctx's GPU in the format asked for (auto: placed as
 * above); why (may be NULL) gets auto's reason. */
tf_status tf_gpu_engine_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_format fmt, tf_precision prec, uint64_t R,
                               tf_gpu_engine **out, char *why, size_t why_len);
/* The engine of one shard of a run over several GPUs: F-COO with mode's
 * copy only; a host shard resident or streamed as placed, a shard cut on
 * the GPU (S->dev) resident, sorted there (tf_gpu_shard_cut_here said so). */
tf_status tf_gpu_engine_create_shard(tf_gpu_dev *ctx, const tf_gpu_shard *S, uint32_t mode, tf_precision prec,
                                     uint64_t R, tf_gpu_engine **out);
/* Whether a shard of `shape` (order, dims, nnz; no arrays) of `mode` is
 * cut and built on ctx's GPU (exec/shard_cut.cuh): tuning.gpu_shards not 1
 * (host), tuning.fcoo_build not 1 (host sorts), fewer than 2^32 non-zeros
 * (the sort's 32-bit permutation), resident by tf_gpu_place, and its
 * device COO, the sort's scratch, the copy and `extra` bytes (the
 * cutter's buffers when not yet made) within the budget; else the front
 * end's host split serves it. */
bool tf_gpu_shard_cut_here(tf_gpu_dev *ctx, const tf_tensor *shape, uint32_t mode, tf_precision prec, uint64_t R,
                           uint64_t extra);
/* "gpu <engine desc>, fp64, <device> [auto <why>]", truncated to len. */
void tf_gpu_describe_engine(char *dst, size_t len, const tf_gpu_engine *eng, tf_precision prec, const char *why);
#endif
