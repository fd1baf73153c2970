/* SPDX-License-Identifier: BSD-3-Clause */
/* The GPU backend of GCP (src/gpu/gcp): the kernels' arguments and
 * launchers (kernels.cu), one GPU's state as the several-GPU backend
 * (multi.cu) uses it, and what the test hooks (tests/hooks/gcp_check.cu)
 * reach besides the vtable of seams/gcp.h (backend.cu, multi.cu). */
#ifndef TF_GPU_GCP_GCP_CUH
#define TF_GPU_GCP_GCP_CUH
#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu/runtime/limits.cuh"

extern "C" {
#include "seams/gcp.h"
}

struct tf_gpu_dev;

#define TF_GCP_THREADS 256
#define TF_GCP_NOPRIV 0xFFFFFFFFu /* priv_off of a mode whose gradient rows are not in shared memory */

/* What a pass reads: the tensor's non-zeros (X's order) and the hash set of
 * their linear indices (cpu/gcp_draw.h), the factors, the sample -- drawn
 * in the pass (seed, stream: the gradient's) or given (sind, svals: the
 * fixed one) -- and where it writes. */
struct tf_gcp_gpu_args {
    uint32_t N, R, C; /* order, rank, lanes per sample (a power of two <= 32) */
    int loss;         /* tf_gcp_loss */
    int semi;         /* the gradient's sample semi-stratified: a zero draw is any entry (no
                         rejection), a non-zero's term f(x, m) - f(0, m) (cpu/gcp_kernel.c) */
    uint64_t dims[TF_GPU_MAX_ORDER], place[TF_GPU_MAX_ORDER];
    const double *A[TF_GPU_MAX_ORDER];
    double *G[TF_GPU_MAX_ORDER];
    const uint32_t *xind[TF_GPU_MAX_ORDER];
    const double *xvals;
    uint64_t nnz;
    const unsigned long long *slot;
    uint64_t mask;
    /* the sample: n entries, the first nz of them non-zeros; a pass
     * covers entries [j0, n) of it (several GPUs: each its own range) */
    uint64_t n, nz, seed, stream, j0;
    int all; /* the gradient's sample is every non-zero once, in order (observed-only mode) */
    double w_nz, w_z;
    const uint32_t *sind[TF_GPU_MAX_ORDER];
    const double *svals;
    /* the gradient's pass: mode m's rows in shared memory at priv_off[m]
     * (TF_GCP_NOPRIV: atomics on G[m]), priv_total doubles in all */
    uint32_t priv_off[TF_GPU_MAX_ORDER], priv_total;
    double *part; /* the loss pass: one sum per block */
};

/* The hash set: every non-zero's linear index + 1 into slot (mask + 1
 * slots, zeroed), on s. */
tf_status tf_gcp_gpu_build_set(const tf_gcp_gpu_args &a, unsigned long long *slot, cudaStream_t s);
/* Draws the sample of a (seed, stream, n, nz) into ind[N] / vals (n each), on s. */
tf_status tf_gcp_gpu_draw(const tf_gcp_gpu_args &a, uint32_t *const *ind, double *vals, cudaStream_t s);
/* The blocks a pass runs on (the gradient's: as many as the GPU holds at
 * once with its shared memory, priv_total doubles a block, the kernel's
 * opt-in set where that is above 48 KiB; the loss's: enough for the
 * sample), sm SMs. */
tf_status tf_gcp_gpu_blocks(const tf_gcp_gpu_args &a, bool grad, int sm, unsigned *blocks);
/* The loss pass over the given sample: a.part[b] the block sums, then
 * *sum (device) their sum in block order; the same bits every time. */
tf_status tf_gcp_gpu_loss(const tf_gcp_gpu_args &a, unsigned blocks, double *sum, cudaStream_t s);
/* The gradient pass over the drawn sample: G (zeroed first) += the
 * gradient of the weighted loss. */
