/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO (flagged coordinates, Liu et al., Cluster'17, section IV): one copy
 * of the tensor per output mode, sorted by that mode, that stores only the
 * product-mode indices; where the output index changes is kept in a bit
 * array, and the non-zeros are cut into equal partitions (one GPU warp
 * each) with one start flag per partition.
 *
 * Built on the host (CPU-testable); src/gpu/engine/fcoo.cu uploads it.
 *
 * Conventions used here (the paper's bit flag toggles 1 -> 0 at a change;
 * a "head" flag is the same information in the form a segmented scan uses):
 *   head bit k  = 1 iff non-zero k is the first of its output index
 *                 (k == 0 always is);
 *   segment     = a maximal run of non-zeros with one output index;
 *   start bit p = 1 iff partition p begins with a head (a new segment),
 *                 i.e. its first segment does not continue from p-1. */
#ifndef TF_FMT_FCOO_H
#define TF_FMT_FCOO_H
#include <stdint.h>

#include "tenfold.h"

typedef struct tf_fcoo {
    uint32_t order;
    uint32_t mode;                        /* output (index) mode             */
    uint64_t nnz;
    uint64_t dims[TF_MAX_ORDER];
    uint32_t pmodes[TF_MAX_ORDER];        /* product modes, ascending        */
    uint32_t *pind[TF_MAX_ORDER];         /* pind[j][k]: index of mode pmodes[j], j < order-1 */
    double *vals;                         /* nnz                             */
    uint32_t *head;                       /* ceil(nnz/32) words, bit k%32 of word k/32 */
    uint32_t part_nnz;                    /* non-zeros per partition, a multiple of 32 */
    uint64_t nparts;                      /* ceil(nnz / part_nnz)            */
    uint32_t *start;                      /* ceil(nparts/32) words: start bit per partition */
    uint32_t *part_seg;                   /* nparts: segment of the partition's first non-zero */
    uint64_t nseg;
    uint32_t *seg_row;                    /* nseg: output index of each segment, increasing */
    uint32_t *spare;                      /* tf_fcoo_rebuild: nnz of scratch kept for the next build */
} tf_fcoo;

/* Builds the F-COO copy of X for output `mode`: non-zeros sorted by mode,
 * then by the other modes ascending (stable). part_nnz: multiple of 32, >= 32. */
tf_status tf_fcoo_build(const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *out);
/* The same into f, reusing the arrays of what f holds (zeroed, or an
 * earlier build of a tensor of the same order and non-zero count: another
 * mode of X) and keeping the sort's scratch in it for the next call: a
 * plan that builds and hands off one mode after another touches fresh
 * memory once instead of once per mode (page faults: ~20 bytes per
 * non-zero and mode). Free with tf_fcoo_free after the last. */
tf_status tf_fcoo_rebuild(const tf_tensor *X, uint32_t mode, uint32_t part_nnz, tf_fcoo *f);
/* Cuts f into partitions of part_nnz non-zeros instead (a multiple of 32,
 * >= 32): new start flags and partition segments, the rest unchanged. */
tf_status tf_fcoo_repartition(tf_fcoo *f, uint32_t part_nnz);
/* Output rows that an F-COO MTTKRP does not write with a plain store, so
 * they must be zero before it runs: empty rows (no segment) and the rows
 * of segments that continue across a partition boundary (their partial
 * sums are added atomically). *rows: increasing, no duplicates, *n of
 * them (free with tf_free); NULL when *n == 0, and also when there would
 * be more than max_rows (then *n > max_rows, and nothing is listed: the
 * caller clears the whole output). */
tf_status tf_fcoo_zero_rows(const tf_fcoo *f, uint64_t max_rows, uint32_t **rows, uint64_t *n);
void tf_fcoo_free(tf_fcoo *f);
/* Bytes of the arrays with values of `value_bytes` each (4 or 8). */
uint64_t tf_fcoo_bytes(const tf_fcoo *f, uint32_t value_bytes);
/* Bytes the F-COO copy of one mode would take, from the shape alone
 * (segments bounded by min(nnz, dims[mode])). */
uint64_t tf_fcoo_bytes_estimate(const tf_tensor *X, uint32_t mode, uint32_t part_nnz,
                                uint32_t value_bytes);

static inline int tf_fcoo_head(const tf_fcoo *f, uint64_t k)
{
    return (int)((f->head[k >> 5] >> (k & 31)) & 1u);
}
static inline int tf_fcoo_start(const tf_fcoo *f, uint64_t p)
{
    return (int)((f->start[p >> 5] >> (p & 31)) & 1u);
}
#endif
