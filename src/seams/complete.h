/* SPDX-License-Identifier: BSD-3-Clause */
/* The numeric steps of completion by ALS (docs/DESIGN.md, "Completion"),
 * done by a backend on its own memory. The algorithm (src/algo/complete.c)
 * owns the start, the loop, the stopping rule (the best model by validation
 * RMSE, patience), the timers and the report; a backend (the CPU one in
 * src/cpu/complete_cpu.c; the GPU ones in src/gpu/complete, batched
 * per-row Cholesky on one GPU or several) owns the
 * factors, the copy of the best ones and its copies of the entries (the
 * training entries grouped by each mode's index, the validation and test
 * entries). Only scalars cross, and the start and the result once each. The
 * front end (src/front/complete.c) checks the inputs and creates backends.
 * A backend over several processes (ranks) or GPUs solves its rows,
 * shares them after each mode and reduces its sums over the GPUs and ranks
 * before returning them, so every rank decides alike. */
#ifndef TF_SEAMS_COMPLETE_H
#define TF_SEAMS_COMPLETE_H
#include "core/error.h"
#include "seams/cuda_table.h"
#include "seams/shards.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The entry sets a backend holds. */
typedef enum tf_complete_set { TF_COMPLETE_TRAIN = 0, TF_COMPLETE_VAL = 1, TF_COMPLETE_TEST = 2 } tf_complete_set;

typedef struct tf_complete_backend_ops {
    /* Takes the start (host, dims[m] x R factors; lambda all ones). */
    tf_status (*init)(void *ctx, const tf_ktensor *start);
    /* Mode n's update: every row i of A_n becomes the solution a of
     * (sum over the training entries x with index i in mode n of h h^T +
     * l2 I) a = sum x h, h the elementwise product of the other factors'
     * rows at the entry (a row without entries: a = 0 when l2 > 0). A
     * system that is not positive definite is TF_ERR_NUMERIC naming the
     * mode, the row and its entry count. sse (may be NULL) gets the sum over
     * the training entries of (x - m)^2 with the mode's new rows (after the
     * last mode: the model's training error, computed while each row's
     * entries are at hand). */
    tf_status (*update)(void *ctx, uint32_t mode, double l2, double *sse);
    /* *sse = sum over the set's entries of (x - m)^2, m the current model
     * there (a set the backend was not given: 0). */
    tf_status (*sse)(void *ctx, tf_complete_set set, double *sse);
    /* *sq = sum_n ||A_n||_F^2 of the current factors. */
    tf_status (*frob_sq)(void *ctx, double *sq);
    /* Keeps a copy of the current factors as the best model. */
    tf_status (*keep)(void *ctx);
    /* *sse as sse, of the kept model. */
    tf_status (*kept_sse)(void *ctx, tf_complete_set set, double *sse);
    /* Copies the kept factors into out (allocated by the driver; lambda
     * left to it). */
    tf_status (*result)(void *ctx, tf_ktensor *out);
    void (*destroy)(void *ctx);
} tf_complete_backend_ops;

typedef struct tf_complete_backend {
    const tf_complete_backend_ops *ops;
    void *ctx;
    char plan_desc[96];
} tf_complete_backend;

/* CPU backend (src/cpu/complete_cpu.c): train copied and sorted by each
 * mode; val and test (may be NULL) borrowed while it lives (their indices
 * checked against train's dims by the caller). */
tf_status tf_cpu_complete_backend_create(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                                         const tf_complete_opts *o, tf_complete_backend *out);
/* The CPU backend of one rank of a distributed run: shard[m] (taken over:
 * the backend frees it, on failure too) the training entries whose mode-m
 * index lies in this rank's rows [row_lo[m][rank], row_lo[m][rank+1])
 * (contiguous cuts, no relabeling), which it solves, sharing them after each
 * mode (dist->allgather_rows); val and test (every entry, borrowed) of which
 * it sums a contiguous range, the sums reduced over the ranks; row_lo and
 * dist borrowed. */
struct tf_dist;
tf_status tf_cpu_complete_backend_create_dist(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                                              const tf_complete_opts *o, tf_tensor *shard,
                                              const uint64_t *const *row_lo, const struct tf_dist *dist,
                                              tf_complete_backend *out);

/* The CUDA backend's entry point (src/gpu/complete; its format:
 * seams/cuda_table.h): tf_cuda_complete_backend_create, the whole of ALS
 * completion on the one GPU of o->context (never NULL here), in double
 * precision: the training entries sorted by each mode's index on the
 * device (CUB radix sort; a row pointer per mode), the factors, the kept
 * ones, the validation and test entries; each row's R x R system summed in
 * shared memory (long rows in segments, their sums added in segment
 * order), then a Cholesky solve there; every sum in a fixed order (no
 * atomics), so a run has the same bits every time and the CPU's numbers to
 * rounding. Ranks above the GPU's limit (TF_GPU_COMPLETE_MAX_RANK, or
 * what the device's shared memory holds) are TF_ERR_UNAVAILABLE, a
 * problem that does not fit the device budget TF_ERR_NOMEM (both: the CPU
 * runs it under auto). The tensors are borrowed during the call only. */
#define TF_GPU_COMPLETE_MAX_RANK 128u
/* tf_cuda_complete_backend_create_multi (src/gpu/complete/multi.cu): the
 * same over several GPUs: this process's GPUs are o->context's devices
 * (sh->count of them) or, with sh->dist, its one GPU of the ranks' run.
 * Each GPU holds every factor whole and, per mode, the training entries of
 * its rows (sh: contiguous rows, no pairs), sorted as on one GPU, and solves
 * those rows with the one GPU's kernels (the same bits: a row's entries
 * stay in their order, its segments are the one GPU's); after a mode its
 * rows go to every GPU (exec/exchange.cuh). The sums (the update's
 * training error: this GPU's rows; the sets: the training entries of its
 * mode-1 rows, a contiguous range of the validation and test entries) are
 * added over the GPUs in GPU order on the host, then over the ranks; the
 * norms and the result come from GPU 0's whole factors. TF_ERR_NOMEM when a
 * GPU cannot hold its part. */
#define TF_CUDA_COMPLETE_API(ROW)                                                                                  \
    ROW(MAY_LOAD, tf_status, tf_cuda_complete_backend_create,                                                      \
        (const tf_tensor *train, const tf_tensor *val, const tf_tensor *test, const tf_complete_opts *o,           \
         tf_complete_backend *out),                                                                                \
        (train, val, test, o, out), , tf_cuda_unavailable("GPU completion needs"))                                 \
    ROW(MAY_LOAD, tf_status, tf_cuda_complete_backend_create_multi,                                                \
        (const tf_tensor *train, const tf_tensor *val, const tf_tensor *test, const tf_complete_opts *o,           \
         const tf_shards *sh, tf_complete_backend *out),                                                           \
        (train, val, test, o, sh, out), , tf_cuda_unavailable("GPU completion needs"))
TF_CUDA_COMPLETE_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
