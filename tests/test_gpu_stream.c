/* SPDX-License-Identifier: BSD-3-Clause */
/* The streamed F-COO path (src/gpu/engine/fcoo_stream.cu) against the
 * float64 reference: chunk sizes of one group of 32 partitions (segments
 * cut at many chunk edges, inside heavy slices), a few groups, and one
 * chunk for the whole copy; none, half and all of the chunks resident;
 * orders 2-5, fp64 and fp32, ranks that do and do not take 16-byte
 * pieces, a skewed tensor with empty slices, product indices too wide
 * for one packed key, a power-law tensor and the real tensors; values
 * packed (the random tensors' in fp64, counts in both precisions) and not
 * (magnitudes too far apart; keys only or nothing packed, by tuning).
 * Outputs are poisoned on the host and on the device before every run. Also: a memory limit that forces the auto rule to stream
 * (and keep part resident), tf_plan_streamed_bytes, CP-ALS streamed vs
 * resident (same seed: fits within 1e-10 in fp64), a limit too small to
 * stream at all (an error naming the sizes), tuning.stream = 2 (never).
 *
 * Skipped (exit 77) without a GPU; `--quick` (or TF_TEST_QUICK=1) runs a
 * subset. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "gpu_test_tensors.h"
#include "realdata.h"

#define TOL_FP64 1e-12
#define TOL_FP32 1e-5

static int quick;

typedef struct config {
    const char *name;
    uint64_t chunk;   /* tuning.stream_chunk (non-zeros; 1: one group of 32 partitions) */
    int resident;     /* tuning.stream_resident */
    int pack;         /* tuning.stream_pack: 1 keys and values, 2 keys only, 0 neither */
    int in_quick;
} config;

static const config configs[] = {
    {"1 group per chunk, none resident", 1, 0, 1, 1},
    {"1 group per chunk, half resident", 1, 50, 1, 1},
    {"3 groups per chunk, none resident", 3 * 32 * 64, 0, 1, 0},
    {"one chunk, none resident", 1ull << 40, 0, 1, 1},
    {"1 group per chunk, all resident", 1, 100, 1, 0},
    {"1 group per chunk, none resident, keys only", 1, 0, 2, 0},
    {"1 group per chunk, none resident, nothing packed", 1, 0, 0, 0},
};
#define NCONFIGS (sizeof configs / sizeof configs[0])

static tf_status make_ctx_pack(int stream, uint64_t chunk, int resident, int pack, uint64_t limit, tf_context **ctx)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    co.tuning = &tuning;
    co.backend = TF_BACKEND_GPU;
    co.memory_limit = limit;
    tuning.gpu_poison = 1;
    tuning.stream = stream;
    tuning.stream_chunk = chunk;
    tuning.stream_resident = resident;
    tuning.stream_pack = pack;
    /* fixed partitions (64 non-zeros, not tuned) so small tensors have many */
    tuning.fcoo_seg_part = 64;
    return tf_context_create(&co, ctx);
}

static tf_status make_ctx(int stream, uint64_t chunk, int resident, uint64_t limit, tf_context **ctx)
{
    return make_ctx_pack(stream, chunk, resident, 1, limit, ctx);
}

static int all_finite(const tf_matrix *M)
{
    for (uint64_t i = 0; i < M->rows * M->cols; ++i)
        if (!isfinite(M->data[i])) return 0;
    return 1;
}

