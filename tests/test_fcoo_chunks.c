/* SPDX-License-Identifier: BSD-3-Clause */
/* Chunked F-COO copies for streaming (fmt/fcoo_chunks.h), on the CPU:
 * every chunk's arrays equal the slices of the copy it was cut from
 * (product indices decoded from their packed keys, values converted to
 * float where asked and decoded from their packed fields), the arrays are
 * aligned, chunks lie back to back, the last chunk holds the remainder,
 * keys are packed exactly when the product modes' bits fit 64 (and packing
 * is asked), with the high parts' bits packed back to back; values are
 * packed in the bits expected for counts, quarters, one repeated value and
 * uniform doubles, and stay as they are for -0, NaN, infinities, tiny
 * scales and magnitudes too far apart (and in fp32 for uniform values);
 * the fields are read back bit by bit and with tf_fcoo_field (the device's
 * decoder); bad arguments are refused. */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "fmt/fcoo_chunks.h"
#include "gpu_test_tensors.h"

/* Bits to write 0..n-1, and the key layout expected for f. */
static uint32_t bits_of(uint64_t n)
{
    uint32_t b = 0;
    while (n > 1 && b < 64 && ((n - 1) >> b)) ++b;
    return b;
}

/* Index j of non-zero q of chunk b (layout lay) of k. */
static uint32_t index_of(const tf_fcoo_chunks *k, const tf_fcoo_chunk_layout *lay, const unsigned char *b,
                         uint32_t j, uint64_t q)
{
    if (!k->packed) return ((const uint32_t *)(b + lay->pind[j]))[q];
    uint64_t key = ((const uint32_t *)(b + lay->lo))[q];
    const unsigned char *hi = b + lay->hi; /* bit by bit, little-endian words */
    for (uint32_t t = 0; t < k->hi_bits; ++t) {
        const uint64_t bit = q * k->hi_bits + t;
        key |= (uint64_t)((hi[bit / 8] >> (bit % 8)) & 1u) << (32 + t);
    }
    const uint64_t mask = k->bits[j] >= 64 ? ~0ull : (1ull << k->bits[j]) - 1;
    return (uint32_t)((key >> k->shift[j]) & mask);
}

/* Field q (`bits` wide) of words w, bit by bit. */
static uint64_t field_of(const unsigned char *w, uint64_t q, uint32_t bits)
{
    uint64_t x = 0;
    for (uint32_t t = 0; t < bits; ++t) {
        const uint64_t bit = q * bits + t;
        x |= (uint64_t)((w[bit / 8] >> (bit % 8)) & 1u) << t;
    }
    return x;
}

/* Value q of chunk b (layout lay) of k, widened to double. */
static double value_of(const tf_fcoo_chunks *k, const tf_fcoo_chunk_layout *lay, const unsigned char *b, uint64_t q,
                       int *field_ok)
{
    if (!k->vcode.vbits)
        return k->value_bytes == 8 ? ((const double *)(b + lay->vals))[q] : ((const float *)(b + lay->vals))[q];
    const uint64_t x = field_of(b + lay->vals, q, k->vcode.vbits);
    *field_ok &= tf_fcoo_field((const uint32_t *)(b + lay->vals), q, k->vcode.vbits) == x;
    return ldexp((double)((int64_t)x + k->vcode.min), k->vcode.exp);
}

/* The chunks planned from the copy's shape (tf_fcoo_chunks_plan) are k's,
 * and the streamed engine's fill of chunks [c0, nchunks) alone (the rest
 * resident) gives k's bytes of those chunks, for c0 at the start, the
 * middle and the end. The buffer is poisoned first: padding must be zeroed. */
