/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_context and the tuning policy: creation and its errors, defaults,
 * the environment overrides (read only when asked), the memory budget, a
 * NULL context against an explicit one (same fits), and — on a machine
 * with a GPU — one context shared by several plans and a CP-ALS run, a
 * memory limit that no format fits, and a policy that forces a kernel. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "seams/context.h"
#include "check.h"
#include "gpu_test_tensors.h"
#include "front/auto_backend.h"
#include "tenfold.h"

static void defaults(void)
{
    tf_tuning t;
    memset(&t, 0x5a, sizeof t); /* poisoned: every field must be set */
    tf_tuning_default(&t);
    CHECK(t.fcoo_tune == 1 && t.fcoo_tune_nnz == 0 && t.fcoo_kernel == 0 && t.fcoo_variant == 0);
    CHECK(t.fcoo_part == 0 && t.fcoo_seg_part == 0 && t.fcoo_slice == 0 && t.fcoo_vec == 1);
    CHECK(t.blco_resolution == 0 && t.blco_hot == 1);
    CHECK(t.cpd_cusolver == 0 && t.cpd_graph == 1 && t.cpd_apply == 0 && t.cpd_gram_syrk == 0);
    CHECK(t.cpd_apply_gram == -1 && t.cpd_gram_solve_rows == -1);
    CHECK(t.sddmm_row_grid == 0 && t.gpu_poison == 0);
    CHECK(t.gpu_staging == 1 && t.build_report == 0);
    CHECK(t.mpi_timeout == 0 && t.nccl_timeout == 0 && t.size == sizeof t);

    tf_context_opts o;
    memset(&o, 0x5a, sizeof o);
    tf_context_opts_default(&o);
    CHECK(o.backend == TF_BACKEND_AUTO && o.device == 0 && o.ndevices == 1 && o.memory_limit == 0 &&
          o.threads == 0);
    CHECK(o.tuning == NULL); /* the library's defaults */
}

/* The tuning policy is versioned by its size: a caller compiled against an
 * older header (a shorter struct) gets the defaults for the knobs it does
 * not have, and nothing past its size is read or written; a newer one's
 * unknown knobs are ignored; a size of 0 is an error. */
static void tuning_sizes(void)
{
    /* an "older" caller: the struct ends before mpi_timeout */
    const size_t old = offsetof(tf_tuning, mpi_timeout);
    unsigned char buf[sizeof(tf_tuning) + 64];
    memset(buf, 0x5a, sizeof buf);
    tf_tuning *t = (tf_tuning *)buf;
    tf_tuning_init(t, old);
    CHECK(t->size == old && t->fcoo_tune == 1 && t->blco_hot == 1 && t->build_report == 0);
    for (size_t i = old; i < sizeof buf; ++i) CHECKF(buf[i] == 0x5a, "byte %zu past the size written", i);
    setenv("TF_MPI_TIMEOUT", "7", 1);
    setenv("TF_NCCL_TIMEOUT", "9", 1);
    setenv("TF_BLCO_HOT", "0", 1);
    tf_tuning_from_env(t);
    CHECK(t->blco_hot == 0 && t->size == old);
    for (size_t i = old; i < sizeof buf; ++i) CHECKF(buf[i] == 0x5a, "byte %zu past the size written (env)", i);
    tf_tuning full;
    tf_tuning_default(&full);
    tf_tuning_from_env(&full);
    CHECK(full.mpi_timeout == 7 && full.nccl_timeout == 9 && full.blco_hot == 0);
    setenv("TF_MPI_TIMEOUT", "soon", 1); /* not a number of seconds: ignored */
    setenv("TF_NCCL_TIMEOUT", "-3", 1);
    tf_tuning_default(&full);
    tf_tuning_from_env(&full);
    CHECK(full.mpi_timeout == 0 && full.nccl_timeout == 0);
    unsetenv("TF_MPI_TIMEOUT");
    unsetenv("TF_NCCL_TIMEOUT");
    unsetenv("TF_BLCO_HOT");

    /* a context reads the older caller's knobs and defaults the rest */
    t->fcoo_kernel = 2;
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.tuning = t;
    tf_context *c = NULL;
    CHECK_OK(tf_context_create(&o, &c));
    if (c) {
        CHECK(c->tuning.fcoo_kernel == 2 && c->tuning.blco_hot == 0 && c->tuning.size == sizeof(tf_tuning));
        CHECK(c->tuning.mpi_timeout == 0 && c->tuning.nccl_timeout == 0); /* not the 0x5a bytes */
        CHECK(c->opts.tuning == &c->tuning);
    }
    tf_context_free(c);
    /* a newer caller: knobs past this library's struct are ignored */
    memset(buf, 0x5a, sizeof buf);
    tf_tuning_init(t, sizeof buf);
    CHECK(t->size == sizeof buf && t->fcoo_tune == 1 && buf[sizeof buf - 1] == 0);
    t->cpd_graph = 0;
    c = NULL;
    CHECK_OK(tf_context_create(&o, &c));
    if (c) CHECK(c->tuning.cpd_graph == 0 && c->tuning.size == sizeof(tf_tuning));
    tf_context_free(c);
    /* a struct tf_tuning_default never filled */
    tf_tuning zero;
    memset(&zero, 0, sizeof zero);
    o.tuning = &zero;
    c = (tf_context *)&c;
    CHECK(tf_context_create(&o, &c) == TF_ERR_ARG && c == NULL);
    CHECKF(strstr(tf_last_error(), "tf_tuning_default"), "%s", tf_last_error());
    tf_tuning_init(NULL, sizeof zero); /* nothing */
    tf_tuning_init(&zero, 3);          /* below the size field: nothing */
    CHECK(zero.size == 0);
}

