/* SPDX-License-Identifier: BSD-3-Clause */
/* Kruskal tensor helpers against plain float64 references: tf_model_values
 * (every non-zero, output poisoned with NaN), tf_ktensor_innerprod and
 * tf_ktensor_norm on fresh random tensors of order 2..5 and ranks 1..37
 * (with and without lambda; the same bits on 1 and 3 threads), a hand-made
 * example whose full tensor is known, the bundled uber-apr14 tensor,
 * tf_model_values_ex on the CPU, and the argument errors. */
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "kt_test_util.h"
#include "spttm_test_util.h"
#include "test_random.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static int threads0; /* the default thread count at the start */


/* ||K||^2 from Grams by plain loops, and the sum of the terms' magnitudes. */
static double ref_norm2(const tf_ktensor *K, double *mag)
{
    const uint64_t R = K->rank;
    double q = 0.0, a = 0.0;
    for (uint64_t r = 0; r < R; ++r)
        for (uint64_t s = 0; s < R; ++s) {
            double p = kt_lambda(K, r) * kt_lambda(K, s), pa = fabs(p);
            for (uint32_t n = 0; n < K->order; ++n) {
                double g = 0.0, ga = 0.0;
                for (uint64_t i = 0; i < K->dims[n]; ++i) {
                    const double t = K->factors[n].data[i * R + r] * K->factors[n].data[i * R + s];
                    g += t;
                    ga += fabs(t);
                }
                p *= g;
                pa *= ga;
            }
            q += p;
            a += pa;
        }
    *mag = a;
    return q;
}

static void check_pair(const char *what, const tf_tensor *X, const tf_ktensor *K)
{
    double *m = kt_poisoned(X->nnz);
    CHECK_OK(tf_model_values(X, K, m));
    double dot = 0.0, dmag = 0.0;
    uint64_t bad = 0;
    for (uint64_t j = 0; j < X->nnz; ++j) {
        double mag;
        const double want = kt_ref_model(X, K, j, &mag);
        if (!kt_close(m[j], want, mag, 1e-13) && bad++ < 3)
            CHECKF(0, "%s: model value %llu is %.17g, reference %.17g", what, (unsigned long long)j, m[j], want);
        dot += X->vals[j] * want;
        dmag += fabs(X->vals[j]) * mag;
    }
    CHECKF(bad == 0, "%s: %llu of %llu model values differ", what, (unsigned long long)bad,
           (unsigned long long)X->nnz);
    double ip = NAN, ip1 = NAN, ip3 = NAN;
    CHECK_OK(tf_ktensor_innerprod(X, K, &ip));
    CHECKF(kt_close(ip, dot, dmag, 1e-12), "%s: innerprod %.17g, reference %.17g", what, ip, dot);
    tf_test_set_threads(1);
    CHECK_OK(tf_ktensor_innerprod(X, K, &ip1));
    tf_test_set_threads(3);
    CHECK_OK(tf_ktensor_innerprod(X, K, &ip3));
    tf_test_set_threads(threads0);
    CHECKF(ip1 == ip3 && ip1 == ip, "%s: innerprod on 1 and 3 threads: %.17g, %.17g (default %.17g)", what, ip1, ip3,
           ip);
    double nrm = NAN, nmag;
    const double q = ref_norm2(K, &nmag);
    CHECK_OK(tf_ktensor_norm(K, &nrm));
    CHECKF(kt_close(nrm * nrm, fabs(q), nmag, 1e-12), "%s: norm %.17g, reference %.17g", what, nrm, sqrt(fabs(q)));
    free(m);
}

static void random_cases(tf_rng *rng)
{
    const uint64_t d2[] = {200, 37}, d3[] = {60, 1, 45}, d4[] = {12, 30, 9, 20}, d5[] = {6, 7, 8, 5, 9};
    const struct { uint32_t order; const uint64_t *dims; uint64_t nnz; } shapes[] = {
        {2, d2, 3000}, {3, d3, 1500}, {4, d4, 20000}, {5, d5, 2500}};
    const uint64_t Rs[] = {1, 3, 16, 37};
    for (size_t si = 0; si < COUNT(shapes); ++si) {
        tf_tensor X = sp_random_tensor(rng, shapes[si].order, shapes[si].dims, shapes[si].nnz, -1);
        for (size_t ri = 0; ri < COUNT(Rs); ++ri) {
            tf_ktensor K = kt_random_ktensor(rng, X.order, X.dims, Rs[ri], (int)(ri % 2));
            char what[64];
            snprintf(what, sizeof what, "random order %u R %llu", X.order, (unsigned long long)Rs[ri]);
            check_pair(what, &X, &K);
            tf_ktensor_free(&K);
        }
        tf_tensor_free(&X);
    }
    /* no non-zeros: the model values write nothing, the inner product is 0 */
    const uint64_t d[] = {4, 5, 6};
    tf_tensor E;
    CHECK_OK(tf_tensor_alloc(&E, 3, d, 0));
    tf_ktensor K = kt_random_ktensor(rng, 3, d, 4, 1);
    double ip = NAN, m = NAN;
    CHECK_OK(tf_ktensor_innerprod(&E, &K, &ip));
    CHECK(ip == 0.0);
    CHECK_OK(tf_model_values(&E, &K, &m));
    CHECK(isnan(m));
    tf_ktensor_free(&K);
    tf_tensor_free(&E);
}

