/* SPDX-License-Identifier: BSD-3-Clause */
/* Chunked F-COO copies for streaming (fcoo_chunks.h). */
#include "fmt/fcoo_chunks.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

static uint64_t align_up(uint64_t x) { return (x + TF_FCOO_CHUNK_ALIGN - 1) / TF_FCOO_CHUNK_ALIGN * TF_FCOO_CHUNK_ALIGN; }

/* Words of nnz fields of `bits` bits each, and a spare one (0 without fields). */
static uint64_t field_words(uint64_t nnz, uint32_t bits) { return bits ? (nnz * bits + 31) / 32 + 1 : 0; }

/* Field q (`bits` bits, value v < 2^bits) into words w, which are zeroed
 * where it goes: bits are OR-ed in (tf_fcoo_field reads it back). */
static void put_field(uint32_t *w, uint64_t q, uint32_t bits, uint64_t v)
{
    const uint64_t at = q * bits, i = at >> 5;
    const uint32_t sh = (uint32_t)(at & 31);
    w[i] |= (uint32_t)(v << sh);
    if (sh + bits > 32) w[i + 1] |= (uint32_t)(v >> (32 - sh));
    if (sh + bits > 64) w[i + 2] |= (uint32_t)(v >> (64 - sh));
}

/* The arrays after the indices, from byte `at`: values of vb bytes, or
 * fields of vbits bits where vbits > 0. */
static void tail(uint32_t vb, uint32_t vbits, uint64_t at, tf_fcoo_chunk_layout *lay)
{
    lay->vals = at;
    at = align_up(at + (vbits ? field_words(lay->nnz, vbits) * sizeof(uint32_t) : lay->nnz * vb));
    lay->head = at;
    at = align_up(at + (lay->nnz + 31) / 32 * sizeof(uint32_t));
    lay->start = at;
    at = align_up(at + (lay->parts + 31) / 32 * sizeof(uint32_t));
    lay->part_seg = at;
    lay->bytes = align_up(at + lay->parts * sizeof(uint32_t));
}

uint64_t tf_fcoo_chunk_plain(uint32_t order, uint32_t value_bytes, uint64_t nnz, uint64_t parts,
                             tf_fcoo_chunk_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    lay->nnz = nnz;
    lay->parts = parts;
    uint64_t at = 0;
    for (uint32_t j = 0; j + 1 < order; ++j) {
        lay->pind[j] = at;
        at = align_up(at + nnz * sizeof(uint32_t));
    }
    tail(value_bytes, 0, at, lay);
    return lay->bytes;
}

/* The layout of a chunk as stored (packed keys or plain indices, values
 * as T or packed). */
static void stored_layout(const tf_fcoo_chunks *k, uint64_t nnz, uint64_t parts, tf_fcoo_chunk_layout *lay)
{
    memset(lay, 0, sizeof *lay);
    lay->nnz = nnz;
    lay->parts = parts;
    uint64_t at = 0;
    if (k->packed) {
        lay->lo = 0;
        lay->hi = align_up(nnz * sizeof(uint32_t));
        at = align_up(lay->hi + field_words(nnz, k->hi_bits) * sizeof(uint32_t));
    } else {
        for (uint32_t j = 0; j + 1 < k->order; ++j) {
            lay->pind[j] = at;
            at = align_up(at + nnz * sizeof(uint32_t));
        }
    }
    tail(k->value_bytes, k->vcode.vbits, at, lay);
}

void tf_fcoo_chunk_layout_of(const tf_fcoo_chunks *k, uint64_t c, tf_fcoo_chunk_layout *lay)
{
    const uint64_t p0 = k->part_off[c];
    const uint64_t parts = k->part_off[c + 1] - p0;
    const uint64_t n0 = p0 * k->part_nnz;
    const uint64_t span = parts * k->part_nnz;
    const uint64_t nnz = k->nnz - n0 < span ? k->nnz - n0 : span;
    stored_layout(k, nnz, parts, lay);
}

static uint32_t bits_for(uint64_t n) /* bits to write 0..n-1 */
{
    uint32_t b = 0;
    while (b < 64 && n > 1 && ((n - 1) >> b)) ++b;
    return b;
}