/* The environment is read by tf_tuning_from_env only; malformed values
 * leave a field as it was. */
static void environment(void)
{
    setenv("TF_FCOO_KERNEL", "scan", 1);
    setenv("TF_FCOO_MINB", "pipe", 1);
    setenv("TF_FCOO_PART", "96", 1);
    setenv("TF_FCOO_SEG_PART", "100", 1); /* not a multiple of 32: ignored */
    setenv("TF_FCOO_TUNE_NNZ", "1000", 1);
    setenv("TF_FCOO_SLICE", "16", 1);
    setenv("TF_BLCO_RESOLUTION", "hierarchical", 1);
    setenv("TF_BLCO_HOT", "0", 1);
    setenv("TF_GPU_GRAPH", "0", 1);
    setenv("TF_GPU_APPLY", "cublas", 1);
    setenv("TF_GPU_GRAM_SOLVE", "-5", 1);
    setenv("TF_GPU_APPLY_GRAM", "1", 1);
    setenv("TF_SDDMM_ROW_GRID", "x3", 1); /* not a number: ignored */
    setenv("TF_GPU_POISON", "1", 1);
    setenv("TF_FCOO_BUILD", "host", 1);
    setenv("TF_AUTO_COST", "0", 1);
    setenv("TF_GPU_STAGING", "0", 1);
    setenv("TF_BUILD_REPORT", "1", 1);
    setenv("TF_GPU_SHARDS", "host", 1);

    tf_tuning d, t;
    tf_tuning_default(&d);
    tf_tuning_default(&t);
    CHECK(!memcmp(&d, &t, sizeof t)); /* defaults never look at the environment */
    tf_context_opts o;
    tf_context_opts_default(&o);
    CHECK(o.tuning == NULL);

    tf_tuning_from_env(&t);
    CHECK(t.fcoo_kernel == 1 && t.fcoo_variant == 5 && t.fcoo_part == 96 && t.fcoo_seg_part == 0);
    CHECK(t.fcoo_tune_nnz == 1000 && t.fcoo_slice == 16);
    CHECK(t.blco_resolution == 2 && t.blco_hot == 0);
    CHECK(t.cpd_graph == 0 && t.cpd_apply == 2 && t.cpd_gram_solve_rows == 0 && t.cpd_apply_gram == 1);
    CHECK(t.sddmm_row_grid == 0 && t.gpu_poison == 1);
    CHECK(t.fcoo_build == 1 && t.auto_cost == 0 && d.fcoo_build == 0 && d.auto_cost == 1);
    CHECK(t.gpu_staging == 0 && t.build_report == 1 && d.gpu_staging == 1 && d.build_report == 0);
    CHECK(t.fcoo_tune == 1 && t.fcoo_vec == 1 && t.cpd_cusolver == 0); /* untouched */
    CHECK(t.gpu_shards == 1 && d.gpu_shards == 0);

    setenv("TF_FCOO_MINB", "4", 1);
    setenv("TF_FCOO_KERNEL", "seg", 1);
    setenv("TF_FCOO_BUILD", "device", 1);
    setenv("TF_FCOO_TUNE", "full", 1);
    setenv("TF_GPU_SHARDS", "device", 1);
    tf_tuning_from_env(&t);
    CHECK(t.fcoo_variant == 4 && t.fcoo_kernel == 2 && t.fcoo_build == 2 && t.fcoo_tune == 2);
    CHECK(t.gpu_shards == 2);
    setenv("TF_GPU_SHARDS", "feed", 1);
    tf_tuning_from_env(&t);
    CHECK(t.gpu_shards == 3);

    const char *vars[] = {"TF_FCOO_KERNEL", "TF_FCOO_MINB", "TF_FCOO_PART", "TF_FCOO_SEG_PART",
                          "TF_FCOO_TUNE_NNZ", "TF_FCOO_SLICE", "TF_BLCO_RESOLUTION", "TF_BLCO_HOT",
                          "TF_GPU_GRAPH", "TF_GPU_APPLY", "TF_GPU_GRAM_SOLVE", "TF_GPU_APPLY_GRAM",
                          "TF_SDDMM_ROW_GRID", "TF_GPU_POISON", "TF_FCOO_BUILD", "TF_AUTO_COST", "TF_FCOO_TUNE",
                          "TF_GPU_STAGING", "TF_BUILD_REPORT", "TF_GPU_SHARDS"};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; ++i) unsetenv(vars[i]);
}

