/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU test of the device F-COO builder (src/gpu/engine/fcoo_build.cu):
 * every array it makes (sorted product indices, values, head bits,
 * segment rows, and per partition size the start flags, partition
 * segments and rows to clear) equals the host builder's (src/fmt/fcoo.c)
 * on random tensors of orders 2-8 (keys of one and of several 64-bit
 * words, modes of length 1, empty rows, a heavy row, non-zero counts that
 * are not multiples of 32) and on the real tensors; fp64 and fp32 values.
 * Skips without a GPU. */
#include "check.h"
#include "gpu_test_tensors.h"
#include "hooks/fcoo_check.h"
#include "realdata.h"

static const uint32_t parts[] = {64, 32, 96, 128, 192, 1056};
#define NPARTS (int)(sizeof parts / sizeof *parts)

static void check_all_modes(const tf_tensor *X, const char *what)
{
    for (uint32_t m = 0; m < X->order; ++m)
        for (int p = 0; p < 2; ++p) {
            const tf_precision prec = p ? TF_SINGLE : TF_DOUBLE;
            char diff[256];
            tf_status s = tf_gpu_check_fcoo_build(X, m, prec, parts, NPARTS, diff, sizeof diff);
            CHECKF(s == TF_OK, "%s, mode %u: %s", what, m + 1, tf_last_error());
            CHECKF(s != TF_OK || !diff[0], "%s (%s): %s", what, p ? "fp32" : "fp64", diff);
        }
}

static void random_case(tt_spec sp, const char *what)
{
    tf_tensor X;
    memset(&X, 0, sizeof X);
    CHECK_OK(tt_random(&sp, &X));
    char name[160];
    snprintf(name, sizeof name, "%s (%llu non-zeros)", what, (unsigned long long)X.nnz);
    check_all_modes(&X, name);
    printf("  %s: done\n", name);
    tf_tensor_free(&X);
}

static void real_tensor(const char *name, const char *path, tf_tensor *X, void *user)
{
    (void)path, (void)user;
    if (X->order > 8) return;
    check_all_modes(X, name);
    printf("  %s: done\n", name);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_fcoo_build", "no CUDA device");
    const uint64_t d3[] = {50, 60, 70};
    random_case(tt_spec_make(3, d3, 3000, 1), "3-mode");
    random_case(tt_spec_make(3, d3, 1, 2), "one non-zero");
    random_case(tt_spec_make(3, d3, 33, 3), "33 non-zeros");
    tt_spec hot = tt_spec_make(3, (const uint64_t[]){300, 200, 100}, 6000, 4);
    hot.hot_mode = 0; hot.hot_row = 17; hot.hot_share = 0.5; hot.sparse_mode = 2;
    random_case(hot, "skewed, empty slices");
    const uint64_t big4[] = {1u << 20, 1u << 20, 1u << 20, 1u << 20};
    random_case(tt_spec_make(4, big4, 5000, 6), "4 x 2^20 (80-bit key: two sorts)");
    const uint64_t wide3[] = {1u << 23, 1u << 22, 1u << 22};
    random_case(tt_spec_make(3, wide3, 3000, 11), "3-mode 67-bit key");
    const uint64_t shortm[] = {1, 2, 131, 500};
    random_case(tt_spec_make(4, shortm, 4000, 5), "modes of length 1, 2, 131");
    const uint64_t ones[] = {1, 1, 1};
    random_case(tt_spec_make(3, ones, 10, 15), "every mode of length 1");
    const uint64_t d2[] = {1000, 800};
    random_case(tt_spec_make(2, d2, 5000, 7), "2-mode");
    const uint64_t d5[] = {5, 6, 7, 8, 9};
    random_case(tt_spec_make(5, d5, 2000, 3), "5-mode");
    const uint64_t d8[] = {3, 4, 5, 3, 4, 5, 3, 4};
    random_case(tt_spec_make(8, d8, 1500, 10), "8-mode");
    const uint64_t sparse_rows[] = {100000, 50, 40};
    random_case(tt_spec_make(3, sparse_rows, 90000, 16), "long mode, about one non-zero a row");
    const uint64_t larger[] = {5000, 4000, 3000};
    random_case(tt_spec_make(3, larger, 2000000, 12), "3-mode, 2M non-zeros");
    static const char *const tensors[] = {".tns.xz", ".tns", NULL};
    tf_for_each_data_file("test_gpu_fcoo_build", tensors, real_tensor, NULL);
    return tf_test_finish("test_gpu_fcoo_build");
}
