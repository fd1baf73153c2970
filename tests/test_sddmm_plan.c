/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM plans on the CPU: a plan built from a copy of S (freed and
 * overwritten before the runs: the plan keeps its own), then several runs
 * with new A and B into NaN-poisoned outputs, each checked against the
 * float64 reference (<= 1e-12 of every entry's rounding scale in fp64,
 * <= 1e-5 in fp32) and equal, bit for bit, to the one-shot tf_sddmm with
 * the same options (the same kernel); fp64 and fp32 plans, both ops,
 * alpha / beta, K = 1, 7, 33, 100; float operands and output on fp32
 * plans, and rows padded to ld > K with NaN in the padding. Then the bad
 * inputs: every wrong shape, precision, memory and NULL, K = 0, a NULL plan,
 * a plan after free (debug builds), each a one-line TF_ERR_ARG naming what
 * was wrong, with the plan still usable afterwards. A CPU plan is one panel
 * (tf_sddmm_plan_panel), and runs from ro->parts with one part. */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "sddmm_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* The plan's runs over `runs` fresh pairs A, B; A and B (and P) as `prec`
 * arrays with rows `pad` values longer than K. */
static void check_runs(const char *what, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_rng *rng,
                       tf_precision arr_prec, uint64_t pad, int runs)
{
    tf_sddmm_plan *plan = st_plan_from_copy(what, S, K, o);
    if (!plan) return;
    tf_status s;
    tf_sddmm_info info;
    CHECK_OK(tf_sddmm_plan_info(plan, &info));
    CHECK(info.backend == TF_BACKEND_CPU);
    const double tol = o->precision == TF_DOUBLE ? 1e-12 : 1e-5;
    double *P = NULL, *ref = NULL, *one = NULL;
    double *Praw = NULL; /* P as arrays of arr_prec (room for doubles) */
    CHECK_OK(TF_ALLOC(P, S->nnz + 1, "P"));
    CHECK_OK(TF_ALLOC(ref, S->nnz + 1, "ref"));
    CHECK_OK(TF_ALLOC(one, S->nnz + 1, "one-shot P"));
    CHECK_OK(TF_ALLOC(Praw, S->nnz + 1, "P as arrays"));
    for (int r = 0; r < runs; ++r) {
        tf_matrix A = tt_random_dense(rng, S->rows, K), B = tt_random_dense(rng, S->cols, K);
        void *a = dt_host_values(&A, K + pad, arr_prec), *b = dt_host_values(&B, S->cols ? K + pad : K, arr_prec);
        const tf_dense da = dt_dense(a, S->rows, K, K + pad, arr_prec, TF_MEMORY_AUTO);
        const tf_dense db = dt_dense(b, S->cols, K, K + pad, arr_prec, TF_MEMORY_HOST);
        const tf_dense dp = dt_dense(Praw, S->nnz, 1, 0, arr_prec, TF_MEMORY_AUTO);
        dt_poison_as(Praw, arr_prec, S->nnz);
        s = tf_sddmm_plan_run(plan, &da, &db, &dp, NULL);
        CHECKF(s == TF_OK, "%s run %d: %s", what, r, tf_last_error());
        dt_doubles(Praw, arr_prec, S->nnz, P);
        CHECK_OK(tf_sddmm_reference(S, &A, &B, o->op, o->alpha, o->beta, ref));
        const double err = st_max_err(S, &A, &B, o, P, ref);
        CHECKF(err <= tol, "%s run %d: K=%llu prec=%d arrays=%d pad=%llu op=%d alpha=%g beta=%g: error %.3g > %.1g",
               what, r, (unsigned long long)K, (int)o->precision, (int)arr_prec, (unsigned long long)pad, (int)o->op,
               o->alpha, o->beta, err, tol);
        if (arr_prec == TF_DOUBLE) { /* the one-shot call runs the same kernel on the same values */
            st_poison(one, S->nnz);
            CHECK_OK(tf_sddmm(S, &A, &B, o, one, NULL));
            CHECKF(!memcmp(one, P, S->nnz * sizeof *P), "%s run %d: plan and one-shot differ", what, r);
        }
        tf_free(a);
        tf_free(b);
        tf_matrix_free(&A);
        tf_matrix_free(&B);
    }
    double t[3];
    tf_matrix A = tt_random_dense(rng, S->rows, K), B = tt_random_dense(rng, S->cols, K);
    const tf_dense da = tf_dense_host(&A), db = tf_dense_host(&B);
    CHECK_OK(tf_sddmm_plan_time(plan, &da, &db, 1, 3, t));
    CHECK(t[0] >= 0 && t[1] >= 0 && t[2] >= 0);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_free(P);
    tf_free(ref);
    tf_free(one);
    tf_free(Praw);
    tf_sddmm_plan_free(plan);
}

