/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's row steps on the CPU (pyttb's tt_cp_apr_mu between the Phi
 * passes): the scooch, the weights into the mode (redistribute) and the
 * multiplicative update, each on rows [lo, hi) of a row-major factor with R
 * columns, elementwise (so the thread count changes no bit). */
#ifndef TF_CPU_APR_ROWS_H
#define TF_CPU_APR_ROWS_H
#include <stdint.h>

/* A(i,r) += kappa where A(i,r) < kappatol and Phi(i,r) > 0; returns how
 * many entries moved. */
uint64_t tf_apr_scooch(double *A, const double *Phi, uint64_t lo, uint64_t hi, uint64_t R, double kappa,
                       double kappatol, int threads);
/* A(i,r) *= w[r]. */
void tf_apr_scale_columns(double *A, const double *w, uint64_t lo, uint64_t hi, uint64_t R, int threads);
/* A(i,r) *= Phi(i,r). */
void tf_apr_multiply(double *A, const double *Phi, uint64_t lo, uint64_t hi, uint64_t R, int threads);
#endif