tf_status tf_gcp_gpu_gradient(const tf_gcp_gpu_args &a, unsigned blocks, cudaStream_t s);
/* Adam's step and projection over P entries (seams/gcp.h's adam), on s. */
tf_status tf_gcp_gpu_adam(double *u, double *m, double *v, const double *g, uint64_t P, double step, double beta1,
                          double beta2, double eps, double lower, cudaStream_t s);
/* g += k u over P entries (the observed-only mode's l2 term, k = 2 l2), on s. */
tf_status tf_gcp_gpu_add_scaled(double *g, const double *u, uint64_t P, double k, cudaStream_t s);

/* The observed-only mode (seams/gcp.h, tf_cpu_gcp_backend_create_observed):
 * samples of X's entries alone (o->fz, o->gz 0), a sample of nnz or more
 * being every entry once (weight 1); l2's term 2 l2 u added to the
 * gradient by the state when it is the whole run (parts 1), else by the
 * several-GPU backend after the sum. */
struct tf_gcp_gpu_observed {
    double l2;
};

/* One GPU's state (backend.cu): the whole of the one-GPU backend's, its
 * passes over part `part` of `parts` of every sample's entries ([n part /
 * parts, n (part + 1) / parts) of the fixed sample's n and of every
 * gradient sample's: the several-GPU backend, multi.cu, holds one per GPU,
 * each drawing the whole sample's entries alike). tf_gpu_gcp_check: the
 * refusals both backends share (dense, rank, order, 2^63 entries). obs:
 * NULL, or the observed-only mode. The
 * vtable of seams/gcp.h runs on a state; besides it: the loss pass queued
 * (no wait) and its sum read once the caller has waited, and the device
 * gradient (nparams doubles, the factors' layout). */
tf_status tf_gpu_gcp_check(const tf_tensor *X, const tf_gcp_opts *o);
tf_status tf_gpu_gcp_state_new(tf_gpu_dev *dev, const tf_tensor *X, const tf_gcp_opts *o, int part, int parts,
                               const tf_gcp_gpu_observed *obs, void **ctx, char *desc, size_t len);
/* Queues g += 2 l2 u on the state's stream (its observed mode's l2; none: nothing). */
tf_status tf_gpu_gcp_add_l2(void *ctx);
const tf_gcp_backend_ops *tf_gpu_gcp_state_ops();
tf_status tf_gpu_gcp_loss_async(void *ctx);
tf_status tf_gpu_gcp_loss_read(void *ctx, double *f);
double *tf_gpu_gcp_gradient_of(void *ctx, uint64_t *nparams);

/* The several-GPU backend (multi.cu) of o->context's GPUs or, on ranks
 * (dist), this rank's GPU (obs: NULL, or the observed-only mode). */
tf_status tf_gpu_gcp_multi_create(const tf_tensor *X, const tf_gcp_opts *o, const struct tf_dist *dist,
                                  const tf_gcp_gpu_observed *obs, tf_gcp_backend *out);

/* Test entries (the backend of tf_cuda_gcp_backend_create): the gradient
 * sample of iteration iter drawn into host arrays (ind[N], vals: room for
 * gnz + gz; *n the count, *nz the non-zeros among them first, the weights);
 * the gradient (after `gradient`) to the host, nparams doubles mode after
 * mode; the gradient's device copy poisoned with NaN. */
tf_status tf_gpu_gcp_draw_sample(void *ctx, uint64_t iter, uint32_t *const *ind, double *vals, uint64_t *n,
                                 uint64_t *nz, double *w_nz, double *w_z);
tf_status tf_gpu_gcp_get_gradient(void *ctx, double *g);
tf_status tf_gpu_gcp_poison(void *ctx);
/* The same for the several-GPU backend (multi.cu): GPU g's gradient (after
 * `gradient`: the sum over every GPU), every GPU's poisoned. */
tf_status tf_gpu_gcp_multi_get_gradient(void *ctx, int g, double *out);
tf_status tf_gpu_gcp_multi_poison(void *ctx);
#endif
