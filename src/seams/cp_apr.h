/* SPDX-License-Identifier: BSD-3-Clause */
/* The numeric steps of CP-APR's multiplicative updates (docs/DESIGN.md,
 * "CP-APR"), done by a backend on its own memory. The algorithm
 * (src/algo/cp_apr.c) owns the start, the outer and inner loops, their
 * stopping rules, the timers and the final arrangement; a backend (the CPU
 * one in src/cpu/cp_apr_cpu.c, the GPU one in src/gpu/apr) owns the factors, lambda,
 * every mode's Phi and its copy of the non-zeros. Only scalars cross (and
 * the start and the result, once each), so a GPU backend keeps everything
 * on the device; one over several processes keeps its rows and shares them
 * in end_mode, reducing its scalars (kkt, scooched, the log-likelihood)
 * over the ranks before returning them, so every rank decides alike.
 * The front end (src/front/cp_apr.c) creates backends. */
#ifndef TF_SEAMS_CP_APR_H
#define TF_SEAMS_CP_APR_H
#include "core/error.h"
#include "seams/cuda_table.h"
#include "seams/shards.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row-wise Newton method's parameters for one mode (pyttb's
 * tt_cp_apr_pdnr) and what it reports back. */
typedef struct tf_apr_newton_params {
    double epsdivzero;  /* the floor of <b, pi_j> in the gradient               */
    double epsactive;   /* the active-set tolerance (Bertsekas)                 */
    double mu0;         /* the damping each row starts from                     */
    double row_tol;     /* a row stops at a KKT violation below it              */
    uint32_t max_inner; /* Newton steps per row at most                         */
} tf_apr_newton_params;

typedef struct tf_apr_newton_stats {
    double kkt;            /* the largest first-step KKT violation of a row     */
    uint64_t steps;        /* Newton steps, summed over the rows                */
    uint64_t rows_changed; /* rows that took a step (0: the mode converged)      */
    uint64_t evals;        /* row objective evaluations                         */
} tf_apr_newton_stats;

typedef struct tf_cp_apr_backend_ops {
    /* Takes the start (host, dims[m] x R factors with columns of unit
     * 1-norm, and lambda); every mode's Phi starts at zero. */
    tf_status (*init)(void *ctx, const tf_ktensor *start);
    /* The start of mode n's subproblem. With kappa > 0 the scooch first:
     * A_n(i,r) += kappa where A_n(i,r) < kappatol and Phi_n(i,r) > 0 (Phi_n
     * as the mode's last inner iteration left it), the count of such
     * entries into *scooched; then B = A_n diag(lambda), lambda = 1 (B, the
     * mode's iterate, lives in A_n's place). */
    tf_status (*begin_mode)(void *ctx, uint32_t mode, double kappa, double kappatol, uint64_t *scooched);
    /* The kernel: for every non-zero x at (i_1..i_N), with p = the row
     * product over k != n of A_k(i_k,:) and m = <B(i_n,:), p>,
     * Phi_n(i_n,:) += x / max(m, epsdivzero) * p (rows without non-zeros:
     * 0); then *kkt = max over i, r of |min(B(i,r), 1 - Phi_n(i,r))|. The
     * p of a mode do not change between its begin_mode and end_mode: a
     * backend may keep them from its first pass (opts->cache_bytes). */
    tf_status (*phi)(void *ctx, uint32_t mode, double epsdivzero, double *kkt);
    /* B <- B .* Phi_n (the multiplicative update). */
    tf_status (*multiply)(void *ctx, uint32_t mode);
    /* The end of mode n's subproblem: lambda_r = sum_i |B(i,r)|, and B's
     * columns with lambda_r > 0 divided by it (A_n normalised again). A
     * non-finite column is TF_ERR_NUMERIC. */
    tf_status (*end_mode)(void *ctx, uint32_t mode);
    /* *ll = sum over the non-zeros with x != 0 of x log m (m the model
     * [[lambda; A_1..A_N]] there) - sum_r lambda_r prod_n sum_i A_n(i,r). */
    tf_status (*loglik)(void *ctx, double *ll);
    /* Copies the factors and lambda into out (allocated by the driver). */
    tf_status (*result)(void *ctx, tf_ktensor *out);
    void (*destroy)(void *ctx);
    /* Optional: after the run, what the backend alone knows (its cache of
     * Khatri-Rao rows, the passes that read it) into rep. */
    void (*report)(void *ctx, tf_cp_apr_report *rep);
    /* Optional (checkpoints, src/algo/checkpoint.h; NULL: not exported, so a
     * checkpoint needs kappa = 0): every mode's last Phi, which the next
     * scooch reads, every row (ranks: gathered; collective). aux_get fills
     * aux[m] (dims[m] x R, allocated by the caller) and sets has[m] = 1;
     * aux_put (after init) sets them. */
    tf_status (*aux_get)(void *ctx, tf_matrix *aux, int *has);
    tf_status (*aux_put)(void *ctx, const tf_matrix *aux);
    /* Optional (NULL: the backend has no row-wise Newton method, and
     * TF_CP_APR_PDNR is refused on it): between begin_mode (kappa 0) and
     * end_mode, every row of B solved as its own subproblem by projected
     * damped Newton steps (src/cpu/apr_newton.h), a row without non-zeros
     * set to 0. Ranks: each its rows, the stats reduced (kkt: max; counts:
     * summed) so every rank decides alike. */
    tf_status (*row_newton)(void *ctx, uint32_t mode, const tf_apr_newton_params *p, tf_apr_newton_stats *st);
} tf_cp_apr_backend_ops;

