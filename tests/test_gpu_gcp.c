/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP on one GPU (src/gpu/gcp) against the CPU's samples and a float64
 * host reference:
 * - the draws: the gradient samples of several iterations as the GPU draws
 *   them (tests/hooks/gcp_check.cu) are the CPU's (tf_gcp_draw of stream
 *   iter + 1), every coordinate, value, count and weight equal;
 * - one estimate and one gradient from a random start (the device outputs
 *   poisoned with NaN first): the fixed sample's weighted loss and the
 *   gradient of an iteration's sample against plain float64 loops over the
 *   CPU's draws of them: the estimate (fixed-order sums) within 1e-12 of
 *   the sum of its terms' magnitudes, the gradient (atomics: a row's terms
 *   in any order, thousands of them on real tensors) within 1e-10;
 * - whole runs (tf_gcp) from the same start on the GPU and the CPU: the
 *   estimate after every epoch within 1e-8 relative (the GPU's gradient
 *   sums by atomics, in no fixed order), the same failed epochs, the plan
 *   the GPU's;
 * random tensors of 3, 4 and 5 modes (a mode of 3 rows, ranks 1, 5, 16
 * and 40: 1, 8, 16 and 32 lanes a sample, two columns a lane above 32),
 * several losses, and every real tensor of the data directory
 * (tests/realdata.h; uber-apr14's run too); the short modes' shared memory
 * none, the default and above 48 KB (tf_tuning.gcp_smem); the refusals: the dense mode
 * asked for on the GPU (TF_ERR_UNAVAILABLE), auto running on the GPU.
 * Where there are two GPUs or more (TF_TEST_GPUS=2 makes one GPU two), the
 * backend over several GPUs (src/gpu/gcp/multi.cu) against one GPU's:
 * - one estimate and one gradient on 2 GPUs (and 3 where there are 3): the
 *   estimate within 1e-10 of one GPU's (relative), the gradient the same
 *   bits on every GPU after the sum, within 1e-12 of one GPU's and 1e-10
 *   of the float64 reference (relative to its terms' magnitudes), outputs
 *   poisoned first;
 * - whole runs (tf_gcp in a context of 2 GPUs) from one GPU's start and
 *   seed: the estimate after every epoch within 1e-10 relative, the same
 *   failed epochs, the final factors within 1e-10 of their largest entry;
 * random tensors of 3 and 4 modes, the Poisson, Gaussian and Bernoulli
 * losses, and every real tensor (steps; uber-apr14 a whole run too);
 * semi-stratified sampling alike (the draws, a step, whole runs on one GPU
 * and 2 GPUs against the CPU's); checkpoints asked for on the GPUs refused
 * (TF_ERR_UNAVAILABLE).
 * Exits 77 without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu_context.h"
#include "cpu/gcp_loss.h"
#include "cpu/gcp_sample.h"
#include "gcp_ref.h"
#include "hooks/gcp_check.h"
#include "kt_test_util.h"
#include "realdata.h"
#include "tenfold.h"

#define MAX_EPOCHS 8
/* the gradient against float64 loops, relative to its terms' magnitudes */
#define GRAD_TOL 1e-10

/* ------------------------------------------------------------ inputs */

/* Factors uniform in [lo, hi), lambda ones. */
static tf_ktensor random_start(tf_rng *rng, const tf_tensor *X, uint64_t R, double lo, double hi)
{
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, X->order, X->dims, R));
    for (uint32_t n = 0; n < X->order; ++n)
        for (uint64_t e = 0; e < X->dims[n] * R; ++e) K.factors[n].data[e] = lo + (hi - lo) * tf_rng_uniform(rng);
    for (uint64_t r = 0; r < R; ++r) K.lambda[r] = 1.0;
    return K;
}

static tf_gcp_opts opts_for(uint64_t R, int loss, uint64_t seed, uint64_t fnz, uint64_t fz, uint64_t gnz, uint64_t gz)
{
    tf_gcp_opts o;
    tf_gcp_opts_default(&o);
    o.rank = R;
    o.loss = (tf_gcp_loss)loss;
    o.seed = seed;
    o.fnz = fnz;
    o.fz = fz;
    o.gnz = gnz;
    o.gz = gz;
    return o;
}

/* ---------------------------------------------------------- the draws */

static void check_draws(const char *what, const tf_tensor *X, const tf_gcp_opts *o)
{
    const uint32_t N = X->order;
    const uint64_t cap = o->gnz + o->gz;
    tf_gcp_nzset h;
    CHECK_OK(tf_gcp_nzset_build(X, &h));
    tf_gcp_samples s;
    CHECK_OK(tf_gcp_samples_alloc(&s, N, cap));
    s.semi = o->sampling == TF_GCP_SEMI_STRATIFIED;
    uint32_t *ind[TF_MAX_ORDER];
    for (uint32_t n = 0; n < N; ++n) ind[n] = malloc((cap ? cap : 1) * sizeof(uint32_t));
    double *vals = kt_poisoned(cap);
    static const uint64_t iters[] = {0, 1, 2, 999};
    for (size_t t = 0; t < sizeof iters / sizeof *iters; ++t) {
        for (uint32_t n = 0; n < N; ++n) memset(ind[n], 0xff, (cap ? cap : 1) * sizeof(uint32_t));
        for (uint64_t j = 0; j < cap; ++j) vals[j] = NAN;
        uint64_t n_got = 0, nz_got = 0;
        double wnz = NAN, wz = NAN;
        const tf_status st = tf_gpu_check_gcp_draw(X, o, iters[t], ind, vals, &n_got, &nz_got, &wnz, &wz);
        CHECKF(st == TF_OK, "%s: the GPU's draw of iteration %llu: %s", what, (unsigned long long)iters[t],
               tf_last_error());
        if (st != TF_OK) break;
        CHECK_OK(tf_gcp_draw(&h, o->seed, iters[t] + 1, o->gnz, o->gz, 1, &s));
        CHECKF(n_got == s.n && nz_got == s.nnz_part && wnz == s.w_nz && wz == s.w_z,
               "%s iteration %llu: GPU %llu samples (%llu non-zeros, weights %.17g %.17g), CPU %llu (%llu, %.17g "
               "%.17g)", what, (unsigned long long)iters[t], (unsigned long long)n_got, (unsigned long long)nz_got,
               wnz, wz, (unsigned long long)s.n, (unsigned long long)s.nnz_part, s.w_nz, s.w_z);
        uint64_t bad = 0;
        for (uint64_t j = 0; j < s.n && n_got == s.n; ++j) {
            int same = vals[j] == s.vals[j];
            for (uint32_t n = 0; n < N; ++n) same &= ind[n][j] == s.ind[n][j];
            if (!same && bad++ < 3)
                CHECKF(0, "%s iteration %llu: sample %llu differs (GPU value %.17g, CPU %.17g; mode 1 %u vs %u)", what,
                       (unsigned long long)iters[t], (unsigned long long)j, vals[j], s.vals[j], ind[0][j],
                       s.ind[0][j]);
        }
        CHECKF(bad == 0, "%s iteration %llu: %llu of %llu samples differ", what, (unsigned long long)iters[t],
               (unsigned long long)bad, (unsigned long long)s.n);
    }
    for (uint32_t n = 0; n < N; ++n) free(ind[n]);
    free(vals);
    tf_gcp_samples_free(&s);
    tf_gcp_nzset_free(&h);
}

/* --------------------------------------------- estimate and gradient */

/* The several-GPU backend's step against one GPU's (f1, g1) and the
 * reference (G, gmag; fmag the estimate's magnitude). */
static void check_step_multi(const char *what, const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K,
                             uint64_t iter, int gpus, double f1, const double *g1, const double *G, const double *gmag,
                             double fmag, uint64_t total)
{
    double f = NAN, *got = kt_poisoned((uint64_t)gpus * total);
    char plan[96] = "";
    const tf_status st = tf_gpu_check_gcp_step_multi(X, o, K, iter, gpus, &f, got, plan);
    CHECKF(st == TF_OK, "%s on %d GPUs: the step: %s", what, gpus, tf_last_error());
    if (st == TF_OK) {
        char want[16];
        snprintf(want, sizeof want, "%d GPUs", gpus);
        CHECKF(!strncmp(plan, want, strlen(want)), "%s on %d GPUs: plan '%s'", what, gpus, plan);
        /* against the terms' magnitude only: Gamma's terms take both signs, so
         * |f1| can be far below them (test_gcp: a sum of -2.65 over terms of 7,043) */
        CHECKF(kt_close(f, f1, fmag, 1e-12), "%s on %d GPUs: estimate %.17g, one GPU %.17g (terms %.3g)", what, gpus, f,
               f1, fmag);
        uint64_t bad = 0, split = 0;
        for (uint64_t e = 0; e < total; ++e) {
            for (int d = 1; d < gpus; ++d)
                if (memcmp(&got[e], &got[(uint64_t)d * total + e], sizeof *got) && split++ < 3)
                    CHECKF(0, "%s on %d GPUs: gradient entry %llu is %.17g on GPU 1, %.17g on GPU %d", what, gpus,
                           (unsigned long long)e, got[e], got[(uint64_t)d * total + e], d + 1);
            if ((!kt_close(got[e], g1[e], gmag[e], 1e-12) || !kt_close(got[e], G[e], gmag[e], GRAD_TOL)) &&
                bad++ < 3)
                CHECKF(0, "%s on %d GPUs: gradient entry %llu is %.17g, one GPU %.17g, reference %.17g", what, gpus,
                       (unsigned long long)e, got[e], g1[e], G[e]);
        }
        CHECKF(bad == 0 && split == 0, "%s on %d GPUs: %llu of %llu gradient entries differ from one GPU's, %llu "
               "between the GPUs", what, gpus, (unsigned long long)bad, (unsigned long long)total,
               (unsigned long long)split);
    }
    free(got);
}

static void check_step(const char *what, const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K, uint64_t iter)
{
    const uint32_t N = X->order;
    uint64_t total = 0;
    for (uint32_t n = 0; n < N; ++n) total += X->dims[n] * o->rank;
    tf_gcp_nzset h;
    CHECK_OK(tf_gcp_nzset_build(X, &h));
    tf_gcp_samples fs, gs;
    CHECK_OK(tf_gcp_samples_alloc(&fs, N, o->fnz + o->fz));
    CHECK_OK(tf_gcp_samples_alloc(&gs, N, o->gnz + o->gz));
    gs.semi = o->sampling == TF_GCP_SEMI_STRATIFIED; /* the fixed sample is stratified either way */
    CHECK_OK(tf_gcp_draw(&h, o->seed, 0, o->fnz, o->fz, 1, &fs));
    CHECK_OK(tf_gcp_draw(&h, o->seed, iter + 1, o->gnz, o->gz, 1, &gs));
    double fmag = 0.0, gm = 0.0;
    double *G = malloc(total * sizeof *G), *gmag = malloc(total * sizeof *gmag), *got = kt_poisoned(total);
    const double fref = gcp_ref_pass(&fs, K, (int)o->loss, 0.0, &fmag, NULL, NULL);
    (void)gcp_ref_pass(&gs, K, (int)o->loss, 0.0, &gm, G, gmag);
    double f = NAN;
    const tf_status st = tf_gpu_check_gcp_step(X, o, K, iter, &f, got);
    CHECKF(st == TF_OK, "%s: the GPU's step: %s", what, tf_last_error());
    if (st == TF_OK) {
        CHECKF(kt_close(f, fref, fmag, 1e-12), "%s loss %s: estimate %.17g, reference %.17g", what,
               tf_gcp_loss_name(o->loss), f, fref);
        uint64_t bad = 0;
        for (uint64_t e = 0; e < total; ++e)
            if (!kt_close(got[e], G[e], gmag[e], GRAD_TOL) && bad++ < 3)
                CHECKF(0, "%s loss %s: gradient entry %llu is %.17g, reference %.17g", what,
                       tf_gcp_loss_name(o->loss), (unsigned long long)e, got[e], G[e]);
        CHECKF(bad == 0, "%s loss %s: %llu of %llu gradient entries differ", what, tf_gcp_loss_name(o->loss),
               (unsigned long long)bad, (unsigned long long)total);
        for (int gpus = 2; gpus <= 3 && gpus <= tf_gpu_count(); ++gpus)
            check_step_multi(what, X, o, K, iter, gpus, f, got, G, gmag, fmag, total);
    }
    free(G);
    free(gmag);
    free(got);
    tf_gcp_samples_free(&fs);
    tf_gcp_samples_free(&gs);
    tf_gcp_nzset_free(&h);
}

/* --------------------------------------------------------- whole runs */

typedef struct trace {
    uint32_t n;
    double f[MAX_EPOCHS + 1];
    int failed[MAX_EPOCHS + 1];
} trace;

static void on_epoch(const tf_gcp_epoch *e, void *user)
{
    trace *t = user;
    if (t->n <= MAX_EPOCHS) {
        t->f[t->n] = e->loss_estimate;
        t->failed[t->n] = e->failed;
        ++t->n;
    }
}

static tf_status run_on(const tf_tensor *X, const tf_gcp_opts *base, const tf_ktensor *start, tf_backend be,
                        trace *t, tf_gcp_report *rep)
{
    tf_gcp_opts o = *base;
    o.backend = be;
    o.init = start;
    o.epoch_iters = 25;
    o.max_epochs = 5;
    o.max_fails = 3;
    o.rate = 1e-2;
    o.callback = on_epoch;
    o.user = t;
    memset(t, 0, sizeof *t);
    tf_ktensor out;
    const tf_status s = tf_gcp(X, &o, &out, rep);
    if (s == TF_OK) tf_ktensor_free(&out);
    return s;
}

/* The run on the CPU and on the GPU (of ctx where not NULL) from one start. */
static void check_runs_in(const char *what, const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *start,
                          tf_context *ctx, tf_gcp_report *gpu_rep)
{
    trace tc, tg;
    tf_gcp_report rc, rg;
    tf_gcp_opts og = *o;
    og.context = ctx;
    const tf_status sc = run_on(X, o, start, TF_BACKEND_CPU, &tc, &rc);
    const tf_status sg = run_on(X, &og, start, TF_BACKEND_GPU, &tg, &rg);
    if (gpu_rep) *gpu_rep = rg;
    CHECKF(sc == TF_OK && sg == TF_OK, "%s: runs: CPU %s, GPU %s (%s)", what, tf_status_name(sc), tf_status_name(sg),
           tf_last_error());
    if (sc != TF_OK || sg != TF_OK) return;
    CHECKF(!strncmp(rg.plan, "GPU", 3), "%s: the GPU run's plan is '%s'", what, rg.plan);
    CHECKF(fabs(rg.loss_initial - rc.loss_initial) <= 1e-12 * fabs(rc.loss_initial), "%s: first estimate GPU %.17g, "
           "CPU %.17g", what, rg.loss_initial, rc.loss_initial);
    CHECKF(tg.n == tc.n, "%s: %u epochs on the GPU, %u on the CPU", what, tg.n, tc.n);
    for (uint32_t e = 0; e < tg.n && e < tc.n; ++e) {
        CHECKF(fabs(tg.f[e] - tc.f[e]) <= 1e-8 * fabs(tc.f[e]), "%s epoch %u: estimate GPU %.17g, CPU %.17g", what,
               e + 1, tg.f[e], tc.f[e]);
        CHECKF(tg.failed[e] == tc.failed[e], "%s epoch %u: failed GPU %d, CPU %d", what, e + 1, tg.failed[e],
               tc.failed[e]);
    }
}

/* A context of `gpus` GPUs (0 .. gpus - 1; 1: GPU 0 alone). */
/* exchange: tuning.gpu_exchange (0 auto, 2 host staging) */
static tf_context *gpus_context_x(int gpus, int exchange)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    tuning.gpu_exchange = exchange;
    co.tuning = &tuning;
    co.backend = TF_BACKEND_GPU;
    co.ndevices = gpus;
    for (int i = 0; i < gpus; ++i) co.devices[i] = i;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    return ctx;
}

