/* SPDX-License-Identifier: BSD-3-Clause */
/* AO-ADMM (issue 44) on the GPU backends (src/gpu/cpd/admm.cu, backend.cu's
 * tf_gpu_admm_update, multi.cu) against the CPU backend (src/cpu/admm.c)
 * from the same start (the seed's random factors), iteration by iteration:
 *   - one GPU, fp64: the fit of every outer iteration within 1e-10 of the
 *     CPU's, the final factors and weights within 1e-10 (relative to each
 *     column's largest entry), and the inner iterations of every outer
 *     iteration equal to the CPU's -- non-negativity on signed values (the
 *     projection active, ADMM iterating) and on a planted non-negative
 *     model (where the least-squares solution is often the update), l1
 *     (with and without non-negativity), l2 alone (the closed-form ridge), a
 *     mix per mode on 4 modes (nonneg; l1 + l2; none, ALS's solve; all
 *     three), a mode of one row (nonneg and l1 on it), rank 70 (the
 *     large-rank path), the large-rank path forced at small rank
 *     (tuning.cpd_cusolver: the normalisation in place instead of
 *     deferred), F-COO streamed from host memory (tuning.stream: every
 *     chunk streams), the inner iteration as one fused kernel (the default
 *     up to rank 128) and as right-hand side, gemm and prox apart
 *     (tuning.admm_fused = 0; rank 130 always);
 *   - no entry below zero in a non-negative mode's factor, nor in lambda
 *     (fp64 and fp32);
 *   - fp32: the fit of every outer iteration within 1e-4 of the CPU's (its
 *     inner iterations are printed, not compared: rounding moves the stop
 *     test);
 *   - two GPUs, when the machine has them (peer copies; NCCL; streamed
 *     shards; the mode of one row, where one GPU has no rows): fits within
 *     1e-10 of one GPU's, factors within 1e-10, inner iterations equal
 *     (the residual sums are gathered over the GPUs, so every GPU stops
 *     where one GPU would).
 * Skipped (exit 77) without a GPU (the two-GPU part without a second);
 * `--quick` (or TF_TEST_QUICK=1) runs a subset for compute-sanitizer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "cpd_trace.h"
#include "gpu_test_tensors.h"

/* The bounds (see the top): fp64 fits of every iteration and final
 * factors, against the CPU and two GPUs against one; fp32 fits. */
#define FIT_TOL 1e-10
#define FACTOR_TOL 1e-10
#define FIT32_TOL 1e-4

typedef struct gsetup {
    int ngpus;    /* 0: the CPU backend; 1: one GPU; 2: two GPUs (multi.cu) */
    int cusolver; /* tuning.cpd_cusolver = 1: the large-rank path at any rank */
    int stream;   /* tuning.stream = 1: F-COO streamed from host memory, every chunk */
    int nccl;     /* tuning.gpu_exchange = 1: NCCL instead of peer copies */
    int unfused;  /* tuning.admm_fused = 0: right-hand side, gemm and prox apart */
} gsetup;

static const gsetup on_cpu = {0, 0, 0, 0, 0}, one_gpu = {1, 0, 0, 0, 0}, one_cusolver = {1, 1, 0, 0, 0},
                    one_stream = {1, 0, 1, 0, 0}, one_unfused = {1, 0, 0, 0, 1}, two_gpus = {2, 0, 0, 0, 0},
                    two_nccl = {2, 0, 0, 1, 0}, two_stream = {2, 0, 1, 0, 0}, two_unfused = {2, 0, 0, 0, 1};

static const char *setup_name(gsetup su)
{
    if (!su.ngpus) return "CPU";
    if (su.ngpus == 1)
        return su.cusolver ? "1 GPU, cuSOLVER path"
               : su.stream ? "1 GPU, streamed"
               : su.unfused ? "1 GPU, unfused inner"
                            : "1 GPU";
    return su.nccl ? "2 GPUs, NCCL" : su.stream ? "2 GPUs, streamed shards" : su.unfused ? "2 GPUs, unfused" : "2 GPUs";
}

