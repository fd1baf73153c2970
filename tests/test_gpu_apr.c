/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR on one GPU (src/gpu/apr) against the CPU backend and a float64
 * host reference:
 * - the Phi pass alone (tests/hooks/apr_check.cu: Phi and the pass's edge
 *   rows poisoned with NaN first) against a plain float64 loop, every entry
 *   and the KKT violation: orders 3..5, a mode of length 1 and one of
 *   length 3 (rows across many chunks), ranks 1, 7, 32, 40, 130 and 300
 *   (the two-step pass above 256);
 * - whole runs from the same start on the GPU and the CPU: the
 *   log-likelihood and the KKT violation of every outer iteration within
 *   1e-10 relative, the inner iteration counts and scooches equal, the
 *   final factors and lambda within 1e-10; planted Poisson tensors of 3 and
 *   4 modes (one of length 1), ranks 1, 5 and 40, and a real count tensor
 *   (uber-apr14 from $TF_TEST_DATA, else the repository's data/); where
 *   two GPUs are there, each run again on both (a context of GPUs 0 and 1:
 *   src/gpu/apr/multi.cu) and held to the one GPU's and the CPU's runs the
 *   same way (a mode of length 1 leaves one GPU no rows; lengths 3, 97 and
 *   41 cut unevenly);
 * - streamed copies (pinned host memory, batches through two device
 *   slots): forced batches of one chunk, three and 1000 non-zeros, and a
 *   4 MB context that streams by itself, give the resident run's bits
 *   (tests/hooks/apr_check.cu), ranks 4, 5 and 300, a mode of length 1;
 * - the device budget: a context whose limit holds nothing fails on the GPU
 *   with TF_ERR_NOMEM naming it (not even streamed), and runs on the CPU
 *   under auto, saying why; on two GPUs (not streamed there) it fails too.
 * --quick: the kernel cases up to rank 40 and the small runs only. Exits
 * 77 without a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "gpu_context.h"
#include "hooks/apr_check.h"
#include "kt_test_util.h"
#include "tenfold.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))
#define MAX_ITERS 64

/* ------------------------------------------------------------ inputs */

/* A planted Poisson count tensor (tf_generate: counts of mean 3 from a
 * planted rank-`planted` model). */
static tf_status planted_counts(uint32_t N, const uint64_t *dims, uint64_t nnz, uint64_t planted, uint64_t seed,
                                tf_tensor *X)
{
    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.order = N;
    memcpy(g.dims, dims, N * sizeof *dims);
    g.nnz = nnz;
    g.seed = seed;
    g.rank = planted;
    g.counts = 3.0;
    return tf_generate(&g, X);
}

/* Factors uniform in [0.05, 1.05), lambda in [0.5, 1.5) (or ones). */
static tf_ktensor positive_ktensor(tf_rng *rng, uint32_t N, const uint64_t *dims, uint64_t R, int ones)
{
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, N, dims, R));
    for (uint32_t m = 0; m < N; ++m)
        for (uint64_t e = 0; e < dims[m] * R; ++e) K.factors[m].data[e] = 0.05 + tf_rng_uniform(rng);
    for (uint64_t r = 0; r < R; ++r) K.lambda[r] = ones ? 1.0 : 0.5 + tf_rng_uniform(rng);
    return K;
}

/* -------------------------------------------------------- the Phi pass */

