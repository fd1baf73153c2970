/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU tests of the host-side GPU format builders (src/fmt/blco.c, fcoo.c):
 * BLCO decodes back to exactly the original non-zeros, in ALTO order, with
 * consistent blocks (for line lengths below and above 64 bits); F-COO flags,
 * segments and partitions agree with the sorted COO for every mode. */
#include <stdlib.h>

#include "check.h"
#include "core/alloc.h"
#include "fmt/blco.h"
#include "fmt/fcoo.h"
#include "gpu_test_tensors.h"

/* 1 if tensors A and B (both sorted by 0..N-1) hold the same non-zeros. */
static int same_nonzeros(const tf_tensor *A, const tf_tensor *B)
{
    if (A->order != B->order || A->nnz != B->nnz) return 0;
    for (uint64_t k = 0; k < A->nnz; ++k) {
        if (A->vals[k] != B->vals[k]) return 0;
        for (uint32_t m = 0; m < A->order; ++m)
            if (A->ind[m][k] != B->ind[m][k]) return 0;
    }
    return 1;
}

/* Full ALTO key (4 words, word 3 most significant) of coordinates c. */
static void alto_key(const tf_blco_layout *lay, const uint32_t *c, uint64_t key[4])
{
    memset(key, 0, 4 * sizeof *key);
    for (uint32_t m = 0; m < lay->order; ++m)
        for (uint32_t l = 0; l < lay->mode_bits[m]; ++l)
            if ((c[m] >> l) & 1u) {
                uint32_t p = lay->alto_pos[m][l];
                key[p / 64] |= 1ULL << (p % 64);
            }
}

static int key_less(const uint64_t a[4], const uint64_t b[4])
{
    for (int w = 3; w >= 0; --w)
        if (a[w] != b[w]) return a[w] < b[w];
    return 0;
}

static void check_layout(const tf_blco_layout *lay)
{
    uint32_t sum = 0, total = 0;
    for (uint32_t m = 0; m < lay->order; ++m) {
        CHECK(lay->field_bits[m] <= lay->mode_bits[m]);
        if (lay->field_bits[m] && sum < 64) CHECKF(lay->field_shift[m] == sum, "mode %u", m);
        sum += lay->field_bits[m];
        total += lay->mode_bits[m];
    }
    CHECK(total == lay->alto_bits);
    CHECKF(sum == (total < 64 ? total : 64), "kept %u of %u bits", sum, total);
}

static void check_blco(const tf_tensor *X, uint64_t max_block, const char *what)
{
    tf_blco b;
    tf_status s = tf_blco_build(X, max_block, &b);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s != TF_OK) return;
    const tf_blco_layout *lay = &b.lay;
    const uint32_t N = X->order;
    check_layout(lay);
    CHECK(b.block_start[0] == 0 && b.block_start[b.nblocks] == X->nnz);
    if (lay->alto_bits <= 64 && X->nnz)
        CHECKF(b.nblocks == (X->nnz + b.max_block_nnz - 1) / b.max_block_nnz, "%s: %llu blocks", what,
               (unsigned long long)b.nblocks);

    tf_tensor Y;
    CHECK_OK(tf_tensor_alloc(&Y, N, X->dims, X->nnz));
    uint64_t prev[4] = {0}, key[4];
    int ordered = 1, blocks_ok = 1;
    uint32_t c[TF_MAX_ORDER];
    for (uint64_t blk = 0; blk < b.nblocks; ++blk) {
        uint64_t lo = b.block_start[blk], hi = b.block_start[blk + 1];
        if (hi <= lo || hi - lo > b.max_block_nnz) blocks_ok = 0;
        /* A block ends early only where the block key (upper bits) changes. */
        if (blk + 1 < b.nblocks && hi - lo < b.max_block_nnz &&
            !memcmp(&b.block_base[blk * N], &b.block_base[(blk + 1) * N], N * sizeof(uint32_t)))
            blocks_ok = 0;
        for (uint64_t k = lo; k < hi; ++k) {
            for (uint32_t m = 0; m < N; ++m) {
                c[m] = tf_blco_decode(&b, blk, k, m);
                Y.ind[m][k] = c[m];
            }
            Y.vals[k] = b.vals[k];
            alto_key(lay, c, key);
            if (k > 0 && !key_less(prev, key)) ordered = 0;
            memcpy(prev, key, sizeof prev);
        }
    }
    CHECKF(blocks_ok, "%s: block sizes / keys", what);
    CHECKF(ordered, "%s: not in strictly increasing ALTO order", what);
    CHECK_OK(tf_tensor_sort(&Y, NULL));
    CHECKF(same_nonzeros(X, &Y), "%s: BLCO does not decode to the original non-zeros", what);
    tf_tensor_free(&Y);

    uint64_t nt = 0, *tb = NULL;
    const uint32_t tile = 96;
    CHECK_OK(tf_blco_tiles(&b, tile, &nt, &tb));
    CHECK(nt == (X->nnz + tile - 1) / tile);
    int tiles_ok = 1;
    for (uint64_t t = 0; tb && t < nt; ++t) {
        uint64_t first = t * tile, blk = tb[t];
        if (!(blk < b.nblocks && b.block_start[blk] <= first && first < b.block_start[blk + 1]))
            tiles_ok = 0;
    }
    CHECKF(tiles_ok, "%s: tile map", what);
    free(tb);
    if (max_block == 0) CHECK(tf_blco_bytes(&b, 8) <= tf_blco_bytes_estimate(X, 8));
    tf_blco_free(&b);
}