static void check_plan(const tf_fcoo *f, const tf_fcoo_chunks *k, uint64_t chunk_parts, uint32_t vb, int pack,
                       const tf_fcoo_value_code *vc, const char *what)
{
    tf_fcoo_chunks p;
    tf_status s = tf_fcoo_chunks_plan(f->order, f->dims, f->pmodes, f->nnz, f->part_nnz, chunk_parts, vb, pack, vc, &p);
    CHECKF(s == TF_OK, "%s: plan: %s", what, tf_last_error());
    if (s != TF_OK) return;
    int same = p.data == NULL && p.nchunks == k->nchunks && p.nparts == k->nparts && p.packed == k->packed &&
               p.hi_bits == k->hi_bits && p.max_bytes == k->max_bytes && !memcmp(&p.vcode, &k->vcode, sizeof p.vcode);
    for (uint64_t c = 0; same && c <= k->nchunks; ++c) same &= p.off[c] == k->off[c] && p.part_off[c] == k->part_off[c];
    CHECKF(same, "%s: the planned chunks (vb %u, pack %d, %llu partitions a chunk) are not the packed ones", what, vb,
           pack, (unsigned long long)chunk_parts);
    const uint64_t firsts[] = {0, k->nchunks / 2, k->nchunks};
    for (int i = 0; same && i < 3; ++i) {
        const uint64_t c0 = firsts[i], bytes = k->off[k->nchunks] - k->off[c0];
        unsigned char *buf = malloc(bytes + 1);
        memset(buf, 0xa5, bytes + 1);
        p.first = c0;
        p.data = buf;
        tf_fcoo_chunks_fill_range(f, &p, c0, p.nchunks, buf);
        int ok = memcmp(buf, k->data + k->off[c0], bytes) == 0 && buf[bytes] == 0xa5;
        for (uint64_t c = c0; c < p.nchunks; ++c) ok &= tf_fcoo_chunk_data(&p, c) == buf + (k->off[c] - k->off[c0]);
        CHECKF(ok, "%s: chunks %llu.. of %llu filled alone differ from the packed ones (vb %u, pack %d)", what,
               (unsigned long long)c0, (unsigned long long)k->nchunks, vb, pack);
        free(buf);
        p.data = NULL;
    }
    tf_fcoo_chunks_free(&p);
}

