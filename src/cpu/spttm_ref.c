/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain float64 reference SpTTM, independent of the fast path's radix sort
 * and fibre builder: qsort of positions by the other modes' indices, then
 * one accumulation per non-zero. Single-threaded. */
#include <stdlib.h>
#include <string.h>

#include "seams/spttm_backends.h"
#include "core/alloc.h"
#include "core/error.h"

/* qsort has no context argument; the reference is single-threaded, so a
 * thread-local pointer to the tensor and mode does. */
static _Thread_local const tf_tensor *ref_X;
static _Thread_local uint32_t ref_mode;

static int cmp_other_modes(const void *a, const void *b)
{
    const uint64_t p = *(const uint64_t *)a, q = *(const uint64_t *)b;
    for (uint32_t m = 0; m < ref_X->order; ++m) {
        if (m == ref_mode) continue;
        const uint32_t x = ref_X->ind[m][p], y = ref_X->ind[m][q];
        if (x != y) return x < y ? -1 : 1;
    }
    return 0;
}

tf_status tf_spttm_reference(const tf_tensor *X, uint32_t mode, const tf_matrix *U, tf_semisparse *out)
{
    static const char who[] = "tf_spttm_reference";
    if (!out) return tf_fail(TF_ERR_ARG, "%s: out is NULL", who);
    memset(out, 0, sizeof *out);
    if (!X) return tf_fail(TF_ERR_ARG, "%s: X is NULL", who);
    if (!U) return tf_fail(TF_ERR_ARG, "%s: U is NULL", who);
    TF_TRY(tf_tensor_validate(X));
    if (mode >= X->order)
        return tf_fail(TF_ERR_ARG, "%s: mode %llu is outside 1..%u", who, (unsigned long long)mode + 1, X->order);
    if (U->rows != X->dims[mode] || U->cols == 0 || !U->data)
        return tf_fail(TF_ERR_ARG, "%s: U %llux%llu%s does not fit mode %u of length %llu", who,
                       (unsigned long long)U->rows, (unsigned long long)U->cols, U->data ? "" : " without data",
                       mode + 1, (unsigned long long)X->dims[mode]);
    const uint64_t n = X->nnz, R = U->cols;
    uint64_t *pos = NULL, nf = 0;
    TF_TRY(TF_ALLOC(pos, n ? n : 1, "reference SpTTM order"));
    for (uint64_t k = 0; k < n; ++k) pos[k] = k;
    ref_X = X;
    ref_mode = mode;
    qsort(pos, n, sizeof *pos, cmp_other_modes);
    for (uint64_t k = 0; k < n; ++k)
        if (k == 0 || cmp_other_modes(&pos[k - 1], &pos[k]) != 0) ++nf;
    out->order = X->order;
    out->mode = mode;
    out->nfibers = nf;
    for (uint32_t m = 0; m < X->order; ++m) out->dims[m] = m == mode ? R : X->dims[m];
    tf_status s = TF_CALLOC(out->vals, nf * R > 0 ? nf * R : 1, "reference SpTTM values");
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m)
        if (m != mode) s = TF_ALLOC(out->ind[m], nf ? nf : 1, "reference SpTTM indices");
    if (s != TF_OK) {
        tf_free(pos);
        tf_semisparse_free(out);
        return s;
    }
    uint64_t f = 0;
    for (uint64_t k = 0; k < n; ++k) {
        if (k > 0 && cmp_other_modes(&pos[k - 1], &pos[k]) != 0) ++f;
        const uint64_t p = pos[k];
        for (uint32_t m = 0; m < X->order; ++m)
            if (m != mode) out->ind[m][f] = X->ind[m][p];
        const double *u = U->data + (uint64_t)X->ind[mode][p] * R;
        for (uint64_t r = 0; r < R; ++r) out->vals[f * R + r] += X->vals[p] * u[r];
    }
    tf_free(pos);
    return TF_OK;
}
