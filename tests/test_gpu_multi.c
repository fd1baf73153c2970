/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS over several GPUs in one process (src/gpu/cpd/multi.cu) against
 * one GPU, same seed: the fit after every iteration within 1e-10 (fp64) /
 * 1e-4 (fp32) and the final factors and weights within 1e-8 / 1e-3 (relative
 * to each column's largest entry), for orders 3-5, ranks 8 and 32, resident and streamed shards
 * (tuning.stream), the rows exchanged by peer copies or NCCL
 * (tuning.gpu_exchange), the exchange overlapped with the next MTTKRP (R <= 32,
 * the default) and not (tuning.cpd_overlap = 0), 3 or 4 GPUs where the machine has them, the
 * large-rank solve (tuning.cpd_cusolver), a slice
 * holding 45 % of the non-zeros next to the parts' boundary, a mode shorter
 * than the GPUs (a part with no rows), the GPUs listed in reverse, and the
 * rows cut longest-first (tuning.partition: modes relabeled inside the run,
 * the results in the caller's order), the shards cut on the GPUs (the
 * default where they fit; tuning.gpu_shards 2 forces it) and split on the
 * host (tuning.gpu_shards 1). MTTKRP plans over two GPUs match the float64
 * reference on every mode, contiguous and longest-first, shards cut on the
 * GPUs, split on the host, and streamed.
 * Bad device lists fail with a message. Skipped (exit 77) with fewer than two
 * GPUs; `--quick` (or TF_TEST_QUICK=1) runs a subset. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "cpd_trace.h"
#include "gpu_test_tensors.h"


typedef struct setup {
    int ngpus;
    int reverse;      /* devices listed 1, 0 */
    int stream;       /* tuning.stream = 1: every shard streams */
    int cusolver;     /* tuning.cpd_cusolver = 1 */
    int no_overlap;   /* tuning.cpd_overlap = 0: the exchange waited for in each step */
    int nccl;         /* tuning.gpu_exchange: 1 NCCL, 2 host staging, not peer copies */
    int partition;    /* tuning.partition (TF_PARTITION_LONGEST_FIRST: relabeled modes) */
    int shards;       /* tuning.gpu_shards: 0 cut on the GPUs where they fit (the COO kept there), 1 split on the
                         host, 2 on the GPUs, 3 as 0 with the COO fed again every mode */
} setup;

/* The update of the next runs (NULL: ALS). */
static const tf_cpd_update *update;

static tf_status run(const tf_tensor *X, setup su, tf_precision prec, uint64_t R, uint32_t iters, trace *t,
                     tf_cpd_report *rep, tf_ktensor *K)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    co.tuning = &tuning;
    co.backend = TF_BACKEND_GPU;
    co.ndevices = su.ngpus;
    for (int i = 0; i < su.ngpus; ++i) co.devices[i] = su.reverse ? su.ngpus - 1 - i : i;
    tuning.stream = su.stream ? 1 : 0;
    tuning.stream_resident = su.stream ? 0 : -1; /* every chunk streams */
    tuning.cpd_cusolver = su.cusolver;
    tuning.cpd_overlap = !su.no_overlap;
    tuning.gpu_exchange = su.nccl;
    tuning.partition = su.partition;
    tuning.gpu_shards = su.shards;
    tf_context *ctx = NULL;
    tf_status s = tf_context_create(&co, &ctx);
    if (s != TF_OK) return s;
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = R;
    o.max_iters = iters;
    o.tol = 0.0;
    o.seed = 777;
    o.backend = TF_BACKEND_GPU;
    o.precision = prec;
    o.callback = record;
    o.user = t;
    o.context = ctx;
    o.update = update;
    memset(t, 0, sizeof *t);
    s = tf_cpd(X, &o, K, rep);
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

static void compare(const tf_tensor *X, const char *what, uint64_t R, uint32_t iters, setup su)
{
    for (int prec = 0; prec < 2; ++prec) {
        trace one, many;
        tf_cpd_report r1, rn;
        tf_ktensor K1, Kn;
        setup single = {1, 0, 0, su.cusolver, 0, 0, 0, 0};
        tf_status s = run(X, single, (tf_precision)prec, R, iters, &one, &r1, &K1);
        CHECKF(s == TF_OK, "%s: one GPU: %s", what, tf_last_error());
        if (s != TF_OK) continue;
        s = run(X, su, (tf_precision)prec, R, iters, &many, &rn, &Kn);
        CHECKF(s == TF_OK, "%s: %d GPUs: %s", what, su.ngpus, tf_last_error());
        if (s != TF_OK) {
            tf_ktensor_free(&K1);
            continue;
        }
        double worst = 0.0;
        for (uint32_t i = 0; i < one.n && i < many.n; ++i)
            if (fabs(one.fit[i] - many.fit[i]) > worst) worst = fabs(one.fit[i] - many.fit[i]);
        const double fd = factor_diff(&Kn, &K1);
        const double ftol = prec ? 1e-4 : 1e-10, ktol = prec ? 1e-3 : 1e-8;
        CHECKF(many.n == one.n && worst <= ftol, "%s %s [%s]: %u vs %u iterations, fits differ by %.3g", what,
               prec ? "fp32" : "fp64", rn.plan, many.n, one.n, worst);
        CHECKF(fd <= ktol, "%s %s [%s]: factors differ by %.3g (relative)", what, prec ? "fp32" : "fp64", rn.plan,
               fd);
        CHECKF(rn.parts == su.ngpus && rn.imbalance >= 0.0 && rn.t_exchange > 0.0,
               "%s: report says %d parts, imbalance %g, exchange %g s", what, rn.parts, rn.imbalance, rn.t_exchange);
        int forced = 1;
        for (uint32_t m = 0; m < X->order; ++m) forced &= rn.schedule[m] == TF_PARTITION_LONGEST_FIRST;
        CHECKF(su.partition != TF_PARTITION_LONGEST_FIRST || forced, "%s: longest-first asked, not reported", what);
        CHECKF(su.nccl != 1 || strstr(rn.plan, ", NCCL"), "%s: plan '%s' (NCCL asked for)", what, rn.plan);
        CHECKF(su.nccl != 2 || strstr(rn.plan, ", host staging"), "%s: plan '%s' (host staging asked for)", what,
               rn.plan);
        CHECKF(su.nccl || strstr(rn.plan, ", peer copies") || strstr(rn.plan, ", NCCL") ||
                   strstr(rn.plan, ", host staging"),
               "%s: plan '%s' names no transport", what, rn.plan);
        const int overlapped = strstr(rn.plan, "overlapped") != NULL;
        CHECKF(overlapped == (R <= 32 && !su.cusolver && !su.no_overlap), "%s: plan '%s' (overlap expected: %d)", what,
               rn.plan, R <= 32 && !su.cusolver && !su.no_overlap);
        printf("  %-52s %s [%.70s] fit %.12f, max |dfit| %.2e, factors %.2e, imbalance %.1f%%, exchange %.2f ms\n",
               what, prec ? "fp32" : "fp64", rn.plan, rn.fit, worst, fd, 100.0 * rn.imbalance, 1e3 * rn.t_exchange);
        tf_ktensor_free(&K1);
        tf_ktensor_free(&Kn);
    }
}


/* MTTKRP plans over two GPUs (src/gpu/mttkrp/multi_plan.cu) against the
 * float64 reference, every mode, fp64 and fp32, resident and streamed
 * shards, output poisoned (NaN) before each run and the device buffers too
 * (tuning.gpu_poison), twice per mode. */
static void plan_case(const tf_tensor *X, const char *what, uint64_t R, int partition)
{
    tf_matrix F[TF_MAX_ORDER], ref[TF_MAX_ORDER];
    CHECK_OK(tt_factors(X, R, 91, F));
    for (uint32_t m = 0; m < X->order; ++m) {
        CHECK_OK(tf_matrix_alloc(&ref[m], X->dims[m], R));
        CHECK_OK(tf_mttkrp_reference(X, m, F, &ref[m]));
    }
    for (int way = 0; way < 4; ++way) /* shards cut on the GPUs, split on the host, streamed, cut from the feed every mode */
        for (int prec = 0; prec < 2; ++prec) {
            const int stream = way == 2;
            tf_context_opts co;
            tf_context_opts_default(&co);
            tf_tuning tuning;
            tf_tuning_default(&tuning);
            co.tuning = &tuning;
            co.backend = TF_BACKEND_GPU;
            co.ndevices = 2;
            tuning.gpu_poison = 1;
            tuning.stream = stream ? 1 : 0;
            tuning.stream_resident = stream ? 0 : -1;
            tuning.partition = partition;
            tuning.gpu_shards = way == 1 ? 1 : way == 3 ? 3 : 0;
            tf_context *ctx = NULL;
            CHECK_OK(tf_context_create(&co, &ctx));
            tf_plan_opts o;
            tf_plan_opts_default(&o);
            o.backend = TF_BACKEND_GPU;
            o.precision = (tf_precision)prec;
            o.rank_hint = R;
            o.context = ctx;
            tf_plan *p = NULL;
            tf_status s = tf_plan_build(X, &o, &p);
            CHECKF(s == TF_OK, "%s: plan over 2 GPUs: %s", what, tf_last_error());
            uint64_t streamed = 0;
            for (uint32_t m = 0; s == TF_OK && m < X->order; ++m) {
                tf_matrix out;
                CHECK_OK(tf_matrix_alloc(&out, X->dims[m], R));
                double err = INFINITY;
                int finite = 1;
                for (int rep = 0; rep < 2; ++rep) {
                    for (uint64_t i = 0; i < out.rows * out.cols; ++i) out.data[i] = NAN;
                    s = tf_plan_mttkrp(p, m, F, &out);
                    if (s != TF_OK) break;
                    for (uint64_t i = 0; i < out.rows * out.cols; ++i) finite &= isfinite(out.data[i]) != 0;
                    err = tf_rel_err(out.data, ref[m].data, X->dims[m] * R);
                }
                CHECKF(s == TF_OK && finite && err <= (prec ? 1e-4 : 1e-12), "%s [%s] mode %u: %s, rel err %.3g",
                       what, tf_plan_describe(p), m + 1, s == TF_OK ? (finite ? "written" : "NOT all written")
                                                                  : tf_last_error(), err);
                streamed += tf_plan_streamed_bytes(p, m);
                tf_matrix_free(&out);
            }
            CHECKF(s != TF_OK || (stream ? streamed > 0 : streamed == 0) , "%s [%s]: %llu bytes streamed",
                   what, p ? tf_plan_describe(p) : "", (unsigned long long)streamed);
            if (s == TF_OK) printf("  MTTKRP plan %-40s %s%s %s: every mode within tolerance\n", what,
                                   prec ? "fp32" : "fp64", way == 1 ? " (host shards)" : way == 3 ? " (fed every mode)" : "",
                                   tf_plan_describe(p));
            tf_plan_free(p);
            tf_context_free(ctx);
        }
    for (uint32_t m = 0; m < X->order; ++m) tf_matrix_free(&ref[m]);
    tt_free_factors(F, X->order);
}

static void bad_lists(void)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.ndevices = 2;
    co.devices[1] = 0;
    tf_context *c = NULL;
    CHECKF(tf_context_create(&co, &c) == TF_ERR_ARG && strstr(tf_last_error(), "twice"),
           "a GPU listed twice: %s", tf_last_error());
    co.ndevices = tf_gpu_count() + 1;
    for (int i = 0; i < co.ndevices && i < TF_MAX_GPUS; ++i) co.devices[i] = i;
    CHECKF(tf_context_create(&co, &c) == TF_ERR_ARG && strstr(tf_last_error(), "this machine has"),
           "more GPUs than the machine: %s", tf_last_error());
    co.ndevices = 2;
    co.devices[1] = 1;
    co.backend = TF_BACKEND_CPU;
    CHECKF(tf_context_create(&co, &c) == TF_ERR_ARG, "two GPUs on the CPU backend: %s", tf_last_error());
}