static void check_pack(const tf_fcoo *f, uint64_t chunk_parts, uint32_t vb, int pack, const char *what)
{
    tf_fcoo_chunks k;
    tf_status s = tf_fcoo_chunks_pack(f, chunk_parts, vb, pack, &k);
    CHECKF(s == TF_OK, "%s: pack: %s", what, tf_last_error());
    if (s != TF_OK) return;
    /* chunk_parts each, the last one the rest */
    int cuts_ok = k.part_off[0] == 0 && k.nchunks == (f->nparts + chunk_parts - 1) / chunk_parts;
    for (uint64_t c = 0; c < k.nchunks; ++c)
        cuts_ok &= k.part_off[c + 1] - k.part_off[c] == (c + 1 < k.nchunks ? chunk_parts : f->nparts - c * chunk_parts);
    CHECKF(cuts_ok, "%s: %llu chunks of nominally %llu partitions (of %llu) are cut wrong", what,
           (unsigned long long)k.nchunks, (unsigned long long)chunk_parts, (unsigned long long)f->nparts);
    uint32_t total = 0;
    for (uint32_t j = 0; j + 1 < f->order; ++j) total += bits_of(f->dims[f->pmodes[j]]);
    const uint32_t want_hi = total > 32 ? total - 32 : 0;
    CHECKF(k.packed == ((pack & TF_FCOO_PACK_KEYS) && total <= 64 && total < 32 * (f->order - 1)) &&
               (!k.packed || k.hi_bits == want_hi),
           "%s: %u key bits, pack %d: packed %d with %u high bits", what, total, pack, k.packed, k.hi_bits);
    tf_fcoo_value_code vc;
    tf_fcoo_value_code_of(f->vals, f->nnz, vb, &vc);
    CHECKF((pack & TF_FCOO_PACK_VALUES ? !memcmp(&vc, &k.vcode, sizeof vc) : k.vcode.vbits == 0) &&
               k.vcode.vbits < 8 * vb,
           "%s: pack %d, values of %u bytes: %u bits (code of the values: %u)", what, pack, vb, k.vcode.vbits,
           vc.vbits);
    uint64_t nnz = 0, parts = 0, maxb = 0;
    int bad = 0;
    for (uint64_t c = 0; c < k.nchunks && !bad; ++c) {
        tf_fcoo_chunk_layout lay;
        tf_fcoo_chunk_layout_of(&k, c, &lay);
        const unsigned char *b = k.data + k.off[c];
        const uint64_t p0 = k.part_off[c], n0 = p0 * f->part_nnz;
        bad |= n0 != nnz || p0 != parts || k.off[c + 1] - k.off[c] != lay.bytes;
        bad |= (k.off[c] | lay.lo | lay.hi | lay.vals | lay.head | lay.start | lay.part_seg) % TF_FCOO_CHUNK_ALIGN != 0;
        for (uint32_t j = 0; j + 1 < f->order; ++j) {
            bad |= lay.pind[j] % TF_FCOO_CHUNK_ALIGN != 0;
            for (uint64_t q = 0; q < lay.nnz; ++q) bad |= index_of(&k, &lay, b, j, q) != f->pind[j][n0 + q];
        }
        int field_ok = 1;
        for (uint64_t q = 0; q < lay.nnz; ++q) {
            const double want = vb == 8 ? f->vals[n0 + q] : (double)(float)f->vals[n0 + q];
            const double got = value_of(&k, &lay, b, q, &field_ok);
            bad |= !(got == want && !signbit(got) == !signbit(want)) && !(isnan(got) && isnan(want));
        }
        bad |= !field_ok;
        /* head bits of the chunk's non-zeros, start bits of its partitions */
        const uint32_t *h = (const uint32_t *)(b + lay.head), *st = (const uint32_t *)(b + lay.start);
        for (uint64_t q = 0; q < lay.nnz; ++q) bad |= (int)((h[q / 32] >> (q % 32)) & 1u) != tf_fcoo_head(f, n0 + q);
        for (uint64_t q = 0; q < lay.parts; ++q) bad |= (int)((st[q / 32] >> (q % 32)) & 1u) != tf_fcoo_start(f, p0 + q);
        bad |= memcmp(b + lay.part_seg, f->part_seg + p0, lay.parts * 4) != 0;
        bad |= lay.parts != k.part_off[c + 1] - p0 ||
               (c + 1 < k.nchunks && lay.nnz != lay.parts * f->part_nnz);
        nnz += lay.nnz;
        parts += lay.parts;
        if (lay.bytes > maxb) maxb = lay.bytes;
        CHECKF(!bad, "%s: chunk %llu of %llu (vb %u, %llu partitions per chunk) differs from the copy", what,
               (unsigned long long)c, (unsigned long long)k.nchunks, vb, (unsigned long long)chunk_parts);
    }
    CHECKF(bad || (nnz == f->nnz && parts == f->nparts && maxb == k.max_bytes),
           "%s: chunks cover %llu of %llu non-zeros, %llu of %llu partitions", what, (unsigned long long)nnz,
           (unsigned long long)f->nnz, (unsigned long long)parts, (unsigned long long)f->nparts);
    tf_fcoo_chunk_layout pl;
    CHECK(tf_fcoo_chunk_plain(f->order, vb, chunk_parts * f->part_nnz, chunk_parts, &pl) >= k.max_bytes);
    check_plan(f, &k, chunk_parts, vb, pack, (pack & TF_FCOO_PACK_VALUES) ? &vc : NULL, what);
    tf_fcoo_chunks_free(&k);
}

static void check_tensor(tt_spec sp, const char *what)
{
    tf_tensor X;
    CHECK_OK(tt_random(&sp, &X));
    const uint32_t parts[] = {32, 96, 256};
    const uint64_t cps[] = {32, 64, 96, 1u << 20};
    for (uint32_t m = 0; m < X.order; ++m)
        for (unsigned pi = 0; pi < 3; ++pi) {
            tf_fcoo f;
            CHECK_OK(tf_fcoo_build(&X, m, parts[pi], &f));
            for (unsigned ci = 0; ci < 4; ++ci)
                for (int pack = 0; pack < 4; ++pack) {
                    check_pack(&f, cps[ci], 8, pack, what);
                    check_pack(&f, cps[ci], 4, pack, what);
                }
            tf_fcoo_free(&f);
        }
    tf_tensor_free(&X);
}

