/* SPDX-License-Identifier: BSD-3-Clause */
/* The rule behind `--format auto` on the GPU (plain C, no device calls).
 *
 * Inputs: the tensor's shape, the skew of its modes (share of the
 * non-zeros in the largest slice, estimated from an evenly spaced sample of
 * at most 65536 non-zeros), the rank, the value size and the device
 * memory budget (tf_gpu_budget: 90 % of the free memory, or the context's
 * memory limit where smaller). Each format's device bytes are estimated from the shape
 * (tf_blco_bytes_estimate, tf_fcoo_bytes_estimate; COO nnz*(4N + value)),
 * plus the factors and the output (sum dims * R + max dims * R values);
 * a format "fits" when that is at most the budget.
 *
 *  1. COO when the linearised index needs more than 64 bits and the block
 *     key space is so large that BLCO blocks would average fewer than 64
 *     non-zeros (2^(bits-64) > nnz/64): per-block bases and block searches
 *     would then cost more than COO's plain indices.
 *  2. F-COO when its N per-mode copies fit: measured on an H200 (R=32) it
 *     is the fastest format on every benchmark tensor, skewed or not (one
 *     sorted copy per mode: products summed along segments in registers,
 *     atomics only at partition boundaries; a heavy slice, TF_AUTO_HEAVY_SHARE
 *     of the non-zeros or more, is named in the reason);
 *  3. BLCO when F-COO does not fit (one mode-agnostic copy, 8 + value
 *     bytes per non-zero, the smallest format);
 *  4. else COO when it fits;
 *  5. else F-COO streamed from pinned host memory (allow_stream: the
 *     tuning policy's stream is not 2; fcoo_stream.cu keeps what fits the
 *     budget resident and streams the rest);
 *  6. else TF_ERR_NOMEM naming the bytes needed and the budget. */
#ifndef TF_FMT_AUTO_FORMAT_H
#define TF_FMT_AUTO_FORMAT_H
#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TF_AUTO_HEAVY_SHARE (1.0 / 16.0)
#define TF_AUTO_SAMPLE 65536u

tf_status tf_gpu_auto_format(const tf_tensor *X, uint64_t rank, uint32_t value_bytes,
                             uint64_t budget_bytes, int allow_stream, tf_format *fmt, char *why,
                             size_t why_len);

/* Device bytes of the format's arrays for X (estimate from the shape). */
uint64_t tf_gpu_format_bytes(const tf_tensor *X, tf_format fmt, uint32_t value_bytes);

#ifdef __cplusplus
}
#endif
#endif
