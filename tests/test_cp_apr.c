/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR (src/front/cp_apr.c, src/algo/cp_apr.c, the CPU backend): the Phi
 * pass and the log-likelihood sum against plain float64 loops on fresh
 * random inputs with poisoned outputs (heavy rows across blocks, empty
 * rows, a rank's row range, orders 2..5, fixed and other ranks; written to
 * and read from the Khatri-Rao cache); whole runs against a plain-loop
 * multiplicative-update CP-APR (pyttb's tt_cp_apr_mu written out); the same
 * bits on 1 and 3 threads and without the cache; the checks of the input,
 * the start and the options; the stop flag and convergence. */
#include <stdint.h>

#include "check.h"
#include "cpu/apr_phi.h"
#include "kt_test_util.h"
#include "tenfold.h"

/* ---------------------------------------------------------------- inputs */

/* nnz random counts (1..6) of order N in dims, canonical; with heavy, about
 * half of them on row 1 of mode heavy-1 (a row across many blocks of the
 * Phi pass). Indices from tt's sparse draw: empty rows at 0, the last and
 * every 2 mod 5 (dims >= 8). */
static void random_counts(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t nnz, uint32_t heavy, tf_tensor *X)
{
    CHECK_OK(tf_tensor_alloc(X, N, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < N; ++m) {
            uint32_t i;
            do i = (uint32_t)tf_rng_below(rng, dims[m]);
            while (dims[m] >= 8 && (i == 0 || i == dims[m] - 1 || i % 5 == 2));
            if (heavy == m + 1 && tf_rng_uniform(rng) < 0.5) i = 1;
            X->ind[m][k] = i;
        }
        X->vals[k] = (double)(1 + tf_rng_below(rng, 6));
    }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL));
}

/* Factors uniform in [0.05, 1.05) (no zero model values). */
static tf_ktensor positive_ktensor(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t R)
{
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, N, dims, R));
    for (uint32_t m = 0; m < N; ++m)
        for (uint64_t e = 0; e < dims[m] * R; ++e) K.factors[m].data[e] = 0.05 + tf_rng_uniform(rng);
    for (uint64_t r = 0; r < R; ++r) K.lambda[r] = 0.5 + tf_rng_uniform(rng);
    return K;
}

/* -------------------------------------------------------- the Phi pass */

/* The plain float64 Phi of mode n over the non-zeros of S, rows [lo, hi):
 * ref (dims[n] x R, zeroed here) and mag (the sums of |terms|). */
static void ref_phi(const tf_tensor *S, uint32_t n, const tf_ktensor *K, double eps, double *ref, double *mag)
{
    const uint64_t R = K->rank;
    memset(ref, 0, K->dims[n] * R * sizeof *ref);
    memset(mag, 0, K->dims[n] * R * sizeof *mag);
    double *p = malloc(R * sizeof *p);
    for (uint64_t j = 0; j < S->nnz; ++j) {
        for (uint64_t r = 0; r < R; ++r) p[r] = 1.0;
        for (uint32_t k = 0; k < S->order; ++k)
            if (k != n)
                for (uint64_t r = 0; r < R; ++r) p[r] *= K->factors[k].data[(uint64_t)S->ind[k][j] * R + r];
        const double *b = K->factors[n].data + (uint64_t)S->ind[n][j] * R;
        double m = 0.0;
        for (uint64_t r = 0; r < R; ++r) m += b[r] * p[r];
        const double v = S->vals[j] / (m > eps ? m : eps);
        for (uint64_t r = 0; r < R; ++r) {
            ref[(uint64_t)S->ind[n][j] * R + r] += v * p[r];
            mag[(uint64_t)S->ind[n][j] * R + r] += fabs(v * p[r]);
        }
    }
    free(p);
}

/* The non-zeros of X whose mode-n index is in [lo, hi), sorted by n first
 * (and the others by `levels`, or increasing). */
