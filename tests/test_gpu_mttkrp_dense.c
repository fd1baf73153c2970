/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_plan_mttkrp_dense on GPU plans against the float64 reference
 * (relative error <= 1e-12 in fp64, <= 1e-5 in fp32), every format (coo,
 * fcoo, blco, auto) x fp64 / fp32 x ranks 1, 7, 16, 33 x every mode of a
 * skewed order-3 and an order-4 tensor. Outputs are poisoned with NaN
 * first (on the host, on the device, and by tuning.gpu_poison before every
 * kernel run), padding columns hold NaN and must keep it. Each run: (1)
 * factors and out in GPU memory (cudaMalloc, as a user's program has them)
 * read and written in place; (2) rows padded past R, said to be device
 * memory, out one element off 16-byte alignment, on the caller's own
 * stream (copied on the device); (3) a managed factor, host floats or
 * doubles for the others, a host out. Then the bad inputs, each a one-line
 * TF_ERR_ARG naming the array: GPU arrays of the wrong precision, memory
 * that says host but is GPU memory and the reverse, a misaligned GPU out,
 * GPU arrays on a CPU plan -- the plan still right afterwards.
 * --quick: fewer ranks (for compute-sanitizer). Exits 77 without a GPU. */
#include <stdio.h>
#include <string.h>

#include "dense_test_util.h"
#include "gpu_test_tensors.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static tf_context *ctx; /* the context of the plan built last (gpu_poison on) */

static tf_plan *gpu_plan(const tf_tensor *X, tf_format fmt, tf_precision prec, uint64_t R)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    co.tuning = &tuning;
    co.backend = TF_BACKEND_GPU;
    tuning.gpu_poison = 1;
    tf_context_free(ctx);
    ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    tf_plan *p = NULL;
    CHECK_OK(tt_gpu_plan(X, ctx, fmt, prec, R, &p));
    return p;
}

/* The result at p (GPU memory when gpu; rows ld apart, values of prec)
 * checked against ref to the tolerance of the plan's precision (a host
 * out of doubles from an fp32 plan holds fp32 results); the `tail` values
 * after it (poisoned too) must still be NaN. */
static void check_out(const char *what, tf_plan *p, uint32_t mode, const void *p_out, int gpu, uint64_t ld,
                      tf_precision prec, tf_precision plan_prec, const tf_matrix *ref, uint64_t tail)
{
    const uint64_t rows = ref->rows, R = ref->cols, n = rows * ld + tail;
    const size_t w = prec == TF_SINGLE ? 4 : 8;
    void *h = NULL;
    double *got = NULL, *after = NULL;
    CHECK_OK(tf_alloc(&h, n + 1, w, "out image"));
    CHECK_OK(TF_ALLOC(got, rows * R + 1, "out as doubles"));
    CHECK_OK(TF_ALLOC(after, tail + 1, "after out"));
    if (gpu) CHECK_OK(tf_test_gpu_get(h, p_out, n * w));
    else memcpy(h, p_out, n * w);
    dt_doubles((const unsigned char *)h + rows * ld * w, prec, tail, after);
    int pad_ok = dt_gather(h, rows, R, ld, prec, got);
    for (uint64_t k = 0; k < tail; ++k) pad_ok &= isnan(after[k]) != 0;
    tf_free(after);
    const double err = tf_rel_err(got, ref->data, rows * R);
    const double tol = plan_prec == TF_SINGLE ? 1e-5 : 1e-12;
    CHECKF(pad_ok && err <= tol, "%s [%s] mode %u R=%llu: rel err %.3g (tol %.0e)%s", what, tf_plan_describe(p),
           mode + 1, (unsigned long long)R, err, tol, pad_ok ? "" : ", padding or what follows written");
    tf_free(h);
    tf_free(got);
}

