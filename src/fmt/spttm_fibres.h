/* SPDX-License-Identifier: BSD-3-Clause */
/* The fibres of a tensor for SpTTM on mode n: the non-zeros ordered by the
 * other modes (lexicographically, ascending mode number), and where each
 * distinct index tuple of those modes (one output row of Y) starts. Built
 * once per (tensor, mode); the CPU kernel and the GPU F-COO builder share it. */
#ifndef TF_FMT_SPTTM_FIBRES_H
#define TF_FMT_SPTTM_FIBRES_H
#include "tenfold.h"

typedef struct tf_fibres {
    uint32_t mode;
    uint64_t nnz;
    uint64_t nfibers;
    uint64_t *perm;  /* nnz: position in X of the k-th non-zero in fibre order */
    uint64_t *fptr;  /* nfibers + 1: fibre f holds sorted positions fptr[f]..fptr[f+1]-1 */
} tf_fibres;

tf_status tf_fibres_build(const tf_tensor *X, uint32_t mode, tf_fibres *F);
void tf_fibres_free(tf_fibres *F);
/* Allocates y for R columns and fills its shape and fibre indices (values
 * are left undefined). */
tf_status tf_fibres_output(const tf_tensor *X, const tf_fibres *F, uint64_t R, tf_semisparse *y);
#endif