static void rows_of(const tf_tensor *X, uint32_t n, uint64_t lo, uint64_t hi, const uint32_t *levels, tf_tensor *S)
{
    uint64_t cnt = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) cnt += X->ind[n][k] >= lo && X->ind[n][k] < hi;
    CHECK_OK(tf_tensor_alloc(S, X->order, X->dims, cnt));
    uint64_t w = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        if (X->ind[n][k] < lo || X->ind[n][k] >= hi) continue;
        for (uint32_t m = 0; m < X->order; ++m) S->ind[m][w] = X->ind[m][k];
        S->vals[w++] = X->vals[k];
    }
    uint32_t order[TF_MAX_ORDER], l = 0;
    order[l++] = n;
    for (uint32_t k = 0; k + 1 < X->order; ++k) order[l++] = levels ? levels[k] : k + (k >= n);
    CHECK_OK(tf_tensor_sort(S, order));
}

/* One case: Phi and kkt of mode n over rows [lo, hi) on 1 and 3 threads
 * against the reference; every row in range written, none outside. */
static void phi_case(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t nnz, uint64_t R, uint32_t n,
                     uint32_t heavy, int part, int shuffled_levels)
{
    tf_tensor X, S;
    random_counts(rng, N, dims, nnz, heavy, &X);
    tf_ktensor K = positive_ktensor(rng, N, dims, R);
    /* a few B entries above 1 and some zero so min(B, 1 - Phi) takes both sides */
    for (uint64_t e = 0; e < dims[n] * R; e += 7) K.factors[n].data[e] = e % 2 ? 3.0 : 0.0;
    const uint64_t lo = part ? dims[n] / 3 : 0, hi = part ? 2 * dims[n] / 3 + 1 : dims[n];
    uint32_t levels[TF_MAX_ORDER], L = 0;
    for (uint32_t k = N; k-- > 0;)
        if (k != n) levels[L++] = k; /* decreasing: not the default */
    rows_of(&X, n, lo, hi, shuffled_levels ? levels : NULL, &S);
    const double eps = 1e-10;
    double *ref = malloc(dims[n] * R * sizeof *ref), *mag = malloc(dims[n] * R * sizeof *mag);
    ref_phi(&S, n, &K, eps, ref, mag);
    double want = 0.0;
    for (uint64_t i = lo; i < hi; ++i)
        for (uint64_t r = 0; r < R; ++r) {
            const double b = K.factors[n].data[i * R + r], c = 1.0 - ref[i * R + r];
            want = fmax(want, fabs(b < c ? b : c));
        }
    const double *A[TF_MAX_ORDER];
    for (uint32_t m = 0; m < N; ++m) A[m] = K.factors[m].data;
    double *got[2];
    double kkt[2];
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; ++t) {
        got[t] = kt_poisoned(dims[n] * R);
        const tf_apr_phi_in in = {&S, n, shuffled_levels ? levels : NULL, A, R, eps, lo, hi, threads[t], NULL, NULL};
        CHECK_OK(tf_cpu_apr_phi(&in, got[t], &kkt[t]));
    }
    uint64_t bad = 0, outside = 0;
    for (uint64_t i = 0; i < dims[n]; ++i)
        for (uint64_t r = 0; r < R; ++r) {
            const uint64_t e = i * R + r;
            if (i < lo || i >= hi) {
                outside += !isnan(got[0][e]);
                continue;
            }
            bad += !kt_close(got[0][e], ref[e], mag[e], 1e-13);
        }
    CHECKF(bad == 0 && outside == 0, "order %u dims[n] %llu nnz %llu R %llu mode %u heavy %u part %d: %llu wrong, "
           "%llu written outside the rows", N, (unsigned long long)dims[n], (unsigned long long)S.nnz,
           (unsigned long long)R, n + 1, heavy, part, (unsigned long long)bad, (unsigned long long)outside);
    TF_T_MARGIN(kkt[0] - want, 1e-11 * (1.0 + want));
    CHECKF(fabs(kkt[0] - want) <= 1e-11 * (1.0 + want), "kkt %.17g, reference %.17g", kkt[0], want);
    CHECKF(!memcmp(got[0], got[1], dims[n] * R * sizeof(double)) && kkt[0] == kkt[1],
           "Phi on 1 and 3 threads differ (order %u R %llu mode %u)", N, (unsigned long long)R, n + 1);
    /* the Khatri-Rao cache: a pass that writes it, then one that reads it, give the same bits */
    double *pi = kt_poisoned(S.nnz * R), *cached[2], ck[2];
    for (int t = 0; t < 2; ++t) {
        cached[t] = kt_poisoned(dims[n] * R);
        tf_apr_phi_in in = {&S, n, shuffled_levels ? levels : NULL, A, R, eps, lo, hi, threads[1 - t], NULL, NULL};
        if (t == 0) in.pi_store = pi;
        else in.pi = pi;
        CHECK_OK(tf_cpu_apr_phi(&in, cached[t], &ck[t]));
        CHECKF(!memcmp(got[0], cached[t], dims[n] * R * sizeof(double)) && ck[t] == kkt[0],
               "Phi %s the Khatri-Rao cache differs (order %u R %llu mode %u)", t ? "reading" : "writing", N,
               (unsigned long long)R, n + 1);
        free(cached[t]);
    }
    free(pi);
    /* the log-likelihood's sum over the same non-zeros (weights lambda) */
    double ll = 0.0, llmag = 0.0;
    for (uint64_t j = 0; j < S.nnz; ++j) {
        double m = 0.0, mg = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            double p = K.lambda[r];
            for (uint32_t k = 0; k < N; ++k) p *= K.factors[k].data[(uint64_t)S.ind[k][j] * R + r];
            m += p;
            mg += fabs(p);
        }
        ll += S.vals[j] * log(m);
        llmag += fabs(S.vals[j] * log(m)) + S.vals[j] * mg / (m > 0 ? m : 1);
    }
    double lgot[2];
    for (int t = 0; t < 2; ++t) {
        const tf_apr_phi_in in = {&S, n, shuffled_levels ? levels : NULL, A, R, 0.0, 0, 0, threads[t], NULL, NULL};
        CHECK_OK(tf_cpu_apr_logdot(&in, K.lambda, &lgot[t]));
    }
    CHECKF((lgot[0] == ll || kt_close(lgot[0], ll, llmag, 1e-13)) && lgot[0] == lgot[1], "x log m sum %.17g (3 threads %.17g), "
           "reference %.17g", lgot[0], lgot[1], ll);
    for (int t = 0; t < 2; ++t) free(got[t]);
    free(ref);
    free(mag);
    tf_ktensor_free(&K);
    tf_tensor_free(&S);
    tf_tensor_free(&X);
}

