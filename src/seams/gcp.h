/* SPDX-License-Identifier: BSD-3-Clause */
/* The numeric steps of GCP (docs/DESIGN.md, "GCP"), done by a backend on
 * its own memory. The algorithm (src/algo/gcp.c) owns the start, the
 * epochs, the Adam schedule (its bias corrections, the rate and its decay
 * on a failed epoch), the dense mode's L-BFGS and the timers; a backend
 * (the CPU one in src/cpu/gcp_cpu.c) owns the factors, the gradient, Adam's
 * moments, their checkpoint, the fixed sample of the loss estimate and
 * draws the gradient samples. Only scalars cross in sampled mode (and the
 * start and the result, once each), so a GPU backend can keep everything
 * on the device; the dense mode's L-BFGS hands whole vectors over (its
 * tensors are small). The front end (src/front/gcp.c) creates backends:
 * the CPU's (src/cpu/gcp_cpu.c) or one or several GPUs' (src/gpu/gcp, through
 * the CUDA module's table: TF_CUDA_GCP_API below). */
#ifndef TF_SEAMS_GCP_H
#define TF_SEAMS_GCP_H
#include "core/error.h"
#include "seams/cuda_table.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_gcp_backend_ops {
    /* Takes the start (host, dims[m] x R factors; lambda all ones); Adam's
     * moments start at zero; the checkpoint is the start. */
    tf_status (*init)(void *ctx, const tf_ktensor *start);
    /* *f = the fixed sample's weighted loss at the current factors (dense
     * mode: the exact loss over every entry). */
    tf_status (*estimate)(void *ctx, double *f);
    /* Draws gradient sample `iter` (0-based over the run: the draws of a
     * seed and iteration are the same everywhere) and computes the
     * gradient of its weighted loss; *t_sample gets the drawing's seconds. */
    tf_status (*gradient)(void *ctx, uint64_t iter, double *t_sample);
    /* Adam: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, u -= step m /
     * sqrt(v + eps), then u = max(u, lower) entrywise. */
    tf_status (*adam)(void *ctx, double step, double beta1, double beta2, double eps, double lower);
    /* The checkpoint: save (factors and moments), restore them. */
    tf_status (*save)(void *ctx);
    tf_status (*restore)(void *ctx);
    /* Dense mode: u (the factors, mode after mode, row-major, nparams
     * doubles on the host) in, the exact loss and its gradient (g, the same
     * layout) out. */
    tf_status (*dense_fg)(void *ctx, const double *u, double *f, double *g);
    /* Copies the factors into out (allocated by the driver; lambda ones). */
    tf_status (*result)(void *ctx, tf_ktensor *out);
    void (*destroy)(void *ctx);
    /* Adam's moments m and v (nparams doubles each on the host, the
     * factors' layout: mode after mode, row-major): get copies them out,
     * put (after init) sets them and their checkpoint -- a resumed run's
     * (algo/gcp_ckpt.c). NULL: a backend without checkpoints. */
    tf_status (*moments_get)(void *ctx, double *m, double *v);
    tf_status (*moments_put)(void *ctx, const double *m, const double *v);
} tf_gcp_backend_ops;

typedef struct tf_gcp_backend {
    const tf_gcp_backend_ops *ops;
    void *ctx;
    char plan_desc[96];
} tf_gcp_backend;

struct tf_dist;

/* A run on MPI ranks (the front end fills it): the ranks, the whole
 * tensor's non-zero count; keys NULL when every rank holds the whole
 * tensor (rank p evaluates the non-zeros [nnz p / P, nnz (p + 1) / P)),
 * else X is the rank's canonical non-zeros [held, held + X->nnz) and keys
 * the linear index of every non-zero of the whole tensor (nnz of them,
 * borrowed during the creation: the hash set is built from them). */
typedef struct tf_gcp_ranks {
    const struct tf_dist *dist;
    uint64_t nnz, held;
    const uint64_t *keys;
} tf_gcp_ranks;

/* The CPU backend (src/cpu/gcp_cpu.c) of X (borrowed while it lives) under
 * o (resolved: the sample sizes set; o->dense: the fixed sample is every
 * entry, weight 1; not on ranks), on ranks (NULL: one process). */
tf_status tf_cpu_gcp_backend_create(const tf_tensor *X, const tf_gcp_opts *o, const tf_gcp_ranks *ranks,
                                    tf_gcp_backend *out);

