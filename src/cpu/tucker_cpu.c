/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU Tucker backend (seams/tucker.h): TTMc over compressed-fibre trees
 * (ttmc_cpu.c), the leading left singular vectors of Y_(n) by LAPACK, the
 * core by one dgemm. Row-major matrices throughout: a row-major m x n matrix
 * is BLAS's column-major n x m, so no copies.
 *
 * On MPI ranks (tf_cpu_tucker_backend_create_dist) X is this rank's part of
 * the non-zeros: its TTMc is its part of Y_(n), summed over the ranks on
 * rank 0 (a reduction in pieces of the context's round size); rank 0 alone
 * computes the leading vectors and the core from it, as one process would,
 * and broadcasts them (every rank then holds the same factors: the ranks
 * never drift apart, and they stop together); a failure on one rank is
 * every rank's (tf_dist_shared). Every rank holds a whole Y_(n) (its part's
 * sum over all the rows), so the memory check is the single process's. */
#include <math.h>
#include <string.h>

#include "seams/tucker.h"
#include "seams/dist.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "cpu/dense.h"
#include "cpu/eig.h"

#define GRAM_MAX 4096u     /* the formed Gram of the shorter side of Y, at most   */
#define OVERSAMPLE 10u     /* the subspace iteration's extra columns             */
#define SUBSPACE_TOL 1e-12 /* its residuals relative to the largest eigenvalue   */
#define SUBSPACE_ITERS 300u

tf_tucker_svd tf_tucker_svd_choose(uint64_t I, uint64_t C, tf_tucker_svd svd)
{
    if (svd != TF_TUCKER_SVD_AUTO) return svd;
    if (I <= C) return I <= GRAM_MAX ? TF_TUCKER_SVD_ROW_GRAM : TF_TUCKER_SVD_SUBSPACE;
    return C <= GRAM_MAX ? TF_TUCKER_SVD_COL_GRAM : TF_TUCKER_SVD_SUBSPACE;
}

/* Columns of Y_(n): the product of the other ranks. */
static uint64_t cols_of(uint32_t N, const uint64_t *ranks, uint32_t n)
{
    uint64_t c = 1;
    for (uint32_t k = 0; k < N; ++k)
        if (k != n) c *= ranks[k];
    return c;
}

/* Doubles the leading vectors of Y (I x C, r of them) take besides Y. */
static uint64_t svd_doubles(uint64_t I, uint64_t C, uint64_t r, tf_tucker_svd m)
{
    const uint64_t k = r + OVERSAMPLE < (I < C ? I : C) ? r + OVERSAMPLE : (I < C ? I : C);
    switch (m) {
    case TF_TUCKER_SVD_ROW_GRAM: return I * I + I * r + I;
    case TF_TUCKER_SVD_COL_GRAM: return C * C + C * r + I * r + C;
    default: return 3 * I * k + 2 * C * k + 3 * k * k + 2 * k;
    }
}

uint64_t tf_tucker_work_bytes(const tf_tensor *X, const uint64_t *ranks, tf_tucker_svd svd, uint64_t *y_bytes)
{
    const uint32_t N = X->order;
    uint64_t ymax = 0, svdmax = 0, core = 1, factors = 0;
    for (uint32_t n = 0; n < N; ++n) {
        const uint64_t I = X->dims[n], C = cols_of(N, ranks, n);
        if (I * C > ymax) ymax = I * C;
        const uint64_t s = svd_doubles(I, C, ranks[n], tf_tucker_svd_choose(I, C, svd));
        if (s > svdmax) svdmax = s;
        core *= ranks[n];
        factors += I * ranks[n];
    }
    if (y_bytes) *y_bytes = ymax * sizeof(double);
    /* Y, the SVD's work, the core and its unfolding, the factors */
    return (ymax + svdmax + 2 * core + factors) * sizeof(double);
}

