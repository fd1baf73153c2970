/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU MTTKRP benchmark: per format, precision and mode, the median of
 * --reps device-timed runs (CUDA events, after --warmup untimed runs, the
 * factors resident on the device), GFLOP/s, bytes moved and that as a
 * fraction of the measured device copy bandwidth; plus the plan build time.
 *
 *   bench_gpu_mttkrp FILE|--gen D1,D2,...:NNZ[:ALPHA[:SEED]] [--format coo,fcoo,blco,auto]
 *                    [--rank 32] [--precision double,single] [--reps 20] [--warmup 3]
 *                    [--device 0] [--name NAME]
 *
 * Models: the GPU flop and byte models of cli/mttkrp_model.h, shared with
 * `tenfold bench mttkrp` (which runs the same measurement from the CLI):
 *   flops = nnz * R * N, bytes = T_n + sum_m I_m * R * s (compulsory traffic).
 * Copy bandwidth: tf_gpu_copy_bandwidth (read + write bytes of a 1 GiB
 * device-to-device copy, median of 10).
 * Each result ends in one greppable line:
 *   RESULT name=.. format=.. prec=.. R=.. all_ms=.. build_s=.. gbps=.. frac=.. plan="..."
 * --cpd ITERS instead runs GPU CP-ALS (rank R, ITERS iterations, tol 0) per
 * format and precision and prints, per iteration (the driver's timers):
 *   CPD name=.. format=.. prec=.. R=.. iter_ms=<median wall time of
 *   iterations 2..> mttkrp_ms=.. dense_ms=.. fit_ms=.. dense_pct=.. other_pct=<dense
 *   and fit> plan="..."
 * --fixed instead measures the fixed costs per format and precision, on a
 * context of its own: FIXED .. ctx_s=<device context> validate_s=<the
 * tensor's check, the build's first step, timed apart> build_s=<plan build>
 * build2_s=<a second build on the same context> first_all_s=<first MTTKRP of every mode, wall, first-use tuning
 * included> all_ms=<steady all-mode median> build_iters=<build / all_ms>
 * first_iters=<first_all / all_ms>. TF_BUILD_REPORT=1 adds the build's
 * phases on stderr (BUILD-PHASES lines). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/mttkrp_model.h"
#include "tenfold.h"

typedef struct bench_cfg {
    const char *formats, *precisions, *name;
    uint64_t rank;
    int reps, warmup, device;
    int cpd_iters; /* > 0: CP-ALS instead of MTTKRP */
    tf_context *ctx; /* one for the run: the GPU, and the TF_* tuning overrides */
} bench_cfg;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int parse_gen(const char *spec, tf_gen_opts *g)
{
    memset(g, 0, sizeof *g);
    g->seed = TF_DEFAULT_SEED;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", spec);
    char *parts[4] = {0};
    int np = 0;
    for (char *tok = strtok(buf, ":"); tok && np < 4; tok = strtok(NULL, ":")) parts[np++] = tok;
    if (np < 2) return -1;
    for (char *d = strtok(parts[0], ","); d && g->order < TF_MAX_ORDER; d = strtok(NULL, ","))
        g->dims[g->order++] = strtoull(d, NULL, 10);
    g->nnz = strtoull(parts[1], NULL, 10);
    double alpha = np > 2 ? atof(parts[2]) : 0.0;
    for (uint32_t m = 0; m < g->order; ++m) g->alpha[m] = alpha;
    if (np > 3) g->seed = strtoull(parts[3], NULL, 10);
    return g->order >= 2 && g->nnz > 0 ? 0 : -1;
}

static tf_status random_factors(const tf_tensor *X, uint64_t R, tf_matrix *F)
{
    uint64_t z = 12345;
    for (uint32_t m = 0; m < X->order; ++m) {
        tf_status s = tf_matrix_alloc(&F[m], X->dims[m], R);
        if (s != TF_OK) return s;
        for (uint64_t i = 0; i < X->dims[m] * R; ++i) {
            z = z * 6364136223846793005ULL + 1442695040888963407ULL;
            F[m].data[i] = (double)(z >> 11) * 0x1.0p-53;
        }
    }
    return TF_OK;
}

/* GPU plan options of one benchmark run on context ctx. */
static tf_plan_opts gpu_plan_opts(const bench_cfg *c, tf_format fmt, tf_precision prec, tf_context *ctx)
{
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.format = fmt;
    o.precision = prec;
    o.device = c->device;
    o.rank_hint = c->rank;
    o.context = ctx;
    return o;
}

static void bench_one(const tf_tensor *X, const tf_matrix *F, const bench_cfg *c, tf_format fmt,
                      tf_precision prec, double copy_bw)
{
    const char *pname = prec == TF_SINGLE ? "single" : "double";
    tf_plan_opts o = gpu_plan_opts(c, fmt, prec, c->ctx);
    tf_plan *p = NULL;
    double t0 = tf_wtime();
    tf_status st = tf_plan_build(X, &o, &p);
    const double build = tf_wtime() - t0;
    if (st != TF_OK) {
        printf("RESULT name=%s format=%s prec=%s R=%llu error=\"%s\"\n", c->name, tf_format_name(fmt), pname,
               (unsigned long long)c->rank, tf_last_error());
        return;
    }
    const tf_format used = tf_plan_format(p);
    printf("\n%s %s: %s\n  build %.3f s, %.1f MiB on the device\n", tf_format_name(fmt), pname,
           tf_plan_describe(p), build, tf_plan_bytes(p) / 1048576.0);
    printf("  %4s %10s %10s %9s %9s %9s %7s\n", "mode", "median_ms", "min_ms", "GFLOP/s", "GB", "GB/s",
           "%copy");
    double *times = calloc((size_t)c->reps, sizeof *times);
    double all_ms = 0, all_gb = 0, all_gflop = 0;
    for (uint32_t n = 0; times && n < X->order; ++n) {
        tf_matrix out;
        if (tf_matrix_alloc(&out, X->dims[n], c->rank) != TF_OK) break;
        st = tf_plan_time_mttkrp(p, n, F, &out, c->warmup, c->reps, times);
        tf_matrix_free(&out);
        if (st != TF_OK) {
            printf("  mode %u: %s\n", n + 1, tf_last_error());
            break;
        }
        qsort(times, (size_t)c->reps, sizeof *times, cmp_double);
        const double med = c->reps % 2 ? times[c->reps / 2]
                                       : 0.5 * (times[c->reps / 2 - 1] + times[c->reps / 2]);
        const double gb = cli_mttkrp_bytes(X, p, n, c->rank, prec) / 1e9;
        const double gflop = cli_mttkrp_flops(X, c->rank) / 1e9;
        const double gbps = gb / (med / 1e3);
        printf("  %4u %10.4f %10.4f %9.1f %9.4f %9.1f %6.1f%%\n", n + 1, med, times[0], gflop / (med / 1e3),
               gb, gbps, copy_bw > 0 ? 100.0 * gbps * 1e9 / copy_bw : 0.0);
        all_ms += med;
        all_gb += gb;
        all_gflop += gflop;
    }
    if (st == TF_OK && times) {
        const double gbps = all_gb / (all_ms / 1e3);
        printf("  %4s %10.4f %10s %9.1f %9.4f %9.1f %6.1f%%\n", "all", all_ms, "", all_gflop / (all_ms / 1e3),
               all_gb, gbps, copy_bw > 0 ? 100.0 * gbps * 1e9 / copy_bw : 0.0);
        printf("RESULT name=%s format=%s used=%s prec=%s R=%llu all_ms=%.4f build_s=%.3f gbps=%.1f frac=%.3f "
               "plan=\"%s\"\n",
               c->name, tf_format_name(fmt), tf_format_name(used), pname, (unsigned long long)c->rank, all_ms,
               build, gbps, copy_bw > 0 ? gbps * 1e9 / copy_bw : 0.0, tf_plan_describe(p));
    }
    free(times);
    tf_plan_free(p);
}

/* The fixed costs of a GPU run (issue 25 item 6): a fresh context's
 * start (streams; the CUDA context itself is up already), the plan build,
 * the first MTTKRP of every mode (wall clock: first-use tuning included)
 * and the steady all-mode time (CUDA events, median), on a context of
 * its own with the run's tuning. */
static void bench_fixed(const tf_tensor *X, const tf_matrix *F, const bench_cfg *c, tf_format fmt,
                        tf_precision prec)
{
    const char *pname = prec == TF_SINGLE ? "single" : "double";
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.device = c->device;
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    tf_tuning_from_env(&tuning);
    co.tuning = &tuning;
    tf_context *ctx = NULL;
    double t0 = tf_wtime();
    tf_status st = tf_context_create(&co, &ctx);
    uint64_t budget = 0;
    if (st == TF_OK) st = tf_context_memory_budget(ctx, &budget); /* makes the device context */
    const double t_ctx = tf_wtime() - t0;
    tf_plan_opts o = gpu_plan_opts(c, fmt, prec, ctx);
    tf_plan *p = NULL;
    t0 = tf_wtime();
    if (st == TF_OK) st = tf_tensor_validate(X); /* the build's own first step, timed apart */
    const double t_validate = tf_wtime() - t0;
    t0 = tf_wtime();
    if (st == TF_OK) st = tf_plan_build(X, &o, &p);
    const double t_build = tf_wtime() - t0;
    /* a second plan on the same context: without its first-use costs
     * (pinned staging, kernels loaded), as a second plan of a run pays */
    tf_plan *p2 = NULL;
    t0 = tf_wtime();
    if (st == TF_OK) st = tf_plan_build(X, &o, &p2);
    const double t_build2 = tf_wtime() - t0;
    tf_plan_free(p2);
    double first = 0.0, steady = 0.0;
    double *times = calloc((size_t)c->reps, sizeof *times);
    for (uint32_t n = 0; st == TF_OK && n < X->order; ++n) {
        tf_matrix out;
        st = tf_matrix_alloc(&out, X->dims[n], c->rank);
        if (st != TF_OK) break;
        t0 = tf_wtime();
        st = tf_plan_mttkrp(p, n, F, &out); /* first use: tuning, copies in and out */
        first += tf_wtime() - t0;
        if (st == TF_OK && times) st = tf_plan_time_mttkrp(p, n, F, &out, 1, c->reps, times);
        tf_matrix_free(&out);
        if (st != TF_OK || !times) break;
        qsort(times, (size_t)c->reps, sizeof *times, cmp_double);
        steady += times[c->reps / 2];
    }
    if (st != TF_OK)
        printf("FIXED name=%s format=%s prec=%s error=\"%s\"\n", c->name, tf_format_name(fmt), pname,
               tf_last_error());
    else
        printf("FIXED name=%s format=%s prec=%s R=%llu nnz=%llu ctx_s=%.4f validate_s=%.4f build_s=%.4f "
               "build2_s=%.4f first_all_s=%.4f all_ms=%.4f build_iters=%.1f build2_iters=%.1f first_iters=%.1f "
               "plan=\"%s\"\n",
               c->name, tf_format_name(fmt), pname, (unsigned long long)c->rank, (unsigned long long)X->nnz,
               t_ctx, t_validate, t_build, t_build2, first, steady, 1e3 * t_build / steady, 1e3 * t_build2 / steady,
               1e3 * first / steady, tf_plan_describe(p));
    free(times);
    tf_plan_free(p);
    tf_context_free(ctx);
}

typedef struct iter_times {
    int n;
    double s[1024];
} iter_times;

static void on_iter(const tf_cpd_iter *it, void *user)
{
    iter_times *t = user;
    if (t->n < 1024) t->s[t->n++] = it->seconds;
}

static void bench_cpd(const tf_tensor *X, const bench_cfg *c, tf_format fmt, tf_precision prec)
{
    const char *pname = prec == TF_SINGLE ? "single" : "double";
    tf_cpd_opts o;
    tf_cpd_opts_default(&o);
    o.rank = c->rank;
    o.max_iters = (uint32_t)c->cpd_iters;
    o.tol = 0.0;
    o.backend = TF_BACKEND_GPU;
    o.format = fmt;
    o.precision = prec;
    o.device = c->device;
    o.context = c->ctx;
    static iter_times t;
    t.n = 0;
    o.callback = on_iter;
    o.user = &t;
    tf_ktensor K;
    tf_cpd_report rep;
    if (tf_cpd(X, &o, &K, &rep) != TF_OK) {
        printf("CPD name=%s format=%s prec=%s error=\"%s\"\n", c->name, tf_format_name(fmt), pname,
               tf_last_error());
        return;
    }
    tf_ktensor_free(&K);
    /* median over iterations 2.. (the first one loads kernels) */
    const int first = t.n > 1 ? 1 : 0;
    qsort(t.s + first, (size_t)(t.n - first), sizeof(double), cmp_double);
    const int k = t.n - first;
    const double med = k % 2 ? t.s[first + k / 2] : 0.5 * (t.s[first + k / 2 - 1] + t.s[first + k / 2]);
    double mtt = 0;
    for (int m = 0; m < TF_MAX_ORDER; ++m) mtt += rep.t_mttkrp[m];
    const double it = rep.iters ? (double)rep.iters : 1.0;
    const double steps = mtt + rep.t_dense + rep.t_fit;
    printf("CPD name=%s format=%s prec=%s R=%llu iter_ms=%.3f mttkrp_ms=%.3f dense_ms=%.3f fit_ms=%.3f "
           "dense_pct=%.0f other_pct=%.0f fit=%.6g plan=\"%s\"\n",
           c->name, tf_format_name(fmt), pname, (unsigned long long)c->rank, 1e3 * med, 1e3 * mtt / it,
           1e3 * rep.t_dense / it, 1e3 * rep.t_fit / it, 100.0 * rep.t_dense / steps,
           100.0 * (rep.t_dense + rep.t_fit) / steps, rep.fit, rep.plan);
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_gpu_mttkrp FILE|--gen D1,D2,..:NNZ[:ALPHA[:SEED]] [--format LIST] "
                    "[--rank R] [--precision LIST] [--reps N] [--warmup N] [--device D] [--name NAME] "
                    "[--cpd ITERS] [--fixed]\n");
    return 2;
}