/* The CPU backend in "observed only" mode (completion by Adam,
 * algo/complete_adam.c): X's entries are the observed ones, the others
 * unknown (not zero). The samples are of X's entries alone (o->fz and
 * o->gz must be 0): the fixed one fnz entries and every gradient sample
 * gnz entries drawn uniformly, each weighing nnz / (its count) -- a sample
 * of nnz or more is every entry once, weight 1; l2 >= 0 adds 2 l2 A_n to
 * every mode's gradient after the pass (the gradient of l2 sum_n
 * ||A_n||_F^2, the penalty of completion's objective), after the ranks'
 * sum -- on the CPU inside adam's pass over the parameters, which reads
 * A_n anyway (the same sums). ranks: NULL (one process) or MPI ranks each holding the whole X
 * (keys NULL; rank p evaluates its draws of the non-zeros [nnz p / P,
 * nnz (p + 1) / P)). */
tf_status tf_cpu_gcp_backend_create_observed(const tf_tensor *X, const tf_gcp_opts *o, double l2,
                                             const tf_gcp_ranks *ranks, tf_gcp_backend *out);

/* The CUDA backend's entry point (src/gpu/gcp; its format: seams/cuda_table.h):
 * tf_cuda_gcp_backend_create: sampled GCP-Adam on the one GPU of
 * o->context (never NULL here), in double precision, everything on the
 * device: X's non-zeros and the hash set of their linear indices, the
 * factors, the gradient, Adam's moments and their checkpoint, the fixed
 * sample of the estimate (drawn there at creation); each gradient sample
 * drawn inside the gradient's pass, the CPU's draws (cpu/gcp_draw.h). o
 * resolved (the sample sizes set); not dense (TF_ERR_UNAVAILABLE: the
 * dense mode runs on the CPU); TF_ERR_UNAVAILABLE too for an order above
 * the GPU's or a tensor of 2^63 entries or more, TF_ERR_NOMEM (naming the
 * bytes and the budget) when it does not fit the context's device budget.
 * X borrowed during the call only.
 * tf_cuda_gcp_backend_create_multi (src/gpu/gcp/multi.cu): the same over
 * several GPUs, GenTen's way: this process's GPUs are o->context's devices
 * (dist NULL) or, on MPI ranks (dist), the one GPU of this rank, dist->size
 * GPUs in all. Every GPU holds what one GPU's backend holds (the whole
 * tensor X -- every rank's X the whole tensor --, its hash set, the
 * factors, the moments: the same memory per GPU) and draws every sample
 * whole, alike, but evaluates only its part of the sample's entries (the
 * run's GPU p of P: entries [n p / P, n (p + 1) / P)); the partial
 * gradients are summed over the GPUs (exec/exchange.cuh's sum: peer copies
 * in GPU order, or NCCL), so that every GPU runs Adam on the same gradient
 * and the factors stay the same on all (no factor exchange); the partial
 * losses are summed on the host in GPU order, then over the ranks.
 * tf_cuda_gcp_backend_create_observed: either of them (multi 0: the one
 * GPU of o->context, dist NULL; multi 1: several GPUs or GPU ranks, X the
 * whole tensor on every rank) in the observed-only mode of
 * tf_cpu_gcp_backend_create_observed -- the same samples, weights and l2
 * term (added once, after the GPUs' and ranks' sum). */
#define TF_CUDA_GCP_API(ROW)                                                                                     \
    ROW(MAY_LOAD, tf_status, tf_cuda_gcp_backend_create,                                                         \
        (const tf_tensor *X, const tf_gcp_opts *o, tf_gcp_backend *out), (X, o, out), ,                          \
        tf_cuda_unavailable("GPU GCP needs"))                                                                    \
    ROW(MAY_LOAD, tf_status, tf_cuda_gcp_backend_create_multi,                                                   \
        (const tf_tensor *X, const tf_gcp_opts *o, const struct tf_dist *dist, tf_gcp_backend *out),            \
        (X, o, dist, out), , tf_cuda_unavailable("GPU GCP needs"))                                             \
    ROW(MAY_LOAD, tf_status, tf_cuda_gcp_backend_create_observed,                                                \
        (const tf_tensor *X, const tf_gcp_opts *o, double l2, int multi, const struct tf_dist *dist,             \
         tf_gcp_backend *out),                                                                                   \
        (X, o, l2, multi, dist, out), , tf_cuda_unavailable("GPU GCP needs"))
TF_CUDA_GCP_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