/* The key layout of the product modes pmodes (order - 1 of them): packed
 * when the bits fit 64. */
static void key_layout(uint32_t order, const uint64_t *dims, const uint32_t *pmodes, int pack, tf_fcoo_chunks *k)
{
    uint32_t total = 0;
    for (uint32_t j = 0; j + 1 < order; ++j) total += k->bits[j] = bits_for(dims[pmodes[j]]);
    k->packed = (pack & TF_FCOO_PACK_KEYS) && total <= 64 && total < 32 * (order - 1); /* and it saves bytes */
    if (!k->packed) return;
    uint32_t at = 0;
    for (uint32_t j = order - 1; j-- > 0;) {
        k->shift[j] = at;
        at += k->bits[j];
    }
    k->hi_bits = total > 32 ? total - 32 : 0;
}

/* Value z of f as the device's value type (4: float), widened to double. */
static double value_as(const double *vals, uint64_t z, uint32_t vb)
{
    return vb == 8 ? vals[z] : (double)(float)vals[z];
}

/* x = sign * m * 2^e with m < 2^53 (*m = 0 for +0): 1, or 0 for what no
 * code holds (-0, subnormal numbers, infinities, NaN). */
static int split(double x, uint64_t *m, int *e, int *neg)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    const int E = (int)((b >> 52) & 0x7ff);
    *neg = (int)(b >> 63);
    *m = b & ((1ull << 52) - 1);
    *e = E - 1075;
    if (E == 0) return *m == 0 && !*neg; /* +0 (m = 0); -0 and subnormals: no */
    *m |= 1ull << 52;
    return E != 0x7ff;
}

/* x / 2^lo, an integer of at most 62 bits where lo and x came through the
 * checks of tf_fcoo_value_code_of. */
static int64_t scaled(double x, int lo)
{
    uint64_t m;
    int e, neg;
    split(x, &m, &e, &neg);
    if (!m) return 0;
    const int sh = e - lo; /* >= -(m's trailing zeros) */
    const int64_t q = (int64_t)(sh >= 0 ? m << sh : m >> -sh);
    return neg ? -q : q;
}

void tf_fcoo_value_code_of(const double *vals, uint64_t n, uint32_t vb, tf_fcoo_value_code *vc)
{
    memset(vc, 0, sizeof *vc);
    const int64_t nn = (int64_t)n;
    /* the lowest set bit's exponent (lo) and the top one (|x| < 2^top) of
     * the non-zero values; anything without a code (bad) */
    int lo = INT_MAX, top = INT_MIN, bad = 0;
#pragma omp parallel for num_threads(tf_default_threads()) reduction(min : lo) reduction(max : top) reduction(| : bad) if (nn > 65536)
    for (int64_t z = 0; z < nn; ++z) {
        uint64_t m;
        int e, neg;
        if (!split(value_as(vals, (uint64_t)z, vb), &m, &e, &neg)) {
            bad = 1;
        } else if (m) {
            const int l = e + __builtin_ctzll(m);
            if (l < lo) lo = l;
            if (e + 53 > top) top = e + 53;
        }
    }
    if (bad || n == 0) return;
    if (lo == INT_MAX) lo = top = 0; /* all zeros */
    /* the scale a normal number; the integers x / 2^lo within 62 bits */
    if (lo < (vb == 8 ? -1022 : -126) || top - lo > 62) return;
    /* their range, and every value back from its integer bit for bit (as
     * the device decodes it: TF_FCOO_VALUE of field q - min and min gives q) */
    const double scale = ldexp(1.0, lo);
    int64_t nmin = INT64_MAX, nmax = INT64_MIN;
#pragma omp parallel for num_threads(tf_default_threads()) reduction(min : nmin) reduction(max : nmax) reduction(| : bad) if (nn > 65536)
    for (int64_t z = 0; z < nn; ++z) {
        const double x = value_as(vals, (uint64_t)z, vb);
        const int64_t q = scaled(x, lo);
        if (q < nmin) nmin = q;
        if (q > nmax) nmax = q;
        const double y = vb == 8 ? TF_FCOO_VALUE(double, (uint64_t)q, 0, scale)
                                 : (double)TF_FCOO_VALUE(float, (uint64_t)q, 0, scale);
        bad |= memcmp(&x, &y, sizeof x) != 0;
    }
    const uint64_t range = (uint64_t)nmax - (uint64_t)nmin;
    const uint32_t vbits = range ? 64u - (uint32_t)__builtin_clzll(range) : 1u;
    if (bad || vbits >= 8 * vb) return; /* not exact, or saves nothing */
    vc->vbits = vbits;
    vc->exp = lo;
    vc->min = nmin;
}

