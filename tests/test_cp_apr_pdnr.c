/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's row-wise Newton method, pdnr (src/cpu/apr_newton.c, the
 * algorithm's PDNR loop, the front end's choices): one projected damped
 * Newton step of a row subproblem against a plain float64 reference (the
 * gradient, the full Hessian, the active set, Gaussian elimination, the
 * line search and its multiplicative fallback written out) on random rows
 * with zero and tiny entries; a row driven to its KKT point; the mode
 * kernel on a random tensor (empty rows, a rank's row range, 1 and 3
 * threads) against the row step per row, rows outside the range untouched;
 * whole runs: the reported log-likelihood is tf_cp_apr_loglik's of the
 * result, the same bits on 1 and 3 threads, convergence on a loose tol;
 * the real uber-apr14 counts; the refusals (the GPU, checkpoints, mu0). */
#include <stdint.h>

#include "check.h"
#include "cpu/apr_newton.h"
#include "kt_test_util.h"
#include "tenfold.h"

/* ------------------------------------------------- the float64 reference */

static double ref_obj(const double *x, const double *pi, uint64_t J, uint64_t R, const double *b)
{
    double s = 0.0, t = 0.0;
    for (uint64_t r = 0; r < R; ++r) s += b[r];
    for (uint64_t j = 0; j < J; ++j) {
        double v = 0.0;
        for (uint64_t r = 0; r < R; ++r) v += b[r] * pi[j * R + r];
        t += x[j] * log(v);
    }
    return s - t;
}

/* g = 1 - phi and H (R x R, full) at b; returns the KKT violation. */
static double ref_grad(const double *x, const double *pi, uint64_t J, uint64_t R, const double *b, double eps,
                       double *g, double *phi, double *H)
{
    for (uint64_t r = 0; r < R; ++r) phi[r] = 0.0;
    for (uint64_t e = 0; e < R * R; ++e) H[e] = 0.0;
    for (uint64_t j = 0; j < J; ++j) {
        double v = 0.0;
        for (uint64_t r = 0; r < R; ++r) v += b[r] * pi[j * R + r];
        const double w = x[j] / fmax(v, eps), u = x[j] / fmax(v * v, eps);
        for (uint64_t r = 0; r < R; ++r) {
            phi[r] += w * pi[j * R + r];
            for (uint64_t s = 0; s < R; ++s) H[r * R + s] += u * pi[j * R + r] * pi[j * R + s];
        }
    }
    double kkt = 0.0;
    for (uint64_t r = 0; r < R; ++r) {
        g[r] = 1.0 - phi[r];
        kkt = fmax(kkt, fabs(fmin(b[r], g[r])));
    }
    return kkt;
}

/* One PDNR step of pyttb's (get_search_dir_pdnr + tt_linesearch_prowsubprob)
 * from b into bn; returns the KKT violation at b. *cond gets an upper bound
 * on the solved system's condition number: H is positive semi-definite, so
 * its eigenvalues lie in [mu, trace + mu]. */