/* The plain float64 Phi of mode n (B = K's factor n) and the sums of |terms|. */
static void ref_phi(const tf_tensor *X, uint32_t n, const tf_ktensor *K, double eps, double *ref, double *mag)
{
    const uint64_t R = K->rank;
    memset(ref, 0, K->dims[n] * R * sizeof *ref);
    memset(mag, 0, K->dims[n] * R * sizeof *mag);
    double *p = malloc(R * sizeof *p);
    for (uint64_t j = 0; j < X->nnz; ++j) {
        for (uint64_t r = 0; r < R; ++r) p[r] = 1.0;
        for (uint32_t k = 0; k < X->order; ++k)
            if (k != n)
                for (uint64_t r = 0; r < R; ++r) p[r] *= K->factors[k].data[(uint64_t)X->ind[k][j] * R + r];
        const double *b = K->factors[n].data + (uint64_t)X->ind[n][j] * R;
        double m = 0.0;
        for (uint64_t r = 0; r < R; ++r) m += b[r] * p[r];
        const double v = X->vals[j] / (m > eps ? m : eps);
        for (uint64_t r = 0; r < R; ++r) {
            ref[(uint64_t)X->ind[n][j] * R + r] += v * p[r];
            mag[(uint64_t)X->ind[n][j] * R + r] += fabs(v * p[r]);
        }
    }
    free(p);
}

static void check_phi(const char *what, const tf_tensor *X, const tf_ktensor *K)
{
    const uint64_t R = K->rank;
    const double eps = 1e-10;
    for (uint32_t n = 0; n < X->order; ++n) {
        const uint64_t len = X->dims[n] * R;
        double *ref = malloc(len * sizeof *ref), *mag = malloc(len * sizeof *mag), *got = kt_poisoned(len);
        ref_phi(X, n, K, eps, ref, mag);
        double kkt = NAN, want = 0.0;
        const tf_status s = tf_gpu_check_apr_phi(X, K, n, eps, got, &kkt);
        CHECKF(s == TF_OK, "%s mode %u: %s", what, n + 1, tf_last_error());
        uint64_t bad = 0;
        for (uint64_t e = 0; s == TF_OK && e < len; ++e) {
            if (!kt_close(got[e], ref[e], mag[e], 1e-12) && bad++ < 3)
                CHECKF(0, "%s mode %u: Phi(%llu, %llu) is %.17g, reference %.17g", what, n + 1,
                       (unsigned long long)(e / R), (unsigned long long)(e % R), got[e], ref[e]);
            const double b = K->factors[n].data[e], c = 1.0 - ref[e];
            const double t = fabs(b < c ? b : c);
            if (t > want) want = t;
        }
        CHECKF(bad == 0, "%s mode %u: %llu of %llu Phi entries differ", what, n + 1, (unsigned long long)bad,
               (unsigned long long)len);
        CHECKF(s != TF_OK || fabs(kkt - want) <= 1e-12 * (fabs(want) > 1.0 ? fabs(want) : 1.0),
               "%s mode %u: KKT %.17g, reference %.17g", what, n + 1, kkt, want);
        free(ref);
        free(mag);
        free(got);
    }
}

static void phi_cases(tf_rng *rng, int quick)
{
    static const struct {
        uint32_t order;
        uint64_t dims[5], nnz;
    } shapes[] = {{3, {60, 1, 45}, 2000}, {3, {3, 200, 150}, 20000}, {4, {12, 30, 9, 20}, 8000},
                  {5, {6, 7, 8, 5, 9}, 4000}};
    static const uint64_t ranks[] = {1, 7, 32, 40, 130, 300};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        tf_tensor X;
        CHECK_OK(planted_counts(shapes[si].order, shapes[si].dims, shapes[si].nnz, 3, 11 + si, &X));
        for (size_t ri = 0; ri < COUNT(ranks) && !(quick && ranks[ri] > 40); ++ri) {
            if (shapes[si].order == 5 && ranks[ri] > 40) continue; /* the generic order: enough at small ranks */
            tf_ktensor K = positive_ktensor(rng, X.order, X.dims, ranks[ri], 1);
            char what[96];
            snprintf(what, sizeof what, "Phi: order %u (%llu non-zeros) R %llu", X.order, (unsigned long long)X.nnz,
                     (unsigned long long)ranks[ri]);
            check_phi(what, &X, &K);
            tf_ktensor_free(&K);
        }
        tf_tensor_free(&X);
    }
}

/* ------------------------------------------------------ whole runs */

