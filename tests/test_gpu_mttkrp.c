/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU MTTKRP against the float64 CPU reference: every format (coo, fcoo
 * with its per-mode kernel rule, fcoo forced to its "scan" and "seg"
 * kernels, seg also with partitions of 96 and 1056 non-zeros, the rule with
 * seg modes re-cut to 1056 per partition, blco with the
 * heuristic, blco forced to register and to hierarchical conflict
 * resolution, auto) x every mode x precision x rank, on random
 * tensors of orders 2..8 (skewed, empty slices, modes of length 1, 2 and
 * < #SMs, a linearised index over 64 bits, no non-zeros) and on every real
 * tensor in the shared data directory. Outputs are poisoned with NaN first,
 * on the host and (tuning.gpu_poison) on the device before every run, so a row
 * an engine neither clears nor writes shows; every element must be written
 * and the relative error must be <= 1e-12 (fp64) / 1e-5 (fp32).
 *
 * Skipped (exit 77) without a GPU. `--quick` (or TF_TEST_QUICK=1) runs a
 * small subset, sized for compute-sanitizer. TF_TEST_DATA overrides the
 * real-data directory. */
#include <stdlib.h>

#include "check.h"
#include "gpu_test_tensors.h"
#include "realdata.h"

#define TOL_FP64 1e-12
#define TOL_FP32 1e-5

static int quick;

typedef struct variant {
    tf_format format;
    int resolution;         /* tuning.blco_resolution: 0 auto, 1 register, 2 hierarchical */
    int no_heavy;           /* tuning.blco_hot = 0: no heavy-row stash */
    int in_quick;           /* also run under --quick (every kernel path once) */
    const char *name;
    int fcoo_kernel;        /* tuning.fcoo_kernel: 0 auto, 1 scan, 2 seg */
    uint32_t fcoo_part;     /* tuning.fcoo_part, 0 = by rule */
    uint32_t fcoo_seg_part; /* tuning.fcoo_seg_part likewise */
    int fcoo_variant;       /* tuning.fcoo_variant (the seg kernel's occupancy variant: 2, 3, 4, 5 = pipe) */
    uint64_t fcoo_tune_nnz; /* tuning.fcoo_tune_nnz (tuning on a prefix of the non-zeros) */
    uint32_t fcoo_slice;    /* tuning.fcoo_slice (rank pieces per grid row: 16 = half slices) */
    int fcoo_build;         /* tuning.fcoo_build: 0 auto (the device when it fits), 1 host */
} variant;

enum { SCAN = 1, SEG = 2, REG = 1, HIER = 2, PIPE = 5 };

static const variant variants[] = {
    {TF_FORMAT_COO, 0, 0, 1, "coo", 0, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 0, "fcoo", 0, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/scan", SCAN, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/minb=3", SEG, 0, 0, 3, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/minb=4", SEG, 0, 0, 4, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/minb=2", SEG, 0, 0, 2, 0, 0, 0},
    /* software-pipelined loads (orders 3 and 4; other orders run minb=3) */
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/pipe", SEG, 0, 0, PIPE, 0, 0, 0},
    /* tuned on the first 1000 non-zeros (the timed launches cover a
     * prefix; the kept result must not depend on it) */
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/tune-prefix", SEG, 0, 0, 0, 1000, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 0, "fcoo/seg/part=96", SEG, 96, 0, 0, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/seg-part=1056", SEG, 0, 1056, 0, 0, 0, 0},
    {TF_FORMAT_FCOO, 0, 0, 0, "fcoo/seg-part=1056", 0, 0, 1056, 0, 0, 0, 0},
    /* the copies sorted on the host (the others: on the device) */
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/host-build", 0, 0, 0, 0, 0, 0, 1},
    {TF_FORMAT_BLCO, 0, 0, 0, "blco", 0, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_BLCO, REG, 0, 1, "blco/register", 0, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_BLCO, REG, 1, 0, "blco/register/no-heavy-rows", 0, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_BLCO, HIER, 0, 1, "blco/hierarchical", 0, 0, 0, 0, 0, 0, 0},
    {TF_FORMAT_AUTO, 0, 0, 0, "auto", 0, 0, 0, 0, 0, 0, 0},
};
#define NVARIANTS (sizeof variants / sizeof *variants)

