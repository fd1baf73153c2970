/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM from arrays: P = (A B^T) o spy(S) for a 4 x 5 sparse S given as
 * coordinates and dense A (4 x 2), B (5 x 2); checks P against the dot
 * products computed here and prints it. */
#include <math.h>
#include <stdio.h>

#include <tenfold.h>

int main(void)
{
    static const uint32_t rows[] = {0, 0, 1, 2, 3, 3};
    static const uint32_t cols[] = {0, 3, 1, 4, 2, 4};
    static const double a[4][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    static const double b[5][2] = {{1, 0}, {0, 1}, {1, 1}, {2, 1}, {1, 2}};
    const uint64_t dims[2] = {4, 5}, nnz = 6;
    tf_tensor S;
    tf_matrix A, B;
    if (tf_tensor_alloc(&S, 2, dims, nnz) != TF_OK || tf_matrix_alloc(&A, 4, 2) != TF_OK ||
        tf_matrix_alloc(&B, 5, 2) != TF_OK) {
        fprintf(stderr, "sddmm_arrays: %s\n", tf_last_error());
        return 1;
    }
    for (uint64_t k = 0; k < nnz; ++k) {
        S.ind[0][k] = rows[k];
        S.ind[1][k] = cols[k];
        S.vals[k] = 1.0;
    }
    for (int i = 0; i < 4 * 2; ++i) A.data[i] = a[i / 2][i % 2];
    for (int i = 0; i < 5 * 2; ++i) B.data[i] = b[i / 2][i % 2];
    double P[6];
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o); /* P = alpha (A B^T) o spy(S) + beta S, alpha 1, beta 0 */
    tf_sddmm_info info;
    int bad = tf_sddmm_coo(&S, &A, &B, &o, P, &info) != TF_OK;
    if (bad) fprintf(stderr, "sddmm_arrays: %s\n", tf_last_error());
    for (uint64_t k = 0; k < nnz && !bad; ++k) {
        const double want = a[rows[k]][0] * b[cols[k]][0] + a[rows[k]][1] * b[cols[k]][1];
        printf("P(%u, %u) = %g\n", rows[k], cols[k], P[k]);
        if (fabs(P[k] - want) > 1e-12) {
            fprintf(stderr, "sddmm_arrays: P(%u, %u) = %g, expected %g\n", rows[k], cols[k], P[k], want);
            bad = 1;
        }
    }
    printf("on the %s\n", info.backend == TF_BACKEND_GPU ? "GPU" : "CPU");
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_tensor_free(&S);
    return bad;
}
