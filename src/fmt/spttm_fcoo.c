/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO builder for SpTTM (see the header). */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "fmt/spttm_fcoo.h"

void tf_spttm_fcoo_free(tf_spttm_fcoo *f)
{
    if (!f) return;
    tf_free(f->idx);
    tf_free(f->val);
    tf_free(f->flags);
    tf_free(f->chunk_fibre);
    memset(f, 0, sizeof *f);
}

tf_status tf_spttm_fcoo_build(const tf_tensor *X, const tf_fibres *F, tf_spttm_fcoo *out)
{
    memset(out, 0, sizeof *out);
    if (F->nfibers >= UINT32_MAX)
        return tf_fail(TF_ERR_RANGE, "F-COO holds fewer than 2^32 fibres; this tensor has %llu on mode %u",
                       (unsigned long long)F->nfibers, F->mode + 1);
    const uint64_t n = F->nnz;
    out->nnz = n;
    out->nchunks = (n + TF_FCOO_CHUNK - 1) / TF_FCOO_CHUNK;
    tf_status s = TF_ALLOC(out->idx, n ? n : 1, "F-COO indices");
    if (s == TF_OK) s = TF_ALLOC(out->val, n ? n : 1, "F-COO values");
    if (s == TF_OK) s = TF_CALLOC(out->flags, out->nchunks + 1, "F-COO bit flags");
    if (s == TF_OK) s = TF_ALLOC(out->chunk_fibre, out->nchunks + 1, "F-COO chunk fibres");
    if (s != TF_OK) {
        tf_spttm_fcoo_free(out);
        return s;
    }
    const uint32_t *ix = X->ind[F->mode];
    for (uint64_t k = 0; k < n; ++k) {
        out->idx[k] = ix[F->perm[k]];
        out->val[k] = X->vals[F->perm[k]];
    }
    for (uint64_t f = 0; f < F->nfibers; ++f) {
        const uint64_t k = F->fptr[f];
        out->flags[k / TF_FCOO_CHUNK] |= 1u << (k % TF_FCOO_CHUNK);
    }
    uint64_t f = 0; /* fibre of position k: the last f with fptr[f] <= k */
    for (uint64_t c = 0; c < out->nchunks; ++c) {
        const uint64_t k = c * TF_FCOO_CHUNK;
        while (f + 1 < F->nfibers && F->fptr[f + 1] <= k) ++f;
        out->chunk_fibre[c] = (uint32_t)f;
    }
    return TF_OK;
}
