/* SPDX-License-Identifier: BSD-3-Clause */
/* A mode's streamed chunks made piece by piece (src/fmt/fcoo_pieces.c)
 * against the whole copy's (tf_fcoo_build + tf_fcoo_chunks_pack): the
 * streamed chunks byte for byte (the buffer poisoned first), every
 * resident range equal to the copy's arrays there and the ranges in order
 * without gaps, the segment rows, start bits and partition segments, and
 * the rows to clear. Pieces of 1 non-zero (every row its own, carries
 * across many pieces), a few, and one; chunks of 32 partitions and more;
 * none, some and all chunks resident; every mode; orders 2-5, a hot row
 * with empty slices, one non-zero, none; fp64 and fp32, packed or not. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/alloc.h"
#include "fmt/fcoo.h"
#include "fmt/fcoo_chunks.h"
#include "fmt/fcoo_pieces.h"
#include "gpu_test_tensors.h"

typedef struct sink {
    const tf_fcoo *f;
    uint64_t next_n, next_p; /* where the next range must begin */
    int bad, calls;
} sink;

static tf_status take(void *user, const tf_fcoo_range *r)
{
    sink *s = user;
    const tf_fcoo *f = s->f;
    s->calls++;
    int bad = r->n0 != s->next_n || r->p0 != s->next_p || r->n0 % 32 || r->p0 % 32;
    bad |= r->nnz > f->nnz - r->n0 || r->parts > f->nparts - r->p0;
    if (!bad) {
        for (uint32_t j = 0; j + 1 < f->order; ++j)
            bad |= memcmp(r->pind[j], f->pind[j] + r->n0, r->nnz * 4) != 0;
        bad |= memcmp(r->vals, f->vals + r->n0, r->nnz * 8) != 0;
        bad |= memcmp(r->head, f->head + r->n0 / 32, (r->nnz + 31) / 32 * 4) != 0;
        bad |= memcmp(r->start, f->start + r->p0 / 32, (r->parts + 31) / 32 * 4) != 0;
        bad |= memcmp(r->part_seg, f->part_seg + r->p0, r->parts * 4) != 0;
    }
    s->bad |= bad;
    s->next_n = r->n0 + r->nnz;
    s->next_p = r->p0 + r->parts;
    return TF_OK;
}

static void check_zero_rows(const tf_fcoo *f, const tf_fcoo *meta, const char *what)
{
    const uint64_t maxes[] = {0, 3, f->dims[f->mode]};
    for (int i = 0; i < 3; ++i) {
        uint32_t *a = NULL, *b = NULL;
        uint64_t na = 0, nb = 0;
        CHECK_OK(tf_fcoo_zero_rows(f, maxes[i], &a, &na));
        CHECK_OK(tf_fcoo_zero_rows(meta, maxes[i], &b, &nb));
        CHECKF(na == nb && (!a) == (!b) && (!a || !memcmp(a, b, na * 4)), "%s: rows to clear (max %llu): %llu vs %llu",
               what, (unsigned long long)maxes[i], (unsigned long long)na, (unsigned long long)nb);
        tf_free(a);
        tf_free(b);
    }
}

