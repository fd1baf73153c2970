/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/decompress.h"

#include <errno.h>
#include <lzma.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

int tf_is_xz(const void *p, size_t n)
{
    static const unsigned char magic[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
    return n >= 6 && memcmp(p, magic, 6) == 0;
}

int tf_is_gzip(const void *p, size_t n)
{
    const unsigned char *b = p;
    return n >= 2 && b[0] == 0x1F && b[1] == 0x8B;
}

const char *tf_compression_name(const void *p, size_t n)
{
    const unsigned char *b = p;
    if (tf_is_xz(p, n)) return "xz";
    if (tf_is_gzip(p, n)) return "gzip";
    if (n >= 4 && !memcmp(b, "\x28\xb5\x2f\xfd", 4)) return "zstd";
    if (n >= 4 && !memcmp(b, "BZh", 3) && b[3] >= '1' && b[3] <= '9') return "bzip2";
    if (n >= 4 && !memcmp(b, "\x04\x22\x4d\x18", 4)) return "lz4";
    if (n >= 4 && !memcmp(b, "LZIP", 4)) return "lzip";
    if (n >= 4 && !memcmp(b, "PK\x03\x04", 4)) return "zip";
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x9d) return "compress (.Z)";
    /* legacy .lzma (LZMA_Alone): a properties byte (lc, lp, pb), a
     * dictionary size of 2^k or 2^k + 2^(k-1), then the size or -1 */
    if (n >= 13 && b[0] < 225) {
        const uint32_t dict = (uint32_t)b[1] | (uint32_t)b[2] << 8 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 24;
        int pow2ish = 0;
        for (int k = 12; k < 32 && !pow2ish; ++k)
            pow2ish = dict == 1u << k || dict == (1u << k) + (1u << (k - 1));
        static const unsigned char unknown[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
        if (pow2ish && (!memcmp(b + 5, unknown, 8) || (b[11] == 0 && b[12] == 0))) return "lzma";
    }
    return NULL;
}

static const char *lzma_reason(lzma_ret r)
{
    switch (r) {
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_MEMLIMIT_ERROR: return "memory limit reached";
    case LZMA_FORMAT_ERROR: return "not an xz stream";
    case LZMA_OPTIONS_ERROR: return "unsupported options";
    case LZMA_DATA_ERROR: return "corrupt data";
    case LZMA_BUF_ERROR: return "unexpected end of input";
    default: return "liblzma error";
    }
}

static lzma_ret xz_decoder_init(lzma_stream *z, int threads)
{
#if LZMA_VERSION >= 50040002
    lzma_mt mt;
    memset(&mt, 0, sizeof mt);
    mt.flags = LZMA_CONCATENATED;
    mt.threads = (uint32_t)tf_resolve_threads(threads);
    if (mt.threads > 2) mt.threads = 2; /* two decoder threads saturate the parser */
    mt.timeout = 0;
    mt.memlimit_threading = 1ull << 30;
    mt.memlimit_stop = UINT64_MAX;
    return lzma_stream_decoder_mt(z, &mt);
#else
    (void)threads;
    return lzma_stream_decoder(z, UINT64_MAX, LZMA_CONCATENATED);
#endif
}


/* ------------------------------------------------------------ streaming */

#define DEC_IN_BYTES (1u << 20)

struct tf_decoder {
    const char *name;
    int kind;                         /* 0 plain, 1 xz, 2 gzip               */
    int fd;                           /* >= 0: input from the fd, else memory */
    unsigned char *inbuf;             /* fd input buffer (DEC_IN_BYTES)      */
    const unsigned char *in_next;     /* input not yet consumed              */
    size_t in_avail;
    int in_eof;                       /* no input beyond in_next[0..in_avail) */
    int done;                         /* the decoder reached the end         */
    lzma_stream xz;
    z_stream gz;
    int started;
    uint64_t in_total;                /* input bytes brought in so far        */
    uint64_t expect;                  /* > 0: the fd holds this many bytes    */
};

/* The end of the fd's input came early: a regular file that was cut short
 * while it was read (tf_decoder_expect). */
static tf_status check_end(const tf_decoder *d)
{
    if (d->expect && d->in_total < d->expect)
        return tf_fail(TF_ERR_IO, "%s: the file shrank while it was read (was %llu bytes, ended after %llu)",
                       d->name, (unsigned long long)d->expect, (unsigned long long)d->in_total);
    return TF_OK;
}

/* Makes input available unless it is exhausted. */
static tf_status dec_refill(tf_decoder *d)
{
    if (d->in_avail || d->in_eof) return TF_OK;
    if (d->fd < 0) { d->in_eof = 1; return TF_OK; }
    for (;;) {
        ssize_t k = read(d->fd, d->inbuf, DEC_IN_BYTES);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return tf_fail(TF_ERR_IO, "%s: read failed: %s", d->name, strerror(errno));
        if (k == 0) {
            d->in_eof = 1;
            TF_TRY(check_end(d));
        }
        d->in_next = d->inbuf;
        d->in_avail = (size_t)k;
        d->in_total += (uint64_t)k;
        return TF_OK;
    }
}

static tf_status dec_start(tf_decoder *d, int threads, int *kind)
{
    /* the magic needs up to 6 bytes: read until there are 6 or the input ends */
    if (d->fd >= 0) {
        while (d->in_avail < 6 && !d->in_eof) {
            ssize_t k = read(d->fd, d->inbuf + d->in_avail, DEC_IN_BYTES - d->in_avail);
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) return tf_fail(TF_ERR_IO, "%s: read failed: %s", d->name, strerror(errno));
            if (k == 0) d->in_eof = 1;
            d->in_avail += (size_t)k;
            d->in_total += (uint64_t)k;
        }
    }
    d->kind = tf_is_xz(d->in_next, d->in_avail) ? 1 : tf_is_gzip(d->in_next, d->in_avail) ? 2 : 0;
    if (kind) *kind = d->kind;
    if (d->kind == 1) {
        lzma_stream init = LZMA_STREAM_INIT;
        d->xz = init;
        lzma_ret r = xz_decoder_init(&d->xz, threads);
        if (r != LZMA_OK)
            return tf_fail(TF_ERR_NOMEM, "%s: cannot start the xz decoder (%s)", d->name,
                           lzma_reason(r));
        d->started = 1;
    } else if (d->kind == 2) {
        memset(&d->gz, 0, sizeof d->gz);
        if (inflateInit2(&d->gz, 15 + 16) != Z_OK)
            return tf_fail(TF_ERR_NOMEM, "%s: cannot start the gzip decoder", d->name);
        d->started = 1;
    }
    return TF_OK;
}

