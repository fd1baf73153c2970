/* SPDX-License-Identifier: BSD-3-Clause */
/* The CP-ALS state of one GPU (backend.cu), as the backends that drive it
 * see it: the single-GPU backend (the vtable of seams/cpd.h around one of
 * these) and the one over several GPUs (multi.cu), which holds one per GPU,
 * each with its shards: per mode the non-zeros whose index lies in the
 * GPU's rows [lo, lo + rows) of that mode, so the GPU computes those rows of
 * the MTTKRP and of the new factor, and the other rows arrive from their
 * owners (NCCL) before the normalisation, which then runs on the whole
 * factor, the same on every GPU. */
#ifndef TF_GPU_CPD_BACKEND_CUH
#define TF_GPU_CPD_BACKEND_CUH
#include "gpu/exec/shard_cut.cuh"
#include "gpu/runtime/gpu_dev.cuh"
extern "C" {
#include "seams/cpd.h"
}

struct gpu_cpd_base {
    virtual ~gpu_cpd_base() {}
    /* one GPU, the whole tensor: the context's GPU, an engine for X */
    virtual tf_status setup(const tf_tensor *X, const tf_cpd_opts *o, char *desc, size_t len) = 0;
    /* one GPU of several: ctx, the shape of X (dims), no engine yet */
    virtual tf_status setup_sharded(tf_gpu_dev *ctx, const tf_tensor *X, const tf_cpd_opts *o) = 0;
    /* the shard of `mode`: this GPU's rows [lo, lo + rows) of it and part,
     * their non-zeros with that index shifted down by lo (dims[mode] = rows;
     * unused when rows is 0); split in two where remote is not NULL: part
     * then holds the non-zeros whose previous mode's index is one of this
     * GPU's rows of that mode, remote the others (desc: the engine's
     * description); each on the host or cut on this GPU (exec/shard_cut.cuh) */
    virtual tf_status add_shard(uint32_t mode, const tf_gpu_shard *part, const tf_gpu_shard *remote, uint64_t lo,
                                uint64_t rows, const tf_cpd_opts *o, char *desc, size_t len) = 0;
    virtual tf_status init(const tf_ktensor *k) = 0;
    virtual tf_status mttkrp(uint32_t mode) = 0;
    virtual tf_status solve(uint32_t mode, int *used_pinv) = 0;
    virtual tf_status normalize(uint32_t mode, int max_norm) = 0;
    virtual tf_status gram(uint32_t mode) = 0;
    virtual tf_status fit_terms(uint32_t mode, double *inner, double *knorm2) = 0;
    virtual tf_status result(tf_ktensor *out) = 0;
    /* Applies the deferred column scales to the factors (they become 1).
     * result() does it on its own GPU; several GPUs do it on every GPU
     * first, so that all of them keep the same factors after a checkpoint. */
    virtual tf_status flush_scales() = 0;
    virtual tf_status sweep(int max_norm, double *inner, double *knorm2, double *t_mttkrp, double *t_dense,
                            double *t_fit, uint64_t *pinv) = 0;
    /* The steps queued on the GPU's work stream without waiting (solve's
     * large-rank path excepted: it waits for its own R x R checks);
     * normalize() is queued too. solve writes the GPU's own rows only. */
    virtual tf_status mttkrp_async(uint32_t mode) = 0;
    /* mttkrp_async in its two halves (a split shard): the first part, which
     * reads only this GPU's rows of the previous mode's factor, then the
     * rest, which needs the others' (added into M) */
    virtual tf_status mttkrp_local_async(uint32_t mode) = 0;
    virtual tf_status mttkrp_remote_async(uint32_t mode) = 0;
    /* the one-block solve with deferred normalisation (R small; known from
     * setup on): the MTTKRP reads factors as solved, never rescaled */
    virtual bool small_rank() const = 0;
    virtual tf_status solve_async(uint32_t mode, int *host_pinv) = 0;
    virtual tf_status gram_async(uint32_t mode) = 0;
    virtual tf_status fit_async(uint32_t mode) = 0;
    /* After the queued steps: the fit terms of the last fit_async (inner
     * over this GPU's rows), the pseudo-inverse fallbacks since the last
     * call; fails on a flagged non-finite value. Waits for the stream. */
    virtual tf_status scalars(double *inner, double *knorm2, unsigned *pinv) = 0;
    /* A[mode] on the device (the solve's unscaled factor), its value size */
    virtual void *factor(uint32_t mode) = 0;
    virtual uint32_t value_bytes() const = 0;
    virtual tf_gpu_dev *gpu() = 0;

