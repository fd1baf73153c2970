/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU MTTKRP engine: one tensor format resident on one device, computing
 * MTTKRP from device factors into a device output. The plan (plan.cu)
 * and the CP-ALS backend (../cpd/backend.cu) drive engines; each format
 * (coo.cu, fcoo.cu, blco.cu) provides a factory. */
#ifndef TF_GPU_ENGINE_ENGINE_CUH
#define TF_GPU_ENGINE_ENGINE_CUH
#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/limits.cuh"


struct tf_gpu_engine {
    virtual ~tf_gpu_engine() {}
    /* out (dims[mode] x R, row-major, the engine's value type) is fully
     * overwritten; fac[m] (dims[m] x R) for m != mode; all on the device,
     * all work queued on ctx->stream (no synchronisation). */
    virtual tf_status mttkrp(uint32_t mode, const void *const *fac, void *out, uint32_t R) = 0;
    /* Settles any per-mode choice an engine times on first use (F-COO's
     * partition sizes and kernel occupancy) for rank R, with fac as mttkrp's and out as scratch;
     * waits for the stream. mttkrp does it by itself when not inside a
     * stream capture; callers that capture (CP-ALS's graphs) call this
     * first. */
    virtual tf_status tune(const void *const *fac, void *out, uint32_t R)
    {
        (void)fac, (void)out, (void)R;
        return TF_OK;
    }
    /* Bytes of the format read by one MTTKRP of `mode` (for the byte model). */
    virtual uint64_t tensor_bytes(uint32_t mode) const = 0;
    /* Bytes copied from host memory by one MTTKRP of `mode` (streamed engines). */
    virtual uint64_t streamed_bytes(uint32_t mode) const
    {
        (void)mode;
        return 0;
    }
    /* A note for the plan (a slower fallback taken), "" when none. */
    virtual const char *note_text() const { return ""; }
    tf_gpu_dev *ctx = nullptr;   /* owned by the caller, outlives the engine */
    tf_format format = TF_FORMAT_AUTO;
    /* true: mttkrp adds into out instead of overwriting it (F-COO shards:
     * the second part of a GPU's shard of a mode); set before the first run */
    bool accumulate = false;
    /* false: mttkrp must not run inside a stream capture (the streamed
     * engine's copies and ring events span calls); CP-ALS then launches
     * its steps directly instead of as a graph */
    bool capturable = true;
    uint64_t bytes = 0;           /* device memory held                      */
    char desc[64] = {0};          /* e.g. "blco, 3 blocks"                   */
};

/* Every mode of an order-N tensor, as a mode set (bit m: mode m). */
static inline uint32_t tf_all_modes(uint32_t order) { return order >= 32 ? ~0u : (1u << order) - 1u; }
static inline bool tf_mode_in(uint32_t modes, uint32_t m) { return m < 32 && (modes >> m & 1u); }
static inline uint32_t tf_mode_count(uint32_t modes) { return (uint32_t)__builtin_popcount(modes); }

/* Factories (X canonical or at least valid, order 2..TF_GPU_MAX_ORDER). */
tf_status tf_gpu_coo_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec,
                            tf_gpu_engine **out);
/* F-COO with the copies of the modes in `modes` only (a shard of a run
 * over several GPUs serves one mode; mttkrp of another mode fails),
 * resident, or streamed from host memory (fcoo_stream.cu) as placed
 * (exec/placement.cuh decides). */
tf_status tf_gpu_fcoo_create_modes(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec, uint64_t R,
                                   uint32_t modes, bool streamed, tf_gpu_engine **out);
/* The same, resident, from a COO already on the device with X's shape
 * (X->order, dims, nnz; its host arrays unused): a shard cut on its GPU
 * (exec/shard_cut.cuh). The copies are sorted there (fcoo_build.cu); coo
 * is borrowed until this returns. */
struct tf_fcoo_dcoo;
tf_status tf_gpu_fcoo_create_from_device(tf_gpu_dev *ctx, const tf_tensor *X, const tf_fcoo_dcoo *coo,
                                         tf_precision prec, uint64_t R, uint32_t modes, tf_gpu_engine **out);
/* Whether the device build of `modes` of X (its COO, the sort's scratch
 * and the copies, with a margin) fits ctx's budget now. */
bool tf_fcoo_dbuild_fits(tf_gpu_dev *ctx, const tf_tensor *X, uint32_t value_bytes, uint32_t modes);
tf_status tf_gpu_blco_create(tf_gpu_dev *ctx, const tf_tensor *X, tf_precision prec,
                             tf_gpu_engine **out);

/* Engines are made, their format and residency decided, in
 * exec/placement.cuh. */
#endif
