/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by Adam on the GPU (issue 46): GCP's GPU backend in
 * observed-only mode (tf_cuda_gcp_backend_create_observed) against float64
 * loops over the CPU's draws, and whole runs against the CPU's:
 * - one estimate, one gradient and one Adam step from a random start, the
 *   device outputs poisoned with NaN first: the estimate (fixed-order sums)
 *   within 1e-12 of its terms' magnitudes, the gradient -- the sample's
 *   term plus l2's 2 l2 u -- within 1e-10 of its terms' (atomics), the
 *   factors after one Adam step within 1e-9 of the step taken on the host
 *   from the reference gradient; a sample smaller than the training entries
 *   (the CPU's draws, weight n / s) and every entry (weight 1), l2 0 and
 *   > 0; 3 and 4 modes, ranks 1, 5, 16 and 40;
 * - where there are two GPUs or more (TF_TEST_GPUS=2 makes one GPU two),
 *   the backend over 2 (and 3) GPUs: the same checks, and every GPU the
 *   same bits after the sum (l2's term added once: a second addition is 2
 *   l2 u off the reference);
 * - whole runs (tf_complete, method Adam) from the same seed on the GPU
 *   and the CPU: per epoch the training and validation RMSE and the
 *   objective within 1e-8 relative, the same failed epochs, the test RMSE,
 *   the plan the GPU's; on 2 GPUs one GPU's within 1e-9;
 * - the refusal of zeros in observed-only mode (TF_ERR_ARG).
 * Exits 77 without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/gcp_sample.h"
#include "gcp_ref.h"
#include "hooks/gcp_check.h"
#include "kt_test_util.h"
#include "tenfold.h"

/* The sample the observed mode uses: every entry (weight 1) when count >=
 * nnz, else the CPU's draw of count entries from stream `stream`. */
static void observed_sample(const tf_tensor *X, const tf_gcp_nzset *h, uint64_t seed, uint64_t stream,
                            uint64_t count, tf_gcp_samples *s)
{
    if (count >= X->nnz) {
        CHECK_OK(tf_gcp_samples_alloc(s, X->order, X->nnz));
        for (uint32_t n = 0; n < X->order; ++n) memcpy(s->ind[n], X->ind[n], X->nnz * sizeof(uint32_t));
        memcpy(s->vals, X->vals, X->nnz * sizeof(double));
        s->n = s->nnz_part = X->nnz;
        s->w_nz = 1.0;
        return;
    }
    CHECK_OK(tf_gcp_samples_alloc(s, X->order, count));
    CHECK_OK(tf_gcp_draw(h, seed, stream, count, 0, 1, s));
}

static tf_gcp_opts observed_opts(uint64_t R, uint64_t seed, uint64_t fs, uint64_t gs)
{
    tf_gcp_opts o;
    tf_gcp_opts_default(&o);
    o.loss = TF_GCP_GAUSSIAN;
    o.rank = R;
    o.seed = seed;
    o.fnz = fs;
    o.gnz = gs;
    o.fz = o.gz = 0;
    return o;
}

#define STEP 0.01

static void check_step(const char *what, const tf_tensor *X, uint64_t R, uint64_t fs, uint64_t gs, double l2,
                       const tf_ktensor *K, uint64_t iter, int gpus)
{
    const tf_gcp_opts o = observed_opts(R, 0x5eed + iter, fs, gs);
    uint64_t total = 0;
    for (uint32_t n = 0; n < X->order; ++n) total += X->dims[n] * R;
    tf_gcp_nzset h;
    CHECK_OK(tf_gcp_nzset_build(X, &h));
    tf_gcp_samples fsmp, gsmp;
    observed_sample(X, &h, o.seed, 0, fs, &fsmp);
    observed_sample(X, &h, o.seed, iter + 1, gs, &gsmp);
    double fmag = 0.0, gm = 0.0;
    double *G = malloc(total * sizeof *G), *gmag = malloc(total * sizeof *gmag);
    double *got = kt_poisoned((uint64_t)gpus * total), *u = kt_poisoned(total);
    const double fref = gcp_ref_pass(&fsmp, K, TF_GCP_GAUSSIAN, 0.0, &fmag, NULL, NULL);
    (void)gcp_ref_pass(&gsmp, K, TF_GCP_GAUSSIAN, l2, &gm, G, gmag);
    double f = NAN;
    char plan[96] = "";
    const tf_status st = tf_gpu_check_gcp_observed_step(X, &o, l2, K, iter, gpus, STEP, &f, got, u, plan);
    CHECKF(st == TF_OK, "%s on %d GPU(s): %s", what, gpus, tf_last_error());
    if (st == TF_OK) {
        CHECKF(strstr(plan, "observed-entry samples") != NULL, "%s on %d GPU(s): plan '%s'", what, gpus, plan);
        CHECKF(kt_close(f, fref, fmag, 1e-12), "%s on %d GPU(s): estimate %.17g, reference %.17g", what, gpus, f,
               fref);
        uint64_t bad = 0, split = 0, ubad = 0;
        for (uint64_t e = 0; e < total; ++e) {
            for (int d = 1; d < gpus; ++d)
                if (memcmp(&got[e], &got[(uint64_t)d * total + e], sizeof *got) && split++ < 3)
                    CHECKF(0, "%s: gradient entry %llu is %.17g on GPU 1, %.17g on GPU %d", what,
                           (unsigned long long)e, got[e], got[(uint64_t)d * total + e], d + 1);
            if (!kt_close(got[e], G[e], gmag[e], 1e-10) && bad++ < 3)
                CHECKF(0, "%s on %d GPU(s): gradient entry %llu is %.17g, reference %.17g", what, gpus,
                       (unsigned long long)e, got[e], G[e]);
        }
        /* Adam's first step from zero moments on the host, from the reference gradient */
        const double *A = NULL;
        uint64_t e = 0;
        for (uint32_t n = 0; n < X->order; ++n) {
            A = K->factors[n].data;
            for (uint64_t i = 0; i < X->dims[n] * R; ++i, ++e) {
                const double mo = 0.1 * G[e], v = 0.001 * G[e] * G[e];
                const double want = A[i] - STEP * mo / sqrt(v + 1e-8);
                if (!(fabs(u[e] - want) <= 1e-9 * (fabs(A[i]) + STEP)) && ubad++ < 3)
                    CHECKF(0, "%s on %d GPU(s): factor entry %llu after a step is %.17g, expected %.17g", what, gpus,
                           (unsigned long long)e, u[e], want);
            }
        }
        CHECKF(bad == 0 && split == 0 && ubad == 0,
               "%s on %d GPU(s): %llu gradient entries off the reference, %llu differing between GPUs, %llu "
               "factor entries off after the step (of %llu)", what, gpus, (unsigned long long)bad,
               (unsigned long long)split, (unsigned long long)ubad, (unsigned long long)total);
    }
    free(G);
    free(gmag);
    free(got);
    free(u);
    tf_gcp_samples_free(&fsmp);
    tf_gcp_samples_free(&gsmp);
    tf_gcp_nzset_free(&h);
}

static void step_cases(tf_rng *rng, int quick)
{
    static const struct {
        uint32_t N;
        uint64_t dims[4], nnz, R;
    } cases[] = {
        {3, {40, 30, 20}, 6000, 5},
        {3, {300, 3, 50}, 9000, 16},  /* a short mode: its rows in shared memory, contended */
        {4, {12, 9, 7, 5}, 2500, 1},
        {3, {60, 50, 40}, 20000, 40}, /* two columns a lane */
    };
    const size_t ncases = quick ? 2 : sizeof cases / sizeof cases[0];
    for (size_t c = 0; c < ncases; ++c) {
        tf_tensor X;
        kt_complete_entries(rng, cases[c].N, cases[c].dims, cases[c].nnz, 0, 0, &X);
        tf_ktensor K = kt_random_ktensor(rng, X.order, X.dims, cases[c].R, 0);
        for (uint32_t n = 0; n < X.order; ++n) /* the scale of a fitted model: m of order 1 */
            for (uint64_t e = 0; e < X.dims[n] * cases[c].R; ++e) K.factors[n].data[e] *= 0.7;
        const uint64_t small = X.nnz / 7 + 3;
        const struct {
            uint64_t fs, gs;
            double l2;
        } mixes[] = {{small, small, 0.0}, {small, small / 2 + 1, 0.3}, {X.nnz, X.nnz + 5, 0.05}, {X.nnz, small, 1.0}};
        for (size_t k = 0; k < sizeof mixes / sizeof mixes[0]; ++k) {
            char what[128];
            snprintf(what, sizeof what, "case %zu (order %u, nnz %llu, R %llu), samples %llu/%llu, l2 %g", c, X.order,
                     (unsigned long long)X.nnz, (unsigned long long)cases[c].R, (unsigned long long)mixes[k].fs,
                     (unsigned long long)mixes[k].gs, mixes[k].l2);
            const uint64_t iter = tf_rng_below(rng, 1000);
            for (int gpus = 1; gpus <= 3 && gpus <= tf_gpu_count(); ++gpus)
                check_step(what, &X, cases[c].R, mixes[k].fs, mixes[k].gs, mixes[k].l2, &K, iter, gpus);
        }
        tf_ktensor_free(&K);
        tf_tensor_free(&X);
    }
}

/* ------------------------------------------------------------ whole runs */

static tf_context *gpus_context(int gpus)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = gpus;
    for (int i = 0; i < gpus; ++i) co.devices[i] = i;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    return ctx;
}