/* Every mode of plan p against ref; want_stream: some mode must stream. */
static void check_plan(tf_plan *p, const tf_tensor *X, const tf_matrix *F, const tf_matrix *ref, uint64_t R,
                       double tol, int want_stream, const char *what, const char *cfg)
{
    uint64_t streamed = 0;
    for (uint32_t m = 0; m < X->order; ++m) {
        tf_matrix out;
        CHECK_OK(tf_matrix_alloc(&out, X->dims[m], R));
        for (uint64_t i = 0; i < out.rows * out.cols; ++i) out.data[i] = NAN;
        /* twice: the ring's slots are reused across calls */
        tf_status s = tf_plan_mttkrp(p, m, F, &out);
        if (s == TF_OK) s = tf_plan_mttkrp(p, m, F, &out);
        const double err = tf_rel_err(out.data, ref[m].data, X->dims[m] * R);
        CHECKF(s == TF_OK && all_finite(&out) && err <= tol, "%s [%s] %s R=%llu mode %u: %s, rel err %.3g", what,
               tf_plan_describe(p), cfg, (unsigned long long)R, m + 1,
               s == TF_OK ? (all_finite(&out) ? "written" : "NOT all written") : tf_last_error(), err);
        streamed += tf_plan_streamed_bytes(p, m);
        tf_matrix_free(&out);
    }
    CHECKF(want_stream ? streamed > 0 : streamed == 0, "%s [%s] %s: %llu bytes streamed per all-mode pass", what,
           tf_plan_describe(p), cfg, (unsigned long long)streamed);
}

static void check_tensor(const tf_tensor *X, const char *what, const uint64_t *ranks, int nr)
{
    for (int ri = 0; ri < nr; ++ri) {
        const uint64_t R = ranks[ri];
        tf_matrix F[TF_MAX_ORDER], ref[TF_MAX_ORDER];
        CHECK_OK(tt_factors(X, R, 77 + R, F));
        for (uint32_t m = 0; m < X->order; ++m) {
            CHECK_OK(tf_matrix_alloc(&ref[m], X->dims[m], R));
            CHECK_OK(tf_mttkrp_reference(X, m, F, &ref[m]));
        }
        for (int prec = 0; prec < 2; ++prec)
            for (unsigned c = 0; c < NCONFIGS; ++c) {
                if (quick && !configs[c].in_quick) continue;
                tf_context *ctx = NULL;
                tf_plan *p = NULL;
                CHECK_OK(make_ctx_pack(1, configs[c].chunk, configs[c].resident, configs[c].pack, 0, &ctx));
                tf_status s = tt_gpu_plan(X, ctx, TF_FORMAT_FCOO, (tf_precision)prec, R, &p);
                CHECKF(s == TF_OK, "%s %s %s: build: %s", what, configs[c].name, prec ? "fp32" : "fp64",
                       tf_last_error());
                if (s == TF_OK) {
                    /* an empty tensor has nothing to stream: the resident engine takes it */
                    CHECKF(!X->nnz || strstr(tf_plan_describe(p), "streamed") != NULL, "%s: %s", what,
                           tf_plan_describe(p));
                    check_plan(p, X, F, ref, R, prec ? TOL_FP32 : TOL_FP64, X->nnz && configs[c].resident < 100,
                               what, configs[c].name);
                }
                tf_plan_free(p);
                tf_context_free(ctx);
            }
        for (uint32_t m = 0; m < X->order; ++m) tf_matrix_free(&ref[m]);
        tt_free_factors(F, X->order);
    }
}

/* The random tensors' values (uniform in [-1, 1)), or counts 1..1000
 * (packed in 10 bits in fp64 and fp32), or the uniform values scaled by
 * 2^+-70 by turns (too far apart to pack: stored as they are). */
enum { VALS_UNIFORM, VALS_COUNTS, VALS_APART };

static void set_values(tf_tensor *X, int kind)
{
    for (uint64_t k = 0; k < X->nnz; ++k) {
        if (kind == VALS_COUNTS) X->vals[k] = (double)(1 + (k * 7919) % 1000);
        if (kind == VALS_APART) X->vals[k] = ldexp(X->vals[k], k % 2 ? 70 : -70);
    }
}

static void random_case_values(tt_spec sp, int vals, const char *what, const uint64_t *ranks, int nr)
{
    tf_tensor X;
    printf("  case: %s\n", what);
    CHECK_OK(tt_random(&sp, &X));
    set_values(&X, vals);
    check_tensor(&X, what, ranks, nr);
    tf_tensor_free(&X);
}

