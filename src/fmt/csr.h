/* SPDX-License-Identifier: BSD-3-Clause */
/* Order-2 COO tensor <-> CSR (tf_csr), for SDDMM. */
#ifndef TF_FMT_CSR_H
#define TF_FMT_CSR_H
#include "tenfold.h"

/* Like tf_csr_from_coo; *perm (allocated, nnz entries, may be NULL to skip)
 * gives for each CSR position the COO position it came from. */
tf_status tf_csr_from_coo_perm(const tf_tensor *S, tf_csr *out, uint64_t **perm);
#endif