static void test_phi(tf_rng *rng)
{
    const uint64_t d2[] = {40, 31}, d3[] = {50, 3, 41}, d4[] = {9, 12, 30, 7}, d5[] = {6, 5, 8, 4, 9};
    const uint64_t ranks[] = {1, 3, 8, 16, 17, 32, 33, 64, 200}; /* 200: blocks of 16 R */
    for (size_t q = 0; q < sizeof ranks / sizeof *ranks; ++q) {
        phi_case(rng, 3, d3, 3000, ranks[q], 0, 0, 0, 0);
        phi_case(rng, 3, d3, 3000, ranks[q], 2, 0, 1, 1);
    }
    for (uint32_t n = 0; n < 3; ++n) { /* a heavy row of each mode across blocks (TF_APR_BLOCK = 2048) */
        phi_case(rng, 3, d3, 12000, 16, n, n + 1, 0, 0);
        phi_case(rng, 3, d3, 12000, 5, n, n + 1, 1, 1);
    }
    phi_case(rng, 3, d3, 20000, 8, 1, 0, 0, 0); /* a mode of 3 rows: every block inside one row */
    phi_case(rng, 3, d3, 12000, 200, 0, 1, 0, 1); /* a heavy row across blocks of 16 R = 3200 */
    for (uint32_t n = 0; n < 2; ++n) phi_case(rng, 2, d2, 900, 7, n, 0, n, 0);
    for (uint32_t n = 0; n < 4; ++n) phi_case(rng, 4, d4, 2500, 16, n, 0, n % 2, 1);
    for (uint32_t n = 0; n < 5; ++n) phi_case(rng, 5, d5, 1500, 6, n, 2, n % 2, 0);
    /* no non-zeros in the rows: all zero, kkt from B alone */
    tf_tensor X;
    const uint64_t d[] = {10, 10, 10};
    CHECK_OK(tf_tensor_alloc(&X, 3, d, 0));
    tf_ktensor K = positive_ktensor(rng, 3, d, 4);
    const double *A[3] = {K.factors[0].data, K.factors[1].data, K.factors[2].data};
    double *phi = kt_poisoned(40), kkt = -1.0;
    const tf_apr_phi_in in = {&X, 0, NULL, A, 4, 1e-10, 0, 10, 0, NULL, NULL};
    CHECK_OK(tf_cpu_apr_phi(&in, phi, &kkt));
    double want = 0.0, most = 0.0;
    for (int e = 0; e < 40; ++e) {
        want = fmax(want, fmin(A[0][e], 1.0));
        most = fmax(most, fabs(phi[e]));
    }
    CHECK(most == 0.0 && kkt == want);
    free(phi);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* ------------------------------------------------ the whole algorithm */

typedef struct ref_run {
    double ll[64], kkt[64];
    uint32_t iters, inner;
    int converged;
    tf_ktensor K;
} ref_run;

/* pyttb's tt_cp_apr_mu in plain loops (X canonical, start init). */
static void ref_cp_apr(const tf_tensor *X, const tf_ktensor *init, const tf_cp_apr_opts *o, ref_run *out)
{
    const uint32_t N = X->order;
    const uint64_t R = o->rank;
    tf_ktensor *M = &out->K;
    CHECK_OK(tf_ktensor_alloc(M, N, X->dims, R));
    double *phi[TF_MAX_ORDER], *p = malloc(R * sizeof *p), *cs = malloc(R * sizeof *cs);
    for (uint64_t r = 0; r < R; ++r) M->lambda[r] = init->lambda ? init->lambda[r] : 1.0;
    for (uint32_t n = 0; n < N; ++n) {
        memcpy(M->factors[n].data, init->factors[n].data, X->dims[n] * R * sizeof(double));
        phi[n] = calloc(X->dims[n] * R, sizeof(double));
    }
    /* normalize(normtype=1): lambda *= column sums, columns divided */
#define NORMALIZE(n)                                                                             \
    do {                                                                                         \
        double *a_ = M->factors[n].data;                                                         \
        for (uint64_t r = 0; r < R; ++r) {                                                       \
            double s_ = 0.0;                                                                     \
            for (uint64_t i = 0; i < X->dims[n]; ++i) s_ += fabs(a_[i * R + r]);                 \
            if (s_ > 0)                                                                          \
                for (uint64_t i = 0; i < X->dims[n]; ++i) a_[i * R + r] /= s_;                   \
            M->lambda[r] *= s_;                                                                  \
        }                                                                                        \
    } while (0)
    for (uint32_t n = 0; n < N; ++n) NORMALIZE(n);
    memset(out->ll, 0, sizeof out->ll);
    out->inner = 0;
    out->converged = 0;
    uint32_t it;
    for (it = 0; it < o->max_iters && it < 64; ++it) {
        int conv = 1;
        double kkt_mode[TF_MAX_ORDER] = {0};
        for (uint32_t n = 0; n < N; ++n) {
            double *B = M->factors[n].data;
            const uint64_t IR = X->dims[n] * R;
            if (it > 0)
                for (uint64_t e = 0; e < IR; ++e)
                    if (phi[n][e] > 0 && B[e] < o->kappatol) B[e] += o->kappa;
            for (uint64_t i = 0; i < X->dims[n]; ++i)
                for (uint64_t r = 0; r < R; ++r) B[i * R + r] *= M->lambda[r];
            for (uint64_t r = 0; r < R; ++r) M->lambda[r] = 1.0;
            for (uint32_t in = 0; in < o->max_inner; ++in) {
                ++out->inner;
                memset(phi[n], 0, IR * sizeof(double));
                for (uint64_t j = 0; j < X->nnz; ++j) {
                    for (uint64_t r = 0; r < R; ++r) p[r] = 1.0;
                    for (uint32_t k = 0; k < N; ++k)
                        if (k != n)
                            for (uint64_t r = 0; r < R; ++r) p[r] *= M->factors[k].data[(uint64_t)X->ind[k][j] * R + r];
                    double m = 0.0;
                    for (uint64_t r = 0; r < R; ++r) m += B[(uint64_t)X->ind[n][j] * R + r] * p[r];
                    const double v = X->vals[j] / fmax(m, o->epsdivzero);
                    for (uint64_t r = 0; r < R; ++r) phi[n][(uint64_t)X->ind[n][j] * R + r] += v * p[r];
                }
                double kkt = 0.0;
                for (uint64_t e = 0; e < IR; ++e) kkt = fmax(kkt, fabs(fmin(B[e], 1.0 - phi[n][e])));
                kkt_mode[n] = kkt;
                if (kkt < o->stoptol) break;
                conv = 0;
                for (uint64_t e = 0; e < IR; ++e) B[e] *= phi[n][e];
            }
            for (uint64_t r = 0; r < R; ++r) M->lambda[r] = 1.0;
            NORMALIZE(n);
        }
        double kkt = 0.0;
        for (uint32_t n = 0; n < N; ++n) kkt = fmax(kkt, kkt_mode[n]);
        double ll = 0.0, model = 0.0;
        for (uint64_t j = 0; j < X->nnz; ++j) {
            double m = 0.0;
            for (uint64_t r = 0; r < R; ++r) {
                double q = M->lambda[r];
                for (uint32_t k = 0; k < N; ++k) q *= M->factors[k].data[(uint64_t)X->ind[k][j] * R + r];
                m += q;
            }
            ll += X->vals[j] * log(m);
        }
        for (uint64_t r = 0; r < R; ++r) {
            double q = M->lambda[r];
            for (uint32_t k = 0; k < N; ++k) {
                double s = 0.0;
                for (uint64_t i = 0; i < X->dims[k]; ++i) s += M->factors[k].data[i * R + r];
                q *= s;
            }
            model += q;
        }
        out->ll[it] = ll - model;
        out->kkt[it] = kkt;
        if (conv) {
            out->converged = 1;
            ++it;
            break;
        }
    }
#undef NORMALIZE
    out->iters = it;
    for (uint32_t n = 0; n < N; ++n) free(phi[n]);
    free(p);
    free(cs);
}

typedef struct iter_log {
    uint32_t n;
    tf_cp_apr_iter it[64];
} iter_log;

static void log_iter(const tf_cp_apr_iter *it, void *user)
{
    iter_log *l = user;
    if (l->n < 64) l->it[l->n++] = *it;
}

/* Column r of factor m of K, scaled by its lambda, against the reference's
 * (both arranged alike): the largest difference relative to the entry sizes. */
static double ktensor_diff(const tf_ktensor *a, const tf_ktensor *b)
{
    double worst = 0.0;
    for (uint64_t r = 0; r < a->rank; ++r) {
        worst = fmax(worst, fabs(a->lambda[r] - b->lambda[r]) / fabs(b->lambda[r]));
        for (uint32_t m = 0; m < a->order; ++m)
            for (uint64_t i = 0; i < a->dims[m]; ++i) {
                const uint64_t e = i * a->rank + r;
                worst = fmax(worst, fabs(a->factors[m].data[e] - b->factors[m].data[e]) /
                                        (fabs(b->factors[m].data[e]) + 1e-3));
            }
    }
    return worst;
}

/* Arranges a reference ktensor as tf_cp_apr does (1-norm columns, then
 * components by lambda, largest first). */
static void arrange_ref(tf_ktensor *K)
{
    const uint64_t R = K->rank;
    for (uint64_t pass = 0; pass < R; ++pass) /* bubble sort by lambda, descending (stable) */
        for (uint64_t r = 0; r + 1 < R; ++r)
            if (K->lambda[r] < K->lambda[r + 1]) {
                double t = K->lambda[r];
                K->lambda[r] = K->lambda[r + 1];
                K->lambda[r + 1] = t;
                for (uint32_t m = 0; m < K->order; ++m)
                    for (uint64_t i = 0; i < K->dims[m]; ++i) {
                        double *a = K->factors[m].data + i * R;
                        t = a[r];
                        a[r] = a[r + 1];
                        a[r + 1] = t;
                    }
            }
}

static void run_case(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t nnz, uint64_t R, uint32_t iters,
                     double stoptol)
{
    tf_tensor X;
    random_counts(rng, N, dims, nnz, N, &X);
    tf_ktensor init = positive_ktensor(rng, N, dims, R);
    for (uint64_t e = 0; e < dims[0] * R; e += 5) init.factors[0].data[e] = 0.0; /* zeros: the scooch's work */
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.rank = R;
    o.max_iters = iters;
    o.stoptol = stoptol;
    o.init = &init;
    o.backend = TF_BACKEND_CPU;
    ref_run ref;
    ref_cp_apr(&X, &init, &o, &ref);
    arrange_ref(&ref.K);
    tf_ktensor K[2];
    tf_cp_apr_report rep[2];
    iter_log log[2] = {{0}, {0}};
    const int threads[2] = {1, 3};
    for (int t = 0; t < 2; ++t) {
        o.threads = threads[t];
        o.callback = log_iter;
        o.user = &log[t];
        CHECK_OK(tf_cp_apr(&X, &o, &K[t], &rep[t]));
    }
    CHECKF(rep[0].iters == ref.iters && rep[0].converged == ref.converged && rep[0].inner_iters == ref.inner &&
               log[0].n == ref.iters,
           "order %u R %llu: %u iterations (converged %d, %llu inner), reference %u (%d, %u)", N,
           (unsigned long long)R, rep[0].iters, rep[0].converged, (unsigned long long)rep[0].inner_iters, ref.iters,
           ref.converged, ref.inner);
    double worst_ll = 0.0, worst_kkt = 0.0;
    for (uint32_t i = 0; i < log[0].n && i < ref.iters; ++i) {
        worst_ll = fmax(worst_ll, fabs(log[0].it[i].loglik - ref.ll[i]) / fabs(ref.ll[i]));
        worst_kkt = fmax(worst_kkt, fabs(log[0].it[i].kkt - ref.kkt[i]) / (fabs(ref.kkt[i]) + 1e-12));
    }
    TF_T_MARGIN(worst_ll, 1e-11);
    TF_T_MARGIN(worst_kkt, 1e-8);
    CHECKF(worst_ll <= 1e-11 && worst_kkt <= 1e-8, "order %u R %llu: log-likelihood within %.2g, kkt within %.2g "
           "of the plain loops", N, (unsigned long long)R, worst_ll, worst_kkt);
    CHECKF(rep[0].loglik == log[0].it[log[0].n - 1].loglik, "the report's log-likelihood is the last iteration's");
    const double dk = ktensor_diff(&K[0], &ref.K);
    TF_T_MARGIN(dk, 1e-8);
    CHECKF(dk <= 1e-8, "order %u R %llu: the result is %.2g from the plain loops'", N, (unsigned long long)R, dk);
    int same = rep[0].iters == rep[1].iters && rep[0].loglik == rep[1].loglik;
    for (uint32_t m = 0; m < N && same; ++m)
        same = !memcmp(K[0].factors[m].data, K[1].factors[m].data, dims[m] * R * sizeof(double));
    same = same && !memcmp(K[0].lambda, K[1].lambda, R * sizeof(double));
    for (uint32_t i = 0; i < log[0].n && same; ++i)
        same = log[0].it[i].loglik == log[1].it[i].loglik && log[0].it[i].kkt == log[1].it[i].kkt;
    CHECKF(same, "order %u R %llu: 1 and 3 threads give different bits", N, (unsigned long long)R);
    CHECKF(rep[0].cached_passes > 0 && rep[0].cached_passes < rep[0].passes && rep[0].passes == rep[0].inner_iters &&
               rep[0].cache_bytes > 0, "order %u R %llu: %llu of %llu passes read the cache (%llu bytes)", N,
           (unsigned long long)R, (unsigned long long)rep[0].cached_passes, (unsigned long long)rep[0].passes,
           (unsigned long long)rep[0].cache_bytes);
    /* without the cache: the same bits */
    tf_ktensor K0;
    tf_cp_apr_report rep0;
    o.cache_bytes = 0;
    o.threads = 2;
    o.callback = NULL;
    CHECK_OK(tf_cp_apr(&X, &o, &K0, &rep0));
    same = rep0.loglik == rep[0].loglik && rep0.cached_passes == 0 && rep0.cache_bytes == 0 &&
           !memcmp(K0.lambda, K[0].lambda, R * sizeof(double));
    for (uint32_t m = 0; m < N && same; ++m)
        same = !memcmp(K0.factors[m].data, K[0].factors[m].data, dims[m] * R * sizeof(double));
    CHECKF(same, "order %u R %llu: the run without the Khatri-Rao cache differs", N, (unsigned long long)R);
    tf_ktensor_free(&K0);
    /* the result's arrangement: unit 1-norm columns (zero ones, lambda 0,
     * where a component died: its Phi was 0, so no scooch revives it),
     * lambda decreasing */
    int arranged = 1;
    for (uint64_t r = 0; r < R; ++r) {
        arranged &= r == 0 || K[0].lambda[r] <= K[0].lambda[r - 1];
        for (uint32_t m = 0; m < N; ++m) {
            double s = 0.0;
            for (uint64_t i = 0; i < dims[m]; ++i) s += K[0].factors[m].data[i * R + r];
            if (s != 0.0) TF_T_MARGIN(s - 1.0, 1e-12);
            arranged &= fabs(s - 1.0) < 1e-12 || (s == 0.0 && K[0].lambda[r] == 0.0); /* a component that died */
        }
    }
    CHECK(arranged);
    double ll = 0.0;
    CHECK_OK(tf_cp_apr_loglik(&X, &K[0], 2, &ll));
    TF_T_MARGIN(ll - rep[0].loglik, 1e-11 * fabs(ll));
    CHECKF(fabs(ll - rep[0].loglik) <= 1e-11 * fabs(ll), "tf_cp_apr_loglik %.17g, the run's %.17g", ll,
           rep[0].loglik);
    for (int t = 0; t < 2; ++t) tf_ktensor_free(&K[t]);
    tf_ktensor_free(&ref.K);
    tf_ktensor_free(&init);
    tf_tensor_free(&X);
}

static void test_runs(tf_rng *rng)
{
    const uint64_t d3[] = {30, 20, 25}, d4[] = {8, 9, 10, 11}, d2[] = {40, 30};
    run_case(rng, 3, d3, 3000, 4, 12, 1e-4);
    run_case(rng, 3, d3, 5000, 16, 6, 1e-4);
    run_case(rng, 4, d4, 2000, 3, 8, 1e-4);
    run_case(rng, 2, d2, 600, 5, 10, 1e-4);
    run_case(rng, 3, d3, 3000, 2, 40, 1e-1); /* converges before the limit */
}

/* ------------------------------------------------------------ failures */

static void test_errors(tf_rng *rng)
{
    const uint64_t d[] = {6, 7, 8};
    tf_tensor X;
    random_counts(rng, 3, d, 60, 0, &X);
    tf_ktensor K;
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.rank = 2;
    o.max_iters = 3;
    CHECK_OK(tf_cp_apr(&X, &o, &K, NULL));
    tf_ktensor_free(&K);
    /* not counts: the first bad non-zero, its index (1-based) and value */
    const double keep = X.vals[17];
    X.vals[17] = -2.0;
    char want[128];
    snprintf(want, sizeof want, "the non-zero at (%u, %u, %u) (1-based) is -2", X.ind[0][17] + 1, X.ind[1][17] + 1,
             X.ind[2][17] + 1);
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, want);
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, "CP-APR needs counts (integers >= 0)");
    X.vals[17] = keep;
    const uint64_t b = X.nnz - 3, c = X.nnz - 2; /* the first bad one is b */
    X.vals[b] = 2.5;
    X.vals[c] = -1.0;
    snprintf(want, sizeof want, "(%u, %u, %u) (1-based) is 2.5", X.ind[0][b] + 1, X.ind[1][b] + 1, X.ind[2][b] + 1);
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, want);
    X.vals[b] = 0.1;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, "is 0.1");
    X.vals[b] = 3.0;
    X.vals[c] = 1.0;
    /* options */
    tf_cp_apr_opts bad = o;
    bad.size = 8;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "tf_cp_apr_opts.size is 8");
    bad = o;
    bad.max_inner = 0;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "max_inner 0");
    bad = o;
    bad.epsdivzero = 0.0;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "epsdivzero 0");
    bad = o;
    bad.kappa = -1.0;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "kappa -1");
    bad = o;
    bad.rank = 0;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "rank 0");
    bad = o;
    bad.algorithm = (tf_cp_apr_algorithm)3;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_UNAVAILABLE, "algorithm 3");
    if (tf_gpu_count() == 0) { /* the GPU asked for and absent (test_gpu_apr runs it where there is one) */
        bad = o;
        bad.backend = TF_BACKEND_GPU;
        CHECK(tf_cp_apr(&X, &bad, &K, NULL) == TF_ERR_UNAVAILABLE);
        CHECK(K.order == 0 && K.lambda == NULL); /* out cleared on failure */
    }
    /* the start */
    tf_ktensor start = positive_ktensor(rng, 3, d, 2);
    bad = o;
    bad.init = &start;
    start.factors[1].data[3] = -0.5;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "initial factor 2 has -0.5 at row 2, column 2");
    start.factors[1].data[3] = 0.5;
    start.lambda[1] = -1.0;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "initial lambda 2 is -1");
    start.lambda[1] = 1.0;
    bad.rank = 3;
    CHECK_FAILS(tf_cp_apr(&X, &bad, &K, NULL), TF_ERR_ARG, "rank 2, the run 3");
    bad.rank = 2;
    CHECK_OK(tf_cp_apr(&X, &bad, &K, NULL));
    tf_ktensor_free(&K);
    tf_ktensor_free(&start);
    /* nothing to decompose */
    for (uint64_t k = 0; k < X.nnz; ++k) X.vals[k] = 0.0;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, "no non-zero values");
    CHECK_FAILS(tf_cp_apr(NULL, &o, &K, NULL), TF_ERR_ARG, "X is NULL");
    tf_tensor_free(&X);
}

