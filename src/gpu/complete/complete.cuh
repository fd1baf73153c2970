/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU completion by ALS (src/gpu/complete): what the row solves
 * (rows.cu) and the backend (backend.cu) share. */
#ifndef TF_GPU_COMPLETE_COMPLETE_CUH
#define TF_GPU_COMPLETE_COMPLETE_CUH
#include <stdint.h>

extern "C" {
#include "core/error.h"
}
#include "gpu/runtime/limits.cuh"

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

/* For the tests (tests/hooks): the current factor of a mode of the
 * backend ctx (tf_cuda_complete_backend_create's) set to NaN. */
tf_status tf_gpu_complete_poison(void *ctx, uint32_t mode);

#endif
