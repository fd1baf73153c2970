/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/tensor.h — dense matrices, sparse COO tensors and their
 * operations, and tf_dense, the view of a dense operand in host or GPU memory. */
#ifndef TENFOLD_TENSOR_H
#define TENFOLD_TENSOR_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ dense matrix */

typedef struct tf_matrix {
    uint64_t rows;
    uint64_t cols;
    double *data; /* rows*cols, row-major */
} tf_matrix;

tf_status tf_matrix_alloc(tf_matrix *m, uint64_t rows, uint64_t cols);
void tf_matrix_free(tf_matrix *m);

/* ----------------------------------------------------- sparse COO tensor */

typedef struct tf_tensor {
    uint32_t order;                 /* TF_MIN_ORDER..TF_MAX_ORDER          */
    uint64_t nnz;
    uint64_t dims[TF_MAX_ORDER];    /* mode lengths, each 1..2^32          */
    uint32_t *ind[TF_MAX_ORDER];    /* ind[m][k]: 0-based index, k < nnz   */
    double *vals;                   /* nnz values                          */
} tf_tensor;

/* Allocates index and value arrays for nnz non-zeros (contents undefined). */
tf_status tf_tensor_alloc(tf_tensor *t, uint32_t order, const uint64_t *dims, uint64_t nnz);
void tf_tensor_free(tf_tensor *t);
tf_status tf_tensor_copy(const tf_tensor *src, tf_tensor *dst);
/* Checks order, dims, every index < dim and every value finite. */
tf_status tf_tensor_validate(const tf_tensor *t);
/* Sorts the non-zeros lexicographically by the modes in mode_order
 * (mode_order[0] most significant; NULL means 0,1,...,order-1). Stable. */
tf_status tf_tensor_sort(tf_tensor *t, const uint32_t *mode_order);
/* Sorts by 0,1,..., sums duplicate coordinates and drops explicit zeros
 * (also zeros that arise from summing). Counts are returned if non-NULL. */
tf_status tf_tensor_canonicalize(tf_tensor *t, uint64_t *duplicates, uint64_t *zeros);
/* Squared Frobenius norm (under- or overflows for values beyond about
 * 1e+-154; tf_tensor_norm does not). */
double tf_tensor_norm2(const tf_tensor *t);
/* Frobenius norm, summed with the values scaled by a power of two (as
 * LAPACK dnrm2 scales), so it is finite and non-zero for any finite,
 * non-zero values whose norm is representable. */
double tf_tensor_norm(const tf_tensor *t);
/* Plain FROSTT .tns records no dims: reading it back gives each mode the
 * length largest index + 1. Returns the number of modes whose declared
 * length is longer than that (their dims would be lost); implied (may be
 * NULL, TF_MAX_ORDER entries) gets largest index + 1 per mode (0 if nnz = 0). */
uint32_t tf_tensor_implied_dims(const tf_tensor *t, uint64_t *implied);
/* Memory in bytes of the COO arrays. */
uint64_t tf_tensor_bytes(const tf_tensor *t);

/* --------------------------------------------------- dense operands */

/* Where the array of a tf_dense is. */
typedef enum tf_memory {
    TF_MEMORY_AUTO = 0, /* told from the pointer: memory of a GPU of the plan (device
                           or managed memory, cudaPointerGetAttributes) or host  */
    TF_MEMORY_HOST,     /* host memory (pageable or pinned)                       */
    TF_MEMORY_DEVICE    /* GPU memory of a GPU of the plan (a CUDA allocation)    */
} tf_memory;

/* A dense operand of a plan run (SDDMM, MTTKRP), in host or GPU memory:
 * rows x cols, row-major, ld elements from one row's start to the next
 * (0 = cols), each a double (TF_DOUBLE) or a float (TF_SINGLE). A GPU plan checks `memory`
 * against the pointer (a GPU array called host, or a host array called
 * device, is an error, not a crash). */
typedef struct tf_dense {
    void *data;
    uint64_t rows, cols, ld;
    tf_precision precision;
    tf_memory memory;
} tf_dense;

/* A host tf_matrix as a tf_dense (double, ld = cols, TF_MEMORY_HOST). */
tf_dense tf_dense_host(const tf_matrix *m);

/* ------------------------------------------------ sparse tensor operations
 * The sptensor operations of the Tensor Toolbox / pyttb on tf_tensor,
 * without densifying (issue 43), as described in tenfold/ktensor.h for the
 * ktensor ones: arguments checked (TF_ERR_ARG naming the argument; outputs
 * left as they were, a tf_tensor output zeroed), passes over the non-zeros
 * on tf_default_threads() threads where the size warrants, results that do
 * not depend on the thread count. */

/* What tf_tensor_collapse does with the values that fall on one entry. */
typedef enum tf_collapse_op {
    TF_COLLAPSE_SUM = 0, /* their sum                                          */
    TF_COLLAPSE_MAX,     /* the largest stored value (implicit zeros not counted, as pyttb's
                            collapse with np.max over the non-zeros)            */
    TF_COLLAPSE_MIN      /* the smallest stored value, likewise                 */
} tf_collapse_op;

/* The result of a reduction over `nmodes` distinct modes (`modes`, 1 ..
 * order of them) of X: what is left is k = order - nmodes modes, in their
 * order in X.
 *   k >= 2: *out gets a sparse tensor over them (allocated by the call,
 *           canonical: sorted, one entry per coordinate, exact zeros
 *           dropped); dense is not used (may be NULL).
 *   k == 1: dense gets the dense vector, dims of the one mode left (entries
 *           no non-zero falls on are 0); out is not used (may be NULL).
 *   k == 0: dense[0] gets the scalar. */
/* Tensor times vectors (pyttb sptensor.ttv): X multiplied in modes[i] by
 * the vector vecs[i] (dims[modes[i]] values) for every i < nmodes, those
 * modes summed away. */
tf_status tf_tensor_ttv(const tf_tensor *X, uint32_t nmodes, const uint32_t *modes,
                        const double *const *vecs, tf_tensor *out, double *dense);
/* X collapsed over `modes` by op (pyttb sptensor.collapse with np.sum,
 * np.max, np.min). */
tf_status tf_tensor_collapse(const tf_tensor *X, uint32_t nmodes, const uint32_t *modes, tf_collapse_op op,
                             tf_tensor *out, double *dense);
/* out = X with every value multiplied by alpha and, when v is non-NULL, by
 * v[i] at its index i of `mode` (v: dims[mode] values; pyttb sptensor.scale
 * with a vector, or a scalar). Non-zeros keep their order; those that become
 * exactly 0 are dropped. out is allocated by the call. */
tf_status tf_tensor_scale(const tf_tensor *X, uint32_t mode, const double *v, double alpha, tf_tensor *out);
/* out = X with its modes reordered: out's mode m is X's mode perm[m] (perm a
 * permutation of 0..order-1; pyttb sptensor.permute), sorted by 0, 1, ...
 * (canonical when X is). out is allocated by the call. */
tf_status tf_tensor_permute(const tf_tensor *X, const uint32_t *perm, tf_tensor *out);
/* The part of X in the index box lo[m] <= i_m < hi[m] (0 <= lo[m] < hi[m]
 * <= dims[m], every mode), indices re-based to i_m - lo[m], dims hi - lo
 * (pyttb X[lo0:hi0, lo1:hi1, ...]). Non-zeros keep their order. out is
 * allocated by the call. */
tf_status tf_tensor_subtensor(const tf_tensor *X, const uint64_t *lo, const uint64_t *hi, tf_tensor *out);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_TENSOR_H */