typedef struct cpu_tucker {
    uint32_t N;
    uint64_t dims[TF_MAX_ORDER], ranks[TF_MAX_ORDER];
    tf_tucker_svd svd;
    tf_cpu_ttmc *ttmc;
    tf_matrix U[TF_MAX_ORDER];
    double *Y;      /* the last TTMc                   */
    uint32_t ymode; /* its mode (N: none yet)           */
    double *core;   /* prod ranks, mode 1 fastest        */
    const tf_dist *dist; /* MPI ranks (X this rank's part), else NULL */
} cpu_tucker;

/* Row-major C (M x Nn) = op(A) op(B), K inner; lda.. the row-major leading
 * dimensions: C^T = op(B)^T op(A)^T in BLAS's column-major terms. */
static void gemm_rm(char ta, char tb, uint64_t M, uint64_t Nn, uint64_t K, const double *A, uint64_t lda,
                    const double *B, uint64_t ldb, double *C, uint64_t ldc)
{
    const int m = (int)Nn, n = (int)M, k = (int)K, la = (int)lda, lb = (int)ldb, lc = (int)ldc;
    const double one = 1.0, zero = 0.0;
    const char opb[2] = {tb, 0}, opa[2] = {ta, 0};
    dgemm_(opb, opa, &m, &n, &k, &one, B, &lb, A, &la, &zero, C, &lc, 1, 1);
}

static void cpu_destroy(void *ctx)
{
    cpu_tucker *c = ctx;
    if (!c) return;
    tf_cpu_ttmc_free(c->ttmc);
    for (uint32_t m = 0; m < c->N; ++m) tf_matrix_free(&c->U[m]);
    tf_free(c->Y);
    tf_free(c->core);
    tf_free(c);
}

static tf_status cpu_init(void *ctx, const tf_matrix *factors, uint32_t skip)
{
    cpu_tucker *c = ctx;
    for (uint32_t m = 0; m < c->N; ++m) {
        if (m == skip) memset(c->U[m].data, 0, c->dims[m] * c->ranks[m] * sizeof(double));
        else memcpy(c->U[m].data, factors[m].data, c->dims[m] * c->ranks[m] * sizeof(double));
    }
    return TF_OK;
}

/* x[0..n) summed over the ranks into rank 0's x (every rank's, without a
 * reduction in the table), in pieces of at most the round size. */
static tf_status sum_ranks(const tf_dist *d, double *x, uint64_t n)
{
    const uint64_t round = (d->round_bytes ? d->round_bytes : (uint64_t)256 << 20) / sizeof(double);
    const uint64_t piece = round < ((uint64_t)1 << 30) ? (round ? round : 1) : (uint64_t)1 << 30;
    for (uint64_t lo = 0; lo < n; lo += piece) {
        const uint64_t k = n - lo < piece ? n - lo : piece;
        TF_TRY(d->reduce_sum ? d->reduce_sum(x + lo, k, 0) : d->allreduce_sum(x + lo, k));
    }
    return TF_OK;
}

static tf_status cpu_ttmc(void *ctx, uint32_t mode)
{
    cpu_tucker *c = ctx;
    c->ymode = c->N;
    TF_TRY(tf_dist_shared(c->dist, tf_cpu_ttmc_run(c->ttmc, mode, c->U, c->Y)));
    if (c->dist) TF_TRY(sum_ranks(c->dist, c->Y, c->dims[mode] * cols_of(c->N, c->ranks, mode)));
    c->ymode = mode;
    return TF_OK;
}

/* ROW_GRAM: the Gram Y Y^T (I x I) and its r leading eigenvectors. */
static tf_status lead_rows(const double *Y, uint64_t I, uint64_t C, uint64_t r, double *U)
{
    double *G = NULL, *vals = NULL;
    tf_status s = TF_ALLOC(G, I * I, "Tucker Gram Y Y^T");
    if (s == TF_OK) s = TF_ALLOC(vals, r, "Tucker eigenvalues");
    if (s == TF_OK) {
        /* Y row-major = BLAS's C x I A; A^T A is Y Y^T (upper triangle, column-major) */
        const int n = (int)I, k = (int)C;
        const double one = 1.0, zero = 0.0;
        dsyrk_("U", "T", &n, &k, &one, Y, &k, &zero, G, &n, 1, 1);
        s = tf_eig_leading(G, I, r, U, vals, "tucker");
    }
    tf_free(G);
    tf_free(vals);
    return s;
}

