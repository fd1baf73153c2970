/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU CP-ALS against CPU CP-ALS: for the same seed, the fit after every
 * iteration must agree to 1e-8 in fp64 (every GPU format), on random
 * tensors with a planted low-rank model (tf_generate) and on a real one
 * (uber-apr14); fp32 must land within 5e-3 (a sanity bound: fp32 ALS drifts
 * from fp64 with the conditioning of the normal equations). A
 * rank-deficient problem must take the pseudo-inverse fallback and still
 * give a finite fit. Skipped (exit 77) without a GPU; `--quick` (or
 * TF_TEST_QUICK=1) runs a small subset for compute-sanitizer. */
#include <stdlib.h>

#include "check.h"
#include "cpd_trace.h"
#include "gpu_test_tensors.h"


/* The tuning policy of the next GPU runs (tests force paths through it). */
static tf_tuning tuning;
/* The update of the next runs (NULL: ALS). */
static const tf_cpd_update *update;

static tf_status run(const tf_tensor *X, tf_backend be, tf_format fmt, tf_precision prec, uint64_t R,
                     uint32_t iters, trace *t, tf_cpd_report *rep, tf_ktensor *K)
{
    tf_context *ctx = NULL;
    if (be == TF_BACKEND_GPU) {
        tf_context_opts co;
        tf_context_opts_default(&co);
        co.backend = TF_BACKEND_GPU;
        co.tuning = &tuning;
        tf_status s = tf_context_create(&co, &ctx);
        if (s != TF_OK) return s;
    }
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = R;
    o.max_iters = iters;
    o.tol = 0.0; /* run every iteration */
    o.seed = 4242;
    o.backend = be;
    o.format = fmt;
    o.precision = prec;
    o.callback = record;
    o.user = t;
    o.context = ctx;
    o.update = update;
    memset(t, 0, sizeof *t);
    tf_status s = tf_cpd(X, &o, K, rep);
    tf_context_free(ctx);
    return s;
}

/* Largest relative difference of lambda (information only: the factors of
 * a slowly converging ALS may drift further apart than its fit). */
static double lambda_diff(const tf_ktensor *a, const tf_ktensor *b)
{
    double m = 0;
    for (uint64_t r = 0; r < a->rank; ++r) {
        double d = fabs(a->lambda[r] - b->lambda[r]) / (fabs(b->lambda[r]) + 1e-300);
        if (d > m) m = d;
    }
    return m;
}

static void compare(const tf_tensor *X, const char *what, uint64_t R, uint32_t iters)
{
    trace cpu, gpu;
    tf_cpd_report rc, rg;
    tf_ktensor Kc, Kg;
    tf_status s = run(X, TF_BACKEND_CPU, TF_FORMAT_AUTO, TF_DOUBLE, R, iters, &cpu, &rc, &Kc);
    CHECKF(s == TF_OK, "%s: CPU cpd: %s", what, tf_last_error());
    if (s != TF_OK) return;
    /* every format; then auto on the large-rank path (cuSOLVER potrf/potrs,
     * normalisation in place) forced with tuning.cpd_cusolver; then auto
     * with the other precision's choice of the small-rank apply (custom
     * kernel / cuBLAS), without the CUDA graph and with the Gram of a short
     * factor and the next solve as two launches (cpd_gram_solve_rows = 0) */
    const tf_format fmts[] = {TF_FORMAT_COO,  TF_FORMAT_FCOO, TF_FORMAT_BLCO,
                              TF_FORMAT_AUTO, TF_FORMAT_AUTO, TF_FORMAT_AUTO};
    const char *label[] = {"", "", "", "", " (cusolver)", " (other apply, no graph, Gram + solve apart)"};
    for (int f = 0; f < 6; ++f)
        for (int prec = 0; prec < 2; ++prec) {
            const tf_tuning saved = tuning;
            if (f == 4) tuning.cpd_cusolver = 1;
            if (f == 5) {
                tuning.cpd_apply = prec == TF_SINGLE ? 2 : 1; /* cuBLAS / own kernel */
                tuning.cpd_graph = 0;
                tuning.cpd_gram_solve_rows = 0;
            }
            s = run(X, TF_BACKEND_GPU, fmts[f], (tf_precision)prec, R, iters, &gpu, &rg, &Kg);
            tuning = saved;
            CHECKF(s == TF_OK, "%s %s%s: GPU cpd: %s", what, tf_format_name(fmts[f]), label[f], tf_last_error());
            if (s != TF_OK) continue;
            const double tol = prec == TF_SINGLE ? 5e-3 : 1e-8;
            double worst = 0;
            for (uint32_t i = 0; i < cpu.n && i < gpu.n; ++i)
                if (fabs(cpu.fit[i] - gpu.fit[i]) > worst) worst = fabs(cpu.fit[i] - gpu.fit[i]);
            CHECKF(gpu.n == cpu.n && worst <= tol, "%s [%s]%s %s: %u vs %u iterations, fit differs by %.3g",
                   what, rg.plan, label[f], prec ? "fp32" : "fp64", gpu.n, cpu.n, worst);
            double t_m = 0;
            for (int m = 0; m < TF_MAX_ORDER; ++m) t_m += rg.t_mttkrp[m];
            printf("  %s: %-60.60s %s fit %.10f (cpu %.10f), max |dfit| %.2e, lambda rel diff %.2e, "
                   "%.3f ms/iter (mttkrp %.3f, dense %.3f)\n",
                   what, rg.plan, prec ? "fp32" : "fp64", rg.fit, rc.fit, worst, lambda_diff(&Kg, &Kc),
                   1e3 * (rg.t_total - rg.t_build) / (rg.iters ? rg.iters : 1),
                   1e3 * t_m / (rg.iters ? rg.iters : 1),
                   1e3 * rg.t_dense / (rg.iters ? rg.iters : 1));
            tf_ktensor_free(&Kg);
        }
    tf_ktensor_free(&Kc);
}


