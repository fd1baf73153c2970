/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_nvecs: the leading left singular vectors of a sparse tensor's mode-n
 * unfolding X_(n), never formed densely.
 *
 * The columns of X_(n) are the distinct index tuples of the other modes:
 * the non-zeros sorted by those modes (SpTTM's fibres, fmt/spttm_fibres.h)
 * give them as a CSC matrix, and a counting sort by the mode-n index gives
 * the same entries as CSR (each row's entries in column order). Then
 *   - the Gram G = X_(n) X_(n)^T is formed row by row (row i: every entry
 *     (i, f) times column f), sum over columns of c_f^2 multiply-adds, or
 *   - G V = X_(n) (X_(n)^T V) is applied in two sparse passes: W = X^T V
 *     column by column, then Y = X W row by row (in blocks of columns when
 *     W would be large).
 * DENSE: the formed Gram's top r eigenpairs by LAPACK dsyevr. SUBSPACE: a
 * block subspace iteration with r + 10 columns from a fixed random start;
 * each step applies a Chebyshev filter p(G) of degree <= 8 to the Ritz
 * vectors (p within [-1, 1] on [0, smallest Ritz value], growing fast above;
 * the degree kept where the growth between the wanted values stays below
 * 1e8; the leading pairs already converged locked, and deflated from every
 * application of G), divides each column by p(theta) (so the block stays
 * close to U and well conditioned), orthonormalises it by Cholesky QR twice
 * (Householder QR if the Cholesky factorisation fails), applies G once more
 * for Rayleigh-Ritz on the small projected matrix (dsyevd) and checks the r
 * leading residuals. Against plain subspace iteration (one application of G
 * per step) it needs 2-3x fewer applications.
 * Every reduction runs in an order fixed by the sizes only, so the result
 * does not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "cpu/blas_threads.h"
#include "cpu/dense.h"
#include "cpu/eig.h"
#include "algo/nvecs.h"
#include "fmt/spttm_fibres.h"

void dtrtri_(const char *uplo, const char *diag, const int *n, double *a, const int *lda, int *info, size_t luplo,
             size_t ldiag);

#define OVERSAMPLE 10             /* extra columns of the subspace iteration       */
#define CHEB_DEGREE 8             /* most applications of G per filter step         */
#define DENSE_AUTO_MAX 1024u      /* AUTO: dsyevr on the formed Gram up to here     */
#define GRAM_AUTO_MAX 4096u       /* AUTO: subspace iteration on the formed Gram    */
#define DENSE_MAX 16384u          /* DENSE at most (2 GiB of Gram)                  */
#define ROWS_BLOCK 1024u          /* rows per BLAS call and per reduction slab      */
#define TF_NVECS_FUSED_K 256      /* the fused product's largest block width         */

/* W = X^T V in blocks of at most 128 MiB; the fused product's partials at
 * most 128 MiB (tf_nvecs_set_blocks changes both, for tests). */
static uint64_t w_block_doubles = (uint64_t)1 << 24;
static uint64_t fused_doubles = (uint64_t)1 << 24;

void tf_nvecs_set_blocks(uint64_t fused, uint64_t w_block)
{
    fused_doubles = fused;
    w_block_doubles = w_block ? w_block : (uint64_t)1 << 24;
}

void tf_nvecs_opts_default(tf_nvecs_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = TF_NVECS_AUTO;
    o->tol = 1e-12;
    o->max_iters = 3000;
    o->seed = TF_DEFAULT_SEED;
}

/* ------------------------------------------------------------ the operator */

typedef struct gram_op {
    uint64_t I, J, nnz;
    int threads;
    uint64_t *fptr;   /* CSC: column f holds entries fptr[f]..fptr[f+1]-1   */
    uint32_t *crow;   /*      their rows                                     */
    double *cval;     /*      and values                                     */
    uint64_t *rptr;   /* CSR: row i holds entries rptr[i]..rptr[i+1]-1       */
    uint64_t *rcol;   /*      their columns, ascending                       */
    double *rval;
    double *diag;     /* the columns of one entry: their x^2 per row         */
    double *G;        /* the formed Gram (I x I) or NULL                     */
    double *W;        /* a block of X^T V, or the chunks' partial G V        */
    uint64_t *cursor; /* per row: the next CSR entry of the block pass        */
} gram_op;

static void op_free(gram_op *op)
{
    tf_free(op->fptr);
    tf_free(op->crow);
    tf_free(op->cval);
    tf_free(op->rptr);
    tf_free(op->rcol);
    tf_free(op->rval);
    tf_free(op->G);
    tf_free(op->diag);
    tf_free(op->W);
    tf_free(op->cursor);
    memset(op, 0, sizeof *op);
}

/* The CSC and CSR forms of X_(mode). */
static tf_status op_build(const tf_tensor *X, uint32_t mode, int threads, gram_op *op)
{
    memset(op, 0, sizeof *op);
    op->I = X->dims[mode];
    op->nnz = X->nnz;
    op->threads = threads;
    tf_fibres F;
    TF_TRY(tf_fibres_build(X, mode, &F));
    op->J = F.nfibers;
    op->fptr = F.fptr; /* taken over */
    F.fptr = NULL;
    const uint64_t n = X->nnz ? X->nnz : 1;
    tf_status s = TF_ALLOC(op->crow, n, "nvecs column rows");
    if (s == TF_OK) s = TF_ALLOC(op->cval, n, "nvecs column values");
    if (s == TF_OK) s = TF_CALLOC(op->rptr, op->I + 1, "nvecs row offsets");
    if (s == TF_OK) s = TF_ALLOC(op->rcol, n, "nvecs row columns");
    if (s == TF_OK) s = TF_ALLOC(op->rval, n, "nvecs row values");
    if (s != TF_OK) {
        tf_fibres_free(&F);
        op_free(op);
        return s;
    }
    const uint32_t *ind = X->ind[mode];
    const uint64_t *perm = F.perm;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (int64_t k = 0; k < (int64_t)X->nnz; ++k) {
        op->crow[k] = ind[perm[k]];
        op->cval[k] = X->vals[perm[k]];
    }
    tf_fibres_free(&F);
    /* a column of one entry (i, x) adds x^2 to G(i, i) alone: those go to
     * the diagonal, the others stay (compacted in place, in order) */
    if ((s = TF_CALLOC(op->diag, op->I ? op->I : 1, "nvecs Gram diagonal")) != TF_OK) {
        op_free(op);
        return s;
    }
    uint64_t J = 0, kept = 0;
    for (uint64_t f = 0; f < op->J; ++f) {
        const uint64_t b = op->fptr[f], e = op->fptr[f + 1];
        if (e - b == 1) {
            op->diag[op->crow[b]] += op->cval[b] * op->cval[b];
            continue;
        }
        op->fptr[J++] = kept;
        for (uint64_t k = b; k < e; ++k, ++kept) {
            op->crow[kept] = op->crow[k];
            op->cval[kept] = op->cval[k];
        }
    }
    op->fptr[J] = kept;
    op->J = J;
    op->nnz = kept;
    for (uint64_t k = 0; k < op->nnz; ++k) ++op->rptr[op->crow[k] + 1];
    for (uint64_t i = 0; i < op->I; ++i) op->rptr[i + 1] += op->rptr[i];
    uint64_t *next = op->cursor = NULL;
    s = TF_ALLOC(next, op->I ? op->I : 1, "nvecs row cursors");
    if (s != TF_OK) {
        op_free(op);
        return s;
    }
    memcpy(next, op->rptr, op->I * sizeof *next);
    for (uint64_t f = 0; f < op->J; ++f)
        for (uint64_t k = op->fptr[f]; k < op->fptr[f + 1]; ++k) {
            const uint64_t e = next[op->crow[k]]++;
            op->rcol[e] = f;
            op->rval[e] = op->cval[k];
        }
    op->cursor = next;
    return TF_OK;
}

/* Multiply-adds of forming the Gram: sum over columns of their length squared. */
static double gram_cost(const gram_op *op)
{
    double c = 0.0;
    for (uint64_t f = 0; f < op->J; ++f) {
        const double n = (double)(op->fptr[f + 1] - op->fptr[f]);
        c += n * n;
    }
    return c;
}

/* op->G = X_(n) X_(n)^T, both triangles (bitwise symmetric: each entry sums
 * the same products in column order). */
static tf_status op_form_gram(gram_op *op)
{
    const uint64_t I = op->I;
    TF_TRY(TF_ALLOC(op->G, I ? I * I : 1, "nvecs Gram matrix"));
#pragma omp parallel for num_threads(op->threads) schedule(dynamic, 4)
    for (int64_t i = 0; i < (int64_t)I; ++i) {
        double *g = op->G + (uint64_t)i * I;
        memset(g, 0, I * sizeof *g);
        for (uint64_t e = op->rptr[i]; e < op->rptr[i + 1]; ++e) {
            const uint64_t f = op->rcol[e];
            const double x = op->rval[e];
            for (uint64_t k = op->fptr[f]; k < op->fptr[f + 1]; ++k) g[op->crow[k]] += x * op->cval[k];
        }
        g[i] += op->diag[i];
    }
    return TF_OK;
}

/* C (I x m) = A (I x k) M (k x m), all row-major, in row blocks (one BLAS
 * call each, on one thread). */
static void rows_times(const double *A, uint64_t I, int k, const double *M, int m, double *C, int threads)
{
    const uint64_t blocks = (I + ROWS_BLOCK - 1) / ROWS_BLOCK;
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < (int64_t)blocks; ++b) {
        const uint64_t i = (uint64_t)b * ROWS_BLOCK;
        const int rows = (int)(I - i < ROWS_BLOCK ? I - i : ROWS_BLOCK);
        const double one = 1.0, zero = 0.0;
        dgemm_("N", "N", &m, &rows, &k, &one, M, &m, A + i * k, &k, &zero, C + i * m, &m, 1, 1);
    }
}

/* H (k x k, row-major) = A^T B for A, B row-major I x k: per block of rows,
 * then the blocks' partials added in order. */
static tf_status cross(const double *A, const double *B, uint64_t I, int k, int threads, double *H)
{
    const uint64_t blocks = (I + ROWS_BLOCK - 1) / ROWS_BLOCK;
    const uint64_t kk = (uint64_t)k * k;
    double *part = NULL;
    TF_TRY(TF_ALLOC(part, (blocks ? blocks : 1) * kk, "nvecs partial products"));
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < (int64_t)blocks; ++b) {
        const uint64_t i = (uint64_t)b * ROWS_BLOCK;
        const int rows = (int)(I - i < ROWS_BLOCK ? I - i : ROWS_BLOCK);
        const double one = 1.0, zero = 0.0;
        /* column-major: B_blk^T (k x rows) times A_blk (rows x k) = H^T, i.e. H row-major */
        dgemm_("N", "T", &k, &k, &rows, &one, B + i * k, &k, A + i * k, &k, &zero, part + (uint64_t)b * kk, &k,
               1, 1);
    }
    memset(H, 0, kk * sizeof *H);
    for (uint64_t b = 0; b < blocks; ++b)
        for (uint64_t e = 0; e < kk; ++e) H[e] += part[b * kk + e];
    tf_free(part);
    return TF_OK;
}

