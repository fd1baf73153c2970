/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense helpers of CP-ALS on the CPU: Gram (dsyrk), Hadamard, Cholesky solve
 * with a pseudo-inverse fallback (dpotrf/dpocon/dpotri, dsyevd, dgemm), column
 * normalisation and the inner products of the fit. See dense.h. */
#include "cpu/dense.h"

#include <float.h>
#include <math.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/blas_threads.h"

/* ---------------------------------------------------------------- slabs */

/* Number of slabs of a reduction over I rows whose per-slab partial holds
 * `partial` doubles: depends on I and the partial size only, so results do
 * not change with the thread count. At most 64 slabs and 32 MiB of partials. */
uint64_t tf_dense_slab_count(uint64_t I, uint64_t partial)
{
    uint64_t blocks = (I + TF_DENSE_BLOCK - 1) / TF_DENSE_BLOCK;
    uint64_t cap = ((uint64_t)1 << 22) / (partial ? partial : 1);
    uint64_t s = blocks < 64 ? blocks : 64;
    if (s > cap) s = cap;
    return s ? s : 1;
}

#define slab_count tf_dense_slab_count
#define slab_begin tf_dense_slab_begin

/* Threads for a loop of `units` independent pieces and `work` in all (about
 * one multiply-add each, a streamed element counts STREAM): never more
 * threads than pieces, nor than the work pays for (tf_team_for_work: the
 * least modelled cost, the wake-up of each thread and a change of the
 * MTTKRP's team counted), so small loops run on few threads or serially
 * without the cost of a parallel region. */
#define STREAM 8
static int team_size(int threads, uint64_t units, uint64_t work)
{
    return tf_team_for_work(threads, units, work);
}


/* --------------------------------------------------- BLAS work buffers */

/* OpenBLAS gives every thread that is in a BLAS call at the same time a
 * work buffer of its own (BUFFER_SIZE: 128 MiB on x86-64), mapped on first
 * need and kept for later calls. When that mmap fails its allocator
 * (blas_memory_alloc) tries again, forever: under an address-space limit
 * (ulimit -v) the Gram step of `cpd` spun at 100 % CPU instead of failing.
 * So before BLAS is called from *nt threads at once, the buffers not known
 * to exist yet are tried here, mapped as OpenBLAS maps them (then unmapped
 * untouched): *nt becomes the number of callers that have room (at least
 * one), or the call fails naming the limit. The results of the callers do
 * not depend on their number (fixed slabs). */
#define BLAS_BUFFER_BYTES ((size_t)144 << 20) /* the buffer, its alignment and guard, a margin */

static int blas_callers_known; /* callers whose buffers were there or had room */

static tf_status blas_callers(int *nt)
{
    if (!tf_blas_is_openblas()) return TF_OK; /* the check is OpenBLAS's allocator's */
    const int known = __atomic_load_n(&blas_callers_known, __ATOMIC_RELAXED);
    if (*nt <= known) return TF_OK;
    /* one mapping per buffer, all held until the last is tried, as OpenBLAS holds them */
    enum { PROBES = 256 };
    void *probe[PROBES];
    int fit = known, held = 0;
    while (fit < *nt && held < PROBES) {
        void *p = mmap(NULL, BLAS_BUFFER_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) break;
        probe[held++] = p;
        ++fit;
    }
    for (int i = 0; i < held; ++i) munmap(probe[i], BLAS_BUFFER_BYTES);
    if (held == PROBES) fit = *nt; /* that many more callers had room: the rest are not counted */
    if (fit < 1) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
            return tf_fail(TF_ERR_NOMEM, "no room for the %zu MiB work buffer of the BLAS library (OpenBLAS maps one "
                                         "per calling thread, and retries forever when it cannot) under the "
                                         "address-space limit of %llu MiB (ulimit -v): raise the limit",
                           BLAS_BUFFER_BYTES >> 20, (unsigned long long)(rl.rlim_cur >> 20));
        return tf_fail(TF_ERR_NOMEM, "no memory for the %zu MiB work buffer of the BLAS library (OpenBLAS maps one "
                                     "per calling thread, and retries forever when it cannot)",
                       BLAS_BUFFER_BYTES >> 20);
    }
    if (fit < *nt) *nt = fit;
    int seen = known;
    while (fit > seen && !__atomic_compare_exchange_n(&blas_callers_known, &seen, fit, 0, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED)) {
    }
    return TF_OK;
}

