/* SPDX-License-Identifier: BSD-3-Clause */
/* Compressed sparse fibres (CSF): a COO tensor sorted by a chosen mode order
 * and stored as a tree. Level 0 holds the root slices (mode mode_order[0]),
 * level order-1 the non-zeros. Node n of a compressed level l < flat owns the
 * children fptr[l][n] .. fptr[l][n+1]-1 of level l+1; fids[l][n] is its index
 * in mode mode_order[l]. Only non-empty slices and fibres are stored.
 *
 * Levels flat..order-1 are not compressed: they hold one index per non-zero
 * (fids[l][z], z < nnz), and fptr[flat-1] points at non-zeros. A level whose
 * fibres hold about one non-zero each (hyper-sparse tensors) costs more as a
 * tree (a pointer and a branch per node) than it saves. flat = order-1 is
 * the classic CSF; flat = 1 is a slice-compressed COO list. */
#ifndef TF_FMT_CSF_H
#define TF_FMT_CSF_H
#include "tenfold.h"

typedef struct tf_csf {
    uint32_t order;
    uint32_t flat;                     /* first per-non-zero level, 1..order-1 */
    uint64_t nnz;
    uint32_t mode_order[TF_MAX_ORDER]; /* level -> tensor mode                 */
    uint64_t dims[TF_MAX_ORDER];       /* per level: length of its mode        */
    uint64_t nodes[TF_MAX_ORDER];      /* per level: stored nodes (leaves = nnz) */
    uint64_t *fptr[TF_MAX_ORDER];      /* levels 0..flat-1: nodes[l]+1 entries */
    uint32_t *fids[TF_MAX_ORDER];      /* every level: nodes[l] entries        */
    double *vals;                      /* nnz leaf values                      */
} tf_csf;

/* The mode order SPLATT uses for a tree rooted at `root`: root first, then
 * the other modes by increasing length (ties by mode number). */
void tf_csf_default_order(const tf_tensor *X, uint32_t root, uint32_t *mode_order);
/* Builds the tree of X for mode_order (a permutation of 0..order-1) with
 * `threads` OpenMP threads. Levels 1.. are compressed while they have fewer
 * than flat_ratio * nnz nodes (flat_ratio >= 1: a full tree). X must be
 * valid; duplicates become separate leaves. */
tf_status tf_csf_build(const tf_tensor *X, const uint32_t *mode_order, double flat_ratio,
                       int threads, tf_csf *out);
void tf_csf_free(tf_csf *c);
/* Memory held by the arrays, in bytes. */
uint64_t tf_csf_bytes(const tf_csf *c);
/* Non-zeros per fibre (node of level flat-1) on average. */
double tf_csf_mean_fibre(const tf_csf *c);
/* Orders the fibres of every node of level flat-2 by length (ties keep
 * their order), moving their non-zeros with them (fmt/csf_sort.c). A tree
 * with flat < 2 is left alone. On failure (memory) the tree is unchanged. */
tf_status tf_csf_sort_fibres(tf_csf *c, int threads);
/* path[l] = the node of level l on the way from the root to leaf z (z < nnz). */
void tf_csf_leaf_path(const tf_csf *c, uint64_t z, uint64_t *path);
#endif