/* Half slices (16 rank pieces of 16 bytes per grid row), each seg variant
 * forced and the tuned choice (half_slice_case). */
static const variant half_variants[] = {
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/half/minb=3", SEG, 0, 0, 3, 0, 16, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/half/minb=4", SEG, 0, 0, 4, 0, 16, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/half/minb=2", SEG, 0, 0, 2, 0, 16, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/half/pipe", SEG, 0, 0, PIPE, 0, 16, 0},
    {TF_FORMAT_FCOO, 0, 0, 1, "fcoo/seg/half/tuned", SEG, 0, 0, 0, 0, 16, 0},
};

/* The context of the plan built last (one plan at a time here): its
 * tuning policy forces the variant's choices, and the output is poisoned
 * with NaN on the device before every run. Freed by free_plan. */
static tf_context *plan_ctx;

static tf_status build_plan(const tf_tensor *X, const variant *v, tf_precision prec, uint64_t R,
                            tf_plan **p)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    tf_tuning tune;
    tf_tuning_default(&tune);
    co.tuning = &tune;
    tf_tuning *t = &tune;
    t->gpu_poison = 1;
    t->fcoo_kernel = v->fcoo_kernel;
    t->fcoo_part = v->fcoo_part;
    t->fcoo_seg_part = v->fcoo_seg_part;
    t->fcoo_variant = v->fcoo_variant;
    t->fcoo_tune_nnz = v->fcoo_tune_nnz;
    t->fcoo_slice = v->fcoo_slice;
    t->fcoo_build = v->fcoo_build;
    t->blco_resolution = v->resolution;
    t->blco_hot = !v->no_heavy;
    *p = NULL;
    tf_context_free(plan_ctx);
    plan_ctx = NULL;
    tf_status s = tf_context_create(&co, &plan_ctx);
    if (s != TF_OK) return s;
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.format = v->format;
    o.precision = prec;
    o.rank_hint = R;
    o.context = plan_ctx;
    return tf_plan_build(X, &o, p);
}

static void free_plan(tf_plan *p)
{
    tf_plan_free(p);
    tf_context_free(plan_ctx);
    plan_ctx = NULL;
}

/* 1 if every element is finite (written, since the output was poisoned). */
static int all_written(const tf_matrix *M)
{
    for (uint64_t i = 0; i < M->rows * M->cols; ++i)
        if (!isfinite(M->data[i])) return 0;
    return 1;
}

static void poison(tf_matrix *M)
{
    for (uint64_t i = 0; i < M->rows * M->cols; ++i) M->data[i] = NAN;
}

/* All modes of X for ranks[0..nr-1]: references first, then a plan of
 * each of vs[0..nv-1]. */
static void check_variants(const tf_tensor *X, const char *what, const uint64_t *ranks, int nr, uint64_t seed,
                           const variant *vs, unsigned nv)
{
    const uint32_t N = X->order;
    for (int ri = 0; ri < nr; ++ri) {
        const uint64_t R = ranks[ri];
        tf_matrix F[TF_MAX_ORDER], ref[TF_MAX_ORDER], out[TF_MAX_ORDER];
        memset(F, 0, sizeof F);
        memset(ref, 0, sizeof ref);
        memset(out, 0, sizeof out);
        CHECK_OK(tt_factors(X, R, seed + R, F));
        for (uint32_t m = 0; m < N; ++m) {
            CHECK_OK(tf_matrix_alloc(&ref[m], X->dims[m], R));
            CHECK_OK(tf_matrix_alloc(&out[m], X->dims[m], R));
            CHECK_OK(tf_mttkrp_reference(X, m, F, &ref[m]));
        }
        for (int prec = 0; prec < 2; ++prec) {
            const double tol = prec == TF_SINGLE ? TOL_FP32 : TOL_FP64;
            for (unsigned v = 0; v < nv; ++v) {
                if (quick && !vs[v].in_quick) continue;
                tf_plan *p = NULL;
                tf_status s = build_plan(X, &vs[v], (tf_precision)prec, R, &p);
                CHECKF(s == TF_OK, "%s %s %s R=%llu: build: %s", what, vs[v].name,
                       prec ? "fp32" : "fp64", (unsigned long long)R, tf_last_error());
                if (s != TF_OK) continue;
                CHECK(tf_plan_format(p) != TF_FORMAT_AUTO && tf_plan_backend(p) == TF_BACKEND_GPU);
                for (uint32_t m = 0; m < N; ++m) {
                    poison(&out[m]);
                    s = tf_plan_mttkrp(p, m, F, &out[m]);
                    const double err = tf_rel_err(out[m].data, ref[m].data, X->dims[m] * R);
                    CHECKF(s == TF_OK && all_written(&out[m]) && err <= tol,
                           "%s [%s] %s %s R=%llu mode %u: %s, rel err %.3g", what, tf_plan_describe(p),
                           vs[v].name, prec ? "fp32" : "fp64", (unsigned long long)R, m + 1,
                           s == TF_OK ? (all_written(&out[m]) ? "written" : "NOT all written")
                                      : tf_last_error(),
                           err);
                }
                free_plan(p);
            }
        }
        for (uint32_t m = 0; m < N; ++m) {
            tf_matrix_free(&ref[m]);
            tf_matrix_free(&out[m]);
        }
        tt_free_factors(F, N);
    }
}