/* The stop flag ends the run after the callback; a loose tolerance
 * converges at once; the defaults are pyttb's. */
static volatile int stop_flag;
static void stop_at_2(const tf_cp_apr_iter *it, void *user)
{
    (void)user;
    if (it->iter == 2) stop_flag = 1;
}

static void test_stop_and_defaults(tf_rng *rng)
{
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    CHECK(o.size == sizeof o && o.max_iters == 1000 && o.max_inner == 10 && o.stoptol == 1e-4 && o.kappa == 0.01 &&
          o.kappatol == 1e-10 && o.epsdivzero == 1e-10 && o.epsactive == 1e-8 && o.algorithm == TF_CP_APR_MU);
    const uint64_t d[] = {12, 10, 9};
    tf_tensor X;
    random_counts(rng, 3, d, 300, 0, &X);
    o.rank = 3;
    o.callback = stop_at_2;
    o.stop = &stop_flag;
    tf_ktensor K;
    tf_cp_apr_report rep;
    stop_flag = 0;
    CHECK_OK(tf_cp_apr(&X, &o, &K, &rep));
    CHECK(rep.iters == 2 && rep.stopped && !rep.converged);
    tf_ktensor_free(&K);
    o.callback = NULL;
    o.stop = NULL;
    o.stoptol = 1e9;
    CHECK_OK(tf_cp_apr(&X, &o, &K, &rep));
    CHECK(rep.iters == 1 && rep.converged && rep.inner_iters == 3);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

int main(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_cp_apr"));
    test_phi(&rng);
    test_runs(&rng);
    test_errors(&rng);
    test_stop_and_defaults(&rng);
    return tf_test_finish("test_cp_apr");
}