/* The auto backend's cost rule (front/auto_backend.c): the shared tensors'
 * sizes go to the CPU, the 20M-non-zero tensor to the GPU; a GPU already
 * started moves the line down. */
static void auto_cost_rule(void)
{
    tf_tensor X;
    memset(&X, 0, sizeof X);
    X.order = 4;
    X.dims[0] = 30, X.dims[1] = 24, X.dims[2] = 659, X.dims[3] = 1086; /* uber-apr14 */
    X.nnz = 416744;
    char why[256] = "";
    CHECK(tf_auto_prefers_cpu(&X, 16, 50, 16, 0, why, sizeof why));
    CHECKF(strstr(why, "416744 non-zeros") && strstr(why, "16 threads") && strstr(why, "running on the CPU"), "%s", why);
    CHECK(!tf_auto_prefers_cpu(&X, 16, 50, 1, 1, why, sizeof why)); /* GPU ready, one thread */
    X.order = 3;
    X.dims[0] = 2000000, X.dims[1] = 1000000, X.dims[2] = 200000;
    X.nnz = 20000000;
    CHECK(!tf_auto_prefers_cpu(&X, 32, 50, 16, 0, why, sizeof why));
    X.nnz = 1000;
    X.dims[0] = X.dims[1] = X.dims[2] = 100;
    CHECK(tf_auto_prefers_cpu(&X, 8, 50, 1, 1, why, sizeof why)); /* tiny, even with the GPU up */
    CHECK(strstr(why, "1 thread,") != NULL);
}

static void creation_errors(void)
{
    tf_context *c = (tf_context *)&c; /* must be reset to NULL on failure */
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.ndevices = 2;
    if (tf_gpu_count() < 2) { /* two GPUs asked for, fewer there */
        CHECK(tf_context_create(&o, &c) == TF_ERR_ARG && c == NULL);
        CHECK(strstr(tf_last_error(), "2 GPUs") != NULL);
    } else {
        CHECK_OK(tf_context_create(&o, &c));
        CHECK(tf_context_backend(c) == TF_BACKEND_GPU);
        tf_context_free(c);
        c = (tf_context *)&c;
    }
    o.ndevices = TF_MAX_GPUS + 1;
    CHECK(tf_context_create(&o, &c) == TF_ERR_ARG && c == NULL);
    o.ndevices = 0;
    CHECK(tf_context_create(&o, &c) == TF_ERR_ARG && c == NULL);
    tf_context_opts_default(&o);
    o.backend = (tf_backend)7;
    CHECK(tf_context_create(&o, &c) == TF_ERR_ARG);
    tf_context_opts_default(&o);
    o.threads = -1;
    CHECK(tf_context_create(&o, &c) == TF_ERR_ARG);
    CHECK(tf_context_create(&o, NULL) == TF_ERR_ARG);
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.device = 1000;
    tf_status s = tf_context_create(&o, &c);
    CHECKF(s == (tf_gpu_count() > 0 ? TF_ERR_ARG : TF_ERR_UNAVAILABLE) && c == NULL, "GPU 1000: %s",
           tf_last_error());
    tf_context_free(NULL); /* a no-op */
}

