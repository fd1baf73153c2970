/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU SpTTM (F-COO) against the float64 reference: the random tensors of
 * test_spttm (orders 2..5, one long fibre, empty slices), every mode,
 * R = 1, 7, 33, 100, 512, fp64 (<= 1e-12) and fp32 (<= 1e-5); then every
 * real tensor and matrix in TF_SHARED_DATA on every mode. --quick: small
 * cases only (for compute-sanitizer). Exits 77 without a GPU. */
#include <string.h>

#include "realdata.h"
#include "spttm_test_util.h"

#define COUNT(a) (sizeof(a) / sizeof *(a))

static void check_gpu(const char *what, const tf_tensor *X, uint32_t mode, const tf_matrix *U,
                      const tf_semisparse *ref)
{
    for (int prec = 0; prec < 2; ++prec) {
        tf_spttm_opts o;
        tf_spttm_opts_default(&o);
        o.backend = TF_BACKEND_GPU;
        o.precision = prec ? TF_SINGLE : TF_DOUBLE;
        tf_semisparse Y;
        tf_status s = tf_spttm(X, mode, U, &o, &Y);
        CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
        if (s == TF_OK) sp_same(what, X, U, &Y, ref, prec ? 1e-5 : 1e-12);
        tf_semisparse_free(&Y);
    }
}

static void random_cases(int quick)
{
    tf_rng rng;
    tf_rng_seed(&rng, 7701);
    const uint64_t dims2[] = {200, 37}, dims3[] = {60, 1, 45}, dims4[] = {12, 30, 9, 20}, dims5[] = {6, 7, 8, 5, 9};
    const struct { uint32_t order; const uint64_t *dims; uint64_t nnz; } shapes[] = {
        {2, dims2, 3000}, {3, dims3, 1500}, {4, dims4, 4000}, {5, dims5, 2500}};
    const uint64_t Rs[] = {1, 7, 33, 100, 512};
    for (size_t si = 0; si < COUNT(shapes); ++si)
        for (uint32_t mode = 0; mode < shapes[si].order; ++mode) {
            tf_tensor X = sp_random_tensor(&rng, shapes[si].order, shapes[si].dims, shapes[si].nnz, (int)mode);
            for (size_t ri = 0; ri < COUNT(Rs); ++ri) {
                if (quick && Rs[ri] > 33) continue;
                tf_matrix U = tt_random_dense(&rng, X.dims[mode], Rs[ri]);
                tf_semisparse ref;
                CHECK_OK(tf_spttm_reference(&X, mode, &U, &ref));
                check_gpu("random", &X, mode, &U, &ref);
                tf_semisparse_free(&ref);
                tf_matrix_free(&U);
            }
            tf_tensor_free(&X);
        }
}

static void gpu_spttm_real_tensor(const char *name, const char *path, tf_tensor *X, void *rng)
{
    const uint64_t Rs[] = {16, 100};
    for (uint32_t mode = 0; mode < X->order; ++mode)
        for (size_t ri = 0; ri < COUNT(Rs); ++ri) {
            if (X->nnz * Rs[ri] * 8 > (512ull << 20)) continue;
            tf_matrix U = tt_random_dense(rng, X->dims[mode], Rs[ri]);
            tf_semisparse ref;
            CHECK_OK(tf_spttm_reference(X, mode, &U, &ref));
            check_gpu(name, X, mode, &U, &ref);
            tf_semisparse_free(&ref);
            tf_matrix_free(&U);
        }
    printf("%s: checked\n", name);
}

static void real_data(void)
{
    static const char *const tensors[] = {".tns.xz", ".tns", ".mtx.xz", ".mtx", NULL};
    tf_rng rng;
    tf_rng_seed(&rng, 7703);
    tf_for_each_data_file("test_gpu_spttm", tensors, gpu_spttm_real_tensor, &rng);
}

int main(int argc, char **argv)
{
    const int quick = tf_test_quick(argc, argv);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_spttm", "no GPU");
    random_cases(quick);
    if (!quick) real_data();
    return tf_test_finish("test_gpu_spttm");
}
