/* SPDX-License-Identifier: BSD-3-Clause */
/* The shards of a run over several GPUs (AMPED), as the front end hands
 * them to the CUDA module: per mode, the rows of the `parts` GPUs of the
 * run (all processes), and the non-zeros of this process's GPUs, made one
 * mode at a time (src/front/partition.c cuts the rows and builds them; CP-ALS
 * and MTTKRP plans over several GPUs take them). A mode's rows may be
 * relabeled by the front end (the longest-first schedule): every index here
 * is in the run's labels; the module maps them only where it cuts the shards
 * itself (whole, relabel). */
#ifndef TF_SEAMS_SHARDS_H
#define TF_SEAMS_SHARDS_H
#include "tenfold.h"

struct tf_dist;

typedef struct tf_shards {
    int parts;                            /* GPUs of the run, all processes      */
    int first, count;                     /* this process's: parts first..+count */
    const uint64_t *row_lo[TF_MAX_ORDER]; /* per mode parts + 1 entries: part p
                                             owns rows [row_lo[p], row_lo[p+1]) */
    /* out[0..count): part first+i's non-zeros of `mode`, that index shifted
     * down by its row_lo (dims[mode] = its rows, at least 1); with pairs,
     * out[0..2 count): for part first+i, out[2i] the non-zeros whose
     * previous mode's index (mode - 1, cyclically) lies in that part's rows
     * of that mode and out[2i+1] the others. They stay valid until the next
     * call (the front end owns them). */
    tf_status (*split)(void *user, uint32_t mode, tf_tensor *out);
    int pairs;
    void *user;
    const struct tf_dist *dist; /* MPI ranks of one GPU each (count 1), else NULL */
    /* For shards cut on the GPUs (gpu/exec/shard_cut.cuh) in place of split:
     * the whole tensor in the caller's labels (NULL: split only -- a rank's
     * part of a distributed input), each mode's map into the run's labels
     * (NULL: the same), and per mode every part's non-zeros (parts entries). */
    const tf_tensor *whole;
    const uint32_t *relabel[TF_MAX_ORDER];
    const uint64_t *nnz[TF_MAX_ORDER];
} tf_shards;
#endif