/* AO-ADMM over several GPUs runs (issue 44; its comparisons with one GPU
 * are test_gpu_admm's). */
static void update_kinds(void)
{
    tf_tensor X;
    CHECK_OK(tt_planted(3, (const uint64_t[]){40, 30, 20}, 2000, 3, 16, &X));
    tf_cpd_update u;
    admm_update(&u, 0u, 2u, 0.5); /* l1 0.5 on mode 2 */
    update = &u;
    trace t;
    tf_cpd_report rep;
    tf_ktensor K;
    const setup two = {2, 0, 0, 0, 0, 0, 0, 0};
    const tf_status s = run(&X, two, TF_DOUBLE, 3, 2, &t, &rep, &K);
    CHECKF(s == TF_OK && rep.parts == 2 && rep.inner_iters > 0, "AO-ADMM on two GPUs: %s: %s (%d parts, %llu inner)",
           tf_status_name(s), tf_last_error(), rep.parts, (unsigned long long)rep.inner_iters);
    if (s == TF_OK) tf_ktensor_free(&K);
    update = NULL;
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() < 2) return tf_test_skip("test_gpu_multi", "fewer than two CUDA devices");
    bad_lists();
    update_kinds();
    const setup two = {2, 0, 0, 0, 0, 0, 0, 0}, two_rev = {2, 1, 0, 0, 0, 0, 0, 0}, two_stream = {2, 0, 1, 0, 0, 0, 0, 0},
                two_cus = {2, 0, 0, 1, 0, 0, 0, 0}, two_plain = {2, 0, 0, 0, 1, 0, 0, 0}, two_nccl = {2, 0, 0, 0, 0, 1, 0, 0},
                two_plain_nccl = {2, 0, 0, 0, 1, 1, 0, 0}, two_lpt = {2, 0, 0, 0, 0, 0, TF_PARTITION_LONGEST_FIRST, 0},
                two_lpt_plain = {2, 0, 0, 0, 1, 0, TF_PARTITION_LONGEST_FIRST, 0},
                two_host = {2, 0, 0, 0, 0, 0, 0, 1}, two_dev = {2, 0, 0, 0, 0, 0, 0, 2},
                two_lpt_host = {2, 0, 0, 0, 0, 0, TF_PARTITION_LONGEST_FIRST, 1},
                two_lpt_dev = {2, 0, 0, 0, 0, 0, TF_PARTITION_LONGEST_FIRST, 2},
                two_xhost = {2, 0, 0, 0, 0, 2, 0, 0}, two_plain_xhost = {2, 0, 0, 0, 1, 2, 0, 0},
                two_feed = {2, 0, 0, 0, 0, 0, 0, 3}, two_lpt_feed = {2, 0, 0, 0, 0, 0, TF_PARTITION_LONGEST_FIRST, 3};
    tf_tensor X;

    CHECK_OK(tt_planted(3, (const uint64_t[]){300, 200, 150}, quick ? 5000 : 40000, 8, 11, &X));
    compare(&X, "planted 3-mode R8", 8, quick ? 4 : 12, two);
    plan_case(&X, "planted 3-mode", 32, 0);
    compare(&X, "planted 3-mode R8, longest-first", 8, quick ? 4 : 12, two_lpt);
    compare(&X, "planted 3-mode R8, shards split on the host", 8, quick ? 4 : 12, two_host);
    compare(&X, "planted 3-mode R8, shards cut on the GPUs", 8, quick ? 4 : 12, two_dev);
    compare(&X, "planted 3-mode R8, shards cut on the GPUs, the COO fed every mode", 8, quick ? 4 : 12, two_feed);
    if (!quick) {
        compare(&X, "planted 3-mode R8, GPUs 1,0", 8, 8, two_rev);
        compare(&X, "planted 3-mode R8, streamed shards", 8, 8, two_stream);
        compare(&X, "planted 3-mode R40, cuSOLVER path", 40, 6, two_cus);
    }
    tf_tensor_free(&X);

    CHECK_OK(tt_planted(3, (const uint64_t[]){400, 300, 301}, quick ? 8000 : 60000, 32, 12, &X));
    compare(&X, "planted 3-mode R32", 32, quick ? 3 : 10, two);
    compare(&X, "planted 3-mode R32, exchange not overlapped", 32, quick ? 2 : 6, two_plain);
    if (tf_test_nccl_ok()) compare(&X, "planted 3-mode R32, through NCCL", 32, quick ? 2 : 6, two_nccl);
    /* host staging (TF_EXCHANGE=host): also where NCCL refuses one device twice */
    compare(&X, "planted 3-mode R32, through the host", 32, quick ? 2 : 6, two_xhost);
    compare(&X, "planted 3-mode R32, not overlapped, through the host", 32, quick ? 2 : 4, two_plain_xhost);
    compare(&X, "planted 3-mode R32, longest-first, not overlapped", 32, quick ? 2 : 6, two_lpt_plain);
    compare(&X, "planted 3-mode R32, longest-first, host shards", 32, quick ? 2 : 6, two_lpt_host);
    compare(&X, "planted 3-mode R32, longest-first, GPU shards", 32, quick ? 2 : 6, two_lpt_dev);
    compare(&X, "planted 3-mode R32, longest-first, GPU shards, the COO fed every mode", 32, quick ? 2 : 6,
            two_lpt_feed);
    if (!quick && tf_test_nccl_ok()) compare(&X, "planted 3-mode R32, not overlapped, NCCL", 32, 4, two_plain_nccl);
    if (tf_gpu_count() >= 3) { /* the peer copies' rotation and NCCL over more than two GPUs */
        const int n = tf_gpu_count() >= 4 ? 4 : 3;
        const setup many = {n, 0, 0, 0, 0, 0, 0, 0}, many_nccl = {n, 0, 0, 0, 0, 1, 0, 0},
                    many_lpt = {n, 0, 0, 0, 0, 0, TF_PARTITION_LONGEST_FIRST, 0};
        compare(&X, n == 4 ? "planted 3-mode R32, 4 GPUs" : "planted 3-mode R32, 3 GPUs", 32, quick ? 2 : 6, many);
        if (tf_test_nccl_ok())
            compare(&X, n == 4 ? "planted 3-mode R32, 4 GPUs, NCCL" : "planted 3-mode R32, 3 GPUs, NCCL", 32,
                    quick ? 2 : 4, many_nccl);
        compare(&X, n == 4 ? "planted 3-mode R32, 4 GPUs, longest-first" : "planted 3-mode R32, 3 GPUs, longest-first",
                32, quick ? 2 : 4, many_lpt);
    }
    if (!quick) compare(&X, "planted 3-mode R32, streamed shards", 32, 6, two_stream);
    tf_tensor_free(&X);

    if (!quick) {
        CHECK_OK(tt_planted(4, (const uint64_t[]){60, 50, 40, 30}, 30000, 6, 13, &X));
        compare(&X, "planted 4-mode R6", 6, 10, two);
        compare(&X, "planted 4-mode R6, streamed shards", 6, 6, two_stream);
        tf_tensor_free(&X);
        CHECK_OK(tt_planted(5, (const uint64_t[]){30, 25, 20, 15, 12}, 30000, 5, 14, &X));
        compare(&X, "planted 5-mode R5", 5, 10, two);
        tf_tensor_free(&X);
    }

    /* a slice with 45 % of the non-zeros just below the middle of mode 0
     * (the parts' boundary falls right next to it), and a mode of one row
     * (one GPU gets no rows of it) */
    tt_spec hot = tt_spec_make(4, (const uint64_t[]){200, 1, 90, 70}, quick ? 6000 : 30000, 15);
    hot.hot_mode = 0;
    hot.hot_row = 99;
    hot.hot_share = 0.45;
    CHECK_OK(tt_random(&hot, &X));
    compare(&X, "heavy slice at the boundary, a 1-row mode", 4, quick ? 3 : 8, two);
    plan_case(&X, "heavy slice, a 1-row mode", 16, 0);
    plan_case(&X, "heavy slice, a 1-row mode, longest-first", 16, TF_PARTITION_LONGEST_FIRST);
    compare(&X, "heavy slice, a 1-row mode, longest-first", 4, quick ? 3 : 8, two_lpt);
    compare(&X, "heavy slice, a 1-row mode, host shards", 4, quick ? 3 : 8, two_host);
    compare(&X, "heavy slice, a 1-row mode, GPU shards", 4, quick ? 3 : 8, two_dev);
    if (!quick) compare(&X, "heavy slice, a 1-row mode, streamed shards", 4, 5, two_stream);
    tf_tensor_free(&X);
    return tf_test_finish("test_gpu_multi");
}