static void cpu_context(void)
{
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    tf_context *c = NULL;
    CHECK_OK(tf_context_create(&o, &c));
    CHECK(tf_context_backend(c) == TF_BACKEND_CPU);
    uint64_t b = 123;
    CHECK(tf_context_memory_budget(c, &b) == TF_ERR_UNAVAILABLE && b == 0);

    tf_context *a = NULL;
    CHECK_OK(tf_context_create(NULL, &a)); /* NULL options: the defaults */
    CHECK(tf_context_backend(a) == (tf_gpu_count() > 0 ? TF_BACKEND_GPU : TF_BACKEND_CPU));
    tf_context_free(a);

    /* A plan and a CP-ALS run in a CPU context, against NULL contexts: the
     * same results (the CPU context must not reach for a GPU either). */
    tt_spec sp = tt_spec_make(3, (const uint64_t[]){30, 20, 10}, 900, 7);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.context = c;
    tf_plan *p = NULL;
    CHECK_OK(tf_plan_build(&X, &po, &p));
    CHECK(p && tf_plan_backend(p) == TF_BACKEND_CPU);
    tf_plan_free(p);

    tf_cpd_opts co;
    tf_cpd_opts_default(&co);
    co.rank = 4;
    co.max_iters = 5;
    co.backend = TF_BACKEND_CPU;
    tf_ktensor k1, k2;
    tf_cpd_report r1, r2;
    CHECK_OK(tf_cpd(&X, &co, &k1, &r1));
    co.context = c;
    co.backend = TF_BACKEND_AUTO; /* auto follows the context: the CPU */
    CHECK_OK(tf_cpd(&X, &co, &k2, &r2));
    CHECKF(r1.fit == r2.fit && r1.iters == r2.iters, "fits %.17g / %.17g", r1.fit, r2.fit);
    CHECK(strstr(r2.plan, "cpu") != NULL);
    tf_ktensor_free(&k1);
    tf_ktensor_free(&k2);

    /* SDDMM and SpTTM in the CPU context */
    tf_tensor S;
    tt_spec ss = tt_spec_make(2, (const uint64_t[]){40, 30}, 200, 9);
    CHECK_OK(tt_random(&ss, &S));
    tf_matrix A, B;
    CHECK_OK(tf_matrix_alloc(&A, 40, 8));
    CHECK_OK(tf_matrix_alloc(&B, 30, 8));
    for (uint64_t i = 0; i < 40 * 8; ++i) A.data[i] = sin((double)i);
    for (uint64_t i = 0; i < 30 * 8; ++i) B.data[i] = cos((double)i);
    double *P = calloc(S.nnz, sizeof *P);
    tf_sddmm_opts so;
    tf_sddmm_opts_default(&so);
    so.context = c;
    tf_sddmm_info info;
    CHECK(P != NULL);
    if (P) {
        CHECK_OK(tf_sddmm_coo(&S, &A, &B, &so, P, &info));
        CHECK(info.backend == TF_BACKEND_CPU);
    }
    free(P);
    tf_spttm_opts to;
    tf_spttm_opts_default(&to);
    to.context = c;
    tf_semisparse Y;
    tf_matrix U;
    CHECK_OK(tf_matrix_alloc(&U, 10, 3));
    for (uint64_t i = 0; i < 30; ++i) U.data[i] = 1.0 + (double)i;
    CHECK_OK(tf_spttm(&X, 2, &U, &to, &Y));
    tf_semisparse_free(&Y);
    tf_matrix_free(&U);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_tensor_free(&S);
    tf_tensor_free(&X);
    tf_context_free(c);
}