static void check_fcoo(const tf_tensor *X, uint32_t mode, uint32_t part, const char *what)
{
    tf_fcoo f;
    tf_status s = tf_fcoo_build(X, mode, part, &f);
    CHECKF(s == TF_OK, "%s mode %u: %s", what, mode, tf_last_error());
    if (s != TF_OK) return;
    const uint32_t N = X->order;
    tf_tensor Y;
    CHECK_OK(tf_tensor_alloc(&Y, N, X->dims, X->nnz));
    uint64_t seg = 0;
    int ok_rows = 1, ok_parts = 1, ok_sorted = 1;
    for (uint64_t k = 0; k < f.nnz; ++k) {
        if (tf_fcoo_head(&f, k) && k > 0) ++seg;
        if (k == 0 && !tf_fcoo_head(&f, 0)) ok_rows = 0;
        if (seg >= f.nseg) { ok_rows = 0; break; }
        uint32_t row = f.seg_row[seg];
        Y.ind[mode][k] = row;
        for (uint32_t j = 0; j + 1 < N; ++j) Y.ind[f.pmodes[j]][k] = f.pind[j][k];
        Y.vals[k] = f.vals[k];
        if (k > 0) { /* sorted by output row, then by the product modes */
            int64_t d = (int64_t)Y.ind[mode][k] - (int64_t)Y.ind[mode][k - 1];
            if (d < 0 || (d == 0) == tf_fcoo_head(&f, k)) ok_sorted = 0;
        }
        if (k % part == 0) {
            uint64_t p = k / part;
            if (tf_fcoo_start(&f, p) != tf_fcoo_head(&f, k) || f.part_seg[p] != seg) ok_parts = 0;
        }
    }
    CHECKF(ok_rows && seg + 1 == (f.nnz ? f.nseg : 1), "%s mode %u: segments", what, mode);
    CHECKF(ok_sorted, "%s mode %u: head bits do not mark output-index changes", what, mode);
    CHECKF(ok_parts, "%s mode %u: start flags / partition segments", what, mode);
    CHECK(f.nparts == (f.nnz + part - 1) / part);
    for (uint64_t i = 1; i < f.nseg; ++i)
        if (f.seg_row[i] <= f.seg_row[i - 1]) { CHECKF(0, "%s: segment rows not increasing", what); break; }
    CHECK_OK(tf_tensor_sort(&Y, NULL));
    CHECKF(same_nonzeros(X, &Y), "%s mode %u: F-COO does not hold the original non-zeros", what, mode);
    CHECK(tf_fcoo_bytes(&f, 8) <= tf_fcoo_bytes_estimate(X, mode, part, 8));
    tf_tensor_free(&Y);
    tf_fcoo_free(&f);
}

/* Re-cutting a copy built with partitions of 32 gives the flags a direct
 * build with `part` gives. */
static void check_fcoo_repartition(const tf_tensor *X, uint32_t mode, uint32_t part, const char *what)
{
    tf_fcoo a, b;
    CHECK_OK(tf_fcoo_build(X, mode, 32, &a));
    CHECK_OK(tf_fcoo_build(X, mode, part, &b));
    CHECK_OK(tf_fcoo_repartition(&a, part));
    int same = a.part_nnz == b.part_nnz && a.nparts == b.nparts && a.nseg == b.nseg;
    for (uint64_t p = 0; same && p < a.nparts; ++p)
        same = tf_fcoo_start(&a, p) == tf_fcoo_start(&b, p) && a.part_seg[p] == b.part_seg[p];
    CHECKF(same, "%s mode %u: repartition 32 -> %u differs from a direct build", what, mode, part);
    CHECK(tf_fcoo_repartition(&a, 48) == TF_ERR_ARG);
    tf_fcoo_free(&a);
    tf_fcoo_free(&b);
}

/* tf_fcoo_zero_rows against a brute force over the non-zeros: a row must
 * be cleared when no non-zero has it or its non-zeros lie in more than
 * one partition. */
