/* SPDX-License-Identifier: BSD-3-Clause */
/* The row split of fmt/row_split.h (the several-GPU Tucker's shards) against
 * a plain loop: every part's non-zeros in the input's order, their indices
 * and values, dims kept; parts that are empty, bounds that leave rows out
 * at both ends, one part, 0 and 1 non-zero, a heavy row, orders 2-5; the
 * same output on 1, 2 and 8 threads. And the row counts (atomic adds)
 * against a plain loop on 1 and 8 threads. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "fmt/row_split.h"
#include "tenfold.h"

static void check_split(const tf_tensor *X, uint32_t m, int parts, const uint64_t *lo, int threads, const char *what)
{
    tf_tensor out[8];
    memset(out, 0xab, sizeof out); /* poisoned: the call sets every part */
    CHECK_OK(tf_split_rows(X, m, parts, lo, threads, out));
    for (int p = 0; p < parts; ++p) {
        uint64_t k = 0;
        int same = out[p].order == X->order;
        for (uint32_t d = 0; same && d < X->order; ++d) same = out[p].dims[d] == X->dims[d];
        for (uint64_t j = 0; same && j < X->nnz; ++j) {
            const uint64_t i = X->ind[m][j];
            if (i < lo[p] || i >= lo[p + 1]) continue;
            same = k < out[p].nnz && out[p].vals[k] == X->vals[j];
            for (uint32_t d = 0; same && d < X->order; ++d) same = out[p].ind[d][k] == X->ind[d][j];
            ++k;
        }
        CHECKF(same && k == out[p].nnz, "%s: part %d of %d (mode %u, rows %llu..%llu, %d threads): %llu non-zeros, "
               "expected %llu, or a different entry", what, p, parts, m + 1, (unsigned long long)lo[p],
               (unsigned long long)lo[p + 1], threads, (unsigned long long)out[p].nnz, (unsigned long long)k);
    }
    tf_split_rows_free(out, parts);
}

int main(void)
{
    tf_rng r;
    tf_rng_seed(&r, 41);
    static const struct {
        uint32_t order;
        uint64_t dims[5], nnz;
        int heavy;
    } cases[] = {
        {2, {7, 5}, 1, 0},          {3, {4, 1, 9}, 0, 0},          {3, {50, 40, 30}, 3000, 0},
        {2, {1000, 3}, 200000, 1},  {4, {30, 20, 10, 5}, 90000, 0}, {5, {9, 7, 5, 3, 11}, 70000, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        tf_tensor X;
        CHECK_OK(tf_tensor_alloc(&X, cases[c].order, cases[c].dims, cases[c].nnz));
        for (uint64_t k = 0; k < X.nnz; ++k) {
            for (uint32_t d = 0; d < X.order; ++d)
                X.ind[d][k] = cases[c].heavy && d == 0 && tf_rng_uniform(&r) < 0.6
                                  ? (uint32_t)(X.dims[0] / 2) : (uint32_t)tf_rng_below(&r, X.dims[d]);
            X.vals[k] = (double)k + 0.25;
        }
        char what[32];
        snprintf(what, sizeof what, "case %zu", c);
        for (uint32_t m = 0; m < X.order; ++m) {
            const uint64_t I = X.dims[m];
            for (int parts = 1; parts <= 5; parts += 2) {
                uint64_t lo[8];
                lo[0] = tf_rng_below(&r, 2) ? 0 : tf_rng_below(&r, I / 3 + 1); /* rows left out at the start */
                for (int p = 1; p <= parts; ++p) lo[p] = lo[p - 1] + tf_rng_below(&r, I / parts + 2);
                if (lo[parts] > I || tf_rng_below(&r, 2)) lo[parts] = I;
                for (int p = parts - 1; p > 0; --p) lo[p] = lo[p] < lo[p + 1] ? lo[p] : lo[p + 1];
                for (int t = 1; t <= 8; t *= (t == 1 ? 2 : 4)) check_split(&X, m, parts, lo, t, what);
            }
            uint64_t *cnt = malloc((I ? I : 1) * sizeof *cnt), *ref = calloc(I ? I : 1, sizeof *ref);
            for (uint64_t k = 0; k < X.nnz; ++k) ++ref[X.ind[m][k]];
            for (int t = 1; t <= 8; t *= 8) {
                memset(cnt, 0xab, (I ? I : 1) * sizeof *cnt);
                tf_count_rows(&X, m, t, cnt);
                CHECKF(!memcmp(cnt, ref, I * sizeof *cnt), "%s: row counts of mode %u on %d threads", what, m + 1, t);
            }
            free(cnt);
            free(ref);
        }
        tf_tensor_free(&X);
    }
    tf_tensor bad;
    const uint64_t d2[2] = {3, 3};
    CHECK_OK(tf_tensor_alloc(&bad, 2, d2, 1));
    bad.ind[0][0] = bad.ind[1][0] = 0;
    bad.vals[0] = 1.0;
    tf_tensor out[2];
    const uint64_t lo[3] = {0, 1, 3};
    CHECK_FAILS(tf_split_rows(&bad, 2, 2, lo, 1, out), TF_ERR_ARG, "row split: 2 parts of mode 3");
    tf_tensor_free(&bad);
    return tf_test_finish("test_row_split");
}