/* Chunk c of f into b (laid out as lay). f's per-non-zero arrays (pind,
 * vals, head) hold the mode's non-zeros from position `base` on (a multiple
 * of 32; 0 for a whole copy); start and part_seg are the whole mode's. */
static void fill(const tf_fcoo *f, uint64_t base, const tf_fcoo_chunks *k, uint64_t c,
                 const tf_fcoo_chunk_layout *lay, unsigned char *b)
{
    const uint64_t p0 = k->part_off[c], n0 = p0 * k->part_nnz - base;
    const uint32_t np = f->order - 1;
    if (k->packed) {
        uint32_t *lo = (uint32_t *)(b + lay->lo), *hi = (uint32_t *)(b + lay->hi);
        const uint32_t hb = k->hi_bits; /* the buffer is zeroed: bits are OR-ed in */
        for (uint64_t q = 0; q < lay->nnz; ++q) {
            uint64_t key = 0;
            for (uint32_t j = 0; j < np; ++j) key |= (uint64_t)f->pind[j][n0 + q] << k->shift[j];
            lo[q] = (uint32_t)key;
            if (hb) put_field(hi, q, hb, key >> 32);
        }
    } else {
        for (uint32_t j = 0; j < np; ++j) memcpy(b + lay->pind[j], f->pind[j] + n0, lay->nnz * sizeof(uint32_t));
    }
    if (k->vcode.vbits) {
        uint32_t *w = (uint32_t *)(b + lay->vals);
        for (uint64_t q = 0; q < lay->nnz; ++q) {
            const int64_t n = scaled(value_as(f->vals, n0 + q, k->value_bytes), k->vcode.exp);
            put_field(w, q, k->vcode.vbits, (uint64_t)(n - k->vcode.min));
        }
    } else if (k->value_bytes == 8) {
        memcpy(b + lay->vals, f->vals + n0, lay->nnz * sizeof(double));
    } else {
        float *v = (float *)(b + lay->vals);
        for (uint64_t q = 0; q < lay->nnz; ++q) v[q] = (float)f->vals[n0 + q];
    }
    memcpy(b + lay->head, f->head + n0 / 32, (lay->nnz + 31) / 32 * sizeof(uint32_t)); /* n0: from base */
    memcpy(b + lay->start, f->start + p0 / 32, (lay->parts + 31) / 32 * sizeof(uint32_t));
    memcpy(b + lay->part_seg, f->part_seg + p0, lay->parts * sizeof(uint32_t));
}

/* The chunks' partition ranges: cp each, the last one the rest. Measured
 * on an H200 (20M non-zeros, 13 MiB chunks): uniform chunks stream at 95 %
 * of the pinned bandwidth; cutting the first and last chunk into quarters
 * and halves (a shorter first copy and less work after the last byte) was
 * 2-8 % slower, and halving the whole tail down to 32 partitions 8 %:
 * small pieces cost more than the shorter fill and drain save. */
static tf_status cut(uint64_t nparts, uint64_t cp, tf_fcoo_chunks *k)
{
    const uint64_t n = (nparts + cp - 1) / cp;
    tf_status s = TF_ALLOC(k->part_off, n + 1, "F-COO chunk ranges");
    if (s != TF_OK) return s;
    for (uint64_t c = 0; c <= n; ++c) k->part_off[c] = c * cp < nparts ? c * cp : nparts;
    k->nchunks = n;
    return TF_OK;
}