/* Every mode of X on plan p (precision pr) at rank R with factors F. */
static void check_plan(tf_plan *p, const tf_tensor *X, const tf_matrix *F, uint64_t R, tf_precision pr, void *stream)
{
    const size_t w = pr == TF_SINGLE ? 4 : 8;
    const uint32_t N = X->order;
    const uint64_t ld = R + 3;
    uint64_t maxdim = 0;
    for (uint32_t m = 0; m < N; ++m) maxdim = X->dims[m] > maxdim ? X->dims[m] : maxdim;
    dt_gpu_arr dF[TF_MAX_ORDER], dO = dt_gpu_new((maxdim * ld + 1) * w, TF_TEST_DEVICE);
    dt_gpu_arr mF = dt_gpu_new(maxdim * R * w, TF_TEST_MANAGED);
    for (uint32_t m = 0; m < N; ++m) dF[m] = dt_gpu_new((X->dims[m] * ld + 1) * w, TF_TEST_DEVICE);
    for (uint32_t mode = 0; mode < N; ++mode) {
        const uint64_t rows = X->dims[mode];
        tf_matrix ref;
        CHECK_OK(tf_matrix_alloc(&ref, rows, R));
        CHECK_OK(tf_mttkrp_reference(X, mode, F, &ref));
        tf_dense D[TF_MAX_ORDER];
        memset(D, 0, sizeof D);
        /* (1) GPU arrays in the kernels' layout, read and written in place */
        for (uint32_t m = 0; m < N; ++m) {
            if (m == mode) continue;
            dt_gpu_put(&dF[m], &F[m], R, pr, 0);
            D[m] = dt_dense(dF[m].data, X->dims[m], R, R, pr, TF_MEMORY_AUTO);
        }
        dO.data = dO.base;
        CHECK_OK(tf_test_gpu_fill(dO.data, 0xff, rows * ld * w));
        tf_dense out = dt_dense(dO.data, rows, R, R, pr, TF_MEMORY_DEVICE);
        CHECK_OK(tf_plan_mttkrp_dense(p, mode, D, &out, NULL));
        check_out("GPU arrays in place", p, mode, dO.data, 1, R, pr, pr, &ref, rows * 3); /* nothing past rows x R */
        /* (2) padded rows (NaN), out misaligned, the caller's stream */
        for (uint32_t m = 0; m < N; ++m) {
            if (m == mode) continue;
            dt_gpu_put(&dF[m], &F[m], ld, pr, 0);
            D[m] = dt_dense(dF[m].data, X->dims[m], R, ld, pr, TF_MEMORY_DEVICE);
        }
        CHECK_OK(tf_test_gpu_fill(dO.base, 0xff, (rows * ld + 1) * w));
        dO.data = dO.base + w;
        out = dt_dense(dO.data, rows, R, ld, pr, TF_MEMORY_AUTO);
        const tf_mttkrp_run_opts ro = {stream};
        CHECK_OK(tf_plan_mttkrp_dense(p, mode, D, &out, &ro));
        CHECK_OK(tf_test_gpu_stream_wait(stream));
        check_out("padded GPU arrays, misaligned out, own stream", p, mode, dO.data, 1, ld, pr, pr, &ref, 0);
        /* (3) the first factor read managed, the others host (plan's precision), out on the host */
        void *host[TF_MAX_ORDER] = {NULL};
        int managed_done = 0;
        for (uint32_t m = 0; m < N; ++m) {
            if (m == mode) continue;
            if (!managed_done) {
                dt_gpu_put(&mF, &F[m], R, pr, 0);
                D[m] = dt_dense(mF.data, X->dims[m], R, R, pr, TF_MEMORY_AUTO);
                managed_done = 1;
                continue;
            }
            host[m] = dt_host_values(&F[m], m % 2 ? R + 1 : R, pr);
            D[m] = dt_dense(host[m], X->dims[m], R, m % 2 ? R + 1 : R, pr, TF_MEMORY_HOST);
        }
        void *ho = dt_host_values(&ref, ld, TF_DOUBLE);
        dt_poison_as(ho, TF_DOUBLE, rows * ld);
        out = dt_dense(ho, rows, R, ld, TF_DOUBLE, TF_MEMORY_AUTO);
        CHECK_OK(tf_plan_mttkrp_dense(p, mode, D, &out, NULL));
        check_out("managed + host factors, host out", p, mode, ho, 0, ld, TF_DOUBLE, pr, &ref, 0);
        tf_free(ho);
        for (uint32_t m = 0; m < N; ++m) tf_free(host[m]);
        tf_matrix_free(&ref);
    }
    for (uint32_t m = 0; m < N; ++m) dt_gpu_del(&dF[m]);
    dt_gpu_del(&dO);
    dt_gpu_del(&mF);
}

static void random_cases(int quick)
{
    const uint64_t d3[] = {300, 40, 9}, d4[] = {20, 33, 7, 50};
    tt_spec specs[2] = {tt_spec_make(3, d3, 6000, 7400), tt_spec_make(4, d4, 3000, 7401)};
    specs[0].hot_mode = 0; /* skewed: one row takes a third */
    specs[0].hot_row = 17;
    specs[0].hot_share = 0.33;
    const uint64_t ranks[] = {1, 7, 16, 33};
    const tf_format fmts[] = {TF_FORMAT_COO, TF_FORMAT_FCOO, TF_FORMAT_BLCO, TF_FORMAT_AUTO};
    void *stream = NULL;
    CHECK_OK(tf_test_gpu_stream(&stream));
    for (size_t t = 0; t < COUNT(specs); ++t) {
        tf_tensor X;
        CHECK_OK(tt_random(&specs[t], &X));
        for (size_t ri = 0; ri < COUNT(ranks); ++ri) {
            if (quick && (ranks[ri] == 1 || ranks[ri] == 33)) continue;
            tf_matrix F[TF_MAX_ORDER];
            memset(F, 0, sizeof F);
            CHECK_OK(tt_factors(&X, ranks[ri], 7500 + ranks[ri], F));
            for (size_t fi = 0; fi < COUNT(fmts); ++fi)
                for (int prec = 0; prec < 2; ++prec) {
                    tf_plan *p = gpu_plan(&X, fmts[fi], (tf_precision)prec, ranks[ri]);
                    if (!p) continue;
                    check_plan(p, &X, F, ranks[ri], (tf_precision)prec, stream);
                    tf_plan_free(p);
                }
            tt_free_factors(F, X.order);
        }
        tf_tensor_free(&X);
    }
    tf_test_gpu_stream_free(stream);
}