/* Rows per BLAS call for rank R: small enough that OpenBLAS runs each call
 * on one thread (its level-3 calls stay serial up to ~2^18 multiply-adds),
 * so the OpenMP loops around them do not oversubscribe the cores. */
static uint64_t blas_rows(uint64_t R)
{
    uint64_t rows = ((uint64_t)1 << 18) / (R * (R + 1));
    return rows < 32 ? 32 : rows > TF_DENSE_BLOCK ? TF_DENSE_BLOCK : rows;
}

/* NaN-sticky running maximum of |x|. */
static inline double max_abs(double m, double x)
{
    double v = fabs(x);
    return (!(v <= m) && m == m) ? v : m;
}

void tf_dense_acc_rows(double *p, const double *A, const double *B, uint64_t n, uint64_t R, int kind)
{
    for (uint64_t i = 0; i < n; ++i) {
        const double *a = A + i * R;
        if (kind == TF_DENSE_ACC_DOT) {
            const double *b = B + i * R;
            for (uint64_t r = 0; r < R; ++r) p[r] += a[r] * b[r];
        } else if (kind == TF_DENSE_ACC_ABS) {
            for (uint64_t r = 0; r < R; ++r) p[r] += fabs(a[r]);
        } else {
            for (uint64_t r = 0; r < R; ++r) p[r] = max_abs(p[r], a[r]);
        }
    }
}

/* out[r] = the slab partials part[s * R + r] reduced in slab order (sums,
 * or the NaN-sticky maximum for TF_DENSE_ACC_MAX). */
static void reduce_slabs(const double *part, uint64_t S, uint64_t R, int kind, double *out)
{
    for (uint64_t r = 0; r < R; ++r) out[r] = 0.0;
    for (uint64_t s = 0; s < S; ++s)
        for (uint64_t r = 0; r < R; ++r)
            out[r] = kind == TF_DENSE_ACC_MAX ? max_abs(out[r], part[s * R + r]) : out[r] + part[s * R + r];
}

/* out[r] = the column reduction `kind` of A (with B for TF_DENSE_ACC_DOT),
 * per slab then across slabs in order. */
static tf_status column_reduce(const double *A, const double *B, uint64_t I, uint64_t R, int kind, int threads,
                               double *out)
{
    const uint64_t S = slab_count(I, R);
    double *part = NULL;
    TF_TRY(TF_CALLOC(part, S * R, "column sums"));
    const int nt = team_size(threads, S, (kind == TF_DENSE_ACC_DOT ? 2 : 1) * STREAM * I * R);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (int64_t s = 0; s < (int64_t)S; ++s) {
        const uint64_t b = slab_begin(I, S, (uint64_t)s), e = slab_begin(I, S, (uint64_t)s + 1);
        tf_dense_acc_rows(part + (uint64_t)s * R, A + b * R, B ? B + b * R : NULL, e - b, R, kind);
    }
    reduce_slabs(part, S, R, kind, out);
    tf_free(part);
    return TF_OK;
}

static tf_status check_rank(uint64_t R, const char *what)
{
    if (R == 0 || R > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "%s: rank %llu is outside 1..%u", what, (unsigned long long)R,
                       TF_MAX_RANK);
    return TF_OK;
}

/* ----------------------------------------------------------------- Gram */

/* The second pass of an ALS step (and the Gram alone): per Gram slab, row
 * block by row block while the block is in cache, A *= inv (column scales;
 * NULL: none), the block's A^T A into the slab's partial, and with M the
 * fit's column dots M(i,r) A(i,r) into dots (slab count fs, that of a
 * column reduction: the same slabs, or fs = 0 for none). */
