/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by ALS on one GPU (src/gpu/complete) against the CPU backend
 * (itself held to float64 loops in test_complete):
 * - lockstep: both backends of the seam (seams/complete.h) from the same
 *   start, every mode's update in turn, the GPU's factor poisoned with NaN
 *   on the device before each (a row left out shows): the new factors,
 *   the update's sum of squared errors, the training / validation / test
 *   sums (also against a host float64 loop), the squared norms and the
 *   kept model's test sum within 1e-10 relative, every update of 4
 *   iterations; random tensors of 3 and 4 modes (rows without entries,
 *   rows longer than a segment -- the two-pass path --, ranks 1..40, 64
 *   and 100) and the first 100,000 entries of uber-apr14 (a mode of 24
 *   rows: every row long);
 * - whole runs through tf_complete: --device gpu against --device cpu, the
 *   train / validation RMSE of every iteration, the iteration counts, the
 *   test RMSE and the factors returned within 1e-10; a second GPU run has
 *   the same bits; auto picks the GPU;
 * - a singular system (l2 = 0, a row without entries, a row with one entry
 *   at rank 2): TF_ERR_NUMERIC with the CPU's message word for word;
 * - refusals: a rank above the GPU's (TF_ERR_UNAVAILABLE; auto runs on
 *   the CPU, the note saying why), a context whose limit holds nothing
 *   (TF_ERR_NOMEM; auto: the CPU); Adam under auto on the GPU (its numbers:
 *   test_gpu_complete_adam).
 * --quick: the small cases only. Exits 77 without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "algo/complete.h"
#include "hooks/complete_check.h"
#include "kt_test_util.h"
#include "seams/complete.h"
#include "tenfold.h"

#define TOL 1e-10

/* ------------------------------------------------------------ inputs */

static int close_rel(double got, double want, double scale)
{
    const double s = fabs(want) > scale ? fabs(want) : scale;
    return isfinite(got) && fabs(got - want) <= TOL * s + 1e-300;
}

/* sum over X of (x - m)^2, plain float64 loops (lambda ones). */
static double ref_sse(const tf_tensor *X, const tf_ktensor *K)
{
    double s = 0.0, mag;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const double e = X->vals[k] - kt_ref_model(X, K, k, &mag);
        s += e * e;
    }
    return s;
}

static tf_context *gpu_context(uint64_t limit)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.memory_limit = limit;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    return ctx;
}

/* ------------------------------------------------------------- lockstep */

/* The current factors of a backend (keep, then result) into K (poisoned first). */
static void current(const tf_complete_backend *be, tf_ktensor *K)
{
    for (uint32_t m = 0; m < K->order; ++m)
        for (uint64_t e = 0; e < K->dims[m] * K->rank; ++e) K->factors[m].data[e] = NAN;
    CHECK_OK(be->ops->keep(be->ctx));
    CHECK_OK(be->ops->result(be->ctx, K));
    for (uint64_t r = 0; r < K->rank; ++r) K->lambda[r] = 1.0; /* result leaves lambda to the driver */
}

/* Every factor entry of g within TOL of c's (relative to its row's largest). */
static uint64_t compare_factors(const char *what, const tf_ktensor *g, const tf_ktensor *c, uint32_t it, uint32_t n)
{
    uint64_t bad = 0;
    const uint64_t R = c->rank;
    for (uint32_t m = 0; m < c->order; ++m)
        for (uint64_t i = 0; i < c->dims[m]; ++i) {
            const double *cr = c->factors[m].data + i * R, *gr = g->factors[m].data + i * R;
            double scale = 1e-12;
            for (uint64_t r = 0; r < R; ++r) scale = fabs(cr[r]) > scale ? fabs(cr[r]) : scale;
            for (uint64_t r = 0; r < R; ++r)
                if (!close_rel(gr[r], cr[r], scale) && bad++ < 3)
                    CHECKF(0, "%s: iteration %u mode %u: factor %u (%llu, %llu) is %.17g on the GPU, %.17g on the CPU",
                           what, it, n + 1, m + 1, (unsigned long long)i + 1, (unsigned long long)r + 1, gr[r], cr[r]);
        }
    return bad;
}

