/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's row steps (cpu/apr_rows.h). */
#include "cpu/apr_rows.h"

#include "core/parallel.h"
#include "cpu/dense.h"

uint64_t tf_apr_scooch(double *A, const double *Phi, uint64_t lo, uint64_t hi, uint64_t R, double kappa,
                       double kappatol, int threads)
{
    uint64_t moved = 0;
    const int nt = tf_dense_team(hi - lo, R, threads);
#pragma omp parallel for num_threads(nt) reduction(+ : moved) schedule(static) if (nt > 1)
    for (int64_t i = (int64_t)lo; i < (int64_t)hi; ++i)
        for (uint64_t r = 0; r < R; ++r) {
            const uint64_t e = (uint64_t)i * R + r;
            if (Phi[e] > 0.0 && A[e] < kappatol) {
                A[e] += kappa;
                ++moved;
            }
        }
    return moved;
}

void tf_apr_scale_columns(double *A, const double *w, uint64_t lo, uint64_t hi, uint64_t R, int threads)
{
    const int nt = tf_dense_team(hi - lo, R, threads);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t i = (int64_t)lo; i < (int64_t)hi; ++i)
        for (uint64_t r = 0; r < R; ++r) A[(uint64_t)i * R + r] *= w[r];
}

void tf_apr_multiply(double *A, const double *Phi, uint64_t lo, uint64_t hi, uint64_t R, int threads)
{
    const int nt = tf_dense_team(hi - lo, R, threads);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t i = (int64_t)lo; i < (int64_t)hi; ++i)
        for (uint64_t r = 0; r < R; ++r) A[(uint64_t)i * R + r] *= Phi[(uint64_t)i * R + r];
}