static tf_status scale_gram(double *A, uint64_t I, uint64_t R, const double *inv, const double *M, uint64_t fs,
                            double *dots, int threads, double *G)
{
    TF_TRY(check_rank(R, "Gram matrix"));
    const uint64_t S = slab_count(I, R * R);
    double *part = NULL;
    int nt = team_size(threads, S, I * R * (R + 1) / 2 + (inv ? STREAM * I * R : 0) + (fs ? STREAM * I * R : 0));
    TF_TRY(blas_callers(&nt));
    TF_TRY(TF_CALLOC(part, S * R * R, "Gram partial sums"));
    const int n = (int)R;
    const uint64_t rows = blas_rows(R);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (int64_t s = 0; s < (int64_t)S; ++s) {
        const uint64_t end = slab_begin(I, S, (uint64_t)s + 1);
        for (uint64_t i = slab_begin(I, S, (uint64_t)s); i < end; i += rows) {
            const int k = (int)(end - i < rows ? end - i : rows);
            double *a = A + i * R;
            for (uint64_t e = 0; inv && e < (uint64_t)k * R; e += R)
                for (uint64_t r = 0; r < R; ++r) a[e + r] *= inv[r];
            if (fs) tf_dense_acc_rows(dots + (uint64_t)s * R, M + i * R, a, (uint64_t)k, R, TF_DENSE_ACC_DOT);
            /* Row-major rows i.. are the column-major R x k matrix A^T:
             * dsyrk 'N' gives A^T A (upper triangle, column-major). */
            const double one = 1.0;
            dsyrk_("U", "N", &n, &k, &one, a, &n, &one, part + (uint64_t)s * R * R, &n, 1, 1);
        }
    }
    memset(G, 0, R * R * sizeof *G);
    for (uint64_t s = 0; s < S; ++s)
        for (uint64_t j = 0; j < R; ++j)
            for (uint64_t i = 0; i <= j; ++i) G[j * R + i] += part[s * R * R + j * R + i];
    for (uint64_t j = 0; j < R; ++j)
        for (uint64_t i = 0; i < j; ++i) G[i * R + j] = G[j * R + i];
    tf_free(part);
    return TF_OK;
}

tf_status tf_dense_gram(const double *A, uint64_t I, uint64_t R, int threads, double *G)
{
    return scale_gram((double *)A, I, R, NULL, NULL, 0, NULL, threads, G); /* A is only read without scales */
}

void tf_dense_hadamard(const double *const *G, uint32_t n, uint32_t skip, uint64_t R, double *V)
{
    for (uint64_t e = 0; e < R * R; ++e) V[e] = 1.0;
    for (uint32_t k = 0; k < n; ++k) {
        if (k == skip) continue;
        for (uint64_t e = 0; e < R * R; ++e) V[e] *= G[k][e];
    }
}

/* ---------------------------------------------------------------- solve */

/* Relative singularity threshold for an R x R normal matrix. */
static double singular_rcond(uint64_t R)
{
    double e = (double)R * DBL_EPSILON;
    return e > TF_DENSE_PINV_RCOND ? e : TF_DENSE_PINV_RCOND;
}

/* 1 if every element of x[0..n-1] is finite. */
static int all_finite(const double *x, uint64_t n)
{
    for (uint64_t k = 0; k < n; ++k)
        if (!isfinite(x[k])) return 0;
    return 1;
}

/* Cholesky factor of V into L; 1 if V is numerically positive definite
 * (dpotrf succeeds and the reciprocal condition number exceeds singular_rcond). */
static tf_status try_cholesky(const double *V, uint64_t R, double *L, int *ok)
{
    const int n = (int)R;
    int info = 0;
    double anorm = 0.0, rcond = 0.0;
    for (uint64_t j = 0; j < R; ++j) {
        double c = 0.0;
        for (uint64_t i = 0; i < R; ++i) c += fabs(V[j * R + i]);
        if (c > anorm) anorm = c;
    }
    memcpy(L, V, R * R * sizeof *L);
    *ok = 0;
    dpotrf_("U", &n, L, &n, &info, 1);
    if (info != 0) return TF_OK; /* info > 0: not positive definite */
    double *work = NULL;
    int *iwork = NULL;
    tf_status s = TF_ALLOC(work, 3 * R, "dpocon workspace");
    if (s == TF_OK) s = TF_ALLOC(iwork, R, "dpocon workspace");
    if (s == TF_OK) {
        dpocon_("U", &n, L, &n, &anorm, &rcond, work, iwork, &info, 1);
        *ok = info == 0 && rcond > singular_rcond(R);
    }
    tf_free(work);
    tf_free(iwork);
    return s;
}

/* P = pinv(V) from the eigendecomposition V = Q diag(w) Q^T, eigenvalues
 * <= singular_rcond * max|w| dropped. */
