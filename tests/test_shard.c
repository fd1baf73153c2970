/* SPDX-License-Identifier: BSD-3-Clause */
/* Shards of a distributed run (src/ops/shard.c): the ranks' row ranges
 * tile every mode in order, each rank's non-zeros are within half the
 * heaviest row of the balanced share (rows are never split), the shards
 * partition the non-zeros exactly; more ranks than rows leave ranges
 * empty; and a distributed context needs MPI started (one process here). */
#include <math.h>
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
    /* the CSR cut (SDDMM panels) from the prefix sums of the same counts: the same rows */
    uint64_t *rowptr = calloc(X->dims[m] + 1, sizeof *rowptr), plo[70];
    for (uint64_t i = 0; i < X->dims[m]; ++i) rowptr[i + 1] = rowptr[i] + count[i];
    double imb_rows = -1, imb_ptr = -2;
    CHECK_OK(tf_shard_rows(X, m, size, lo, &imb_rows));
    tf_shard_rowptr(rowptr, X->dims[m], size, plo, &imb_ptr);
    ok = imb_rows == imb_ptr;
    for (int r = 0; r <= size; ++r) ok &= plo[r] == lo[r];
    CHECKF(ok, "%s: mode %u over %d: tf_shard_rowptr differs from tf_shard_rows", what, m + 1, size);
    free(rowptr);
    free(count);
}

/* tf_shard_rowptr on small CSR patterns written out: a heavy row at the
 * would-be boundary stays whole (in the part it is closer to), empty rows,
 * more parts than rows, no non-zeros. */
static void check_rowptr_cases(void)
{
    static const struct {
        uint64_t rows;
        uint64_t ptr[8];
        int size;
        uint64_t want[5];
    } cases[] = {
        {5, {0, 1, 2, 12, 13, 14}, 2, {0, 2, 5}},            /* heavy row 2 (10 of 14) at the middle: after it */
        {5, {0, 3, 4, 14, 15, 16}, 2, {0, 2, 5}},            /* 4 before, 10 in it: 8 is closer to 4 */
        {5, {0, 1, 2, 5, 7, 8}, 2, {0, 3, 5}},               /* 4 lies nearer 5 (after row 2) than 2 */
        {4, {0, 0, 0, 9, 9}, 3, {0, 2, 3, 4}},               /* empty rows around one row of all */
        {2, {0, 5, 10}, 4, {0, 0, 1, 1, 2}},                 /* more parts than rows: two empty */
        {3, {0, 0, 0, 0}, 2, {0, 3, 3}},                     /* no non-zeros */
        {6, {0, 2, 4, 6, 8, 10, 12}, 3, {0, 2, 4, 6}},       /* even */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; ++c) {
        uint64_t lo[8];
        double imb = -1;
        tf_shard_rowptr(cases[c].ptr, cases[c].rows, cases[c].size, lo, &imb);
        int ok = 1;
        for (int r = 0; r <= cases[c].size; ++r) ok &= lo[r] == cases[c].want[r];
        CHECKF(ok, "tf_shard_rowptr case %zu: got %llu %llu %llu", c, (unsigned long long)lo[0],
               (unsigned long long)lo[1], (unsigned long long)lo[2]);
    }
}

/* tf_shard_split of parts first..first+count-1 (of size), with and without
 * the split by the previous mode: every non-zero of those parts lands in
 * exactly one output, in X's order, its mode index shifted by the part's
 * first row, in the local half exactly when its previous index is one of
 * the part's rows of that mode; dims as promised; the imbalance reported
 * is the largest part over the mean. */
static void check_split(const tf_tensor *X, uint32_t m, int size, int first, int count, const char *what)
{
    uint64_t lo[70], plo[70];
    double imb = -1.0;
    const uint32_t prev = (m + X->order - 1) % X->order;
    CHECK_OK(tf_shard_rows(X, m, size, lo, &imb));
    CHECK_OK(tf_shard_rows(X, prev, size, plo, NULL));
    uint64_t most = 0;
    for (int r = 0; r < size; ++r) {
        uint64_t n = 0;
        for (uint64_t k = 0; k < X->nnz; ++k) n += X->ind[m][k] >= lo[r] && X->ind[m][k] < lo[r + 1];
        most = n > most ? n : most;
    }
    CHECKF(X->nnz == 0 ? imb == 0.0 : fabs(imb - ((double)most * size / X->nnz - 1.0)) < 1e-12,
           "%s: mode %u over %d: imbalance %g", what, m + 1, size, imb);
    for (int pairs = 0; pairs < 2; ++pairs) {
        tf_tensor out[128];
        CHECK_OK(tf_shard_split(X, m, lo, prev, pairs ? plo : NULL, first, count, out));
        int ok = 1;
        for (int p = 0; p < count; ++p) {
            const int r = first + p;
            const uint64_t rows = lo[r + 1] - lo[r];
            uint64_t at[2] = {0, 0};
            for (uint64_t k = 0; k < X->nnz; ++k) {
                if (X->ind[m][k] < lo[r] || X->ind[m][k] >= lo[r + 1]) continue;
                const int half = pairs ? !(X->ind[prev][k] >= plo[r] && X->ind[prev][k] < plo[r + 1]) : 0;
                const tf_tensor *o = &out[pairs ? 2 * p + half : p];
                const uint64_t j = at[half]++;
                ok &= j < o->nnz && o->vals[j] == X->vals[k];
                for (uint32_t q = 0; ok && q < X->order; ++q)
                    ok &= o->ind[q][j] == (q == m ? X->ind[q][k] - lo[r] : X->ind[q][k]);
            }
            for (int h = 0; h < (pairs ? 2 : 1); ++h) {
                const tf_tensor *o = &out[pairs ? 2 * p + h : p];
                ok &= o->nnz == at[h] && o->dims[m] == (rows ? rows : 1);
                for (uint32_t q = 0; q < X->order; ++q) ok &= q == m || o->dims[q] == X->dims[q];
            }
        }
        CHECKF(ok, "%s: split of mode %u, parts %d..%d of %d%s", what, m + 1, first, first + count - 1, size,
               pairs ? ", by the previous mode" : "");
        for (int q = 0; q < (pairs ? 2 : 1) * count; ++q) tf_tensor_free(&out[q]);
    }
}

static void check_tensor(tt_spec sp, const char *what)
{
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    const int sizes[] = {1, 2, 3, 7, 64};
    for (uint32_t m = 0; m < X.order; ++m)
        for (unsigned i = 0; i < 5; ++i) check_mode(&X, m, sizes[i], what);
    for (uint32_t m = 0; m < X.order; ++m) {
        check_split(&X, m, 2, 0, 2, what);
        check_split(&X, m, 7, 2, 3, what);
        check_split(&X, m, 64, 0, 16, what);
    }
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
    check_rowptr_cases();

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
