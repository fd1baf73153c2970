/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by ALS over two GPUs of one process (src/gpu/complete/multi.cu)
 * against one GPU (src/gpu/complete/backend.cu) and the CPU (itself held to
 * float64 loops in test_complete):
 * - lockstep: the three backends of the seam (seams/complete.h) from the
 *   same start, every mode's update in turn, the GPU backends' factor
 *   poisoned with NaN on the device (on both GPUs) before each, so that a
 *   row left out, or not exchanged, shows: the two GPUs' factors have the
 *   one GPU's bits (a row's sums in the same order, its segments the
 *   same), the CPU's to 1e-10; the update's error, the training /
 *   validation / test sums, the squared norms and the kept model's test
 *   sum within 1e-12 of one GPU's and 1e-10 of the CPU's (and of a host
 *   float64 loop); random tensors of 3 and 4 modes (rows without entries,
 *   a row longer than a segment, a mode of one row -- a GPU without rows
 *   of it --, ranks 1..64) and the first 100,000 entries of uber-apr14;
 * - whole runs through tf_complete on a context of GPUs 0 and 1: the train
 *   / validation RMSE of every iteration, the iteration counts, the test
 *   RMSE within 1e-10 of one GPU's and the CPU's, the factors returned
 *   equal to one GPU's;
 * - a singular system (l2 = 0) in a row of the second GPU: TF_ERR_NUMERIC
 *   with the CPU's message word for word (the row in the tensor's labels);
 * - Adam on several GPUs: runs there (test_gpu_complete_adam checks it).
 * Runs where tf_gpu_count() >= 2 (TF_TEST_GPUS=2 makes one GPU two);
 * exits 77 otherwise. --quick: the small cases only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "algo/complete.h"
#include "front/partition.h"
#include "hooks/complete_check.h"
#include "kt_test_util.h"
#include "seams/complete.h"
#include "tenfold.h"

#define TOL 1e-10
#define TOL_SUM 1e-12

static int close_tol(double got, double want, double scale, double tol)
{
    const double s = fabs(want) > scale ? fabs(want) : scale;
    return isfinite(got) && fabs(got - want) <= tol * s + 1e-300;
}

static double ref_sse(const tf_tensor *X, const tf_ktensor *K)
{
    double s = 0.0, mag;
    for (uint64_t k = 0; k < X->nnz; ++k) {
        const double e = X->vals[k] - kt_ref_model(X, K, k, &mag);
        s += e * e;
    }
    return s;
}

static tf_context *two_gpus(void)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = 2;
    co.devices[0] = 0;
    co.devices[1] = 1;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    return ctx;
}

static tf_context *one_gpu(void)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    return ctx;
}

/* The current factors of a backend (keep, then result) into K (poisoned first). */
static void current(const tf_complete_backend *be, tf_ktensor *K)
{
    for (uint32_t m = 0; m < K->order; ++m)
        for (uint64_t e = 0; e < K->dims[m] * K->rank; ++e) K->factors[m].data[e] = NAN;
    CHECK_OK(be->ops->keep(be->ctx));
    CHECK_OK(be->ops->result(be->ctx, K));
    for (uint64_t r = 0; r < K->rank; ++r) K->lambda[r] = 1.0;
}

/* Entries of a differing from b: exact (tol 0) or within tol of the row's largest. */
static uint64_t compare_factors(const char *what, const char *an, const tf_ktensor *a, const char *bn,
                                const tf_ktensor *b, double tol, uint32_t it, uint32_t n)
{
    uint64_t bad = 0;
    const uint64_t R = b->rank;
    for (uint32_t m = 0; m < b->order; ++m)
        for (uint64_t i = 0; i < b->dims[m]; ++i) {
            const double *br = b->factors[m].data + i * R, *ar = a->factors[m].data + i * R;
            double scale = 1e-12;
            for (uint64_t r = 0; r < R; ++r) scale = fabs(br[r]) > scale ? fabs(br[r]) : scale;
            for (uint64_t r = 0; r < R; ++r) {
                const int ok = tol == 0.0 ? memcmp(&ar[r], &br[r], sizeof(double)) == 0
                                          : close_tol(ar[r], br[r], scale, tol);
                if (!ok && bad++ < 3)
                    CHECKF(0, "%s: iteration %u mode %u: factor %u (%llu, %llu) is %.17g on %s, %.17g on %s", what,
                           it, n + 1, m + 1, (unsigned long long)i + 1, (unsigned long long)r + 1, ar[r], an, br[r],
                           bn);
            }
        }
    return bad;
}