static double ref_step(const double *x, const double *pi, uint64_t J, uint64_t R, const double *b, double mu,
                       double epsact, double eps, double *bn, double *cond)
{
    double g[64], phi[64], H[64 * 64], A[64 * 64], y[64], d[64];
    uint64_t fr[64], F = 0;
    const double kkt = ref_grad(x, pi, J, R, b, eps, g, phi, H);
    double wk = 0.0;
    for (uint64_t r = 0; r < R; ++r) {
        const double t = b[r] - (b[r] - g[r]) * (b[r] - (g[r] > 0.0));
        wk += t * t;
    }
    wk = sqrt(wk);
    for (uint64_t r = 0; r < R; ++r) {
        d[r] = 0.0;
        if (b[r] <= fmin(epsact, wk) && g[r] > 0.0) d[r] = b[r] != 0.0 ? -g[r] : 0.0;
        else fr[F++] = r;
    }
    for (uint64_t c = 0; c < F; ++c) {
        y[c] = -g[fr[c]];
        for (uint64_t e = 0; e < F; ++e) A[c * F + e] = H[fr[c] * R + fr[e]] + (c == e ? mu : 0.0);
    }
    double trace = 0.0;
    for (uint64_t c = 0; c < F; ++c) trace += A[c * F + c];
    *cond = trace / mu;
    kt_ref_solve(A, y, F);
    double q = 0.0, lin = 0.0;
    for (uint64_t c = 0; c < F; ++c) {
        d[fr[c]] = y[c];
        lin += y[c] * g[fr[c]];
        for (uint64_t e = 0; e < F; ++e) q += y[c] * (H[fr[c] * R + fr[e]] + (c == e ? mu : 0.0)) * y[e];
    }
    if (lin + 0.5 * q > 0.0)
        for (uint64_t r = 0; r < R; ++r) d[r] = -g[r];
    const double f0 = ref_obj(x, pi, J, R, b);
    double step = 1.0, fn = INFINITY, sum = 0.0;
    int count = 1;
    for (; count <= 10; ++count, step *= 0.5) {
        double gd = 0.0;
        sum = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            bn[r] = fmax(b[r] + step * d[r], 0.0);
            gd += g[r] * (bn[r] - b[r]);
            sum += bn[r];
        }
        if (gd > 0.0 || sum < 1e-7) {
            fn = INFINITY;
            continue;
        }
        fn = ref_obj(x, pi, J, R, bn);
        if (fn <= f0 + 1e-4 * gd) break;
    }
    if ((count >= 10 && fn > f0) || sum < 1e-7)
        for (uint64_t r = 0; r < R; ++r) bn[r] = fmax(b[r] * phi[r], 0.0);
    return kkt;
}

/* -------------------------------------------------------------- the row */

static void random_row(tf_rng *rng, uint64_t J, uint64_t R, double *x, double *pi, double *b)
{
    for (uint64_t j = 0; j < J; ++j) {
        x[j] = (double)(1 + tf_rng_below(rng, 6)) * (tf_rng_below(rng, 10) == 0 ? 50.0 : 1.0);
        for (uint64_t r = 0; r < R; ++r) pi[j * R + r] = tf_rng_uniform(rng);
    }
    for (uint64_t r = 0; r < R; ++r) {
        const uint64_t kind = tf_rng_below(rng, 6);
        b[r] = kind == 0 ? 0.0 : kind == 1 ? 1e-12 : tf_rng_uniform(rng) * 3.0;
    }
    b[tf_rng_below(rng, R)] = 0.5 + tf_rng_uniform(rng); /* not all zero */
}

static void test_row_step(tf_rng *rng)
{
    static const uint64_t Rs[] = {1, 2, 5, 16, 33}, Js[] = {1, 4, 60, 700};
    static const double mus[] = {1e-5, 1e-2, 1.0, 100.0};
    int worst_case = 0;
    double worst = 0.0, worst_cond = 1.0;
    for (int t = 0; t < 200; ++t) {
        const uint64_t R = Rs[t % 5], J = Js[(t / 5) % 4];
        const double mu = mus[(t / 20) % 4];
        double *x = kt_poisoned(J), *pi = kt_poisoned(J * R), b[64], b0[64], want[64], ws[64 * 80 + 1400];
        random_row(rng, J, R, x, pi, b);
        memcpy(b0, b, sizeof b);
        const tf_apr_newton_params p = {1e-10, 1e-8, mu, 0.0, 1};
        CHECK(tf_apr_newton_ws_doubles(J, R) <= sizeof ws / sizeof *ws);
        double kkt0 = -1.0;
        int changed = -1;
        uint64_t evals = 0;
        const uint32_t steps = tf_apr_newton_row(x, pi, J, R, &p, b, ws, &kkt0, &changed, &evals);
        double cond = 1.0;
        const double kkt = ref_step(x, pi, J, R, b0, mu, 1e-8, 1e-10, want, &cond);
        CHECKF(steps == 1 && changed == 1 && evals >= 2, "steps %u changed %d evals %llu", steps, changed,
               (unsigned long long)evals);
        CHECKF(kt_close(kkt0, kkt, 0.0, 1e-12), "R %llu J %llu: kkt %.17g, reference %.17g", (unsigned long long)R,
               (unsigned long long)J, kkt0, kkt);
        /* LU (tenfold) and Gaussian elimination (here) agree to about
         * eps * cond: a forward-error bound, loose only by a constant */
        const double e = tf_rel_err(b, want, R) / (1e-11 + 1e-15 * cond);
        if (e > worst) worst = e, worst_case = t, worst_cond = cond;
        /* the step never raises the row objective where it was a descent */
        TF_T_MARGIN(fmax(ref_obj(x, pi, J, R, b) - ref_obj(x, pi, J, R, b0), 0.0), 1e-12 * ref_obj(x, pi, J, R, b0) + 1e-9);
        CHECK(ref_obj(x, pi, J, R, b) <= ref_obj(x, pi, J, R, b0) * (1 + 1e-12) + 1e-9);
        tf_free(x);
        tf_free(pi);
    }
    /* mu 1e-5 on a rank-1 Hessian (J = 1) with a small row value is
     * conditioned up to ~1e12: the two eliminations differed by 1.1e-8 there
     * (CI, seed 13303025945); over 700 seeds the worst case used 12 % of this
     * bound. A wrong set or step is O(1). */
    TF_T_MARGIN(worst, 1.0);
    CHECKF(worst <= 1.0, "one Newton step: worst relative difference %.3g of its bound 1e-11 + 1e-15 * cond (case %d, cond %.3g)",
           worst, worst_case, worst_cond);
    printf("row step: 200 random rows, worst relative difference from the float64 reference %.2e of its bound (cond %.2e)\n",
           worst, worst_cond);
}

