/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS (src/front/cpd.c, src/algo/cp_als.c + the CPU backend): planted low-rank recovery,
 * determinism, driver fit vs the independent tf_ktensor_fit, empty slices,
 * the pseudo-inverse fallback, a plain-loop CP-ALS, real tensors, option errors,
 * given starts (tf_cpd_opts.init). */
#include <stdint.h>

#include "check.h"
#include "core/rng.h"
#include "realdata.h"
#include "tenfold.h"

static const tf_format formats[] = {TF_FORMAT_COO, TF_FORMAT_CSF};
#define NFORMATS (sizeof formats / sizeof *formats)

/* ---------------------------------------------------------------- inputs */

/* Exactly rank-R sparse tensor: factor column r of mode m has per[m]
 * non-zeros (values in [0.5, 1.5)) in distinct random rows of
 * pad..dims[m]-pad-1; X is the sum of the R outer products, each emitted on
 * its own support and the overlaps summed by tf_tensor_canonicalize. The
 * first and last `pad` slices of every mode are empty. (Disjoint blocks
 * would be exact too, but ALS stalls on them from ~30% of random starts.) */
static void planted_sparse(uint32_t order, const uint64_t *dims, uint64_t R, const uint64_t *per,
                           uint64_t pad, uint64_t seed, tf_tensor *X)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    uint32_t *rows[TF_MAX_ORDER];
    double *vals[TF_MAX_ORDER];
    uint64_t support = 1;
    for (uint32_t m = 0; m < order; ++m) {
        support *= per[m];
        rows[m] = malloc(R * per[m] * sizeof *rows[m]);
        vals[m] = malloc(R * per[m] * sizeof *vals[m]);
        for (uint64_t r = 0; r < R; ++r)
            for (uint64_t n = 0; n < per[m];) {
                uint32_t i = (uint32_t)(pad + tf_rng_below(&rng, dims[m] - 2 * pad));
                int dup = 0;
                for (uint64_t j = 0; j < n; ++j) dup |= rows[m][r * per[m] + j] == i;
                if (dup) continue;
                rows[m][r * per[m] + n] = i;
                vals[m][r * per[m] + n++] = 0.5 + tf_rng_uniform(&rng);
            }
    }
    CHECK_OK(tf_tensor_alloc(X, order, dims, R * support));
    uint64_t k = 0;
    for (uint64_t r = 0; r < R; ++r)
        for (uint64_t e = 0; e < support; ++e, ++k) {
            uint64_t rest = e;
            double v = 1.0;
            for (uint32_t m = order; m-- > 0;) {
                uint64_t j = r * per[m] + rest % per[m];
                rest /= per[m];
                X->ind[m][k] = rows[m][j];
                v *= vals[m][j];
            }
            X->vals[k] = v;
        }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL));
    for (uint32_t m = 0; m < order; ++m) {
        free(rows[m]);
        free(vals[m]);
    }
}

/* Every entry of a small dense tensor of rank R with factors in [0, 1). */
static void planted_dense(uint32_t order, const uint64_t *dims, uint64_t R, uint64_t seed, tf_tensor *X)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    uint64_t n = 1;
    double *f[TF_MAX_ORDER];
    for (uint32_t m = 0; m < order; ++m) {
        n *= dims[m];
        f[m] = malloc(dims[m] * R * sizeof *f[m]);
        for (uint64_t e = 0; e < dims[m] * R; ++e) f[m][e] = tf_rng_uniform(&rng);
    }
    CHECK_OK(tf_tensor_alloc(X, order, dims, n));
    for (uint64_t k = 0; k < n; ++k) {
        uint64_t rest = k;
        for (uint32_t m = order; m-- > 0;) {
            X->ind[m][k] = (uint32_t)(rest % dims[m]);
            rest /= dims[m];
        }
        double v = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            double p = 1.0;
            for (uint32_t m = 0; m < order; ++m) p *= f[m][(uint64_t)X->ind[m][k] * R + r];
            v += p;
        }
        X->vals[k] = v;
    }
    for (uint32_t m = 0; m < order; ++m) free(f[m]);
}

/* Random sparse tensor (no low-rank structure), values in [1, 2). */
static void random_sparse(uint32_t order, const uint64_t *dims, uint64_t nnz, uint64_t seed, tf_tensor *X)
{
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    CHECK_OK(tf_tensor_alloc(X, order, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < order; ++m) X->ind[m][k] = (uint32_t)tf_rng_below(&rng, dims[m]);
        X->vals[k] = 1.0 + tf_rng_uniform(&rng);
    }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL));
}

/* ---------------------------------------------------------------- checks */

typedef struct fit_log {
    uint32_t n;
    double fit[512];
    uint32_t inner[512]; /* each iteration's ADMM iterations */
    double mttkrp;  /* the iterations' MTTKRP seconds, summed */
    int steps_bad;  /* iterations whose step times do not add up */
} fit_log;

static void record_fit(const tf_cpd_iter *it, void *user)
{
    fit_log *log = user;
    if (log->n < 512 && it->iter == log->n + 1) {
        log->inner[log->n] = it->inner_iters;
        log->fit[log->n++] = it->fit;
    }
    log->mttkrp += it->t_mttkrp;
    if (!(it->t_mttkrp >= 0 && it->t_dense >= 0 && it->t_fit >= 0 &&
          it->t_mttkrp + it->t_dense + it->t_fit <= it->seconds + 1e-6))
        log->steps_bad++;
}

static int ktensor_finite(const tf_ktensor *K)
{
    for (uint64_t r = 0; r < K->rank; ++r)
        if (!isfinite(K->lambda[r])) return 0;
    for (uint32_t m = 0; m < K->order; ++m)
        for (uint64_t e = 0; e < K->dims[m] * K->rank; ++e)
            if (!isfinite(K->factors[m].data[e])) return 0;
    return 1;
}

static void cpd_opts(tf_cpd_opts *o, tf_format fmt, uint64_t rank, uint32_t iters, double tol)
{
    tf_cpd_opts_default(o);
    o->backend = TF_BACKEND_CPU;
    o->format = fmt;
    o->rank = rank;
    o->max_iters = iters;
    o->tol = tol;
}

/* Runs CP-ALS and checks what holds for every run: status, a finite model,
 * callbacks for every iteration, the report, and the driver's fit against
 * tf_ktensor_fit (to fit_tol). Returns the fit (NAN on failure). */
static double run_cpd_body(const tf_tensor *X, tf_cpd_opts *o, tf_ktensor *K, tf_cpd_report *rep,
                           fit_log *log, double fit_tol, const char *what)
{
    fit_log local;
    if (!log) log = &local;
    memset(log, 0, sizeof *log);
    o->callback = record_fit;
    o->user = log;
    tf_status s = tf_cpd(X, o, K, rep);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s != TF_OK) return NAN;
    CHECKF(log->n == rep->iters && rep->iters >= 1 && rep->iters <= o->max_iters,
           "%s: %u callbacks, %u iterations", what, log->n, rep->iters);
    CHECKF(rep->fit == log->fit[log->n - 1], "%s: report fit differs from the last callback", what);
    double mtt = 0;
    for (uint32_t m = 0; m < X->order; ++m) mtt += rep->t_mttkrp[m];
    CHECKF(log->steps_bad == 0 && fabs(log->mttkrp - mtt) <= 1e-9 * (1 + mtt),
           "%s: the iterations' step times (%d bad; MTTKRP %g s) do not add up to the report's (%g s)", what,
           log->steps_bad, log->mttkrp, mtt);
    CHECKF(ktensor_finite(K), "%s: non-finite model", what);
    CHECKF(rep->fit >= 0.0 && rep->fit <= 1.0, "%s: fit %g outside [0,1]", what, rep->fit);
    CHECKF(rep->plan[0] != '\0' && rep->t_total >= rep->t_mttkrp[0], "%s: report incomplete", what);
    for (uint64_t r = 1; r < K->rank; ++r)
        CHECKF(K->lambda[r - 1] >= K->lambda[r], "%s: lambda not sorted", what);
    double direct = NAN;
    CHECK_OK(tf_ktensor_fit(X, K, &direct));
    CHECKF(fabs(direct - rep->fit) <= fit_tol, "%s: driver fit %.15g, direct fit %.15g", what,
           rep->fit, direct);
    return rep->fit;
}