/* The backend over the two GPUs of ctx: every mode's rows cut as the front
 * end cuts them. */
static tf_status create_two(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                            const tf_complete_opts *o, tf_partition *pt, tf_complete_backend *be)
{
    memset(pt, 0, sizeof *pt);
    TF_TRY(tf_partition_make(pt, train, 2, TF_PARTITION_CONTIGUOUS, NULL));
    tf_partition_shards set;
    tf_shards sh;
    tf_status s = tf_partition_shards_make(&set, train, pt, 0, 2, 0, NULL, 0, &sh);
    if (s != TF_OK) return s;
    s = tf_cuda_complete_backend_create_multi(train, val, test, o, &sh, be);
    tf_partition_shards_free(&set);
    return s;
}

static void lockstep(const char *what, const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                     uint64_t R, double l2, uint32_t iters, tf_context *ctx1, tf_context *ctx2)
{
    tf_complete_opts o;
    tf_complete_opts_default(&o);
    o.rank = R;
    o.l2 = l2;
    o.seed = 7 + R;
    o.threads = 2;
    tf_complete_backend cb, gb, mb;
    tf_partition pt;
    CHECK_OK(tf_cpu_complete_backend_create(train, val, test, &o, &cb));
    o.context = ctx1;
    CHECK_OK(tf_cuda_complete_backend_create(train, val, test, &o, &gb));
    o.context = ctx2;
    tf_status s = create_two(train, val, test, &o, &pt, &mb);
    CHECKF(s == TF_OK, "%s: 2 GPUs: %s", what, tf_last_error());
    if (s != TF_OK) {
        gb.ops->destroy(gb.ctx);
        cb.ops->destroy(cb.ctx);
        tf_partition_free(&pt);
        return;
    }
    CHECKF(!strncmp(mb.plan_desc, "2 GPUs", 6), "%s: the plan is '%s'", what, mb.plan_desc);
    tf_ktensor start, kc, kg, km;
    CHECK_OK(tf_complete_start(train, &o, &start));
    CHECK_OK(tf_ktensor_alloc(&kc, train->order, train->dims, R));
    CHECK_OK(tf_ktensor_alloc(&kg, train->order, train->dims, R));
    CHECK_OK(tf_ktensor_alloc(&km, train->order, train->dims, R));
    CHECK_OK(cb.ops->init(cb.ctx, &start));
    CHECK_OK(gb.ops->init(gb.ctx, &start));
    CHECK_OK(mb.ops->init(mb.ctx, &start));
    const tf_tensor *sets[3] = {train, val, test};
    uint64_t bad = 0;
    for (uint32_t it = 1; it <= iters && !bad; ++it)
        for (uint32_t n = 0; n < train->order && !bad; ++n) {
            double sc = NAN, sg = NAN, sm = NAN;
            CHECK_OK(tf_gpu_check_complete_poison(gb.ctx, n));
            CHECK_OK(tf_gpu_check_complete_multi_poison(mb.ctx, n));
            CHECK_OK(cb.ops->update(cb.ctx, n, l2, &sc));
            CHECK_OK(gb.ops->update(gb.ctx, n, l2, &sg));
            s = mb.ops->update(mb.ctx, n, l2, &sm);
            CHECKF(s == TF_OK, "%s: iteration %u mode %u: 2 GPUs: %s", what, it, n + 1, tf_last_error());
            if (s != TF_OK) {
                bad = 1;
                break;
            }
            CHECKF(close_tol(sm, sg, 0.0, TOL_SUM) && close_tol(sm, sc, 0.0, TOL),
                   "%s: iteration %u mode %u: update's sse %.17g on 2 GPUs, %.17g on one, %.17g on the CPU", what, it,
                   n + 1, sm, sg, sc);
            current(&cb, &kc);
            current(&gb, &kg);
            current(&mb, &km);
            bad += compare_factors(what, "2 GPUs", &km, "one GPU", &kg, 0.0, it, n);
            bad += compare_factors(what, "2 GPUs", &km, "the CPU", &kc, TOL, it, n);
            for (int set = 0; set < 3; ++set) {
                double c = NAN, g = NAN, m = NAN;
                CHECK_OK(cb.ops->sse(cb.ctx, (tf_complete_set)set, &c));
                CHECK_OK(gb.ops->sse(gb.ctx, (tf_complete_set)set, &g));
                CHECK_OK(mb.ops->sse(mb.ctx, (tf_complete_set)set, &m));
                const double ref = sets[set] ? ref_sse(sets[set], &kc) : 0.0;
                CHECKF(close_tol(m, g, 1e-300, TOL_SUM) && close_tol(m, c, 1e-300, TOL) &&
                           close_tol(m, ref, 1e-300, TOL),
                       "%s: iteration %u mode %u set %d: sse %.17g on 2 GPUs, %.17g on one, %.17g on the CPU, %.17g "
                       "float64", what, it, n + 1, set, m, g, c, ref);
            }
            double fc = NAN, fg = NAN, fm = NAN, tc = NAN, tg = NAN, tm = NAN;
            CHECK_OK(cb.ops->frob_sq(cb.ctx, &fc));
            CHECK_OK(gb.ops->frob_sq(gb.ctx, &fg));
            CHECK_OK(mb.ops->frob_sq(mb.ctx, &fm));
            CHECK_OK(cb.ops->kept_sse(cb.ctx, TF_COMPLETE_TEST, &tc));
            CHECK_OK(gb.ops->kept_sse(gb.ctx, TF_COMPLETE_TEST, &tg));
            CHECK_OK(mb.ops->kept_sse(mb.ctx, TF_COMPLETE_TEST, &tm));
            CHECKF(fm == fg && close_tol(fm, fc, 0.0, TOL) && close_tol(tm, tg, 1e-300, TOL_SUM) &&
                       close_tol(tm, tc, 1e-300, TOL),
                   "%s: iteration %u mode %u: norms %.17g / %.17g / %.17g, kept test sse %.17g / %.17g / %.17g (2 "
                   "GPUs / one / CPU)", what, it, n + 1, fm, fg, fc, tm, tg, tc);
        }
    tf_ktensor_free(&start);
    tf_ktensor_free(&kc);
    tf_ktensor_free(&kg);
    tf_ktensor_free(&km);
    mb.ops->destroy(mb.ctx);
    gb.ops->destroy(gb.ctx);
    cb.ops->destroy(cb.ctx);
    tf_partition_free(&pt);
}