/* pyttb's ktensor docstring example: weights (1, 2), A = [[1,2],[3,4]],
 * B = [[5,6],[7,8]], C = [[9,10],[11,12]]; its full tensor is known. */
static void hand_example(void)
{
    const uint64_t dims[3] = {2, 2, 2};
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, 3, dims, 2));
    const double f[3][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
    for (int m = 0; m < 3; ++m) memcpy(K.factors[m].data, f[m], sizeof f[m]);
    K.lambda[0] = 1, K.lambda[1] = 2;
    /* full(i, j, k): [:, :, 0] = [[285, 383], [615, 829]], [:, :, 1] = [[343, 461], [741, 999]] */
    const double full[2][2][2] = {{{285, 343}, {383, 461}}, {{615, 741}, {829, 999}}};
    tf_tensor X;
    CHECK_OK(tf_tensor_alloc(&X, 3, dims, 8));
    double ss = 0.0, ip = 0.0;
    for (int e = 0; e < 8; ++e) {
        const int i = e >> 2, j = (e >> 1) & 1, k = e & 1;
        X.ind[0][e] = (uint32_t)i, X.ind[1][e] = (uint32_t)j, X.ind[2][e] = (uint32_t)k;
        X.vals[e] = e + 1.0;
        ss += full[i][j][k] * full[i][j][k];
        ip += (e + 1.0) * full[i][j][k];
    }
    double m[8], got = 0.0, nrm = 0.0;
    CHECK_OK(tf_model_values(&X, &K, m));
    for (int e = 0; e < 8; ++e) CHECKF(m[e] == full[e >> 2][(e >> 1) & 1][e & 1], "hand model value %d: %g", e, m[e]);
    CHECK_OK(tf_ktensor_innerprod(&X, &K, &got));
    CHECKF(got == ip, "hand innerprod %g, expected %g", got, ip);
    CHECK_OK(tf_ktensor_norm(&K, &nrm));
    CHECKF(fabs(nrm - sqrt(ss)) <= 1e-12 * sqrt(ss), "hand norm %.17g, expected %.17g", nrm, sqrt(ss));
    tf_tensor_free(&X);
    tf_ktensor_free(&K);
}

/* tf_ktensor_fixsigns against the rule worked by hand (pyttb's fixsigns):
 * per component, the largest-magnitude entry of each factor's column (the
 * first of ties; a NaN wins and is not negative), and the first 2 floor(k/2)
 * of the k factors where it is negative negated. Outputs checked entry by
 * entry, so a flip too many or too few fails. */
