/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU backend of CP-APR (src/gpu/apr/backend.cu): what the test hooks
 * (tests/hooks/apr_check.cu) reach besides the vtable of seams/cp_apr.h. */
#ifndef TF_GPU_APR_APR_CUH
#define TF_GPU_APR_APR_CUH
#include <stdint.h>

extern "C" {
#include "seams/cp_apr.h"
}

/* Fills mode `mode`'s Phi and the pass's edge rows of a backend made by
 * tf_cuda_cp_apr_backend_create with NaN (a test's poison before a pass). */
tf_status tf_gpu_apr_poison(void *ctx, uint32_t mode);
/* Copies mode `mode`'s Phi (dims x R, row-major) into host memory. */
tf_status tf_gpu_apr_get_phi(void *ctx, uint32_t mode, double *phi);
#endif