static void lockstep_random(tf_rng *rng, int quick, tf_context *ctx1, tf_context *ctx2)
{
    static const uint64_t ranks[] = {1, 3, 5, 10, 16, 17, 24, 32, 64};
    const size_t nr = quick ? 5 : sizeof ranks / sizeof *ranks;
    for (size_t t = 0; t < nr; ++t) {
        const uint64_t R = ranks[t];
        const uint32_t N = 3 + (uint32_t)(t % 2);
        uint64_t dims[TF_MAX_ORDER] = {0};
        for (uint32_t m = 0; m < N; ++m) dims[m] = 9 + tf_rng_below(rng, 40);
        const int heavy = t % 3 == 1, thin = t % 4 == 3;
        if (thin) dims[N - 1] = 1; /* one row: a GPU without rows of the mode */
        const uint64_t nnz = heavy ? 12000 : 1500 + tf_rng_below(rng, 1500);
        tf_tensor X, sets[3];
        kt_complete_entries(rng, N, dims, nnz, t % 2 == 0, heavy, &X);
        kt_split3(rng, &X, sets);
        char what[128];
        snprintf(what, sizeof what, "random order %u rank %llu%s%s%s", N, (unsigned long long)R,
                 t % 2 == 0 ? ", empty rows" : "", heavy ? ", a long row" : "", thin ? ", a mode of one row" : "");
        lockstep(what, &sets[0], &sets[1], &sets[2], R, 0.5 + tf_rng_uniform(rng), 4, ctx1, ctx2);
        for (int s = 0; s < 3; ++s) tf_tensor_free(&sets[s]);
        tf_tensor_free(&X);
    }
}

