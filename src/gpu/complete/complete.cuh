/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU completion by ALS (src/gpu/complete): what the row solves
 * (rows.cu) and the backend (backend.cu) share. */
#ifndef TF_GPU_COMPLETE_COMPLETE_CUH
#define TF_GPU_COMPLETE_COMPLETE_CUH
#include <stdint.h>

extern "C" {
#include "core/error.h"
#include "tenfold.h"
}
#include "gpu/runtime/limits.cuh"
#include "gpu/engine/mode_sort.cuh"

struct tf_gpu_dev;

/* Entries whose h's a block holds in shared memory at a time. */
#define TFC_BATCH 32u

/* One mode's row solves: the mode's training entries sorted by its index
 * (ind, vals; ptr: the rows' offsets, dims + 1), the factors A (A[mode] is
 * written: out), the rows cut in two lists -- short ones (at most a
 * segment of entries: a block each, the whole system in shared memory)
 * and long ones (their entries in segments [seg_k0, seg_k1), row q's
 * segments row_seg[q] .. row_seg[q + 1] - 1; a block per segment sums its
 * part of the system into partial, a block per row adds the parts in
 * segment order). Per row: the new row into out, its error over its
 * entries into row_sse (want_sse), 0 or 1 + the failing pivot's column
 * into bad. */
struct tfc_solve {
    const uint32_t *ind[TF_GPU_MAX_ORDER];
    const double *vals;
    const uint64_t *ptr;
    const double *A[TF_GPU_MAX_ORDER];
    double *out;
    uint32_t order, mode, R, want_sse;
    double l2;
    const uint32_t *short_rows;
    uint64_t nshort;
    const uint32_t *long_rows;
    uint64_t nlong;
    const uint64_t *row_seg, *seg_k0, *seg_k1;
    uint64_t nseg;
    double *partial; /* nseg x the system's pairs */
    double *row_sse;
    uint32_t *bad;
};

/* Threads of a row's block at rank R, and the dynamic shared memory it
 * needs (the system, a batch of h's, the pair map, scratch). */
uint32_t tfc_threads(uint32_t R);
uint64_t tfc_smem_bytes(uint32_t R);
/* The doubles of one segment's partial system (the lower triangle of the
 * (R + 1) x (R + 1) matrix [G b; b^T .] without its last entry). */
uint64_t tfc_pairs(uint32_t R);

/* Queues mode a.mode's solves on dev's stream (every row of the mode:
 * the short and the long lists cover them). */
tf_status tfc_solve_rows(const tf_gpu_dev *dev, const tfc_solve &a);

/* Blocks of the first stage of every reduction (then one block sums
 * their parts in order). */
#define TFC_RED_BLOCKS 1024u
#define TFC_NONE 0xffffffffffffffffull

/* *out (device) = sum over the nnz entries (ind, vals; original order) of
 * (x - m)^2, m = sum_r prod_n A[n](i_n, r): per thread a sum over its
 * entries, per block a fixed tree, then the blocks in order. part:
 * TFC_RED_BLOCKS doubles of scratch. Queued on dev's stream. */
tf_status tfc_model_sse(const tf_gpu_dev *dev, uint32_t order, uint32_t R, const double *const *A,
                        const uint32_t *const *ind, const double *vals, uint64_t nnz, double *part, double *out);
/* *out (device) = sum of x[0..n)^2, the same way. */
tf_status tfc_sumsq(const tf_gpu_dev *dev, const double *x, uint64_t n, double *part, double *out);
/* Over a mode's rows 0..n-1: *sse_out = sum of row_sse (NULL: 0), and
 * *bad_out = the first row whose bad is not 0 (TFC_NONE: none). pmin:
 * TFC_RED_BLOCKS of scratch. */
tf_status tfc_rows_reduce(const tf_gpu_dev *dev, const double *row_sse, const uint32_t *bad, uint64_t n, double *part,
                          unsigned long long *pmin, double *sse_out, unsigned long long *bad_out);

/* ------------------------------------------------ one GPU's part (part.cu)
 * The state of one GPU of a run, driven alone by the one-GPU backend
 * (backend.cu) or one per GPU by the backend over several GPUs and GPU
 * ranks (multi.cu): every factor whole (dims x R) and its kept copy; per
 * mode m the training entries of this GPU's rows [lo, lo + rows) of it,
 * sorted by that index (stable: a row's entries keep their order, so a
 * row's sums are the same on any number of GPUs); a contiguous range of
 * the validation and test entries (one GPU: all rows, all entries). */