/* One GPU context: the budget and the memory limit, two plans and a
 * CP-ALS run borrowing it, a limit no format fits, a forced kernel. */
static void gpu_context(void)
{
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    tf_context *c = NULL;
    CHECK_OK(tf_context_create(&o, &c));
    if (!c) return;
    CHECK(tf_context_backend(c) == TF_BACKEND_GPU);
    uint64_t free_budget = 0;
    CHECK_OK(tf_context_memory_budget(c, &free_budget));
    CHECK(free_budget > (64u << 20));

    tt_spec sp = tt_spec_make(3, (const uint64_t[]){300, 200, 100}, 20000, 11);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    tf_matrix F[3], ref, out;
    const uint64_t R = 16;
    for (uint32_t m = 0; m < 3; ++m) {
        CHECK_OK(tf_matrix_alloc(&F[m], X.dims[m], R));
        for (uint64_t i = 0; i < X.dims[m] * R; ++i) F[m].data[i] = 0.5 + 0.01 * (double)(i % 97);
    }
    CHECK_OK(tf_matrix_alloc(&ref, X.dims[0], R));
    CHECK_OK(tf_matrix_alloc(&out, X.dims[0], R));
    CHECK_OK(tf_mttkrp_reference(&X, 0, F, &ref));

    /* two plans alive at once in one context */
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.context = c;
    po.rank_hint = R;
    tf_plan *p1 = NULL, *p2 = NULL;
    po.format = TF_FORMAT_FCOO;
    CHECK_OK(tf_plan_build(&X, &po, &p1));
    po.format = TF_FORMAT_BLCO;
    CHECK_OK(tf_plan_build(&X, &po, &p2));
    tf_plan *ps[2] = {p1, p2};
    for (int i = 0; i < 2; ++i) {
        if (!ps[i]) continue;
        CHECK(tf_plan_backend(ps[i]) == TF_BACKEND_GPU);
        for (uint64_t k = 0; k < out.rows * out.cols; ++k) out.data[k] = NAN;
        CHECK_OK(tf_plan_mttkrp(ps[i], 0, F, &out));
        const double err = tf_rel_err(out.data, ref.data, out.rows * out.cols);
        CHECKF(err < 1e-12, "%s: rel err %.3g", tf_plan_describe(ps[i]), err);
    }
    tf_plan_free(p1);
    tf_plan_free(p2);

    /* CP-ALS in the same context equals one with a NULL context */
    tf_cpd_opts co;
    tf_cpd_opts_default(&co);
    co.rank = 8;
    co.max_iters = 5;
    co.backend = TF_BACKEND_GPU;
    tf_ktensor k1, k2;
    tf_cpd_report r1, r2;
    CHECK_OK(tf_cpd(&X, &co, &k1, &r1));
    co.context = c;
    CHECK_OK(tf_cpd(&X, &co, &k2, &r2));
    CHECKF(fabs(r1.fit - r2.fit) < 1e-12, "fits %.17g / %.17g", r1.fit, r2.fit);
    tf_ktensor_free(&k1);
    tf_ktensor_free(&k2);
    tf_context_free(c);

    /* a memory limit of 64 KiB: the budget says so, no format fits; on the
     * GPU backend that is an error naming the budget, under auto the plan
     * and CP-ALS run on the CPU and say why (fp32 asked: in double); the
     * cost rule is off, or this small problem would go to the CPU first */
    o.memory_limit = 64u << 10;
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    tuning.auto_cost = 0;
    o.tuning = &tuning;
    CHECK_OK(tf_context_create(&o, &c));
    uint64_t b = 0;
    CHECK_OK(tf_context_memory_budget(c, &b));
    CHECK(b == (64u << 10));
    po.context = c;
    po.format = TF_FORMAT_AUTO;
    po.backend = TF_BACKEND_GPU;
    tf_plan *p = NULL;
    tf_status s = tf_plan_build(&X, &po, &p);
    CHECKF(s == TF_ERR_NOMEM && p == NULL && strstr(tf_last_error(), "budget"), "%s", tf_last_error());
    po.backend = TF_BACKEND_AUTO;
    po.precision = TF_SINGLE;
    CHECK_OK(tf_plan_build(&X, &po, &p));
    if (p) {
        CHECKF(tf_plan_backend(p) == TF_BACKEND_CPU && strstr(tf_plan_note(p), "running on the CPU") &&
                   strstr(tf_plan_note(p), "budget"),
               "auto under 64 KiB: %s; note '%s'", tf_plan_describe(p), tf_plan_note(p));
        for (uint64_t k = 0; k < out.rows * out.cols; ++k) out.data[k] = NAN;
        CHECK_OK(tf_plan_mttkrp(p, 0, F, &out));
        CHECK(tf_rel_err(out.data, ref.data, out.rows * out.cols) < 1e-12);
    }
    tf_plan_free(p);
    po.precision = TF_DOUBLE;
    co.backend = TF_BACKEND_AUTO;
    co.context = c;
    co.precision = TF_SINGLE;
    tf_ktensor k3, k4;
    tf_cpd_report r3, r4;
    CHECK_OK(tf_cpd(&X, &co, &k3, &r3));
    CHECKF(strstr(r3.plan, "cpu") && strstr(r3.note, "running on the CPU (in double precision)"),
           "auto CP-ALS under 64 KiB: plan '%s', note '%s'", r3.plan, r3.note);
    co.context = NULL;
    co.backend = TF_BACKEND_CPU;
    co.precision = TF_DOUBLE;
    CHECK_OK(tf_cpd(&X, &co, &k4, &r4));
    CHECKF(r3.fit == r4.fit && r4.note[0] == 0, "fits %.17g / %.17g", r3.fit, r4.fit);
    tf_ktensor_free(&k3);
    tf_ktensor_free(&k4);
    tf_context_free(c);
    tuning.auto_cost = 1;
    /* with the cost rule (the default) the same small problem goes to the
     * CPU before the GPU is tried, and the note says why */
    co.backend = TF_BACKEND_AUTO;
    co.precision = TF_SINGLE;
    CHECK_OK(tf_cpd(&X, &co, &k3, &r3));
    CHECKF(strstr(r3.plan, "cpu") && strstr(r3.note, "small problem") &&
               strstr(r3.note, "running on the CPU (in double precision)"),
           "auto CP-ALS of a small problem: plan '%s', note '%s'", r3.plan, r3.note);
    CHECKF(r3.fit == r4.fit, "fits %.17g / %.17g", r3.fit, r4.fit);
    tf_ktensor_free(&k3);
    co.precision = TF_DOUBLE;

    /* the limit is enforced on every device allocation, and what a freed
     * or failed plan held is given back (the budget returns to the limit) */
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.memory_limit = 256u << 10;
    CHECK_OK(tf_context_create(&o, &c));
    po.context = c;
    po.backend = TF_BACKEND_GPU;
    po.format = TF_FORMAT_FCOO; /* explicit: no auto rule in front of the allocations */
    p = NULL;
    s = tf_plan_build(&X, &po, &p);
    CHECKF(s == TF_ERR_NOMEM && p == NULL && strstr(tf_last_error(), "device memory limit"), "%s",
           tf_last_error());
    CHECK_OK(tf_context_memory_budget(c, &b));
    CHECKF(b == (256u << 10), "budget after a failed build: %llu", (unsigned long long)b);
    tf_context_free(c);
    o.memory_limit = 64u << 20;
    CHECK_OK(tf_context_create(&o, &c));
    po.context = c;
    CHECK_OK(tf_plan_build(&X, &po, &p));
    uint64_t b_used = 0;
    CHECK_OK(tf_context_memory_budget(c, &b_used));
    CHECKF(p && b_used < (64u << 20) && (64u << 20) - b_used >= tf_plan_bytes(p),
           "budget %llu with a plan of %llu bytes", (unsigned long long)b_used,
           (unsigned long long)(p ? tf_plan_bytes(p) : 0));
    tf_plan_free(p);
    p = NULL;
    CHECK_OK(tf_context_memory_budget(c, &b));
    CHECKF(b == (64u << 20), "budget after the plan was freed: %llu", (unsigned long long)b);
    tf_context_free(c);
    po.backend = TF_BACKEND_AUTO;

    /* SDDMM and SpTTM under a 64 KiB limit: one-line errors naming it */
    o.memory_limit = 64u << 10;
    CHECK_OK(tf_context_create(&o, &c));
    {
        tt_spec ss = tt_spec_make(2, (const uint64_t[]){300, 200}, 20000, 17);
        tf_tensor S;
        CHECK_OK(tt_random(&ss, &S));
        tf_matrix A2, B2;
        CHECK_OK(tf_matrix_alloc(&A2, 300, 64));
        CHECK_OK(tf_matrix_alloc(&B2, 200, 64));
        for (uint64_t i = 0; i < 300 * 64; ++i) A2.data[i] = 1.0 / (1.0 + (double)i);
        for (uint64_t i = 0; i < 200 * 64; ++i) B2.data[i] = 1.0 / (2.0 + (double)i);
        double *P2 = calloc(S.nnz, sizeof *P2);
        tf_sddmm_opts so;
        tf_sddmm_opts_default(&so);
        so.context = c;
        so.backend = TF_BACKEND_GPU;
        tf_status e = P2 ? tf_sddmm_coo(&S, &A2, &B2, &so, P2, NULL) : TF_ERR_NOMEM;
        CHECKF(e == TF_ERR_NOMEM && strstr(tf_last_error(), "device memory limit") &&
                   !strchr(tf_last_error(), '\n'),
               "SDDMM under 64 KiB: %s", tf_last_error());
        /* under auto it runs on the CPU and says why, with the CPU's result */
        double *P3 = calloc(S.nnz, sizeof *P3);
        tf_sddmm_info si;
        so.backend = TF_BACKEND_AUTO;
        CHECK_OK(P3 ? tf_sddmm_coo(&S, &A2, &B2, &so, P2, &si) : TF_ERR_NOMEM);
        CHECKF(si.backend == TF_BACKEND_CPU && strstr(si.note, "device memory limit") &&
                   strstr(si.note, "running on the CPU"),
               "auto SDDMM under 64 KiB: backend %d, note '%s'", (int)si.backend, si.note);
        so.context = NULL;
        so.backend = TF_BACKEND_CPU;
        CHECK_OK(P3 ? tf_sddmm_coo(&S, &A2, &B2, &so, P3, &si) : TF_ERR_NOMEM);
        CHECK(P3 && !memcmp(P2, P3, S.nnz * sizeof *P3) && si.note[0] == 0);
        free(P3);
        so.context = c;
        tf_spttm_opts to;
        tf_spttm_opts_default(&to);
        to.context = c;
        to.backend = TF_BACKEND_GPU;
        tf_matrix U;
        tf_semisparse Y;
        CHECK_OK(tf_matrix_alloc(&U, X.dims[0], 64));
        for (uint64_t i = 0; i < X.dims[0] * 64; ++i) U.data[i] = 0.5;
        e = tf_spttm(&X, 0, &U, &to, &Y);
        CHECKF(e == TF_ERR_NOMEM && strstr(tf_last_error(), "device memory limit"), "SpTTM under 64 KiB: %s",
               tf_last_error());
        /* under auto it runs on the CPU and says why, with the CPU's result */
        tf_spttm_info ti;
        tf_semisparse Y1, Y2;
        to.backend = TF_BACKEND_AUTO;
        to.info = &ti;
        CHECK_OK(tf_spttm(&X, 0, &U, &to, &Y1));
        CHECKF(ti.backend == TF_BACKEND_CPU && strstr(ti.note, "device memory limit") &&
                   strstr(ti.note, "running on the CPU"),
               "auto SpTTM under 64 KiB: backend %d, note '%s'", (int)ti.backend, ti.note);
        to.context = NULL;
        to.backend = TF_BACKEND_CPU;
        CHECK_OK(tf_spttm(&X, 0, &U, &to, &Y2));
        CHECK(ti.backend == TF_BACKEND_CPU && ti.note[0] == 0 && Y1.nfibers == Y2.nfibers &&
              !memcmp(Y1.vals, Y2.vals, Y1.nfibers * 64 * sizeof *Y1.vals));
        tf_semisparse_free(&Y1);
        tf_semisparse_free(&Y2);
        to.context = c;
        to.info = NULL;
        CHECK_OK(tf_context_memory_budget(c, &b));
        CHECKF(b == (64u << 10), "budget after the failed runs: %llu", (unsigned long long)b);
        tf_matrix_free(&U);
        free(P2);
        tf_matrix_free(&A2);
        tf_matrix_free(&B2);
        tf_tensor_free(&S);
    }
    tf_context_free(c);

    /* a policy that forces a kernel reaches the engine: the scan kernel */
    tf_context_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    tf_tuning_default(&tuning);
    tuning.fcoo_kernel = 1;
    o.tuning = &tuning;
    CHECK_OK(tf_context_create(&o, &c));
    po.context = c;
    po.format = TF_FORMAT_FCOO;
    p = NULL;
    CHECK_OK(tf_plan_build(&X, &po, &p));
    if (p) {
        CHECKF(!strstr(tf_plan_describe(p), "seg modes"), "scan forced, got %s", tf_plan_describe(p));
        CHECK_OK(tf_plan_mttkrp(p, 0, F, &out));
        CHECK(tf_rel_err(out.data, ref.data, out.rows * out.cols) < 1e-12);
    }
    tf_plan_free(p);
    tf_context_free(c);

    for (uint32_t m = 0; m < 3; ++m) tf_matrix_free(&F[m]);
    tf_matrix_free(&ref);
    tf_matrix_free(&out);
    tf_tensor_free(&X);
}

