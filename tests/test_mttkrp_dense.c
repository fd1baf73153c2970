/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_plan_mttkrp_dense on CPU plans (csf, coo), every mode of random
 * tensors of orders 2-4 at ranks 1, 5 and 16, each result in an output
 * poisoned with NaN: host doubles with ld = R (bit-equal to
 * tf_plan_mttkrp), factors and out with rows padded past R (NaN in the
 * padding, which must stay NaN) as doubles and as floats (against the
 * reference of the float-rounded factors). Then the bad inputs, each a
 * one-line TF_ERR_ARG naming the array: mode, NULLs, rank 0, wrong rows
 * and columns, unknown precision and memory, ld < cols, no data, GPU
 * memory on a CPU plan -- the plan still right afterwards; factors[mode]
 * is not looked at. */
#include <stdio.h>
#include <string.h>

#include "dense_test_util.h"
#include "gpu_test_tensors.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static tf_plan *cpu_plan(const tf_tensor *X, tf_format fmt)
{
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.format = fmt;
    tf_plan *p = NULL;
    CHECK_OK(tf_plan_build(X, &o, &p));
    return p;
}

/* One run with every factor and out as `prec` values, rows ld apart
 * (NaN padding), checked against ref to tol. */
static void run_layout(tf_plan *p, const tf_tensor *X, uint32_t mode, const tf_matrix *F, const tf_matrix *ref,
                       uint64_t pad, tf_precision prec, double tol, const char *what)
{
    const uint64_t R = ref->cols, ld = R + pad, rows = X->dims[mode];
    const size_t w = prec == TF_SINGLE ? 4 : 8;
    void *host[TF_MAX_ORDER] = {NULL};
    tf_dense D[TF_MAX_ORDER];
    memset(D, 0, sizeof D);
    for (uint32_t m = 0; m < X->order; ++m) {
        if (m == mode) continue; /* not read: left zeroed */
        host[m] = dt_host_values(&F[m], ld, prec);
        D[m] = dt_dense(host[m], X->dims[m], R, ld, prec, m % 2 ? TF_MEMORY_HOST : TF_MEMORY_AUTO);
    }
    void *o = NULL;
    double *got = NULL;
    CHECK_OK(tf_alloc(&o, rows * ld + 1, w, "out"));
    CHECK_OK(TF_ALLOC(got, rows * R + 1, "out as doubles"));
    dt_poison_as(o, prec, rows * ld);
    const tf_dense out = dt_dense(o, rows, R, ld, prec, TF_MEMORY_AUTO);
    CHECK_OK(tf_plan_mttkrp_dense(p, mode, D, &out, NULL));
    const int pad_ok = dt_gather(o, rows, R, ld, prec, got);
    const double err = tf_rel_err(got, ref->data, rows * R);
    CHECKF(pad_ok && err <= tol, "%s [%s] mode %u R=%llu ld=%llu %s: rel err %.3g%s", what, tf_plan_describe(p),
           mode + 1, (unsigned long long)R, (unsigned long long)ld, prec == TF_SINGLE ? "floats" : "doubles", err,
           pad_ok ? "" : ", padding written");
    for (uint32_t m = 0; m < X->order; ++m) tf_free(host[m]);
    tf_free(o);
    tf_free(got);
}

static void host_cases(void)
{
    const uint64_t dims[][4] = {{40, 30, 0, 0}, {12, 9, 7, 0}, {6, 5, 4, 8}};
    const uint32_t orders[] = {2, 3, 4};
    const uint64_t ranks[] = {1, 5, 16};
    const tf_format fmts[] = {TF_FORMAT_CSF, TF_FORMAT_COO};
    for (size_t t = 0; t < COUNT(orders); ++t) {
        tt_spec sp = tt_spec_make(orders[t], dims[t], 300, 7100 + t);
        tf_tensor X;
        CHECK_OK(tt_random(&sp, &X));
        for (size_t ri = 0; ri < COUNT(ranks); ++ri) {
            const uint64_t R = ranks[ri];
            tf_matrix F[TF_MAX_ORDER], F32[TF_MAX_ORDER];
            memset(F, 0, sizeof F);
            memset(F32, 0, sizeof F32);
            CHECK_OK(tt_factors(&X, R, 7200 + R, F));
            for (uint32_t m = 0; m < X.order; ++m) { /* the factors as floats hold them */
                CHECK_OK(tf_matrix_alloc(&F32[m], F[m].rows, R));
                for (uint64_t k = 0; k < F[m].rows * R; ++k) F32[m].data[k] = (double)(float)F[m].data[k];
            }
            for (size_t fi = 0; fi < COUNT(fmts); ++fi) {
                tf_plan *p = cpu_plan(&X, fmts[fi]);
                for (uint32_t mode = 0; mode < X.order; ++mode) {
                    tf_matrix ref, ref32, plain, dense_out;
                    CHECK_OK(tf_matrix_alloc(&ref, X.dims[mode], R));
                    CHECK_OK(tf_matrix_alloc(&ref32, X.dims[mode], R));
                    CHECK_OK(tf_matrix_alloc(&plain, X.dims[mode], R));
                    CHECK_OK(tf_matrix_alloc(&dense_out, X.dims[mode], R));
                    CHECK_OK(tf_mttkrp_reference(&X, mode, F, &ref));
                    CHECK_OK(tf_mttkrp_reference(&X, mode, F32, &ref32));
                    /* host doubles, ld = R: what tf_plan_mttkrp gives, bit for bit */
                    CHECK_OK(tf_plan_mttkrp(p, mode, F, &plain));
                    tf_dense D[TF_MAX_ORDER];
                    for (uint32_t m = 0; m < X.order; ++m) D[m] = tf_dense_host(&F[m]);
                    const tf_dense out = tf_dense_host(&dense_out);
                    dt_poison_as(dense_out.data, TF_DOUBLE, X.dims[mode] * R);
                    CHECK_OK(tf_plan_mttkrp_dense(p, mode, D, &out, NULL));
                    CHECKF(!memcmp(plain.data, dense_out.data, X.dims[mode] * R * 8),
                           "order %u mode %u R=%llu: dense and matrix paths differ", X.order, mode + 1,
                           (unsigned long long)R);
                    run_layout(p, &X, mode, F, &ref, 3, TF_DOUBLE, 1e-12, "padded doubles");
                    run_layout(p, &X, mode, F32, &ref32, 2, TF_SINGLE, 1e-6, "padded floats");
                    run_layout(p, &X, mode, F32, &ref32, 0, TF_SINGLE, 1e-6, "floats");
                    tf_matrix_free(&ref);
                    tf_matrix_free(&ref32);
                    tf_matrix_free(&plain);
                    tf_matrix_free(&dense_out);
                }
                tf_plan_free(p);
            }
            tt_free_factors(F, X.order);
            tt_free_factors(F32, X.order);
        }
        tf_tensor_free(&X);
    }
}