static tf_status dec_open(const char *name, int fd, const void *mem, size_t len, int threads,
                          tf_decoder **out, int *kind)
{
    tf_decoder *d = NULL;
    *out = NULL;
    TF_TRY(TF_CALLOC(d, 1, "decoder"));
    d->name = name;
    d->fd = fd;
    if (fd >= 0) {
        tf_status s = TF_ALLOC(d->inbuf, DEC_IN_BYTES, "input buffer");
        if (s != TF_OK) { tf_free(d); return s; }
        d->in_next = d->inbuf;
    } else {
        d->in_next = mem;
        d->in_avail = len;
        d->in_total = len;
        d->in_eof = 1;
    }
    tf_status s = dec_start(d, threads, kind);
    if (s != TF_OK) { tf_decoder_close(d); return s; }
    *out = d;
    return TF_OK;
}

tf_status tf_decoder_open_fd(const char *name, int fd, int threads, tf_decoder **out, int *kind)
{
    return dec_open(name, fd, NULL, 0, threads, out, kind);
}

tf_status tf_decoder_open_mem(const char *name, const void *mem, size_t len, int threads,
                              tf_decoder **out, int *kind)
{
    return dec_open(name, -1, mem, len, threads, out, kind);
}

static tf_status read_plain(tf_decoder *d, char *out, size_t cap, size_t *got)
{
    while (*got < cap) {
        if (d->in_avail) {
            size_t n = d->in_avail < cap - *got ? d->in_avail : cap - *got;
            memcpy(out + *got, d->in_next, n);
            d->in_next += n;
            d->in_avail -= n;
            *got += n;
            continue;
        }
        if (d->in_eof || d->fd < 0) { d->in_eof = 1; break; }
        ssize_t k = read(d->fd, out + *got, cap - *got);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return tf_fail(TF_ERR_IO, "%s: read failed: %s", d->name, strerror(errno));
        if (k == 0) { d->in_eof = 1; break; }
        *got += (size_t)k;
        d->in_total += (uint64_t)k;
    }
    return *got == 0 && d->in_eof ? check_end(d) : TF_OK;
}