static void lockstep(const char *what, const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                     uint64_t R, double l2, uint32_t iters, tf_context *ctx)
{
    tf_complete_opts o;
    tf_complete_opts_default(&o);
    o.rank = R;
    o.l2 = l2;
    o.seed = 7 + R;
    o.threads = 2;
    o.context = ctx;
    tf_complete_backend cb, gb;
    CHECK_OK(tf_cpu_complete_backend_create(train, val, test, &o, &cb));
    tf_status s = tf_cuda_complete_backend_create(train, val, test, &o, &gb);
    CHECKF(s == TF_OK, "%s: the GPU backend: %s", what, tf_last_error());
    if (s != TF_OK) {
        cb.ops->destroy(cb.ctx);
        return;
    }
    tf_ktensor start, kc, kg;
    CHECK_OK(tf_complete_start(train, &o, &start));
    CHECK_OK(tf_ktensor_alloc(&kc, train->order, train->dims, R));
    CHECK_OK(tf_ktensor_alloc(&kg, train->order, train->dims, R));
    CHECK_OK(cb.ops->init(cb.ctx, &start));
    CHECK_OK(gb.ops->init(gb.ctx, &start));
    const tf_tensor *sets[3] = {train, val, test};
    uint64_t bad = 0;
    for (uint32_t it = 1; it <= iters && !bad; ++it)
        for (uint32_t n = 0; n < train->order && !bad; ++n) {
            double sc = NAN, sg = NAN;
            CHECK_OK(tf_gpu_check_complete_poison(gb.ctx, n));
            CHECK_OK(cb.ops->update(cb.ctx, n, l2, &sc));
            s = gb.ops->update(gb.ctx, n, l2, &sg);
            CHECKF(s == TF_OK, "%s: iteration %u mode %u: %s", what, it, n + 1, tf_last_error());
            if (s != TF_OK) {
                bad = 1;
                break;
            }
            CHECKF(close_rel(sg, sc, 0.0), "%s: iteration %u mode %u: update's sse %.17g on the GPU, %.17g on the CPU",
                   what, it, n + 1, sg, sc);
            current(&cb, &kc);
            current(&gb, &kg);
            bad += compare_factors(what, &kg, &kc, it, n);
            for (int set = 0; set < 3; ++set) {
                double c = NAN, g = NAN;
                CHECK_OK(cb.ops->sse(cb.ctx, (tf_complete_set)set, &c));
                CHECK_OK(gb.ops->sse(gb.ctx, (tf_complete_set)set, &g));
                const double ref = sets[set] ? ref_sse(sets[set], &kc) : 0.0;
                CHECKF(close_rel(g, c, 0.0) && close_rel(g, ref, 1e-300),
                       "%s: iteration %u mode %u set %d: sse %.17g on the GPU, %.17g on the CPU, %.17g float64", what,
                       it, n + 1, set, g, c, ref);
            }
            double fc = NAN, fg = NAN, tc = NAN, tg = NAN;
            CHECK_OK(cb.ops->frob_sq(cb.ctx, &fc));
            CHECK_OK(gb.ops->frob_sq(gb.ctx, &fg));
            CHECK_OK(cb.ops->kept_sse(cb.ctx, TF_COMPLETE_TEST, &tc));
            CHECK_OK(gb.ops->kept_sse(gb.ctx, TF_COMPLETE_TEST, &tg));
            CHECKF(close_rel(fg, fc, 0.0) && close_rel(tg, tc, 0.0),
                   "%s: iteration %u mode %u: norms %.17g / %.17g, kept test sse %.17g / %.17g (GPU / CPU)", what, it,
                   n + 1, fg, fc, tg, tc);
        }
    tf_ktensor_free(&start);
    tf_ktensor_free(&kc);
    tf_ktensor_free(&kg);
    gb.ops->destroy(gb.ctx);
    cb.ops->destroy(cb.ctx);
}