/* COL_GRAM: the Gram Y^T Y (C x C), its r leading eigenvectors V, then
 * U = Y V orthonormalised (column j keeps the direction of Y v_j). */
static tf_status lead_cols(const double *Y, uint64_t I, uint64_t C, uint64_t r, double *U)
{
    double *H = NULL, *V = NULL, *vals = NULL;
    tf_status s = TF_ALLOC(H, C * C, "Tucker Gram Y^T Y");
    if (s == TF_OK) s = TF_ALLOC(V, C * r, "Tucker right vectors");
    if (s == TF_OK) s = TF_ALLOC(vals, r, "Tucker eigenvalues");
    if (s == TF_OK) {
        const int n = (int)C, k = (int)I;
        const double one = 1.0, zero = 0.0;
        dsyrk_("U", "N", &n, &k, &one, Y, &n, &zero, H, &n, 1, 1); /* A A^T, A = BLAS's C x I */
        s = tf_eig_leading(H, C, r, V, vals, "tucker");
    }
    if (s == TF_OK) {
        gemm_rm('N', 'N', I, r, C, Y, C, V, r, U, r);
        s = tf_eig_orthonormal(U, I, (int)r, "tucker");
    }
    tf_free(H);
    tf_free(V);
    tf_free(vals);
    return s;
}

/* SUBSPACE: a randomised range finder, then subspace iteration on Y Y^T
 * with Rayleigh-Ritz on the k x k projection (dsyevr). */
static tf_status lead_subspace(const double *Y, uint64_t I, uint64_t C, uint64_t r, double *U)
{
    const uint64_t mn = I < C ? I : C;
    const uint64_t k = r + OVERSAMPLE < mn ? r + OVERSAMPLE : mn;
    double *Q = NULL, *Z = NULL, *W = NULL, *H = NULL, *S = NULL, *theta = NULL, *Om = NULL, *QS = NULL;
    tf_status s = TF_ALLOC(Q, I * k, "Tucker subspace basis");
    if (s == TF_OK) s = TF_ALLOC(Z, I * k, "Tucker subspace image");
    if (s == TF_OK) s = TF_ALLOC(QS, I * k, "Tucker Ritz vectors");
    if (s == TF_OK) s = TF_ALLOC(W, C * k, "Tucker Y^T Q");
    if (s == TF_OK) s = TF_ALLOC(Om, C * k, "Tucker random start");
    if (s == TF_OK) s = TF_ALLOC(H, k * k, "Tucker projected Gram");
    if (s == TF_OK) s = TF_ALLOC(S, k * k, "Tucker Ritz rotation");
    if (s == TF_OK) s = TF_ALLOC(theta, k, "Tucker Ritz values");
    if (s != TF_OK) goto done;
    {
        tf_rng rng;
        tf_rng_seed(&rng, TF_DEFAULT_SEED);
        for (uint64_t e = 0; e < C * k; ++e) Om[e] = tf_rng_uniform(&rng) - 0.5;
    }
    gemm_rm('N', 'N', I, k, C, Y, C, Om, k, Q, k); /* Q = orth(Y Omega) */
    if ((s = tf_eig_orthonormal(Q, I, (int)k, "tucker")) != TF_OK) goto done;
    for (uint32_t it = 1;; ++it) {
        gemm_rm('T', 'N', C, k, I, Y, C, Q, k, W, k); /* W = Y^T Q (C x k) */
        gemm_rm('N', 'N', I, k, C, Y, C, W, k, Z, k); /* Z = Y W = (Y Y^T) Q */
        gemm_rm('T', 'N', k, k, C, W, k, W, k, H, k); /* H = W^T W = Q^T (Y Y^T) Q */
        if ((s = tf_eig_leading(H, k, k, S, theta, "tucker")) != TF_OK) goto done;
        gemm_rm('N', 'N', I, k, k, Q, k, S, k, QS, k); /* the Ritz vectors Q S        */
        gemm_rm('N', 'N', I, k, k, Z, k, S, k, Q, k);  /* their images Z S (Q is free) */
        /* residuals ||(Y Y^T) u_j - theta_j u_j|| of the r leading pairs, relative to theta_1 */
        const double t1 = theta[0] > 0.0 ? theta[0] : 1.0;
        double worst = 0.0;
        for (uint64_t j = 0; j < r; ++j) {
            double ss = 0.0;
            for (uint64_t i = 0; i < I; ++i) {
                const double d = Q[i * k + j] - theta[j] * QS[i * k + j];
                ss += d * d;
            }
            if (sqrt(ss) / t1 > worst) worst = sqrt(ss) / t1;
        }
        if (worst <= SUBSPACE_TOL || it >= SUBSPACE_ITERS || k == mn) break;
        memcpy(Q, Z, I * k * sizeof *Q); /* the next basis: orth((Y Y^T) Q) */
        if ((s = tf_eig_orthonormal(Q, I, (int)k, "tucker")) != TF_OK) goto done;
    }
    for (uint64_t i = 0; i < I; ++i) memcpy(U + i * r, QS + i * k, r * sizeof *U);
done:
    tf_free(Q);
    tf_free(Z);
    tf_free(QS);
    tf_free(W);
    tf_free(Om);
    tf_free(H);
    tf_free(S);
    tf_free(theta);
    return s;
}

