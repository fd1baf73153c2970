/* SPDX-License-Identifier: BSD-3-Clause */
/* The partitioner: every cut of rows among the "parts" of a run (GPUs, MPI
 * ranks, SDDMM's row panels over GPUs or ranks) is decided here
 * (docs/DESIGN.md "Partitioner"). Words: a part's *rows* of a mode are the
 * factor rows it owns and updates (no two parts own one row); its *shard* of
 * the mode is the non-zeros whose index in that mode is one of its rows
 * (AMPED sec. 3.1.1, output-index sharding).
 *
 * Two schedules, chosen per mode from the row counts (tf_partition_schedule):
 *  - contiguous: one range of rows per part, cut where the running sum of
 *    the counts passes each part's share (within half the heaviest row of
 *    it); the rows keep their labels.
 *  - longest-first (AMPED's assignment of shards to GPUs, LPT): the rows in
 *    blocks -- a heavy row alone, light neighbours together up to 1/256 of a
 *    part's share -- heaviest first, each to the part with the fewest
 *    non-zeros so far (ties: fewer rows, then the lower part). Within 4/3 of
 *    the best assignment of the blocks, and within the largest block of the
 *    mean. The mode is then *relabeled*: row i becomes relabel[i], each
 *    part's rows one range in the new labels, in their original order. Every
 *    shard carries the run's labels in every mode (they index the other
 *    factors, which live in the run's labels too), so everything downstream
 *    -- shifts by row_lo, row exchanges by ranges -- is the contiguous case;
 *    the front end maps factors into the run's labels before and back after.
 * The load model is the non-zeros alone (an MTTKRP's work and a shard's
 * bytes); a row's own cost (its solve and its exchange) only breaks ties.
 * Under TF_PARTITION_AUTO a mode is relabeled only when longest-first lowers
 * the largest part's non-zeros by more than 2 % of the mean: below that the
 * relabeling (a map per mode, factors mapped in and out) buys nothing. */
#ifndef TF_FRONT_PARTITION_H
#define TF_FRONT_PARTITION_H
#include "seams/shards.h"
#include "tenfold.h"

struct tf_dist;

/* ------------------------------------------------------------ the schedules */

/* The contiguous cut of rows 0..rows-1 from their prefix sums (rows + 1
 * entries, prefix[rows] the non-zeros; a CSR matrix's row offsets): part p
 * gets [row_lo[p], row_lo[p+1]), ending at the row boundary nearest to the
 * running target (p+1) nnz / parts -- the last boundary at or below it, or
 * the next where that lands closer -- found by binary search (parts
 * log(rows), no pass over the rows). A part may be empty (a heavy row took
 * its share). Returns the largest part's non-zeros. */
uint64_t tf_partition_contiguous(const uint64_t *prefix, uint64_t rows, int parts, uint64_t *row_lo);
/* The longest-first assignment of the same rows: row_lo[0..parts] the
 * parts' ranges in the new labels; relabel (rows entries, or NULL for the
 * loads alone) row i's new label; *most the largest part's non-zeros. */
tf_status tf_partition_longest_first(const uint64_t *prefix, uint64_t rows, int parts, uint64_t *row_lo,
                                     uint32_t *relabel, uint64_t *most);
/* One mode's cut by `schedule` (a tf_partition_schedule; AUTO picks as
 * above): row_lo as the schedule gives it; *relabel NULL (the rows keep their
 * labels) or an array of `rows` labels (tf_alloc; the caller frees it);
 * *used the schedule taken; *imbalance its largest part's non-zeros over the
 * mean, less 1 (0 without non-zeros). */
tf_status tf_partition_cut(const uint64_t *prefix, uint64_t rows, int parts, int schedule, uint64_t *row_lo,
                           uint32_t **relabel, int *used, double *imbalance);

/* ------------------------------------------------------- a run's partition */

typedef struct tf_partition {
    uint32_t order;
    int parts;
    uint64_t *row_lo[TF_MAX_ORDER];  /* parts + 1 each: part p owns the rows
                                        [row_lo[p], row_lo[p+1]) of the run's labels */
    uint32_t *relabel[TF_MAX_ORDER]; /* NULL: the mode keeps its labels; else
                                        row i of the caller is row relabel[i] of the run */
    int schedule[TF_MAX_ORDER];      /* TF_PARTITION_CONTIGUOUS or _LONGEST_FIRST */
    double imbalance[TF_MAX_ORDER];  /* the cut's (tf_partition_cut) */
    uint64_t *nnz[TF_MAX_ORDER];     /* parts each: part p's non-zeros of the mode (with
                                        sum: over every rank's part of the input) */
    double worst;                    /* the largest of them */
} tf_partition;

/* Every mode of X cut over `parts` by `schedule`. With `sum` (X is this
 * rank's part of the non-zeros, tf_cpd_opts.distributed_input; parts =
 * sum->size) the row counts are summed over the ranks first (MPI), so every
 * rank makes the same cut. On failure pt holds nothing. */
