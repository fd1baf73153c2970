/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (src/ops/shard.c): the ranks' row ranges
 * tile every mode in order, each rank's non-zeros are within half the
 * heaviest row of the balanced share (rows are never split), the shards
 * partition the non-zeros exactly; more ranks than rows leave ranges
 * empty; and a distributed context needs MPI started (one process here). */
#include <stdlib.h>

#include "check.h"
#include "gpu_test_tensors.h"
#include "ops/shard.h"

static void check_mode(const tf_tensor *X, uint32_t m, int size, const char *what)
{
    uint64_t lo[70];
    CHECK_OK(tf_shard_rows(X, m, size, lo, NULL));
    uint64_t *count = calloc(X->dims[m], sizeof *count), heaviest = 0;
    for (uint64_t k = 0; k < X->nnz; ++k) count[X->ind[m][k]]++;
    for (uint64_t i = 0; i < X->dims[m]; ++i) heaviest = count[i] > heaviest ? count[i] : heaviest;
    int ok = lo[0] == 0 && lo[size] == X->dims[m];
    uint64_t total = 0, prefix = 0;
    for (int r = 0; r < size; ++r) {
        ok &= lo[r] <= lo[r + 1];
        tf_tensor part;
        memset(&part, 0, sizeof part);
        CHECK_OK(tf_shard_tensor(X, m, lo[r], lo[r + 1], &part));
        for (uint64_t k = 0; k < part.nnz; ++k) ok &= part.ind[m][k] >= lo[r] && part.ind[m][k] < lo[r + 1];
        total += part.nnz;
        prefix += part.nnz;
        /* the running share ends within half the heaviest row of its target */
        const double target = (double)X->nnz * (r + 1) / size;
        ok &= r + 1 == size || (double)prefix <= target + heaviest / 2.0 + 0.5;
        ok &= r + 1 == size || (double)prefix >= target - heaviest / 2.0 - 0.5;
        tf_tensor_free(&part);
    }
    ok &= total == X->nnz;
    CHECKF(ok, "%s: mode %u over %d ranks", what, m + 1, size);
    free(count);
}

static void check_tensor(tt_spec sp, const char *what)
{
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    const int sizes[] = {1, 2, 3, 7, 64};
    for (uint32_t m = 0; m < X.order; ++m)
        for (unsigned i = 0; i < 5; ++i) check_mode(&X, m, sizes[i], what);
    tf_tensor_free(&X);
}

int main(void)
{
    const uint64_t d3[] = {300, 200, 5};
    check_tensor(tt_spec_make(3, d3, 20000, 1), "3-mode (a mode shorter than the ranks)");
    tt_spec hot = tt_spec_make(3, d3, 20000, 2);
    hot.hot_mode = 0; hot.hot_row = 150; hot.hot_share = 0.6; hot.sparse_mode = 1;
    check_tensor(hot, "a row with 60 % of the non-zeros, empty rows");
    check_tensor(tt_spec_make(3, d3, 0, 3), "no non-zeros");

    /* a distributed context needs MPI running: one process here */
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.distributed = 1;
    tf_context *c = NULL;
    tf_status s = tf_context_create(&o, &c);
    CHECKF(s != TF_OK && c == NULL && (strstr(tf_last_error(), "MPI") != NULL), "distributed context: %d %s", (int)s,
           tf_last_error());
    int rank = -1, size = -1;
    CHECK_OK(tf_mpi_start(NULL, NULL, &rank, &size));
    CHECK(rank == 0 && size == 1);
    tf_mpi_stop();
    return tf_test_finish("test_shard");
}
