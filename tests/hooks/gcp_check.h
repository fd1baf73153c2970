/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entries to GPU GCP (internal; tests only), on the backend of
 * tf_cuda_gcp_backend_create in a context of its own on GPU 0: the
 * gradient sample of an iteration as the GPU draws it, and one estimate
 * and one gradient from a given start (the gradient's device copy
 * poisoned with NaN first). Without the CUDA backend they fail with
 * TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_GCP_CHECK_H
#define TF_TESTS_HOOKS_GCP_CHECK_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The gradient sample of iteration iter for X under o (o->rank, loss,
 * seed and the four sample sizes set; fnz + fz > 0) into host arrays
 * ind[0 .. order - 1] and vals (room for o->gnz + o->gz each): *n entries,
 * the first *nz non-zeros, their weights. */
tf_status tf_gpu_check_gcp_draw(const tf_tensor *X, const tf_gcp_opts *o, uint64_t iter, uint32_t *const *ind,
                                double *vals, uint64_t *n, uint64_t *nz, double *w_nz, double *w_z);

/* The backend started at K's factors (lambda ignored: ones): the fixed
 * sample's loss into *f, then the gradient of iteration iter's sample
 * into g (the factors' sizes, mode after mode, row-major). */
tf_status tf_gpu_check_gcp_step(const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K, uint64_t iter,
                                double *f, double *g);

/* The same over `gpus` GPUs (devices 0 .. gpus - 1 of a context of its
 * own; tf_cuda_gcp_backend_create_multi): the estimate, then the gradient
 * of iteration iter as every GPU holds it after the sum over the GPUs into
 * g (gpus copies of the factors' sizes, GPU after GPU), every GPU's device
 * gradient poisoned with NaN first; *plan the backend's description. */
tf_status tf_gpu_check_gcp_step_multi(const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K, uint64_t iter,
                                      int gpus, double *f, double *g, char plan[96]);

/* The observed-only mode (tf_cuda_gcp_backend_create_observed, completion
 * by Adam; o->fz = o->gz = 0) on one GPU (gpus 1) or `gpus` GPUs of a
 * context of its own: the estimate, then iteration iter's gradient (with
 * l2's term) as every GPU holds it into g (gpus copies, GPU after GPU),
 * outputs poisoned first; then, with adam_step > 0, one Adam step of that
 * size (beta 0.9 / 0.999, eps 1e-8, no lower bound) and the factors after
 * it into u (one copy: GPU 0's); *plan the backend's description. */
tf_status tf_gpu_check_gcp_observed_step(const tf_tensor *X, const tf_gcp_opts *o, double l2, const tf_ktensor *K,
                                         uint64_t iter, int gpus, double adam_step, double *f, double *g, double *u,
                                         char plan[96]);

#ifdef __cplusplus
}
#endif
#endif