static void random_case(tt_spec sp, const char *what, const uint64_t *ranks, int nr)
{
    random_case_values(sp, VALS_UNIFORM, what, ranks, nr);
}

/* Counts stream in fewer bytes with their values packed than with keys
 * only, in both precisions. */
static void packed_values_shrink(void)
{
    const uint64_t d3[] = {300, 200, 100};
    tt_spec sp = tt_spec_make(3, d3, 20000, 21);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    set_values(&X, VALS_COUNTS);
    for (int prec = 0; prec < 2; ++prec) {
        uint64_t bytes[2] = {0, 0};
        for (int v = 0; v < 2; ++v) {
            tf_context *ctx = NULL;
            tf_plan *p = NULL;
            CHECK_OK(make_ctx_pack(1, 1, 0, v ? 1 : 2, 0, &ctx));
            tf_status s = tt_gpu_plan(&X, ctx, TF_FORMAT_FCOO, (tf_precision)prec, 16, &p);
            CHECKF(s == TF_OK, "counts, pack %d: %s", v ? 1 : 2, tf_last_error());
            for (uint32_t m = 0; s == TF_OK && m < X.order; ++m) bytes[v] += tf_plan_streamed_bytes(p, m);
            tf_plan_free(p);
            tf_context_free(ctx);
        }
        /* 4 or 8 bytes per value down to 10 bits */
        const double saved = ((double)bytes[0] - (double)bytes[1]) / ((double)X.nnz * X.order);
        printf("  counts %s: %.2f bytes per non-zero and mode saved by packing the values\n", prec ? "fp32" : "fp64",
               saved);
        CHECKF(saved > (prec ? 2.0 : 6.0), "counts %s: %llu bytes streamed with values packed, %llu keys only",
               prec ? "fp32" : "fp64", (unsigned long long)bytes[1], (unsigned long long)bytes[0]);
    }
    tf_tensor_free(&X);
}

static tf_status powerlaw(uint64_t nnz, tf_tensor *X)
{
    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.order = 3;
    g.dims[0] = 20000; g.dims[1] = 15000; g.dims[2] = 300;
    g.nnz = nnz;
    for (int m = 0; m < 3; ++m) g.alpha[m] = 0.8;
    g.seed = 11;
    memset(X, 0, sizeof *X);
    return tf_generate(&g, X);
}

/* The auto format under a memory limit: a limit that holds the factors
 * and part of the copies streams the rest, and says so. */