static tf_status read_xz(tf_decoder *d, char *out, size_t cap, size_t *got)
{
    while (*got < cap && !d->done) {
        TF_TRY(dec_refill(d));
        d->xz.next_in = d->in_next;
        d->xz.avail_in = d->in_avail;
        d->xz.next_out = (uint8_t *)out + *got;
        d->xz.avail_out = cap - *got;
        size_t mask_size = 0; /* its decoder threads start here, and inherit the mask */
        void *mask = tf_unbind_begin(&mask_size);
        lzma_ret r = lzma_code(&d->xz, d->in_eof ? LZMA_FINISH : LZMA_RUN);
        tf_unbind_end(mask, mask_size);
        size_t used = d->in_avail - d->xz.avail_in;
        d->in_next += used;
        d->in_avail -= used;
        *got = cap - d->xz.avail_out;
        if (r == LZMA_STREAM_END) { d->done = 1; break; }
        if (r != LZMA_OK)
            return tf_fail(TF_ERR_PARSE, "%s: xz stream is truncated or corrupt (%s)", d->name,
                           lzma_reason(r));
    }
    return TF_OK;
}

static tf_status read_gz(tf_decoder *d, char *out, size_t cap, size_t *got)
{
    while (*got < cap && !d->done) {
        TF_TRY(dec_refill(d));
        uInt ain = d->in_avail > (1u << 30) ? (1u << 30) : (uInt)d->in_avail;
        size_t room = cap - *got;
        d->gz.next_in = (Bytef *)d->in_next;
        d->gz.avail_in = ain;
        d->gz.next_out = (Bytef *)out + *got;
        d->gz.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt before = d->gz.avail_out;
        int r = inflate(&d->gz, Z_NO_FLUSH);
        size_t used = ain - d->gz.avail_in;
        d->in_next += used;
        d->in_avail -= used;
        *got += before - d->gz.avail_out;
        if (r == Z_STREAM_END) {
            TF_TRY(dec_refill(d));
            if (d->in_avail == 0 && d->in_eof) { d->done = 1; break; }
            if (inflateReset(&d->gz) != Z_OK)
                return tf_fail(TF_ERR_PARSE, "%s: gzip reset failed", d->name);
            continue; /* another gzip member follows */
        }
        if (r == Z_OK) continue;
        if (r == Z_BUF_ERROR && !(d->in_avail == 0 && d->in_eof)) continue;
        return tf_fail(TF_ERR_PARSE, "%s: gzip stream is truncated or corrupt (%s)", d->name,
                       r == Z_BUF_ERROR || !d->gz.msg ? "unexpected end of input" : d->gz.msg);
    }
    return TF_OK;
}

tf_status tf_decoder_read(tf_decoder *d, char *out, size_t cap, size_t *got)
{
    *got = 0;
    if (d->kind == 1) return read_xz(d, out, cap, got);
    if (d->kind == 2) return read_gz(d, out, cap, got);
    return read_plain(d, out, cap, got);
}

void tf_decoder_expect(tf_decoder *d, uint64_t bytes) { d->expect = d->fd >= 0 ? bytes : 0; }

uint64_t tf_decoder_in_bytes(const tf_decoder *d)
{
    return d->in_total - d->in_avail;
}

void tf_decoder_close(tf_decoder *d)
{
    if (!d) return;
    if (d->started && d->kind == 1) lzma_end(&d->xz);
    if (d->started && d->kind == 2) inflateEnd(&d->gz);
    tf_free(d->inbuf);
    tf_free(d);
}