static void check_tensor(const tf_tensor *X, const char *what, const uint64_t *ranks, int nr, uint64_t seed)
{
    check_variants(X, what, ranks, nr, seed, variants, NVARIANTS);
}

/* Half slices on orders 3 and 4 (their own kernels) and 5 (the generic
 * one), skewed so that segments cross partitions: ranks 64 and 100 cut a
 * row into 2 and 4 grid rows of 16 pieces in fp64 (2 in fp32 at 100, the
 * last one partly past R), 64 in fp32 fits one. Also under --quick, whose
 * ranks never take 16-byte pieces. */
static void half_slice_case(void)
{
    const uint64_t ranks[] = {64, 100};
    const uint64_t d3[] = {300, 200, 100}, d4[] = {20, 30, 40, 50}, d5[] = {5, 6, 7, 8, 9};
    tt_spec sp[3] = {tt_spec_make(3, d3, quick ? 2500 : 6000, 21), tt_spec_make(4, d4, quick ? 1500 : 3000, 22),
                     tt_spec_make(5, d5, quick ? 600 : 2000, 23)};
    sp[0].hot_mode = 0; sp[0].hot_row = 5; sp[0].hot_share = 0.5; sp[0].sparse_mode = 2;
    for (int k = 0; k < 3; ++k) {
        char what[64];
        snprintf(what, sizeof what, "%u-mode, half slices", sp[k].order);
        printf("  case: %s\n", what);
        tf_tensor X;
        tf_status s = tt_random(&sp[k], &X);
        CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
        if (s == TF_OK)
            check_variants(&X, what, ranks, 2, 3000 + k, half_variants, sizeof half_variants / sizeof *half_variants);
        tf_tensor_free(&X);
    }
}

/* Power-law tensor from tf_generate: several heavy rows per mode. */
static void powerlaw_case(const char *what, const uint64_t *ranks, int nr)
{
    tf_gen_opts g;
    memset(&g, 0, sizeof g);
    g.order = 3;
    g.dims[0] = 2000; g.dims[1] = 1500; g.dims[2] = 1000;
    g.nnz = quick ? 20000 : 200000;
    for (int m = 0; m < 3; ++m) g.alpha[m] = 0.7;
    g.seed = 5;
    tf_tensor X;
    memset(&X, 0, sizeof X);
    tf_status s = tf_generate(&g, &X);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s == TF_OK) check_tensor(&X, what, ranks, nr, 4242);
    tf_tensor_free(&X);
}

static void random_case(tt_spec sp, const char *what, const uint64_t *ranks, int nr)
{
    tf_tensor X;
    printf("  case: %s\n", what);
    tf_status s = tt_random(&sp, &X);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s == TF_OK) check_tensor(&X, what, ranks, nr, sp.seed * 1000);
    tf_tensor_free(&X);
}