/* Enough steps at a tight row tolerance: the KKT conditions hold. */
static void test_row_converges(tf_rng *rng)
{
    for (int t = 0; t < 30; ++t) {
        const uint64_t R = 1 + tf_rng_below(rng, 8), J = R + tf_rng_below(rng, 200);
        double *x = kt_poisoned(J), *pi = kt_poisoned(J * R), b[64], ws[64 * 80 + 1400];
        double g[64], phi[64], H[64 * 64];
        random_row(rng, J, R, x, pi, b);
        const double f0 = ref_obj(x, pi, J, R, b);
        const tf_apr_newton_params p = {1e-10, 1e-8, 1e-5, 1e-9, 200};
        double kkt0;
        int changed;
        uint64_t evals = 0;
        const uint32_t steps = tf_apr_newton_row(x, pi, J, R, &p, b, ws, &kkt0, &changed, &evals);
        const double kkt = ref_grad(x, pi, J, R, b, 1e-10, g, phi, H);
        TF_T_MARGIN(kkt, 1e-8);
        CHECKF(kkt < 1e-8 && steps < 200, "R %llu J %llu: KKT %.3g after %u steps", (unsigned long long)R,
               (unsigned long long)J, kkt, steps);
        CHECK(ref_obj(x, pi, J, R, b) <= f0);
        for (uint64_t r = 0; r < R; ++r) CHECK(b[r] >= 0.0);
        tf_free(x);
        tf_free(pi);
    }
}

/* ----------------------------------------------------------- the kernel */

static void random_counts(tf_rng *rng, const uint64_t *dims, uint64_t nnz, tf_tensor *X)
{
    CHECK_OK(tf_tensor_alloc(X, 3, dims, nnz));
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < 3; ++m) {
            uint32_t i;
            do i = (uint32_t)tf_rng_below(rng, dims[m]);
            while (i % 7 == 3); /* empty rows */
            X->ind[m][k] = i;
        }
        X->vals[k] = (double)(1 + tf_rng_below(rng, 5));
    }
    CHECK_OK(tf_tensor_canonicalize(X, NULL, NULL));
}

