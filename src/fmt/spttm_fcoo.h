/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO for SpTTM on the GPU (Liu et al. 2017, section IV): the non-zeros
 * in fibre order keep only their product-mode index and value; bit k % 32
 * of flags[k / 32] is set where a fibre starts, and chunk_fibre[c] is the
 * fibre of the first non-zero of 32-non-zero chunk c. Built on the host
 * from tf_fibres; uploaded by src/gpu/spttm/spttm.cu. */
#ifndef TF_FMT_SPTTM_FCOO_H
#define TF_FMT_SPTTM_FCOO_H
#include "fmt/spttm_fibres.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TF_FCOO_CHUNK 32

typedef struct tf_spttm_fcoo {
    uint64_t nnz;
    uint64_t nchunks;       /* ceil(nnz / 32)                    */
    uint32_t *idx;          /* nnz: index in the product mode    */
    double *val;            /* nnz                               */
    uint32_t *flags;        /* nchunks: fibre-start bits         */
    uint32_t *chunk_fibre;  /* nchunks: fibre of the chunk start */
} tf_spttm_fcoo;

/* Fails with TF_ERR_RANGE when there are 2^32 fibres or more. */
tf_status tf_spttm_fcoo_build(const tf_tensor *X, const tf_fibres *F, tf_spttm_fcoo *out);
void tf_spttm_fcoo_free(tf_spttm_fcoo *f);

#ifdef __cplusplus
}
#endif
#endif