/* Chunks of columns of the fused product (op_apply_fused): a number fixed by
 * the sizes (never the thread count) -- at most 16, each with 32768 entries
 * or more and at least 4 per row of its partial (clearing and adding the
 * partials costs less than the product) -- 0 when their partials (I x k
 * each) would take more than 128 MiB. */
static uint64_t fused_chunks(const gram_op *op, int k)
{
    uint64_t c = op->nnz / 32768;
    if (c > 16) c = 16;
    if (op->I && c > op->nnz / (4 * op->I)) c = op->nnz / (4 * op->I);
    if (c < 1) c = 1;
    if (c > op->J) c = op->J ? op->J : 1;
    return op->I * (uint64_t)k * c <= fused_doubles ? c : 0;
}

/* Y = G V column by column: for column f, w = X(:, f)^T V, then Y(i, :) +=
 * X(i, f) w for its entries; each chunk of columns into its own partial
 * (cache-resident when I k is small), the partials added in order. */
static tf_status op_apply_fused(gram_op *op, const double *V, int k, double *Y, uint64_t chunks)
{
    const uint64_t Ik = op->I * (uint64_t)k;
    if (!op->W) TF_TRY(TF_ALLOC(op->W, chunks * Ik, "nvecs partial products"));
    double *P = op->W;
#pragma omp parallel for num_threads(op->threads) schedule(dynamic, 1)
    for (int64_t c = 0; c < (int64_t)chunks; ++c) {
        double *y = P + (uint64_t)c * Ik;
        memset(y, 0, Ik * sizeof *y);
        const uint64_t f0 = op->J * (uint64_t)c / chunks, f1 = op->J * ((uint64_t)c + 1) / chunks;
        double w[TF_NVECS_FUSED_K];
        for (uint64_t f = f0; f < f1; ++f) {
            const uint64_t b = op->fptr[f], e = op->fptr[f + 1];
            for (int j = 0; j < k; ++j) w[j] = 0.0;
            for (uint64_t q = b; q < e; ++q) {
                const double x = op->cval[q];
                const double *v = V + (uint64_t)op->crow[q] * k;
                for (int j = 0; j < k; ++j) w[j] += x * v[j];
            }
            for (uint64_t q = b; q < e; ++q) {
                const double x = op->cval[q];
                double *t = y + (uint64_t)op->crow[q] * k;
                for (int j = 0; j < k; ++j) t[j] += x * w[j];
            }
        }
    }
    memcpy(Y, P, Ik * sizeof *Y);
    for (uint64_t c = 1; c < chunks; ++c) {
        const double *y = P + c * Ik;
#pragma omp parallel for num_threads(op->threads) schedule(static) if (Ik > 65536)
        for (int64_t e = 0; e < (int64_t)Ik; ++e) Y[e] += y[e];
    }
    return TF_OK;
}