static tf_status run(const tf_tensor *sets, tf_backend be, tf_context *ctx, uint64_t samples, tf_ktensor *K,
                     tf_complete_report *rep)
{
    tf_complete_opts o;
    tf_complete_opts_default(&o);
    o.method = TF_COMPLETE_ADAM;
    o.rank = 4;
    o.l2 = 0.05;
    o.max_iters = 7;
    o.epoch_iters = 40;
    o.rate = 0.05; /* large enough for a failed epoch now and then */
    o.samples = samples;
    o.seed = 17;
    o.threads = 1;
    o.backend = be;
    o.context = ctx;
    return tf_complete(&sets[0], &sets[1], &sets[2], &o, K, rep);
}

static void same_runs(const char *what, const tf_complete_report *a, const tf_complete_report *b, double tol)
{
    CHECKF(a->iters == b->iters && a->best_iter == b->best_iter, "%s: %u epochs (best %u), reference %u (best %u)",
           what, b->iters, b->best_iter, a->iters, a->best_iter);
    for (uint32_t i = 0; i < a->iters && i < b->iters; ++i) {
        const tf_complete_iter *x = &a->iterations[i], *y = &b->iterations[i];
        CHECKF(x->failed == y->failed, "%s: epoch %u failed %d, reference %d", what, i + 1, y->failed, x->failed);
        CHECKF(kt_close(y->train_rmse, x->train_rmse, 0.0, tol) && kt_close(y->val_rmse, x->val_rmse, 0.0, tol) &&
                   kt_close(y->objective, x->objective, 0.0, tol),
               "%s: epoch %u train %.17g val %.17g objective %.17g, reference %.17g %.17g %.17g", what, i + 1,
               y->train_rmse, y->val_rmse, y->objective, x->train_rmse, x->val_rmse, x->objective);
    }
    CHECKF(kt_close(b->test_rmse, a->test_rmse, 0.0, tol), "%s: test rmse %.17g, reference %.17g", what, b->test_rmse,
           a->test_rmse);
}