tf_status tf_partition_make(tf_partition *pt, const tf_tensor *X, int parts, int schedule, const struct tf_dist *sum);
void tf_partition_free(tf_partition *pt);
/* 1 when a mode of pt is relabeled. */
int tf_partition_relabels(const tf_partition *pt);
/* A row-major matrix of `rows` rows of `cols` (a factor of a relabeled mode,
 * relabel from pt) into the run's labels (dst[relabel[i]] = src[i]), and
 * back (dst[i] = src[relabel[i]]); relabel NULL: a copy. dst != src. */
void tf_partition_rows_in(const uint32_t *relabel, uint64_t rows, uint64_t cols, const double *src, double *dst);
void tf_partition_rows_out(const uint32_t *relabel, uint64_t rows, uint64_t cols, const double *src, double *dst);

/* ------------------------------------------------------------------ shards */

/* Part p's shard of `mode`: the non-zeros of X whose index lies in its rows,
 * every index in the run's labels, in X's order, with X's dims (out is
 * allocated; free with tf_tensor_free). A CPU rank's shard. */
tf_status tf_partition_shard(const tf_tensor *X, const tf_partition *pt, uint32_t mode, int part, tf_tensor *out);
/* Parts first..first+count-1 of `mode` at once (one parallel pass): out[i]
 * part first+i's shard, the mode index shifted down by its row_lo and
 * dims[mode] its number of rows (at least 1). With pairs, each comes in two
 * by the previous mode prev = mode - 1 (cyclically): out[2i] the non-zeros
 * whose prev index is one of part first+i's rows of prev, out[2i+1] the
 * others. relabel 0: X's indices are the run's labels already (a shard
 * gathered by tf_partition_exchange), else they are the caller's, mapped
 * while copied. */
tf_status tf_partition_split(const tf_tensor *X, const tf_partition *pt, int relabel, uint32_t mode, int pairs,
                             int first, int count, tf_tensor *out);
/* This rank's shard of `mode` (in the run's labels) gathered from every
 * rank's part of the non-zeros (MPI all-to-all): in rank order, each part in
 * its order -- where the parts are consecutive ranges of a tensor, in the
 * tensor's order, as tf_partition_shard would give. With shift, the mode's
 * index is shifted down by the rank's row_lo and dims[mode] is its number
 * of rows (at least 1), as tf_partition_split gives. Each rank's non-zeros
 * for the others are packed straight by destination (its own straight into
 * out) and received straight into out's arrays (tf_dist.alltoall_arrays),
 * in rounds of a chunk of the part each (at most tf_dist.pack_bytes of
 * records packed at once). */
tf_status tf_partition_exchange(const tf_tensor *part, const tf_partition *pt, uint32_t mode, const struct tf_dist *d,
                                int shift, tf_tensor *out);
/* tf_partition_split(tf_partition_exchange(part, .., shift 0), pt, 0, mode,
 * pairs 1, rank, 1, out) without the gathered copy: out[0] the rank's
 * non-zeros of `mode` whose previous index is one of its rows of that mode,
 * out[1] the others, each in rank order and each part's order, the mode's
 * index shifted (a GPU rank's pair of shards). Each rank tells the halves
 * apart while it packs for the destination, and both are received straight
 * into out's arrays, sized from the exchanged counts. */
tf_status tf_partition_exchange_pairs(const tf_tensor *part, const tf_partition *pt, uint32_t mode,
                                      const struct tf_dist *d, tf_tensor *out);

/* The front end's side of tf_shards (seams/shards.h): the rows of pt
 * (borrowed: keep it while sh is used) and the shards of this process's
 * GPUs first..first+count-1, made one mode at a time when the module asks
 * (the previous mode's are freed first, so the host holds one extra copy of
 * the COO at most). */
typedef struct tf_partition_shards {
    const tf_tensor *X;
    const tf_partition *pt;
    int first, count, pairs;
    const struct tf_dist *dist;
    int input_part; /* X is this rank's part (tf_cpd_opts.distributed_input) */
    tf_tensor shard[2 * TF_MAX_GPUS];
} tf_partition_shards;

/* Fills set and sh (which points into set: keep set in place while sh is
 * used); pairs: every shard split in two by the previous mode (tf_shards);
 * input_part (with dist): X is this rank's part of the non-zeros, first is
 * the rank, and each mode's shard (or pair) is gathered from the ranks
 * straight into the set (tf_partition_exchange with shift,
 * tf_partition_exchange_pairs).
 * Otherwise sh also hands the module X whole, pt's relabel maps and its
 * counts per part, so that each GPU can cut its own shards
 * (gpu/exec/shard_cut.cuh) and split is called only for the modes it does
 * not. */
tf_status tf_partition_shards_make(tf_partition_shards *set, const tf_tensor *X, const tf_partition *pt, int first,
                                   int count, int pairs, const struct tf_dist *dist, int input_part, tf_shards *sh);
void tf_partition_shards_free(tf_partition_shards *set);
#endif
