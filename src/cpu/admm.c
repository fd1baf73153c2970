/* SPDX-License-Identifier: BSD-3-Clause */
/* AO-ADMM's inner iterations for one factor on the CPU. See admm.h. The
 * inverse and the row-block products are dense.c's (tf_dense_inverse,
 * tf_dense_apply_block); this file adds the proximal step, the dual update
 * and the residuals, fused into the pass over each row block. */
#include "cpu/admm.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "cpu/dense.h"

/* prox of l1 |x| / rho (+ the indicator of x >= 0) at v: the soft threshold
 * at t = l1 / rho (t = 0: the identity, or the projection). */
static inline double prox(double v, double t, int nonneg)
{
    if (v > t) return v - t;
    if (nonneg || v >= -t) return 0.0;
    return v + t;
}

/* Residual terms of a block, summed over its entries. */
enum { PRIMAL, DUAL, HNORM, UNORM, TERMS };

/* One inner iteration over rows [i0, i0 + n) with scratch B, Ht (n x R each). */
static void block_step(const double *P, const double *M, double *H, double *U, uint64_t n, uint64_t R, double rho,
                       double t, int nonneg, double *B, double *Ht, double *sums)
{
    const uint64_t e_end = n * R;
    for (uint64_t e = 0; e < e_end; ++e) B[e] = M[e] + rho * (H[e] + U[e]);
    tf_dense_apply_block(P, B, Ht, n, R);
    double pr = 0.0, dr = 0.0, hn = 0.0, un = 0.0;
    for (uint64_t e = 0; e < e_end; ++e) {
        const double ht = Ht[e], h = prox(ht - U[e], t, nonneg);
        const double u = U[e] + (h - ht), d = h - H[e];
        pr += (h - ht) * (h - ht);
        dr += d * d;
        hn += h * h;
        un += u * u;
        H[e] = h;
        U[e] = u;
    }
    sums[PRIMAL] = pr;
    sums[DUAL] = dr;
    sums[HNORM] = hn;
    sums[UNORM] = un;
}

tf_status tf_dense_admm(const double *M, double *H, double *U, uint64_t I, uint64_t R, const double *V,
                        const tf_admm_mode *o, int threads, uint32_t *inner)
{
    *inner = 0;
    if (R == 0 || R > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "AO-ADMM: rank %llu is outside 1..%u", (unsigned long long)R, TF_MAX_RANK);
    double rho = 0.0;
    for (uint64_t r = 0; r < R; ++r) rho += V[r * R + r];
    rho /= (double)R;
    if (!(rho > 0.0) && isfinite(rho)) rho = 1.0; /* V = 0: the other factors are zero */
    const uint64_t rows = tf_dense_blas_rows(R), nblocks = (I + rows - 1) / rows;
    double *W = NULL, *P = NULL, *part = NULL, *scratch = NULL;
    int nt = 1, pinv = 0;
    tf_status s = tf_dense_blas_team(threads, nblocks, I * R * (R + 8), &nt);
    if (s == TF_OK) s = TF_ALLOC(W, R * R, "AO-ADMM normal matrix");
    if (s == TF_OK) s = TF_ALLOC(P, R * R, "AO-ADMM inverse");
    if (s == TF_OK) s = TF_ALLOC(part, (nblocks ? nblocks : 1) * TERMS, "AO-ADMM residual sums");
    if (s == TF_OK) s = TF_ALLOC(scratch, (uint64_t)nt * 2 * rows * R, "AO-ADMM row blocks");
    if (s != TF_OK) goto done;
    memcpy(W, V, R * R * sizeof *W);
    for (uint64_t r = 0; r < R; ++r) W[r * R + r] += rho;
    /* positive definite (eigenvalues >= rho): the Cholesky path, always */
    if ((s = tf_dense_inverse(W, R, P, &pinv)) != TF_OK) goto done;
    const double t = o->l1 / rho;
    for (uint32_t it = 0; it < o->max_inner;) {
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4) if (nt > 1)
        for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
            const uint64_t i = (uint64_t)b * rows, n = I - i < rows ? I - i : rows;
            double *B = scratch + (uint64_t)omp_get_thread_num() * 2 * rows * R;
            block_step(P, M + i * R, H + i * R, U + i * R, n, R, rho, t, o->nonneg, B, B + rows * R,
                       part + (uint64_t)b * TERMS);
        }
        double sum[TERMS] = {0.0, 0.0, 0.0, 0.0};
        for (uint64_t b = 0; b < nblocks; ++b)
            for (int k = 0; k < TERMS; ++k) sum[k] += part[b * TERMS + k];
        if (o->allreduce_sum && (s = o->allreduce_sum(sum, TERMS)) != TF_OK) goto done;
        *inner = ++it;
        if (!isfinite(sum[PRIMAL] + sum[DUAL] + sum[HNORM] + sum[UNORM])) {
            s = tf_fail(TF_ERR_NUMERIC, "AO-ADMM: the update is not finite; the factors diverged");
            goto done;
        }
        if (sqrt(sum[PRIMAL]) <= o->tol * sqrt(sum[HNORM]) && sqrt(sum[DUAL]) <= o->tol * sqrt(sum[UNORM])) break;
    }
done:
    tf_free(W);
    tf_free(P);
    tf_free(part);
    tf_free(scratch);
    return s;
}