static void lockstep_realdata(tf_rng *rng, tf_context *ctx1, tf_context *ctx2)
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
    lockstep("uber-apr14 (100,000 entries) rank 10", &sets[0], &sets[1], &sets[2], 10, 0.1, 3, ctx1, ctx2);
    tf_tensor_free(&Y);
    for (int s = 0; s < 3; ++s) tf_tensor_free(&sets[s]);
}

/* ----------------------------------------------------------- whole runs */

static tf_status run_in(tf_context *ctx, tf_backend b, const tf_tensor *sets, uint64_t R, double l2,
                        tf_complete_method method, tf_ktensor *K, tf_complete_report *rep)
{
    tf_complete_opts o;
    tf_complete_opts_default(&o);
    o.rank = R;
    o.l2 = l2;
    o.max_iters = 12;
    o.patience = 3;
    o.seed = 11;
    o.backend = b;
    o.context = ctx;
    o.method = method;
    o.epoch_iters = 10;
    return tf_complete(&sets[0], &sets[1], &sets[2], &o, K, rep);
}

static void same_runs(const char *what, const tf_complete_report *a, const char *an, const tf_complete_report *b,
                      const char *bn)
{
    CHECKF(a->iters == b->iters && a->best_iter == b->best_iter, "%s: iterations %u (best %u) on %s, %u (%u) on %s",
           what, a->iters, a->best_iter, an, b->iters, b->best_iter, bn);
    for (uint32_t i = 0; i < a->iters && i < b->iters; ++i)
        CHECKF(close_tol(a->iterations[i].train_rmse, b->iterations[i].train_rmse, 0.0, TOL) &&
                   close_tol(a->iterations[i].val_rmse, b->iterations[i].val_rmse, 0.0, TOL) &&
                   close_tol(a->iterations[i].objective, b->iterations[i].objective, 0.0, TOL),
               "%s iteration %u: train %.17g / %.17g, val %.17g / %.17g (%s / %s)", what, i + 1,
               a->iterations[i].train_rmse, b->iterations[i].train_rmse, a->iterations[i].val_rmse,
               b->iterations[i].val_rmse, an, bn);
    CHECKF(close_tol(a->test_rmse, b->test_rmse, 0.0, TOL), "%s: test RMSE %.17g on %s, %.17g on %s", what,
           a->test_rmse, an, b->test_rmse, bn);
}