/* Value sets: the code expected in fp64 and fp32 (vbits 0: values as
 * they are; vbits -1: packed, in fewer bits than the type) */
typedef struct value_case {
    const char *name;
    int vbits[2], exp;  /* [fp64, fp32]; exp and min where both are packed */
    int64_t min;
} value_case;

static double value_for(int c, uint64_t z)
{
    switch (c) {
    case 0: return (double)(1 + (z * 7919) % 1000);              /* counts 1..1000 */
    case 1: return 0.25 * (double)((int64_t)(z % 41) - 20);      /* quarters -5..5, zero included */
    case 2: return 3.5;                                          /* one value */
    case 3: return z == 17 ? -0.0 : (double)(1 + z % 9);         /* a negative zero */
    case 4: return z == 5 ? NAN : 1.0;
    case 5: return z == 5 ? INFINITY : 1.0;
    case 6: return z % 2 ? 1e-310 : 1.0;                         /* a scale below the normal numbers */
    case 7: return z % 2 ? 1e-30 : 1e30;                         /* magnitudes 2^199 apart */
    case 8: return z % 2 ? 0x1p-126 : 1.0;                       /* fp64: 127 bits apart; fp32 too */
    default: return (double)(z % 3) * 0x1p-60 + 0x1p-40;         /* 3 values: 2 bits above the smallest */
    }
}

static const value_case value_cases[] = {
    {"counts 1..1000", {10, 10}, 0, 1},
    {"quarters -5..5", {6, 6}, -2, -20},
    {"one value", {1, 1}, -1, 7},
    {"a negative zero", {0, 0}, 0, 0},
    {"a NaN", {0, 0}, 0, 0},
    {"an infinity", {0, 0}, 0, 0},
    {"subnormal values (zeros as floats)", {0, 1}, 0, 0},
    {"1e-30 and 1e30", {0, 0}, 0, 0},
    {"2^-126 and 1", {0, 0}, 0, 0},
    {"3 values 2^-60 apart above 2^-40", {2, 2}, -60, 1 << 20},
};

/* A random 3-mode tensor (tt_random). */
static void random3(uint64_t d0, uint64_t d1, uint64_t d2, uint64_t nnz, uint64_t seed, tf_tensor *X)
{
    const uint64_t dims[] = {d0, d1, d2};
    tt_spec sp = tt_spec_make(3, dims, nnz, seed);
    CHECK_OK(tt_random(&sp, X));
}

static void check_values(void)
{
    tf_tensor X;
    random3(300, 200, 100, 5000, 12, &X);
    /* tt_random's values, uniform in [-1, 1): multiples of 2^-52, 53 bits in
     * fp64; as floats of every scale: unpacked */
    tf_fcoo_value_code vc;
    tf_fcoo_value_code_of(X.vals, X.nnz, 8, &vc);
    CHECKF(vc.vbits == 53 && vc.exp == -52, "uniform [-1, 1) in fp64: %u bits, exp %d", vc.vbits, vc.exp);
    tf_fcoo_value_code_of(X.vals, X.nnz, 4, &vc);
    CHECKF(vc.vbits == 0, "uniform [-1, 1) in fp32: %u bits", vc.vbits);
    tf_fcoo_value_code_of(X.vals, 0, 8, &vc);
    CHECKF(vc.vbits == 0, "no values: %u bits", vc.vbits);
    for (unsigned c = 0; c < sizeof value_cases / sizeof value_cases[0]; ++c) {
        const value_case *vcase = &value_cases[c];
        for (uint64_t z = 0; z < X.nnz; ++z) X.vals[z] = value_for((int)c, z);
        for (int t = 0; t < 2; ++t) {
            const uint32_t vb = t ? 4 : 8;
            tf_fcoo_value_code_of(X.vals, X.nnz, vb, &vc);
            const int want = vcase->vbits[t];
            int ok = want < 0 ? vc.vbits > 0 && vc.vbits < 8 * vb : (int)vc.vbits == want;
            if (want > 0 && c != 2) ok &= vc.exp == vcase->exp && vc.min == vcase->min;
            if (c == 2) ok &= ldexp((double)vc.min, vc.exp) == 3.5; /* one value: any exact code */
            CHECKF(ok, "values %s in fp%d: %u bits, exp %d, min %lld (want %d bits)", vcase->name, t ? 32 : 64,
                   vc.vbits, vc.exp, (long long)vc.min, want);
        }
        tf_fcoo f;
        CHECK_OK(tf_fcoo_build(&X, 1, 32, &f));
        const uint64_t cps[] = {32, 1u << 20};
        for (unsigned ci = 0; ci < 2; ++ci)
            for (int pack = 2; pack < 4; ++pack) {
                check_pack(&f, cps[ci], 8, pack, vcase->name);
                check_pack(&f, cps[ci], 4, pack, vcase->name);
            }
        tf_fcoo_free(&f);
    }
    tf_tensor_free(&X);
}

