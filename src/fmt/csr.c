/* SPDX-License-Identifier: BSD-3-Clause */
/* Compressed sparse row matrices: allocation, validation, and the
 * conversion from order-2 COO tensors (counting sort by row, then columns
 * sorted within each row, keeping the COO position of every entry). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "fmt/csr.h"

tf_status tf_csr_alloc(tf_csr *c, uint64_t rows, uint64_t cols, uint64_t nnz)
{
    if (!c) return tf_fail(TF_ERR_ARG, "tf_csr_alloc: c is NULL");
    memset(c, 0, sizeof *c);
    if (cols > (1ULL << 32))
        return tf_fail(TF_ERR_RANGE, "CSR matrix has %llu columns, more than the 2^32 uint32 indices allow",
                       (unsigned long long)cols);
    if (rows == UINT64_MAX) return tf_fail(TF_ERR_RANGE, "CSR matrix has too many rows");
    c->rows = rows;
    c->cols = cols;
    c->nnz = nnz;
    tf_status s = TF_CALLOC(c->rowptr, rows + 1, "CSR row offsets");
    if (s == TF_OK) s = TF_ALLOC(c->colind, nnz, "CSR column indices");
    if (s == TF_OK) s = TF_ALLOC(c->vals, nnz, "CSR values");
    if (s != TF_OK) tf_csr_free(c);
    return s;
}

void tf_csr_free(tf_csr *c)
{
    if (!c) return;
    tf_free(c->rowptr);
    tf_free(c->colind);
    tf_free(c->vals);
    memset(c, 0, sizeof *c);
}

tf_status tf_csr_validate(const tf_csr *S)
{
    if (!S) return tf_fail(TF_ERR_ARG, "tf_csr_validate: S is NULL");
    if (S->cols > (1ULL << 32))
        return tf_fail(TF_ERR_RANGE, "CSR matrix has %llu columns, more than 2^32", (unsigned long long)S->cols);
    if (!S->rowptr) return tf_fail(TF_ERR_ARG, "CSR matrix has no row offsets");
    if (S->nnz && (!S->colind || !S->vals))
        return tf_fail(TF_ERR_ARG, "CSR matrix has %llu non-zeros but no column or value array",
                       (unsigned long long)S->nnz);
    if (S->rowptr[0] != 0 || S->rowptr[S->rows] != S->nnz)
        return tf_fail(TF_ERR_ARG, "CSR row offsets run from %llu to %llu, expected 0 to nnz = %llu",
                       (unsigned long long)S->rowptr[0], (unsigned long long)S->rowptr[S->rows],
                       (unsigned long long)S->nnz);
    for (uint64_t i = 0; i < S->rows; ++i)
        if (S->rowptr[i + 1] < S->rowptr[i])
            return tf_fail(TF_ERR_ARG, "CSR row offsets decrease at row %llu (%llu > %llu)",
                           (unsigned long long)i, (unsigned long long)S->rowptr[i],
                           (unsigned long long)S->rowptr[i + 1]);
    for (uint64_t k = 0; k < S->nnz; ++k) {
        if ((uint64_t)S->colind[k] >= S->cols)
            return tf_fail(TF_ERR_RANGE, "CSR non-zero %llu: column %u is outside 0..%llu",
                           (unsigned long long)k, S->colind[k], (unsigned long long)(S->cols - 1));
        if (!isfinite(S->vals[k]))
            return tf_fail(TF_ERR_RANGE, "CSR non-zero %llu: value is not finite", (unsigned long long)k);
    }
    return TF_OK;
}

/* Insertion sort of one row's entries by column (rows are usually short
 * and already sorted; long unsorted rows fall back to qsort). */
typedef struct col_pos { uint32_t col; uint64_t pos; } col_pos;