static tf_status op_apply_multi(gram_op *op, const double *V, int k, double *Y);

/* Y (I x k) = G V (I x k). */
static tf_status op_apply(gram_op *op, const double *V, int k, double *Y)
{
    const uint64_t I = op->I;
    if (op->G) {
        rows_times(op->G, I, (int)I, V, k, Y, op->threads); /* G symmetric: row blocks of G times V */
        return TF_OK;
    }
    TF_TRY(op_apply_multi(op, V, k, Y));
#pragma omp parallel for num_threads(op->threads) schedule(static) if (I > 4096)
    for (int64_t i = 0; i < (int64_t)I; ++i) {
        const double d = op->diag[i];
        for (int c = 0; c < k; ++c) Y[(uint64_t)i * k + c] += d * V[(uint64_t)i * k + c];
    }
    return TF_OK;
}

/* Y = X_(n) X_(n)^T V over the columns of two or more entries. */
static tf_status op_apply_multi(gram_op *op, const double *V, int k, double *Y)
{
    const uint64_t I = op->I;
    if (!op->J) {
        memset(Y, 0, I * (uint64_t)k * sizeof *Y);
        return TF_OK;
    }
    const uint64_t chunks = k <= TF_NVECS_FUSED_K ? fused_chunks(op, k) : 0;
    if (chunks) return op_apply_fused(op, V, k, Y, chunks);
    uint64_t block = w_block_doubles / (uint64_t)k;
    if (block > op->J) block = op->J;
    if (block < 1) block = 1;
    if (!op->W) TF_TRY(TF_ALLOC(op->W, block * (uint64_t)k, "nvecs X^T V"));
    double *W = op->W;
    memset(Y, 0, I * (uint64_t)k * sizeof *Y);
    memcpy(op->cursor, op->rptr, I * sizeof *op->cursor);
    for (uint64_t f0 = 0; f0 < op->J; f0 += block) {
        const uint64_t f1 = op->J - f0 < block ? op->J : f0 + block;
#pragma omp parallel for num_threads(op->threads) schedule(dynamic, 256)
        for (int64_t f = (int64_t)f0; f < (int64_t)f1; ++f) {
            double *w = W + ((uint64_t)f - f0) * k;
            for (int c = 0; c < k; ++c) w[c] = 0.0;
            for (uint64_t e = op->fptr[f]; e < op->fptr[f + 1]; ++e) {
                const double x = op->cval[e];
                const double *v = V + (uint64_t)op->crow[e] * k;
                for (int c = 0; c < k; ++c) w[c] += x * v[c];
            }
        }
#pragma omp parallel for num_threads(op->threads) schedule(dynamic, 16)
        for (int64_t i = 0; i < (int64_t)I; ++i) {
            double *y = Y + (uint64_t)i * k;
            uint64_t e = op->cursor[i];
            const uint64_t end = op->rptr[i + 1];
            for (; e < end && op->rcol[e] < f1; ++e) {
                const double x = op->rval[e];
                const double *w = W + (op->rcol[e] - f0) * k;
                for (int c = 0; c < k; ++c) y[c] += x * w[c];
            }
            op->cursor[i] = e;
        }
    }
    return TF_OK;
}

