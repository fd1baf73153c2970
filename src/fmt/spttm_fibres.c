/* SPDX-License-Identifier: BSD-3-Clause */
/* Fibre order for SpTTM: radix sort by the other modes, then one pass
 * marking where the index tuple changes. */
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/radix.h"
#include "fmt/spttm_fibres.h"

void tf_fibres_free(tf_fibres *F)
{
    if (!F) return;
    tf_free(F->perm);
    tf_free(F->fptr);
    memset(F, 0, sizeof *F);
}

/* 1 if sorted non-zeros a and b (positions in X) differ in a mode other than `mode`. */
static int tuple_differs(const tf_tensor *X, uint32_t mode, uint64_t a, uint64_t b)
{
    for (uint32_t m = 0; m < X->order; ++m)
        if (m != mode && X->ind[m][a] != X->ind[m][b]) return 1;
    return 0;
}

tf_status tf_fibres_build(const tf_tensor *X, uint32_t mode, tf_fibres *F)
{
    memset(F, 0, sizeof *F);
    F->mode = mode;
    F->nnz = X->nnz;
    uint32_t mo[TF_MAX_ORDER], n = 0;
    for (uint32_t m = 0; m < X->order; ++m)
        if (m != mode) mo[n++] = m;
    tf_status s = X->nnz ? tf_radix_order(X, mo, n, &F->perm) : TF_ALLOC(F->perm, 1, "fibre permutation");
    if (s != TF_OK) return s;
    uint64_t count = 0;
    for (uint64_t k = 0; k < X->nnz; ++k)
        if (k == 0 || tuple_differs(X, mode, F->perm[k - 1], F->perm[k])) ++count;
    s = TF_ALLOC(F->fptr, count + 1, "fibre offsets");
    if (s != TF_OK) { tf_fibres_free(F); return s; }
    F->nfibers = count;
    count = 0;
    for (uint64_t k = 0; k < X->nnz; ++k)
        if (k == 0 || tuple_differs(X, mode, F->perm[k - 1], F->perm[k])) F->fptr[count++] = k;
    F->fptr[count] = X->nnz;
    return TF_OK;
}

tf_status tf_fibres_output(const tf_tensor *X, const tf_fibres *F, uint64_t R, tf_semisparse *y)
{
    memset(y, 0, sizeof *y);
    y->order = X->order;
    y->mode = F->mode;
    y->nfibers = F->nfibers;
    for (uint32_t m = 0; m < X->order; ++m) y->dims[m] = X->dims[m];
    y->dims[F->mode] = R;
    if (F->nfibers && R > UINT64_MAX / F->nfibers)
        return tf_fail(TF_ERR_RANGE, "SpTTM output of %llu fibres x %llu columns overflows",
                       (unsigned long long)F->nfibers, (unsigned long long)R);
    tf_status s = TF_ALLOC(y->vals, F->nfibers * R > 0 ? F->nfibers * R : 1, "SpTTM output values");
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        if (m == F->mode) continue;
        s = TF_ALLOC(y->ind[m], F->nfibers ? F->nfibers : 1, "SpTTM output indices");
        for (uint64_t f = 0; f < F->nfibers && s == TF_OK; ++f) y->ind[m][f] = X->ind[m][F->perm[F->fptr[f]]];
    }
    if (s != TF_OK) tf_semisparse_free(y);
    return s;
}