static void fixsigns_hand(void)
{
    const uint64_t dims[4] = {3, 2, 2, 2};
    tf_ktensor K;
    CHECK_OK(tf_ktensor_alloc(&K, 4, dims, 4));
    /* columns (components) r = 0..3, factors row-major (rows x 4):
     * r 0: largest negative in factors 1, 2, 3 (three: factors 1 and 2 flip)
     * r 1: a tie -5 (first) / 5 in factor 1 -> negative; factor 2 negative: both flip
     * r 2: a NaN in factor 1 (not negative) after -9; factor 3 negative: one, none flips
     * r 3: all positive: nothing */
    const double f1[12] = {-4, -5, -9, 1,  /* row 0 */
                           2, 5, NAN, 1,    /* row 1 */
                           1, 1, 1, 2};     /* row 2 */
    const double f2[8] = {-3, -2, 1, 1, 1, 1, 1, 1};
    const double f3[8] = {1, 1, 1, 1, -7, 1, 1, 1};
    const double f4[8] = {1, 1, -2, 1, 1, 1, 1, 1};
    memcpy(K.factors[0].data, f1, sizeof f1);
    memcpy(K.factors[1].data, f2, sizeof f2);
    memcpy(K.factors[2].data, f3, sizeof f3);
    memcpy(K.factors[3].data, f4, sizeof f4);
    for (int r = 0; r < 4; ++r) K.lambda[r] = r + 1.0;
    CHECK_OK(tf_ktensor_fixsigns(&K));
    const int flip[4][4] = {{1, 1, 0, 0}, {1, 1, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}}; /* [mode][r] */
    const double *orig[4] = {f1, f2, f3, f4};
    for (int m = 0; m < 4; ++m)
        for (uint64_t i = 0; i < dims[m]; ++i)
            for (int r = 0; r < 4; ++r) {
                const double want = flip[m][r] ? -orig[m][i * 4 + r] : orig[m][i * 4 + r],
                             got = K.factors[m].data[i * 4 + r];
                CHECKF(got == want || (isnan(got) && isnan(want)), "fixsigns: factor %d (%llu, %d) %g, expected %g",
                       m + 1, (unsigned long long)i, r, got, want);
            }
    for (int r = 0; r < 4; ++r) CHECKF(K.lambda[r] == r + 1.0, "fixsigns: lambda %d changed", r);
    CHECKF(tf_ktensor_fixsigns(NULL) == TF_ERR_ARG, "fixsigns(NULL): %s", tf_last_error());
    K.factors[1].cols = 3;
    CHECKF(tf_ktensor_fixsigns(&K) == TF_ERR_ARG && strstr(tf_last_error(), "factor 2"), "a 2 x 3 factor: %s",
           tf_last_error());
    K.factors[1].cols = 4;
    tf_ktensor_free(&K);
}