static tf_context *gpus_context(int gpus) { return gpus_context_x(gpus, 0); }

/* The same run on 2 GPUs with the gradients summed through the host
 * (TF_EXCHANGE=host: exec/exchange_host.cu): the plan says so, and every
 * estimate and factor entry within 1e-10 of the other run's. Not the same
 * bits even where that run summed by peer copies (the same additions in
 * the same order): each GPU's partial gradient is summed by atomics, whose
 * order changes from run to run (with other work on the GPU it did:
 * 2e-16 apart under ctest -j4). */
static void check_runs_host(const char *what, const tf_tensor *X, const tf_gcp_opts *o2, const trace *t2,
                            const tf_gcp_report *r2, const tf_ktensor *k2)
{
    tf_context *cx = gpus_context_x(2, 2);
    trace tx;
    tf_gcp_report rx;
    tf_ktensor kx;
    tf_gcp_opts ox = *o2;
    ox.context = cx;
    ox.user = &tx;
    memset(&tx, 0, sizeof tx);
    const tf_status sx = tf_gcp(X, &ox, &kx, &rx);
    CHECKF(sx == TF_OK, "%s: the run through the host: %s (%s)", what, tf_status_name(sx), tf_last_error());
    if (sx == TF_OK) {
        const double tol = 1e-10;
        CHECKF(strstr(rx.plan, "summed by host staging (TF_EXCHANGE)") != NULL, "%s: plan '%s'", what, rx.plan);
        CHECKF(tx.n == t2->n, "%s: %u epochs through the host, %u by %s", what, tx.n, t2->n, r2->plan);
        for (uint32_t e = 0; e < tx.n && e < t2->n; ++e)
            CHECKF(kt_close(tx.f[e], t2->f[e], 0.0, tol), "%s epoch %u: estimate through the host %.17g, %.17g", what,
                   e + 1, tx.f[e], t2->f[e]);
        double diff = 0.0, big = 0.0;
        for (uint32_t n = 0; n < X->order; ++n)
            for (uint64_t e = 0; e < X->dims[n] * o2->rank; ++e) {
                const double a = kx.factors[n].data[e], b = k2->factors[n].data[e];
                big = fabs(b) > big ? fabs(b) : big;
                diff = fabs(a - b) > diff || a != a ? fabs(a - b) : diff;
            }
        CHECKF(diff <= tol * big, "%s: factors through the host differ by %.3g", what, diff);
        tf_ktensor_free(&kx);
    }
    tf_context_free(cx);
}

