/* SPDX-License-Identifier: BSD-3-Clause */
/* Host-side tiling of a CSR matrix for the GPU SDDMM kernels (SM-L2 and
 * SM-SM, cuSDDMM paper section IV). The columns are cut into panels of
 * width tile_j; within a panel the non-zeros are taken row by row and cut
 * into groups of at most max_rows active rows (rows with a non-zero in the
 * panel) and at most max_nnz non-zeros, one thread block per group; a row
 * longer than max_nnz in a panel is split over several groups. Groups are
 * panel-major, so consecutive blocks share a panel of B (kept in L2). */
#ifndef TF_FMT_SDDMM_TILES_H
#define TF_FMT_SDDMM_TILES_H
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_sddmm_tiles {
    uint32_t tile_j;        /* panel width                                  */
    uint32_t max_rows;      /* Ti: active rows per group (<= 65535)         */
    uint32_t max_nnz;       /* non-zeros per group                          */
    uint64_t ngroups;
    uint64_t nnz;           /* < 2^32                                       */
    uint64_t nrows;         /* active-row entries over all groups           */
    uint32_t *group_nnz;    /* ngroups + 1: entries of group g, tile order  */
    uint32_t *group_rows;   /* ngroups + 1: active rows of group g in rows[] */
    uint32_t *group_col0;   /* ngroups: first column of the group's panel   */
    uint32_t *rows;         /* nrows: global row of each active row         */
    uint16_t *rloc;         /* nnz: row of the entry within its group       */
    uint32_t *col;          /* nnz: column                                  */
    uint32_t *pos;          /* nnz: CSR position of the entry (nnz < 2^32)  */
    double *vals;           /* nnz: S's value there (vals[pos], in order)   */
} tf_sddmm_tiles;

tf_status tf_sddmm_tiles_build(const tf_csr *S, uint32_t tile_j, uint32_t max_rows, uint32_t max_nnz,
                               tf_sddmm_tiles *t);
void tf_sddmm_tiles_free(tf_sddmm_tiles *t);

/* Panel width of the L2-capacity model: Tj = sqrt(L2 / (c rho)) elements
 * (c = 3 words per non-zero, rho = density), no wider than what keeps a
 * panel of B (Tj x K values) within 3/4 of L2, rounded up to 32, clamped
 * to [32, cols]. */
uint32_t tf_sddmm_model_tile_j(const tf_csr *S, uint64_t K, size_t value_bytes, uint64_t l2_bytes);

#ifdef __cplusplus
}
#endif
#endif
