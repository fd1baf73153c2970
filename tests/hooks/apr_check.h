/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entries to GPU CP-APR (internal; tests only): the Phi pass (host
 * doubles in, host doubles out, the pass's device output -- Phi and its
 * edge rows -- poisoned with NaN before it runs) and a run with the copies
 * streamed in forced batches. Without the CUDA backend they fail with
 * TF_ERR_UNAVAILABLE. */
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

/* A whole CP-APR run (src/algo/cp_apr.c) on the one-GPU backend (a
 * context of its own on GPU 0) with every mode's copy streamed from pinned
 * host memory in batches of `batch` non-zeros (rounded to whole chunks),
 * whatever fits; o as tf_cp_apr takes it, resolved (tf_cp_apr_opts_default
 * and the fields to set; its callback runs per outer iteration); rep->plan
 * the backend's. */
tf_status tf_gpu_check_apr_streamed(const tf_tensor *X, const tf_cp_apr_opts *o, uint64_t batch, tf_ktensor *out,
                                    tf_cp_apr_report *rep);

#ifdef __cplusplus
}
#endif
#endif