static tf_status cpu_leading(void *ctx, uint32_t mode, tf_tucker_svd *method)
{
    cpu_tucker *c = ctx;
    if (c->ymode != mode) return tf_fail(TF_ERR_ARG, "tucker: the leading vectors of mode %u before its TTMc", mode + 1);
    const uint64_t I = c->dims[mode], C = cols_of(c->N, c->ranks, mode), r = c->ranks[mode];
    const tf_tucker_svd m = tf_tucker_svd_choose(I, C, c->svd);
    *method = m;
    double *U = c->U[mode].data;
    if (c->dist && c->dist->rank != 0) { /* rank 0 solves */
        TF_TRY(tf_dist_shared(c->dist, TF_OK));
        return c->dist->bcast_from(U, I * r * sizeof *U, 0);
    }
    tf_status s = m == TF_TUCKER_SVD_ROW_GRAM   ? lead_rows(c->Y, I, C, r, U)
                  : m == TF_TUCKER_SVD_COL_GRAM ? lead_cols(c->Y, I, C, r, U)
                                                : lead_subspace(c->Y, I, C, r, U);
    if (s == TF_OK) tf_eig_fix_signs(U, I, r);
    if (!c->dist) return s;
    TF_TRY(tf_dist_shared(c->dist, s));
    return c->dist->bcast_from(U, I * r * sizeof *U, 0); /* rank 0's on every rank */
}

/* The core from Y_(mode) and the new U_mode; *norm2 = ||G||^2. */
static tf_status core_of(cpu_tucker *c, uint32_t mode, double *norm2)
{
    const uint32_t N = c->N;
    const uint64_t I = c->dims[mode], C = cols_of(N, c->ranks, mode), r = c->ranks[mode];
    double *Gn = NULL;
    TF_TRY(TF_ALLOC(Gn, r * C, "Tucker core unfolding"));
    gemm_rm('T', 'N', r, C, I, c->U[mode].data, r, c->Y, C, Gn, C); /* G_(n) = U_n^T Y_(n) */
    double ss = 0.0;
    for (uint64_t e = 0; e < r * C; ++e) ss += Gn[e] * Gn[e];
    *norm2 = ss;
    /* G_(n)(r_n, c) -> core(r_1, .., r_N), mode 1 fastest */
    uint64_t stride[TF_MAX_ORDER], st = 1;
    for (uint32_t k = 0; k < N; ++k) stride[k] = st, st *= c->ranks[k];
    for (uint64_t x = 0; x < C; ++x) {
        uint64_t rest = x, at = 0;
        for (uint32_t k = 0; k < N; ++k) {
            if (k == mode) continue;
            at += (rest % c->ranks[k]) * stride[k];
            rest /= c->ranks[k];
        }
        for (uint64_t a = 0; a < r; ++a) c->core[at + a * stride[mode]] = Gn[a * C + x];
    }
    tf_free(Gn);
    return TF_OK;
}