static void whole_runs(tf_rng *rng, int quick, tf_context *ctx2)
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
        char what[64];
        snprintf(what, sizeof what, "whole run rank %llu", (unsigned long long)R);
        tf_ktensor kc, kg, km;
        tf_complete_report rc, rg, rm;
        CHECK_OK(run_in(NULL, TF_BACKEND_CPU, sets, R, 1.0, TF_COMPLETE_ALS, &kc, &rc));
        CHECK_OK(run_in(NULL, TF_BACKEND_GPU, sets, R, 1.0, TF_COMPLETE_ALS, &kg, &rg));
        tf_status s = run_in(ctx2, TF_BACKEND_AUTO, sets, R, 1.0, TF_COMPLETE_ALS, &km, &rm);
        CHECKF(s == TF_OK, "%s on 2 GPUs: %s", what, tf_last_error());
        if (s == TF_OK) {
            CHECKF(!strncmp(rm.plan, "2 GPUs", 6), "%s: the plan is '%s'", what, rm.plan);
            same_runs(what, &rm, "2 GPUs", &rg, "one GPU");
            same_runs(what, &rm, "2 GPUs", &rc, "the CPU");
            compare_factors(what, "2 GPUs", &km, "one GPU", &kg, 0.0, rm.iters, 0);
            compare_factors(what, "2 GPUs", &km, "the CPU", &kc, TOL, rm.iters, 0);
            tf_ktensor_free(&km);
            tf_complete_report_free(&rm);
        }
        tf_ktensor_free(&kc);
        tf_ktensor_free(&kg);
        tf_complete_report_free(&rc);
        tf_complete_report_free(&rg);
        for (int i = 0; i < 3; ++i) tf_tensor_free(&sets[i]);
        tf_tensor_free(&X);
    }
}

/* l2 = 0 and the last row of mode 1 (the second GPU's) with one entry at
 * rank 2: the only singular row; the message is the CPU's. */
static void singular(tf_rng *rng, tf_context *ctx2)
{
    const uint64_t dims[3] = {12, 10, 9};
    tf_tensor X, sets[3];
    kt_complete_entries(rng, 3, dims, 600, 0, 0, &X);
    kt_split3(rng, &X, sets);
    int kept = 0;
    for (uint64_t k = 0; k < sets[0].nnz; ++k)
        if (sets[0].ind[0][k] == 11 && kept++) sets[0].ind[0][k] = 3;
    CHECK(kept >= 1);
    tf_ktensor K;
    tf_complete_report rep;
    tf_status sc = run_in(NULL, TF_BACKEND_CPU, sets, 2, 0.0, TF_COMPLETE_ALS, &K, &rep);
    char cpu_msg[512];
    snprintf(cpu_msg, sizeof cpu_msg, "%s", tf_last_error());
    CHECKF(sc == TF_ERR_NUMERIC && strstr(cpu_msg, "row 12 of mode 1 has a singular system (1 observed entry for "
                                                   "rank 2, pivot 2)"),
           "l2 0 on the CPU: %s \"%s\"", tf_status_name(sc), cpu_msg);
    tf_status sm = run_in(ctx2, TF_BACKEND_AUTO, sets, 2, 0.0, TF_COMPLETE_ALS, &K, &rep);
    CHECKF(sm == TF_ERR_NUMERIC && !strcmp(tf_last_error(), cpu_msg), "l2 0 on 2 GPUs: %s \"%s\", the CPU's \"%s\"",
           tf_status_name(sm), tf_last_error(), cpu_msg);
    /* Adam on several GPUs runs there (test_gpu_complete_adam checks its numbers) */
    const tf_status sa = run_in(ctx2, TF_BACKEND_AUTO, sets, 2, 1.0, TF_COMPLETE_ADAM, &K, &rep);
    CHECKF(sa == TF_OK && !strncmp(rep.plan, "Adam: 2 GPUs", 12), "Adam on 2 GPUs: %s, plan '%s'",
           tf_status_name(sa), rep.plan);
    if (sa == TF_OK) {
        tf_ktensor_free(&K);
        tf_complete_report_free(&rep);
    }
    for (int i = 0; i < 3; ++i) tf_tensor_free(&sets[i]);
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() < 2) return tf_test_skip("test_gpu_complete_multi", "fewer than 2 GPUs (TF_TEST_GPUS=2 "
                                                                           "makes one GPU two)");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_complete_multi"));
    tf_context *ctx1 = one_gpu(), *ctx2 = two_gpus();
    lockstep_random(&rng, quick, ctx1, ctx2);
    if (!quick) lockstep_realdata(&rng, ctx1, ctx2);
    whole_runs(&rng, quick, ctx2);
    singular(&rng, ctx2);
    tf_context_free(ctx2);
    tf_context_free(ctx1);
    return tf_test_finish("test_gpu_complete_multi");
}
