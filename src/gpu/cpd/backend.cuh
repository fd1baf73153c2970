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
#include "gpu/runtime/gpu_dev.cuh"

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
     * GPU's rows of that mode, remote the others (desc: the engine's description) */
    virtual tf_status add_shard(uint32_t mode, const tf_tensor *part, const tf_tensor *remote, uint64_t lo,
                                uint64_t rows, const tf_cpd_opts *o, char *desc, size_t len) = 0;
    virtual tf_status init(const tf_ktensor *k) = 0;
    virtual tf_status mttkrp(uint32_t mode) = 0;
    virtual tf_status solve(uint32_t mode, int *used_pinv) = 0;
    virtual tf_status normalize(uint32_t mode, int max_norm) = 0;
    virtual tf_status gram(uint32_t mode) = 0;
    virtual tf_status fit_terms(uint32_t mode, double *inner, double *knorm2) = 0;
    virtual tf_status result(tf_ktensor *out) = 0;
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
};

/* A new state of the precision's value type (NULL when out of memory). */
gpu_cpd_base *tf_gpu_cpd_new(tf_precision prec);
#endif