/* The version and the build description (issue 31): one version in the
 * header, the library and CMake; the build's facts filled in. */
static void build_info(void)
{
    char v[32];
    snprintf(v, sizeof v, "%d.%d.%d", TF_VERSION_MAJOR, TF_VERSION_MINOR, TF_VERSION_PATCH);
    CHECKF(!strcmp(v, TF_VERSION_STRING) && !strcmp(tf_version(), TF_VERSION_STRING), "%s / %s / %s", v,
           TF_VERSION_STRING, tf_version());
    tf_build_info b;
    memset(&b, 0x5a, sizeof b);
    tf_get_build_info(&b);
    CHECK(b.version && !strcmp(b.version, tf_version()));
    CHECK(b.commit && *b.commit && b.compiler && *b.compiler && b.blas_lapack && *b.blas_lapack);
    CHECK(b.cuda_toolkit && (tf_have_cuda() ? *b.cuda_toolkit != 0 : *b.cuda_toolkit == 0));
    CHECK(tf_have_cuda() ? b.cuda_runtime >= 12000 : b.cuda_runtime == 0 && b.cuda_driver == 0);
}

/* The CUDA module (issue 31 item 4): a test program links the CUDA objects
 * itself, so the library uses them and loads no module (two copies of the
 * backend's state in one process); a CPU-only build has none. */
static void cuda_module(void)
{
    char where[1024] = "?";
    const tf_cuda_module_state st = tf_cuda_module(0, where, sizeof where);
    CHECKF(st == TF_CUDA_MODULE_NONE || (st >= TF_CUDA_MODULE_FOUND && !strcmp(where, "linked into the program")),
           "state %d, %s", (int)st, where);
    const tf_cuda_module_state loaded = tf_cuda_module(1, where, sizeof where);
    if (st == TF_CUDA_MODULE_NONE) {
        CHECK(loaded == TF_CUDA_MODULE_NONE && !tf_have_cuda() && strstr(where, "no CUDA backend"));
    } else {
        CHECKF(loaded == TF_CUDA_MODULE_LOADED && !strcmp(where, "linked into the program") && tf_have_cuda(),
               "state %d, %s", (int)loaded, where);
    }
    CHECK(tf_cuda_module(1, NULL, 0) == loaded);
}

int main(void)
{
    build_info();
    cuda_module();
    defaults();
    environment();
    tuning_sizes();
    auto_cost_rule();
    creation_errors();
    cpu_context();
    if (tf_gpu_count() > 0) gpu_context();
    else printf("test_context: no CUDA device: the GPU part is skipped\n");
    return tf_test_finish("test_context");
}
