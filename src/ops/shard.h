/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (AMPED, sec. 4): per output mode, the index
 * range cut into one contiguous range of rows per part (rank or GPU),
 * balanced by non-zeros, and the non-zeros whose index falls in a part's
 * range. Contiguous ranges from the prefix sum of the row counts are
 * within half the heaviest row of the ideal share (AMPED assigns shards to
 * GPUs longest-first, within 4/3 of the optimum), and each part's rows stay
 * one block, so sharing them is one message per part. */
#ifndef TF_OPS_SHARD_H
#define TF_OPS_SHARD_H
#include "tenfold.h"

/* row_lo[0..size]: part r's rows of `mode` are [row_lo[r], row_lo[r+1]),
 * each part's share of the non-zeros as close to nnz / size as whole rows
 * allow (a row is never split: no two parts update one factor row).
 * *imbalance (may be NULL): the largest part's non-zeros over the mean, less 1. */
tf_status tf_shard_rows(const tf_tensor *X, uint32_t mode, int size, uint64_t *row_lo, double *imbalance);
/* The same cut of the rows of a CSR matrix from its row offsets (rows + 1
 * entries, rowptr[rows] the non-zeros): part r ends at the row boundary
 * nearest to the running target (r+1) nnz / size -- the last boundary at or
 * below it, or the next where that lands closer -- found by binary search,
 * so the cost is size log(rows), not a pass over the rows (SDDMM panels over
 * several GPUs, cuSDDMM sec. V-D). A part may be empty (a heavy row took its
 * share). */
void tf_shard_rowptr(const uint64_t *rowptr, uint64_t rows, int size, uint64_t *row_lo, double *imbalance);
/* The same when every rank holds a part of the non-zeros (part; dims are
 * the whole tensor's): the row counts summed over the ranks (MPI), then cut
 * for d->size ranks; the same on every rank. */
struct tf_dist;
tf_status tf_shard_rows_dist(const tf_tensor *part, uint32_t mode, const struct tf_dist *d, uint64_t *row_lo,
                             double *imbalance);
/* This rank's non-zeros of `mode` (index in [row_lo[rank], row_lo[rank+1]))
 * gathered from every rank's part (MPI all-to-all): in rank order, each
 * part in its order -- where the parts are consecutive ranges of a tensor,
 * in the tensor's order, as tf_shard_tensor would give. */
tf_status tf_shard_exchange(const tf_tensor *part, uint32_t mode, const uint64_t *row_lo, const struct tf_dist *d,
                            tf_tensor *out);
/* The non-zeros of X whose mode index lies in [lo, hi), in X's order, with
 * X's dims (out is allocated; free with tf_tensor_free). */
tf_status tf_shard_tensor(const tf_tensor *X, uint32_t mode, uint64_t lo, uint64_t hi, tf_tensor *out);
/* Parts first..first+count-1 of `mode` at once (one parallel pass): out[i]
 * holds part first+i's non-zeros in X's order, the mode index shifted down
 * by its row_lo and dims[mode] its number of rows (at least 1). With
 * prev_lo (the parts' rows of mode `prev`), each part comes in two:
 * out[2i] the non-zeros whose prev index lies in part first+i's rows of
 * prev, out[2i+1] the others. */
tf_status tf_shard_split(const tf_tensor *X, uint32_t mode, const uint64_t *row_lo, uint32_t prev,
                         const uint64_t *prev_lo, int first, int count, tf_tensor *out);

/* The front end's side of tf_shards (backend/shards.h): the row ranges of
 * every mode over `parts` GPUs and the parts of this process's GPUs
 * first..first+count-1, made one mode at a time when the module asks (the
 * previous mode's are freed first, so the host holds one extra copy of the
 * COO at most). */
#include "backend/shards.h"
typedef struct tf_shard_set {
    const tf_tensor *X;
    uint64_t *row_lo[TF_MAX_ORDER];
    int first, count, pairs;
    const struct tf_dist *dist;
    int input_part; /* X is this rank's part (tf_cpd_opts.distributed_input) */
    tf_tensor part[2 * TF_MAX_GPUS];
    double imbalance; /* the worst mode's (tf_shard_rows) */
} tf_shard_set;

/* Fills set and sh (which points into set: keep set in place while sh is
 * used); pairs: every part split in two by the previous mode (tf_shards);
 * input_part (with dist): X is this rank's part of the non-zeros, and each
 * mode's shard is gathered from the ranks (tf_shard_exchange). */
tf_status tf_shard_set_make(tf_shard_set *set, const tf_tensor *X, int parts, int first, int count, int pairs,
                            const struct tf_dist *dist, int input_part, tf_shards *sh);
void tf_shard_set_free(tf_shard_set *set);
#endif