/* ------------------------------------------------------------ dense steps */

/* Q = W R^-1 with W^T W = R^T R (Cholesky), into Q (I x k); *ok = 0, and Q
 * untouched, when the Cholesky factorisation fails or R^-1 is not finite. */
static tf_status chol_qr(const double *W, uint64_t I, int k, int threads, double *Q, int *ok)
{
    double *C = NULL, *M = NULL;
    const uint64_t kk = (uint64_t)k * k;
    tf_status s = TF_ALLOC(C, kk, "nvecs Cholesky QR");
    if (s == TF_OK) s = TF_ALLOC(M, kk, "nvecs Cholesky QR");
    if (s == TF_OK) s = cross(W, W, I, k, threads, C);
    *ok = 0;
    if (s == TF_OK) {
        int info = 0;
        dpotrf_("U", &k, C, &k, &info, 1); /* C symmetric: row- or column-major alike */
        if (info == 0) dtrtri_("U", "N", &k, C, &k, &info, 1, 1);
        if (info == 0) {
            /* R^-1 (upper, column-major: element (a, b) at a + b k) as row-major M */
            int finite = 1;
            for (int a = 0; a < k; ++a)
                for (int b = 0; b < k; ++b) {
                    M[a * k + b] = b >= a ? C[a + b * k] : 0.0;
                    finite &= isfinite(M[a * k + b]) != 0;
                }
            if (finite) { /* else Q is left alone, as on a failed factorisation */
                rows_times(W, I, k, M, k, Q, threads);
                *ok = 1;
            }
        }
    }
    tf_free(C);
    tf_free(M);
    return s;
}

