/* SPDX-License-Identifier: BSD-3-Clause */
/* Pieces shared by the SDDMM schemes and the cuSPARSE comparison: the
 * padded row length of the dense operands and the cuSPARSE scheme (event
 * timing: gpu/runtime/timing.cuh). */
#ifndef TF_GPU_SDDMM_COMMON_CUH
#define TF_GPU_SDDMM_COMMON_CUH
#include <stdint.h>

#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/timing.cuh"
extern "C" {
#include "seams/sddmm_backends.h"
#include "core/alloc.h"
}

/* Row length of A and B on the device: K rounded up to 16 bytes of T. */
template <typename T>
static inline uint32_t tf_sddmm_padded_k(uint64_t K)
{
    const uint64_t w = 16 / sizeof(T);
    return (uint32_t)((K + w - 1) / w * w);
}

/* cuSPARSE's SDDMM as a scheme of a plan (for comparison): S in CSR
 * (32-bit indices) with its values kept on the device, A and B read from
 * dA / dB (rows x Kp, the padded buffers the plan fills before each run;
 * they must stay where they are for the scheme's life). */
struct tf_cusparse_sddmm;
tf_status tf_cusparse_sddmm_create(tf_gpu_dev *ctx, const tf_csr *S, uint64_t K, uint32_t Kp, bool single,
                                   const void *dA, const void *dB, const tf_sddmm_opts *o, tf_cusparse_sddmm **out);
/* out non-NULL: a whole run on s (S's values into cuSPARSE's output array,
 * cusparseSDDMM in place there, the result copied to out: nnz values);
 * NULL: the cusparseSDDMM call alone (timing: with beta != 0 its values
 * drift from run to run). */
tf_status tf_cusparse_sddmm_launch(tf_cusparse_sddmm *c, cudaStream_t s, void *out);
void tf_cusparse_sddmm_free(tf_cusparse_sddmm *c);
#endif
