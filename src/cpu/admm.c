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
 * at t = l1 / rho (t = 0: the identity, or the projection); branch-free. */
static inline double prox(double v, double t, int nonneg)
{
    const double up = v - t > 0.0 ? v - t : 0.0; /* +0 at and below t */
    if (nonneg) return up;
    const double down = v + t < 0.0 ? v + t : 0.0;
    return up + down;
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
    /* the sums in a fixed vector order (the build's, not the thread count's) */
#pragma omp simd reduction(+ : pr, dr, hn, un)
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

/* out (I x R, or the thread's scratch block when NULL) = M P block by block;
 * *neg = 1 when an entry is below 0 (with stop_early the pass ends at the
 * first such block). */
static void ls_pass(const double *P, const double *M, double *out, uint64_t I, uint64_t R, uint64_t rows, int nt,
                    double *scratch, int stop_early, int *neg)
{
    const uint64_t nblocks = (I + rows - 1) / rows;
    int found = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
        if (stop_early && __atomic_load_n(&found, __ATOMIC_RELAXED)) continue;
        const uint64_t i = (uint64_t)b * rows, n = I - i < rows ? I - i : rows;
        double *S = out ? out + i * R : scratch + (uint64_t)omp_get_thread_num() * 2 * rows * R;
        tf_dense_apply_block(P, M + i * R, S, n, R);
        int f = 0;
        for (uint64_t e = 0; e < n * R; ++e) f |= S[e] < 0.0;
        if (f) __atomic_store_n(&found, 1, __ATOMIC_RELAXED);
    }
    *neg = found;
}

/* The least-squares solution H* = M V^-1 where it decides the update: a
 * cold start (H = H*, U = 0), and for non-negativity alone the exact
 * answer when H* has no negative entry (then *done: H = H*, U = 0, no ADMM
 * iteration; ADMM would approach it like a proximal point iteration, slowly
 * where V is ill-conditioned). P: R x R scratch. */
static tf_status least_squares(const double *M, double *H, double *U, uint64_t I, uint64_t R, const double *V,
                               const tf_admm_mode *o, uint64_t rows, int nt, double *P, double *scratch,
                               int *used_pinv, int *done)
{
    *done = 0;
    const int project_only = o->nonneg && !(o->l1 > 0.0);
    if (!o->cold && !project_only) return TF_OK;
    TF_TRY(tf_dense_inverse(V, R, P, used_pinv));
    int neg = 0;
    ls_pass(P, M, o->cold ? H : NULL, I, R, rows, nt, scratch, !o->cold, &neg);
    if (o->allreduce_sum) { /* every process takes the same branch */
        double any = neg;
        TF_TRY(o->allreduce_sum(&any, 1));
        neg = any > 0.0;
    }
    if (o->cold || !neg) memset(U, 0, I * R * sizeof *U);
    if (!project_only || neg) return TF_OK;
    if (!o->cold) ls_pass(P, M, H, I, R, rows, nt, scratch, 0, &neg);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t e = 0; e < (int64_t)(I * R); ++e) H[e] = H[e] > 0.0 ? H[e] : 0.0; /* -0 (an empty row) is +0 */
    *done = 1;
    return TF_OK;
}

tf_status tf_dense_admm(const double *M, double *H, double *U, uint64_t I, uint64_t R, const double *V,
                        const tf_admm_mode *o, int threads, uint32_t *inner, int *used_pinv)
{
    *inner = 0;
    *used_pinv = 0;
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
    int solved = 0;
    if ((s = least_squares(M, H, U, I, R, V, o, rows, nt, P, scratch, used_pinv, &solved)) != TF_OK || solved)
        goto done;
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
        /* the dual's scale is at least tol ||H||: where no constraint is
         * active U is 0 (or rounding noise) and H converges like a proximal
         * point iteration, whose steps alone then measure it */
        const double hn = sqrt(sum[HNORM]), un = fmax(sqrt(sum[UNORM]), o->tol * hn);
        if (sqrt(sum[PRIMAL]) <= o->tol * hn && sqrt(sum[DUAL]) <= o->tol * un) break;
    }
done:
    tf_free(W);
    tf_free(P);
    tf_free(part);
    tf_free(scratch);
    return s;
}