static tf_status run(const tf_tensor *X, gsetup su, tf_precision prec, uint64_t R, uint32_t iters,
                     const tf_cpd_update *u, trace *t, tf_cpd_report *rep, tf_ktensor *K)
{
    tf_context *ctx = NULL;
    if (su.ngpus > 0) {
        tf_context_opts co;
        tf_context_opts_default(&co);
        tf_tuning tuning;
        tf_tuning_default(&tuning);
        co.tuning = &tuning;
        co.backend = TF_BACKEND_GPU;
        if (su.ngpus > 1) {
            co.ndevices = su.ngpus;
            for (int i = 0; i < su.ngpus; ++i) co.devices[i] = i;
        }
        tuning.cpd_cusolver = su.cusolver;
        tuning.stream = su.stream ? 1 : 0;
        tuning.stream_resident = su.stream ? 0 : -1; /* every chunk streams */
        tuning.gpu_exchange = su.nccl;
        if (su.unfused) tuning.admm_fused = 0;
        const tf_status s = tf_context_create(&co, &ctx);
        if (s != TF_OK) return s;
    }
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = R;
    o.max_iters = iters;
    o.tol = 0.0; /* every iteration */
    o.seed = 4242;
    o.backend = su.ngpus ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    o.format = su.stream ? TF_FORMAT_FCOO : TF_FORMAT_AUTO;
    o.precision = prec;
    o.callback = record;
    o.user = t;
    o.context = ctx;
    o.update = u;
    memset(t, 0, sizeof *t);
    memset(K, 0, sizeof *K);
    const tf_status s = tf_cpd(X, &o, K, rep);
    tf_context_free(ctx);
    return s;
}

/* Largest difference of the factors relative to each column's largest
 * entry, and of lambda relative to itself. */
static double factor_diff(const tf_ktensor *a, const tf_ktensor *b)
{
    double worst = 0.0;
    for (uint64_t r = 0; r < a->rank; ++r) {
        const double d = fabs(a->lambda[r] - b->lambda[r]) / (fabs(b->lambda[r]) + 1e-300);
        if (d > worst) worst = d;
    }
    for (uint32_t m = 0; m < a->order; ++m)
        for (uint64_t r = 0; r < a->rank; ++r) {
            double big = 0.0, d = 0.0;
            for (uint64_t i = 0; i < a->dims[m]; ++i) {
                const double x = b->factors[m].data[i * a->rank + r];
                if (fabs(x) > big) big = fabs(x);
                const double e = fabs(a->factors[m].data[i * a->rank + r] - x);
                if (e > d) d = e;
            }
            if (big > 0 && d / big > worst) worst = d / big;
        }
    return worst;
}

/* Entries below zero (or -0, or NaN) in the non-negative modes' factors and in lambda. */
static uint64_t negatives(const tf_ktensor *K, const tf_cpd_update *u)
{
    uint64_t n = 0;
    for (uint64_t r = 0; r < K->rank; ++r) n += !(K->lambda[r] >= 0.0) || signbit(K->lambda[r]);
    for (uint32_t m = 0; m < K->order; ++m) {
        if (!u->mode[m].nonneg) continue;
        for (uint64_t e = 0; e < K->dims[m] * K->rank; ++e) {
            const double x = K->factors[m].data[e];
            n += !(x >= 0.0) || signbit(x);
        }
    }
    return n;
}

static int any_nonneg(const tf_cpd_update *u)
{
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m)
        if (u->mode[m].nonneg) return 1;
    return 0;
}

/* Run `su` in `prec` and compare it with the reference run (ref, rref,
 * Kref): fits of every iteration within fit_tol, final factors within
 * fac_tol, inner iterations equal where same_inner. */