typedef struct trace {
    uint32_t n;
    double loglik[MAX_ITERS], kkt[MAX_ITERS];
    uint32_t inner[MAX_ITERS];
    uint64_t scooched[MAX_ITERS];
} trace;

static void on_iter(const tf_cp_apr_iter *it, void *user)
{
    trace *t = user;
    if (t->n >= MAX_ITERS) return;
    t->loglik[t->n] = it->loglik;
    t->kkt[t->n] = it->kkt;
    t->inner[t->n] = it->inner_iters;
    t->scooched[t->n] = it->scooched;
    ++t->n;
}

static int rel_close(double a, double b, double tol)
{
    const double m = fabs(a) > fabs(b) ? fabs(a) : fabs(b);
    return fabs(a - b) <= tol * m + 1e-300;
}

static tf_status run_in(tf_context *ctx, const tf_tensor *X, const tf_ktensor *start, uint64_t R, uint32_t iters,
                        tf_backend be, tf_ktensor *out, trace *t, tf_cp_apr_report *rep)
{
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.rank = R;
    o.max_iters = iters;
    o.init = start;
    o.backend = be;
    o.context = ctx;
    o.callback = on_iter;
    o.user = t;
    memset(t, 0, sizeof *t);
    return tf_cp_apr(X, &o, out, rep);
}

static tf_status run_on(const tf_tensor *X, const tf_ktensor *start, uint64_t R, uint32_t iters, tf_backend be,
                        tf_ktensor *out, trace *t, tf_cp_apr_report *rep)
{
    return run_in(NULL, X, start, R, iters, be, out, t, rep);
}

/* Run a (name an) against run b: the same outer and inner iterations and
 * scooches, log-likelihoods and KKT violations within 1e-10 relative, the
 * factors and lambda within 1e-10. */
static void same_runs(const char *what, const tf_tensor *X, uint64_t R, const char *an, const trace *ta,
                      const tf_cp_apr_report *ra, const tf_ktensor *ka, const char *bn, const trace *tb,
                      const tf_cp_apr_report *rb, const tf_ktensor *kb)
{
    CHECKF(ta->n == tb->n && ra->iters == rb->iters && ra->converged == rb->converged,
           "%s: %u outer iterations on %s, %u on %s", what, ta->n, an, tb->n, bn);
    for (uint32_t i = 0; i < ta->n && i < tb->n; ++i) {
        CHECKF(rel_close(ta->loglik[i], tb->loglik[i], 1e-10), "%s: iteration %u: log-likelihood %.17g (%s), %.17g (%s)",
               what, i + 1, ta->loglik[i], an, tb->loglik[i], bn);
        CHECKF(rel_close(ta->kkt[i], tb->kkt[i], 1e-10) || fabs(ta->kkt[i] - tb->kkt[i]) <= 1e-13,
               "%s: iteration %u: KKT %.17g (%s), %.17g (%s)", what, i + 1, ta->kkt[i], an, tb->kkt[i], bn);
        CHECKF(ta->inner[i] == tb->inner[i] && ta->scooched[i] == tb->scooched[i],
               "%s: iteration %u: %u inner iterations and %llu scooched on %s, %u and %llu on %s", what, i + 1,
               ta->inner[i], (unsigned long long)ta->scooched[i], an, tb->inner[i],
               (unsigned long long)tb->scooched[i], bn);
    }
    uint64_t bad = 0;
    for (uint32_t m = 0; m < X->order; ++m)
        for (uint64_t e = 0; e < X->dims[m] * R; ++e) {
            const double a = ka->factors[m].data[e], b = kb->factors[m].data[e];
            if (!(fabs(a - b) <= 1e-10 * (fabs(b) > 1e-3 ? fabs(b) : 1e-3)) && bad++ < 3)
                CHECKF(0, "%s: factor %u entry %llu is %.17g on %s, %.17g on %s", what, m + 1, (unsigned long long)e,
                       a, an, b, bn);
        }
    for (uint64_t r = 0; r < R; ++r)
        if (!rel_close(ka->lambda[r], kb->lambda[r], 1e-10) && bad++ < 3)
            CHECKF(0, "%s: lambda %llu is %.17g on %s, %.17g on %s", what, (unsigned long long)r + 1, ka->lambda[r],
                   an, kb->lambda[r], bn);
    CHECKF(bad == 0, "%s: %llu factor entries or weights differ between %s and %s", what, (unsigned long long)bad, an,
           bn);
}