/* The run on 2 GPUs against one GPU's, from one start: every epoch's
 * estimate within 1e-10 relative, the failed epochs alike, the final
 * factors within 1e-10 of each factor's largest entry. */
static void check_runs_multi(const char *what, const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *start)
{
    if (tf_gpu_count() < 2) return;
    tf_context *c1 = gpus_context(1), *c2 = gpus_context(2);
    trace t1, t2;
    tf_gcp_report r1, r2;
    tf_ktensor k1, k2;
    tf_gcp_opts o1 = *o, o2 = *o;
    o1.context = c1;
    o2.context = c2;
    o1.backend = o2.backend = TF_BACKEND_GPU;
    o1.init = o2.init = start;
    o1.epoch_iters = o2.epoch_iters = 25;
    o1.max_epochs = o2.max_epochs = 5;
    o1.max_fails = o2.max_fails = 3;
    o1.rate = o2.rate = 1e-2;
    o1.callback = o2.callback = on_epoch;
    o1.user = &t1;
    o2.user = &t2;
    memset(&t1, 0, sizeof t1);
    memset(&t2, 0, sizeof t2);
    const tf_status s1 = tf_gcp(X, &o1, &k1, &r1);
    const tf_status s2 = tf_gcp(X, &o2, &k2, &r2);
    CHECKF(s1 == TF_OK && s2 == TF_OK, "%s: runs: one GPU %s, two %s (%s)", what, tf_status_name(s1),
           tf_status_name(s2), tf_last_error());
    if (s1 == TF_OK && s2 == TF_OK) {
        CHECKF(!strncmp(r2.plan, "2 GPUs", 6), "%s: the 2-GPU run's plan is '%s'", what, r2.plan);
        CHECKF(kt_close(r2.loss_initial, r1.loss_initial, 0.0, 1e-10), "%s: first estimate 2 GPUs %.17g, one %.17g",
               what, r2.loss_initial, r1.loss_initial);
        CHECKF(t1.n == t2.n, "%s: %u epochs on 2 GPUs, %u on one", what, t2.n, t1.n);
        for (uint32_t e = 0; e < t1.n && e < t2.n; ++e) {
            CHECKF(kt_close(t2.f[e], t1.f[e], 0.0, 1e-10), "%s epoch %u: estimate 2 GPUs %.17g, one %.17g", what,
                   e + 1, t2.f[e], t1.f[e]);
            CHECKF(t2.failed[e] == t1.failed[e], "%s epoch %u: failed 2 GPUs %d, one %d", what, e + 1, t2.failed[e],
                   t1.failed[e]);
        }
        for (uint32_t n = 0; n < X->order; ++n) {
            const uint64_t len = X->dims[n] * o->rank;
            double big = 0.0, diff = 0.0;
            for (uint64_t e = 0; e < len; ++e) {
                const double a = k1.factors[n].data[e], b = k2.factors[n].data[e];
                big = fabs(a) > big ? fabs(a) : big;
                diff = fabs(a - b) > diff || b != b ? fabs(a - b) : diff;
            }
            CHECKF(diff <= 1e-10 * big, "%s: factor %u differs by %.3g on 2 GPUs (largest entry %.3g)", what, n + 1,
                   diff, big);
        }
        check_runs_host(what, X, &o2, &t2, &r2, &k2);
    }
    if (s1 == TF_OK) tf_ktensor_free(&k1);
    if (s2 == TF_OK) tf_ktensor_free(&k2);
    tf_context_free(c1);
    tf_context_free(c2);
}