static void compare(const char *what, const tf_tensor *X, uint64_t R, uint32_t iters, const tf_cpd_update *u,
                    gsetup su, tf_precision prec, const char *ref_name, const trace *ref, const tf_cpd_report *rref,
                    const tf_ktensor *Kref, double fit_tol, double fac_tol, int same_inner)
{
    trace t;
    tf_cpd_report rep;
    tf_ktensor K;
    const char *pn = prec == TF_SINGLE ? "fp32" : "fp64";
    const tf_status s = run(X, su, prec, R, iters, u, &t, &rep, &K);
    CHECKF(s == TF_OK, "%s, %s %s: %s", what, setup_name(su), pn, tf_last_error());
    if (s != TF_OK) return;
    double worst = 0.0;
    uint32_t first_inner = 0; /* 1-based: the first iteration whose inner count differs */
    for (uint32_t i = 0; i < t.n && i < ref->n; ++i) {
        const double d = fabs(t.fit[i] - ref->fit[i]);
        if (!(d <= worst)) worst = d; /* NaN sticks */
        if (!first_inner && t.inner[i] != ref->inner[i]) first_inner = i + 1;
    }
    const double fd = factor_diff(&K, Kref);
    CHECKF(t.n == ref->n && worst <= fit_tol, "%s, %s %s [%s]: %u vs %u iterations, fits differ from %s's by %.3g",
           what, setup_name(su), pn, rep.plan, t.n, ref->n, ref_name, worst);
    CHECKF(fd <= fac_tol, "%s, %s %s: factors differ from %s's by %.3g (relative)", what, setup_name(su), pn, ref_name,
           fd);
    if (same_inner) {
        CHECKF(!first_inner && rep.inner_iters == rref->inner_iters,
               "%s, %s %s: %llu inner iterations, %s %llu (iteration %u: %u vs %u)", what, setup_name(su), pn,
               (unsigned long long)rep.inner_iters, ref_name, (unsigned long long)rref->inner_iters, first_inner,
               first_inner ? t.inner[first_inner - 1] : 0, first_inner ? ref->inner[first_inner - 1] : 0);
    }
    if (any_nonneg(u)) {
        const uint64_t neg = negatives(&K, u);
        CHECKF(neg == 0, "%s, %s %s: %llu entries below zero in non-negative modes or lambda", what, setup_name(su),
               pn, (unsigned long long)neg);
    }
    CHECKF(su.ngpus < 2 || rep.parts == su.ngpus, "%s, %s: the report says %d parts", what, setup_name(su), rep.parts);
    printf("  %-44.44s %-24s %s fit %.12f, max |dfit| %.2e vs %s, factors %.2e, inner %llu (%s %llu), %.2f ms/iter"
           " [%.60s]\n",
           what, setup_name(su), pn, rep.fit, worst, ref_name, fd, (unsigned long long)rep.inner_iters, ref_name,
           (unsigned long long)rref->inner_iters, 1e3 * (rep.t_total - rep.t_build) / (rep.iters ? rep.iters : 1),
           rep.plan);
    tf_ktensor_free(&K);
}

enum { V_CUSOLVER = 1, V_STREAM = 2, V_FP32 = 4, V_MULTI = 8, V_UNFUSED = 16, V_ALL = 31 };

/* One problem: the CPU's run, then one GPU in fp64 (and the variants
 * asked for) against it; two GPUs against one GPU. */