tf_status tf_fcoo_chunks_plan(uint32_t order, const uint64_t *dims, const uint32_t *pmodes, uint64_t nnz,
                              uint32_t part_nnz, uint64_t chunk_parts, uint32_t value_bytes, int pack,
                              const tf_fcoo_value_code *vc, tf_fcoo_chunks *out)
{
    memset(out, 0, sizeof *out);
    if (chunk_parts < 32 || chunk_parts % 32)
        return tf_fail(TF_ERR_ARG, "F-COO chunks: %llu partitions per chunk (a multiple of 32 is needed)",
                       (unsigned long long)chunk_parts);
    if (value_bytes != 4 && value_bytes != 8)
        return tf_fail(TF_ERR_ARG, "F-COO chunks: values of %u bytes", value_bytes);
    if (part_nnz == 0) return tf_fail(TF_ERR_ARG, "F-COO chunks: partitions of 0 non-zeros");
    out->order = order;
    out->value_bytes = value_bytes;
    out->part_nnz = part_nnz;
    out->nnz = nnz;
    out->nparts = (nnz + part_nnz - 1) / part_nnz;
    out->chunk_parts = chunk_parts;
    key_layout(order, dims, pmodes, pack, out);
    if (vc) out->vcode = *vc;
    tf_status s = cut(out->nparts, chunk_parts, out);
    if (s == TF_OK) s = TF_ALLOC(out->off, out->nchunks + 1, "F-COO chunk offsets");
    if (s != TF_OK) {
        tf_fcoo_chunks_free(out);
        return s;
    }
    out->off[0] = 0;
    for (uint64_t c = 0; c < out->nchunks; ++c) {
        tf_fcoo_chunk_layout lay;
        tf_fcoo_chunk_layout_of(out, c, &lay);
        out->off[c + 1] = out->off[c] + lay.bytes;
        if (lay.bytes > out->max_bytes) out->max_bytes = lay.bytes;
    }
    return TF_OK;
}

void tf_fcoo_chunks_fill_range_at(const tf_fcoo *f, uint64_t base, const tf_fcoo_chunks *k, uint64_t c0, uint64_t c1,
                                  unsigned char *dst)
{
    const int64_t n = (int64_t)(c1 - c0);
    /* each chunk zeroed by the thread that fills it (a calloc cleared the
     * whole copy, gigabytes of fresh memory with their page faults, on one
     * thread) */
#pragma omp parallel for num_threads(tf_default_threads()) schedule(dynamic, 1) if (n > 1)
    for (int64_t i = 0; i < n; ++i) {
        const uint64_t c = c0 + (uint64_t)i;
        tf_fcoo_chunk_layout lay;
        tf_fcoo_chunk_layout_of(k, c, &lay);
        unsigned char *b = dst + (k->off[c] - k->off[c0]);
        memset(b, 0, k->off[c + 1] - k->off[c]);
        fill(f, base, k, c, &lay, b);
    }
}

void tf_fcoo_chunks_fill_range(const tf_fcoo *f, const tf_fcoo_chunks *k, uint64_t c0, uint64_t c1,
                               unsigned char *dst)
{
    tf_fcoo_chunks_fill_range_at(f, 0, k, c0, c1, dst);
}

tf_status tf_fcoo_chunks_pack(const tf_fcoo *f, uint64_t chunk_parts, uint32_t value_bytes, int pack,
                              tf_fcoo_chunks *out)
{
    tf_fcoo_value_code vc;
    memset(&vc, 0, sizeof vc);
    if (pack & TF_FCOO_PACK_VALUES) tf_fcoo_value_code_of(f->vals, f->nnz, value_bytes, &vc);
    TF_TRY(tf_fcoo_chunks_plan(f->order, f->dims, f->pmodes, f->nnz, f->part_nnz, chunk_parts, value_bytes, pack,
                               &vc, out));
    tf_status s = tf_alloc((void **)&out->data, out->off[out->nchunks] ? out->off[out->nchunks] : 1, 1,
                           "streamed F-COO copy (host)");
    if (s != TF_OK) {
        tf_fcoo_chunks_free(out);
        return s;
    }
    tf_fcoo_chunks_fill_range(f, out, 0, out->nchunks, out->data);
    return TF_OK;
}

void tf_fcoo_chunks_free(tf_fcoo_chunks *k)
{
    tf_free(k->off);
    tf_free(k->part_off);
    tf_free(k->data);
    memset(k, 0, sizeof *k);
}