/* The same start on two GPUs (a context of GPUs 0 and 1) against one GPU's
 * run and the CPU's. */
static void compare_two(const char *what, const tf_tensor *X, uint64_t R, uint32_t iters, const tf_ktensor *start,
                        const trace *tg, const tf_cp_apr_report *rg, const tf_ktensor *kg, const trace *tc,
                        const tf_cp_apr_report *rc, const tf_ktensor *kc)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = 2;
    co.devices[0] = 0;
    co.devices[1] = 1;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    tf_ktensor k2;
    trace t2;
    tf_cp_apr_report r2;
    const tf_status s = run_in(ctx, X, start, R, iters, TF_BACKEND_GPU, &k2, &t2, &r2);
    CHECKF(s == TF_OK, "%s: 2 GPUs: %s", what, tf_last_error());
    if (s == TF_OK) {
        CHECKF(!strncmp(r2.plan, "2 GPUs", 6), "%s: 2 GPUs: the plan is '%s'", what, r2.plan);
        same_runs(what, X, R, "2 GPUs", &t2, &r2, &k2, "1 GPU", tg, rg, kg);
        same_runs(what, X, R, "2 GPUs", &t2, &r2, &k2, "the CPU", tc, rc, kc);
        printf("%s: log-likelihood %.12g (2 GPUs: %s)\n", what, r2.loglik, r2.plan);
        tf_ktensor_free(&k2);
    }
    tf_context_free(ctx);
}

/* The same start on one GPU and on the CPU (and, where two GPUs are
 * there, on both). */
static void compare_runs(const char *what, const tf_tensor *X, uint64_t R, uint32_t iters, tf_rng *rng)
{
    tf_ktensor start = positive_ktensor(rng, X->order, X->dims, R, 0);
    tf_ktensor kg, kc;
    trace tg, tc;
    tf_cp_apr_report rg, rc;
    tf_status s = run_on(X, &start, R, iters, TF_BACKEND_GPU, &kg, &tg, &rg);
    CHECKF(s == TF_OK, "%s: GPU: %s", what, tf_last_error());
    if (s != TF_OK) {
        tf_ktensor_free(&start);
        return;
    }
    CHECKF(!strncmp(rg.plan, "GPU", 3), "%s: the plan is '%s'", what, rg.plan);
    s = run_on(X, &start, R, iters, TF_BACKEND_CPU, &kc, &tc, &rc);
    CHECKF(s == TF_OK, "%s: CPU: %s", what, tf_last_error());
    if (s == TF_OK) {
        same_runs(what, X, R, "the GPU", &tg, &rg, &kg, "the CPU", &tc, &rc, &kc);
        printf("%s: %u outer iterations, log-likelihood %.12g (GPU) %.12g (CPU)\n", what, tg.n, rg.loglik, rc.loglik);
        if (tf_gpu_count() >= 2) compare_two(what, X, R, iters, &start, &tg, &rg, &kg, &tc, &rc, &kc);
        tf_ktensor_free(&kc);
    }
    tf_ktensor_free(&kg);
    tf_ktensor_free(&start);
}