/* W (I x k) -> Q orthonormal with the same span: Cholesky QR twice, else
 * Householder. W is used as scratch. */
static tf_status orthonormalise(double *W, uint64_t I, int k, int threads, double *Q)
{
    int ok = 0;
    TF_TRY(chol_qr(W, I, k, threads, Q, &ok));
    if (ok) TF_TRY(chol_qr(Q, I, k, threads, W, &ok));
    if (ok) {
        memcpy(Q, W, I * (uint64_t)k * sizeof *Q);
        return TF_OK;
    }
    memcpy(Q, W, I * (uint64_t)k * sizeof *Q); /* a failed pass leaves W the input */
    return tf_eig_orthonormal(Q, I, k, "nvecs");
}

/* Y -= L (L^T Y) for L the first nl columns of the orthonormal L (I x k);
 * M (k x k) is scratch. */
static tf_status deflate(double *Y, const double *L, uint64_t I, int k, int nl, int threads, double *M)
{
    TF_TRY(cross(L, Y, I, k, threads, M)); /* M = L^T Y, rows nl.. unused */
    const uint64_t blocks = (I + ROWS_BLOCK - 1) / ROWS_BLOCK;
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1)
    for (int64_t b = 0; b < (int64_t)blocks; ++b) {
        const uint64_t end = ((uint64_t)b + 1) * ROWS_BLOCK < I ? ((uint64_t)b + 1) * ROWS_BLOCK : I;
        for (uint64_t i = (uint64_t)b * ROWS_BLOCK; i < end; ++i)
            for (int a = 0; a < nl; ++a) {
                const double l = L[i * k + a];
                for (int c = 0; c < k; ++c) Y[i * k + c] -= l * M[a * k + c];
            }
    }
    return TF_OK;
}