/* run_cpd_body, then o's callback taken off again: it points at a log that
 * may live on run_cpd_body's stack, and o may be used for a later run. */
static double run_cpd(const tf_tensor *X, tf_cpd_opts *o, tf_ktensor *K, tf_cpd_report *rep,
                      fit_log *log, double fit_tol, const char *what)
{
    const double f = run_cpd_body(X, o, K, rep, log, fit_tol, what);
    o->callback = NULL;
    o->user = NULL;
    return f;
}

/* AO-ADMM helpers (below, with its tests) */
static void admm_opts(tf_cpd_opts *o, tf_cpd_update *u, tf_format fmt, uint64_t rank, uint32_t iters, double tol);
static uint64_t count_entries(const tf_ktensor *K, int negative);
static int same_ktensor(const tf_ktensor *a, const tf_ktensor *b);

/* (a) planted exact low-rank tensors are recovered. */
static void test_recovery(void)
{
    for (unsigned f = 0; f < NFORMATS; ++f) {
        const char *fn = tf_format_name(formats[f]);
        char what[96];
        tf_tensor X;
        tf_ktensor K;
        tf_cpd_report rep;
        tf_cpd_opts o;

        const uint64_t s3[3] = {30, 25, 20}, p3[3] = {8, 7, 6};
        planted_sparse(3, s3, 4, p3, 2, 11, &X);
        cpd_opts(&o, formats[f], 4, 300, 1e-10);
        snprintf(what, sizeof what, "block-sparse order 3 rank 4 (%s)", fn);
        double fit = run_cpd(&X, &o, &K, &rep, NULL, 1e-6, what);
        CHECKF(fit >= 0.99, "%s: fit %g", what, fit);
        tf_ktensor_free(&K);
        tf_tensor_free(&X);

        const uint64_t s4[4] = {30, 25, 20, 15}, p4[4] = {8, 7, 6, 5};
        planted_sparse(4, s4, 5, p4, 1, 12, &X);
        cpd_opts(&o, formats[f], 5, 300, 1e-10);
        snprintf(what, sizeof what, "block-sparse order 4 rank 5 (%s)", fn);
        fit = run_cpd(&X, &o, &K, &rep, NULL, 1e-6, what);
        CHECKF(fit >= 0.99, "%s: fit %g", what, fit);
        tf_ktensor_free(&K);
        tf_tensor_free(&X);

        const uint64_t d3[3] = {12, 10, 8};
        planted_dense(3, d3, 3, 13, &X);
        cpd_opts(&o, formats[f], 3, 500, 1e-12);
        snprintf(what, sizeof what, "dense order 3 rank 3 (%s)", fn);
        fit = run_cpd(&X, &o, &K, &rep, NULL, 1e-6, what);
        CHECKF(fit >= 0.99, "%s: fit %g", what, fit);
        tf_ktensor_free(&K);
        tf_tensor_free(&X);
    }
}

/* (b) same seed -> bit-identical fits and factors; another seed -> another
 * start. Also reports (without failing) whether 1 and 2 threads agree. */
static void test_determinism(void)
{
    const uint64_t dims[3] = {60, 50, 40};
    tf_tensor X;
    random_sparse(3, dims, 4000, 21, &X);
    for (unsigned f = 0; f < NFORMATS; ++f) {
        fit_log a, b, c, d;
        tf_ktensor Ka, Kb, Kc, Kd;
        tf_cpd_report rep;
        tf_cpd_opts o;
        cpd_opts(&o, formats[f], 6, 8, 0.0);
        o.threads = 2;
        run_cpd(&X, &o, &Ka, &rep, &a, 1e-10, "determinism run 1");
        run_cpd(&X, &o, &Kb, &rep, &b, 1e-10, "determinism run 2");
        CHECK(a.n == 8 && b.n == 8 && memcmp(a.fit, b.fit, a.n * sizeof *a.fit) == 0);
        int same = Ka.lambda && Kb.lambda && memcmp(Ka.lambda, Kb.lambda, 6 * sizeof(double)) == 0;
        for (uint32_t m = 0; same && m < 3; ++m)
            same = memcmp(Ka.factors[m].data, Kb.factors[m].data, dims[m] * 6 * sizeof(double)) == 0;
        CHECKF(same, "%s: same seed gave different factors", tf_format_name(formats[f]));

        o.seed = TF_DEFAULT_SEED + 1;
        run_cpd(&X, &o, &Kc, &rep, &c, 1e-10, "determinism other seed");
        CHECKF(c.n == 8 && c.fit[0] != a.fit[0], "%s: another seed gave the same first fit",
               tf_format_name(formats[f]));

        o.seed = TF_DEFAULT_SEED;
        o.threads = 1;
        run_cpd(&X, &o, &Kd, &rep, &d, 1e-10, "determinism 1 thread");
        uint32_t i = 0;
        while (i < a.n && i < d.n && a.fit[i] == d.fit[i]) ++i;
        if (i < a.n)
            printf("note: %s: fits with 1 and 2 threads first differ at iteration %u: %.17g vs %.17g\n",
                   tf_format_name(formats[f]), i + 1, d.fit[i], a.fit[i]);
        else
            printf("note: %s: fits with 1 and 2 threads are bit-identical\n", tf_format_name(formats[f]));
        tf_ktensor_free(&Ka); tf_ktensor_free(&Kb); tf_ktensor_free(&Kc); tf_ktensor_free(&Kd);
    }
    tf_tensor_free(&X);
}