static void auto_under_limit(const tf_tensor *X)
{
    const uint64_t R = 8; /* small factors: a limit can then hold them but not BLCO's copy */
    tf_matrix F[TF_MAX_ORDER], ref[TF_MAX_ORDER];
    CHECK_OK(tt_factors(X, R, 5, F));
    for (uint32_t m = 0; m < X->order; ++m) {
        CHECK_OK(tf_matrix_alloc(&ref[m], X->dims[m], R));
        CHECK_OK(tf_mttkrp_reference(X, m, F, &ref[m]));
    }
    /* BLCO, the smallest resident format, needs 16 B per non-zero and the
     * factors with the output; the limit is a little less. The F-COO copies
     * are ~16 B per non-zero and mode. */
    uint64_t rows = 0, maxd = 0;
    for (uint32_t m = 0; m < X->order; ++m) {
        rows += X->dims[m];
        if (X->dims[m] > maxd) maxd = X->dims[m];
    }
    const uint64_t dense = (rows + maxd) * R * 8;
    const uint64_t copies = X->nnz * 16 * X->order;
    const uint64_t limit = dense + X->nnz * 16 * 9 / 10;
    tf_context *ctx = NULL;
    CHECK_OK(make_ctx(0, 0, -1, limit, &ctx));
    tf_plan *p = NULL;
    tf_status s = tt_gpu_plan(X, ctx, TF_FORMAT_AUTO, TF_DOUBLE, R, &p);
    CHECKF(s == TF_OK, "auto under a %.1f MiB limit: %s", limit / 1048576.0, tf_last_error());
    if (s == TF_OK) {
        printf("  auto under %.1f MiB: %s\n", limit / 1048576.0, tf_plan_describe(p));
        check_plan(p, X, F, ref, R, TOL_FP64, 1, "auto under a limit", "memory limit");
        /* part of it resident: less than all streams */
        uint64_t st = 0;
        for (uint32_t m = 0; m < X->order; ++m) st += tf_plan_streamed_bytes(p, m);
        CHECKF(st < copies, "auto under a limit: %llu of ~%llu bytes streamed (nothing resident)",
               (unsigned long long)st, (unsigned long long)copies);
    }
    tf_plan_free(p);
    tf_context_free(ctx);
    /* never: the same limit fails instead, naming the budget */
    CHECK_OK(make_ctx(2, 0, -1, limit, &ctx));
    s = tt_gpu_plan(X, ctx, TF_FORMAT_AUTO, TF_DOUBLE, R, &p);
    CHECKF(s == TF_ERR_NOMEM, "stream = never under a limit: %d %s", (int)s, tf_last_error());
    tf_context_free(ctx);
    /* too small to stream at all: an error naming the sizes */
    CHECK_OK(make_ctx(0, 0, -1, 1u << 20, &ctx));
    s = tt_gpu_plan(X, ctx, TF_FORMAT_FCOO, TF_DOUBLE, R, &p);
    CHECKF(s == TF_ERR_NOMEM && strstr(tf_last_error(), "too small") && strstr(tf_last_error(), "MiB"),
           "a 1 MiB limit: %d %s", (int)s, tf_last_error());
    tf_context_free(ctx);
    for (uint32_t m = 0; m < X->order; ++m) tf_matrix_free(&ref[m]);
    tt_free_factors(F, X->order);
}

/* CP-ALS with the tensor streamed (nothing resident, small chunks) gives
 * the resident run's fit after every iteration (same seed). */
typedef struct fit_trace {
    double fit[32];
    uint32_t n;
} fit_trace;

static void record(const tf_cpd_iter *it, void *user)
{
    fit_trace *t = (fit_trace *)user;
    if (t->n < 32) t->fit[t->n++] = it->fit;
}

static void cpd_case(const tf_tensor *X, tf_precision prec, double tol)
{
    fit_trace tr[2];
    memset(tr, 0, sizeof tr);
    for (int streamed = 0; streamed < 2; ++streamed) {
        tf_context *ctx = NULL;
        CHECK_OK(make_ctx(streamed ? 1 : 2, streamed ? 1 : 0, streamed ? 0 : -1, 0, &ctx));
        tf_cpd_opts o;
        tf_cpd_opts_default(&o);
        o.rank = 16;
        o.max_iters = 12;
        o.tol = 0.0;
        o.backend = TF_BACKEND_GPU;
        o.format = TF_FORMAT_FCOO;
        o.precision = prec;
        o.context = ctx;
        o.callback = record;
        o.user = &tr[streamed];
        tf_ktensor K;
        memset(&K, 0, sizeof K);
        tf_cpd_report rep;
        tf_status s = tf_cpd(X, &o, &K, &rep);
        CHECKF(s == TF_OK, "CP-ALS %s: %s", streamed ? "streamed" : "resident", tf_last_error());
        if (s == TF_OK) {
            CHECKF(!streamed == !strstr(rep.plan, "streamed"), "CP-ALS %s plan: %s",
                   streamed ? "streamed" : "resident", rep.plan);
            printf("  CP-ALS %s %s: fit %.12f [%s]\n", prec ? "fp32" : "fp64", streamed ? "streamed" : "resident",
                   rep.fit, rep.plan);
        }
        tf_ktensor_free(&K);
        tf_context_free(ctx);
    }
    double worst = 0.0;
    for (uint32_t i = 0; i < tr[0].n && i < tr[1].n; ++i)
        if (fabs(tr[0].fit[i] - tr[1].fit[i]) > worst) worst = fabs(tr[0].fit[i] - tr[1].fit[i]);
    CHECKF(tr[0].n == 12 && tr[1].n == 12 && worst <= tol,
           "CP-ALS %s: %u vs %u iterations, largest fit difference streamed vs resident %.3g", prec ? "fp32" : "fp64",
           tr[0].n, tr[1].n, worst);
}