static void run_cases(tf_rng *rng)
{
    const uint64_t dims[3] = {50, 40, 30};
    tf_tensor X, sets[3];
    kt_complete_entries(rng, 3, dims, 12000, 1, 0, &X); /* rows without entries too */
    kt_split3(rng, &X, sets);
    const uint64_t samples[2] = {500, 1u << 20};
    for (int k = 0; k < 2; ++k) {
        char what[96];
        tf_ktensor Kc, Kg;
        tf_complete_report rc, rg;
        memset(&rc, 0, sizeof rc);
        memset(&rg, 0, sizeof rg);
        snprintf(what, sizeof what, "whole runs, samples %llu: GPU against CPU", (unsigned long long)samples[k]);
        CHECK_OK(run(sets, TF_BACKEND_CPU, NULL, samples[k], &Kc, &rc));
        const tf_status s = run(sets, TF_BACKEND_GPU, NULL, samples[k], &Kg, &rg);
        CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
        if (s == TF_OK) {
            CHECKF(!strncmp(rg.plan, "Adam: GPU 0, fp64, observed-entry samples", 40), "%s: plan '%s'", what, rg.plan);
            same_runs(what, &rc, &rg, 1e-8);
            if (tf_gpu_count() >= 2) {
                tf_context *ctx = gpus_context(2);
                tf_ktensor K2;
                tf_complete_report r2;
                memset(&r2, 0, sizeof r2);
                snprintf(what, sizeof what, "whole runs, samples %llu: 2 GPUs against one",
                         (unsigned long long)samples[k]);
                const tf_status s2 = run(sets, TF_BACKEND_AUTO, ctx, samples[k], &K2, &r2);
                CHECKF(s2 == TF_OK, "%s: %s", what, tf_last_error());
                if (s2 == TF_OK) {
                    CHECKF(!strncmp(r2.plan, "Adam: 2 GPUs, fp64, observed-entry samples", 41), "%s: plan '%s'",
                           what, r2.plan);
                    same_runs(what, &rg, &r2, 1e-9);
                    tf_ktensor_free(&K2);
                }
                tf_complete_report_free(&r2);
                tf_context_free(ctx);
            }
            tf_ktensor_free(&Kg);
        }
        tf_ktensor_free(&Kc);
        tf_complete_report_free(&rc);
        tf_complete_report_free(&rg);
    }
    for (int i = 0; i < 3; ++i) tf_tensor_free(&sets[i]);
    tf_tensor_free(&X);
}

static void refusals(tf_rng *rng)
{
    const uint64_t dims[3] = {9, 8, 7};
    tf_tensor X;
    kt_complete_entries(rng, 3, dims, 200, 0, 0, &X);
    tf_ktensor K = kt_random_ktensor(rng, 3, dims, 2, 0);
    tf_gcp_opts o = observed_opts(2, 1, 50, 50);
    o.gz = 10;
    double f = 0.0, g[64], u[64];
    char plan[96];
    CHECK_FAILS(tf_gpu_check_gcp_observed_step(&X, &o, 0.1, &K, 0, 1, 0.0, &f, g, u, plan), TF_ERR_ARG,
                "observed-only mode draws no zeros");
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_complete_adam", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_complete_adam"));
    step_cases(&rng, quick);
    run_cases(&rng);
    refusals(&rng);
    return tf_test_finish("test_gpu_complete_adam");
}