/* tf_plan_time_mttkrp: device-resident timing gives positive times and the right result. */
static void timing_case(void)
{
    const uint64_t dims[] = {300, 200, 100};
    tt_spec sp = tt_spec_make(3, dims, 20000, 77);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    tf_matrix F[3], ref, out;
    CHECK_OK(tt_factors(&X, 16, 5, F));
    CHECK_OK(tf_matrix_alloc(&ref, dims[1], 16));
    CHECK_OK(tf_matrix_alloc(&out, dims[1], 16));
    CHECK_OK(tf_mttkrp_reference(&X, 1, F, &ref));
    for (unsigned v = 0; v < NVARIANTS; ++v) {
        tf_plan *p = NULL;
        CHECK_OK(build_plan(&X, &variants[v], TF_DOUBLE, 16, &p));
        if (!p) continue;
        double ms[5] = {0};
        poison(&out);
        CHECK_OK(tf_plan_time_mttkrp(p, 1, F, &out, 2, 5, ms));
        CHECKF(ms[0] > 0 && ms[4] > 0 && ms[4] < 1e4, "%s: times %g .. %g ms", variants[v].name, ms[0],
               ms[4]);
        CHECKF(tf_rel_err(out.data, ref.data, dims[1] * 16) <= TOL_FP64, "%s: timed result",
               variants[v].name);
        free_plan(p);
    }
    tf_matrix_free(&ref);
    tf_matrix_free(&out);
    tt_free_factors(F, 3);
    tf_tensor_free(&X);
}

/* The auto rule (src/fmt/auto_format.h) on three clear cases (BLCO, the
 * choice when F-COO does not fit, needs a nearly full device to show). */
static void auto_choices(void)
{
    static const variant autov = {TF_FORMAT_AUTO, 0, 0, 0, "auto", 0, 0, 0, 0, 0, 0, 0};
    struct { tt_spec sp; tf_format want; const char *what; } cases[3];
    /* 8 modes of 2^10: an 80-bit index whose 16 block-key bits scatter 3000
     * non-zeros into ~1-element blocks, while the factors stay small. */
    const uint64_t d[] = {300, 200, 100}, wide8[] = {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024},
                   even[] = {400, 500, 600};
    cases[0].sp = tt_spec_make(3, d, 6000, 41);
    cases[0].sp.hot_mode = 0; cases[0].sp.hot_row = 3; cases[0].sp.hot_share = 0.5;
    cases[0].want = TF_FORMAT_FCOO;
    cases[0].what = "a long mode with a heavy slice -> fcoo";
    cases[1].sp = tt_spec_make(8, wide8, 3000, 42);
    cases[1].want = TF_FORMAT_COO;
    cases[1].what = "80-bit index, tiny blocks -> coo";
    cases[2].sp = tt_spec_make(3, even, 20000, 43);
    cases[2].want = TF_FORMAT_FCOO;
    cases[2].what = "even 3-mode, per-mode copies fit -> fcoo";
    for (int i = 0; i < 3; ++i) {
        tf_tensor X;
        CHECK_OK(tt_random(&cases[i].sp, &X));
        tf_plan *p = NULL;
        CHECK_OK(build_plan(&X, &autov, TF_DOUBLE, 32, &p));
        if (p) CHECKF(tf_plan_format(p) == cases[i].want, "%s: got %s (%s)", cases[i].what,
                      tf_format_name(tf_plan_format(p)), tf_plan_describe(p));
        free_plan(p);
        tf_tensor_free(&X);
    }
}

static void error_cases(void)
{
    const uint64_t dims[] = {10, 10, 10};
    tt_spec sp = tt_spec_make(3, dims, 100, 3);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.format = TF_FORMAT_CSF;
    tf_plan *p = NULL;
    CHECK(tf_plan_build(&X, &o, &p) == TF_ERR_UNAVAILABLE && p == NULL);
    o.format = TF_FORMAT_BLCO;
    o.device = 1000;
    CHECK(tf_plan_build(&X, &o, &p) == TF_ERR_ARG && p == NULL);
    tf_tensor_free(&X);

    uint64_t d9[9];
    for (int m = 0; m < 9; ++m) d9[m] = 3;
    tt_spec s9 = tt_spec_make(9, d9, 50, 4);
    CHECK_OK(tt_random(&s9, &X));
    o.device = 0;
    CHECK(tf_plan_build(&X, &o, &p) == TF_ERR_UNAVAILABLE && p == NULL);
    tf_tensor_free(&X);
}

static void gpu_mttkrp_real_tensor(const char *name, const char *path, tf_tensor *X, void *user)
{
    const uint64_t ranks[] = {32};
    printf("  real tensor %s: order %u, %llu non-zeros\n", name, X->order, (unsigned long long)X->nnz);
    fflush(stdout);
    check_tensor(X, name, ranks, 1, 99);
}