/* A rank-deficient problem (rank 12 on a 3 x 4 x 3 tensor: every normal
 * matrix is singular) must take the pseudo-inverse: on the small-rank path
 * (device Jacobi, no host round trip) and on the cuSOLVER path. The first
 * fit must be close to the CPU's (LAPACK syevd): kept eigenvalues just
 * above the cutoff amplify rounding differences (about 1e-7 measured in
 * fp64 on an H200), so the bound is 1e-6 (1e-2 in fp32); a wrong
 * pseudo-inverse misses by far more. Later fits only need to be finite
 * (the problem has no unique solution, so runs drift apart). */
static void pinv_case(void)
{
    const uint64_t dims[] = {3, 4, 3};
    tt_spec sp = tt_spec_make(3, dims, 30, 21);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    trace tc, t;
    tf_cpd_report rc, rep;
    tf_ktensor Kc, K;
    tf_status s = run(&X, TF_BACKEND_CPU, TF_FORMAT_AUTO, TF_DOUBLE, 12, 5, &tc, &rc, &Kc);
    CHECKF(s == TF_OK, "rank-deficient CPU: %s", tf_last_error());
    for (int path = 0; s == TF_OK && path < 2; ++path)
        for (int prec = 0; prec < 2; ++prec) {
            const char *name = path ? "cusolver" : "small-rank";
            tuning.cpd_cusolver = path;
            tf_status g = run(&X, TF_BACKEND_GPU, TF_FORMAT_BLCO, (tf_precision)prec, 12, 5, &t, &rep, &K);
            tuning.cpd_cusolver = 0;
            CHECKF(g == TF_OK, "rank-deficient %s: %s", name, tf_last_error());
            if (g != TF_OK) continue;
            CHECKF(rep.pinv_fallbacks > 0 && isfinite(rep.fit), "rank-deficient %s: %llu pinv fallbacks, fit %g",
                   name, (unsigned long long)rep.pinv_fallbacks, rep.fit);
            const double d1 = t.n && tc.n ? fabs(t.fit[0] - tc.fit[0]) : INFINITY;
            CHECKF(d1 <= (prec ? 1e-2 : 1e-6), "rank-deficient %s %s: first fit %.12f vs CPU %.12f", name,
                   prec ? "fp32" : "fp64", t.n ? t.fit[0] : NAN, tc.fit[0]);
            printf("  rank-deficient %s %s: %llu pinv solves (CPU %llu), fits %.10f .. %.10f (CPU %.10f .. %.10f)\n",
                   name, prec ? "fp32" : "fp64", (unsigned long long)rep.pinv_fallbacks,
                   (unsigned long long)rc.pinv_fallbacks, t.fit[0], rep.fit, tc.fit[0], rc.fit);
            tf_ktensor_free(&K);
        }
    if (s == TF_OK) tf_ktensor_free(&Kc);
    tf_tensor_free(&X);
}