static void run_cases(tf_rng *rng, int quick)
{
    tf_tensor X;
    CHECK_OK(planted_counts(3, (const uint64_t[]){60, 50, 40}, 8000, 5, 21, &X));
    compare_runs("planted 3-mode R 5", &X, 5, 12, rng);
    compare_runs("planted 3-mode R 1", &X, 1, 12, rng);
    if (!quick) compare_runs("planted 3-mode R 40", &X, 40, 6, rng);
    tf_tensor_free(&X);
    CHECK_OK(planted_counts(4, (const uint64_t[]){30, 1, 20, 25}, 6000, 4, 22, &X));
    compare_runs("planted 4-mode (a mode of length 1) R 4", &X, 4, 10, rng);
    if (!quick) compare_runs("planted 4-mode (a mode of length 1) R 40", &X, 40, 5, rng);
    tf_tensor_free(&X);
    /* uneven rows: a mode of length 3 (its rows cut 2 + 1 or 1 + 2 over two
     * GPUs, the heavy row's non-zeros across many chunks) and odd lengths */
    CHECK_OK(planted_counts(3, (const uint64_t[]){3, 97, 41}, 7000, 3, 24, &X));
    compare_runs("planted 3-mode (lengths 3, 97, 41) R 7", &X, 7, 8, rng);
    tf_tensor_free(&X);
    if (tf_gpu_count() < 2) printf("test_gpu_apr: fewer than 2 GPUs, skipping the 2-GPU runs\n");
    if (quick) return;
    char path[4096];
    const char *dir = getenv("TF_TEST_DATA") && *getenv("TF_TEST_DATA") ? getenv("TF_TEST_DATA") : TF_REPO_DATA;
    snprintf(path, sizeof path, "%s/uber-apr14.tns.xz", dir);
    if (tf_read_tensor(path, 0, &X, NULL) == TF_OK) {
        compare_runs("uber-apr14 R 16", &X, 16, 4, rng);
        tf_tensor_free(&X);
    } else {
        printf("test_gpu_apr: %s not readable (%s), skipping the real tensor\n", path, tf_last_error());
    }
}

/* Runs a and b from the same start: the same bits (log-likelihood and KKT
 * of every outer iteration, inner iterations, scooches, factors, lambda). */
static void identical_runs(const char *what, const tf_tensor *X, uint64_t R, const trace *ta, const tf_ktensor *ka,
                           const trace *tb, const tf_ktensor *kb)
{
    int same = ta->n == tb->n;
    for (uint32_t i = 0; same && i < ta->n; ++i)
        same = ta->loglik[i] == tb->loglik[i] && (ta->kkt[i] == tb->kkt[i] || (ta->kkt[i] != ta->kkt[i] &&
                                                                                tb->kkt[i] != tb->kkt[i])) &&
               ta->inner[i] == tb->inner[i] && ta->scooched[i] == tb->scooched[i];
    CHECKF(same, "%s: the iterations differ (%u and %u; first log-likelihoods %.17g and %.17g)", what, ta->n, tb->n,
           ta->n ? ta->loglik[0] : 0.0, tb->n ? tb->loglik[0] : 0.0);
    for (uint32_t m = 0; m < X->order; ++m)
        CHECKF(!memcmp(ka->factors[m].data, kb->factors[m].data, X->dims[m] * R * sizeof(double)),
               "%s: factor %u differs", what, m + 1);
    CHECKF(!memcmp(ka->lambda, kb->lambda, R * sizeof(double)), "%s: lambda differs", what);
}

/* The copies sorted on the host instead of the GPU give the same bits.
 * The copies streamed from pinned host memory in forced batches (whole
 * chunks: one chunk, a few, a batch that is not a divisor of the copy)
 * give the resident run's bits: rows going on across batches (a mode of
 * length 1 spans all of them), the two-step pass above rank 256, the
 * log-likelihood's per-chunk sums. Then the trigger: a context whose
 * limit holds the factors but not the copies streams by itself, the same
 * bits again. */
