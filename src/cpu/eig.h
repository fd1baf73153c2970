/* SPDX-License-Identifier: BSD-3-Clause */
/* Leading eigenvectors of a formed symmetric matrix and the orthonormal
 * bases around them (LAPACK), shared by tf_nvecs (src/algo/nvecs.c) and the
 * CPU Tucker backend (src/cpu/tucker_cpu.c). Row-major matrices. */
#ifndef TF_CPU_EIG_H
#define TF_CPU_EIG_H
#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

void dsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a, const int *lda,
             const double *vl, const double *vu, const int *il, const int *iu, const double *abstol, int *m,
             double *w, double *z, const int *ldz, int *isuppz, double *work, const int *lwork, int *iwork,
             const int *liwork, int *info, size_t ljobz, size_t lrange, size_t luplo);
void dgeqrf_(const int *m, const int *n, double *a, const int *lda, double *tau, double *work, const int *lwork,
             int *info);
void dorgqr_(const int *m, const int *n, const int *k, double *a, const int *lda, const double *tau, double *work,
             const int *lwork, int *info);

/* Column c of V (I x m) times -1 where its first largest-magnitude entry is
 * negative (pyttb's nvecs, flipsign): the sign every caller fixes. */
void tf_eig_fix_signs(double *V, uint64_t I, uint64_t m);

/* The r leading eigenpairs of the symmetric G (I x I, both triangles or the
 * upper one; overwritten) by LAPACK dsyevr: vecs (I x r) in decreasing
 * eigenvalue order, vals (r) decreasing. `who` starts the messages. */
tf_status tf_eig_leading(double *G, uint64_t I, uint64_t r, double *vecs, double *vals, const char *who);

/* Q (I x k) orthonormal in place by Householder QR (dgeqrf + dorgqr): column
 * j spans what columns 1..j spanned (up to sign). */
tf_status tf_eig_orthonormal(double *Q, uint64_t I, int k, const char *who);
#endif
