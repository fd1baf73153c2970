/* SPDX-License-Identifier: BSD-3-Clause */
/* CUDA / cuBLAS / cuSOLVER error checks: any failure becomes
 * tf_fail(TF_ERR_DEVICE, "file:line: cudaXxx: <message>") and is returned
 * from the calling function (which must return tf_status). */
#ifndef TF_GPU_RUNTIME_CHECK_CUH
#define TF_GPU_RUNTIME_CHECK_CUH
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

extern "C" {
#include "core/error.h"
}

/* Record a failed call (expr is the call's text; its function name is shown). */
tf_status tf_gpu_fail(const char *file, int line, const char *expr, cudaError_t e);
tf_status tf_cublas_fail(const char *file, int line, const char *expr, cublasStatus_t e);
tf_status tf_cusolver_fail(const char *file, int line, const char *expr, cusolverStatus_t e);

#define TF_CU(call)                                                                     \
    do {                                                                                \
        cudaError_t tf_cu_e_ = (call);                                                  \
        if (tf_cu_e_ != cudaSuccess) return tf_gpu_fail(__FILE__, __LINE__, #call, tf_cu_e_); \
    } while (0)

/* After a kernel launch: configuration errors now, execution errors at the next sync. */
#define TF_CU_LAUNCH(name)                                                              \
    do {                                                                                \
        cudaError_t tf_cu_e_ = cudaGetLastError();                                      \
        if (tf_cu_e_ != cudaSuccess) return tf_gpu_fail(__FILE__, __LINE__, name "<<<>>>", tf_cu_e_); \
    } while (0)

#define TF_CUBLAS(call)                                                                 \
    do {                                                                                \
        cublasStatus_t tf_cb_e_ = (call);                                               \
        if (tf_cb_e_ != CUBLAS_STATUS_SUCCESS) return tf_cublas_fail(__FILE__, __LINE__, #call, tf_cb_e_); \
    } while (0)

#define TF_CUSOLVER(call)                                                               \
    do {                                                                                \
        cusolverStatus_t tf_cs_e_ = (call);                                             \
        if (tf_cs_e_ != CUSOLVER_STATUS_SUCCESS) return tf_cusolver_fail(__FILE__, __LINE__, #call, tf_cs_e_); \
    } while (0)

#endif