int main(int argc, char **argv)
{
    bench_cfg c = {"coo,fcoo,blco", "double,single", NULL, 32, 20, 3, 0, 0, NULL};
    const char *file = NULL, *gen = NULL;
    int fixed = 0;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--gen") && v) gen = argv[++i];
        else if (!strcmp(a, "--format") && v) c.formats = argv[++i];
        else if (!strcmp(a, "--precision") && v) c.precisions = argv[++i];
        else if (!strcmp(a, "--rank") && v) c.rank = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(a, "--reps") && v) c.reps = atoi(argv[++i]);
        else if (!strcmp(a, "--warmup") && v) c.warmup = atoi(argv[++i]);
        else if (!strcmp(a, "--device") && v) c.device = atoi(argv[++i]);
        else if (!strcmp(a, "--name") && v) c.name = argv[++i];
        else if (!strcmp(a, "--cpd") && v) c.cpd_iters = atoi(argv[++i]);
        else if (!strcmp(a, "--fixed")) fixed = 1;
        else if (a[0] != '-' && !file) file = a;
        else return usage();
    }
    if ((!file && !gen) || c.rank == 0 || c.reps < 1 || c.warmup < 0) return usage();
    if (tf_gpu_count() == 0) {
        printf("bench_gpu_mttkrp: no CUDA device, nothing to measure\n");
        return 0;
    }
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.device = c.device;
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    tf_tuning_from_env(&tuning); /* TF_FCOO_* etc. for measurements */
    co.tuning = &tuning;
    if (tf_context_create(&co, &c.ctx) != TF_OK) {
        fprintf(stderr, "bench_gpu_mttkrp: %s\n", tf_last_error());
        return 1;
    }
    char dev[256];
    tf_gpu_describe(c.device, dev, sizeof dev);
    double bw = 0;
    if (tf_gpu_copy_bandwidth(c.device, &bw) != TF_OK) bw = 0;
    printf("device: %s\ncopy bandwidth (read + write): %.0f GB/s\n", dev, bw / 1e9);

    tf_tensor X;
    memset(&X, 0, sizeof X);
    double t0 = tf_wtime();
    tf_status st;
    if (gen) {
        tf_gen_opts g;
        if (parse_gen(gen, &g)) return usage();
        st = tf_generate(&g, &X);
    } else {
        st = tf_read_tensor(file, 0, &X, NULL);
    }
    if (st != TF_OK) {
        fprintf(stderr, "bench_gpu_mttkrp: %s\n", tf_last_error());
        return 1;
    }
    if (!c.name) c.name = gen ? "generated" : file;
    printf("tensor %s: order %u, dims", c.name, X.order);
    for (uint32_t m = 0; m < X.order; ++m) printf("%s%llu", m ? " x " : " ", (unsigned long long)X.dims[m]);
    printf(", %llu non-zeros (loaded in %.1f s); rank %llu, %d reps after %d warm-up\n",
           (unsigned long long)X.nnz, tf_wtime() - t0, (unsigned long long)c.rank, c.reps, c.warmup);

    tf_matrix F[TF_MAX_ORDER];
    memset(F, 0, sizeof F);
    if (random_factors(&X, c.rank, F) != TF_OK) {
        fprintf(stderr, "bench_gpu_mttkrp: %s\n", tf_last_error());
        return 1;
    }
    char fl[256], pl[64];
    snprintf(pl, sizeof pl, "%s", c.precisions);
    for (char *ps = strtok(pl, ","); ps; ps = strtok(NULL, ",")) {
        tf_precision prec = !strcmp(ps, "single") || !strcmp(ps, "fp32") ? TF_SINGLE : TF_DOUBLE;
        snprintf(fl, sizeof fl, "%s", c.formats);
        char *save = NULL;
        for (char *f = strtok_r(fl, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
            int fmt = tf_format_parse(f);
            if (fmt < 0) {
                fprintf(stderr, "bench_gpu_mttkrp: unknown format '%s'\n", f);
                continue;
            }
            if (fixed) bench_fixed(&X, F, &c, (tf_format)fmt, prec);
            else if (c.cpd_iters > 0) bench_cpd(&X, &c, (tf_format)fmt, prec);
            else bench_one(&X, F, &c, (tf_format)fmt, prec, bw);
        }
    }
    for (uint32_t m = 0; m < X.order; ++m) tf_matrix_free(&F[m]);
    tf_tensor_free(&X);
    tf_context_free(c.ctx);
    return 0;
}