/* Block subspace iteration for the r leading eigenpairs of the operator. */
static tf_status subspace(gram_op *op, uint64_t r, const tf_nvecs_opts *o, double *vecs, double *vals,
                          tf_nvecs_info *info)
{
    const uint64_t I = op->I;
    const int k = (int)(r + OVERSAMPLE < I ? r + OVERSAMPLE : I);
    const uint64_t Ik = I * (uint64_t)k, kk = (uint64_t)k * k;
    const int threads = op->threads;
    double *Q = NULL, *Z = NULL, *U = NULL, *AU = NULL, *Y2 = NULL, *H = NULL, *theta = NULL, *work = NULL,
           *res = NULL, *sc = NULL;
    int *iwork = NULL;
    tf_status s = TF_ALLOC(Q, Ik, "nvecs basis");
    if (s == TF_OK) s = TF_ALLOC(Y2, Ik, "nvecs filter");
    if (s == TF_OK) s = TF_ALLOC(sc, 2 * (uint64_t)k, "nvecs filter scales");
    if (s == TF_OK) s = TF_ALLOC(Z, Ik, "nvecs basis image");
    if (s == TF_OK) s = TF_ALLOC(U, Ik, "nvecs Ritz vectors");
    if (s == TF_OK) s = TF_ALLOC(AU, Ik, "nvecs Ritz images");
    if (s == TF_OK) s = TF_ALLOC(H, kk, "nvecs projected Gram");
    if (s == TF_OK) s = TF_ALLOC(theta, (uint64_t)k, "nvecs Ritz values");
    if (s == TF_OK) s = TF_ALLOC(res, (uint64_t)k * 2, "nvecs residuals");
    int lwork = 1 + 6 * k + 2 * k * k, liwork = 3 + 5 * k;
    if (s == TF_OK) s = TF_ALLOC(work, (uint64_t)lwork, "dsyevd workspace");
    if (s == TF_OK) s = TF_ALLOC(iwork, (uint64_t)liwork, "dsyevd workspace");
    if (s != TF_OK) goto done;
    {
        tf_rng rng;
        tf_rng_seed(&rng, o->seed);
        for (uint64_t e = 0; e < Ik; ++e) Z[e] = tf_rng_uniform(&rng) - 0.5;
    }
    if ((s = orthonormalise(Z, I, k, threads, Q)) != TF_OK) goto done;
    double worst = INFINITY;
    uint32_t it = 0;
    for (;;) {
        ++it;
        if ((s = op_apply(op, Q, k, Z)) != TF_OK) goto done;
        /* Rayleigh-Ritz: H = Q^T G Q = S diag(theta) S^T */
        if ((s = cross(Q, Z, I, k, threads, H)) != TF_OK) goto done;
        for (int a = 0; a < k; ++a)
            for (int b = 0; b < a; ++b) H[a * k + b] = H[b * k + a] = 0.5 * (H[a * k + b] + H[b * k + a]);
        int info = 0;
        dsyevd_("V", "U", &k, H, &k, theta, work, &lwork, iwork, &liwork, &info, 1, 1);
        if (info != 0) {
            s = tf_fail(TF_ERR_NUMERIC, "nvecs: the %d x %d projected eigenproblem failed (LAPACK dsyevd info %d)",
                        k, k, info);
            goto done;
        }
        /* S column-major: column c (ascending theta) at H + c k; reorder to decreasing, row-major */
        double *S = work; /* k x k row-major: S[a][c] = eigenvector c's entry a, c decreasing */
        double *Hs = work + kk;
        memcpy(Hs, H, kk * sizeof *H);
        for (int a = 0; a < k; ++a)
            for (int c = 0; c < k; ++c) S[a * k + c] = Hs[(uint64_t)(k - 1 - c) * k + a];
        for (int c = 0; c < k / 2; ++c) {
            const double t = theta[c];
            theta[c] = theta[k - 1 - c];
            theta[k - 1 - c] = t;
        }
        rows_times(Q, I, k, S, k, U, threads);
        rows_times(Z, I, k, S, k, AU, threads);
        /* residuals ||AU_c - theta_c U_c|| of the r leading pairs */
        const double t1 = fabs(theta[0]) > 0.0 ? fabs(theta[0]) : 1.0;
        memset(res, 0, (uint64_t)k * sizeof *res);
        {
            const uint64_t blocks = (I + ROWS_BLOCK - 1) / ROWS_BLOCK;
            double *part = NULL;
            if ((s = TF_CALLOC(part, (blocks ? blocks : 1) * r, "nvecs residuals")) != TF_OK) goto done;
#pragma omp parallel for num_threads(threads) schedule(static) if (blocks > 1)
            for (int64_t b = 0; b < (int64_t)blocks; ++b) {
                const uint64_t end = ((uint64_t)b + 1) * ROWS_BLOCK < I ? ((uint64_t)b + 1) * ROWS_BLOCK : I;
                for (uint64_t i = (uint64_t)b * ROWS_BLOCK; i < end; ++i)
                    for (uint64_t c = 0; c < r; ++c) {
                        const double d = AU[i * k + c] - theta[c] * U[i * k + c];
                        part[(uint64_t)b * r + c] += d * d;
                    }
            }
            for (uint64_t b = 0; b < blocks; ++b)
                for (uint64_t c = 0; c < r; ++c) res[c] += part[b * r + c];
            tf_free(part);
        }
        worst = 0.0;
        for (uint64_t c = 0; c < r; ++c)
            if (sqrt(res[c]) / t1 > worst) worst = sqrt(res[c]) / t1;
        if (worst <= o->tol || it >= o->max_iters || k == (int)I) break;
        /* the leading pairs already converged are kept as they are (soft
         * locking); the filter is scaled at the first one that is not */
        uint64_t nl = 0;
        while (nl < r && sqrt(res[nl]) / t1 <= o->tol) ++nl;
        const double c0 = theta[k - 1], a0 = theta[nl];
        /* the filter's m - 1 applications and the next Rayleigh-Ritz one within max_iters */
        int m = CHEB_DEGREE < (int)(o->max_iters - it) ? CHEB_DEGREE : (int)(o->max_iters - it);
        if (m >= 2 && c0 > 0.0 && c0 < 0.95 * a0) {
            /* a degree whose growth from theta[r-1] to a0 stays below 1e8: the
             * rounding of the larger components then leaves the smaller wanted
             * ones accurate */
            const double x0 = 2.0 * a0 / c0 - 1.0, xr = 2.0 * theta[r - 1] / c0 - 1.0;
            double p0 = 1.0, q0 = x0, pr = 1.0, qr = xr > 1.0 ? xr : 1.0;
            int d = 1;
            for (; d < m; ++d) {
                const double n0 = 2.0 * x0 * q0 - p0, nr = 2.0 * (xr > 1.0 ? xr : 1.0) * qr - pr;
                if (n0 / nr > 1e8) break;
                p0 = q0, q0 = n0, pr = qr, qr = nr;
            }
            m = d;
        }
        if (m < 2 || !(c0 > 0.0) || !(c0 < 0.95 * a0)) {
            /* the next basis: G U / theta (close to U), orthonormalised */
            for (uint64_t i = 0; i < I; ++i)
                for (int c = 0; c < k; ++c) {
                    const double t = theta[c];
                    Z[i * k + c] = t > 1e-13 * t1 ? AU[i * k + c] / t : U[i * k + c];
                }
            if ((s = orthonormalise(Z, I, k, threads, Q)) != TF_OK) goto done;
            continue;
        }
        /* the next basis: p(G) U for the Chebyshev polynomial p of degree m
         * that stays within [-1, 1] on [0, c0] (c0 the smallest Ritz value:
         * the unwanted eigenvalues lie about below it) and grows fastest
         * above it, in the scaled three-term recurrence (Zhou & Saad); its
         * first step reuses G U. Each column is divided by p(theta_c) (the
         * same recurrence on the scalar), so the block stays close to U and
         * well conditioned for the QR. */
        {
            const double e = 0.5 * c0, center = 0.5 * c0;
            double sigma = e / (a0 - center), sigma1 = sigma;
            double *P0 = U, *P1 = Z, *P2 = Y2;
            for (uint64_t i = 0; i < Ik; ++i) P1[i] = (AU[i] - center * U[i]) * (sigma1 / e);
            for (int c = 0; c < k; ++c) {
                sc[c] = 1.0;
                sc[k + c] = (theta[c] - center) * (sigma1 / e);
            }
            memcpy(AU, U, Ik * sizeof *U); /* the locked vectors, kept while the rotation reuses U */
            for (int d = 2; d <= m; ++d) {
                ++it;
                if ((s = op_apply(op, P1, k, Q)) != TF_OK) goto done;
                /* deflation: G U_l (locked) is taken out again, so the filter
                 * never grows their directions from rounding */
                if (nl && (s = deflate(Q, AU, I, k, (int)nl, threads, H)) != TF_OK) goto done;
                const double sigma2 = 1.0 / (2.0 / sigma1 - sigma);
                const double a = 2.0 * sigma2 / e, b = sigma * sigma2;
#pragma omp parallel for num_threads(threads) schedule(static) if (Ik > 65536)
                for (int64_t i = 0; i < (int64_t)Ik; ++i) P2[i] = a * (Q[i] - center * P1[i]) - b * P0[i];
                for (int c = 0; c < k; ++c) {
                    const double t = a * (theta[c] - center) * sc[k + c] - b * sc[c];
                    sc[c] = sc[k + c];
                    sc[k + c] = t;
                }
                double *t = P0;
                P0 = P1;
                P1 = P2;
                P2 = t;
                sigma = sigma2;
            }
            for (uint64_t i = 0; i < I; ++i)
                for (int c = 0; c < k; ++c) {
                    const double f = sc[k + c];
                    if ((uint64_t)c < nl) P1[i * k + c] = AU[i * k + c];
                    else if (isfinite(f) && fabs(f) > 1e-200) P1[i * k + c] /= f;
                }
            if ((s = orthonormalise(P1, I, k, threads, Q)) != TF_OK) goto done;
        }
    }
    for (uint64_t i = 0; i < I; ++i)
        for (uint64_t c = 0; c < r; ++c) vecs[i * r + c] = U[i * k + c];
    for (uint64_t c = 0; c < r; ++c) vals[c] = theta[c];
    /* Ritz vectors are orthonormal to rounding; unit norms exactly as LAPACK's */
    info->iters = it;
    info->residual = worst;
done:
    tf_free(Q);
    tf_free(Y2);
    tf_free(sc);
    tf_free(Z);
    tf_free(U);
    tf_free(AU);
    tf_free(H);
    tf_free(theta);
    tf_free(res);
    tf_free(work);
    tf_free(iwork);
    return s;
}