static void test_kernel(tf_rng *rng)
{
    const uint64_t dims[3] = {37, 29, 23}, R = 4;
    tf_tensor X;
    random_counts(rng, dims, 3000, &X);
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, 3, dims, R));
    for (uint32_t m = 0; m < 3; ++m)
        for (uint64_t e = 0; e < dims[m] * R; ++e) K.factors[m].data[e] = 0.05 + tf_rng_uniform(rng);
    for (uint32_t n = 0; n < 3; ++n) {
        tf_tensor S;
        CHECK_OK(tf_tensor_copy(&X, &S));
        uint32_t order[3] = {n, n == 0 ? 1u : 0u, n == 2 ? 1u : 2u};
        CHECK_OK(tf_tensor_sort(&S, order));
        const uint64_t lo = n == 1 ? 5 : 0, hi = n == 1 ? 20 : dims[n];
        /* a rank's range: only its non-zeros */
        uint64_t k0 = 0, k1 = S.nnz;
        while (k0 < S.nnz && S.ind[n][k0] < lo) ++k0;
        k1 = k0;
        while (k1 < S.nnz && S.ind[n][k1] < hi) ++k1;
        tf_tensor part = S;
        for (uint32_t m = 0; m < 3; ++m) part.ind[m] = S.ind[m] + k0;
        part.vals = S.vals + k0;
        part.nnz = k1 - k0;
        const double *A[3] = {K.factors[0].data, K.factors[1].data, K.factors[2].data};
        const tf_apr_newton_params p = {1e-10, 1e-8, 1e-5, 1e-4, 10};
        double *out[2];
        tf_apr_newton_stats st[2];
        for (int v = 0; v < 2; ++v) {
            out[v] = kt_poisoned(dims[n] * R);
            for (uint64_t e = lo * R; e < hi * R; ++e) out[v][e] = K.factors[n].data[e];
            tf_apr_newton_in in = {&part, n, A, R, lo, hi, v ? 3 : 1};
            CHECK_OK(tf_cpu_apr_newton(&in, &p, out[v], &st[v]));
        }
        CHECK(memcmp(out[0] + lo * R, out[1] + lo * R, (hi - lo) * R * sizeof(double)) == 0);
        CHECK(st[0].kkt == st[1].kkt && st[0].steps == st[1].steps && st[0].rows_changed == st[1].rows_changed);
        for (uint64_t e = 0; e < dims[n] * R; ++e)
            if (e < lo * R || e >= hi * R) CHECK(isnan(out[0][e])); /* untouched */
        /* per row: the row step from plain Khatri-Rao rows */
        double kkt = 0.0;
        uint64_t steps = 0;
        for (uint64_t i = lo; i < hi; ++i) {
            uint64_t a = k0, c;
            while (a < k1 && S.ind[n][a] != i) ++a;
            for (c = a; c < k1 && S.ind[n][c] == i; ++c) {}
            double b[8];
            if (a == k1 || c == a) {
                for (uint64_t r = 0; r < R; ++r) CHECK(out[0][i * R + r] == 0.0); /* an empty row: 0 */
                continue;
            }
            const uint64_t J = c - a;
            double *pi = kt_poisoned(J * R), *x = kt_poisoned(J), *ws = kt_poisoned(tf_apr_newton_ws_doubles(J, R));
            for (uint64_t j = 0; j < J; ++j) {
                x[j] = S.vals[a + j];
                for (uint64_t r = 0; r < R; ++r) {
                    double q = 1.0;
                    for (uint32_t m = 0; m < 3; ++m)
                        if (m != n) q *= K.factors[m].data[(uint64_t)S.ind[m][a + j] * R + r];
                    pi[j * R + r] = q;
                }
            }
            memcpy(b, K.factors[n].data + i * R, R * sizeof *b);
            double k0v;
            int ch;
            uint64_t ev = 0;
            steps += tf_apr_newton_row(x, pi, J, R, &p, b, ws, &k0v, &ch, &ev);
            kkt = fmax(kkt, k0v);
            TF_T_MARGIN(tf_rel_err(out[0] + i * R, b, R), 1e-13);
            CHECKF(tf_rel_err(out[0] + i * R, b, R) <= 1e-13, "mode %u row %llu", n + 1, (unsigned long long)i);
            tf_free(pi);
            tf_free(x);
            tf_free(ws);
        }
        CHECK(kkt == st[0].kkt && steps == st[0].steps);
        tf_free(out[0]);
        tf_free(out[1]);
        tf_tensor_free(&S);
    }
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* ------------------------------------------------------------- the runs */

typedef struct hist {
    double ll[64], kkt[64];
    uint32_t n;
} hist;

static void record(const tf_cp_apr_iter *it, void *user)
{
    hist *h = user;
    if (h->n < 64) {
        h->ll[h->n] = it->loglik;
        h->kkt[h->n++] = it->kkt;
    }
}

static void run_pdnr(const tf_tensor *X, uint64_t R, uint32_t iters, double tol, int threads, hist *h,
                     tf_ktensor *out, tf_cp_apr_report *rep)
{
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.algorithm = TF_CP_APR_PDNR;
    o.rank = R;
    o.max_iters = iters;
    o.stoptol = tol;
    o.threads = threads;
    o.backend = TF_BACKEND_CPU;
    o.seed = 11;
    o.callback = record;
    o.user = h;
    memset(h, 0, sizeof *h);
    CHECK_OK(tf_cp_apr(X, &o, out, rep));
}