static void streamed_cases(tf_rng *rng, int quick)
{
    static const struct {
        uint32_t order;
        uint64_t dims[4], nnz, R;
    } cases[] = {{3, {60, 50, 40}, 8000, 5}, {4, {30, 1, 20, 25}, 6000, 4}, {3, {40, 30, 20}, 5000, 300}};
    for (size_t ci = 0; ci < COUNT(cases) && !(quick && ci == 2); ++ci) {
        tf_tensor X;
        CHECK_OK(planted_counts(cases[ci].order, cases[ci].dims, cases[ci].nnz, 3, 31 + ci, &X));
        const uint64_t R = cases[ci].R, L = R > 128 ? R / 2 : 64;
        tf_ktensor start = positive_ktensor(rng, X.order, X.dims, R, 0);
        tf_ktensor kr;
        trace tr;
        tf_cp_apr_report rr;
        tf_status s = run_on(&X, &start, R, 6, TF_BACKEND_GPU, &kr, &tr, &rr);
        CHECKF(s == TF_OK, "streamed case %zu: resident: %s", ci, tf_last_error());
        const uint64_t batches[] = {L, 3 * L, 1000};
        for (size_t bi = 0; s == TF_OK && bi < COUNT(batches); ++bi) {
            tf_cp_apr_opts o;
            tf_cp_apr_opts_default(&o);
            o.rank = R;
            o.max_iters = 6;
            o.init = &start;
            o.callback = on_iter;
            trace ts;
            memset(&ts, 0, sizeof ts);
            o.user = &ts;
            tf_ktensor ks;
            tf_cp_apr_report rs;
            char what[128];
            snprintf(what, sizeof what, "streamed: order %u R %llu, batches of %llu", X.order, (unsigned long long)R,
                     (unsigned long long)batches[bi]);
            const tf_status t = tf_gpu_check_apr_streamed(&X, &o, batches[bi], &ks, &rs);
            CHECKF(t == TF_OK, "%s: %s", what, tf_last_error());
            if (t != TF_OK) continue;
            CHECKF(strstr(rs.plan, "streamed") != NULL, "%s: the plan is '%s'", what, rs.plan);
            identical_runs(what, &X, R, &ts, &ks, &tr, &kr);
            tf_ktensor_free(&ks);
        }
        if (s == TF_OK) { /* the copies sorted on the host (tuning.fcoo_build 1) = sorted on the GPU */
            tf_tuning tuning;
            tf_tuning_default(&tuning);
            tuning.fcoo_build = 1;
            tf_context *ctx = NULL;
            CHECK_OK(tt_gpu_context(&tuning, &ctx));
            tf_ktensor kh;
            trace th;
            tf_cp_apr_report rh;
            char what[128];
            snprintf(what, sizeof what, "host-sorted copies: order %u R %llu", X.order, (unsigned long long)R);
            const tf_status h = run_in(ctx, &X, &start, R, 6, TF_BACKEND_GPU, &kh, &th, &rh);
            CHECKF(h == TF_OK, "%s: %s", what, tf_last_error());
            if (h == TF_OK) {
                identical_runs(what, &X, R, &th, &kh, &tr, &kr);
                tf_ktensor_free(&kh);
            }
            tf_context_free(ctx);
        }
        if (s == TF_OK && ci == 0) { /* the trigger: 4 MB hold the factors and two slots, not the copies */
            tf_tensor Y;
            CHECK_OK(planted_counts(3, (const uint64_t[]){100, 100, 100}, 200000, 3, 41, &Y));
            tf_ktensor sy = positive_ktensor(rng, Y.order, Y.dims, 4, 0);
            tf_ktensor ky, kz;
            trace ty, tz;
            tf_cp_apr_report ry, rz;
            tf_status u = run_on(&Y, &sy, 4, 4, TF_BACKEND_GPU, &ky, &ty, &ry);
            CHECKF(u == TF_OK && strstr(ry.plan, "streamed") == NULL, "resident 200k: %s (%s)", tf_last_error(),
                   ry.plan);
            tf_context_opts co;
            tf_context_opts_default(&co);
            co.backend = TF_BACKEND_GPU;
            co.memory_limit = 4u << 20;
            tf_context *ctx = NULL;
            CHECK_OK(tf_context_create(&co, &ctx));
            const tf_status v = run_in(ctx, &Y, &sy, 4, 4, TF_BACKEND_GPU, &kz, &tz, &rz);
            CHECKF(v == TF_OK && strstr(rz.plan, "streamed") != NULL, "4 MB: %s, plan '%s'",
                   v == TF_OK ? "ok" : tf_last_error(), v == TF_OK ? rz.plan : "");
            if (u == TF_OK && v == TF_OK) identical_runs("streamed by the budget (4 MB)", &Y, 4, &tz, &kz, &ty, &ky);
            if (v == TF_OK) tf_ktensor_free(&kz);
            if (u == TF_OK) tf_ktensor_free(&ky);
            tf_context_free(ctx);
            tf_ktensor_free(&sy);
            tf_tensor_free(&Y);
        }
        if (s == TF_OK) tf_ktensor_free(&kr);
        tf_ktensor_free(&start);
        tf_tensor_free(&X);
    }
}

