/* SPDX-License-Identifier: BSD-3-Clause */
/* The inside of a tf_plan: one vtable per (backend, format). Builders fill
 * ops/impl/desc/bytes; plan.c validates arguments before calling ops. */
#ifndef TF_SEAMS_PLAN_H
#define TF_SEAMS_PLAN_H
#include "seams/cuda_table.h"
#include "seams/shards.h"
#include "tenfold.h"

typedef struct tf_plan_ops {
    /* out (dims[mode] x R) fully overwritten; factors already checked. */
    tf_status (*mttkrp)(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out);
    void (*destroy)(void *impl);
    /* Optional: device-resident timing (see tf_plan_time_mttkrp); NULL ->
     * the front end times ops->mttkrp with the wall clock. */
    tf_status (*time_mttkrp)(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out,
                             int warmup, int reps, double *times_ms);
    /* Optional (GPU plans on one GPU): tf_plan_mttkrp_dense with shapes
     * checked and each host operand packed by the front end into doubles
     * with ld = cols (its memory TF_MEMORY_HOST); the other operands are as
     * the caller gave them (GPU memory, or TF_MEMORY_AUTO of the GPU).
     * stream: the caller's cudaStream_t, NULL for the legacy default one.
     * NULL op: the plan takes host arrays only, through mttkrp. */
    tf_status (*mttkrp_dense)(void *impl, uint32_t mode, const tf_dense *factors, const tf_dense *out,
                              void *stream);
} tf_plan_ops;

struct tf_plan {
    const tf_plan_ops *ops;
    void *impl;
    uint32_t order;
    uint64_t nnz;
    uint64_t dims[TF_MAX_ORDER];
    tf_backend backend;
    tf_format format;
    int threads;
    uint64_t bytes;  /* memory held by the format */
    uint64_t build_peak; /* tf_plan_build_peak */
    char desc[96];
    tf_context *own_context; /* made for this plan when its options named none */
    char note[256];          /* tf_plan_note */
    uint64_t streamed[TF_MAX_ORDER]; /* tf_plan_streamed_bytes */
};

/* CPU builders (src/cpu). Each fills p->ops, p->impl, p->bytes, p->desc. */
tf_status tf_cpu_coo_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p);
tf_status tf_cpu_csf_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p);
/* The CSF plan's tree of `mode` alone (its MTTKRP of another mode fails):
 * a rank's shard of a mode is only ever multiplied along that mode. */
tf_status tf_cpu_csf_plan_build_mode(const tf_tensor *X, const tf_plan_opts *o, uint32_t mode, tf_plan *p);
/* tf_plan_build of a CPU plan whose MTTKRP runs along `mode` alone (a CSF
 * plan builds that tree only; COO, every mode as ever), for a shard the
 * front end cut from a tensor it checked: X is not checked again
 * (tf_tensor_validate). */
tf_status tf_plan_build_mode(const tf_tensor *X, const tf_plan_opts *o, uint32_t mode, tf_plan **out);
/* The CUDA builders (src/gpu/mttkrp/plan.cu; the rows' format: seams/cuda_table.h):
 * - tf_cuda_plan_build: every GPU format (coo, fcoo, blco, auto) for
 *   backend GPU, on the GPU of o->context;
 * - tf_cuda_plan_build_multi: the same over the several GPUs of o->context
 *   (multi_plan.cu): F-COO shards per GPU and mode (seams/shards.h).
 * Each fills p->ops, p->impl, p->bytes, p->desc. */
#define TF_CUDA_PLAN_API(ROW)                                                                                      \
    ROW(MAY_LOAD, tf_status, tf_cuda_plan_build, (const tf_tensor *X, const tf_plan_opts *o, tf_plan *p),           \
        (X, o, p), , tf_cuda_unavailable("GPU plans need"))                                                        \
    ROW(MAY_LOAD, tf_status, tf_cuda_plan_build_multi,                                                             \
        (const tf_tensor *X, const tf_plan_opts *o, const tf_shards *sh, tf_plan *p), (X, o, sh, p),               \
        , tf_cuda_unavailable("GPU plans need"))
TF_CUDA_PLAN_API(TF_CUDA_DECLARE_)
#endif