static tf_status pseudo_inverse(const double *V, uint64_t R, double *P)
{
    const int n = (int)R;
    double *Q = NULL, *w = NULL, *work = NULL, *Qs = NULL;
    int *iwork = NULL;
    int info = 0, lwork = -1, liwork = -1, iw_query = 0;
    double w_query = 0.0;
    tf_status s = TF_ALLOC(Q, R * R, "pinv eigenvectors");
    if (s == TF_OK) s = TF_ALLOC(Qs, R * R, "pinv scaled eigenvectors");
    if (s == TF_OK) s = TF_ALLOC(w, R, "pinv eigenvalues");
    if (s != TF_OK) goto done;
    memcpy(Q, V, R * R * sizeof *Q);
    dsyevd_("V", "U", &n, Q, &n, w, &w_query, &lwork, &iw_query, &liwork, &info, 1, 1);
    lwork = (int)w_query;
    liwork = iw_query;
    s = TF_ALLOC(work, (uint64_t)(lwork > 1 ? lwork : 1), "dsyevd workspace");
    if (s == TF_OK) s = TF_ALLOC(iwork, (uint64_t)(liwork > 1 ? liwork : 1), "dsyevd workspace");
    if (s != TF_OK) goto done;
    dsyevd_("V", "U", &n, Q, &n, w, work, &lwork, iwork, &liwork, &info, 1, 1);
    if (info != 0) {
        s = tf_fail(TF_ERR_NUMERIC, "pseudo-inverse: the eigendecomposition of the %llu x %llu "
                                    "normal matrix failed (LAPACK dsyevd info %d)",
                    (unsigned long long)R, (unsigned long long)R, info);
        goto done;
    }
    double wmax = 0.0;
    for (uint64_t j = 0; j < R; ++j)
        if (fabs(w[j]) > wmax) wmax = fabs(w[j]);
    const double cutoff = singular_rcond(R) * wmax;
    /* Qs = Q diag(1/w) with dropped eigenvalues as zero; P = Qs Q^T. */
    for (uint64_t j = 0; j < R; ++j) {
        const double inv = w[j] > cutoff ? 1.0 / w[j] : 0.0;
        for (uint64_t i = 0; i < R; ++i) Qs[j * R + i] = Q[j * R + i] * inv;
    }
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "T", &n, &n, &n, &one, Qs, &n, Q, &n, &zero, P, &n, 1, 1);
done:
    tf_free(Q);
    tf_free(Qs);
    tf_free(w);
    tf_free(work);
    tf_free(iwork);
    return s;
}

/* P = V^{-1} from the Cholesky factor in P (upper triangle), both triangles. */
static int inverse_from_cholesky(double *P, uint64_t R)
{
    const int n = (int)R;
    int info = 0;
    dpotri_("U", &n, P, &n, &info, 1);
    if (info != 0) return 0;
    for (uint64_t j = 0; j < R; ++j) /* column-major upper -> full */
        for (uint64_t i = 0; i < j; ++i) P[i * R + j] = P[j * R + i];
    return 1;
}

uint64_t tf_dense_blas_rows(uint64_t R) { return blas_rows(R); }

tf_status tf_dense_blas_team(int threads, uint64_t units, uint64_t work, int *nt)
{
    *nt = team_size(threads, units, work);
    return blas_callers(nt);
}

void tf_dense_apply_block(const double *P, const double *M, double *A, uint64_t rows, uint64_t R)
{
    const int n = (int)R, k = (int)rows;
    const double one = 1.0, zero = 0.0;
    dgemm_("N", "N", &n, &k, &n, &one, P, &n, M, &n, &zero, A, &n, 1, 1);
}

/* A = M * P (P symmetric R x R): blocked dgemm on the column-major views,
 * A^T = P M^T, per slab of a column reduction (the block a row lies in, and
 * so its bits, depend on I and R alone: OpenBLAS's dgemm gives a row other
 * bits in another place of its block), and with kind >= 0 the column
 * reduction `kind` of the new rows into the slab's partial (S * R, zeroed)
 * while they are in cache. */
static tf_status multiply_rows(const double *M, double *A, uint64_t I, uint64_t R, const double *P, int kind,
                               double *part, int threads)
{
    const uint64_t rows = blas_rows(R), S = slab_count(I, R);
    int nt = 1;
    TF_TRY(tf_dense_blas_team(threads, S, I * R * R + (kind >= 0 ? STREAM * I * R : 0), &nt));
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if (nt > 1)
    for (int64_t s = 0; s < (int64_t)S; ++s) {
        const uint64_t end = slab_begin(I, S, (uint64_t)s + 1);
        for (uint64_t i = slab_begin(I, S, (uint64_t)s); i < end; i += rows) {
            const uint64_t k = end - i < rows ? end - i : rows;
            tf_dense_apply_block(P, M + i * R, A + i * R, k, R);
            if (kind >= 0) tf_dense_acc_rows(part + (uint64_t)s * R, A + i * R, A + i * R, k, R, kind);
        }
    }
    return TF_OK;
}

