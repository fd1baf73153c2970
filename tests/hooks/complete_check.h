/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to GPU completion (internal; tests only): the current factor
 * of a mode of a GPU completion backend (tf_cuda_complete_backend_create's
 * ctx) set to NaN on the device, so that a row an update leaves out
 * shows. Without the CUDA backend it fails with TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_COMPLETE_CHECK_H
#define TF_TESTS_HOOKS_COMPLETE_CHECK_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

tf_status tf_gpu_check_complete_poison(void *ctx, uint32_t mode);
/* The same for a backend over several GPUs (tf_cuda_complete_backend_create_multi's
 * ctx): the factor on every GPU. */
tf_status tf_gpu_check_complete_multi_poison(void *ctx, uint32_t mode);

#ifdef __cplusplus
}
#endif
#endif