static void random_cases(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4501);
    const struct { uint64_t M, N, nnz; int hot; } shapes[] = {
        {1, 1, 1, 0}, {7, 3, 12, 0}, {300, 200, 4000, 1}, {1000, 37, 6000, 1}};
    const uint64_t Ks[] = {1, 7, 33, 100};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        tf_csr S = st_random_csr(&rng, shapes[si].M, shapes[si].N, shapes[si].nnz, shapes[si].hot);
        for (size_t ki = 0; ki < COUNT(Ks); ++ki) {
            tf_sddmm_opts o;
            tf_sddmm_opts_default(&o);
            o.backend = TF_BACKEND_CPU;
            o.threads = 1 + (int)(ki % 3);
            check_runs("fp64", &S, Ks[ki], &o, &rng, TF_DOUBLE, 0, 3);
            check_runs("fp64 padded rows", &S, Ks[ki], &o, &rng, TF_DOUBLE, 3, 2);
            o.op = TF_SDDMM_SCALE;
            o.alpha = -1.5;
            o.beta = 0.75;
            check_runs("fp64 scale", &S, Ks[ki], &o, &rng, TF_DOUBLE, 0, 2);
            o.precision = TF_SINGLE;
            check_runs("fp32, double arrays", &S, Ks[ki], &o, &rng, TF_DOUBLE, 0, 3);
            check_runs("fp32, float arrays", &S, Ks[ki], &o, &rng, TF_SINGLE, 0, 2);
            o.op = TF_SDDMM_SAMPLE;
            check_runs("fp32, padded float arrays", &S, Ks[ki], &o, &rng, TF_SINGLE, 5, 2);
            o.precision = TF_DOUBLE;
            o.algo = TF_SDDMM_ALGO_REFERENCE;
            check_runs("reference", &S, Ks[ki], &o, &rng, TF_DOUBLE, 0, 1);
        }
        tf_csr_free(&S);
    }
}