static void lockstep_random(tf_rng *rng, int quick, tf_context *ctx)
{
    static const uint64_t ranks[] = {1, 2, 3, 5, 8, 10, 16, 17, 24, 32, 40, 64, 100};
    const size_t nr = quick ? 8 : sizeof ranks / sizeof *ranks;
    for (size_t t = 0; t < nr; ++t) {
        const uint64_t R = ranks[t];
        const uint32_t N = 3 + (uint32_t)(t % 2);
        uint64_t dims[TF_MAX_ORDER] = {0};
        for (uint32_t m = 0; m < N; ++m) dims[m] = 9 + tf_rng_below(rng, 40);
        const int heavy = t % 3 == 1;
        const uint64_t nnz = heavy ? 12000 : 1500 + tf_rng_below(rng, 1500);
        tf_tensor X, sets[3];
        kt_complete_entries(rng, N, dims, nnz, t % 2 == 0, heavy, &X);
        kt_split3(rng, &X, sets);
        char what[96];
        snprintf(what, sizeof what, "random order %u rank %llu%s%s", N, (unsigned long long)R,
                 t % 2 == 0 ? ", empty rows" : "", heavy ? ", a long row" : "");
        lockstep(what, &sets[0], &sets[1], &sets[2], R, 0.5 + tf_rng_uniform(rng), 4, ctx);
        for (int s = 0; s < 3; ++s) tf_tensor_free(&sets[s]);
        tf_tensor_free(&X);
    }
}

static void lockstep_realdata(tf_rng *rng, tf_context *ctx)
{
    tf_tensor X;
    if (!kt_read_uber(&X)) return;
    const uint64_t n = X.nnz < 100000 ? X.nnz : 100000;
    tf_tensor Y, sets[3];
    CHECK_OK(tf_tensor_alloc(&Y, X.order, X.dims, n));
    for (uint32_t m = 0; m < X.order; ++m) memcpy(Y.ind[m], X.ind[m], n * sizeof(uint32_t));
    for (uint64_t k = 0; k < n; ++k) Y.vals[k] = log1p(X.vals[k]);
    tf_tensor_free(&X);
    kt_split3(rng, &Y, sets);
    lockstep("uber-apr14 (100,000 entries) rank 10", &sets[0], &sets[1], &sets[2], 10, 0.1, 3, ctx);
    tf_tensor_free(&Y);
    for (int s = 0; s < 3; ++s) tf_tensor_free(&sets[s]);
}

/* ----------------------------------------------------------- whole runs */

static tf_status run_on(tf_backend b, const tf_tensor *sets, uint64_t R, double l2, tf_ktensor *K,
                        tf_complete_report *rep)
{
    tf_complete_opts o;
    tf_complete_opts_default(&o);
    o.rank = R;
    o.l2 = l2;
    o.max_iters = 12;
    o.patience = 3;
    o.seed = 11;
    o.backend = b;
    return tf_complete(&sets[0], &sets[1], &sets[2], &o, K, rep);
}