static void real_data(tf_rng *rng)
{
    tf_tensor X;
    if (!kt_read_uber(&X)) return;
    tf_ktensor K = kt_random_ktensor(rng, X.order, X.dims, 16, 1);
    check_pair("uber-apr14 R 16", &X, &K);
    double *m = kt_poisoned(X.nnz), ip = 0.0;
    double t0 = tf_wtime();
    CHECK_OK(tf_model_values(&X, &K, m));
    const double t_mv = tf_wtime() - t0;
    t0 = tf_wtime();
    CHECK_OK(tf_ktensor_innerprod(&X, &K, &ip));
    const double t_ip = tf_wtime() - t0;
    printf("uber-apr14 (%llu non-zeros), R 16, %d threads: model values %.2f ms, innerprod %.2f ms\n",
           (unsigned long long)X.nnz, tf_default_threads(), t_mv * 1e3, t_ip * 1e3);
    free(m);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

/* tf_model_values_ex on the CPU: the same bits as tf_model_values; under auto
 * without a GPU on the CPU; the GPU asked for without one: unavailable, naming
 * CUDA (test_gpu_model_values checks the GPU itself); argument errors. */
static void model_values_ex(tf_rng *rng)
{
    const uint64_t dims[4] = {9, 4, 11, 6};
    tf_tensor X = sp_random_tensor(rng, 4, dims, 300, -1);
    tf_ktensor K = kt_random_ktensor(rng, 4, dims, 5, 1);
    double *m = kt_poisoned(X.nnz), *e = kt_poisoned(X.nnz);
    CHECK_OK(tf_model_values(&X, &K, m));
    tf_model_opts o;
    tf_model_info info;
    tf_model_opts_default(&o);
    o.backend = TF_BACKEND_CPU;
    o.info = &info;
    CHECK_OK(tf_model_values_ex(&X, &K, &o, e));
    CHECK(info.backend == TF_BACKEND_CPU && info.note[0] == 0);
    CHECK(memcmp(m, e, X.nnz * sizeof *m) == 0);
    if (tf_gpu_count() == 0) {
        for (uint64_t j = 0; j < X.nnz; ++j) e[j] = NAN;
        o.backend = TF_BACKEND_AUTO;
        CHECK_OK(tf_model_values_ex(&X, &K, &o, e));
        CHECK(info.backend == TF_BACKEND_CPU && memcmp(m, e, X.nnz * sizeof *m) == 0);
        CHECK_OK(tf_model_values_ex(&X, &K, NULL, e));
        o.backend = TF_BACKEND_GPU;
        const tf_status st = tf_model_values_ex(&X, &K, &o, e);
        CHECKF((st == TF_ERR_UNAVAILABLE || st == TF_ERR_DEVICE) && strstr(tf_last_error(), "CUDA"),
               "tf_model_values_ex on the GPU without one -> %s \"%s\"", tf_status_name(st), tf_last_error());
    }
    tf_model_opts_default(&o);
    CHECK_FAILS(tf_model_values_ex(NULL, &K, &o, e), TF_ERR_ARG, "must not be NULL");
    CHECK_FAILS(tf_model_values_ex(&X, &K, &o, NULL), TF_ERR_ARG, "must not be NULL");
    o.backend = (tf_backend)7;
    CHECK_FAILS(tf_model_values_ex(&X, &K, &o, e), TF_ERR_ARG, "unknown backend 7");
    tf_model_opts_default(&o);
    o.precision = (tf_precision)5;
    CHECK_FAILS(tf_model_values_ex(&X, &K, &o, e), TF_ERR_ARG, "unknown precision 5");
    tf_model_opts_default(&o);
    o.threads = -2;
    CHECK_FAILS(tf_model_values_ex(&X, &K, &o, e), TF_ERR_ARG, "threads -2 is negative");
    tf_ktensor B = K;
    B.order = 3;
    CHECK_FAILS(tf_model_values_ex(&X, &B, NULL, e), TF_ERR_ARG, "the ktensor has order 3, the tensor 4");
    free(m);
    free(e);
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

static void errors(tf_rng *rng)
{
    const uint64_t dims[3] = {5, 6, 7};
    tf_tensor X = sp_random_tensor(rng, 3, dims, 40, -1);
    tf_ktensor K = kt_random_ktensor(rng, 3, dims, 4, 1);
    double out[64], v = 0.0;
    CHECK_FAILS(tf_model_values(NULL, &K, out), TF_ERR_ARG, "must not be NULL");
    CHECK_FAILS(tf_model_values(&X, NULL, out), TF_ERR_ARG, "must not be NULL");
    CHECK_FAILS(tf_model_values(&X, &K, NULL), TF_ERR_ARG, "must not be NULL");
    CHECK_FAILS(tf_ktensor_innerprod(&X, &K, NULL), TF_ERR_ARG, "must not be NULL");
    CHECK_FAILS(tf_ktensor_norm(NULL, &v), TF_ERR_ARG, "must not be NULL");
    CHECK_FAILS(tf_ktensor_norm(&K, NULL), TF_ERR_ARG, "must not be NULL");
    /* shape mismatches */
    tf_ktensor B = K;
    B.dims[1] = 7;
    CHECK_FAILS(tf_model_values(&X, &B, out), TF_ERR_ARG, "factor 2 is 6 x 4, expected 7 x 4");
    B = K;
    B.factors[2].rows = 8, B.dims[2] = 8;
    CHECK_FAILS(tf_ktensor_innerprod(&X, &B, &v), TF_ERR_ARG, "mode 3 has length 8 in the ktensor, 7 in the tensor");
    B = K;
    B.order = 2;
    CHECK_FAILS(tf_model_values(&X, &B, out), TF_ERR_ARG, "the ktensor has order 2, the tensor 3");
    B = K;
    B.order = 1;
    CHECK_FAILS(tf_ktensor_norm(&B, &v), TF_ERR_ARG, "order 1 is outside 2..16");
    B = K;
    B.rank = 0;
    CHECK_FAILS(tf_ktensor_norm(&B, &v), TF_ERR_ARG, "rank 0");
    B = K;
    B.factors[0].cols = 3;
    CHECK_FAILS(tf_ktensor_norm(&B, &v), TF_ERR_ARG, "factor 1 is 5 x 3, expected 5 x 4");
    B = K;
    B.factors[1].data = NULL;
    CHECK_FAILS(tf_ktensor_innerprod(&X, &B, &v), TF_ERR_ARG, "factor 2 has no data");
    /* an invalid tensor: tf_tensor_validate's message */
    const uint32_t keep = X.ind[2][5];
    X.ind[2][5] = 7;
    CHECK_FAILS(tf_model_values(&X, &K, out), TF_ERR_RANGE, "mode 3 index 7 is outside 0..6");
    X.ind[2][5] = keep;
    X.vals[3] = NAN;
    CHECK_FAILS(tf_ktensor_innerprod(&X, &K, &v), TF_ERR_RANGE, "not finite");
    tf_ktensor_free(&K);
    tf_tensor_free(&X);
}

int main(void)
{
    threads0 = tf_default_threads();
    tf_rng rng;
    tf_rng_seed(&rng, kt_seed("test_ktensor_ops"));
    random_cases(&rng);
    hand_example();
    fixsigns_hand();
    real_data(&rng);
    model_values_ex(&rng);
    errors(&rng);
    return tf_test_finish("test_ktensor_ops");
}