static void check_case(const char *what, const tf_tensor *X, uint64_t R, uint32_t iters, const tf_cpd_update *u,
                       int variants)
{
    trace tc, tg;
    tf_cpd_report rc, rg;
    tf_ktensor Kc, Kg;
    tf_status s = run(X, on_cpu, TF_DOUBLE, R, iters, u, &tc, &rc, &Kc);
    CHECKF(s == TF_OK, "%s: CPU: %s", what, tf_last_error());
    if (s != TF_OK) return;
    printf("  %-44.44s %-24s fp64 fit %.12f, inner %llu (per iteration:", what, "CPU", rc.fit,
           (unsigned long long)rc.inner_iters);
    for (uint32_t i = 0; i < tc.n; ++i) printf(" %u", tc.inner[i]);
    printf(")\n");
    compare(what, X, R, iters, u, one_gpu, TF_DOUBLE, "CPU", &tc, &rc, &Kc, FIT_TOL, FACTOR_TOL, 1);
    if (variants & V_CUSOLVER)
        compare(what, X, R, iters, u, one_cusolver, TF_DOUBLE, "CPU", &tc, &rc, &Kc, FIT_TOL, FACTOR_TOL, 1);
    if (variants & V_STREAM)
        compare(what, X, R, iters, u, one_stream, TF_DOUBLE, "CPU", &tc, &rc, &Kc, FIT_TOL, FACTOR_TOL, 1);
    if (variants & V_UNFUSED)
        compare(what, X, R, iters, u, one_unfused, TF_DOUBLE, "CPU", &tc, &rc, &Kc, FIT_TOL, FACTOR_TOL, 1);
    if (variants & V_FP32)
        compare(what, X, R, iters, u, one_gpu, TF_SINGLE, "CPU", &tc, &rc, &Kc, FIT32_TOL, INFINITY, 0);
    if ((variants & V_MULTI) && tf_gpu_count() >= 2) {
        s = run(X, one_gpu, TF_DOUBLE, R, iters, u, &tg, &rg, &Kg);
        CHECKF(s == TF_OK, "%s: one GPU: %s", what, tf_last_error());
        if (s == TF_OK) {
            compare(what, X, R, iters, u, two_gpus, TF_DOUBLE, "1 GPU", &tg, &rg, &Kg, FIT_TOL, FACTOR_TOL, 1);
            if (tf_test_nccl_ok())
                compare(what, X, R, iters, u, two_nccl, TF_DOUBLE, "1 GPU", &tg, &rg, &Kg, FIT_TOL, FACTOR_TOL, 1);
            if (variants & V_UNFUSED)
                compare(what, X, R, iters, u, two_unfused, TF_DOUBLE, "1 GPU", &tg, &rg, &Kg, FIT_TOL, FACTOR_TOL, 1);
            if (variants & V_STREAM)
                compare(what, X, R, iters, u, two_stream, TF_DOUBLE, "1 GPU", &tg, &rg, &Kg, FIT_TOL, FACTOR_TOL, 1);
            tf_ktensor_free(&Kg);
        }
        if (variants & V_FP32) {
            s = run(X, one_gpu, TF_SINGLE, R, iters, u, &tg, &rg, &Kg);
            CHECKF(s == TF_OK, "%s: one GPU fp32: %s", what, tf_last_error());
            if (s == TF_OK) {
                compare(what, X, R, iters, u, two_gpus, TF_SINGLE, "1 GPU", &tg, &rg, &Kg, FIT32_TOL, INFINITY, 0);
                tf_ktensor_free(&Kg);
            }
        }
    }
    tf_ktensor_free(&Kc);
}

/* An AO-ADMM update: nonneg on the modes of mask nn, l1 on those of l1m,
 * l2 on those of l2m (tf_cpd_update_default's limits). */