static void check_fcoo_zero_rows(const tf_tensor *X, uint32_t mode, uint32_t part, const char *what)
{
    tf_fcoo f;
    CHECK_OK(tf_fcoo_build(X, mode, part, &f));
    const uint64_t len = X->dims[mode];
    uint32_t *rows = NULL;
    uint64_t n = 0;
    /* a mode of 2^32 rows: too many to list */
    CHECK_OK(tf_fcoo_zero_rows(&f, 1u << 20, &rows, &n));
    if (len > (1u << 20)) {
        CHECKF(!rows && n > (1u << 20), "%s mode %u: %llu rows to clear listed", what, mode,
               (unsigned long long)n);
        tf_free(rows);
        tf_fcoo_free(&f);
        return;
    }
    int64_t *lo = calloc(len, sizeof *lo), *hi = calloc(len, sizeof *hi);
    if (lo && hi) {
        for (uint64_t r = 0; r < len; ++r) lo[r] = hi[r] = -1;
        uint64_t seg = 0;
        for (uint64_t k = 0; k < f.nnz; ++k) {
            if (k > 0 && ((f.head[k >> 5] >> (k & 31)) & 1u)) ++seg;
            const uint64_t r = f.seg_row[seg];
            const int64_t p = (int64_t)(k / f.part_nnz);
            if (lo[r] < 0) lo[r] = p;
            hi[r] = p;
        }
        uint64_t k = 0;
        int same = 1;
        for (uint64_t r = 0; r < len && same; ++r) {
            const int need = lo[r] < 0 || lo[r] != hi[r];
            if (need) same = k < n && rows[k++] == r;
        }
        same = same && k == n;
        CHECKF(same, "%s mode %u part %u: F-COO rows to clear differ from a brute force", what, mode, part);
    }
    free(lo);
    free(hi);
    tf_free(rows);
    tf_fcoo_free(&f);
}

static void run_case(tt_spec sp, uint64_t max_block, const char *what)
{
    tf_tensor X;
    tf_status s = tt_random(&sp, &X);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    if (s != TF_OK) return;
    check_blco(&X, max_block, what);
    const uint32_t parts[] = {32, 64, 96};
    for (uint32_t m = 0; m < X.order; ++m)
        for (unsigned p = 0; p < 3; ++p) {
            check_fcoo(&X, m, parts[p], what);
            check_fcoo_repartition(&X, m, parts[p] * 11, what);
            check_fcoo_zero_rows(&X, m, parts[p], what);
        }
    tf_tensor_free(&X);
}

int main(void)
{
    const uint64_t small[] = {10, 20, 30};
    run_case(tt_spec_make(3, small, 500, 1), 0, "3-mode small");
    run_case(tt_spec_make(3, small, 500, 2), 7, "3-mode small, blocks of 7");

    const uint64_t thin[] = {1, 7};
    run_case(tt_spec_make(2, thin, 5, 3), 0, "2-mode with a mode of length 1");

    const uint64_t mixed[] = {3, 1000, 2, 70000, 17};
    run_case(tt_spec_make(5, mixed, 5000, 4), 64, "5-mode mixed, blocks of 64");

    const uint64_t big4[] = {1u << 20, 1u << 20, 1u << 20, 1u << 20};
    run_case(tt_spec_make(4, big4, 3000, 5), 0, "4 x 2^20 (80 bits)");
    run_case(tt_spec_make(4, big4, 3000, 6), 3, "4 x 2^20 (80 bits), blocks of 3");

    const uint64_t huge3[] = {1ULL << 32, 1ULL << 32, 1ULL << 32};
    run_case(tt_spec_make(3, huge3, 2000, 7), 0, "3 x 2^32 (96 bits)");

    uint64_t huge8[8];
    for (int m = 0; m < 8; ++m) huge8[m] = m % 2 ? 1ULL << 32 : 3000000000ULL;
    run_case(tt_spec_make(8, huge8, 400, 8), 0, "8-mode near 2^32 (256 bits)");

    const uint64_t d64[] = {1ULL << 32, 1ULL << 32};
    run_case(tt_spec_make(2, d64, 1000, 9), 0, "2 x 2^32 (exactly 64 bits)");

    tt_spec hot = tt_spec_make(3, small, 4000, 10);
    hot.hot_mode = 1; hot.hot_row = 13; hot.hot_share = 0.5;
    hot.sparse_mode = 2;
    run_case(hot, 0, "skewed with empty slices");

    tt_spec none = tt_spec_make(3, small, 0, 11);
    run_case(none, 0, "no non-zeros");

    /* enough segments and partitions for the rows to clear to be found by
     * several threads: long modes, a hot row (a segment across many
     * partitions), empty slices */
    const uint64_t longer[] = {150000, 3000, 90000};
    tt_spec many = tt_spec_make(3, longer, 200000, 12);
    many.hot_mode = 0; many.hot_row = 77777; many.hot_share = 0.2;
    many.sparse_mode = 2;
    run_case(many, 0, "long modes, a hot row, empty slices");

    /* Argument checks. */
    tf_tensor X;
    CHECK_OK(tt_random(&hot, &X));
    tf_fcoo f;
    CHECK(tf_fcoo_build(&X, 0, 48, &f) == TF_ERR_ARG);
    CHECK(tf_fcoo_build(&X, 3, 64, &f) == TF_ERR_ARG);
    tf_tensor_free(&X);
    return tf_test_finish("test_fmt_gpu_builders");
}
