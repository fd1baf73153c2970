/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold binary reader (format in bin_format.h). Files are read with
 * parallel pread straight into the tensor arrays, each 1 MiB block hashed
 * right after it arrives; decompressed or in-memory images are copied the
 * same way. Every header field, the exact length and the checksum are
 * checked before the data is trusted. */
#include <errno.h>
#include <string.h>
#include <unistd.h>

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

tf_status tf_bin_read_part_fd(const char *name, int fd, uint64_t size, int threads, uint64_t part, uint64_t parts,
                              tf_tensor *t, uint64_t *total)
{
    bin_src s = {name, fd, NULL, size, NULL, NULL};
    unsigned char hdr[TF_BIN_HEADER_MAX];
    tf_tensor shape;
    uint64_t sum = 0;
    memset(t, 0, sizeof *t);
    memset(&shape, 0, sizeof shape);
    TF_TRY(read_header(&s, hdr, &shape, &sum));
    *total = shape.nnz;
    const uint64_t k0 = (uint64_t)((unsigned __int128)shape.nnz * part / parts);
    const uint64_t k1 = (uint64_t)((unsigned __int128)shape.nnz * (part + 1) / parts);
    TF_TRY(tf_tensor_alloc(t, shape.order, shape.dims, k1 - k0));
    const int T = tf_resolve_threads(threads);
    const uint64_t base = tf_bin_header_bytes(shape.order);
    uint64_t h = 0; /* the whole file's checksum cannot be checked from a part */
    tf_status st = TF_OK;
    for (uint32_t m = 0; m < t->order && st == TF_OK; ++m)
        st = read_section(&s, base + (m * shape.nnz + k0) * 4, t->ind[m], t->nnz * 4, T, &h);
    if (st == TF_OK) st = read_section(&s, base + shape.order * shape.nnz * 4 + k0 * 8, t->vals, t->nnz * 8, T, &h);
    if (st != TF_OK) tf_tensor_free(t);
    return st;
}

tf_status tf_bin_parse_mem(const char *name, const char *data, size_t len, int threads,
                           tf_tensor *t)
{
    bin_src s = {name, -1, data, len, NULL, NULL};
    return bin_read(&s, threads, t);
}