static void bad_inputs(void)
{
    const uint64_t dims[3] = {60, 40, 9}, R = 8;
    tf_tensor X;
    tf_matrix F[TF_MAX_ORDER], ref, hout;
    CHECK_OK(tt_case3(dims, 800, 7600, R, &X, F));
    CHECK_OK(tf_matrix_alloc(&ref, 60, R));
    CHECK_OK(tf_matrix_alloc(&hout, 60, R));
    CHECK_OK(tf_mttkrp_reference(&X, 0, F, &ref));
    tf_plan *p = gpu_plan(&X, TF_FORMAT_AUTO, TF_SINGLE, R);
    dt_gpu_arr f1 = dt_gpu_new(40 * R * 4, TF_TEST_DEVICE), f2 = dt_gpu_new(9 * R * 4, TF_TEST_DEVICE);
    dt_gpu_arr d1 = dt_gpu_new(40 * R * 8, TF_TEST_DEVICE), o = dt_gpu_new(60 * R * 4, TF_TEST_DEVICE);
    dt_gpu_put(&f1, &F[1], R, TF_SINGLE, 0);
    dt_gpu_put(&f2, &F[2], R, TF_SINGLE, 0);
    dt_gpu_put(&d1, &F[1], R, TF_DOUBLE, 0);
    tf_dense D[3] = {{0}, dt_dense(f1.data, 40, R, R, TF_SINGLE, TF_MEMORY_AUTO),
                     dt_dense(f2.data, 9, R, R, TF_SINGLE, TF_MEMORY_AUTO)};
    const tf_dense out = dt_dense(o.data, 60, R, R, TF_SINGLE, TF_MEMORY_AUTO);
    tf_dense x = D[1];
    D[1] = dt_dense(d1.data, 40, R, R, TF_DOUBLE, TF_MEMORY_AUTO); /* doubles for a float plan */
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &out, NULL), TF_ERR_ARG,
                "factor 2 is GPU memory of doubles; this plan computes in float");
    D[1] = x;
    D[1].memory = TF_MEMORY_HOST;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &out, NULL), TF_ERR_ARG,
                "factor 2 is GPU memory, but its memory says TF_MEMORY_HOST");
    D[1] = x;
    const tf_dense hostdev = dt_dense(hout.data, 60, R, R, TF_DOUBLE, TF_MEMORY_DEVICE);
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &hostdev, NULL), TF_ERR_ARG, "out is not GPU memory");
    tf_dense mis = out;
    mis.data = (unsigned char *)o.data + 2;
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &mis, NULL), TF_ERR_ARG, "out (GPU memory) is not aligned");
    /* the plan is still right, and no CUDA error was left behind */
    CHECK_OK(tf_test_gpu_fill(o.data, 0xff, 60 * R * 4));
    CHECK_OK(tf_plan_mttkrp_dense(p, 0, D, &out, NULL));
    check_out("after the errors", p, 0, o.data, 1, R, TF_SINGLE, TF_SINGLE, &ref, 0);
    tf_plan_free(p);
    /* GPU arrays on a CPU plan */
    tf_plan_opts co;
    tf_plan_opts_default(&co);
    co.backend = TF_BACKEND_CPU;
    CHECK_OK(tf_plan_build(&X, &co, &p));
    D[1] = dt_dense(d1.data, 40, R, R, TF_DOUBLE, TF_MEMORY_AUTO);
    const tf_dense ho = tf_dense_host(&hout);
    CHECK_FAILS(tf_plan_mttkrp_dense(p, 0, D, &ho, NULL), TF_ERR_ARG, "factor 2 points to memory of GPU 0");
    tf_plan_free(p);
    dt_gpu_del(&f1);
    dt_gpu_del(&f2);
    dt_gpu_del(&d1);
    dt_gpu_del(&o);
    tf_matrix_free(&ref);
    tf_matrix_free(&hout);
    tt_free_factors(F, 3);
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_mttkrp_dense", "no GPU");
    random_cases(quick);
    bad_inputs();
    tf_context_free(ctx);
    return tf_test_finish("test_gpu_mttkrp_dense");
}