/* One mode, chunking, value type, packing and piece size. */
static void check_one(const tf_tensor *X, uint32_t mode, uint32_t part_nnz, uint64_t cp, uint32_t vb, int pack,
                      uint64_t piece_nnz, const char *name)
{
    char what[256];
    snprintf(what, sizeof what, "%s mode %u part %u chunk %llu vb %u pack %d pieces of %llu", name, mode + 1,
             part_nnz, (unsigned long long)cp, vb, pack, (unsigned long long)piece_nnz);
    tf_fcoo f;
    CHECK_OK(tf_fcoo_build(X, mode, part_nnz, &f));
    tf_fcoo_chunks ref;
    CHECK_OK(tf_fcoo_chunks_pack(&f, cp, vb, pack, &ref));
    tf_fcoo_value_code vc;
    memset(&vc, 0, sizeof vc);
    if (pack & TF_FCOO_PACK_VALUES) tf_fcoo_value_code_of(X->vals, X->nnz, vb, &vc);
    const uint64_t firsts[] = {0, ref.nchunks / 3, ref.nchunks};
    for (int i = 0; i < 3; ++i) {
        tf_fcoo_chunks k;
        CHECK_OK(tf_fcoo_chunks_plan(X->order, X->dims, f.pmodes, X->nnz, part_nnz, cp, vb, pack, &vc, &k));
        k.first = firsts[i];
        const uint64_t bytes = k.off[k.nchunks] - k.off[k.first];
        const int given = i != 1; /* the middle case: the builder allocates the bytes */
        if (given) {
            k.data = malloc(bytes + 1);
            memset(k.data, 0x5a, bytes + 1);
        }
        sink s = {&f, 0, 0, 0, 0};
        tf_fcoo meta;
        tf_status st = tf_fcoo_chunks_build(X, mode, &k, piece_nnz, take, &s, &meta);
        CHECKF(st == TF_OK, "%s first %llu: %s", what, (unsigned long long)k.first, tf_last_error());
        if (st == TF_OK) {
            CHECKF((bytes == 0 || k.data) && (!bytes || !memcmp(k.data, ref.data + ref.off[k.first], bytes)) &&
                       (!given || k.data[bytes] == 0x5a),
                   "%s: streamed chunks %llu.. of %llu differ", what, (unsigned long long)k.first,
                   (unsigned long long)k.nchunks);
            const uint64_t want_n = k.first ? (k.part_off[k.first] * part_nnz < X->nnz ? k.part_off[k.first] * part_nnz
                                                                                       : X->nnz)
                                            : 0;
            CHECKF(!s.bad && s.next_n == want_n && s.next_p == k.part_off[k.first] && (k.first > 0) == (s.calls > 0),
                   "%s: resident ranges (%d calls) differ or end at %llu of %llu", what, s.calls,
                   (unsigned long long)s.next_n, (unsigned long long)want_n);
            CHECKF(meta.nseg == f.nseg && !memcmp(meta.seg_row, f.seg_row, f.nseg * 4) &&
                       !memcmp(meta.part_seg, f.part_seg, f.nparts * 4) &&
                       !memcmp(meta.start, f.start, (f.nparts + 31) / 32 * 4),
                   "%s: segments (%llu vs %llu), start bits or partition segments differ", what,
                   (unsigned long long)meta.nseg, (unsigned long long)f.nseg);
            if (i == 0) check_zero_rows(&f, &meta, what);
            tf_fcoo_free(&meta);
        }
        if (given) {
            free(k.data);
            k.data = NULL;
        }
        tf_fcoo_chunks_free(&k); /* frees what the builder allocated */
    }
    tf_fcoo_chunks_free(&ref);
    tf_fcoo_free(&f);
}

static void check_tensor(tt_spec sp, const char *name)
{
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    const uint64_t pieces[] = {1, X.nnz / 7 + 1, X.nnz + 1};
    for (uint32_t m = 0; m < X.order; ++m)
        for (int p = 0; p < 3; ++p) {
            check_one(&X, m, 32, 32, 8, 3, pieces[p], name);
            check_one(&X, m, 64, 96, 4, 2, pieces[p], name);
            if (p == 1) check_one(&X, m, 32, 1u << 20, 8, 0, pieces[p], name);
        }
    tf_tensor_free(&X);
}

static void bad_plan(void)
{
    const uint64_t d[] = {30, 20, 10};
    tt_spec sp = tt_spec_make(3, d, 500, 9);
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    tf_fcoo_chunks k;
    const uint32_t pm[] = {1, 2};
    CHECK_OK(tf_fcoo_chunks_plan(3, X.dims, pm, X.nnz + 1, 32, 32, 8, 0, NULL, &k));
    tf_fcoo meta;
    CHECK(tf_fcoo_chunks_build(&X, 0, &k, 100, NULL, NULL, &meta) == TF_ERR_ARG &&
          strstr(tf_last_error(), "planned for"));
    tf_fcoo_chunks_free(&k);
    tf_tensor_free(&X);
}

int main(void)
{
    const uint64_t d3[] = {300, 200, 100};
    check_tensor(tt_spec_make(3, d3, 20000, 1), "3-mode");
    tt_spec hot = tt_spec_make(3, d3, 15000, 2);
    hot.hot_mode = 0;
    hot.hot_row = 5;
    hot.hot_share = 0.6;
    hot.sparse_mode = 1;
    check_tensor(hot, "skewed with empty slices");
    const uint64_t d5[] = {9, 8, 7, 6, 5};
    check_tensor(tt_spec_make(5, d5, 4000, 3), "5-mode");
    const uint64_t d2[] = {500, 400};
    check_tensor(tt_spec_make(2, d2, 3000, 4), "2-mode");
    check_tensor(tt_spec_make(3, d3, 1, 5), "one non-zero");
    const uint64_t big[] = {200000, 3, 7}; /* more than 2^16 rows: blocks of several rows */
    check_tensor(tt_spec_make(3, big, 5000, 6), "long mode");
    bad_plan();
    return tf_test_finish("test_fcoo_pieces");
}
