/* SPDX-License-Identifier: BSD-3-Clause */
/* The numeric steps of CP-ALS, done by a backend on its own memory. The
 * algorithm (src/algo/cp_als.c) owns the iteration, the timers,
 * convergence and the fit formula; a backend (CPU, GPU) owns the factors,
 * the MTTKRP output M, the Gram matrices and lambda. Only scalars cross.
 * The front end (src/front/cpd.c) creates backends. */
#ifndef TF_SEAMS_CPD_H
#define TF_SEAMS_CPD_H
#include <stdio.h>

#include "seams/cuda_table.h"
#include "seams/shards.h"
#include "core/error.h"
#include "tenfold.h"

/* Relative threshold below which the normal matrix counts as singular: the
 * Cholesky path needs reciprocal condition > it, and the pseudo-inverse drops
 * eigenvalues <= it * max|eigenvalue| (never less than R * eps). */
#define TF_DENSE_PINV_RCOND 1e-12

/* One call of the per-mode update (the seam of every CP method: see
 * docs/DESIGN.md, "The CP update seam"). u is the run's update, resolved by
 * the front end (never NULL, every field set); iter the outer iteration
 * (1-based). */
typedef struct tf_cpd_update_step {
    const tf_cpd_update *u;
    uint32_t iter;
} tf_cpd_update_step;

/* What one update reports back (zeroed by the caller). */
typedef struct tf_cpd_step_report {
    int used_pinv;  /* a least-squares solve fell back to the pseudo-inverse */
    uint32_t inner; /* AO-ADMM: the ADMM iterations it ran; HALS: its sweeps */
} tf_cpd_step_report;

/* "non-negative CP (AO-ADMM)", "L1-regularised CP (AO-ADMM)", "non-negative
 * CP (HALS)", "CP-ALS": what an update computes, for messages (buf of at
 * least 96 bytes). */
static inline const char *tf_cpd_update_what(const tf_cpd_update *u, char *buf, size_t len)
{
    if (!u || u->kind == TF_CPD_UPDATE_ALS) return "CP-ALS";
    if (u->kind != TF_CPD_UPDATE_AO_ADMM && u->kind != TF_CPD_UPDATE_HALS && u->kind != TF_CPD_UPDATE_AUTO) {
        snprintf(buf, len, "CP update kind %d", (int)u->kind);
        return buf;
    }
    int nonneg = 0, l1 = 0, l2 = 0;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        nonneg |= u->mode[m].nonneg != 0;
        l1 |= u->mode[m].l1 > 0.0;
        l2 |= u->mode[m].l2 > 0.0;
    }
    snprintf(buf, len, "%s%s%s%s%s%s CP (%s)", nonneg ? "non-negative" : "", nonneg && (l1 || l2) ? ", " : "",
             l1 ? "L1" : "", l1 && l2 ? "/" : "", l2 ? "L2" : "", l1 || l2 ? "-regularised" : nonneg ? "" : "constrained",
             u->kind == TF_CPD_UPDATE_HALS ? "HALS" : u->kind == TF_CPD_UPDATE_AUTO ? "AO-ADMM or HALS" : "AO-ADMM");
    return buf;
}

/* The one-line failure of a backend that lacks u's kind: "cpd:
 * non-negative CP (AO-ADMM) is not available on several GPUs yet". */
static inline tf_status tf_cpd_update_unavailable(const tf_cpd_update *u, const char *where)
{
    char buf[96];
    return tf_fail(TF_ERR_UNAVAILABLE, "cpd: %s is not available on %s yet%s", tf_cpd_update_what(u, buf, sizeof buf),
                   where, u && u->kind != TF_CPD_UPDATE_ALS ? " (the CPU runs it: --device cpu)" : "");
}