/* Largest ||G u - t u|| / t_1 of the formed Gram's vectors (DENSE's report). */
static double dense_residual(const gram_op *op, const double *vecs, const double *vals, uint64_t r)
{
    const uint64_t I = op->I;
    const double t1 = vals[0] > 0.0 ? vals[0] : 1.0;
    double worst = 0.0;
    for (uint64_t c = 0; c < r; ++c) {
        double ss = 0.0;
#pragma omp parallel for num_threads(op->threads) reduction(+ : ss) schedule(static)
        for (int64_t i = 0; i < (int64_t)I; ++i) {
            double y = 0.0;
            for (uint64_t j = 0; j < I; ++j) y += op->G[(uint64_t)i * I + j] * vecs[j * r + c];
            const double d = y - vals[c] * vecs[(uint64_t)i * r + c];
            ss += d * d;
        }
        if (sqrt(ss) / t1 > worst) worst = sqrt(ss) / t1;
    }
    return worst;
}

tf_status tf_nvecs(const tf_tensor *X, uint32_t mode, uint64_t r, const tf_nvecs_opts *opts, tf_matrix *out,
                   double *values, tf_nvecs_info *info)
{
    const double t0 = tf_wtime();
    tf_nvecs_opts defaults;
    tf_nvecs_info local;
    if (!opts) {
        tf_nvecs_opts_default(&defaults);
        opts = &defaults;
    }
    if (!info) info = &local;
    memset(info, 0, sizeof *info);
    if (out) memset(out, 0, sizeof *out);
    if (!X || !out) return tf_fail(TF_ERR_ARG, "nvecs: missing tensor or output matrix");
    TF_TRY(tf_tensor_validate(X));
    if (mode >= X->order)
        return tf_fail(TF_ERR_ARG, "nvecs: mode %u is outside 1..%u", mode + 1, X->order);
    const uint64_t I = X->dims[mode];
    if (r < 1 || r > I)
        return tf_fail(TF_ERR_ARG, "nvecs: %llu vectors asked of mode %u, whose length is %llu (expected 1..%llu)",
                       (unsigned long long)r, mode + 1, (unsigned long long)I, (unsigned long long)I);
    if ((unsigned)opts->method > TF_NVECS_SUBSPACE)
        return tf_fail(TF_ERR_ARG, "nvecs: unknown method %d", (int)opts->method);
    if (!(opts->tol >= 0.0) || isinf(opts->tol) || opts->max_iters < 1)
        return tf_fail(TF_ERR_ARG, "nvecs: tolerance %g / iteration limit %u: expected a finite tolerance >= 0 "
                                   "and at least 1 iteration", opts->tol, opts->max_iters);
    if (opts->method == TF_NVECS_DENSE && I > DENSE_MAX)
        return tf_fail(TF_ERR_ARG, "nvecs: the dense method forms the %llu x %llu Gram; it takes modes of length "
                                   "up to %u (the subspace method takes any)",
                       (unsigned long long)I, (unsigned long long)I, DENSE_MAX);
    if (opts->threads < 0) return tf_fail(TF_ERR_ARG, "nvecs: threads %d is negative", opts->threads);
    const int threads = tf_resolve_threads(opts->threads);
    double *vals = NULL;
    TF_TRY(TF_ALLOC(vals, r, "nvecs eigenvalues"));
    tf_status s = tf_matrix_alloc(out, I, r);
    if (s != TF_OK) {
        tf_free(vals);
        return s;
    }
    const int pinned = tf_blas_threads_pin_single();
    gram_op op;
    s = op_build(X, mode, threads, &op);
    if (s == TF_OK) {
        tf_nvecs_method m = opts->method;
        int form = m == TF_NVECS_DENSE;
        if (m == TF_NVECS_AUTO) {
            const uint64_t k = r + OVERSAMPLE < I ? r + OVERSAMPLE : I;
            form = I <= GRAM_AUTO_MAX && gram_cost(&op) <= 20.0 * 2.0 * (double)op.nnz * (double)k;
            form |= I <= DENSE_AUTO_MAX;
            m = I <= DENSE_AUTO_MAX ? TF_NVECS_DENSE : TF_NVECS_SUBSPACE;
        }
        info->method = m;
        info->formed_gram = form;
        if (form) s = op_form_gram(&op);
        if (s == TF_OK && m == TF_NVECS_DENSE) {
            double *G = NULL;
            s = TF_ALLOC(G, I * I, "nvecs Gram copy");
            if (s == TF_OK) {
                memcpy(G, op.G, I * I * sizeof *G);
                tf_blas_threads_restore(pinned); /* dsyevr: the BLAS's own threads */
                s = tf_eig_leading(G, I, r, out->data, vals, "nvecs");
                tf_blas_threads_pin_single();
                tf_free(G);
            }
            if (s == TF_OK) info->residual = dense_residual(&op, out->data, vals, r);
        } else if (s == TF_OK) {
            s = subspace(&op, r, opts, out->data, vals, info);
        }
    }
    op_free(&op);
    tf_blas_threads_restore(pinned);
    if (s == TF_OK) {
        tf_eig_fix_signs(out->data, I, r);
        if (values) memcpy(values, vals, r * sizeof *vals);
    } else {
        tf_matrix_free(out);
    }
    tf_free(vals);
    info->seconds = tf_wtime() - t0;
    return s;
}