static void check_runs(const char *what, const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *start)
{
    check_runs_in(what, X, o, start, NULL, NULL);
    check_runs_multi(what, X, o, start);
}

/* ------------------------------------------------------------- cases */

static void one_case(tf_rng *rng, const char *what, const tf_tensor *X, uint64_t R, int loss, uint64_t fs, uint64_t gs,
                     int runs)
{
    const double lb = tf_gcp_loss_lower_bound((tf_gcp_loss)loss);
    tf_gcp_opts o = opts_for(R, loss, tf_rng_next(rng), fs, fs, gs, gs);
    check_draws(what, X, &o);
    tf_ktensor K = random_start(rng, X, R, lb == 0.0 ? 0.05 : -0.6, 0.6);
    check_step(what, X, &o, &K, 0);
    check_step(what, X, &o, &K, 41);
    if (runs) check_runs(what, X, &o, &K);
    /* semi-stratified: zero draws over every entry (no rejection), non-zeros' terms f(x, m) - f(0, m) */
    char semi[128];
    snprintf(semi, sizeof semi, "%s, semi-stratified", what);
    o.sampling = TF_GCP_SEMI_STRATIFIED;
    o.gz = gs;
    check_draws(semi, X, &o);
    check_step(semi, X, &o, &K, 7);
    if (runs) check_runs(semi, X, &o, &K);
    tf_ktensor_free(&K);
}