static tf_status cpu_core(void *ctx, uint32_t mode, double *norm2)
{
    cpu_tucker *c = ctx;
    if (c->ymode != mode) return tf_fail(TF_ERR_ARG, "tucker: the core of mode %u before its TTMc", mode + 1);
    if (!c->dist) return core_of(c, mode, norm2);
    /* rank 0's core and norm on every rank: the same fit, the same stop */
    TF_TRY(tf_dist_shared(c->dist, c->dist->rank == 0 ? core_of(c, mode, norm2) : TF_OK));
    uint64_t core = 1;
    for (uint32_t k = 0; k < c->N; ++k) core *= c->ranks[k];
    TF_TRY(c->dist->bcast_from(c->core, core * sizeof *c->core, 0));
    return c->dist->bcast_from(norm2, sizeof *norm2, 0);
}

static tf_status cpu_result(void *ctx, tf_ttensor *out)
{
    cpu_tucker *c = ctx;
    uint64_t core = 1;
    for (uint32_t m = 0; m < c->N; ++m) {
        memcpy(out->factors[m].data, c->U[m].data, c->dims[m] * c->ranks[m] * sizeof(double));
        core *= c->ranks[m];
    }
    memcpy(out->core, c->core, core * sizeof(double));
    return TF_OK;
}

static const tf_tucker_backend_ops cpu_ops = {cpu_init, cpu_ttmc, cpu_leading, cpu_core, cpu_result, cpu_destroy};

static tf_status create(const tf_tensor *X, const tf_tucker_opts *o, const tf_dist *d, tf_tucker_backend *out);

tf_status tf_cpu_tucker_backend_create(const tf_tensor *X, const tf_tucker_opts *o, tf_tucker_backend *out)
{
    return create(X, o, NULL, out);
}

tf_status tf_cpu_tucker_backend_create_dist(const tf_tensor *part, const tf_tucker_opts *o, const tf_dist *d,
                                            tf_tucker_backend *out)
{
    if (!d) return tf_fail(TF_ERR_ARG, "tucker: the ranks' backend without ranks");
    return create(part, o, d, out);
}

static tf_status create(const tf_tensor *X, const tf_tucker_opts *o, const tf_dist *d, tf_tucker_backend *out)
{
    memset(out, 0, sizeof *out);
    cpu_tucker *c = NULL;
    TF_TRY(tf_dist_shared(d, TF_CALLOC(c, 1, "Tucker backend")));
    const uint32_t N = X->order;
    c->N = N;
    c->svd = o->svd;
    c->ymode = N;
    uint64_t ymax = 0, core = 1;
    for (uint32_t m = 0; m < N; ++m) {
        c->dims[m] = X->dims[m];
        c->ranks[m] = o->ranks[m];
        const uint64_t yc = X->dims[m] * cols_of(N, o->ranks, m);
        if (yc > ymax) ymax = yc;
        core *= o->ranks[m];
    }
    tf_status s = tf_cpu_ttmc_create(X, NULL, o->threads, &c->ttmc);
    for (uint32_t m = 0; m < N && s == TF_OK; ++m) s = tf_matrix_alloc(&c->U[m], X->dims[m], o->ranks[m]);
    if (s == TF_OK) s = TF_ALLOC(c->Y, ymax ? ymax : 1, "Tucker Y_(n)");
    if (s == TF_OK) s = TF_CALLOC(c->core, core, "Tucker core");
    s = tf_dist_shared(d, s);
    if (s != TF_OK) {
        cpu_destroy(c);
        return s;
    }
    c->dist = d;
    out->ops = &cpu_ops;
    out->ctx = c;
    if (d) snprintf(out->desc, sizeof out->desc, "cpu csf (%u trees), %d MPI ranks (Y_(n) summed on rank 0)", N,
                      d->size);
    else snprintf(out->desc, sizeof out->desc, "cpu csf (%u trees)", N);
    return TF_OK;
}
