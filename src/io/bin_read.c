/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold binary reader (format in bin_format.h). Files are read with
 * parallel pread straight into the tensor arrays, each 1 MiB block hashed
 * right after it arrives; decompressed or in-memory images are copied the
 * same way. Every header field, the exact length and the checksum are
 * checked before the data is trusted. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/progress.h"
#include "io/bin_format.h"
#include "io/checksum.h"
#include "io/readers.h"
#include "io/text_parse.h"

typedef struct bin_src {
    const char *name;
    int fd;           /* >= 0: read from the file */
    const char *mem;  /* else: copy from memory  */
    uint64_t size;
    tf_progress_fn progress; /* reported after each section, or NULL */
    void *progress_user;
} bin_src;

/* read_at's result when the file ends before the bytes it should hold. */
#define SHRANK (-1)

/* Reads n bytes at off; returns 0, an errno value or SHRANK. */
static int read_at(const bin_src *s, uint64_t off, void *dst, uint64_t n)
{
    if (s->fd < 0) { memcpy(dst, s->mem + off, (size_t)n); return 0; }
    char *d = dst;
    while (n > 0) {
        ssize_t k = pread(s->fd, d, n > (1u << 30) ? (1u << 30) : (size_t)n, (off_t)off);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return errno;
        if (k == 0) return SHRANK; /* the file was cut short while it is read */
        d += k;
        off += (uint64_t)k;
        n -= (uint64_t)k;
    }
    return 0;
}

static tf_status read_error(const bin_src *s, int err)
{
    if (err == SHRANK)
        return tf_fail(TF_ERR_IO, "%s: the file shrank while it was read (was %llu bytes)", s->name,
                       (unsigned long long)s->size);
    return tf_fail(TF_ERR_IO, "%s: read failed: %s", s->name, strerror(err));
}

typedef struct section_src {
    const bin_src *src;
    uint64_t off; /* file offset of the section */
} section_src;

static int fill_from(const void *ctx, uint64_t off, void *dst, uint64_t n)
{
    const section_src *s = ctx;
    return read_at(s->src, s->off + off, dst, n);
}

/* Reads a section (in parallel blocks) and chains its hash onto *h. */
static tf_status read_section(const bin_src *s, uint64_t off, void *dst, uint64_t n, int T,
                              uint64_t *h)
{
    section_src sec = {s, off};
    int err = 0;
    *h = tf_checksum_fill(dst, n, *h, T, fill_from, &sec, &err);
    if (err) return read_error(s, err);
    return TF_OK;
}

static uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Validates the header; fills order, dims and nnz of *shape. */
static tf_status read_header(const bin_src *s, unsigned char *hdr, tf_tensor *shape, uint64_t *sum)
{
    const char *n = s->name;
    if (s->size < TF_BIN_FIXED_BYTES)
        return tf_fail(TF_ERR_PARSE,
                       "%s: tenfold binary: truncated header (%llu of at least %u bytes)", n,
                       (unsigned long long)s->size, TF_BIN_FIXED_BYTES);
    int e = read_at(s, 0, hdr, TF_BIN_FIXED_BYTES);
    if (e) return read_error(s, e);
    if (memcmp(hdr, TF_BIN_MAGIC, TF_BIN_MAGIC_LEN) != 0)
        return tf_fail(TF_ERR_PARSE, "%s: not a tenfold binary file (bad magic)", n);
    uint32_t version = get32(hdr + 8), order = get32(hdr + 12);
    uint32_t iw = get32(hdr + 16), vw = get32(hdr + 20);
    if (version != TF_BIN_VERSION)
        return tf_fail(
            TF_ERR_UNAVAILABLE,
            "%s: tenfold binary: unknown format version %u (this build reads version %u)", n,
            version, TF_BIN_VERSION);
    if (order < TF_MIN_ORDER || order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_PARSE, "%s: tenfold binary: order %u is outside %d..%d", n, order,
                       TF_MIN_ORDER, TF_MAX_ORDER);
    if (iw != 4 || vw != 8)
        return tf_fail(TF_ERR_UNAVAILABLE,
                       "%s: tenfold binary: index/value widths %u/%u bytes are not supported "
                       "(expected 4/8)", n, iw, vw);
    const uint64_t hb = tf_bin_header_bytes(order);
    if (s->size < hb)
        return tf_fail(TF_ERR_PARSE, "%s: tenfold binary: truncated header (%llu of %llu bytes)", n,
                       (unsigned long long)s->size, (unsigned long long)hb);
    e = read_at(s, TF_BIN_FIXED_BYTES, hdr + TF_BIN_FIXED_BYTES, hb - TF_BIN_FIXED_BYTES);
    if (e) return read_error(s, e);
    shape->order = order;
    shape->nnz = get64(hdr + 24);
    for (uint32_t m = 0; m < order; ++m) {
        shape->dims[m] = get64(hdr + TF_BIN_FIXED_BYTES + 8 * m);
        if (shape->dims[m] < 1 || shape->dims[m] > TF_INDEX_RAW_MAX)
            return tf_fail(TF_ERR_PARSE,
                           "%s: tenfold binary: mode %u length %llu is outside 1..2^32", n, m + 1,
                           (unsigned long long)shape->dims[m]);
    }
    *sum = get64(hdr + hb - 8);
    const uint64_t per = 4ull * order + 8;
    if (shape->nnz > (UINT64_MAX - hb) / per)
        return tf_fail(TF_ERR_PARSE, "%s: tenfold binary: nnz %llu is impossibly large", n,
                       (unsigned long long)shape->nnz);
    const uint64_t want = hb + shape->nnz * per;
    if (s->size < want)
        return tf_fail(
            TF_ERR_PARSE,
            "%s: tenfold binary: truncated payload (%llu of %llu bytes for %llu non-zeros)", n,
            (unsigned long long)s->size, (unsigned long long)want, (unsigned long long)shape->nnz);
    if (s->size > want)
        return tf_fail(TF_ERR_PARSE, "%s: tenfold binary: %llu unexpected bytes after the payload",
                       n, (unsigned long long)(s->size - want));
    return TF_OK;
}

