/* SPDX-License-Identifier: BSD-3-Clause */
/* The model at the non-zeros on the GPU (tf_model_values_ex) against the
 * float64 reference, every value, the output poisoned with NaN first:
 * fresh random tensors of order 2..5 and ranks 1, 7, 32, 100 (with and
 * without lambda), fp64 (<= 1e-12) and fp32 (<= 1e-5, relative to the sum
 * of the terms' magnitudes); the indices uploaded in pieces (a context whose
 * memory limit holds a fraction of them); a limit that holds nothing (GPU:
 * out of memory; auto: the CPU, saying why); no non-zeros; then one real
 * tensor of TF_SHARED_DATA. --quick: the random cases up to rank 32 only.
 * Exits 77 without a GPU. */
#include <string.h>

#include "kt_test_util.h"
#include "realdata.h"
#include "spttm_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

/* Runs on `backend` (context ctx, may be NULL) in precision prec into a
 * poisoned output and compares every value; returns the status. */
static tf_status check_gpu(const char *what, const tf_tensor *X, const tf_ktensor *K, tf_precision prec,
                           tf_backend backend, tf_context *ctx, tf_model_info *info)
{
    double *m = kt_poisoned(X->nnz);
    const tf_model_opts o = {.backend = backend, .precision = prec, .context = ctx, .info = info};
    const tf_status s = tf_model_values_ex(X, K, &o, m);
    if (s == TF_OK) {
        const double tol = prec == TF_SINGLE ? 1e-5 : 1e-12;
        uint64_t bad = 0;
        for (uint64_t j = 0; j < X->nnz; ++j) {
            double mag;
            const double want = kt_ref_model(X, K, j, &mag);
            if (!kt_close(m[j], want, mag, tol) && bad++ < 3)
                CHECKF(0, "%s %s: model value %llu is %.17g, reference %.17g", what,
                       prec == TF_SINGLE ? "fp32" : "fp64", (unsigned long long)j, m[j], want);
        }
        CHECKF(bad == 0, "%s %s: %llu of %llu model values differ", what, prec == TF_SINGLE ? "fp32" : "fp64",
               (unsigned long long)bad, (unsigned long long)X->nnz);
    }
    free(m);
    return s;
}

/* Both precisions on the GPU, which must run them. */
static void check_both(const char *what, const tf_tensor *X, const tf_ktensor *K, tf_context *ctx)
{
    for (int prec = 0; prec < 2; ++prec) {
        tf_model_info info;
        const tf_status s = check_gpu(what, X, K, prec ? TF_SINGLE : TF_DOUBLE, TF_BACKEND_GPU, ctx, &info);
        CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
        CHECKF(s != TF_OK || info.backend == TF_BACKEND_GPU, "%s: ran on backend %d", what, (int)info.backend);
    }
}

/* The random tensors (empty slices included) and ranks. */
static const struct {
    uint32_t order;
    uint64_t dims[5], nnz;
} shapes[] = {{2, {300, 41}, 5000}, {3, {60, 1, 45}, 2000}, {4, {12, 30, 9, 20}, 30000}, {5, {6, 7, 8, 5, 9}, 12000}};
static const uint64_t ranks[] = {1, 7, 32, 100};

static void random_cases(tf_rng *rng, int quick)
{
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        tf_tensor X = sp_random_tensor(rng, shapes[si].order, shapes[si].dims, shapes[si].nnz, -1);
        for (size_t ri = 0; ri < COUNT(ranks) && !(quick && ranks[ri] > 32); ++ri) {
            /* lambda given on every other case */
            tf_ktensor K = kt_random_ktensor(rng, X.order, X.dims, ranks[ri], (int)((si + ri) % 2));
            char what[64];
            snprintf(what, sizeof what, "random order %u R %llu", X.order, (unsigned long long)ranks[ri]);
            check_both(what, &X, &K, NULL);
            tf_ktensor_free(&K);
        }
        tf_tensor_free(&X);
    }
    const uint64_t *d3 = shapes[1].dims;
    /* under auto the GPU is taken when one is present */
    tf_tensor X = sp_random_tensor(rng, 3, d3, 500, -1);
    tf_ktensor K = kt_random_ktensor(rng, 3, d3, 9, 1);
    tf_model_info info;
    CHECK_OK(check_gpu("auto", &X, &K, TF_DOUBLE, TF_BACKEND_AUTO, NULL, &info));
    CHECK(info.backend == TF_BACKEND_GPU && info.note[0] == 0);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
    /* no non-zeros: nothing is written */
    tf_tensor E;
    CHECK_OK(tf_tensor_alloc(&E, 3, d3, 0));
    K = kt_random_ktensor(rng, 3, d3, 4, 1);
    double m = NAN;
    tf_model_opts o;
    tf_model_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    CHECK_OK(tf_model_values_ex(&E, &K, &o, &m));
    CHECK(isnan(m));
    tf_ktensor_free(&K);
    tf_tensor_free(&E);
}