int tf_dense_team(uint64_t I, uint64_t R, int threads)
{
    const int teams[] = {team_size(threads, slab_count(I, R), I * R * R),                   /* solve */
                         team_size(threads, slab_count(I, R * R), I * R * (R + 1) / 2),     /* Gram */
                         team_size(threads, slab_count(I, R), 2 * STREAM * I * R),          /* fit */
                         team_size(threads, I * R / (TF_DENSE_BLOCK * 16), STREAM * I * R)}; /* scale */
    int most = 1;
    for (size_t k = 0; k < sizeof teams / sizeof *teams; ++k) most = teams[k] > most ? teams[k] : most;
    return most;
}

tf_status tf_dense_inverse(const double *V, uint64_t R, double *P, int *used_pinv)
{
    TF_TRY(check_rank(R, "normal equations"));
    *used_pinv = 0;
    if (!all_finite(V, R * R))
        return tf_fail(TF_ERR_NUMERIC, "the %llu x %llu normal matrix (Hadamard of Grams) is not "
                                       "finite; the factors diverged",
                       (unsigned long long)R, (unsigned long long)R);
    int one = 1; /* the LAPACK calls: this thread */
    TF_TRY(blas_callers(&one));
    int spd = 0;
    tf_status s = try_cholesky(V, R, P, &spd);
    if (s == TF_OK && !(spd && inverse_from_cholesky(P, R))) {
        *used_pinv = 1;
        s = pseudo_inverse(V, R, P);
    }
    return s;
}

tf_status tf_dense_solve(const double *M, double *A, uint64_t I, uint64_t R, const double *V,
                         int threads, int *used_pinv)
{
    TF_TRY(check_rank(R, "normal equations"));
    double *P = NULL;
    TF_TRY(TF_ALLOC(P, R * R, "inverse of the normal matrix"));
    tf_status s = tf_dense_inverse(V, R, P, used_pinv);
    if (s == TF_OK) s = multiply_rows(M, A, I, R, P, -1, NULL, threads);
    tf_free(P);
    return s;
}

/* ------------------------------------------------------------ normalise */

tf_status tf_dense_column_abs_sums(const double *A, uint64_t I, uint64_t R, int threads, double *out)
{
    return column_reduce(A, NULL, I, R, TF_DENSE_ACC_ABS, threads, out);
}

/* The column reduction of a norm: squares summed, |a| summed or maxima. */
static int norm_kind(int norm)
{
    return norm == TF_DENSE_NORM_MAX ? TF_DENSE_ACC_MAX : norm == TF_DENSE_NORM1 ? TF_DENSE_ACC_ABS : TF_DENSE_ACC_DOT;
}

/* lambda from the column reduction of `norm` (in lambda); inv[r] = 1 / lambda[r] (1 for a zero column). */
static tf_status norm_scales(double *lambda, uint64_t R, int norm, double *inv)
{
    for (uint64_t r = 0; r < R; ++r) {
        if (!isfinite(lambda[r]))
            return tf_fail(TF_ERR_NUMERIC, "factor column %llu is not finite; the factors diverged",
                           (unsigned long long)r + 1);
        if (norm != TF_DENSE_NORM1)
            lambda[r] = norm == TF_DENSE_NORM_MAX ? (lambda[r] > 1.0 ? lambda[r] : 1.0) : sqrt(lambda[r]);
        inv[r] = lambda[r] > 0.0 ? 1.0 / lambda[r] : 1.0;
    }
    return TF_OK;
}

/* lambda and inv (R each, allocated by the caller: *inv) for A's columns. */
static tf_status column_norms(const double *A, uint64_t I, uint64_t R, int norm, int threads, double *lambda,
                              double **inv)
{
    const int kind = norm_kind(norm);
    TF_TRY(column_reduce(A, kind == TF_DENSE_ACC_DOT ? A : NULL, I, R, kind, threads, lambda));
    TF_TRY(TF_ALLOC(*inv, R, "column scales"));
    return norm_scales(lambda, R, norm, *inv);
}