static tf_status bin_read(const bin_src *s, int threads, tf_tensor *t)
{
    unsigned char hdr[TF_BIN_HEADER_MAX];
    tf_tensor shape;
    uint64_t sum = 0;
    memset(t, 0, sizeof *t);
    memset(&shape, 0, sizeof shape);
    TF_TRY(read_header(s, hdr, &shape, &sum));
    TF_TRY(tf_tensor_alloc(t, shape.order, shape.dims, shape.nnz));
    const int T = tf_resolve_threads(threads);
    uint64_t off = tf_bin_header_bytes(shape.order);
    uint64_t h = tf_checksum(hdr, off - 8, 0, 1); /* as tf_bin_checksum, section by section */
    tf_status st = TF_OK;
    for (uint32_t m = 0; m < t->order && st == TF_OK; ++m, off += t->nnz * 4) {
        st = read_section(s, off, t->ind[m], t->nnz * 4, T, &h);
        tf_progress_report(s->progress, s->progress_user, TF_STEP_READ, off + t->nnz * 4, s->size, 0);
    }
    if (st == TF_OK) st = read_section(s, off, t->vals, t->nnz * 8, T, &h);
    tf_progress_report(s->progress, s->progress_user, TF_STEP_READ, off + t->nnz * 8, s->size, 0);
    if (st == TF_OK && h != sum)
        st = tf_fail(TF_ERR_PARSE, "%s: tenfold binary: checksum mismatch (the file is corrupt)",
                     s->name);
    if (st != TF_OK) tf_tensor_free(t);
    return st;
}

tf_status tf_bin_read_fd(const char *name, int fd, uint64_t size, int threads, tf_progress_fn progress,
                         void *progress_user, tf_tensor *t)
{
    bin_src s = {name, fd, NULL, size, progress, progress_user};
    return bin_read(&s, threads, t);
}

tf_status tf_bin_part_open(const char *name, int fd, uint64_t size, uint64_t part, uint64_t parts, tf_bin_part *p)
{
    bin_src s = {name, fd, NULL, size, NULL, NULL};
    unsigned char hdr[TF_BIN_HEADER_MAX];
    memset(p, 0, sizeof *p);
    TF_TRY(read_header(&s, hdr, &p->shape, &p->sum));
    const uint64_t hb = tf_bin_header_bytes(p->shape.order);
    p->head = tf_checksum(hdr, hb - 8, 0, 1); /* the chain's start, as bin_read */
    p->k0 = (uint64_t)((unsigned __int128)p->shape.nnz * part / parts);
    p->k1 = (uint64_t)((unsigned __int128)p->shape.nnz * (part + 1) / parts);
    p->size = size;
    for (uint32_t m = 0; m <= p->shape.order; ++m) { /* the index arrays, then the values */
        const uint64_t bytes = p->shape.nnz * (m < p->shape.order ? 4 : 8);
        p->nblocks += (bytes + TF_CHECKSUM_BLOCK - 1) / TF_CHECKSUM_BLOCK;
    }
    return TF_CALLOC(p->blocks, p->nblocks ? p->nblocks : 1, "block hashes");
}

void tf_bin_part_free(tf_bin_part *p)
{
    tf_free(p->blocks);
    p->blocks = NULL;
}

/* Bytes [a, b) of a section (sec bytes long, at file offset off) into dst,
 * and into bh[i] the hash of every block i whose first byte lies in [a, b):
 * those blocks are this part's share of the checksum, so every block has
 * one owner; the last may run past b, its rest read from the file. */