typedef struct tf_cpd_backend_ops {
    /* Takes the initial factors (host, dims[m] x R); allocates M, Grams, lambda = 1. */
    tf_status (*init)(void *ctx, const tf_ktensor *init);
    /* M <- MTTKRP(X, factors, mode). */
    tf_status (*mttkrp)(void *ctx, uint32_t mode);
    /* The update of A_mode from M (the last mttkrp of this mode) and V =
     * Hadamard of G_k over k != mode, as step->u says: ALS A_mode <- M *
     * pinv(V) (Cholesky, falling back to a pseudo-inverse when V is not
     * positive definite: rep->used_pinv = 1), AO-ADMM, HALS, ... A backend
     * dispatches on step->u->kind and returns tf_cpd_update_unavailable for
     * a kind it lacks. */
    tf_status (*update)(void *ctx, uint32_t mode, const tf_cpd_update_step *step, tf_cpd_step_report *rep);
    /* Column norms of A_mode into lambda (2-norm if !max_norm, else
     * max(max|a|, 1)); columns divided by them (zero columns left as is). */
    tf_status (*normalize)(void *ctx, uint32_t mode, int max_norm);
    /* G_mode <- A_mode^T A_mode. */
    tf_status (*gram)(void *ctx, uint32_t mode);
    /* inner = <X, K> = sum_r lambda_r sum_i M(i,r) A_mode(i,r) (M from the
     * last mttkrp of this mode); model_norm2 = ||K||^2 = lambda^T (Hadamard of all G) lambda. */
    tf_status (*fit_terms)(void *ctx, uint32_t mode, double *inner, double *model_norm2);
    /* Copies factors and lambda into out (allocated by the driver). */
    tf_status (*result)(void *ctx, tf_ktensor *out);
    void (*destroy)(void *ctx);
    /* Optional (NULL: the driver calls the steps above one by one): one
     * whole ALS iteration -- for every mode mttkrp, the ALS update,
     * normalize(max_norm), gram; then fit_terms of the last mode -- without
     * waiting between steps (GPU) or with the dense steps fused into two passes
     * over the factor (CPU, one process), the numbers the steps give (the
     * driver calls it for ALS only). Adds each step's measured seconds to t_mttkrp[mode], *t_dense
     * and *t_fit, and the pseudo-inverse fallbacks to *pinv. */
    tf_status (*sweep)(void *ctx, int max_norm, double *inner, double *model_norm2, double *t_mttkrp,
                       double *t_dense, double *t_fit, uint64_t *pinv);
    /* Optional: after the run, what the backend alone knows (several GPUs:
     * the factor exchange time) into rep. */
    void (*report)(void *ctx, tf_cpd_report *rep);
    /* Optional (checkpoints, src/algo/checkpoint.h; NULL: the backend keeps
     * no state beyond the factors and lambda, or cannot export it): the
     * per-mode state the next iteration reads -- AO-ADMM's scaled dual
     * variable of each mode that has one (in the normalised factor's scale),
     * every row (ranks: gathered; collective). aux_get fills aux[m]
     * (dims[m] x R, allocated by the caller) and sets has[m] = 1 for each
     * mode that has one (else leaves has[m] 0); aux_put (after init) takes
     * them back, a mode with rows 0 left without. */
    tf_status (*aux_get)(void *ctx, tf_matrix *aux, int *has);
    tf_status (*aux_put)(void *ctx, const tf_matrix *aux);
} tf_cpd_backend_ops;

typedef struct tf_cpd_backend {
    const tf_cpd_backend_ops *ops;
    void *ctx;
    char plan_desc[96];
} tf_cpd_backend;

/* CPU backend: MTTKRPs through `plan` (a CPU plan of X, borrowed: the
 * caller frees it after the backend). */
tf_status tf_cpu_cpd_backend_create(const tf_tensor *X, const tf_cpd_opts *o, struct tf_plan *plan,
                                    tf_cpd_backend *out);
/* The CPU backend of one rank of a distributed run (dist): shard[m], a CPU
 * plan of the non-zeros whose mode-m index lies in this rank's rows
 * [row_lo[m][rank], row_lo[m][rank+1]), that index shifted down by
 * row_lo[m][rank] (dims[m] the rank's rows, as tf_partition_split cuts);
 * all borrowed (freed after the backend). */
struct tf_dist;
tf_status tf_cpu_cpd_backend_create_dist(const tf_tensor *X, const tf_cpd_opts *o, struct tf_plan *const *shard,
                                         const uint64_t *const *row_lo, const struct tf_dist *dist,
                                         tf_cpd_backend *out);
/* The CUDA backends (the rows' format: seams/cuda_table.h):
 * - tf_cuda_cpd_backend_create (src/gpu/cpd): the whole iteration on the
 *   GPU of o->context (never NULL here);
 * - tf_cuda_cpd_backend_create_multi (src/gpu/cpd/multi.cu): over several
 *   GPUs: this process's GPUs are o->context's devices (sh->count of them)
 *   or, with sh->dist, its one GPU; factor rows shared through NCCL. */
#define TF_CUDA_CPD_API(ROW)                                                                                       \
    ROW(MAY_LOAD, tf_status, tf_cuda_cpd_backend_create,                                                           \
        (const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *out), (X, o, out),                              \
        , tf_cuda_unavailable("GPU CP-ALS needs"))                                                                 \
    ROW(MAY_LOAD, tf_status, tf_cuda_cpd_backend_create_multi,                                                     \
        (const tf_tensor *X, const tf_cpd_opts *o, const tf_shards *sh, tf_cpd_backend *out), (X, o, sh, out),     \
        , tf_cuda_unavailable("GPU CP-ALS needs"))
TF_CUDA_CPD_API(TF_CUDA_DECLARE_)
#endif