static void whole_runs(tf_rng *rng, int quick)
{
    static const uint64_t ranks[] = {4, 10, 33};
    for (size_t t = 0; t < (quick ? 1u : 3u); ++t) {
        const uint32_t N = 3 + (uint32_t)(t % 2);
        uint64_t dims[TF_MAX_ORDER] = {0};
        for (uint32_t m = 0; m < N; ++m) dims[m] = 20 + tf_rng_below(rng, 30);
        tf_tensor X, sets[3];
        kt_complete_entries(rng, N, dims, 6000, 1, t == 1, &X);
        kt_split3(rng, &X, sets);
        const uint64_t R = ranks[t];
        tf_ktensor kc, kg, kg2;
        tf_complete_report rc, rg, rg2;
        CHECK_OK(run_on(TF_BACKEND_CPU, sets, R, 1.0, &kc, &rc));
        tf_status s = run_on(TF_BACKEND_GPU, sets, R, 1.0, &kg, &rg);
        CHECKF(s == TF_OK, "whole run rank %llu on the GPU: %s", (unsigned long long)R, tf_last_error());
        if (s == TF_OK) {
            CHECKF(!strncmp(rg.plan, "GPU", 3), "the GPU run's plan: '%s'", rg.plan);
            CHECKF(rg.iters == rc.iters && rg.best_iter == rc.best_iter, "iterations %u (best %u) on the GPU, %u (%u) "
                   "on the CPU", rg.iters, rg.best_iter, rc.iters, rc.best_iter);
            for (uint32_t i = 0; i < rg.iters && i < rc.iters; ++i)
                CHECKF(close_rel(rg.iterations[i].train_rmse, rc.iterations[i].train_rmse, 0.0) &&
                           close_rel(rg.iterations[i].val_rmse, rc.iterations[i].val_rmse, 0.0) &&
                           close_rel(rg.iterations[i].objective, rc.iterations[i].objective, 0.0),
                       "rank %llu iteration %u: train %.17g / %.17g, val %.17g / %.17g (GPU / CPU)",
                       (unsigned long long)R, i + 1, rg.iterations[i].train_rmse, rc.iterations[i].train_rmse,
                       rg.iterations[i].val_rmse, rc.iterations[i].val_rmse);
            CHECKF(close_rel(rg.test_rmse, rc.test_rmse, 0.0), "test RMSE %.17g on the GPU, %.17g on the CPU",
                   rg.test_rmse, rc.test_rmse);
            compare_factors("whole run", &kg, &kc, rg.iters, 0);
            /* the same bits again; auto picks the GPU */
            s = run_on(TF_BACKEND_AUTO, sets, R, 1.0, &kg2, &rg2);
            CHECKF(s == TF_OK && !strncmp(rg2.plan, "GPU", 3) && rg2.note[0] == 0, "auto: %s, plan '%s', note '%s'",
                   tf_status_name(s), rg2.plan, rg2.note);
            if (s == TF_OK) {
                CHECKF(rg2.iters == rg.iters && rg2.test_rmse == rg.test_rmse, "a second GPU run: test RMSE %.17g, "
                       "the first %.17g", rg2.test_rmse, rg.test_rmse);
                for (uint32_t i = 0; i < rg.iters && i < rg2.iters; ++i)
                    CHECK(rg2.iterations[i].train_rmse == rg.iterations[i].train_rmse &&
                          rg2.iterations[i].val_rmse == rg.iterations[i].val_rmse);
                tf_ktensor_free(&kg2);
                tf_complete_report_free(&rg2);
            }
            tf_ktensor_free(&kg);
            tf_complete_report_free(&rg);
        }
        tf_ktensor_free(&kc);
        tf_complete_report_free(&rc);
        for (int i = 0; i < 3; ++i) tf_tensor_free(&sets[i]);
        tf_tensor_free(&X);
    }
}

/* ------------------------------------------------------- errors, choices */

/* l2 = 0: row 1 of mode 1 without entries (pivot 1) or with one entry at
 * rank 2 (pivot 2) -- the first row, so the first failure on either side,
 * and its pivot exact: the GPU's message is the CPU's. */
static void singular(tf_rng *rng)
{
    uint64_t dims[3] = {12, 10, 9};
    for (int one = 0; one < 2; ++one) {
        tf_tensor X, sets[3];
        kt_complete_entries(rng, 3, dims, 400, 1, 0, &X); /* rows 0 mod 4 of mode 1: no entries */
        kt_split3(rng, &X, sets);
        if (one) sets[0].ind[0][0] = 0; /* row 1 gets one entry */
        const uint64_t R = one ? 2 : 3;
        tf_ktensor K;
        tf_complete_report rep;
        tf_status sc = run_on(TF_BACKEND_CPU, sets, R, 0.0, &K, &rep);
        char cpu_msg[512];
        snprintf(cpu_msg, sizeof cpu_msg, "%s", tf_last_error());
        CHECKF(sc == TF_ERR_NUMERIC && strstr(cpu_msg, one ? "row 1 of mode 1 has a singular system (1 observed entry "
                                                             "for rank 2, pivot 2)"
                                                           : "row 1 of mode 1 has a singular system (0 observed "
                                                             "entries for rank 3, pivot 1)"),
               "l2 0 on the CPU: %s \"%s\"", tf_status_name(sc), cpu_msg);
        tf_status sg = run_on(TF_BACKEND_GPU, sets, R, 0.0, &K, &rep);
        CHECKF(sg == TF_ERR_NUMERIC && !strcmp(tf_last_error(), cpu_msg), "l2 0 on the GPU: %s \"%s\", the CPU's \"%s\"",
               tf_status_name(sg), tf_last_error(), cpu_msg);
        for (int i = 0; i < 3; ++i) tf_tensor_free(&sets[i]);
        tf_tensor_free(&X);
    }
}