/* A context whose memory limit holds the factors and about 70,000 of the
 * 300,000 non-zeros (five pieces, the last one short); then one that holds
 * nothing. */
static void pieces(tf_rng *rng)
{
    const uint64_t dims[] = {500, 400, 300}, R = 7;
    tf_tensor X = sp_random_tensor(rng, 3, dims, 300000, -1);
    tf_ktensor K = kt_random_ktensor(rng, 3, dims, R, 1);
    for (int prec = 0; prec < 2; ++prec) {
        const uint64_t value = prec ? sizeof(float) : sizeof(double);
        tf_context_opts co;
        tf_context_opts_default(&co);
        co.backend = TF_BACKEND_GPU;
        co.memory_limit = (dims[0] + dims[1] + dims[2] + 1) * R * value + 70000 * (3 * sizeof(uint32_t) + value);
        tf_context *ctx = NULL;
        CHECK_OK(tf_context_create(&co, &ctx));
        tf_model_info info;
        const tf_status s = check_gpu("pieces", &X, &K, prec ? TF_SINGLE : TF_DOUBLE, TF_BACKEND_GPU, ctx, &info);
        CHECKF(s == TF_OK && info.backend == TF_BACKEND_GPU, "pieces: %s", tf_last_error());
        tf_context_free(ctx);
    }
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.memory_limit = 4096;
    tf_context *ctx = NULL;
    CHECK_OK(tf_context_create(&co, &ctx));
    tf_model_info info;
    tf_status s = check_gpu("no room", &X, &K, TF_DOUBLE, TF_BACKEND_GPU, ctx, &info);
    CHECKF(s == TF_ERR_NOMEM && strstr(tf_last_error(), "GPU model values"), "no room on the GPU -> %s \"%s\"",
           tf_status_name(s), tf_last_error());
    s = check_gpu("no room, auto", &X, &K, TF_DOUBLE, TF_BACKEND_AUTO, ctx, &info);
    CHECKF(s == TF_OK && info.backend == TF_BACKEND_CPU && strstr(info.note, "running on the CPU"),
           "no room, auto -> %s, backend %d, note \"%s\"", tf_status_name(s), (int)info.backend, info.note);
    tf_context_free(ctx);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

static void real_tensor(tf_rng *rng)
{
    const char *name = "nycflights13.tns.xz";
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tf_test_data_dir(), name);
    tf_tensor X;
    memset(&X, 0, sizeof X);
    if (tf_read_tensor(path, 0, &X, NULL) != TF_OK) {
        printf("test_gpu_model_values: %s not read (%s): real-data part skipped\n", path, tf_last_error());
        return;
    }
    const uint64_t Rs[] = {16, 100};
    for (size_t ri = 0; ri < COUNT(Rs); ++ri) {
        tf_ktensor K = kt_random_ktensor(rng, X.order, X.dims, Rs[ri], 1);
        char what[96];
        snprintf(what, sizeof what, "%s R %llu", name, (unsigned long long)Rs[ri]);
        check_both(what, &X, &K, NULL);
        tf_ktensor_free(&K);
    }
    printf("%s (%llu non-zeros, order %u): checked\n", name, (unsigned long long)X.nnz, X.order);
    tf_tensor_free(&X);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_model_values", "no GPU");
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_gpu_model_values"));
    random_cases(&rng, quick);
    if (!quick) {
        pieces(&rng);
        real_tensor(&rng);
    }
    return tf_test_finish("test_gpu_model_values");
}