static void bad_inputs(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4502);
    tf_csr S = st_random_csr(&rng, 10, 8, 30, 0);
    const uint64_t K = 3;
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    tf_sddmm_plan *plan = (tf_sddmm_plan *)&o; /* set to NULL by a failed build */
    CHECK_FAILS(tf_sddmm_plan_build(&S, 0, &o, &plan), TF_ERR_ARG, "K = 0");
    CHECK(plan == NULL);
    CHECK_FAILS(tf_sddmm_plan_build(NULL, K, &o, &plan), TF_ERR_ARG, "S is NULL");
    CHECK_FAILS(tf_sddmm_plan_build(&S, K, &o, NULL), TF_ERR_ARG, "out is NULL");
    o.precision = (tf_precision)7;
    CHECK_FAILS(tf_sddmm_plan_build(&S, K, &o, &plan), TF_ERR_ARG, "unknown precision 7");
    o.precision = TF_DOUBLE;
    o.algo = TF_SDDMM_ALGO_ROW; /* a GPU scheme on the CPU backend */
    CHECK_FAILS(tf_sddmm_plan_build(&S, K, &o, &plan), TF_ERR_ARG, "runs on the GPU");
    o.algo = TF_SDDMM_ALGO_AUTO;
    S.rowptr[1] = 99; /* not monotone */
    CHECK(tf_sddmm_plan_build(&S, K, &o, &plan) == TF_ERR_ARG);
    S.rowptr[1] = S.rowptr[0];
    CHECK_OK(tf_csr_validate(&S)); /* row 0 is empty (tt_draw_sparse_index) */
    CHECK_OK(tf_sddmm_plan_build(&S, K, NULL, &plan)); /* NULL options: the defaults */
    tf_sddmm_plan_free(plan);
    CHECK_OK(tf_sddmm_plan_build(&S, K, &o, &plan));

    tf_matrix A = tt_random_dense(&rng, S.rows, K), B = tt_random_dense(&rng, S.cols, K);
    tf_matrix A4 = tt_random_dense(&rng, S.rows, K + 1), A9 = tt_random_dense(&rng, S.rows - 1, K);
    double P[64];
    float Pf[64], Af[64];
    tf_dense a = tf_dense_host(&A), b = tf_dense_host(&B), p = dt_dense(P, S.nnz, 1, 0, TF_DOUBLE, TF_MEMORY_AUTO);
    const tf_dense a4 = tf_dense_host(&A4), a9 = tf_dense_host(&A9);
    CHECK_FAILS(tf_sddmm_plan_run(NULL, &a, &b, &p, NULL), TF_ERR_ARG, "the plan is NULL");
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a9, &b, &p, NULL), TF_ERR_ARG, "A has 9 rows, expected 10 (the rows of S)");
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a4, &b, &p, NULL), TF_ERR_ARG, "A has 4 columns, expected 3 (the plan's K)");
    CHECK_FAILS(tf_sddmm_plan_run(plan, &b, &b, &p, NULL), TF_ERR_ARG, "A has 8 rows");
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &a, &p, NULL), TF_ERR_ARG, "B has 10 rows, expected 8 (the columns of S)");
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, &b, &p, NULL), TF_ERR_ARG, "A is NULL");
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, NULL, NULL), TF_ERR_ARG, "P is NULL");
    tf_dense x = p;
    x.rows = S.nnz - 1;
    char want[96];
    snprintf(want, sizeof want, "P has %llu rows, expected %llu (the non-zeros of S)", (unsigned long long)S.nnz - 1,
             (unsigned long long)S.nnz);
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, want);
    x = p;
    x.cols = 2;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, "P has 2 columns");
    x = p;
    x.ld = 4;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, "contiguous");
    x = p;
    x.data = NULL;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, "P has no data");
    x = a;
    x.ld = 2;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &x, &b, &p, NULL), TF_ERR_ARG, "A has ld 2 < its 3 columns");
    x = a;
    x.ld = UINT64_MAX / 4;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &x, &b, &p, NULL), TF_ERR_RANGE, "overflows");
    x = a;
    x.data = Af; /* floats on a double plan */
    x.precision = TF_SINGLE;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &x, &b, &p, NULL), TF_ERR_ARG, "A holds floats; this plan computes in double");
    x = p;
    x.data = Pf;
    x.precision = TF_SINGLE;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, "P holds floats");
    x = b;
    x.precision = (tf_precision)3;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &x, &p, NULL), TF_ERR_ARG, "B has unknown precision 3");
    x = b;
    x.memory = (tf_memory)9;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &x, &p, NULL), TF_ERR_ARG, "B has unknown memory 9");
    x = a;
    x.memory = TF_MEMORY_DEVICE; /* a CPU plan reads host memory only */
    CHECK_FAILS(tf_sddmm_plan_run(plan, &x, &b, &p, NULL), TF_ERR_ARG, "A is GPU memory; this plan runs on the CPU");
    x = p;
    x.memory = TF_MEMORY_DEVICE;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &x, NULL), TF_ERR_ARG, "P is GPU memory");
    double t[2];
    CHECK_FAILS(tf_sddmm_plan_time(plan, &a, &b, 0, 0, t), TF_ERR_ARG, "reps >= 1");
    CHECK_FAILS(tf_sddmm_plan_time(plan, &a4, &b, 0, 2, t), TF_ERR_ARG, "A has 4 columns");
    CHECK_FAILS(tf_sddmm_plan_info(plan, NULL), TF_ERR_ARG, "info is NULL");
    CHECK_FAILS(tf_sddmm_plan_info(NULL, NULL), TF_ERR_ARG, "the plan is NULL");
    /* after all that, the plan still runs right */
    double ref[64];
    st_poison(P, S.nnz);
    CHECK_OK(tf_sddmm_plan_run(plan, &a, &b, &p, NULL));
    CHECK_OK(tf_sddmm_reference(&S, &A, &B, o.op, o.alpha, o.beta, ref));
    CHECK(st_max_err(&S, &A, &B, &o, P, ref) <= 1e-12);
    tf_sddmm_plan_free(plan);
