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
 * Exits 77 without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cpu/gcp_loss.h"
#include "cpu/gcp_sample.h"
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

/* The float64 loss of sample s at K and (G non-NULL) its gradient, with
 * the sums of the terms' magnitudes (fmag; gmag per entry). */
static double ref_pass(const tf_gcp_samples *s, const tf_ktensor *K, int loss, double *fmag, double *G, double *gmag)
{
    const uint32_t N = s->order;
    const uint64_t R = K->rank;
    uint64_t off[TF_MAX_ORDER], total = 0;
    for (uint32_t n = 0; n < N; ++n) {
        off[n] = total;
        total += K->dims[n] * R;
    }
    if (G) {
        memset(G, 0, total * sizeof *G);
        memset(gmag, 0, total * sizeof *gmag);
    }
    double f = 0.0, fm = 0.0;
    for (uint64_t j = 0; j < s->n; ++j) {
        double m = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            double p = 1.0;
            for (uint32_t n = 0; n < N; ++n) p *= K->factors[n].data[(uint64_t)s->ind[n][j] * R + r];
            m += p;
        }
        const double w = j < s->nnz_part ? s->w_nz : s->w_z;
        const double t = w * tf_gcp_f(loss, s->vals[j], m);
        f += t;
        fm += fabs(t);
        if (!G) continue;
        const double y = w * tf_gcp_df(loss, s->vals[j], m);
        for (uint32_t n = 0; n < N; ++n)
            for (uint64_t r = 0; r < R; ++r) {
                double p = y;
                for (uint32_t k = 0; k < N; ++k)
                    if (k != n) p *= K->factors[k].data[(uint64_t)s->ind[k][j] * R + r];
                const uint64_t e = off[n] + (uint64_t)s->ind[n][j] * R + r;
                G[e] += p;
                gmag[e] += fabs(p);
            }
    }
    *fmag = fm;
    return f;
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
    CHECK_OK(tf_gcp_draw(&h, o->seed, 0, o->fnz, o->fz, 1, &fs));
    CHECK_OK(tf_gcp_draw(&h, o->seed, iter + 1, o->gnz, o->gz, 1, &gs));
    double fmag = 0.0, gm = 0.0;
    double *G = malloc(total * sizeof *G), *gmag = malloc(total * sizeof *gmag), *got = kt_poisoned(total);
    const double fref = ref_pass(&fs, K, (int)o->loss, &fmag, NULL, NULL);
    (void)ref_pass(&gs, K, (int)o->loss, &gm, G, gmag);
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

static void check_runs(const char *what, const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *start)
{
    check_runs_in(what, X, o, start, NULL, NULL);
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
        tf_context_opts co;
        tf_context_opts_default(&co);
        co.backend = TF_BACKEND_GPU;
        co.tuning = &t;
        tf_context *ctx = NULL;
        CHECK_OK(tf_context_create(&co, &ctx));
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

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_gcp", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_gcp"));
    random_cases(&rng);
    smem_cases(&rng);
    choices(&rng);
    if (!quick) {
        static const char *const tns[] = {".tns.xz", NULL};
        const int count = tf_for_each_data_file("test_gpu_gcp", tns, real_case, &rng);
        if (count >= 0) CHECKF(count > 0, "no .tns.xz file in %s", tf_test_data_dir());
        if (count >= 0) printf("test_gpu_gcp: %d real tensors\n", count);
    }
    return tf_test_finish("test_gpu_gcp");
}