    /* ---- AO-ADMM (kernels: admm.cuh; the loop over one GPU or several:
     * tf_gpu_admm_update below). Every step is queued on the work stream;
     * only the least-squares inverse waits (its Cholesky check). */
    /* Several GPUs, before init: this GPU's residual sums go into row `row`
     * of a table of `parts` rows (one GPU: row 0 of 1). */
    virtual void admm_layout(uint32_t parts, uint32_t row) = 0;
    /* The table (device memory, parts x TF_GPU_ADMM_TERMS doubles). */
    virtual double *admm_table() = 0;
    /* The mode has had its first AO-ADMM update (its dual is kept). */
    virtual bool admm_warm(uint32_t mode) const = 0;
    /* A mode without a proximal operator, l2 > 0: its rows of A = M (V +
     * l2 I)^-1 (*host_pinv = 1: the pseudo-inverse). */
    virtual tf_status admm_ridge(uint32_t mode, double l2, int *host_pinv) = 0;
    /* An update with a proximal operator, up to its inner iterations: the
     * warm start (unless cold), V with k's ridge, rho; with ls the
     * least-squares pass M V^-1 (into H when cold, else scratch) and its
     * negative-entry flag in this GPU's row of the table; (V + rho I)^-1. */
    virtual tf_status admm_start(uint32_t mode, const tf_cpd_constraint &k, bool cold, bool ls, int *host_pinv) = 0;
    /* After the table's rows are gathered: the least-squares pass decided
     * (admm.c's least_squares: U = 0, or the projected solution as the
     * update). */
    virtual tf_status admm_settle(uint32_t mode, bool cold, bool project_only) = 0;
    /* One inner iteration of this GPU's rows, its sums into its row. */
    virtual tf_status admm_iterate(uint32_t mode) = 0;
    /* After the gather: the stop test over all rows. */
    virtual tf_status admm_test(double tol, uint32_t max_inner) = 0;
    /* Queues the state's copy to the host; after a wait, admm_state reads it. */
    virtual tf_status admm_fetch() = 0;
    virtual void admm_state(int *stop, unsigned *iters, int *diverged) const = 0;
    /* One GPU: the whole AO-ADMM update of mode (tf_gpu_admm_update, then
     * the step's scalars). */
    virtual tf_status admm_update(uint32_t mode, const tf_cpd_update *u, tf_cpd_step_report *rep) = 0;
};

/* What tf_gpu_admm_update needs of the GPUs it drives besides their
 * states: the all-gather of the residual table's rows (nothing on one GPU)
 * and a wait for every GPU's queued work (bounded over several). */
struct tf_gpu_admm_sync {
    virtual ~tf_gpu_admm_sync() {}
    virtual tf_status gather() = 0;
    virtual tf_status wait() = 0;
};

/* AO-ADMM's update of mode (admm.c's semantics, u resolved) on the n GPUs
 * of part, each on its rows: a mode without a proximal operator in closed
 * form (ALS's solve, or the ridge), else the start, the least-squares
 * decision where it applies, and the inner iterations queued in batches,
 * each kernel of an iteration a no-op once the device's stop test has
 * fired, the state read back once per batch (every GPU must agree). The
 * rows are not exchanged here. *host_pinv: a least-squares inverse took
 * the pseudo-inverse (GPU 0's; the small-rank ALS solve counts its own on
 * the device); *inner: the inner iterations run. */
tf_status tf_gpu_admm_update(gpu_cpd_base *const *part, int n, tf_gpu_admm_sync &sync, uint32_t mode,
                             const tf_cpd_update *u, int *host_pinv, uint32_t *inner);

/* A new state of the precision's value type (NULL when out of memory). */
gpu_cpd_base *tf_gpu_cpd_new(tf_precision prec);
#endif
