/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the Phi pass of GPU CP-APR (internal; tests only): host
 * doubles in, host doubles out, the pass's device output (Phi and its edge
 * rows) poisoned (NaN) before it runs. Without the CUDA backend it fails
 * with TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_APR_CHECK_H
#define TF_TESTS_HOOKS_APR_CHECK_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One Phi pass of mode `mode` of X on the GPU, the factors K's (lambda
 * ignored: B = K's factor of the mode), into phi (dims[mode] x rank,
 * row-major) and its KKT violation into *kkt. */
tf_status tf_gpu_check_apr_phi(const tf_tensor *X, const tf_ktensor *K, uint32_t mode, double eps, double *phi,
                               double *kkt);

#ifdef __cplusplus
}
#endif
#endif
