/* SPDX-License-Identifier: BSD-3-Clause */
/* Random inputs shared by the test suites (deterministic for a seeded tf_rng). */
#ifndef TF_TESTS_TEST_RANDOM_H
#define TF_TESTS_TEST_RANDOM_H
#include <stdint.h>

#include "check.h"
#include "core/rng.h"
#include "tenfold.h"

/* Index in 0..dim-1 that leaves index 0, the last one and every index = 2
 * mod 5 empty when dim >= 8 (empty rows / slices in the inputs). */
static inline uint32_t tt_draw_sparse_index(tf_rng *rng, uint64_t dim)
{
    for (;;) {
        uint32_t i = (uint32_t)tf_rng_below(rng, dim);
        if (dim < 8 || (i != 0 && i != dim - 1 && i % 5 != 2)) return i;
    }
}

/* rows x cols matrix with entries uniform in [-1, 1). */
static inline tf_matrix tt_random_dense(tf_rng *rng, uint64_t rows, uint64_t cols)
{
    tf_matrix m;
    CHECK_OK(tf_matrix_alloc(&m, rows, cols));
    for (uint64_t k = 0; k < rows * cols; ++k) m.data[k] = tf_rng_uniform(rng) * 2.0 - 1.0;
    return m;
}
#endif