tf_status tf_dense_normalize(double *A, uint64_t I, uint64_t R, int norm, int threads, double *lambda)
{
    double *inv = NULL;
    tf_status s = column_norms(A, I, R, norm, threads, lambda, &inv);
    if (s == TF_OK) {
        const int nt = team_size(threads, I * R / (TF_DENSE_BLOCK * 16), STREAM * I * R);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
        for (int64_t i = 0; i < (int64_t)I; ++i)
            for (uint64_t r = 0; r < R; ++r) A[(uint64_t)i * R + r] *= inv[r];
    }
    tf_free(inv);
    return s;
}

/* ------------------------------------------------------- the fused step */

tf_status tf_dense_normalize_gram(double *A, uint64_t I, uint64_t R, int norm, int threads, double *lambda,
                                  double *G)
{
    TF_TRY(check_rank(R, "Gram matrix"));
    double *inv = NULL;
    tf_status s = column_norms(A, I, R, norm, threads, lambda, &inv);
    if (s == TF_OK) s = scale_gram(A, I, R, inv, NULL, 0, NULL, threads, G);
    tf_free(inv);
    return s;
}

tf_status tf_dense_als_step(const double *M, double *A, uint64_t I, uint64_t R, const double *V, int norm,
                            int threads, double *lambda, double *G, double *inner, int *used_pinv)
{
    TF_TRY(check_rank(R, "normal equations"));
    const uint64_t S = slab_count(I, R);
    const int kind = norm_kind(norm);
    /* the fit's dots ride on the Gram's pass when its slabs are theirs (R <= 256) */
    const uint64_t fs = inner && slab_count(I, R * R) == S ? S : 0;
    double *P = NULL, *part = NULL, *dots = NULL, *inv = NULL;
    tf_status s = TF_ALLOC(P, R * R, "inverse of the normal matrix");
    if (s == TF_OK) s = TF_CALLOC(part, S * R, "column sums");
    if (s == TF_OK) s = TF_CALLOC(dots, (fs ? fs : 1) * R, "column inner products");
    if (s == TF_OK) s = TF_ALLOC(inv, R, "column scales");
    if (s == TF_OK) s = tf_dense_inverse(V, R, P, used_pinv);
    /* pass 1: the solve, the column norms of the new rows as they come */
    if (s == TF_OK) s = multiply_rows(M, A, I, R, P, kind, part, threads);
    if (s == TF_OK) {
        reduce_slabs(part, S, R, kind, lambda);
        s = norm_scales(lambda, R, norm, inv);
    }
    /* pass 2: the scaling, the Gram (and the fit's dots) of the scaled rows */
    if (s == TF_OK) s = scale_gram(A, I, R, inv, M, fs, dots, threads, G);
    if (s == TF_OK && inner) {
        if (fs) {
            double *col = part; /* S * R >= R */
            reduce_slabs(dots, fs, R, TF_DENSE_ACC_DOT, col);
            double acc = 0.0;
            for (uint64_t r = 0; r < R; ++r) acc += lambda[r] * col[r];
            *inner = acc;
        } else {
            s = tf_dense_weighted_inner(M, A, I, R, lambda, threads, inner);
        }
    }
    tf_free(P);
    tf_free(part);
    tf_free(dots);
    tf_free(inv);
    return s;
}

/* ------------------------------------------------------------ fit terms */

tf_status tf_dense_weighted_inner(const double *A, const double *B, uint64_t I, uint64_t R,
                                  const double *w, int threads, double *result)
{
    double *col = NULL;
    TF_TRY(TF_ALLOC(col, R, "column inner products"));
    tf_status s = column_reduce(A, B, I, R, TF_DENSE_ACC_DOT, threads, col);
    double acc = 0.0;
    for (uint64_t r = 0; s == TF_OK && r < R; ++r) acc += w[r] * col[r];
    *result = acc;
    tf_free(col);
    return s;
}

double tf_dense_quadratic(const double *V, const double *x, uint64_t R)
{
    double acc = 0.0;
    for (uint64_t i = 0; i < R; ++i) {
        double row = 0.0;
        for (uint64_t j = 0; j < R; ++j) row += V[i * R + j] * x[j];
        acc += x[i] * row;
    }
    return acc;
}

tf_status tf_dense_sumsq(const double *x, uint64_t n, int threads, double *result)
{
    return column_reduce(x, x, n, 1, TF_DENSE_ACC_DOT, threads, result);
}