static void stream_real_tensor(const char *name, const char *path, tf_tensor *X, void *user)
{
    (void)path;
    (void)user;
    const uint64_t ranks[] = {32};
    printf("  real tensor %s: order %u, %llu non-zeros\n", name, X->order, (unsigned long long)X->nnz);
    check_tensor(X, name, ranks, 1);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_stream", "no CUDA device");
    char dev[256];
    CHECK_OK(tf_gpu_describe(0, dev, sizeof dev));
    printf("test_gpu_stream on %s%s\n", dev, quick ? " (quick)" : "");

    const uint64_t ranks[] = {7, 32, 33};
    const int nr = quick ? 2 : 3;
    const uint64_t d3[] = {300, 200, 100};
    random_case(tt_spec_make(3, d3, quick ? 8000 : 30000, 1), "3-mode", ranks, nr);
    random_case_values(tt_spec_make(3, d3, quick ? 8000 : 30000, 1), VALS_COUNTS, "3-mode, counts (values packed)",
                       ranks, nr);
    random_case_values(tt_spec_make(3, d3, quick ? 8000 : 30000, 1), VALS_APART,
                       "3-mode, values 2^140 apart (not packed)", ranks, 1);
    packed_values_shrink();
    tt_spec hot = tt_spec_make(3, d3, quick ? 8000 : 30000, 2);
    hot.hot_mode = 1; hot.hot_row = 7; hot.hot_share = 0.5; hot.sparse_mode = 2;
    random_case(hot, "half the non-zeros in one row, empty slices", ranks, nr);
    const uint64_t d4[] = {20, 30, 40, 50};
    random_case(tt_spec_make(4, d4, quick ? 5000 : 20000, 3), "4-mode", ranks, nr);
    const uint64_t d5[] = {9, 8, 7, 6, 5};
    random_case(tt_spec_make(5, d5, quick ? 4000 : 12000, 4), "5-mode", ranks, nr);
    /* product indices of 68 bits: too wide for one key, streamed unpacked */
    const uint64_t wide5[] = {1u << 17, 1u << 17, 1u << 17, 1u << 17, 1u << 17};
    const uint64_t r7[] = {7};
    random_case(tt_spec_make(5, wide5, quick ? 3000 : 8000, 8), "5-mode, 68-bit keys (plain)", r7, 1);
    if (!quick) {
        const uint64_t d2[] = {2000, 1500};
        random_case(tt_spec_make(2, d2, 20000, 5), "2-mode", ranks, nr);
        random_case(tt_spec_make(3, d3, 1, 6), "one non-zero", ranks, 1);
        random_case(tt_spec_make(3, d3, 0, 7), "no non-zeros", ranks, 1);
    }
    tf_tensor P;
    CHECK_OK(powerlaw(1000000, &P));
    printf("  case: power law, %llu non-zeros\n", (unsigned long long)P.nnz);
    const uint64_t r32[] = {32};
    check_tensor(&P, "power law", r32, 1); /* quick: the quick configurations only */
    auto_under_limit(&P);
    cpd_case(&P, TF_DOUBLE, 1e-10);
    cpd_case(&P, TF_SINGLE, 1e-4);
    tf_tensor_free(&P);
    if (!quick) {
        static const char *const tensors[] = {".tns.xz", ".tns", NULL};
        tf_for_each_data_file("test_gpu_stream", tensors, stream_real_tensor, NULL);
    }
    return tf_test_finish("test_gpu_stream");
}