struct tfc_part;

/* Entries of a long row's segment for a run of nnz training entries at
 * rank R (the same for every GPU of a run, so that a long row's segments,
 * and its sums, are the one GPU's). */
uint64_t tfc_segment_for(uint64_t nnz, uint32_t R);

tfc_part *tfc_part_new();
void tfc_part_delete(tfc_part *c);
tf_gpu_dev *tfc_part_dev(const tfc_part *c);
/* The whole factor of mode on the device (the rows exchanged among GPUs). */
double *tfc_part_factor(tfc_part *c, uint32_t mode);

/* Building, in this order: setup (the run's order, dims, rank and
 * segment); every mode's copy (add_mode: u holds the entries of the rows
 * [lo, lo + rows) of mode m, their mode-m index shifted down by lo; the
 * copy keeps the run's labels); the held-out ranges (add_set: entries
 * k0..k1-1 of X); then finish (the factors, their kept copy, scratch).
 * Every step allocates on c's device (current). */
tf_status tfc_part_setup(tfc_part *c, tf_gpu_dev *dev, uint32_t order, const uint64_t *dims, uint32_t R,
                         uint64_t segment);
/* Mode m's copy from the entries u holds (engine/mode_sort.cuh: one GPU,
 * the whole training set, up once for every mode; several, a mode's shard). */
tf_status tfc_part_add_mode(tfc_part *c, uint32_t m, tf_gpu_mode_sort &u, uint64_t lo, uint64_t rows);
tf_status tfc_part_add_set(tfc_part *c, int set, const tf_tensor *X, uint64_t k0, uint64_t k1);
tf_status tfc_part_finish(tfc_part *c);

/* The steps of seams/complete.h on this GPU. _async: queued on its work
 * stream, nothing waited for; _read: waits for the stream and reads the
 * step's scalar. */
tf_status tfc_part_start(tfc_part *c, const tf_ktensor *start);
/* Mode's rows of this GPU solved into its factor (the other rows stay),
 * their errors summed (want_sse) and the first singular row found. */
tf_status tfc_part_update_async(tfc_part *c, uint32_t mode, double l2, bool want_sse);
/* *sse: this GPU's rows' sum; a singular row: TF_ERR_NUMERIC with the
 * message of the CPU (its row in the run's labels). */
tf_status tfc_part_update_read(tfc_part *c, uint32_t mode, double l2, double *sse);
/* The sum of squared errors of this GPU's entries of `set` (train: its
 * copy of mode 1, the entries of its mode-1 rows) under the current (or
 * kept) factors; read by tfc_part_read. */
tf_status tfc_part_sse_async(tfc_part *c, int set, bool kept);
tf_status tfc_part_read(tfc_part *c, double *x);
/* sum_n ||A_n||_F^2 of the whole current factors. Synchronous. */
tf_status tfc_part_frob_sq(tfc_part *c, double *sq);
tf_status tfc_part_keep_async(tfc_part *c);
tf_status tfc_part_result(tfc_part *c, tf_ktensor *out);
/* The current factor of mode set to NaN (the tests' poison). Synchronous. */
tf_status tfc_part_poison(tfc_part *c, uint32_t mode);

/* The checks of every GPU backend of completion (backend.cu; one GPU or
 * several): the order, rank, entry count and dims the GPU takes, and rank
 * R's shared memory a block on dev (TF_ERR_UNAVAILABLE: the CPU runs it). */
tf_status tfc_check_problem(const tf_tensor *train, const tf_complete_opts *o);
tf_status tfc_check_smem(const tf_gpu_dev *dev, uint32_t R);

/* For the tests (tests/hooks): the current factor of a mode of the
 * backend ctx (tf_cuda_complete_backend_create's) set to NaN; _multi:
 * of tf_cuda_complete_backend_create_multi's, on every GPU. */
tf_status tf_gpu_complete_poison(void *ctx, uint32_t mode);
tf_status tf_gpu_complete_multi_poison(void *ctx, uint32_t mode);

#endif