#ifndef NDEBUG
    /* Debug builds keep freed plans' headers: a run after free is an error,
     * not a read of freed memory (release builds read it: undefined). */
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &p, NULL), TF_ERR_ARG, "the plan was freed");
    CHECK_FAILS(tf_sddmm_plan_time(plan, &a, &b, 0, 1, t), TF_ERR_ARG, "the plan was freed");
    tf_sddmm_plan_free(plan); /* a second free does nothing */
#endif
    tf_sddmm_plan_free(NULL);

    /* nnz = 0: a plan that runs nothing; P may have no data */
    tf_csr E;
    CHECK_OK(tf_csr_alloc(&E, 10, 8, 0));
    CHECK_OK(tf_sddmm_plan_build(&E, K, &o, &plan));
    x = p;
    x.rows = 0;
    x.data = NULL;
    CHECK_OK(tf_sddmm_plan_run(plan, &a, &b, &x, NULL));
    snprintf(want, sizeof want, "P has %llu rows, expected 0", (unsigned long long)S.nnz);
    CHECK_FAILS(tf_sddmm_plan_run(plan, &a, &b, &p, NULL), TF_ERR_ARG, want);
    CHECK_OK(tf_sddmm_plan_time(plan, &a, &b, 0, 2, t));
    CHECK(t[0] == 0.0 && t[1] == 0.0);
    tf_sddmm_plan_free(plan);
    tf_csr_free(&E);

    /* without a GPU, a GPU plan says so */
    if (tf_gpu_count() == 0) {
        o.backend = TF_BACKEND_GPU;
        plan = (tf_sddmm_plan *)&o;
        const tf_status s = tf_sddmm_plan_build(&S, K, &o, &plan);
        CHECKF(s == TF_ERR_UNAVAILABLE || s == TF_ERR_DEVICE, "GPU plan without a GPU gave %s", tf_status_name(s));
        CHECK(plan == NULL);
        o.backend = TF_BACKEND_AUTO; /* auto: on the CPU */
        CHECK_OK(tf_sddmm_plan_build(&S, K, &o, &plan));
        tf_sddmm_info info;
        CHECK_OK(tf_sddmm_plan_info(plan, &info));
        CHECK(info.backend == TF_BACKEND_CPU);
        tf_sddmm_plan_free(plan);
    }
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_matrix_free(&A4);
    tf_matrix_free(&A9);
    tf_csr_free(&S);
}

/* A plan on the CPU is one panel, all of S: tf_sddmm_plan_panel says so,
 * ro->parts with one part (A and P the panel's, which are all of them)
 * runs as A, B and P do, tf_sddmm_plan_time_panels gives the panel's time;
 * a wrong nparts, parts beside A, or a panel past the last are errors. */