static void real_tensors(void)
{
    static const char *const tensors[] = {".tns.xz", ".mtx.xz", ".tns", NULL};
    tf_for_each_data_file("test_gpu_mttkrp", tensors, gpu_mttkrp_real_tensor, NULL);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress visible if the run is cut off */
    quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_mttkrp", "no CUDA device");
    char dev[256];
    CHECK_OK(tf_gpu_describe(0, dev, sizeof dev));
    printf("test_gpu_mttkrp on %s%s\n", dev, quick ? " (quick)" : "");

    const uint64_t full_ranks[] = {1, 7, 32, 33, 64, 100, 129};
    const uint64_t quick_ranks[] = {7, 33};
    const uint64_t *ranks = quick ? quick_ranks : full_ranks;
    const int nr = quick ? 2 : 7;

    const uint64_t d3[] = {50, 60, 70};
    random_case(tt_spec_make(3, d3, quick ? 800 : 3000, 1), "3-mode", ranks, nr);
    const uint64_t d5[] = {5, 6, 7, 8, 9};
    random_case(tt_spec_make(5, d5, quick ? 600 : 2000, 3), "5-mode", ranks, nr);

    /* > 2048 non-zeros, so BLCO gives the hot row a stash slot (also in --quick) */
    tt_spec hot = tt_spec_make(3, (const uint64_t[]){300, 200, 100}, quick ? 2500 : 6000, 4);
    hot.hot_mode = 0; hot.hot_row = 17; hot.hot_share = 0.5; hot.sparse_mode = 2;
    random_case(hot, "skewed (half in one row) with empty slices", ranks, nr);

    const uint64_t big4[] = {1u << 20, 1u << 20, 1u << 20, 1u << 20};
    const uint64_t r_big[] = {7, 33};
    random_case(tt_spec_make(4, big4, quick ? 700 : 5000, 6), "4 x 2^20 (80-bit index)", r_big, 2);

    const uint64_t pl_ranks[] = {16, 32, 100};
    powerlaw_case("power law (alpha 0.7), heavy rows", quick ? pl_ranks + 1 : pl_ranks, quick ? 1 : 3);
    half_slice_case();

    if (!quick) {
        const uint64_t d4[] = {20, 30, 40, 50};
        random_case(tt_spec_make(4, d4, 3000, 2), "4-mode", ranks, nr);
        const uint64_t shortm[] = {1, 2, 131, 500};
        random_case(tt_spec_make(4, shortm, 4000, 5), "modes of length 1, 2, 131", ranks, nr);
        const uint64_t d2[] = {1000, 800};
        random_case(tt_spec_make(2, d2, 5000, 7), "2-mode", ranks, nr);
        const uint64_t d6[] = {7, 9, 11, 5, 6, 8};
        random_case(tt_spec_make(6, d6, 2500, 8), "6-mode", ranks, nr);
        const uint64_t d7[] = {3, 4, 5, 6, 7, 8, 9};
        random_case(tt_spec_make(7, d7, 2500, 9), "7-mode", ranks, nr);
        const uint64_t d8[] = {3, 4, 5, 3, 4, 5, 3, 4};
        random_case(tt_spec_make(8, d8, 1500, 10), "8-mode", ranks, nr);
        /* > 64-bit index with three modes (dense factors of 2^23 rows stay small at R <= 33) */
        const uint64_t wide3[] = {1u << 23, 1u << 22, 1u << 22};
        const uint64_t r_wide[] = {1, 33};
        random_case(tt_spec_make(3, wide3, 3000, 11), "3-mode 67-bit index", r_wide, 2);
        const uint64_t larger[] = {5000, 4000, 3000};
        const uint64_t r32[] = {32, 16};
        random_case(tt_spec_make(3, larger, 300000, 12), "3-mode, 300k non-zeros", r32, 2);
        const uint64_t r1024[] = {1024};
        random_case(tt_spec_make(3, d3, 2000, 13), "3-mode, rank 1024", r1024, 1);
        random_case(tt_spec_make(3, d3, 0, 14), "no non-zeros", ranks, 2);
        timing_case();
        auto_choices();
        error_cases();
        real_tensors();
    }
    return tf_test_finish("test_gpu_mttkrp");
}
