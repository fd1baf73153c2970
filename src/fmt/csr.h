/* SPDX-License-Identifier: BSD-3-Clause */
/* Order-2 COO tensor <-> CSR (tf_csr), for SDDMM. */
#ifndef TF_FMT_CSR_H
#define TF_FMT_CSR_H
#include "tenfold.h"

/* Like tf_csr_from_coo; *perm (allocated, nnz entries, may be NULL to skip)
 * gives for each CSR position the COO position it came from. */
tf_status tf_csr_from_coo_perm(const tf_tensor *S, tf_csr *out, uint64_t **perm);
/* Rows lo .. hi - 1 of S as a CSR matrix of their own (a row panel): S's
 * columns and values in place, the row offsets rebased into *rowptr
 * (allocated; NULL where the panel is all of S). Free *rowptr with tf_free
 * after the view's last use. */
tf_status tf_csr_rows(const tf_csr *S, uint64_t lo, uint64_t hi, tf_csr *view, uint64_t **rowptr);
#endif