static int cmp_col_pos(const void *a, const void *b)
{
    const col_pos *x = a, *y = b;
    if (x->col != y->col) return x->col < y->col ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static tf_status sort_row(uint32_t *col, uint64_t *pos, uint64_t n)
{
    uint64_t k = 1;
    while (k < n && col[k - 1] <= col[k]) ++k;
    if (k >= n) return TF_OK;
    col_pos *tmp = NULL;
    TF_TRY(TF_ALLOC(tmp, n, "CSR row sort buffer"));
    for (uint64_t j = 0; j < n; ++j) tmp[j] = (col_pos){col[j], pos[j]};
    qsort(tmp, n, sizeof *tmp, cmp_col_pos);
    for (uint64_t j = 0; j < n; ++j) { col[j] = tmp[j].col; pos[j] = tmp[j].pos; }
    tf_free(tmp);
    return TF_OK;
}

tf_status tf_csr_from_coo_perm(const tf_tensor *S, tf_csr *out, uint64_t **perm_out)
{
    memset(out, 0, sizeof *out);
    if (perm_out) *perm_out = NULL;
    if (!S || S->order != 2)
        return tf_fail(TF_ERR_ARG, "CSR conversion needs an order-2 tensor (a matrix), got order %u",
                       S ? S->order : 0);
    TF_TRY(tf_tensor_validate(S));
    const uint64_t n = S->nnz;
    uint64_t *perm = NULL;
    TF_TRY(tf_csr_alloc(out, S->dims[0], S->dims[1], n));
    tf_status s = TF_ALLOC(perm, n, "CSR permutation");
    if (s != TF_OK) goto fail;
    for (uint64_t k = 0; k < n; ++k) ++out->rowptr[S->ind[0][k] + 1];
    for (uint64_t i = 0; i < out->rows; ++i) out->rowptr[i + 1] += out->rowptr[i];
    for (uint64_t k = 0; k < n; ++k) { /* stable counting sort; rowptr[i] = next slot of row i */
        uint64_t d = out->rowptr[S->ind[0][k]]++;
        perm[d] = k;
        out->colind[d] = S->ind[1][k];
    }
    for (uint64_t i = out->rows; i > 0; --i) out->rowptr[i] = out->rowptr[i - 1];
    out->rowptr[0] = 0;
    for (uint64_t i = 0; i < out->rows && s == TF_OK; ++i)
        s = sort_row(out->colind + out->rowptr[i], perm + out->rowptr[i], out->rowptr[i + 1] - out->rowptr[i]);
    if (s != TF_OK) goto fail;
    for (uint64_t k = 0; k < n; ++k) out->vals[k] = S->vals[perm[k]];
    if (perm_out) *perm_out = perm;
    else tf_free(perm);
    return TF_OK;
fail:
    tf_free(perm);
    tf_csr_free(out);
    return s;
}

tf_status tf_csr_from_coo(const tf_tensor *S, tf_csr *out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_csr_from_coo: out is NULL");
    if (!S) {
        memset(out, 0, sizeof *out);
        return tf_fail(TF_ERR_ARG, "tf_csr_from_coo: S is NULL");
    }
    return tf_csr_from_coo_perm(S, out, NULL);
}

tf_status tf_csr_to_coo(const tf_csr *S, tf_tensor *out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_csr_to_coo: out is NULL");
    memset(out, 0, sizeof *out);
    if (!S) return tf_fail(TF_ERR_ARG, "tf_csr_to_coo: S is NULL");
    TF_TRY(tf_csr_validate(S));
    const uint64_t dims[2] = {S->rows, S->cols};
    TF_TRY(tf_tensor_alloc(out, 2, dims, S->nnz));
    for (uint64_t i = 0; i < S->rows; ++i)
        for (uint64_t k = S->rowptr[i]; k < S->rowptr[i + 1]; ++k) {
            out->ind[0][k] = (uint32_t)i;
            out->ind[1][k] = S->colind[k];
            out->vals[k] = S->vals[k];
        }
    return TF_OK;
}

tf_status tf_csr_rows(const tf_csr *S, uint64_t lo, uint64_t hi, tf_csr *view, uint64_t **rowptr)
{
    *rowptr = NULL;
    *view = *S;
    const uint64_t z0 = S->rowptr[lo];
    view->rows = hi - lo;
    view->nnz = S->rowptr[hi] - z0;
    view->colind = S->colind + z0;
    view->vals = S->vals + z0;
    if (lo == 0 && hi == S->rows) return TF_OK;
    TF_TRY(TF_ALLOC(*rowptr, hi - lo + 1, "row panel offsets"));
    for (uint64_t i = 0; i <= hi - lo; ++i) (*rowptr)[i] = S->rowptr[lo + i] - z0;
    view->rowptr = *rowptr;
    return TF_OK;
}
