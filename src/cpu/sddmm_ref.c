/* SPDX-License-Identifier: BSD-3-Clause */
/* Plain float64 reference SDDMM: one dot product per non-zero, in order,
 * single-threaded. The yardstick the tests compare every kernel with. */
#include "seams/sddmm_backends.h"
#include "core/error.h"

tf_status tf_sddmm_reference(const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                             tf_sddmm_op op, double alpha, double beta, double *P)
{
    static const char who[] = "tf_sddmm_reference";
    if (!S) return tf_fail(TF_ERR_ARG, "%s: S is NULL", who);
    if (!A) return tf_fail(TF_ERR_ARG, "%s: A is NULL", who);
    if (!B) return tf_fail(TF_ERR_ARG, "%s: B is NULL", who);
    if (S->nnz && !P) return tf_fail(TF_ERR_ARG, "%s: P is NULL", who);
    if (op != TF_SDDMM_SAMPLE && op != TF_SDDMM_SCALE) return tf_fail(TF_ERR_ARG, "%s: unknown op %d", who, (int)op);
    TF_TRY(tf_csr_validate(S));
    if (A->rows != S->rows || B->rows != S->cols || A->cols != B->cols)
        return tf_fail(TF_ERR_ARG, "%s: shapes A %llux%llu, B %llux%llu do not fit S %llux%llu",
                       who, (unsigned long long)A->rows, (unsigned long long)A->cols, (unsigned long long)B->rows,
                       (unsigned long long)B->cols, (unsigned long long)S->rows, (unsigned long long)S->cols);
    const uint64_t K = A->cols;
    if (K && ((A->rows && !A->data) || (B->rows && !B->data))) return tf_fail(TF_ERR_ARG, "%s: A or B has no data (NULL)", who);
    for (uint64_t i = 0; i < S->rows; ++i)
        for (uint64_t k = S->rowptr[i]; k < S->rowptr[i + 1]; ++k) {
            const double *a = A->data + i * K, *b = B->data + (uint64_t)S->colind[k] * K;
            double d = 0.0;
            for (uint64_t t = 0; t < K; ++t) d += a[t] * b[t];
            P[k] = tf_sddmm_combine(op, alpha, beta, d, S->vals[k]);
        }
    return TF_OK;
}
