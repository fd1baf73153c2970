/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's Phi kernel on the CPU (pyttb's calculate_pi and calculate_phi in
 * one pass; the Khatri-Rao rows built per non-zero, optionally stored for
 * the mode's later passes, or read from there): for mode n and every non-zero x
 * at (i_1..i_N), p = prod_{k != n} A_k(i_k,:) (a Khatri-Rao row), m =
 * <B(i_n,:), p>, Phi(i_n,:) += x / max(m, eps) p.
 *
 * The non-zeros come grouped by their mode-n index, in increasing order (a
 * copy sorted by that mode), so a row of Phi is summed in one place: they
 * are cut into blocks of TF_APR_BLOCK (16 R above rank 128), and a row
 * inside one block is summed by its thread and stored; a row that crosses a
 * block edge gets one partial per block, added in block order after the
 * parallel pass. The cut depends on the non-zeros and R alone, so Phi has
 * the same bits for any thread count, and a heavy row never serialises the
 * pass. */
#ifndef TF_CPU_APR_PHI_H
#define TF_CPU_APR_PHI_H
#include "tenfold.h"

/* Non-zeros per block of the pass (ranks up to 128; 16 R above). */
#define TF_APR_BLOCK 2048u

typedef struct tf_apr_phi_in {
    const tf_tensor *S;         /* the non-zeros, grouped by mode `mode` in increasing
                                   index order; every index < the factor's rows   */
    uint32_t mode;
    const uint32_t *levels;     /* the other modes in the order S is sorted by after
                                   `mode` (order - 1 of them; NULL: increasing) --
                                   the order the Khatri-Rao rows are built in, so
                                   non-zeros that share leading indices share
                                   their products                                */
    const double *const *A;     /* every factor (row-major, R columns); A[mode] is B */
    uint64_t R;
    double eps;                 /* the floor of m (epsdivzero)                      */
    uint64_t row_lo, row_hi;    /* Phi's rows to write: every mode index of S lies
                                   in [row_lo, row_hi)                              */
    int threads;                /* 0 = default                                      */
    /* The Khatri-Rao rows kept between the passes of a mode (pyttb's Pi, S->nnz
     * x R; only the other factors make them, and those do not change during
     * a mode's inner iterations): pi_store (or NULL) gets them from this pass
     * (non-temporal stores), pi (or NULL) is read instead of building them --
     * the same bits either way. Not both. tf_cpu_apr_logdot reads neither. */
    const double *pi;
    double *pi_store;
} tf_apr_phi_in;

/* Phi's rows [row_lo, row_hi) (Phi points at row 0, R columns; every entry
 * of those rows is written, rows without non-zeros get 0) and *kkt = max
 * over those rows of |min(B(i,r), 1 - Phi(i,r))| (NaN if one is NaN). */
tf_status tf_cpu_apr_phi(const tf_apr_phi_in *in, double *Phi, double *kkt);

/* *sum = the sum over the non-zeros of S with x != 0 of x log m, m =
 * sum_r A_mode(i_mode, r) w_r prod_{k != mode} A_k(i_k, r) (w NULL: ones):
 * the data term of the Poisson log-likelihood of [[w; A_1..A_N]] (pyttb's
 * tt_loglikelihood: 0 log 0 = 0; a non-zero whose model is 0 makes it
 * -inf). S in any order (in->levels' order shares the most products);
 * in->eps, row_lo and row_hi are not used. Block sums added in order: the
 * same bits for any thread count. */
tf_status tf_cpu_apr_logdot(const tf_apr_phi_in *in, const double *w, double *sum);

/* 1 when the non-zeros of S are grouped by mode `mode` in increasing order
 * (the kernel's input as it is). */
int tf_cpu_apr_grouped(const tf_tensor *S, uint32_t mode, int threads);
#endif