/* (c) the driver's fit equals the direct fit of the returned ktensor. */
static void test_fit_agreement(void)
{
    const uint64_t d3[3] = {70, 40, 30}, d5[5] = {9, 8, 7, 6, 5};
    tf_tensor X;
    tf_ktensor K;
    tf_cpd_report rep;
    tf_cpd_opts o;
    random_sparse(3, d3, 5000, 31, &X);
    for (uint32_t iters = 1; iters <= 7; iters += 3) {
        cpd_opts(&o, TF_FORMAT_AUTO, 5, iters, 0.0);
        double fit = run_cpd(&X, &o, &K, &rep, NULL, 1e-10, "fit agreement order 3");
        CHECK(rep.iters == iters && fit > 0.0 && fit < 0.9);
        tf_ktensor_free(&K);
    }
    tf_tensor_free(&X);
    random_sparse(5, d5, 3000, 32, &X);
    cpd_opts(&o, TF_FORMAT_AUTO, 4, 5, 0.0);
    run_cpd(&X, &o, &K, &rep, NULL, 1e-10, "fit agreement order 5");
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
    const uint64_t d2[2] = {50, 40}, d1[3] = {1, 30, 20}; /* a matrix; a mode of length 1 */
    random_sparse(2, d2, 600, 33, &X);
    cpd_opts(&o, TF_FORMAT_AUTO, 3, 6, 0.0);
    run_cpd(&X, &o, &K, &rep, NULL, 1e-10, "fit agreement order 2");
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
    random_sparse(3, d1, 300, 34, &X);
    cpd_opts(&o, TF_FORMAT_AUTO, 4, 6, 0.0);
    run_cpd(&X, &o, &K, &rep, NULL, 1e-10, "fit agreement mode of length 1");
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* (d) empty slices: their factor rows are exactly zero, nothing is NaN. */
static void test_empty_slices(void)
{
    const uint64_t dims[3] = {40, 30, 20}, per[3] = {6, 5, 4}, pad = 3;
    tf_tensor X;
    tf_ktensor K;
    tf_cpd_report rep;
    tf_cpd_opts o;
    planted_sparse(3, dims, 3, per, pad, 41, &X);
    /* which slices are empty: the pads, and rows no factor column picked */
    unsigned char *empty[3];
    uint64_t n_empty = 0;
    for (uint32_t m = 0; m < 3; ++m) {
        empty[m] = malloc(dims[m]);
        memset(empty[m], 1, dims[m]);
        for (uint64_t k = 0; k < X.nnz; ++k) empty[m][X.ind[m][k]] = 0;
        for (uint64_t i = 0; i < dims[m]; ++i) n_empty += empty[m][i];
    }
    CHECK(n_empty >= 6 * pad);
    for (unsigned f = 0; f < NFORMATS; ++f) {
        cpd_opts(&o, formats[f], 5, 20, 0.0); /* rank above the planted 3 */
        run_cpd(&X, &o, &K, &rep, NULL, 1e-6, "empty slices");
        for (uint32_t m = 0; m < 3 && K.lambda; ++m) {
            int zero = 1;
            for (uint64_t i = 0; i < K.dims[m]; ++i) {
                if (!empty[m][i]) continue;
                for (uint64_t r = 0; r < K.rank; ++r) zero &= K.factors[m].data[i * K.rank + r] == 0.0;
            }
            CHECKF(zero, "%s: mode %u: rows of empty slices are not zero", tf_format_name(formats[f]), m + 1);
        }
        tf_ktensor_free(&K);
    }
    for (uint32_t m = 0; m < 3; ++m) free(empty[m]);
    tf_tensor_free(&X);
}

/* (e) rank above what two modes can span: V = G_2 * G_3 (Hadamard) has
 * rank <= 2 * 3 < 8, so the Cholesky solve must fall back to pinv. */
static void test_pinv_fallback(void)
{
    const uint64_t dims[3] = {20, 2, 3};
    tf_tensor X;
    tf_ktensor K;
    tf_cpd_report rep;
    tf_cpd_opts o;
    random_sparse(3, dims, 100, 51, &X);
    for (unsigned f = 0; f < NFORMATS; ++f) {
        cpd_opts(&o, formats[f], 8, 10, 0.0);
        /* fit ~ 1: both fits carry ~sqrt(eps) cancellation error */
        double fit = run_cpd(&X, &o, &K, &rep, NULL, 1e-6, "rank-deficient");
        CHECKF(rep.pinv_fallbacks > 0, "%s: no pinv fallback", tf_format_name(formats[f]));
        /* a 20 x 6 matricisation has rank <= 6: rank 8 must fit it exactly */
        CHECKF(fit > 0.99, "%s: rank-deficient fit %g", tf_format_name(formats[f]), fit);
        tf_ktensor_free(&K);
    }
    tf_tensor_free(&X);
}

/* (f) every real .tns.xz tensor in the real-data directory. */
static void cpd_real_tensor(const char *name, const char *path, tf_tensor *X, void *user)
{
    tf_ktensor K;
    tf_cpd_report rep;
    tf_cpd_opts o;
    cpd_opts(&o, TF_FORMAT_AUTO, 8, 4, 0.0);
    double fit = run_cpd(X, &o, &K, &rep, NULL, 1e-9, name);
    CHECK(rep.iters == 4);
    tf_ktensor_free(&K);
    tf_cpd_update u; /* AO-ADMM, every mode non-negative: no entry below zero */
    tf_cpd_report nn;
    admm_opts(&o, &u, TF_FORMAT_AUTO, 8, 4, 0.0);
    for (uint32_t m = 0; m < X->order; ++m) u.mode[m].nonneg = 1;
    run_cpd(X, &o, &K, &nn, NULL, 1e-9, name);
    CHECKF(count_entries(&K, 1) == 0 && nn.inner_iters > 0, "%s, nonneg: %llu negative entries, %llu inner iterations",
           name, (unsigned long long)count_entries(&K, 1), (unsigned long long)nn.inner_iters);
    printf("%s: nnz %llu, rank 8, 4 iterations: fit %.6f, %.3f s (mttkrp %.3f s, dense %.3f s), "
           "%llu pinv fallbacks\n", name, (unsigned long long)X->nnz, fit, rep.t_total,
           rep.t_mttkrp[0] + rep.t_mttkrp[1] + rep.t_mttkrp[2] + rep.t_mttkrp[3] + rep.t_mttkrp[4],
           rep.t_dense, (unsigned long long)rep.pinv_fallbacks);
    printf("%s: nonneg (AO-ADMM), 4 iterations: fit %.6f, %llu inner iterations, %.3f s (dense %.3f s)\n", name,
           nn.fit, (unsigned long long)nn.inner_iters, nn.t_total, nn.t_dense);
    tf_ktensor_free(&K);
}

static void test_real_data(void)
{
    static const char *const tns[] = {".tns.xz", NULL};
    const int count = tf_for_each_data_file("test_cpd", tns, cpd_real_tensor, NULL);
    if (count >= 0) CHECKF(count > 0, "no .tns.xz file in %s", tf_test_data_dir());
}

/* (h) the driver follows a plain-loop CP-ALS (reference MTTKRP, loop Grams,
 * Gauss-Jordan inverse, the same documented initialisation: uniform [0,1)
 * from tf_rng(seed) in mode, row, column order) fit by fit. */
static int inverse_ref(double *A, uint64_t n, double *Inv)
{
    for (uint64_t i = 0; i < n; ++i)
        for (uint64_t j = 0; j < n; ++j) Inv[i * n + j] = i == j;
    for (uint64_t c = 0; c < n; ++c) {
        uint64_t p = c;
        for (uint64_t i = c + 1; i < n; ++i)
            if (fabs(A[i * n + c]) > fabs(A[p * n + c])) p = i;
        if (A[p * n + c] == 0.0) return 0;
        for (uint64_t j = 0; j < n; ++j) {
            double t = A[c * n + j]; A[c * n + j] = A[p * n + j]; A[p * n + j] = t;
            t = Inv[c * n + j]; Inv[c * n + j] = Inv[p * n + j]; Inv[p * n + j] = t;
        }
        double d = A[c * n + c];
        for (uint64_t j = 0; j < n; ++j) { A[c * n + j] /= d; Inv[c * n + j] /= d; }
        for (uint64_t i = 0; i < n; ++i) {
            if (i == c) continue;
            double f = A[i * n + c];
            for (uint64_t j = 0; j < n; ++j) { A[i * n + j] -= f * A[c * n + j]; Inv[i * n + j] -= f * Inv[c * n + j]; }
        }
    }
    return 1;
}

/* AO-ADMM's inner iterations, plainly (the rules of src/cpu/admm.c):
 * H (I x R) from the warm start, U the dual, Mn the MTTKRP, V the normal
 * matrix with the ridge; returns the iterations run. */
static uint32_t reference_admm(const double *Mn, double *H, double *U, uint64_t I, uint64_t R, const double *V,
                               const tf_cpd_constraint *c, const tf_cpd_update *u)
{
    double rho = 0.0, *W = malloc(R * R * sizeof *W), *Wi = malloc(R * R * sizeof *Wi);
    double *Ht = malloc(I * R * sizeof *Ht);
    for (uint64_t r = 0; r < R; ++r) rho += V[r * R + r] / (double)R;
    if (!(rho > 0.0)) rho = 1.0;
    for (uint64_t e = 0; e < R * R; ++e) W[e] = V[e] + (e % (R + 1) == 0 ? rho : 0.0);
    CHECK(inverse_ref(W, R, Wi));
    uint32_t it = 0;
    while (it < u->max_inner) {
        double pr = 0.0, dr = 0.0, hn = 0.0, un = 0.0;
        for (uint64_t i = 0; i < I; ++i)
            for (uint64_t r = 0; r < R; ++r) {
                double v = 0.0;
                for (uint64_t q = 0; q < R; ++q) v += (Mn[i * R + q] + rho * (H[i * R + q] + U[i * R + q])) * Wi[q * R + r];
                Ht[i * R + r] = v;
            }
        for (uint64_t e = 0; e < I * R; ++e) {
            const double t = c->l1 / rho, v = Ht[e] - U[e];
            double h = v > t ? v - t : v < -t ? v + t : 0.0;
            if (c->nonneg && h < 0.0) h = 0.0;
            pr += (h - Ht[e]) * (h - Ht[e]);
            dr += (h - H[e]) * (h - H[e]);
            U[e] += h - Ht[e];
            H[e] = h;
            hn += h * h;
            un += U[e] * U[e];
        }
        ++it;
        if (sqrt(pr) <= u->inner_tol * sqrt(hn) && sqrt(dr) <= u->inner_tol * fmax(sqrt(un), u->inner_tol * sqrt(hn)))
            break;
    }
    free(W);
    free(Wi);
    free(Ht);
    return it;
}

/* CP-ALS (u NULL) or AO-ADMM (u's constraints) by plain loops, from the
 * random start of seed: fits[it] per iteration, inner[it] its ADMM iterations. */
static void reference_cp(const tf_tensor *X, uint64_t R, uint32_t iters, uint64_t seed, const tf_cpd_update *u,
                         double *fits, uint32_t *inner)
{
    const uint32_t N = X->order;
    tf_matrix A[TF_MAX_ORDER], M;
    double *G[TF_MAX_ORDER], *U[TF_MAX_ORDER], *V = malloc(R * R * sizeof *V), *Vi = malloc(R * R * sizeof *Vi);
    double *W = malloc(R * R * sizeof *W); /* inverse_ref's working copy: V is used again (ADMM) */
    double *LS = NULL;                      /* the least-squares solution, maxdim x R */
    double *lambda = malloc(R * sizeof *lambda), normx2 = 0.0;
    uint64_t maxdim = 0;
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    for (uint32_t m = 0; m < N; ++m) {
        CHECK_OK(tf_matrix_alloc(&A[m], X->dims[m], R));
        for (uint64_t e = 0; e < X->dims[m] * R; ++e) A[m].data[e] = tf_rng_uniform(&rng);
        G[m] = malloc(R * R * sizeof *G[m]);
        U[m] = calloc(X->dims[m] * R, sizeof *U[m]);
        maxdim = X->dims[m] > maxdim ? X->dims[m] : maxdim;
    }
    for (uint64_t r = 0; r < R; ++r) lambda[r] = 1.0;
    for (uint64_t k = 0; k < X->nnz; ++k) normx2 += X->vals[k] * X->vals[k];
    CHECK_OK(tf_matrix_alloc(&M, maxdim, R));
    LS = malloc(maxdim * R * sizeof *LS);
    for (uint32_t it = 0; it < iters; ++it) {
        if (inner) inner[it] = 0;
        for (uint32_t n = 0; n < N; ++n) {
            const tf_cpd_constraint *c = u ? &u->mode[n] : NULL;
            const int prox = c && (c->nonneg || c->l1 > 0.0);
            for (uint32_t m = 0; m < N; ++m)
                for (uint64_t r = 0; r < R; ++r)
                    for (uint64_t q = 0; q < R; ++q) {
                        double g = 0.0;
                        for (uint64_t i = 0; i < X->dims[m]; ++i) g += A[m].data[i * R + r] * A[m].data[i * R + q];
                        G[m][r * R + q] = g;
                    }
            for (uint64_t e = 0; e < R * R; ++e) {
                V[e] = 1.0;
                for (uint32_t m = 0; m < N; ++m) V[e] *= m == n ? 1.0 : G[m][e];
                if (c && e % (R + 1) == 0) V[e] += c->l2;
            }
            M.rows = X->dims[n];
            CHECK_OK(tf_mttkrp_reference(X, n, A, &M));
            const int project_only = prox && c->nonneg && !(c->l1 > 0.0);
            int solved = 0;
            if (prox && it > 0) /* ADMM's warm start in the weights' scale */
                for (uint64_t e = 0; e < X->dims[n] * R; ++e) {
                    A[n].data[e] *= lambda[e % R];
                    U[n][e] *= lambda[e % R];
                }
            if (!prox || it == 0 || project_only) {
                /* the least-squares solution: ALS's update, ADMM's first start
                 * (U = 0), and non-negativity's answer when it has no negative entry */
                memcpy(W, V, R * R * sizeof *W);
                CHECK(inverse_ref(W, R, Vi));
                int neg = 0;
                for (uint64_t i = 0; i < X->dims[n]; ++i)
                    for (uint64_t r = 0; r < R; ++r) {
                        double v = 0.0;
                        for (uint64_t q = 0; q < R; ++q) v += M.data[i * R + q] * Vi[q * R + r];
                        LS[i * R + r] = v;
                        neg |= v < 0.0;
                    }
                if (!prox || it == 0 || !neg) memcpy(A[n].data, LS, X->dims[n] * R * sizeof *LS);
                if (project_only && !neg) {
                    for (uint64_t e = 0; e < X->dims[n] * R; ++e) U[n][e] = 0.0;
                    solved = 1;
                }
            }
            if (prox && !solved) inner[it] += reference_admm(M.data, A[n].data, U[n], X->dims[n], R, V, c, u);
            for (uint64_t r = 0; r < R; ++r) {
                double l = 0.0;
                for (uint64_t i = 0; i < X->dims[n]; ++i) {
                    double a = A[n].data[i * R + r];
                    l = it == 0 ? l + a * a : fmax(l, fabs(a));
                }
                lambda[r] = it == 0 ? sqrt(l) : fmax(l, 1.0);
                for (uint64_t i = 0; i < X->dims[n]; ++i) A[n].data[i * R + r] /= lambda[r];
                for (uint64_t i = 0; prox && i < X->dims[n]; ++i) U[n][i * R + r] /= lambda[r];
            }
        }
        double inner = 0.0, knorm2 = 0.0;
        for (uint64_t i = 0; i < X->dims[N - 1]; ++i)
            for (uint64_t r = 0; r < R; ++r) inner += lambda[r] * M.data[i * R + r] * A[N - 1].data[i * R + r];
        for (uint64_t r = 0; r < R; ++r)
            for (uint64_t q = 0; q < R; ++q) {
                double h = lambda[r] * lambda[q];
                for (uint32_t m = 0; m < N; ++m) {
                    double g = 0.0;
                    for (uint64_t i = 0; i < X->dims[m]; ++i) g += A[m].data[i * R + r] * A[m].data[i * R + q];
                    h *= g;
                }
                knorm2 += h;
            }
        fits[it] = 1.0 - sqrt(fmax(normx2 + knorm2 - 2.0 * inner, 0.0)) / sqrt(normx2);
    }
    for (uint32_t m = 0; m < N; ++m) { tf_matrix_free(&A[m]); free(G[m]); free(U[m]); }
    tf_matrix_free(&M);
    free(V); free(Vi); free(W); free(LS); free(lambda);
}

/* The reference comparisons' tensors: t = 0 of order 3, t = 1 of order 4. */
static void reference_tensor(int t, tf_tensor *X)
{
    const uint64_t d3[3] = {25, 20, 15}, d4[4] = {12, 11, 10, 9};
    if (t == 0) random_sparse(3, d3, 1500, 71, X);
    else random_sparse(4, d4, 2500, 72, X);
}

static void test_against_reference(void)
{
    const uint32_t iters = 12;
    for (int t = 0; t < 2; ++t) {
        tf_tensor X;
        reference_tensor(t, &X);
        double ref[12];
        reference_cp(&X, 5, iters, 99, NULL, ref, NULL);
        for (unsigned f = 0; f < NFORMATS; ++f) {
            tf_ktensor K;
            tf_cpd_report rep;
            tf_cpd_opts o;
            fit_log log;
            cpd_opts(&o, formats[f], 5, iters, 0.0);
            o.seed = 99;
            run_cpd(&X, &o, &K, &rep, &log, 1e-10, "reference comparison");
            double worst = 0.0;
            for (uint32_t i = 0; i < log.n && i < iters; ++i) worst = fmax(worst, fabs(log.fit[i] - ref[i]));
            CHECKF(log.n == iters && worst < 1e-9, "order %u (%s): fits differ from the plain-loop "
                   "CP-ALS by %g", X.order, tf_format_name(formats[f]), worst);
            tf_ktensor_free(&K);
        }
        tf_tensor_free(&X);
    }
}

/* ------------------------------------------------------------ AO-ADMM */

/* Options of an AO-ADMM run (u holds the update; no constraint set yet). */
static void admm_opts(tf_cpd_opts *o, tf_cpd_update *u, tf_format fmt, uint64_t rank, uint32_t iters, double tol)
{
    cpd_opts(o, fmt, rank, iters, tol);
    tf_cpd_update_default(u);
    u->kind = TF_CPD_UPDATE_AO_ADMM;
    o->update = u;
}

/* Entries of the factors and lambda below zero -- -0 counted too -- and
 * those that are zero. */
static uint64_t count_entries(const tf_ktensor *K, int negative)
{
    uint64_t n = 0;
    for (uint64_t r = 0; r < K->rank; ++r) n += negative ? signbit(K->lambda[r]) != 0 : K->lambda[r] == 0.0;
    for (uint32_t m = 0; m < K->order; ++m)
        for (uint64_t e = 0; e < K->dims[m] * K->rank; ++e)
            n += negative ? signbit(K->factors[m].data[e]) != 0 : K->factors[m].data[e] == 0.0;
    return n;
}

/* The driver's AO-ADMM follows the plain-loop one (reference_cp) fit by fit
 * and inner count by inner count: non-negativity, signed and non-negative
 * L1, ridge (closed form alone, ADMM beside a proximal operator). */
static void test_admm_reference(void)
{
    const uint32_t iters = 12;
    for (int t = 0; t < 2; ++t) {
        tf_tensor X;
        reference_tensor(t, &X);
        for (int c = 0; c < 4; ++c) {
            tf_cpd_opts o;
            tf_cpd_update u;
            admm_opts(&o, &u, TF_FORMAT_CSF, 5, iters, 0.0);
            o.seed = 99;
            const char *what[] = {"nonneg", "nonneg + l1 0.5 on mode 1 + l2 2 on mode 3", "l1 0.3 on mode 2",
                                  "l2 1 on every mode"};
            for (uint32_t m = 0; m < X.order; ++m) {
                u.mode[m].nonneg = c <= 1;
                u.mode[m].l1 = c == 1 && m == 0 ? 0.5 : c == 2 && m == 1 ? 0.3 : 0.0;
                u.mode[m].l2 = c == 1 && m == 2 ? 2.0 : c == 3 ? 1.0 : 0.0;
            }
            double ref[12];
            uint32_t ref_inner[12];
            reference_cp(&X, 5, iters, 99, &u, ref, ref_inner);
            for (unsigned f = 0; f < NFORMATS; ++f) {
                tf_ktensor K;
                tf_cpd_report rep;
                fit_log log;
                o.format = formats[f];
                run_cpd(&X, &o, &K, &rep, &log, 1e-10, what[c]);
                double worst = 0.0;
                int inner_same = 1;
                uint64_t inner_sum = 0;
                for (uint32_t i = 0; i < log.n && i < iters; ++i) {
                    worst = fmax(worst, fabs(log.fit[i] - ref[i]));
                    inner_same &= log.inner[i] == ref_inner[i];
                    inner_sum += log.inner[i];
                }
                CHECKF(log.n == iters && worst < 1e-9 && inner_same && rep.inner_iters == inner_sum,
                       "order %u, %s (%s): fits differ from the plain-loop AO-ADMM by %g, inner counts %s (%u, "
                       "reference %u in the first iteration)", X.order, what[c], tf_format_name(formats[f]), worst,
                       inner_same ? "equal" : "differ", log.inner[0], ref_inner[0]);
                CHECKF(c == 3 ? rep.inner_iters == 0 : rep.inner_iters > 0, "%s: %llu inner iterations", what[c],
                       (unsigned long long)rep.inner_iters);
                if (c <= 1)
                    CHECKF(count_entries(&K, 1) == 0, "%s: %llu negative entries", what[c],
                           (unsigned long long)count_entries(&K, 1));
                tf_ktensor_free(&K);
            }
        }
        tf_tensor_free(&X);
    }
}

/* What the constraints do: non-negative factors everywhere (and a planted
 * non-negative model found as CP-ALS finds it), more zeros as l1 grows,
 * smaller weights as l2 grows, the same bits run after run, the l1 penalty
 * following the values through the front end's power-of-two scaling, and
 * --device auto running it on the CPU. */
static void test_admm_properties(void)
{
    tf_cpd_opts o;
    tf_cpd_update u;
    tf_ktensor K, K2;
    tf_cpd_report rep;
    fit_log log, log2;

    /* a planted model with factors in [0, 1): AO-ADMM finds CP-ALS's fit */
    const uint64_t d3[3] = {12, 10, 8};
    tf_tensor P;
    planted_dense(3, d3, 3, 13, &P);
    cpd_opts(&o, TF_FORMAT_CSF, 3, 300, 1e-12);
    const double f_als = run_cpd(&P, &o, &K, &rep, NULL, 1e-6, "planted, ALS");
    tf_ktensor_free(&K);
    admm_opts(&o, &u, TF_FORMAT_CSF, 3, 300, 1e-12);
    for (uint32_t m = 0; m < 3; ++m) u.mode[m].nonneg = 1;
    const double f_nn = run_cpd(&P, &o, &K, &rep, NULL, 1e-6, "planted, nonneg");
    CHECKF(f_nn >= 0.99 && fabs(f_nn - f_als) <= 1e-3, "planted non-negative model: AO-ADMM fit %.9f, CP-ALS %.9f",
           f_nn, f_als);
    CHECKF(count_entries(&K, 1) == 0, "planted, nonneg: negative entries");
    tf_ktensor_free(&K);
    tf_tensor_free(&P);

    /* a random tensor: nonneg (bit-identical twice), then l1 and l2 sweeps */
    const uint64_t dims[3] = {40, 30, 20};
    tf_tensor X;
    random_sparse(3, dims, 3000, 31, &X);
    admm_opts(&o, &u, TF_FORMAT_AUTO, 6, 30, 0.0);
    for (uint32_t m = 0; m < 3; ++m) u.mode[m].nonneg = 1;
    run_cpd(&X, &o, &K, &rep, &log, 1e-9, "random, nonneg");
    run_cpd(&X, &o, &K2, &rep, &log2, 1e-9, "random, nonneg again");
    CHECKF(count_entries(&K, 1) == 0, "random, nonneg: %llu negative entries", (unsigned long long)count_entries(&K, 1));
    CHECKF(log.n == log2.n && !memcmp(log.fit, log2.fit, log.n * sizeof *log.fit) &&
           !memcmp(log.inner, log2.inner, log.n * sizeof *log.inner) && same_ktensor(&K, &K2),
           "random, nonneg: two runs differ");
    tf_ktensor_free(&K);
    tf_ktensor_free(&K2);

    uint64_t zeros_prev = 0;
    const double l1s[] = {0.0, 0.3, 1.0, 3.0, 10.0};
    for (size_t k = 0; k < sizeof l1s / sizeof *l1s; ++k) {
        char what[64];
        snprintf(what, sizeof what, "random, nonneg + l1 %g", l1s[k]);
        for (uint32_t m = 0; m < 3; ++m) u.mode[m].l1 = l1s[k];
        run_cpd(&X, &o, &K, &rep, NULL, 1e-9, what);
        const uint64_t z = count_entries(&K, 0);
        CHECKF(count_entries(&K, 1) == 0 && z >= zeros_prev, "%s: %llu zeros (smaller l1: %llu), %llu negative", what,
               (unsigned long long)z, (unsigned long long)zeros_prev, (unsigned long long)count_entries(&K, 1));
        CHECKF(k == 0 || z > 0, "%s: no zero", what);
        printf("%s: %llu zero entries of %llu, fit %.6f, %llu inner iterations\n", what, (unsigned long long)z,
               (unsigned long long)((dims[0] + dims[1] + dims[2] + 1) * 6), rep.fit, (unsigned long long)rep.inner_iters);
        if (k + 1 == sizeof l1s / sizeof *l1s) CHECKF(z > zeros_prev, "%s: no more zeros than l1 %g", what, l1s[k - 1]);
        zeros_prev = z;
        tf_ktensor_free(&K);
    }

    double norm_prev = INFINITY;
    const double l2s[] = {0.0, 10.0, 100.0};
    for (size_t k = 0; k < sizeof l2s / sizeof *l2s; ++k) {
        char what[64];
        snprintf(what, sizeof what, "random, l2 %g", l2s[k]);
        admm_opts(&o, &u, TF_FORMAT_AUTO, 6, 30, 0.0);
        for (uint32_t m = 0; m < 3; ++m) u.mode[m].l2 = l2s[k];
        run_cpd(&X, &o, &K, &rep, NULL, 1e-9, what);
        double norm = 0.0; /* the factors have unit columns: the weights carry the norm */
        for (uint64_t r = 0; r < K.rank; ++r) norm += K.lambda[r] * K.lambda[r];
        CHECKF(norm < norm_prev && rep.inner_iters == 0, "%s: sum of squared weights %g (smaller l2: %g), %llu inner "
               "iterations (a ridge alone is solved in closed form)", what, norm, norm_prev,
               (unsigned long long)rep.inner_iters);
        norm_prev = norm;
        tf_ktensor_free(&K);
    }

    /* values x 2^60 with l1 x 2^60 are the run at values ~1 (the front end
     * scales both back exactly) */
    double amax = 0.0;
    for (uint64_t k = 0; k < X.nnz; ++k) amax = fmax(amax, X.vals[k]);
    for (uint64_t k = 0; k < X.nnz; ++k) X.vals[k] = ldexp(X.vals[k], -ilogb(amax));
    tf_tensor Xs;
    CHECK_OK(tf_tensor_copy(&X, &Xs));
    for (uint64_t k = 0; k < Xs.nnz; ++k) Xs.vals[k] = ldexp(Xs.vals[k], 60);
    admm_opts(&o, &u, TF_FORMAT_AUTO, 4, 10, 0.0);
    for (uint32_t m = 0; m < 3; ++m) u.mode[m].nonneg = 1, u.mode[m].l1 = 0.05;
    run_cpd(&X, &o, &K, &rep, &log, 1e-9, "l1 0.05, values ~1");
    for (uint32_t m = 0; m < 3; ++m) u.mode[m].l1 = ldexp(0.05, 60);
    run_cpd(&Xs, &o, &K2, &rep, &log2, 1e-9, "l1 0.05 x 2^60, values x 2^60");
    CHECKF(log.n == log2.n && !memcmp(log.fit, log2.fit, log.n * sizeof *log.fit), "l1 with values x 2^60: fits "
           "%.17g, at values ~1 %.17g", log2.fit[log2.n - 1], log.fit[log.n - 1]);
    tf_ktensor_free(&K);
    tf_ktensor_free(&K2);
    tf_tensor_free(&Xs);

    /* auto: the CPU, whatever the machine (no GPU backend has AO-ADMM yet) */
    admm_opts(&o, &u, TF_FORMAT_AUTO, 4, 3, 0.0);
    o.backend = TF_BACKEND_AUTO;
    u.mode[1].nonneg = 1;
    run_cpd(&X, &o, &K, &rep, NULL, 1e-9, "auto, nonneg");
    CHECKF(!strncmp(rep.plan, "cpu", 3), "auto, nonneg: plan '%s', note '%s'", rep.plan, rep.note);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* (g) bad options and inputs fail cleanly with a message. */
/* Values near the ends of the double range (issue 8): the run is scaled
 * inside the driver, so the fit equals the run at values ~1 (bit for bit
 * when the scale is a power of two) and lambda carries the scale. */
static void test_extreme_values(void)
{
    const uint64_t dims[3] = {12, 10, 8};
    tf_tensor X;
    random_sparse(3, dims, 300, 71, &X);
    double amax = 0.0; /* the largest |value| to [1, 2), where the driver scales values to */
    for (uint64_t k = 0; k < X.nnz; ++k) amax = fmax(amax, fabs(X.vals[k]));
    for (uint64_t k = 0; k < X.nnz; ++k) X.vals[k] = ldexp(X.vals[k], -ilogb(amax));
    tf_cpd_opts o;
    cpd_opts(&o, TF_FORMAT_CSF, 3, 15, 0.0);
    tf_ktensor K0;
    tf_cpd_report rep;
    const double f0 = run_cpd(&X, &o, &K0, &rep, NULL, 1e-10, "values ~1");
    const double n0 = sqrt(tf_tensor_norm2(&X));
    CHECKF(fabs(tf_tensor_norm(&X) - n0) <= 1e-15 * n0, "tf_tensor_norm %.17g vs %.17g", tf_tensor_norm(&X), n0);
    static const struct { int pow2; double scale; } cases[] = {
        {-664, 0}, {532, 0}, {-1000, 0}, {60, 0}, {0, 1e-200}, {0, 1e160}, {0, 1e-300}, {0, 1e300}, {0, 1e-45}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        const double scale = cases[c].pow2 ? ldexp(1.0, cases[c].pow2) : cases[c].scale;
        char what[64];
        snprintf(what, sizeof what, "values x %g", scale);
        tf_tensor Xs;
        CHECK_OK(tf_tensor_copy(&X, &Xs));
        for (uint64_t k = 0; k < Xs.nnz; ++k) Xs.vals[k] *= scale;
        const double nx = tf_tensor_norm(&Xs);
        CHECKF(fabs(nx / scale - n0) <= 1e-14 * n0, "%s: ||X|| = %.17g, expected %.17g", what, nx, n0 * scale);
        tf_ktensor K;
        const double f = run_cpd(&Xs, &o, &K, &rep, NULL, 1e-10, what);
        if (cases[c].pow2) { /* exact: identical run, lambda times the power of two */
            CHECKF(f == f0, "%s: fit %.17g, at values ~1 %.17g", what, f, f0);
            for (uint64_t r = 0; r < K.rank && K.lambda; ++r)
                CHECKF(K.lambda[r] == ldexp(K0.lambda[r], cases[c].pow2), "%s: lambda %llu", what,
                       (unsigned long long)r);
            for (uint64_t e = 0; K.lambda && e < dims[0] * K.rank; ++e)
                CHECKF(K.factors[0].data[e] == K0.factors[0].data[e], "%s: factor 1 entry %llu", what,
                       (unsigned long long)e);
        } else {
            CHECKF(fabs(f - f0) <= 1e-9, "%s: fit %.17g, at values ~1 %.17g", what, f, f0);
            for (uint64_t r = 0; r < K.rank && K.lambda; ++r)
                CHECKF(fabs(K.lambda[r] / scale - K0.lambda[r]) <= 1e-6 * K0.lambda[r], "%s: lambda %llu = %g",
                       what, (unsigned long long)r, K.lambda[r]);
        }
        double direct = NAN; /* the direct fit of the ktensor found at values ~1, rescaled */
        for (uint64_t r = 0; r < K0.rank; ++r) K0.lambda[r] *= scale;
        CHECK_OK(tf_ktensor_fit(&Xs, &K0, &direct));
        for (uint64_t r = 0; r < K0.rank; ++r) K0.lambda[r] /= scale;
        CHECKF(fabs(direct - f0) <= 1e-9, "%s: direct fit %.17g, expected %.17g", what, direct, f0);
        tf_ktensor_free(&K);
        tf_tensor_free(&Xs);
    }
    /* so large that lambda itself may exceed the double range: a clear error, or a finite model */
    tf_tensor Xh;
    CHECK_OK(tf_tensor_copy(&X, &Xh));
    for (uint64_t k = 0; k < Xh.nnz; ++k) Xh.vals[k] *= 1e307;
    tf_ktensor K;
    tf_status s = tf_cpd(&Xh, &o, &K, NULL);
    CHECKF(s == TF_ERR_RANGE || (s == TF_OK && ktensor_finite(&K)), "values x 1e307: %s: %s", tf_status_name(s),
           tf_last_error());
    if (s == TF_OK) tf_ktensor_free(&K);
    tf_tensor_free(&Xh);
    tf_ktensor_free(&K0);
    tf_tensor_free(&X);
}

/* ------------------------------------------------------- given starts */

static void expect_failure(const tf_tensor *X, const tf_cpd_opts *o, tf_status want, const char *what);

static int same_ktensor(const tf_ktensor *a, const tf_ktensor *b)
{
    if (a->order != b->order || a->rank != b->rank || memcmp(a->lambda, b->lambda, a->rank * sizeof(double)))
        return 0;
    for (uint32_t m = 0; m < a->order; ++m)
        if (memcmp(a->factors[m].data, b->factors[m].data, a->dims[m] * a->rank * sizeof(double))) return 0;
    return 1;
}

/* The random start, made here as the algorithm makes it: one stream from the
 * seed in mode, row, column order, lambda 1. */
static void random_start(const tf_tensor *X, uint64_t R, uint64_t seed, tf_ktensor *K)
{
    CHECK_OK(tf_ktensor_alloc(K, X->order, X->dims, R));
    tf_rng rng;
    tf_rng_seed(&rng, seed);
    for (uint32_t m = 0; m < X->order; ++m)
        for (uint64_t e = 0; e < X->dims[m] * R; ++e) K->factors[m].data[e] = tf_rng_uniform(&rng);
    for (uint64_t r = 0; r < R; ++r) K->lambda[r] = 1.0;
}

/* tf_cpd_opts.init: the random start given explicitly gives the identical
 * run (with and without lambda, also on values scaled far from 1); a
 * previous result continues its run; a start that does not fit fails. */
static void test_given_start(void)
{
    const uint64_t dims[3] = {40, 30, 20};
    tf_tensor X, Xs;
    random_sparse(3, dims, 3000, 71, &X);
    CHECK_OK(tf_tensor_copy(&X, &Xs));
    for (uint64_t k = 0; k < Xs.nnz; ++k) Xs.vals[k] *= 1e-200; /* the scaled path of the front end */
    for (unsigned f = 0; f < NFORMATS; ++f)
        for (int scaled = 0; scaled < 2; ++scaled)
            for (int with_lambda = 0; with_lambda < 2; ++with_lambda) {
                const tf_tensor *T = scaled ? &Xs : &X;
                char what[96];
                snprintf(what, sizeof what, "%s%s, start%s lambda", tf_format_name(formats[f]),
                         scaled ? ", values x 1e-200" : "", with_lambda ? " with" : " without");
                tf_cpd_opts o;
                cpd_opts(&o, formats[f], 5, 6, 0.0);
                o.threads = 2;
                fit_log a, b;
                tf_ktensor Ka, Kb, S;
                tf_cpd_report rep;
                run_cpd(T, &o, &Ka, &rep, &a, 1e-6, what);
                random_start(T, 5, o.seed, &S);
                double *lambda = S.lambda;
                if (!with_lambda) S.lambda = NULL; /* NULL: ones */
                o.init = &S;
                o.seed = 12345; /* not used with a start */
                run_cpd(T, &o, &Kb, &rep, &b, 1e-6, what);
                S.lambda = lambda;
                CHECKF(a.n == 6 && b.n == 6 && memcmp(a.fit, b.fit, sizeof a.fit[0] * 6) == 0 && same_ktensor(&Ka, &Kb),
                       "%s: the random start given explicitly ran differently", what);
                tf_ktensor_free(&Ka);
                tf_ktensor_free(&Kb);
                tf_ktensor_free(&S);
            }

    /* a result continues its run: the first fit is no worse than the last */
    for (unsigned f = 0; f < NFORMATS; ++f) {
        tf_cpd_opts o;
        cpd_opts(&o, formats[f], 4, 5, 0.0);
        fit_log a, b;
        tf_ktensor K1, K2;
        tf_cpd_report rep;
        double f1 = run_cpd(&X, &o, &K1, &rep, &a, 1e-6, "first 5 iterations");
        o.init = &K1;
        o.max_iters = 3;
        run_cpd(&X, &o, &K2, &rep, &b, 1e-6, "continued");
        CHECKF(b.n == 3 && b.fit[0] >= f1 - 1e-12 && b.fit[2] >= b.fit[0] - 1e-12,
               "%s: continued from fit %.17g, its fits %.17g %.17g", tf_format_name(formats[f]), f1, b.fit[0],
               b.fit[2]);
        tf_ktensor_free(&K2);
        tf_ktensor_free(&K1);
    }

    /* starts that do not fit */
    tf_cpd_opts o;
    cpd_opts(&o, TF_FORMAT_CSF, 3, 2, 0.0);
    tf_ktensor S;
    random_start(&X, 3, 1, &S);
    o.init = &S;
    o.rank = 4; expect_failure(&X, &o, TF_ERR_ARG, "start of another rank");
    o.rank = 3;
    S.order = 2; expect_failure(&X, &o, TF_ERR_ARG, "start of another order");
    S.order = 3;
    S.factors[1].rows = 29; expect_failure(&X, &o, TF_ERR_ARG, "start factor of another shape");
    CHECKF(strstr(tf_last_error(), "initial factor 2 is 29 x 3, expected 30 x 3") != NULL, "message: %s",
           tf_last_error());
    S.factors[1].rows = 30;
    S.factors[2].data[7] = NAN; expect_failure(&X, &o, TF_ERR_ARG, "non-finite start");
    CHECKF(strstr(tf_last_error(), "initial factor 3 has a non-finite value at row 3, column 2") != NULL,
           "message: %s", tf_last_error());
    S.factors[2].data[7] = 0.5;
    S.lambda[1] = INFINITY; expect_failure(&X, &o, TF_ERR_ARG, "non-finite lambda");
    tf_ktensor_free(&S);
    tf_tensor_free(&Xs);
    tf_tensor_free(&X);
}

static void expect_failure(const tf_tensor *X, const tf_cpd_opts *o, tf_status want, const char *what)
{
    tf_ktensor K;
    memset(&K, 0xab, sizeof K);
    tf_status s = tf_cpd(X, o, &K, NULL);
    CHECKF(s == want, "%s: got %s, want %s", what, tf_status_name(s), tf_status_name(want));
    CHECKF(strlen(tf_last_error()) > 0, "%s: no message", what);
    CHECKF(K.lambda == NULL && K.factors[0].data == NULL, "%s: output not cleared", what);
}

static void test_bad_options(void)
{
    const uint64_t dims[3] = {10, 9, 8};
    tf_tensor X;
    random_sparse(3, dims, 200, 61, &X);
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    CHECK(o.rank == 10 && o.max_iters == 50 && o.tol == 1e-5 && o.seed == TF_DEFAULT_SEED &&
          o.threads == 0 && o.backend == TF_BACKEND_AUTO && o.format == TF_FORMAT_AUTO && !o.callback);

    o.rank = 0; expect_failure(&X, &o, TF_ERR_ARG, "rank 0");
    o.rank = 1u << 20; expect_failure(&X, &o, TF_ERR_ARG, "huge rank");
    o.rank = TF_MAX_RANK + 1; expect_failure(&X, &o, TF_ERR_ARG, "rank TF_MAX_RANK + 1");
    tf_cpd_opts_default(&o); o.max_iters = 0; expect_failure(&X, &o, TF_ERR_ARG, "0 iterations");
    tf_cpd_opts_default(&o); o.tol = -1e-3; expect_failure(&X, &o, TF_ERR_ARG, "negative tol");
    tf_cpd_opts_default(&o); o.tol = NAN; expect_failure(&X, &o, TF_ERR_ARG, "NaN tol");
    tf_cpd_opts_default(&o); o.tol = INFINITY; expect_failure(&X, &o, TF_ERR_ARG, "infinite tol");
    tf_cpd_opts_default(&o); o.threads = -2; expect_failure(&X, &o, TF_ERR_ARG, "negative threads");
    tf_cpd_opts_default(&o); o.backend = (tf_backend)9; expect_failure(&X, &o, TF_ERR_ARG, "bad backend");
    tf_cpd_opts_default(&o); o.format = (tf_format)42; expect_failure(&X, &o, TF_ERR_ARG, "bad format");
    tf_cpd_opts_default(&o); o.backend = TF_BACKEND_CPU; o.format = TF_FORMAT_BLCO;
    expect_failure(&X, &o, TF_ERR_UNAVAILABLE, "GPU format on the CPU");
    if (!tf_have_cuda()) {
        tf_cpd_opts_default(&o); o.backend = TF_BACKEND_GPU;
        expect_failure(&X, &o, TF_ERR_UNAVAILABLE, "GPU backend without CUDA");
    }
    tf_cpd_opts_default(&o);
    expect_failure(NULL, &o, TF_ERR_ARG, "no tensor");
    CHECK(tf_cpd(&X, &o, NULL, NULL) == TF_ERR_ARG);

    tf_tensor Z; /* ||X|| = 0: every value an explicit zero */
    CHECK_OK(tf_tensor_copy(&X, &Z));
    for (uint64_t k = 0; k < Z.nnz; ++k) Z.vals[k] = 0.0;
    expect_failure(&Z, &o, TF_ERR_ARG, "zero tensor");
    Z.nnz = 0;
    expect_failure(&Z, &o, TF_ERR_ARG, "empty tensor");
    tf_tensor_free(&Z);

    X.ind[1][3] = 9; /* index out of range */
    expect_failure(&X, &o, TF_ERR_RANGE, "invalid tensor");
    X.ind[1][3] = 0;
    X.vals[5] = NAN;
    expect_failure(&X, &o, TF_ERR_RANGE, "NaN value");
    X.vals[5] = 1.0;

    /* the update: size, kind, limits, constraints */
    static const struct {
        const char *what, *says;
    } bad_update[] = {
        {"update size 0", "tf_cpd_update.size is 0"},
        {"update kind 7", "unknown update kind 7"},
        {"max_inner 0", "max_inner 0 is outside 1..100000"},
        {"inner_tol 1", "inner_tol 1 is outside [0, 1)"},
        {"inner_tol NaN", "inner_tol nan is outside [0, 1)"},
        {"nonneg 2", "mode 2: nonneg is 2 (expected 0 or 1)"},
        {"l1 -1", "mode 1: l1 -1 and l2 0 must be finite numbers >= 0"},
        {"l2 inf", "mode 3: l1 0 and l2 inf must be finite numbers >= 0"},
        {"a constraint on mode 4 of 3", "mode 4 has a constraint, but the tensor has 3 modes"},
        {"ALS with a constraint", "mode 1 has a constraint (nonneg 1, l1 0, l2 0), which ALS does not impose"},
    };
    for (size_t c = 0; c < sizeof bad_update / sizeof *bad_update; ++c) {
        tf_cpd_update u;
        tf_cpd_opts_default(&o);
        tf_cpd_update_default(&u);
        CHECK(u.size == sizeof u && u.kind == TF_CPD_UPDATE_ALS && u.max_inner == 25 && u.inner_tol == 1e-2);
        u.kind = TF_CPD_UPDATE_AO_ADMM;
        o.update = &u;
        switch (c) {
        case 0: u.size = 0; break;
        case 1: u.kind = (tf_cpd_update_kind)7; break;
        case 2: u.max_inner = 0; break;
        case 3: u.inner_tol = 1.0; break;
        case 4: u.inner_tol = NAN; break;
        case 5: u.mode[1].nonneg = 2; break;
        case 6: u.mode[0].l1 = -1.0; break;
        case 7: u.mode[2].l2 = INFINITY; break;
        case 8: u.mode[3].nonneg = 1; break;
        default: u.kind = TF_CPD_UPDATE_ALS, u.mode[0].nonneg = 1; break;
        }
        expect_failure(&X, &o, TF_ERR_ARG, bad_update[c].what);
        CHECKF(strstr(tf_last_error(), bad_update[c].says) != NULL, "%s: message '%s'", bad_update[c].what,
               tf_last_error());
    }
    CHECK(!strcmp(tf_cpd_update_name(TF_CPD_UPDATE_ALS), "ALS") &&
          !strcmp(tf_cpd_update_name(TF_CPD_UPDATE_AO_ADMM), "AO-ADMM") &&
          !strcmp(tf_cpd_update_name((tf_cpd_update_kind)9), "unknown"));

    tf_ktensor K; /* tf_ktensor_fit argument checks */
    double fit;
    CHECK_OK(tf_ktensor_alloc(&K, 3, dims, 2));
    K.factors[2].rows = 7;
    CHECK(tf_ktensor_fit(&X, &K, &fit) == TF_ERR_ARG);
    K.factors[2].rows = 8;
    CHECK(tf_ktensor_fit(&X, NULL, &fit) == TF_ERR_ARG);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* tf_cpd_opts.stop: a flag set by the callback ends the run after that
 * iteration, a success with the factors so far and rep->stopped = 1. */
typedef struct {
    volatile int flag;
    uint32_t at;
} stop_at;

static void stop_after(const tf_cpd_iter *it, void *user)
{
    stop_at *s = user;
    if (it->iter == s->at) s->flag = 1;
}

static void test_stop_flag(void)
{
    const uint64_t dims[3] = {30, 20, 10};
    tf_tensor X;
    random_sparse(3, dims, 600, 7, &X);
    tf_cpd_opts o;
    tf_cpd_report full, rep;
    tf_ktensor K, K3;
    fit_log log;
    cpd_opts(&o, TF_FORMAT_AUTO, 4, 10, 0.0);
    run_cpd(&X, &o, &K, &full, &log, 1e-9, "stop: unstopped run");
    CHECK(full.iters == 10 && full.stopped == 0);
    stop_at st = {0, 3};
    cpd_opts(&o, TF_FORMAT_AUTO, 4, 10, 0.0);
    o.callback = stop_after;
    o.user = &st;
    o.stop = &st.flag;
    CHECK_OK(tf_cpd(&X, &o, &K3, &rep));
    CHECKF(rep.iters == 3 && rep.stopped == 1 && rep.converged == 0, "stop: %u iterations, stopped %d",
           rep.iters, rep.stopped);
    CHECKF(rep.fit == log.fit[2], "stop: fit %.15g, the unstopped run's third %.15g", rep.fit, log.fit[2]);
    double direct = NAN;
    CHECK_OK(tf_ktensor_fit(&X, &K3, &direct));
    CHECKF(fabs(direct - rep.fit) <= 1e-9, "stop: driver fit %.15g, direct %.15g", rep.fit, direct);
    tf_ktensor_free(&K);
    tf_ktensor_free(&K3);
    tf_tensor_free(&X);
}

int main(void)
{
    test_recovery();
    test_determinism();
    test_fit_agreement();
    test_empty_slices();
    test_pinv_fallback();
    test_against_reference();
    test_admm_reference();
    test_admm_properties();
    test_bad_options();
    test_given_start();
    test_stop_flag();
    test_extreme_values();
    test_real_data();
    return tf_test_finish("test_cpd");
}
