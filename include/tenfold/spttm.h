/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/spttm.h — SpTTM, the sparse tensor times a matrix in one mode, and
 * its semi-sparse result. */
#ifndef TENFOLD_SPTTM_H
#define TENFOLD_SPTTM_H

#include "context.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* SpTTM: Y = X x_n U with U of size I_n x R (dims[n] rows, R columns):
 *   Y(i_1, .., r, .., i_N) = sum_i X(i_1, .., i, .., i_N) * U(i, r).
 * NOTE: the Tensor Toolbox's ttm(X, V, n) multiplies by V of size R x I_n
 * (Y = X x_n V with V(r, i)); tenfold's U is that V transposed, the F-COO
 * paper's convention. Y is semi-sparse: one dense length-R row for each
 * distinct index tuple of the other modes that occurs in X ("fibre"). */
typedef struct tf_semisparse {
    uint32_t order;                 /* order of X                             */
    uint32_t mode;                  /* the dense mode n (0-based)             */
    uint64_t dims[TF_MAX_ORDER];    /* dims of Y: those of X with dims[n] = R */
    uint64_t nfibers;               /* distinct index tuples of the other modes */
    uint32_t *ind[TF_MAX_ORDER];    /* ind[m][f] for m != n (ind[n] = NULL), fibres in
                                       lexicographic order of the other modes */
    double *vals;                   /* nfibers x R, row-major                  */
} tf_semisparse;

void tf_semisparse_free(tf_semisparse *y);
/* The non-zero entries of Y as a sparse tensor (order of X; mode n has
 * length R); exact zeros are left out. */
tf_status tf_semisparse_to_tensor(const tf_semisparse *y, tf_tensor *out);

/* Where an SpTTM ran (optional output of tf_spttm / tf_spttm_time). */
typedef tf_run_info tf_spttm_info;

typedef struct tf_spttm_opts {
    tf_backend backend;     /* default TF_BACKEND_AUTO                          */
    tf_precision precision; /* default TF_DOUBLE                                */
    int threads;            /* CPU threads, 0 = default                         */
    int device;             /* GPU ordinal                                      */
    tf_context *context;    /* devices, tuning; NULL = a private default one      */
    tf_spttm_info *info;    /* optional output (NULL: none)                      */
} tf_spttm_opts;

void tf_spttm_opts_default(tf_spttm_opts *o);
/* Y = X x_mode U (U: dims[mode] x R, R >= 1). out is allocated by the call. */
tf_status tf_spttm(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_spttm_opts *o,
                   tf_semisparse *out);
/* Plain float64 reference (single-threaded; sorts with qsort). */
tf_status tf_spttm_reference(const tf_tensor *X, uint32_t mode, const tf_matrix *U,
                             tf_semisparse *out);
/* Benchmark helper like tf_sddmm_time: the sort by the other modes (and,
 * on the GPU, the F-COO build and upload) is done once and not timed. */
tf_status tf_spttm_time(const tf_tensor *X, uint32_t mode, const tf_matrix *U,
                        const tf_spttm_opts *o, int warmup, int reps, double *times_ms,
                        tf_semisparse *out);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_SPTTM_H */