static tf_cpd_update make_update(unsigned nn, unsigned l1m, double l1, unsigned l2m, double l2)
{
    tf_cpd_update u;
    admm_update(&u, nn, l1m, l1);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) u.mode[m].l2 = l2m >> m & 1u ? l2 : 0.0;
    return u;
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_admm", "no CUDA device");
    if (tf_gpu_count() < 2) printf("test_gpu_admm: one CUDA device: the two-GPU comparisons are skipped\n");
    const uint32_t it = quick ? 4 : 12;
    tf_tensor X;
    tf_cpd_update u;

    /* signed values: the least-squares solution has negative entries, so
     * non-negativity iterates; l1 with and without it */
    tt_spec sp = tt_spec_make(3, (const uint64_t[]){70, 60, 50}, quick ? 3000 : 8000, 41);
    CHECK_OK(tt_random(&sp, &X));
    u = make_update(7u, 0u, 0.0, 0u, 0.0);
    check_case("signed 3-mode R6, nonneg", &X, 6, it, &u, V_ALL);
    u = make_update(1u, 7u, 0.2, 0u, 0.0);
    check_case("signed 3-mode R6, nonneg+l1 / l1 / l1", &X, 6, it, &u, quick ? V_FP32 | V_MULTI | V_UNFUSED : V_ALL);
    tf_tensor_free(&X);

    /* a planted non-negative model: the least-squares solution is often
     * the update (no inner iteration) */
    CHECK_OK(tt_planted(3, (const uint64_t[]){80, 60, 50}, quick ? 4000 : 10000, 5, 42, &X));
    u = make_update(7u, 0u, 0.0, 0u, 0.0);
    check_case("planted 3-mode R5, nonneg", &X, 5, it, &u, quick ? V_MULTI : V_CUSOLVER | V_FP32 | V_MULTI);
    u = make_update(0u, 0u, 0.0, 7u, 0.5);
    check_case("planted 3-mode R5, l2 (closed form)", &X, 5, it, &u, quick ? 0 : V_CUSOLVER | V_FP32 | V_MULTI);
    if (!quick) {
        u = make_update(0u, 7u, 1.0, 0u, 0.0);
        check_case("planted 3-mode R8, l1", &X, 8, it, &u, V_CUSOLVER | V_FP32 | V_MULTI);
    }
    tf_tensor_free(&X);

    /* a mix per mode: nonneg; l1 + l2; none (ALS's solve); all three */
    CHECK_OK(tt_planted(4, (const uint64_t[]){30, 25, 20, 15}, quick ? 3000 : 6000, 4, 43, &X));
    u = make_update(1u | 8u, 2u | 8u, 0.3, 2u | 8u, 0.2);
    u.mode[3].l1 = 0.1;
    check_case("planted 4-mode R4, mixed per mode", &X, 4, it, &u, quick ? V_MULTI : V_ALL);
    tf_tensor_free(&X);

    /* a mode of one row (on two GPUs one has none of it), nonneg and l1 there
     * too (so that GPU runs the inner iterations on no rows); a planted
     * non-negative model, so no column of that row is projected to zero
     * (which would make the other modes' V singular) */
    CHECK_OK(tt_planted(4, (const uint64_t[]){120, 1, 60, 40}, quick ? 3000 : 8000, 4, 44, &X));
    u = make_update(15u, 6u, 0.1, 0u, 0.0);
    check_case("planted 4-mode with a 1-row mode R4", &X, 4, it, &u, quick ? V_MULTI : V_STREAM | V_MULTI);
    tf_tensor_free(&X);

    if (!quick) {
        /* rank 70: past the small-rank kernels (cuSOLVER, normalisation in place) */
        tt_spec big = tt_spec_make(3, (const uint64_t[]){300, 250, 200}, 40000, 45);
        CHECK_OK(tt_random(&big, &X));
        u = make_update(7u, 2u, 0.05, 0u, 0.0);
        check_case("signed 3-mode R70, nonneg / nonneg+l1", &X, 70, 6, &u, V_FP32 | V_MULTI | V_UNFUSED);
        /* rank 130: past the fused inner iteration (its inverse in shared memory) */
        u = make_update(7u, 0u, 0.0, 0u, 0.0);
        check_case("signed 3-mode R130, nonneg (unfused)", &X, 130, 3, &u, V_FP32 | V_MULTI);
        tf_tensor_free(&X);
    }
    return tf_test_finish("test_gpu_admm");
}