typedef struct tf_cp_apr_backend {
    const tf_cp_apr_backend_ops *ops;
    void *ctx;
    char plan_desc[96];
} tf_cp_apr_backend;

/* CPU backend (src/cpu/cp_apr_cpu.c) of X (borrowed while it lives: a mode
 * whose non-zeros X already holds grouped by index is read from X, the
 * others from copies sorted by that mode). */
tf_status tf_cpu_cp_apr_backend_create(const tf_tensor *X, const tf_cp_apr_opts *o, tf_cp_apr_backend *out);
/* The CPU backend of one rank of a distributed run: shard[m] (taken over:
 * the backend frees it) the non-zeros whose mode-m index lies in this
 * rank's rows [row_lo[m][rank], row_lo[m][rank+1]) (the run's labels are
 * the caller's: contiguous cuts, no relabeling); row_lo and dist borrowed.
 * On failure the shards are freed too. */
struct tf_dist;
tf_status tf_cpu_cp_apr_backend_create_dist(const tf_tensor *X, const tf_cp_apr_opts *o, tf_tensor *shard,
                                            const uint64_t *const *row_lo, const struct tf_dist *dist,
                                            tf_cp_apr_backend *out);

/* The CUDA backend's entry point (src/gpu/apr; its format: seams/cuda_table.h):
 * - tf_cuda_cp_apr_backend_create: the whole iteration on the one GPU of
 *   o->context (never NULL here), in double precision: per mode a copy of
 *   the non-zeros grouped by the mode's index, the factors, every mode's
 *   Phi and lambda on the device; where the copies do not fit the
 *   context's device budget they stay in pinned host memory and stream
 *   through the GPU every pass (the same numbers). TF_ERR_NOMEM (naming
 *   the bytes and the budget) when not even that fits, so that the front
 *   end runs it on the CPU under auto. X borrowed during the call only.
 * - tf_cuda_cp_apr_backend_create_multi (src/gpu/apr/multi.cu): over
 *   several GPUs: this process's GPUs are o->context's devices (sh->count
 *   of them) or, with sh->dist, its one GPU of the ranks' run. Each GPU
 *   holds every factor whole and, per mode, its rows' Phi and non-zeros
 *   (sh: contiguous rows, no pairs); after a mode's updates its rows go to
 *   every GPU (exec/exchange.cuh); the scalars are reduced over the GPUs
 *   in GPU order, then over the ranks. TF_ERR_NOMEM (no streaming) when a
 *   GPU cannot hold its part. */
#define TF_CUDA_APR_API(ROW)                                                                                       \
    ROW(MAY_LOAD, tf_status, tf_cuda_cp_apr_backend_create,                                                        \
        (const tf_tensor *X, const tf_cp_apr_opts *o, tf_cp_apr_backend *out), (X, o, out),                        \
        , tf_cuda_unavailable("GPU CP-APR needs"))                                                                 \
    ROW(MAY_LOAD, tf_status, tf_cuda_cp_apr_backend_create_multi,                                                  \
        (const tf_tensor *X, const tf_cp_apr_opts *o, const tf_shards *sh, tf_cp_apr_backend *out),               \
        (X, o, sh, out), , tf_cuda_unavailable("GPU CP-APR needs"))
TF_CUDA_APR_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