static void check_run(const tf_tensor *X, uint64_t R, uint32_t iters, const char *what)
{
    hist h1, h3;
    tf_ktensor K1, K3;
    tf_cp_apr_report r1, r3;
    run_pdnr(X, R, iters, 1e-4, 1, &h1, &K1, &r1);
    run_pdnr(X, R, iters, 1e-4, 3, &h3, &K3, &r3);
    CHECKF(h1.n == iters && h3.n == iters, "%s: %u and %u iterations", what, h1.n, h3.n);
    CHECKF(memcmp(h1.ll, h3.ll, sizeof h1.ll) == 0 && memcmp(h1.kkt, h3.kkt, sizeof h1.kkt) == 0,
           "%s: 1 and 3 threads differ", what);
    double ll = 0.0;
    CHECK_OK(tf_cp_apr_loglik(X, &K1, 1, &ll));
    CHECKF(kt_close(r1.loglik, ll, 0.0, 1e-11), "%s: reported %.17g, of the result %.17g", what, r1.loglik, ll);
    CHECKF(h1.ll[iters - 1] > h1.ll[0], "%s: the log-likelihood did not grow (%.10g to %.10g)", what, h1.ll[0],
           h1.ll[iters - 1]);
    printf("%s: pdnr rank %llu, %u iterations: log-likelihood %.10g -> %.10g, KKT %.3g, %llu Newton steps\n", what,
           (unsigned long long)R, iters, h1.ll[0], r1.loglik, r1.kkt, (unsigned long long)r1.inner_iters);
    tf_ktensor_free(&K1);
    tf_ktensor_free(&K3);
}

static void test_runs(tf_rng *rng)
{
    const uint64_t dims[3] = {40, 30, 20};
    tf_tensor X;
    random_counts(rng, dims, 4000, &X);
    check_run(&X, 3, 6, "random counts");
    hist h;
    tf_ktensor K;
    tf_cp_apr_report rep;
    run_pdnr(&X, 2, 500, 0.05, 0, &h, &K, &rep);
    CHECKF(rep.converged && rep.iters < 500 && rep.kkt < 0.05 * 100, "converged %d after %u, kkt %g", rep.converged,
           rep.iters, rep.kkt);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
    tf_tensor U;
    if (kt_read_uber(&U)) {
        check_run(&U, 4, 2, "uber-apr14");
        tf_tensor_free(&U);
    }
}

static void test_refusals(tf_rng *rng)
{
    const uint64_t dims[3] = {10, 9, 8};
    tf_tensor X;
    random_counts(rng, dims, 200, &X);
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    CHECK(o.mu0 == 1e-5 && o.inexact == 1 && o.algorithm == TF_CP_APR_MU);
    o.algorithm = TF_CP_APR_PDNR;
    o.rank = 2;
    o.max_iters = 2;
    tf_ktensor K;
    o.backend = TF_BACKEND_GPU;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_UNAVAILABLE, "pdnr: not available on the GPU yet (--device cpu)");
    o.backend = TF_BACKEND_AUTO; /* auto: the CPU */
    tf_cp_apr_report rep;
    CHECK_OK(tf_cp_apr(&X, &o, &K, &rep));
    CHECK(strstr(rep.plan, "CPU") != NULL);
    tf_ktensor_free(&K);
    tf_checkpoint ck = {0};
    ck.path = "pdnr-ck";
    o.checkpoint = &ck;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_UNAVAILABLE, "checkpoints are not available for CP-APR's pdnr");
    o.checkpoint = NULL;
    o.mu0 = -1.0;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, "mu0");
    o.mu0 = 1e-5;
    o.inexact = 2;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_ARG, "inexact 2");
    o.inexact = 1;
    o.algorithm = (tf_cp_apr_algorithm)7;
    CHECK_FAILS(tf_cp_apr(&X, &o, &K, NULL), TF_ERR_UNAVAILABLE, "TF_CP_APR_PDNR are");
    tf_tensor_free(&X);
}

int main(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_cp_apr_pdnr"));
    test_row_step(&rng);
    test_row_converges(&rng);
    test_kernel(&rng);
    test_runs(&rng);
    test_refusals(&rng);
    return tf_test_finish("test_cp_apr_pdnr");
}