static tf_status read_part_section(const bin_src *s, uint64_t off, uint64_t sec, uint64_t a, uint64_t b,
                                   unsigned char *dst, int T, uint64_t *bh)
{
    const uint64_t B = TF_CHECKSUM_BLOCK;
    if (a >= b) return TF_OK;
    const uint64_t first = (a + B - 1) / B, last = (b + B - 1) / B; /* owned blocks [first, last) */
    const uint64_t lead = a % B ? 1 : 0, owned = last > first ? last - first : 0;
    const int64_t pieces = (int64_t)(lead + owned);
    int failed = 0;
#pragma omp parallel for num_threads(T) schedule(dynamic, 1) if (T > 1 && pieces > 1)
    for (int64_t q = 0; q < pieces; ++q) {
        const int own = !(lead && q == 0);
        const uint64_t i = first + (uint64_t)q - lead; /* the block, when owned */
        const uint64_t lo = own ? i * B : a, hi0 = own ? (i + 1) * B : first * B, hi = hi0 < b ? hi0 : b;
        int e = read_at(s, off + lo, dst + (lo - a), hi - lo);
        if (!e && own) {
            const uint64_t end = (i + 1) * B < sec ? (i + 1) * B : sec;
            if (hi == end) {
                bh[i] = tf_checksum_block(dst + (lo - a), end - lo, i);
            } else { /* the block runs on past the part */
                unsigned char *tmp = malloc((size_t)(end - lo));
                if (!tmp) e = ENOMEM;
                else {
                    memcpy(tmp, dst + (lo - a), (size_t)(hi - lo));
                    e = read_at(s, off + hi, tmp + (hi - lo), end - hi);
                    if (!e) bh[i] = tf_checksum_block(tmp, end - lo, i);
                    free(tmp);
                }
            }
        }
        if (e) {
#pragma omp atomic write
            failed = e;
        }
    }
    if (failed) return tf_fail(TF_ERR_IO, "%s: read failed: %s", s->name, strerror(failed));
    return TF_OK;
}

tf_status tf_bin_part_read(const char *name, int fd, int threads, tf_bin_part *p, tf_tensor *t)
{
    bin_src s = {name, fd, NULL, p->size, NULL, NULL};
    const tf_tensor *x = &p->shape;
    const uint64_t n = p->k1 - p->k0;
    memset(t, 0, sizeof *t);
    TF_TRY(tf_tensor_alloc(t, x->order, x->dims, n));
    const int T = tf_resolve_threads(threads);
    uint64_t off = tf_bin_header_bytes(x->order), *bh = p->blocks;
    tf_status st = TF_OK;
    for (uint32_t m = 0; m <= x->order && st == TF_OK; ++m) {
        const uint64_t w = m < x->order ? 4 : 8, sec = x->nnz * w;
        void *dst = m < x->order ? (void *)t->ind[m] : (void *)t->vals;
        st = read_part_section(&s, off, sec, p->k0 * w, p->k1 * w, dst, T, bh);
        off += sec;
        bh += (sec + TF_CHECKSUM_BLOCK - 1) / TF_CHECKSUM_BLOCK;
    }
    if (st != TF_OK) tf_tensor_free(t);
    return st;
}

uint64_t tf_bin_part_checksum(const tf_bin_part *p)
{
    uint64_t h = p->head;
    const uint64_t *bh = p->blocks;
    for (uint32_t m = 0; m <= p->shape.order; ++m) {
        const uint64_t sec = p->shape.nnz * (m < p->shape.order ? 4 : 8);
        const uint64_t nb = (sec + TF_CHECKSUM_BLOCK - 1) / TF_CHECKSUM_BLOCK;
        h = tf_checksum_start(h, sec);
        for (uint64_t b = 0; b < nb; ++b) h = tf_checksum_fold(h, bh[b]);
        bh += nb;
    }
    return h;
}

tf_status tf_bin_part_coord(const char *name, int fd, const tf_bin_part *p, uint64_t k, uint32_t *coord)
{
    bin_src s = {name, fd, NULL, p->size, NULL, NULL};
    const uint64_t base = tf_bin_header_bytes(p->shape.order);
    for (uint32_t m = 0; m < p->shape.order; ++m) {
        const int e = read_at(&s, base + (m * p->shape.nnz + k) * 4, &coord[m], 4);
        if (e) return tf_fail(TF_ERR_IO, "%s: read failed: %s", name, strerror(e));
    }
    return TF_OK;
}

tf_status tf_bin_parse_mem(const char *name, const char *data, size_t len, int threads,
                           tf_tensor *t)
{
    bin_src s = {name, -1, data, len, NULL, NULL};
    return bin_read(&s, threads, t);
}
