/* SPDX-License-Identifier: BSD-3-Clause */
/* The model at the non-zeros (tf_model_values_ex, src/front/ktensor_ops.c):
 * the CPU kernel is cpu/model_values.h; the CUDA backend's entry point is
 * the row below (its format: seams/cuda_table.h; CPU-only builds answer
 * it with TF_ERR_UNAVAILABLE). */
#ifndef TF_SEAMS_MODEL_BACKENDS_H
#define TF_SEAMS_MODEL_BACKENDS_H
#include "seams/cuda_table.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf_cuda_model_values (src/gpu/model): out[j] = m_j for every non-zero j of
 * X on the GPU of o->context (never NULL here), in o->precision; X valid,
 * nnz > 0, and K matching it (checked by the front end). */
#define TF_CUDA_MODEL_API(ROW)                                                                                     \
    ROW(MAY_LOAD, tf_status, tf_cuda_model_values,                                                                 \
        (const tf_tensor *X, const tf_ktensor *K, const tf_model_opts *o, double *out), (X, K, o, out),            \
        , tf_cuda_unavailable("GPU model values need"))
TF_CUDA_MODEL_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