static void random_cases(tf_rng *rng)
{
    static const struct {
        uint32_t N;
        uint64_t dims[5], nnz, R;
        int loss;
    } cs[] = {
        {3, {30, 20, 25}, 900, 5, TF_GCP_POISSON},
        {3, {35, 28, 22}, 1100, 6, TF_GCP_BERNOULLI_ODDS},
        {3, {40, 3, 50}, 1500, 1, TF_GCP_GAUSSIAN},
        {4, {12, 9, 24, 7}, 2000, 16, TF_GCP_GAUSSIAN},
        {4, {25, 3, 30, 18}, 2500, 40, TF_GCP_BERNOULLI_LOGIT},
        {4, {20, 11, 16, 9}, 1800, 8, TF_GCP_POISSON_LOG},
        {5, {7, 6, 9, 5, 8}, 1200, 5, TF_GCP_GAMMA},
    };
    for (size_t c = 0; c < sizeof cs / sizeof *cs; ++c) {
        tf_tensor X;
        kt_gcp_tensor(rng, cs[c].N, cs[c].dims, cs[c].nnz, cs[c].loss, &X);
        char what[96];
        snprintf(what, sizeof what, "random order %u rank %llu", cs[c].N, (unsigned long long)cs[c].R);
        one_case(rng, what, &X, cs[c].R, cs[c].loss, 3000, 2500, 1);
        tf_tensor_free(&X);
    }
}

