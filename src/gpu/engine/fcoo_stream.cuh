/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO streamed from host memory, for tensors whose copies do not fit the
 * device budget (fcoo_stream.cu). */
#ifndef TF_GPU_ENGINE_FCOO_STREAM_CUH
#define TF_GPU_ENGINE_FCOO_STREAM_CUH
#include "gpu/engine/engine.cuh"

/* Device bytes the streamed engine keeps aside for the factors, the
 * MTTKRP output and CP-ALS's dense work at rank R. */
uint64_t tf_gpu_stream_reserve(const tf_tensor *X, uint64_t R, uint32_t value_bytes);

/* The streamed engine: each mode's copy (of the modes in `modes`) built on the host (partitions of
 * part_nnz[m] non-zeros), cut into chunks in pinned host memory; the chunks
 * that fit the budget after the factors (tf_gpu_stream_reserve) and the
 * device ring stay resident, the rest are copied through the ring during
 * every MTTKRP, overlapped with the kernels. */
tf_status tf_gpu_fcoo_stream_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec, uint64_t R,
                                    const uint32_t *part_nnz, uint32_t modes, tf_gpu_engine **out);
#endif