/* A context whose limit holds nothing: the GPU refuses, auto runs on the CPU. */
static void no_room(tf_rng *rng)
{
    tf_tensor X;
    CHECK_OK(planted_counts(3, (const uint64_t[]){40, 30, 20}, 3000, 3, 23, &X));
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.memory_limit = 4096;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    tf_cp_apr_opts o;
    tf_cp_apr_opts_default(&o);
    o.rank = 3;
    o.max_iters = 2;
    o.context = ctx;
    o.backend = TF_BACKEND_GPU;
    tf_ktensor K;
    tf_cp_apr_report rep;
    tf_status s = tf_cp_apr(&X, &o, &K, &rep);
    CHECKF(s == TF_ERR_NOMEM && strstr(tf_last_error(), "GPU CP-APR") && strstr(tf_last_error(), "not even"),
           "no room on the GPU -> %s \"%s\"", tf_status_name(s), tf_last_error());
    o.backend = TF_BACKEND_AUTO;
    s = tf_cp_apr(&X, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "CPU", 3) && strstr(rep.note, "running on the CPU"),
           "no room, auto -> %s, plan '%s', note '%s'", tf_status_name(s), rep.plan, rep.note);
    if (s == TF_OK) tf_ktensor_free(&K);
    tf_context_free(ctx);
    if (tf_gpu_count() >= 2) { /* two GPUs whose limit holds nothing: a clear failure, no streaming */
        co.ndevices = 2;
        co.devices[0] = 0;
        co.devices[1] = 1;
        ctx = NULL;
        CHECK_OK(tf_context_create(&co, &ctx));
        o.context = ctx;
        o.backend = TF_BACKEND_GPU;
        s = tf_cp_apr(&X, &o, &K, &rep);
        CHECKF(s == TF_ERR_NOMEM && strstr(tf_last_error(), "not streamed"), "no room on 2 GPUs -> %s \"%s\"",
               tf_status_name(s), tf_last_error());
        if (s == TF_OK) tf_ktensor_free(&K);
        tf_context_free(ctx);
        o.backend = TF_BACKEND_AUTO;
    }
    /* auto without a context: the GPU */
    o.context = NULL;
    s = tf_cp_apr(&X, &o, &K, &rep);
    CHECKF(s == TF_OK && !strncmp(rep.plan, "GPU", 3) && rep.note[0] == 0, "auto -> %s, plan '%s', note '%s'",
           tf_status_name(s), rep.plan, rep.note);
    if (s == TF_OK) tf_ktensor_free(&K);
    tf_tensor_free(&X);
    (void)rng;
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_apr", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_apr"));
    phi_cases(&rng, quick);
    run_cases(&rng, quick);
    streamed_cases(&rng, quick);
    if (!quick) no_room(&rng);
    return tf_test_finish("test_gpu_apr");
}