static void refusals(tf_rng *rng)
{
    uint64_t dims[3] = {30, 20, 10};
    tf_tensor X, sets[3];
    kt_complete_entries(rng, 3, dims, 2000, 0, 0, &X);
    kt_split3(rng, &X, sets);
    tf_ktensor K;
    tf_complete_report rep;
    /* a rank above the GPU's: refused on the GPU, the CPU under auto */
    tf_status s = run_on(TF_BACKEND_GPU, sets, TF_GPU_COMPLETE_MAX_RANK + 1, 1.0, &K, &rep);
    CHECKF(s == TF_ERR_UNAVAILABLE && strstr(tf_last_error(), "above the GPU's"), "rank %u on the GPU: %s \"%s\"",
           TF_GPU_COMPLETE_MAX_RANK + 1, tf_status_name(s), tf_last_error());
    tf_complete_opts o;
    tf_complete_opts_default(&o);
    o.rank = TF_GPU_COMPLETE_MAX_RANK + 1;
    o.max_iters = 1;
    s = tf_complete(&sets[0], NULL, NULL, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "CPU", 3) && strstr(rep.note, "CPU"), "rank %u under auto: %s, plan "
           "'%s', note '%s'", TF_GPU_COMPLETE_MAX_RANK + 1, tf_status_name(s), rep.plan, rep.note);
    if (s == TF_OK) {
        tf_ktensor_free(&K);
        tf_complete_report_free(&rep);
    }
    /* Adam: under auto on the GPU (test_gpu_complete_adam checks its numbers) */
    o.rank = 3;
    o.method = TF_COMPLETE_ADAM;
    o.epoch_iters = 10;
    o.max_iters = 2;
    o.backend = TF_BACKEND_AUTO;
    s = tf_complete(&sets[0], NULL, NULL, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "Adam: GPU", 9) && !rep.note[0], "Adam under auto: %s, plan '%s', note "
           "'%s'", tf_status_name(s), rep.plan, rep.note);
    if (s == TF_OK) {
        tf_ktensor_free(&K);
        tf_complete_report_free(&rep);
    }
    /* a context whose limit holds nothing */
    tf_context *ctx = gpu_context(4096);
    o.method = TF_COMPLETE_ALS;
    o.context = ctx;
    o.backend = TF_BACKEND_GPU;
    CHECK_FAILS(tf_complete(&sets[0], NULL, NULL, &o, &K, &rep), TF_ERR_NOMEM, "GPU completion");
    o.backend = TF_BACKEND_AUTO;
    s = tf_complete(&sets[0], NULL, NULL, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "CPU", 3) && strstr(rep.note, "running on the CPU"),
           "no room, auto: %s, plan '%s', note '%s'", tf_status_name(s), rep.plan, rep.note);
    if (s == TF_OK) {
        tf_ktensor_free(&K);
        tf_complete_report_free(&rep);
    }
    tf_context_free(ctx);
    for (int i = 0; i < 3; ++i) tf_tensor_free(&sets[i]);
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_complete", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_complete"));
    tf_context *ctx = gpu_context(0);
    lockstep_random(&rng, quick, ctx);
    if (!quick) lockstep_realdata(&rng, ctx);
    tf_context_free(ctx);
    whole_runs(&rng, quick);
    singular(&rng);
    refusals(&rng);
    return tf_test_finish("test_gpu_complete");
}