/* AO-ADMM runs on the GPU (issue 44; its comparisons with the CPU are
 * test_gpu_admm's): on the GPU backend it is not refused, and under auto
 * it is not sent to the CPU for want of it ("not on the GPU yet"). */
static void update_kinds(void)
{
    tf_tensor X;
    CHECK_OK(tt_planted(3, (const uint64_t[]){30, 20, 10}, 600, 3, 22, &X));
    tf_cpd_update u;
    admm_update(&u, 5u, 0u, 0.0); /* modes 1 and 3 non-negative */
    update = &u;
    trace t;
    tf_ktensor K;
    tf_cpd_report rep;
    tf_status s = run(&X, TF_BACKEND_GPU, TF_FORMAT_AUTO, TF_DOUBLE, 3, 3, &t, &rep, &K);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "gpu", 3) && t.n == 3,
           "AO-ADMM on the GPU: %s: %s (plan '%s')", tf_status_name(s), tf_last_error(), rep.plan);
    if (s == TF_OK) tf_ktensor_free(&K);
    s = run(&X, TF_BACKEND_AUTO, TF_FORMAT_AUTO, TF_DOUBLE, 3, 3, &t, &rep, &K);
    CHECKF(s == TF_OK && !strstr(rep.note, "not on the GPU yet"), "AO-ADMM under auto: %s (plan '%s', note '%s')",
           tf_last_error(), rep.plan, rep.note);
    if (s == TF_OK) tf_ktensor_free(&K);
    update = NULL;
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_cpd", "no CUDA device");
    tf_tuning_default(&tuning); /* before any run: a context needs its size */
    update_kinds();

    tf_tensor X;
    tf_status s = tt_planted(3, (const uint64_t[]){60, 50, 40}, quick ? 3000 : 20000, 8, 31, &X);
    CHECKF(s == TF_OK, "planted 3-mode: %s", tf_last_error());
    if (s == TF_OK) compare(&X, "planted rank-8 3-mode", 8, quick ? 3 : 30);
    tf_tensor_free(&X);

    /* rank 32 with the fused apply + Gram pass forced on every mode but the
     * last (it is used by itself only for factors longer than 65536 rows);
     * the first iteration's max-norm variant included
     * (--quick: small enough for racecheck's time limit in scripts/gpu-check) */
    if (quick) s = tt_planted(3, (const uint64_t[]){120, 100, 81}, 4000, 32, 35, &X);
    else s = tt_planted(3, (const uint64_t[]){300, 250, 201}, 40000, 32, 35, &X);
    CHECKF(s == TF_OK, "planted 3-mode (rank 32): %s", tf_last_error());
    tuning.cpd_apply_gram = 1;
    if (s == TF_OK) compare(&X, "planted rank-32 3-mode, fused apply+Gram", 32, quick ? 2 : 10);
    tuning.cpd_apply_gram = -1;
    tf_tensor_free(&X);

    if (!quick) {
        /* rank 40: the block-wide Gauss-Jordan (R > 32) and 5 Gram column blocks */
        s = tt_planted(3, (const uint64_t[]){200, 150, 100}, 30000, 8, 33, &X);
        CHECKF(s == TF_OK, "planted 3-mode (rank 40): %s", tf_last_error());
        if (s == TF_OK) compare(&X, "planted rank-8 3-mode, R=40", 40, 5);
        tf_tensor_free(&X);

        s = tt_planted(4, (const uint64_t[]){30, 20, 40, 25}, 8000, 5, 32, &X);
        CHECKF(s == TF_OK, "planted 4-mode: %s", tf_last_error());
        if (s == TF_OK) compare(&X, "planted rank-5 4-mode", 5, 20);
        tf_tensor_free(&X);

        char path[4096];
        const char *dir = getenv("TF_TEST_DATA") ? getenv("TF_TEST_DATA") : TF_REPO_DATA;
        snprintf(path, sizeof path, "%s/uber-apr14.tns.xz", dir);
        s = tf_read_tensor(path, 0, &X, NULL);
        if (s == TF_OK) {
            compare(&X, "uber-apr14", 16, 20);
            tf_tensor_free(&X);
        } else {
            printf("test_gpu_cpd: %s not readable (%s), skipping the real tensor\n", path,
                   tf_last_error());
        }
    }
    pinv_case(); /* also under --quick: compute-sanitizer sees the Jacobi path */
    return tf_test_finish("test_gpu_cpd");
}