/* Real tensors: draws, estimate and gradient (Gaussian loss: any values),
 * Poisson too on counts; uber-apr14 a whole run as well. */
static void real_case(const char *name, const char *path, tf_tensor *X, void *user)
{
    (void)path;
    tf_rng *rng = user;
    int counts = 1;
    for (uint64_t k = 0; k < X->nnz && counts; ++k) counts = X->vals[k] >= 0.0 && X->vals[k] == floor(X->vals[k]);
    const int uber = strstr(name, "uber") != NULL;
    one_case(rng, name, X, 16, counts ? TF_GCP_POISSON : TF_GCP_GAUSSIAN, 20000, 10000, uber);
}

/* The shared memory of the gradient's short modes (tf_tuning.gcp_smem): none
 * (every mode by global atomics), and 100,000 bytes (every mode of 400 x
 * 300 x 5 at rank 16, 90 KB: above the 48 KB default, the kernel's
 * opt-in): the runs still the CPU's, the plan saying how many modes. */
static void smem_cases(tf_rng *rng)
{
    const uint64_t dims[3] = {400, 300, 5};
    tf_tensor X;
    kt_gcp_tensor(rng, 3, dims, 3000, TF_GCP_GAUSSIAN, &X);
    tf_gcp_opts o = opts_for(16, TF_GCP_GAUSSIAN, tf_rng_next(rng), 3000, 3000, 2000, 2000);
    tf_ktensor K = random_start(rng, &X, 16, -0.6, 0.6);
    static const struct { int64_t smem; const char *modes; } cs[] = {{0, "(0/3 modes"}, {100000, "(3/3 modes"},
                                                                       {-1, "(1/3 modes"}};
    for (size_t c = 0; c < sizeof cs / sizeof *cs; ++c) {
        tf_tuning t;
        tf_tuning_default(&t);
        t.gcp_smem = cs[c].smem;
        tf_context *ctx = NULL;
        CHECK_OK(tt_gpu_context(&t, &ctx));
        char what[64];
        snprintf(what, sizeof what, "gcp_smem %lld", (long long)cs[c].smem);
        tf_gcp_report rg;
        memset(&rg, 0, sizeof rg);
        check_runs_in(what, &X, &o, &K, ctx, &rg);
        CHECKF(strstr(rg.plan, cs[c].modes) != NULL, "%s: plan '%s', expected '%s'", what, rg.plan, cs[c].modes);
        tf_context_free(ctx);
    }
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* The dense mode asked for on the GPU: refused; auto: the GPU. */
static void choices(tf_rng *rng)
{
    const uint64_t dims[3] = {6, 5, 4};
    tf_tensor X;
    kt_gcp_tensor(rng, 3, dims, 30, TF_GCP_POISSON, &X);
    tf_gcp_opts o = opts_for(2, TF_GCP_POISSON, 7, 0, 0, 0, 0);
    o.dense = 1;
    o.max_epochs = 3;
    o.backend = TF_BACKEND_GPU;
    tf_ktensor K;
    tf_gcp_report rep;
    tf_status s = tf_gcp(&X, &o, &K, &rep);
    CHECKF(s == TF_ERR_UNAVAILABLE && strstr(tf_last_error(), "dense"), "dense on the GPU -> %s \"%s\"",
           tf_status_name(s), tf_last_error());
    if (s == TF_OK) tf_ktensor_free(&K);
    o.backend = TF_BACKEND_AUTO; /* auto: the CPU, saying so */
    s = tf_gcp(&X, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "CPU", 3), "dense under auto -> %s, plan '%s'", tf_status_name(s),
           rep.plan);
    if (s == TF_OK) tf_ktensor_free(&K);
    o.dense = 0;
    o.max_epochs = 2;
    o.epoch_iters = 5;
    s = tf_gcp(&X, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "GPU", 3) && rep.note[0] == 0, "sampled under auto -> %s, plan '%s', "
           "note '%s'", tf_status_name(s), rep.plan, rep.note);
    if (s == TF_OK) tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* On several GPUs: semi-stratified sampling runs there (as on one GPU), and
 * stratified too. */