static void one_panel(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 4711);
    tf_csr S = st_random_csr(&rng, 70, 40, 600, 1);
    const uint64_t K = 5;
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    tf_sddmm_plan *plan = NULL;
    CHECK_OK(tf_sddmm_plan_build(&S, K, &o, &plan));
    tf_sddmm_info info;
    CHECK_OK(tf_sddmm_plan_info(plan, &info));
    CHECK(info.panels == 1);
    tf_sddmm_panel q;
    CHECK_OK(tf_sddmm_plan_panel(plan, 0, &q));
    CHECK(q.device == -1 && q.row_lo == 0 && q.row_hi == S.rows && q.nnz_lo == 0 && q.nnz_hi == S.nnz &&
          q.build_ms >= 0.0);
    CHECK_FAILS(tf_sddmm_plan_panel(plan, 1, &q), TF_ERR_ARG, "panel 1 of a plan of 1 panel");
    tf_matrix A = tt_random_dense(&rng, S.rows, K), B = tt_random_dense(&rng, S.cols, K);
    double *P = NULL, *ref = NULL;
    CHECK_OK(TF_ALLOC(P, S.nnz, "P"));
    CHECK_OK(TF_ALLOC(ref, S.nnz, "ref"));
    CHECK_OK(tf_sddmm_reference(&S, &A, &B, o.op, o.alpha, o.beta, ref));
    tf_sddmm_part_operands part = {tf_dense_host(&A), tf_dense_host(&B),
                                   dt_dense(P, S.nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST)};
    tf_sddmm_run_opts ro = {NULL, &part, 1};
    st_poison(P, S.nnz);
    CHECK_OK(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro));
    CHECK(st_max_err(&S, &A, &B, &o, P, ref) <= 1e-12);
    double t[2], pt[2];
    CHECK_OK(tf_sddmm_plan_time_panels(plan, NULL, NULL, &ro, 0, 2, t, pt));
    CHECK(t[0] >= 0 && pt[0] == t[0] && pt[1] == t[1]);
    ro.nparts = 2;
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "ro->nparts is 2; the plan has 1 panel");
    ro.nparts = 1;
    CHECK_FAILS(tf_sddmm_plan_run(plan, &part.A, NULL, NULL, &ro), TF_ERR_ARG, "not both");
    part.A.rows = 3;
    CHECK_FAILS(tf_sddmm_plan_run(plan, NULL, NULL, NULL, &ro), TF_ERR_ARG, "parts[0].A has 3 rows, expected 70");
    CHECK(!strcmp(tf_sddmm_algo_name(TF_SDDMM_ALGO_SM_L2), "sm-l2") &&
          !strcmp(tf_sddmm_algo_name((tf_sddmm_algo)99), "unknown"));
    tf_free(P);
    tf_free(ref);
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_sddmm_plan_free(plan);
    tf_csr_free(&S);
}

/* tf_sddmm_plan_build_once on the CPU: the same plan as tf_sddmm_plan_build
 * (P bit for bit the one-shot's), and its argument errors. */
static void build_once(void)
{
    tf_rng rng;
    tf_rng_seed(&rng, 6704);
    tf_csr S = st_random_csr(&rng, 50, 40, 700, 1);
    const uint64_t K = 7, nnz = S.nnz;
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    tf_sddmm_plan *plan = NULL;
    CHECK_OK(tf_sddmm_plan_build_once(&S, K, &o, &plan));
    tf_matrix A = tt_random_dense(&rng, S.rows, K), B = tt_random_dense(&rng, S.cols, K);
    double *P = NULL, *one = NULL;
    CHECK_OK(TF_ALLOC(P, nnz, "P"));
    CHECK_OK(TF_ALLOC(one, nnz, "one-shot P"));
    st_poison(P, nnz);
    const tf_dense a = tf_dense_host(&A), b = tf_dense_host(&B);
    const tf_dense p = {P, nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    CHECK_OK(tf_sddmm_plan_run(plan, &a, &b, &p, NULL));
    CHECK_OK(tf_sddmm(&S, &A, &B, &o, one, NULL));
    CHECK(memcmp(P, one, nnz * sizeof *P) == 0);
    tf_sddmm_plan_free(plan);
    CHECK(tf_sddmm_plan_build_once(&S, K, &o, NULL) == TF_ERR_ARG);
    CHECK(strstr(tf_last_error(), "tf_sddmm_plan_build_once") != NULL);
    CHECK(tf_sddmm_plan_build_once(NULL, K, &o, &plan) == TF_ERR_ARG && plan == NULL);
    CHECK(tf_sddmm_plan_build_once(&S, 0, &o, &plan) == TF_ERR_ARG && plan == NULL);
    tf_free(P), tf_free(one);
    tf_matrix_free(&A), tf_matrix_free(&B);
    tf_csr_free(&S);
}

int main(void)
{
    build_once();
    random_cases();
    bad_inputs();
    one_panel();
    return tf_test_finish("test_sddmm_plan");
}