static void bad_arguments(void)
{
    tf_tensor X;
    random3(10, 10, 10, 200, 9, &X);
    tf_fcoo f;
    CHECK_OK(tf_fcoo_build(&X, 0, 32, &f));
    tf_fcoo_chunks k;
    CHECK(tf_fcoo_chunks_pack(&f, 0, 8, 1, &k) == TF_ERR_ARG && strstr(tf_last_error(), "multiple of 32"));
    CHECK(tf_fcoo_chunks_pack(&f, 33, 8, 1, &k) == TF_ERR_ARG);
    CHECK(tf_fcoo_chunks_pack(&f, 32, 2, 1, &k) == TF_ERR_ARG && strstr(tf_last_error(), "values of 2 bytes"));
    tf_fcoo_free(&f);
    tf_tensor_free(&X);
}

int main(void)
{
    const uint64_t d3[] = {300, 200, 100};
    check_tensor(tt_spec_make(3, d3, 40000, 1), "3-mode");
    tt_spec hot = tt_spec_make(3, d3, 30000, 2);
    hot.hot_mode = 0; hot.hot_row = 5; hot.hot_share = 0.6; hot.sparse_mode = 1;
    check_tensor(hot, "skewed with empty slices");
    const uint64_t d5[] = {9, 8, 7, 6, 5};
    check_tensor(tt_spec_make(5, d5, 9000, 3), "5-mode");
    const uint64_t d2[] = {500, 400};
    check_tensor(tt_spec_make(2, d2, 5000, 4), "2-mode");
    check_tensor(tt_spec_make(3, d3, 1, 5), "one non-zero");
    /* key widths: 40 bits (8 high bits), 48 (16), 64 of two modes (plain: no saving), 64 of
     * three (32), 66 (plain); 3-mode d3 has 17 */
    const uint64_t w40[] = {1u << 20, 1u << 20, 5};
    check_tensor(tt_spec_make(3, w40, 3000, 6), "40-bit keys");
    const uint64_t w48[] = {1u << 24, 1u << 24, 3};
    check_tensor(tt_spec_make(3, w48, 3000, 7), "48-bit keys");
    const uint64_t w64[] = {7, 1ull << 32, 1ull << 32};
    check_tensor(tt_spec_make(3, w64, 3000, 8), "64-bit keys");
    const uint64_t w64b[] = {3, 1u << 21, 1u << 21, 1u << 22};
    check_tensor(tt_spec_make(4, w64b, 3000, 10), "64-bit keys of three modes (32 high bits)");
    const uint64_t w66[] = {5, 1u << 22, 1u << 22, 1u << 22};
    check_tensor(tt_spec_make(4, w66, 3000, 9), "66-bit keys (plain)");
    check_values();
    bad_arguments();
    return tf_test_finish("test_fcoo_chunks");
}
