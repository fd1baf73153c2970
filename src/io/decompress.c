#include "io/decompress.h"

#include <lzma.h>
#include <string.h>
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

/* Output buffer that doubles as it fills. */
typedef struct grow_buf {
    char *data;
    size_t len, cap;
} grow_buf;

static tf_status grow(grow_buf *g, size_t hint)
{
    size_t cap = g->cap ? g->cap * 2 : (hint < (1u << 20) ? (1u << 20) : hint);
    if (cap < g->cap) return tf_fail(TF_ERR_NOMEM, "decompressed data does not fit in memory");
    if (!g->data) TF_TRY(tf_alloc((void **)&g->data, cap, 1, "decompressed data"));
    else TF_TRY(tf_realloc((void **)&g->data, cap, 1, "decompressed data"));
    g->cap = cap;
    return TF_OK;
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

tf_status tf_xz_decompress(const char *name, const void *in, size_t n, int threads, char **out,
                           size_t *out_len)
{
    lzma_stream z = LZMA_STREAM_INIT;
    grow_buf g = {0};
    *out = NULL;
    *out_len = 0;
    lzma_ret r = xz_decoder_init(&z, threads);
    if (r != LZMA_OK)
        return tf_fail(TF_ERR_NOMEM, "%s: cannot start the xz decoder (%s)", name, lzma_reason(r));
    z.next_in = in;
    z.avail_in = n;
    tf_status s = TF_OK;
    for (;;) {
        if (g.len == g.cap && (s = grow(&g, n * 6)) != TF_OK) break;
        z.next_out = (uint8_t *)g.data + g.len;
        z.avail_out = g.cap - g.len;
        r = lzma_code(&z, LZMA_FINISH);
        g.len = g.cap - z.avail_out;
        if (r == LZMA_STREAM_END) break;
        if (r != LZMA_OK) {
            s = tf_fail(TF_ERR_PARSE, "%s: xz stream is truncated or corrupt (%s)", name,
                        lzma_reason(r));
            break;
        }
    }
    lzma_end(&z);
    if (s != TF_OK) { tf_free(g.data); return s; }
    *out = g.data;
    *out_len = g.len;
    return TF_OK;
}

tf_status tf_gz_decompress(const char *name, const void *in, size_t n, char **out,
                           size_t *out_len)
{
    z_stream z;
    grow_buf g = {0};
    memset(&z, 0, sizeof z);
    *out = NULL;
    *out_len = 0;
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return tf_fail(TF_ERR_NOMEM, "%s: cannot start the gzip decoder", name);
    const unsigned char *p = in;
    size_t left = n;
    tf_status s = TF_OK;
    for (;;) {
        if (g.len == g.cap && (s = grow(&g, n * 6)) != TF_OK) break;
        if (z.avail_in == 0 && left > 0) {
            z.next_in = (Bytef *)p;
            z.avail_in = left > (1u << 30) ? (1u << 30) : (uInt)left;
            p += z.avail_in;
            left -= z.avail_in;
        }
        size_t room = g.cap - g.len;
        z.next_out = (Bytef *)g.data + g.len;
        z.avail_out = room > (1u << 30) ? (1u << 30) : (uInt)room;
        uInt before = z.avail_out;
        int r = inflate(&z, Z_NO_FLUSH);
        g.len += before - z.avail_out;
        if (r == Z_STREAM_END) {
            if (z.avail_in == 0 && left == 0) break;
            if (inflateReset(&z) != Z_OK) {
                s = tf_fail(TF_ERR_PARSE, "%s: gzip reset failed", name);
                break;
            }
            continue; /* another gzip member follows */
        }
        if (r == Z_OK) continue;
        if (r == Z_BUF_ERROR && z.avail_in == 0 && left == 0) r = Z_DATA_ERROR; /* input ended */
        if (r == Z_BUF_ERROR) continue; /* output full: grow and go on */
        s = tf_fail(TF_ERR_PARSE, "%s: gzip stream is truncated or corrupt (%s)", name,
                    z.msg ? z.msg : "unexpected end of input");
        break;
    }
    inflateEnd(&z);
    if (s != TF_OK) { tf_free(g.data); return s; }
    *out = g.data;
    *out_len = g.len;
    return TF_OK;
}

tf_status tf_decompress_any(const char *name, const void *in, size_t n, int threads, char **out,
                            size_t *out_len, int *kind)
{
    *out = NULL;
    *out_len = 0;
    *kind = tf_is_xz(in, n) ? 1 : tf_is_gzip(in, n) ? 2 : 0;
    if (*kind == 1) return tf_xz_decompress(name, in, n, threads, out, out_len);
    if (*kind == 2) return tf_gz_decompress(name, in, n, out, out_len);
    return TF_OK;
}