static void multi_choices(tf_rng *rng)
{
    if (tf_gpu_count() < 2) return;
    const uint64_t dims[3] = {6, 5, 4};
    tf_tensor X;
    kt_gcp_tensor(rng, 3, dims, 30, TF_GCP_POISSON, &X);
    tf_gcp_opts o = opts_for(2, TF_GCP_POISSON, 7, 0, 0, 0, 0);
    o.max_epochs = 2;
    o.epoch_iters = 5;
    o.context = gpus_context(2);
    o.sampling = TF_GCP_SEMI_STRATIFIED;
    tf_ktensor K;
    tf_gcp_report rep;
    tf_status s = tf_gcp(&X, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "2 GPUs", 6) && strstr(rep.plan, "semi-stratified"),
           "semi-stratified on 2 GPUs -> %s \"%s\", plan '%s'", tf_status_name(s), tf_last_error(),
           s == TF_OK ? rep.plan : "");
    if (s == TF_OK) tf_ktensor_free(&K);
    o.sampling = TF_GCP_STRATIFIED;
    s = tf_gcp(&X, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "2 GPUs", 6), "stratified on 2 GPUs -> %s, plan '%s'", tf_status_name(s),
           rep.plan);
    if (s == TF_OK) tf_ktensor_free(&K);
    tf_context_free(o.context);
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_gcp", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_gcp"));
    random_cases(&rng);
    smem_cases(&rng);
    choices(&rng);
    multi_choices(&rng);
    if (!quick) {
        static const char *const tns[] = {".tns.xz", NULL};
        const int count = tf_for_each_data_file("test_gpu_gcp", tns, real_case, &rng);
        if (count >= 0) CHECKF(count > 0, "no .tns.xz file in %s", tf_test_data_dir());
        if (count >= 0) printf("test_gpu_gcp: %d real tensors\n", count);
    }
    return tf_test_finish("test_gpu_gcp");
}
