/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU backend of CP-APR: one GPU's state (src/gpu/apr/backend.cu),
 * driven alone by the one-GPU vtable there, or one per GPU by the backend
 * over several GPUs / GPU ranks (src/gpu/apr/multi.cu); and what the test
 * hooks (tests/hooks/apr_check.cu) reach besides the vtable of
 * seams/cp_apr.h. */
#ifndef TF_GPU_APR_APR_CUH
#define TF_GPU_APR_APR_CUH
#include <stdint.h>

extern "C" {
#include "seams/cp_apr.h"
}

struct tf_gpu_dev;

/* One GPU's part of a run: every factor whole (dims x R), lambda, and per
 * mode m this GPU's rows [lo, lo + rows) of it: their Phi and a copy of
 * their non-zeros grouped by row (one GPU: all rows and all non-zeros). */
struct tf_gpu_apr;

tf_gpu_apr *tf_gpu_apr_new();
void tf_gpu_apr_delete(tf_gpu_apr *c);
tf_gpu_dev *tf_gpu_apr_dev(const tf_gpu_apr *c);
/* The whole factor of mode on the device (the rows exchanged among GPUs). */
double *tf_gpu_apr_factor(tf_gpu_apr *c, uint32_t mode);
uint64_t tf_gpu_apr_passes(const tf_gpu_apr *c);

/* Building, in this order: the factors of an order-`order` tensor of dims
 * at rank R on dev; then every mode's copy: nz holds the non-zeros of the
 * rows [lo, lo + rows) of mode m, their mode-m index shifted down by lo
 * (borrowed during the call; sorted here); then the pass's scratch. Each
 * step checks what it adds against the GPU's budget first (TF_ERR_NOMEM
 * naming it). */
tf_status tf_gpu_apr_setup(tf_gpu_apr *c, tf_gpu_dev *dev, uint32_t order, const uint64_t *dims, uint32_t R);
/* Streamed copies (before the first add_mode): batch > 0 keeps every
 * mode's copy in pinned host memory and sends it through the GPU in
 * batches of that many non-zeros (rounded to whole chunks) each pass; 0:
 * resident (the default). */
tf_status tf_gpu_apr_stream(tf_gpu_apr *c, uint64_t batch);
tf_status tf_gpu_apr_add_mode(tf_gpu_apr *c, uint32_t m, const tf_tensor *nz, uint64_t lo, uint64_t rows);
tf_status tf_gpu_apr_finish(tf_gpu_apr *c);

/* The steps of seams/cp_apr.h on this GPU's rows. _async: queued on the
 * GPU's work stream, nothing waited for; their scalar (the KKT violation
 * of this GPU's rows, the scooch count, the log-likelihood's data term of
 * this GPU's non-zeros of mode 1) read by tf_gpu_apr_read once the
 * stream is idle. */
tf_status tf_gpu_apr_start(tf_gpu_apr *c, const tf_ktensor *start);
tf_status tf_gpu_apr_begin_async(tf_gpu_apr *c, uint32_t mode, double kappa, double kappatol);
tf_status tf_gpu_apr_phi_async(tf_gpu_apr *c, uint32_t mode, double eps);
tf_status tf_gpu_apr_multiply_async(tf_gpu_apr *c, uint32_t mode);
tf_status tf_gpu_apr_loglik_async(tf_gpu_apr *c);
/* The last step's scalar and scooch count (either NULL). Synchronous. */
tf_status tf_gpu_apr_read(tf_gpu_apr *c, double *scalar, uint64_t *count);
/* The whole factor of mode normalised (every row here: after the rows'
 * exchange): lambda = its column 1-norms, TF_ERR_NUMERIC where one is not
 * finite. Synchronous (lambda comes to the host). */
tf_status tf_gpu_apr_normalize(tf_gpu_apr *c, uint32_t mode);
/* sum_r lambda_r prod_n (column sum r of A_n), from the whole factors.
 * Synchronous. */
tf_status tf_gpu_apr_model_sum(tf_gpu_apr *c, double *model);
tf_status tf_gpu_apr_result(tf_gpu_apr *c, tf_ktensor *out);

/* The one-GPU backend of X on o->context's GPU (tf_cuda_cp_apr_backend_create
 * is stream_batch 0: resident where the copies fit, else streamed in the
 * largest batches the budget allows; the tests force batches > 0). */
tf_status tf_gpu_apr_backend_make(const tf_tensor *X, const tf_cp_apr_opts *o, uint64_t stream_batch,
                                  tf_cp_apr_backend *out);
/* Fills mode `mode`'s Phi and the pass's edge rows of a backend made by
 * tf_cuda_cp_apr_backend_create with NaN (a test's poison before a pass). */
tf_status tf_gpu_apr_poison(void *ctx, uint32_t mode);
/* Copies mode `mode`'s Phi (dims x R, row-major) into host memory. */
tf_status tf_gpu_apr_get_phi(void *ctx, uint32_t mode, double *phi);
#endif
