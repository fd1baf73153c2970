/* SPDX-License-Identifier: BSD-3-Clause */
/* Leading eigenvectors of a formed symmetric matrix (dsyevr), the sign
 * rule, and Householder orthonormalisation (moved here from nvecs.c so the
 * CPU Tucker backend shares them). */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "cpu/eig.h"

/* Column c of V (I x m row-major) times -1 where its first largest-magnitude
 * entry is negative (pyttb's sptensor.nvecs, flipsign). */
void tf_eig_fix_signs(double *V, uint64_t I, uint64_t m)
{
    for (uint64_t c = 0; c < m; ++c) {
        double best = -1.0, at = 0.0;
        for (uint64_t i = 0; i < I; ++i)
            if (fabs(V[i * m + c]) > best) best = fabs(V[i * m + c]), at = V[i * m + c];
        if (at < 0.0)
            for (uint64_t i = 0; i < I; ++i) V[i * m + c] = -V[i * m + c];
    }
}

/* The formed Gram's r leading eigenpairs (dsyevr), decreasing. G is
 * overwritten. */
tf_status tf_eig_leading(double *G, uint64_t I, uint64_t r, double *vecs, double *vals, const char *who)
{
    const int n = (int)I, il = (int)(I - r + 1), iu = (int)I;
    const double vl = 0.0, vu = 0.0, abstol = 0.0;
    int m = 0, info = 0, lwork = -1, liwork = -1, iwq = 0;
    double wq = 0.0;
    double *w = NULL, *Z = NULL, *work = NULL;
    int *isuppz = NULL, *iwork = NULL;
    tf_status s = TF_ALLOC(w, I, "eigenvalues");
    if (s == TF_OK) s = TF_ALLOC(Z, I * r, "eigenvectors");
    if (s == TF_OK) s = TF_ALLOC(isuppz, 2 * I, "dsyevr support");
    if (s == TF_OK) {
        dsyevr_("V", "I", "U", &n, G, &n, &vl, &vu, &il, &iu, &abstol, &m, w, Z, &n, isuppz, &wq, &lwork, &iwq,
                &liwork, &info, 1, 1, 1);
        lwork = (int)wq + 1;
        liwork = iwq + 1;
        s = TF_ALLOC(work, (uint64_t)lwork, "dsyevr workspace");
    }
    if (s == TF_OK) s = TF_ALLOC(iwork, (uint64_t)liwork, "dsyevr workspace");
    if (s == TF_OK) {
        dsyevr_("V", "I", "U", &n, G, &n, &vl, &vu, &il, &iu, &abstol, &m, w, Z, &n, isuppz, work, &lwork, iwork,
                &liwork, &info, 1, 1, 1);
        if (info != 0 || (uint64_t)m != r)
            s = tf_fail(TF_ERR_NUMERIC, "%s: the eigendecomposition of the %llu x %llu Gram failed (LAPACK "
                                        "dsyevr info %d, %d of %llu vectors)",
                        who, (unsigned long long)I, (unsigned long long)I, info, m, (unsigned long long)r);
    }
    if (s == TF_OK) /* ascending -> decreasing; column j of Z (column-major) is vector j */
        for (uint64_t c = 0; c < r; ++c) {
            vals[c] = w[r - 1 - c];
            for (uint64_t i = 0; i < I; ++i) vecs[i * r + c] = Z[(r - 1 - c) * I + i];
        }
    tf_free(w);
    tf_free(Z);
    tf_free(isuppz);
    tf_free(work);
    tf_free(iwork);
    return s;
}

/* Q (I x k row-major) orthonormal in place, by Householder QR. */
tf_status tf_eig_orthonormal(double *Q, uint64_t I, int k, const char *who)
{
    double *T = NULL, *tau = NULL, *work = NULL;
    const int m = (int)I;
    int info = 0, lwork = -1;
    double wq = 0.0;
    tf_status s = TF_ALLOC(T, I * (uint64_t)k, "QR");
    if (s == TF_OK) s = TF_ALLOC(tau, (uint64_t)k, "QR");
    if (s == TF_OK) {
        for (uint64_t i = 0; i < I; ++i)
            for (int c = 0; c < k; ++c) T[(uint64_t)c * I + i] = Q[i * k + c];
        dgeqrf_(&m, &k, T, &m, tau, &wq, &lwork, &info);
        lwork = (int)wq + 1;
        double wq2 = 0.0;
        int l2 = -1;
        dorgqr_(&m, &k, &k, T, &m, tau, &wq2, &l2, &info);
        if ((int)wq2 + 1 > lwork) lwork = (int)wq2 + 1;
        s = TF_ALLOC(work, (uint64_t)lwork, "QR workspace");
    }
    if (s == TF_OK) {
        dgeqrf_(&m, &k, T, &m, tau, work, &lwork, &info);
        if (info == 0) dorgqr_(&m, &k, &k, T, &m, tau, work, &lwork, &info);
        if (info != 0) s = tf_fail(TF_ERR_NUMERIC, "%s: QR factorisation failed (LAPACK info %d)", who, info);
    }
    if (s == TF_OK)
        for (uint64_t i = 0; i < I; ++i)
            for (int c = 0; c < k; ++c) Q[i * k + c] = T[(uint64_t)c * I + i];
    tf_free(T);
    tf_free(tau);
    tf_free(work);
    return s;
}

