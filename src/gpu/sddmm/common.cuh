/* SPDX-License-Identifier: BSD-3-Clause */
/* Pieces shared by the SDDMM schemes and the cuSPARSE comparison: the
 * padded upload of the dense operands and the entry points (event timing:
 * gpu/runtime/timing.cuh). */
#ifndef TF_CUDA_SDDMM_COMMON_CUH
#define TF_CUDA_SDDMM_COMMON_CUH
#include <stdint.h>

#include "gpu/runtime/context.cuh"
#include "gpu/runtime/timing.cuh"
extern "C" {
#include "backend/sddmm_backends.h"
#include "core/alloc.h"
}

/* Row length of A and B on the device: K rounded up to 16 bytes of T. */
template <typename T>
static inline uint32_t tf_sddmm_padded_k(uint64_t K)
{
    const uint64_t w = 16 / sizeof(T);
    return (uint32_t)((K + w - 1) / w * w);
}

/* rows x Kp device copy of m (rows x K), converted to T, zero-padded. */
template <typename T>
static tf_status tf_sddmm_upload_padded(tf_dev_array<T> &d, const tf_matrix *m, uint32_t Kp, const char *what)
{
    const uint64_t n = m->rows * (uint64_t)Kp;
    T *h = nullptr;
    TF_TRY(TF_ALLOC(h, n ? n : 1, "padded dense operand"));
    for (uint64_t i = 0; i < m->rows; ++i)
        for (uint64_t k = 0; k < Kp; ++k) h[i * Kp + k] = k < m->cols ? (T)m->data[i * m->cols + k] : T(0);
    tf_status s = d.upload(h, n, what);
    tf_free(h);
    return s;
}

/* The cuSPARSE comparison (cusparseSDDMM, CSR, in-place output). */
tf_status tf_cuda_sddmm_cusparse(tf_cuda_ctx *ctx, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                                 const tf_sddmm_opts *o, double *P, int warmup, int reps, double *times_ms);
#endif