static void bad_inputs(void)
{
    const uint64_t dims[3] = {12, 9, 7}, R = 5;
    tf_tensor X;
    tf_matrix F[TF_MAX_ORDER], out, ref;
    CHECK_OK(tt_case3(dims, 150, 7300, R, &X, F));
    CHECK_OK(tf_matrix_alloc(&out, 12, R));
    CHECK_OK(tf_matrix_alloc(&ref, 12, R));
    tf_plan *p = cpu_plan(&X, TF_FORMAT_CSF);
    tf_dense D[3] = {tf_dense_host(&F[0]), tf_dense_host(&F[1]), tf_dense_host(&F[2])};
    const tf_dense o = tf_dense_host(&out);
    tf_dense x;
    CHECK_FAILS(tf_plan_mttkrp_dense(NULL, 0, D, &o, NULL), TF_ERR_ARG, "tf_plan_mttkrp_dense: no plan");
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 3, D, &o, NULL), TF_ERR_ARG, "mode 4 is outside 1..3");
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, NULL, &o, NULL), TF_ERR_ARG, "factors or out is NULL");
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, NULL, NULL), TF_ERR_ARG, "factors or out is NULL");
    x = o;
    x.cols = 0;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &x, NULL), TF_ERR_ARG, "out has 0 columns");
    x.cols = R;
    x.rows = 11;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &x, NULL), TF_ERR_ARG, "out has 11 rows, expected 12");
    D[1].rows = 8;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG, "factor 2 has 8 rows, expected 9");
    D[1] = tf_dense_host(&F[1]);
    D[2].cols = 4;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG, "factor 3 has 4 columns, expected 5");
    D[2] = tf_dense_host(&F[2]);
    D[1].precision = (tf_precision)7;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG, "factor 2 has unknown precision 7");
    D[1] = tf_dense_host(&F[1]);
    D[1].memory = (tf_memory)9;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG, "factor 2 has unknown memory 9");
    D[1] = tf_dense_host(&F[1]);
    D[1].ld = 3;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG, "factor 2 has ld 3 < its 5 columns");
    D[1] = tf_dense_host(&F[1]);
    D[2].data = NULL;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG, "factor 3 has no data");
    D[2] = tf_dense_host(&F[2]);
    D[1].memory = TF_MEMORY_DEVICE;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &o, NULL), TF_ERR_ARG,
                "factor 2 is GPU memory; this plan runs on the CPU");
    D[1] = tf_dense_host(&F[1]);
    x = o;
    x.memory = TF_MEMORY_DEVICE;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &x, NULL), TF_ERR_ARG, "out is GPU memory; this plan runs on the CPU");
    /* factors[mode] is not read: anything goes there; the plan is still right */
    D[0].data = NULL;
    D[0].rows = 1234;
    D[0].precision = (tf_precision)9;
    dt_poison_as(out.data, TF_DOUBLE, 12 * R);
    CHECK_OK(tf_plan_mttkrp_dense(p, 0, D, &o, NULL));
    CHECK_OK(tf_mttkrp_reference(&X, 0, F, &ref));
    CHECK(tf_rel_err(out.data, ref.data, 12 * R) <= 1e-12);
    tf_plan_free(p);
    tf_matrix_free(&out);
    tf_matrix_free(&ref);
    tt_free_factors(F, 3);
    tf_tensor_free(&X);
}

int main(void)
{
    host_cases();
    bad_inputs();
    return tf_test_finish("test_mttkrp_dense");
}
