/* SPDX-License-Identifier: BSD-3-Clause */
/* Input edge cases: one index base per file and tf_read_opts.base; a .mtx
 * file without its banner; compressed and piped input parsed in windows
 * (the same tensor and info as the plain text, with lines crossing every
 * window boundary; line numbers of errors in later windows; garbage without
 * newlines rejected in bounded memory); slice counts of modes near 2^32
 * (the CLI's counter, compiled in here); "-" as standard input; progress
 * reports of the readers and builders; issue 41: a file that shrinks while
 * it is read, one header limit for a file, a pipe and memory, compressed
 * data inside compressed data and .lzma named, dense matrices read in
 * bounded windows (/dev/zero). */
#include <fcntl.h>
#include <lzma.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "test_paths.h"
#include "io/decompress.h"
#include "io/readers.h"
#include "io/stream.h"
#include "tenfold.h"

#include "../cli/args.c"
#include "../cli/gen_spec.c"
#include "../cli/report.c"
#include "../cli/verbosity.c"
#include "../cli/progress.c"

#define TMP TF_TEST_TMP "/io_stream"

static char *path_of(const char *name) { return tt_path(TMP, name); }

static void put_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f) return;
    fwrite(data, 1, len, f);
    fclose(f);
}

/* ------------------------------------------------------------- helpers */

static unsigned char *xz_pack(const char *in, size_t n, size_t *len)
{
    size_t cap = n + n / 2 + 4096, pos = 0;
    unsigned char *out = malloc(cap);
    if (lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, (const uint8_t *)in, n, out, &pos,
                                cap) != LZMA_OK)
        pos = 0;
    *len = pos;
    return out;
}

static unsigned char *gz_pack(const char *in, size_t n, size_t *len)
{
    size_t cap = n + n / 2 + 4096;
    unsigned char *out = malloc(cap);
    z_stream z;
    memset(&z, 0, sizeof z);
    *len = 0;
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return out;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) == Z_STREAM_END) *len = z.total_out;
    deflateEnd(&z);
    return out;
}

static int same_tensor(const tf_tensor *a, const tf_tensor *b)
{
    if (a->order != b->order || a->nnz != b->nnz) return 0;
    for (uint32_t m = 0; m < a->order; ++m)
        if (a->dims[m] != b->dims[m] || memcmp(a->ind[m], b->ind[m], a->nnz * 4)) return 0;
    return memcmp(a->vals, b->vals, a->nnz * 8) == 0;
}

static int same_info(const tf_read_info *a, const tf_read_info *b)
{
    return a->format == b->format && a->lines == b->lines && a->entries == b->entries &&
           a->duplicates == b->duplicates && a->zeros == b->zeros &&
           a->index_base == b->index_base && a->base_source == b->base_source &&
           a->declared_dims == b->declared_dims && a->bytes == b->bytes &&
           a->mtx_symmetric == b->mtx_symmetric && a->mtx_pattern == b->mtx_pattern;
}

/* Growing text whose line ends never fall on the last byte of a window of
 * w bytes: a line that would end there gets one more trailing blank, so
 * every window boundary cuts through a line. */
typedef struct text {
    char *s;
    size_t len, cap, w;
} text;

static void add_line(text *t, const char *fmt, ...)
{
    char line[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 2, fmt, ap);
    va_end(ap);
    if (t->w && (t->len + (size_t)n + 1) % t->w == 0) line[n++] = ' ';
    line[n++] = '\n';
    if (t->len + (size_t)n + 1 > t->cap) {
        t->cap = (t->len + (size_t)n + 1) * 2;
        t->s = realloc(t->s, t->cap);
    }
    memcpy(t->s + t->len, line, (size_t)n);
    t->len += (size_t)n;
    t->s[t->len] = '\0';
}

static tf_status parse_base(const char *name, const char *s, int base, tf_tensor *t,
                            tf_read_info *info)
{
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.threads = 2;
    o.base = base;
    return tf_parse_tensor_opts(name, s, strlen(s), &o, t, info);
}

/* The call failed with want and a message holding every needle. */
static void expect_msg(int line, tf_status s, tf_status want, ...)
{
    const char *msg = tf_last_error();
    CHECKF(s == want, "line %d: status %s, expected %s (%s)", line, tf_status_name(s),
           tf_status_name(want), msg);
    va_list ap;
    va_start(ap, want);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        CHECKF(strstr(msg, needle) != NULL, "line %d: message '%s' lacks '%s'", line, msg, needle);
    va_end(ap);
}
#define EXPECT_MSG(s, want, ...) expect_msg(__LINE__, s, want, __VA_ARGS__, NULL)

/* -------------------------------------------------------- index base */

static void index_base(void)
{
    tf_tensor t;
    tf_read_info info;
    /* one base per file: the 0 in mode 1 makes mode 2 0-based too */
    if (parse_base("a.tns", "0 1 1.0\n1 2 2.0\n", TF_BASE_AUTO, &t, &info) == TF_OK) {
        CHECK(t.dims[0] == 2 && t.dims[1] == 3);
        CHECK(t.ind[0][0] == 0 && t.ind[1][0] == 1 && t.ind[0][1] == 1 && t.ind[1][1] == 2);
        CHECK(info.index_base == 0 && info.base_source == TF_BASE_DETECTED);
        tf_tensor_free(&t);
    } else CHECKF(0, "%s", tf_last_error());
    /* a 0-based file whose time mode starts at 334 keeps 334 */
    if (parse_base("b.tns", "0 5 334 1.0\n3 2 340 2.0\n1 0 335 1\n", TF_BASE_AUTO, &t, &info) ==
        TF_OK) {
        CHECK(info.index_base == 0 && t.dims[0] == 4 && t.dims[1] == 6 && t.dims[2] == 341);
        CHECK(t.ind[2][0] == 334 && t.ind[2][2] == 340);
        tf_tensor_free(&t);
    } else CHECKF(0, "%s", tf_last_error());
    /* 1-based without a 0 */
    if (parse_base("c.tns", "1 1 1.0\n2 3 2.0\n", TF_BASE_AUTO, &t, &info) == TF_OK) {
        CHECK(info.index_base == 1 && info.base_source == TF_BASE_DETECTED);
        CHECK(t.dims[0] == 2 && t.dims[1] == 3 && t.ind[1][1] == 2);
        tf_tensor_free(&t);
    }
    /* forced both ways */
    if (parse_base("c.tns", "1 1 1.0\n2 3 2.0\n", 0, &t, &info) == TF_OK) {
        CHECK(info.index_base == 0 && info.base_source == TF_BASE_OPTION);
        CHECK(t.dims[0] == 3 && t.dims[1] == 4 && t.ind[0][0] == 1 && t.ind[1][1] == 3);
        tf_tensor_free(&t);
    } else CHECKF(0, "%s", tf_last_error());
    if (parse_base("c.tns", "1 1 1.0\n2 3 2.0\n", 1, &t, &info) == TF_OK) {
        CHECK(info.index_base == 1 && info.base_source == TF_BASE_OPTION);
        CHECK(t.dims[0] == 2 && t.dims[1] == 3 && t.ind[0][0] == 0);
        tf_tensor_free(&t);
    } else CHECKF(0, "%s", tf_last_error());
    /* --base 1 and an index 0: file:line:field */
    EXPECT_MSG(parse_base("d.tns", "1 1 1.0\n2 0 2.0\n", 1, &t, &info), TF_ERR_RANGE,
               "d.tns:2: field 2:", "1-based", "found '0'");
    /* --base 0 and an index equal to the declared length */
    EXPECT_MSG(parse_base("e.tns", "2\n3 3\n1 1 1.0\n1 3 1.0\n", 0, &t, &info), TF_ERR_RANGE,
               "e.tns:4: field 2:", "at most 2", "found '3'");
    /* --base 0 without a header: 2^32 does not fit */
    EXPECT_MSG(parse_base("e.tns", "1 1 1.0\n4294967296 3 1.0\n", 0, &t, &info), TF_ERR_RANGE,
               "e.tns:2: field 1:", "at most 4294967295");
    /* auto: the length is a valid 1-based index... */
    if (parse_base("f.tns", "2\n3 3\n1 1 1.0\n3 3 1.0\n", TF_BASE_AUTO, &t, &info) == TF_OK) {
        CHECK(info.index_base == 1 && t.dims[0] == 3 && t.ind[0][1] == 2);
        tf_tensor_free(&t);
    } else CHECKF(0, "%s", tf_last_error());
    /* ...but not once a later 0 makes the file 0-based: the line of the first one */
    EXPECT_MSG(parse_base("g.tns", "2\n3 3\n1 1 1.0\n3 1 1.0\n2 3 1.0\n0 2 1\n", TF_BASE_AUTO,
                          &t, &info),
               TF_ERR_RANGE, "g.tns:4: field 1:", "0-based", "declared on line 2", "found '3'");
    /* sptensor header, the same rule */
    EXPECT_MSG(parse_base("h.tns", "sptensor\n2\n2 2\n2\n2 1 1\n0 1 1\n", TF_BASE_AUTO, &t, &info),
               TF_ERR_RANGE, "h.tns:5: field 1:", "0-based");
    /* a bad option */
    CHECK(parse_base("i.tns", "1 1 1\n", 7, &t, &info) == TF_ERR_ARG);
    /* Matrix Market stays 1-based whatever the option says */
    if (parse_base("m.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3\n", 0,
                   &t, &info) == TF_OK) {
        CHECK(info.index_base == 1 && info.base_source == TF_BASE_FORMAT && t.ind[1][0] == 1);
        tf_tensor_free(&t);
    } else CHECKF(0, "%s", tf_last_error());
}

/* ------------------------------------------------------ .mtx banner */

static void mtx_banner(void)
{
    tf_tensor t;
    tf_read_info info;
    static const char nb[] = "3 3 2\n2 1 3\n3 1 -1\n";
    EXPECT_MSG(tf_parse_tensor("x.mtx", nb, strlen(nb), 1, &t, &info), TF_ERR_PARSE,
               "x.mtx:1: expected the %%MatrixMarket banner, found '3'");
    size_t n = 0;
    unsigned char *gz = gz_pack(nb, strlen(nb), &n);
    EXPECT_MSG(tf_parse_tensor("x.MTX.gz", (const char *)gz, n, 1, &t, &info), TF_ERR_PARSE,
               "x.MTX.gz:1: expected the %%MatrixMarket banner");
    put_file(path_of("nb.mtx.gz"), gz, n);
    EXPECT_MSG(tf_read_tensor(path_of("nb.mtx.gz"), 1, &t, &info), TF_ERR_PARSE,
               "nb.mtx.gz:1: expected the %%MatrixMarket banner");
    free(gz);
    put_file(path_of("nb.mtx"), nb, strlen(nb));
    EXPECT_MSG(tf_read_tensor(path_of("nb.mtx"), 1, &t, &info), TF_ERR_PARSE,
               "nb.mtx:1: expected the %%MatrixMarket banner");
    /* the same text under another name is a FROSTT file */
    CHECK_OK(tf_parse_tensor("x.tns", nb, strlen(nb), 1, &t, &info));
    tf_tensor_free(&t);
}

/* -------------------------------------------------------- streaming */

/* Reads text in memory (reference), then compressed (xz, gz) from a file,
 * from memory and through a pipe with window w: same tensor and info. */

/* A child process writing s[0..len) into a pipe: its pid (-1 when no pipe
 * or child could be made), *rfd the read end, dev its /dev/fd path. */
static pid_t feed_pipe(const char *s, size_t len, int *rfd, char *dev, size_t dev_len)
{
    int fd[2];
    if (pipe(fd) != 0) return -1;
    const pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        for (size_t off = 0; off < len;) {
            const ssize_t k = write(fd[1], s + off, len - off);
            if (k <= 0) _exit(1);
            off += (size_t)k;
        }
        _exit(0);
    }
    close(fd[1]);
    if (pid < 0) {
        close(fd[0]);
        return -1;
    }
    *rfd = fd[0];
    snprintf(dev, dev_len, "/dev/fd/%d", fd[0]);
    return pid;
}

static void compare_streamed(const char *what, const char *s, size_t len, size_t w,
                             const char *ext)
{
    tf_tensor ref, t;
    tf_read_info ri, info;
    char name[64];
    snprintf(name, sizeof name, "s%s", ext);
    tf_io_set_window_bytes(0);
    tf_status st = tf_parse_tensor(name, s, len, 2, &ref, &ri);
    CHECKF(st == TF_OK, "%s: reference: %s", what, tf_last_error());
    if (st != TF_OK) return;
    tf_io_set_window_bytes(w);
    for (int kind = 1; kind <= 2; ++kind) {
        size_t n = 0;
        unsigned char *z = kind == 1 ? xz_pack(s, len, &n) : gz_pack(s, len, &n);
        CHECK(n > 0);
        snprintf(name, sizeof name, "s%s.%s", ext, kind == 1 ? "xz" : "gz");
        put_file(path_of(name), z, n);
        st = tf_read_tensor(path_of(name), 2, &t, &info);
        CHECKF(st == TF_OK && same_tensor(&ref, &t) && same_info(&ri, &info) &&
                   info.compressed == kind,
               "%s: %s (window %zu): %s; lines %llu/%llu", what, name, w, tf_last_error(),
               (unsigned long long)info.lines, (unsigned long long)ri.lines);
        tf_tensor_free(&t);
        st = tf_parse_tensor(name, (const char *)z, n, 3, &t, &info);
        CHECKF(st == TF_OK && same_tensor(&ref, &t) && same_info(&ri, &info),
               "%s: %s in memory (window %zu): %s", what, name, w, tf_last_error());
        tf_tensor_free(&t);
        free(z);
    }
    /* a regular file, uncompressed: read in windows too, never mapped (the
     * pipe's path below with the file's size; the larger windows suffice) */
    if (w >= 1000) {
        snprintf(name, sizeof name, "s%s", ext);
        put_file(path_of(name), s, len);
        st = tf_read_tensor(path_of(name), 2, &t, &info);
        CHECKF(st == TF_OK && same_tensor(&ref, &t) && same_info(&ri, &info) && info.compressed == 0,
               "%s: %s (window %zu): %s", what, name, w, tf_last_error());
        tf_tensor_free(&t);
    }
    /* a pipe, uncompressed */
    int rfd;
    char dev[64];
    const pid_t pid = feed_pipe(s, len, &rfd, dev, sizeof dev);
    if (pid > 0) {
        st = tf_read_tensor(dev, 2, &t, &info);
        CHECKF(st == TF_OK && same_tensor(&ref, &t) && info.lines == ri.lines &&
                   info.entries == ri.entries && info.bytes == ri.bytes && info.compressed == 0,
               "%s: pipe (window %zu): %s", what, w, tf_last_error());
        tf_tensor_free(&t);
        close(rfd);
        waitpid(pid, NULL, 0);
    }
    tf_io_set_window_bytes(0);
    tf_tensor_free(&ref);
}

static void streamed_same(void)
{
    static const size_t windows[] = {64, 97, 1000, 4096};
    for (size_t wi = 0; wi < sizeof windows / sizeof *windows; ++wi) {
        const size_t w = windows[wi];
        uint64_t x = 12345;
        /* FROSTT with comments, blank lines, CRLF, duplicates, a zero, unsorted */
        text a = {NULL, 0, 0, w};
        add_line(&a, "# a comment at the top");
        for (int i = 0; i < 3000; ++i) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            unsigned i1 = (unsigned)(x >> 33) % 50 + 1, i2 = (unsigned)(x >> 20) % 40 + 1,
                     i3 = (unsigned)(x >> 45) % 7 + 1;
            if (i % 97 == 5) add_line(&a, "# comment %d", i);
            else if (i % 89 == 3) add_line(&a, "   ");
            else if (i % 83 == 7) add_line(&a, "%u %u %u 0\r", i1, i2, i3);
            else add_line(&a, "%u\t%u  %u %.17g", i1, i2, i3, (double)(x % 100000) / 7.0 - 5000);
        }
        add_line(&a, "1 1 1 2.5"); /* no final newline on the last line */
        a.len--;
        compare_streamed("frostt", a.s, a.len, w, ".tns");
        /* a sorted 0-based file stays canonical across windows */
        text b = {NULL, 0, 0, w};
        for (int i = 0; i < 2000; ++i) add_line(&b, "%d %d %d.5", i / 40, i % 40, i + 1);
        compare_streamed("sorted 0-based", b.s, b.len, w, ".tns");
        /* ParTI header, its lines spread over more than one window */
        text c = {NULL, 0, 0, w};
        add_line(&c, "# ParTI");
        add_line(&c, "# with a few comment lines in front of the header");
        add_line(&c, "3");
        add_line(&c, "# mode lengths:");
        add_line(&c, "60 50 40");
        for (int i = 0; i < 1500; ++i) add_line(&c, "%d %d %d %d", i % 60 + 1, i % 50 + 1, i % 40 + 1, i);
        compare_streamed("parti", c.s, c.len, w, ".tns");
        /* sptensor */
        text d = {NULL, 0, 0, w};
        add_line(&d, "sptensor");
        add_line(&d, "2");
        add_line(&d, "100 100");
        add_line(&d, "1000");
        for (int i = 0; i < 1000; ++i) add_line(&d, "%d %d %.3e", i % 100 + 1, i / 10 + 1, i * 0.5 + 1);
        compare_streamed("sptensor", d.s, d.len, w, ".tns");
        /* Matrix Market, symmetric and pattern */
        text e = {NULL, 0, 0, w};
        add_line(&e, "%%%%MatrixMarket matrix coordinate real symmetric");
        add_line(&e, "%% comment");
        add_line(&e, "300 300 1200");
        for (int i = 0; i < 1200; ++i) add_line(&e, "%d %d %d", i % 300 + 1, (i % 300) / 2 + 1, i + 1);
        compare_streamed("mtx symmetric", e.s, e.len, w, ".mtx");
        text f = {NULL, 0, 0, w};
        add_line(&f, "%%%%MatrixMarket matrix coordinate pattern general");
        add_line(&f, "200 100 800");
        for (int i = 0; i < 800; ++i) add_line(&f, "%d %d", i % 200 + 1, i % 100 + 1);
        compare_streamed("mtx pattern", f.s, f.len, w, ".mtx");
        free(a.s);
        free(b.s);
        free(c.s);
        free(d.s);
        free(e.s);
        free(f.s);
    }
}

/* Reads s compressed (xz and gz) with window w and checks the error. */
static void streamed_error(int line, const char *s, size_t w, tf_status want, const char *n1,
                           const char *n2)
{
    tf_io_set_window_bytes(w);
    for (int kind = 1; kind <= 2; ++kind) {
        size_t n = 0;
        unsigned char *z = kind == 1 ? xz_pack(s, strlen(s), &n) : gz_pack(s, strlen(s), &n);
        const char *name = kind == 1 ? "err.tns.xz" : "err.tns.gz";
        put_file(path_of(name), z, n);
        tf_tensor t;
        tf_read_info info;
        tf_status st = tf_read_tensor(path_of(name), 2, &t, &info);
        expect_msg(line, st, want, n1, n2, NULL);
        free(z);
    }
    tf_io_set_window_bytes(0);
}

static void streamed_errors(void)
{
    const size_t w = 64;
    /* a bad field on line 1500 */
    text a = {NULL, 0, 0, w};
    for (int i = 1; i <= 2000; ++i) add_line(&a, i == 1500 ? "1 x 1 1" : "%d %d 1 1.5", i, i % 9 + 1);
    streamed_error(__LINE__, a.s, w, TF_ERR_PARSE, "err.tns.", ":1500: field 2: expected a non-negative");
    /* an index equal to a declared length on line 700, valid until a 0 on
     * line 1900 makes the file 0-based: the error names line 700 */
    text b = {NULL, 0, 0, w};
    add_line(&b, "3");
    add_line(&b, "40 40 40");
    for (int i = 3; i <= 2000; ++i)
        add_line(&b, "%d %d %d 1.0", i == 700 ? 40 : i % 39 + 1, i == 1900 ? 0 : i % 37 + 1, 3);
    streamed_error(__LINE__, b.s, w, TF_ERR_RANGE, ":700: field 1:", "0-based");
    /* the same file with --base 1 fails on line 1900 (the 0) */
    tf_io_set_window_bytes(w);
    size_t n = 0;
    unsigned char *z = gz_pack(b.s, b.len, &n);
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.base = 1;
    tf_tensor t;
    tf_read_info info;
    EXPECT_MSG(tf_parse_tensor_opts("b.tns.gz", (const char *)z, n, &o, &t, &info), TF_ERR_RANGE,
               "b.tns.gz:1900: field 2:", "found '0'");
    free(z);
    tf_io_set_window_bytes(0);
    /* a skew-symmetric diagonal entry on line 903 */
    text c = {NULL, 0, 0, w};
    add_line(&c, "%%%%MatrixMarket matrix coordinate real skew-symmetric");
    add_line(&c, "100 100 1000");
    for (int i = 3; i <= 1002; ++i) add_line(&c, "%d %d 1", i == 903 ? 5 : 50 + i % 50, i == 903 ? 5 : i % 49 + 1);
    streamed_error(__LINE__, c.s, w, TF_ERR_PARSE, ":903: a skew-symmetric matrix", "(5, 5)");
    /* sptensor count checked after the last window */
    text d = {NULL, 0, 0, w};
    add_line(&d, "sptensor");
    add_line(&d, "2");
    add_line(&d, "9 9");
    add_line(&d, "600");
    for (int i = 0; i < 500; ++i) add_line(&d, "%d %d 1", i % 9 + 1, i % 7 + 1);
    streamed_error(__LINE__, d.s, w, TF_ERR_PARSE, ":4: the sptensor header declares 600",
                   "500 coordinate lines");
    /* a sum of duplicates that overflows: lines 1300 and 1750, comment and
     * blank lines among the windows before them (issue 41 item 3) */
    text e = {NULL, 0, 0, w};
    for (int i = 1; i <= 2000; ++i) {
        if (i % 100 == 7) add_line(&e, "# comment on line %d", i);
        else if (i % 100 == 8) add_line(&e, " ");
        else if (i == 1300 || i == 1750) add_line(&e, "50 60 70 -1.2e308");
        else add_line(&e, "%d %d 1 1.5", i % 41 + 1, i % 9 + 1);
    }
    streamed_error(__LINE__, e.s, w, TF_ERR_RANGE, ":1750: field 4: coordinate 50 60 70 again (first on line 1300;",
                   "overflows the double range");
    /* a symmetric .mtx whose mirrored entry (line 803) meets line 903's */
    text f = {NULL, 0, 0, w};
    add_line(&f, "%%%%MatrixMarket matrix coordinate real symmetric");
    add_line(&f, "%% a comment");
    add_line(&f, "100 100 1000");
    for (int i = 4; i <= 1003; ++i)
        add_line(&f, "%d %d %s", i == 803 ? 90 : i == 903 ? 10 : 50 + i % 50, i == 803 ? 10 : i == 903 ? 90 : i % 49 + 1,
                 i == 803 || i == 903 ? "1e308" : "1");
    streamed_error(__LINE__, f.s, w, TF_ERR_RANGE, "", ":803: field 3 (mirrored): coordinate 10 90 again (first on line 903;");
    free(a.s);
    free(b.s);
    free(c.s);
    free(d.s);
    free(e.s);
    free(f.s);
}

/* Peak RSS growth (KiB) of reading path in a child process; -1 on failure.
 * *ok says whether the read failed with a message holding needle. */
static long child_read_peak(const char *path, const char *needle, int *ok)
{
    int fd[2];
    *ok = 0;
    if (pipe(fd) != 0) return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        long before = ru.ru_maxrss;
        tf_tensor t;
        tf_status s = tf_read_tensor(path, 2, &t, NULL);
        getrusage(RUSAGE_SELF, &ru);
        long res[2] = {ru.ru_maxrss - before,
                       s == TF_ERR_PARSE && strstr(tf_last_error(), needle) != NULL};
        if (!res[1]) fprintf(stderr, "child: %s\n", tf_last_error());
        if (write(fd[1], res, sizeof res) != (ssize_t)sizeof res) _exit(1);
        _exit(0);
    }
    close(fd[1]);
    long res[2] = {-1, 0};
    ssize_t k = read(fd[0], res, sizeof res);
    close(fd[0]);
    waitpid(pid, NULL, 0);
    if (k != (ssize_t)sizeof res) return -1;
    *ok = (int)res[1];
    return res[0];
}

/* gzip of n bytes of c, compressed in pieces. */
static void write_gz_bomb(const char *path, size_t n, char c)
{
    gzFile g = gzopen(path, "wb1");
    if (!g) return;
    char *buf = malloc(1 << 20);
    memset(buf, c, 1 << 20);
    for (size_t done = 0; done < n; done += 1 << 20) gzwrite(g, buf, 1 << 20);
    gzclose(g);
    free(buf);
}

static void bounded_garbage(void)
{
    const size_t n = (size_t)256 << 20;
    /* NUL bytes and a line of digits, each 256 MiB without a newline */
    const char c[2] = {'\0', '7'};
    for (int i = 0; i < 2; ++i) {
        write_gz_bomb(path_of("bomb.tns.gz"), n, c[i]);
        int ok = 0;
        long kib = child_read_peak(path_of("bomb.tns.gz"), "line 1 is longer than 1 MiB", &ok);
        CHECKF(ok && kib >= 0 && kib < 160 * 1024, "bomb of '%c': peak growth %ld KiB, ok %d",
               c[i] ? c[i] : '0', kib, ok);
        printf("gzip of 256 MiB of %s: rejected with %ld KiB of peak memory growth\n",
               c[i] ? "'7'" : "NUL", kib);
    }
    /* a long line after good ones: the right line number */
    text a = {NULL, 0, 0, 0};
    for (int i = 0; i < 10; ++i) add_line(&a, "%d 1 1 1", i + 1);
    size_t len = a.len + (2u << 20);
    char *s = malloc(len + 1);
    memcpy(s, a.s, a.len);
    memset(s + a.len, '1', len - a.len);
    s[len] = '\0';
    size_t zn = 0;
    unsigned char *z = xz_pack(s, len, &zn);
    tf_tensor t;
    tf_read_info info;
    tf_io_set_window_bytes(1 << 16);
    EXPECT_MSG(tf_parse_tensor("long.tns.xz", (const char *)z, zn, 2, &t, &info), TF_ERR_PARSE,
               "long.tns.xz:11: line 11 is longer than 1 MiB");
    tf_io_set_window_bytes(0);
    free(z);
    free(s);
    free(a.s);
    remove(path_of("bomb.tns.gz"));
}

/* ----------------------------------------------------- slice counts */

static void slice_counts(void)
{
    tf_tensor t;
    const uint64_t dims[3] = {4000000000ULL, 3, 3};
    CHECK_OK(tf_tensor_alloc(&t, 3, dims, 5));
    const uint32_t i0[5] = {3999999999u, 5, 0, 5, 123456789}, i1[5] = {0, 1, 2, 1, 1},
                   i2[5] = {2, 2, 2, 2, 0};
    for (int k = 0; k < 5; ++k) {
        t.ind[0][k] = i0[k];
        t.ind[1][k] = i1[k];
        t.ind[2][k] = i2[k];
        t.vals[k] = 1;
    }
    uint64_t ne = 0;
    uint64_t *c = cli_slice_counts(&t, 0, &ne); /* long mode: sorted copy */
    CHECK(c && ne == 4 && c[0] == 1 && c[1] == 2 && c[2] == 1 && c[3] == 1);
    free(c);
    c = cli_slice_counts(&t, 1, &ne); /* short mode: dense counter */
    CHECK(c && ne == 3 && c[0] == 1 && c[1] == 3 && c[2] == 1);
    free(c);
    c = cli_slice_counts(&t, 2, &ne);
    CHECK(c && ne == 2 && c[0] == 1 && c[1] == 4);
    free(c);
    /* both paths agree on a random mode */
    tf_tensor_free(&t);
    const uint64_t d2[2] = {1000, 7};
    CHECK_OK(tf_tensor_alloc(&t, 2, d2, 3000));
    uint64_t x = 99;
    for (int k = 0; k < 3000; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        t.ind[0][k] = (uint32_t)((x >> 33) % 1000);
        t.ind[1][k] = (uint32_t)(k % 7);
        t.vals[k] = 1;
    }
    uint64_t ne1 = 0, ne2 = 0;
    uint64_t *dense = cli_slice_counts(&t, 0, &ne1);
    t.dims[0] = 4000000000ULL;
    uint64_t *sparse = cli_slice_counts(&t, 0, &ne2);
    CHECK(dense && sparse && ne1 == ne2 && memcmp(dense, sparse, ne1 * sizeof *dense) == 0);
    free(dense);
    free(sparse);
    tf_tensor_free(&t);
}

/* Makes text the process's standard input (a pipe a child fills); returns
 * the saved descriptor of the old standard input, -1 on failure. */
static int stdin_from(const char *text, pid_t *pid)
{
    int fd[2], saved = dup(0);
    if (saved < 0 || pipe(fd) != 0) return -1;
    *pid = fork();
    if (*pid == 0) {
        close(fd[0]);
        const size_t len = strlen(text);
        for (size_t off = 0; off < len;) {
            ssize_t k = write(fd[1], text + off, len - off);
            if (k <= 0) _exit(1);
            off += (size_t)k;
        }
        _exit(0);
    }
    close(fd[1]);
    dup2(fd[0], 0);
    close(fd[0]);
    return saved;
}

static void stdin_restore(int saved, pid_t pid)
{
    dup2(saved, 0);
    close(saved);
    waitpid(pid, NULL, 0);
}

/* "-" is standard input for the tensor and matrix readers; messages name it. */
static void standard_input(void)
{
    pid_t pid;
    tf_tensor t;
    tf_read_info info;
    int saved = stdin_from("1 1 1 1.5\n2 3 1 2.5\n", &pid);
    CHECK(saved >= 0);
    if (saved < 0) return;
    tf_status st = tf_read_tensor("-", 2, &t, &info);
    CHECKF(st == TF_OK && t.order == 3 && t.nnz == 2 && t.dims[1] == 3 && info.format == TF_FILE_TNS,
           "tensor from standard input: %s", tf_last_error());
    tf_tensor_free(&t);
    stdin_restore(saved, pid);

    saved = stdin_from("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 3\n", &pid);
    st = tf_read_tensor("-", 2, &t, &info);
    CHECKF(st == TF_OK && info.format == TF_FILE_MTX && t.nnz == 1, "Matrix Market from standard input: %s",
           tf_last_error());
    tf_tensor_free(&t);
    stdin_restore(saved, pid);

    saved = stdin_from("1 1 1.0\n1 y 2.0\n", &pid);
    st = tf_read_tensor("-", 2, &t, &info);
    CHECKF(st == TF_ERR_PARSE && strstr(tf_last_error(), "<stdin>:2: field 2") == tf_last_error(),
           "a bad line from standard input: %s", tf_last_error());
    stdin_restore(saved, pid);

    tf_matrix m;
    saved = stdin_from("1 2\n3 4\n5 6\n", &pid);
    st = tf_matrix_read("-", &m);
    CHECKF(st == TF_OK && m.rows == 3 && m.cols == 2 && m.data[5] == 6.0, "matrix from standard input: %s",
           tf_last_error());
    tf_matrix_free(&m);
    stdin_restore(saved, pid);
    saved = stdin_from("1 2\n3\n", &pid);
    st = tf_matrix_read("-", &m);
    CHECKF(st == TF_ERR_PARSE && strstr(tf_last_error(), "<stdin>:2:") == tf_last_error(),
           "a bad matrix from standard input: %s", tf_last_error());
    stdin_restore(saved, pid);
}

/* ------------------------------------------------ issue 41: readers */

/* A file that shrinks while it is read is an error naming it (the text
 * path reads with read(), the binary path with pread), never a SIGBUS:
 * here the file is cut before the read with the size taken before. */
static void shrinking_files(void)
{
    text a = {NULL, 0, 0, 0};
    for (int i = 1; i <= 20000; ++i) add_line(&a, "%d %d %d 1.5", i % 97 + 1, i % 13 + 1, i % 7 + 1);
    const char *path = path_of("shrink.tns");
    put_file(path, a.s, a.len);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(ftruncate(fd, 1000) == 0);
        tf_decoder *dec = NULL;
        CHECK_OK(tf_decoder_open_fd("shrink.tns", fd, 1, &dec, NULL));
        tf_decoder_expect(dec, a.len); /* what fstat said before the cut */
        char buf[4096];
        size_t got = 0, total = 0;
        tf_status st = TF_OK;
        while ((st = tf_decoder_read(dec, buf, sizeof buf, &got)) == TF_OK && got) total += got;
        char want[128];
        snprintf(want, sizeof want, "shrink.tns: the file shrank while it was read (was %zu bytes, ended after 1000)",
                 a.len);
        CHECKF(st == TF_ERR_IO && total == 1000 && strstr(tf_last_error(), want), "%s", tf_last_error());
        tf_decoder_close(dec);
        close(fd);
    }
    /* the same bytes, the size right: read to the end without an error */
    put_file(path, a.s, a.len);
    tf_tensor t;
    tf_read_info info;
    CHECK_OK(tf_read_tensor(path, 2, &t, &info));
    CHECK(info.entries == 20000);
    /* binary: cut after fstat */
    const char *bin = path_of("shrink.bin");
    CHECK_OK(tf_write_tensor(bin, &t, TF_FILE_BIN));
    tf_tensor_free(&t);
    fd = open(bin, O_RDWR);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
        CHECK(ftruncate(fd, st.st_size / 2) == 0);
        tf_status s2 = tf_bin_read_fd("shrink.bin", fd, (uint64_t)st.st_size, 2, NULL, NULL, &t);
        char want[96];
        snprintf(want, sizeof want, "shrink.bin: the file shrank while it was read (was %lld bytes)",
                 (long long)st.st_size);
        CHECKF(s2 == TF_ERR_IO && strstr(tf_last_error(), want), "%s", tf_last_error());
        close(fd);
    }
    remove(bin);
    remove(path);
    free(a.s);
}

/* Reads path with the tensor reader; 1 if it failed with a message holding needle. */
static int read_fails_with(const char *path, const char *needle)
{
    tf_tensor t;
    tf_read_info info;
    tf_status st = tf_read_tensor(path, 2, &t, &info);
    if (st == TF_OK) tf_tensor_free(&t);
    const int ok = st != TF_OK && strstr(tf_last_error(), needle) != NULL;
    if (!ok) fprintf(stderr, "%s: %s\n", path, st == TF_OK ? "read" : tf_last_error());
    return ok;
}

/* Reads text through a pipe a child writes; the status, message in msg. */
static tf_status read_piped(const char *s, size_t len, char *msg, size_t cap)
{
    int rfd;
    char dev[64];
    const pid_t pid = feed_pipe(s, len, &rfd, dev, sizeof dev);
    if (pid <= 0) return TF_ERR_IO;
    tf_tensor t;
    tf_read_info info;
    tf_status st = tf_read_tensor(dev, 2, &t, &info);
    if (st == TF_OK) tf_tensor_free(&t);
    snprintf(msg, cap, "%s", st == TF_OK ? "" : tf_last_error());
    close(rfd); /* a writer still writing gets EPIPE */
    waitpid(pid, NULL, 0);
    return st;
}

/* One header rule (issue 41 item 10): comment lines before the first entry
 * of more than 64 MiB fail from a file, a pipe and memory alike, with the
 * same message (the name aside); less passes everywhere. */
static void header_limit(void)
{
    for (int over = 0; over <= 1; ++over) {
        const size_t lines = over ? 680000 : 650000; /* 100 bytes each: 68 / 65 MB, 64 MiB = 67.1 MB */
        const size_t len = lines * 100 + 8;
        char *s = malloc(len + 1);
        for (size_t i = 0; i < lines; ++i) {
            memset(s + i * 100, '#', 99);
            s[i * 100 + 99] = '\n';
        }
        memcpy(s + lines * 100, "1 1 1 1\n", 8);
        s[len] = '\0';
        const char *path = path_of("header.tns");
        put_file(path, s, len);
        tf_tensor t;
        tf_read_info info;
        tf_status sf = tf_read_tensor(path, 2, &t, &info);
        if (sf == TF_OK) tf_tensor_free(&t);
        char mf[512], mp[512], mm[512];
        snprintf(mf, sizeof mf, "%s", sf == TF_OK ? "" : tf_last_error());
        tf_status sp = read_piped(s, len, mp, sizeof mp);
        tf_status sm = tf_parse_tensor(path, s, len, 2, &t, &info);
        if (sm == TF_OK) tf_tensor_free(&t);
        snprintf(mm, sizeof mm, "%s", sm == TF_OK ? "" : tf_last_error());
        if (!over) {
            CHECKF(sf == TF_OK && sp == TF_OK && sm == TF_OK, "65 MB of comments: file %s, pipe %s, memory %s", mf, mp,
                   mm);
        } else {
            const char *need = ":671089: the header (with the comment and blank lines before it) is not complete "
                               "within the first 64 MiB";
            CHECKF(sf == TF_ERR_PARSE && sp == TF_ERR_PARSE && sm == TF_ERR_PARSE && strstr(mf, need) &&
                       strstr(mp, need) && strstr(mm, need),
                   "68 MB of comments: file '%s', pipe '%s', memory '%s'", mf, mp, mm);
            /* one message, whatever the source */
            CHECKF(!strcmp(strchr(mf, ':'), strchr(mp, ':')) && !strcmp(mf, mm), "'%s' / '%s' / '%s'", mf, mp, mm);
        }
        remove(path);
        free(s);
    }
}

/* Compressed data the readers do not take is named (issue 41 item 11). */
static void compressed_inside(void)
{
    const char *tns = "1 1 1 1\n2 2 2 2\n";
    size_t nx = 0, ng = 0, n2 = 0;
    unsigned char *x = xz_pack(tns, strlen(tns), &nx), *g = gz_pack(tns, strlen(tns), &ng);
    struct { const char *name; unsigned char *data; size_t len; const char *needle; } cases[4];
    unsigned char *xg = gz_pack((const char *)x, nx, &n2);
    size_t n3 = 0, n4 = 0, n5 = 0;
    unsigned char *gx = xz_pack((const char *)g, ng, &n3), *gg = gz_pack((const char *)g, ng, &n4);
    /* legacy .lzma through liblzma's LZMA_Alone encoder */
    unsigned char *lz = malloc(4096);
    lzma_stream z = LZMA_STREAM_INIT;
    lzma_options_lzma opt;
    lzma_lzma_preset(&opt, 1);
    if (lzma_alone_encoder(&z, &opt) == LZMA_OK) {
        z.next_in = (const uint8_t *)tns;
        z.avail_in = strlen(tns);
        z.next_out = lz;
        z.avail_out = 4096;
        while (lzma_code(&z, LZMA_FINISH) == LZMA_OK) {}
        n5 = 4096 - z.avail_out;
    }
    lzma_end(&z);
    cases[0].name = "x.tns.xz.gz", cases[0].data = xg, cases[0].len = n2,
    cases[0].needle = "x.tns.xz.gz: xz-compressed data inside gzip: decompress it first";
    cases[1].name = "x.tns.gz.xz", cases[1].data = gx, cases[1].len = n3,
    cases[1].needle = "x.tns.gz.xz: gzip-compressed data inside xz: decompress it first";
    cases[2].name = "x.tns.gz.gz", cases[2].data = gg, cases[2].len = n4,
    cases[2].needle = "x.tns.gz.gz: gzip-compressed data inside gzip: decompress it first";
    cases[3].name = "x.tns.lzma", cases[3].data = lz, cases[3].len = n5,
    cases[3].needle = "x.tns.lzma: an lzma-compressed file (not supported: use xz)";
    for (int i = 0; i < 4; ++i) {
        CHECK(cases[i].len > 0);
        put_file(path_of(cases[i].name), cases[i].data, cases[i].len);
        CHECK(read_fails_with(path_of(cases[i].name), cases[i].needle));
        tf_tensor t;
        tf_read_info info;
        tf_status st = tf_parse_tensor(cases[i].name, (const char *)cases[i].data, cases[i].len, 2, &t, &info);
        CHECKF(st == TF_ERR_UNAVAILABLE && strstr(tf_last_error(), cases[i].needle), "%s in memory: %s",
               cases[i].name, tf_last_error());
        tf_matrix m;
        char needle[160];
        snprintf(needle, sizeof needle, "%s", strchr(cases[i].needle, ':'));
        st = tf_matrix_read(path_of(cases[i].name), &m);
        CHECKF(st == TF_ERR_UNAVAILABLE && strstr(tf_last_error(), needle), "%s as a matrix: %s", cases[i].name,
               tf_last_error());
        remove(path_of(cases[i].name));
    }
    free(x), free(g), free(xg), free(gx), free(gg), free(lz);
}

/* The dense .mat reader bounds its lines as the tensor reader does
 * (issue 41 item 7): /dev/zero and a long line fail at once. */
static void matrix_bounds(void)
{
    tf_matrix m;
    double t0 = tf_wtime();
    tf_status st = tf_matrix_read("/dev/zero", &m);
    const double secs = tf_wtime() - t0;
    CHECKF(st == TF_ERR_PARSE && strstr(tf_last_error(), "/dev/zero:1: line 1 is longer than 1 MiB") && secs < 5,
           "%s (%.2f s)", tf_last_error(), secs);
    /* a long line after good ones, in a later window: its own line number */
    text a = {NULL, 0, 0, 0};
    for (int i = 0; i < 10; ++i) add_line(&a, "%d 1", i + 1);
    size_t len = a.len + (2u << 20);
    char *s = malloc(len);
    memcpy(s, a.s, a.len);
    memset(s + a.len, '1', len - a.len);
    put_file(path_of("long.mat"), s, len);
    tf_io_set_window_bytes(1 << 16);
    EXPECT_MSG(tf_matrix_read(path_of("long.mat"), &m), TF_ERR_PARSE, "long.mat:11: line 11 is longer than 1 MiB");
    /* many windows of good rows: every row, the last without its newline */
    text b = {NULL, 0, 0, 0};
    for (int i = 0; i < 30000; ++i) add_line(&b, i % 1000 == 5 ? "# a comment %d" : "%d %d.5 -%d", i, i, i);
    b.s[--b.len] = '\0';
    put_file(path_of("rows.mat"), b.s, b.len);
    st = tf_matrix_read(path_of("rows.mat"), &m);
    CHECKF(st == TF_OK && m.rows == 30000 - 30 && m.cols == 3 && m.data[3 * (m.rows - 1)] == 29999 &&
               m.data[3 * (m.rows - 1) + 2] == -29999,
           "%s", tf_last_error());
    tf_matrix_free(&m);
    /* an error deep in it: the file's line */
    b.s[b.len - 3] = 'x';
    put_file(path_of("rows.mat"), b.s, b.len);
    EXPECT_MSG(tf_matrix_read(path_of("rows.mat"), &m), TF_ERR_PARSE, "rows.mat:30000: field 3:");
    tf_io_set_window_bytes(0);
    remove(path_of("long.mat"));
    remove(path_of("rows.mat"));
    free(s);
    free(a.s);
    free(b.s);
}

/* ------------------------------------------------------------ progress */

typedef struct progress_log {
    int calls, finished, after_finish, bad_order, bad_total;
    uint64_t total, last_done;
    char first_step[32], last_step[32];
} progress_log;

static void log_progress(const tf_progress *p, void *user)
{
    progress_log *g = user;
    if (g->finished) g->after_finish++;
    if (g->calls++ == 0) snprintf(g->first_step, sizeof g->first_step, "%s", p->step);
    snprintf(g->last_step, sizeof g->last_step, "%s", p->step);
    if (p->finished) { g->finished++; return; }
    if (!strcmp(p->step, "reading")) {
        if (p->done < g->last_done) g->bad_order++;
        if (p->total != g->total || (p->total && p->done > p->total)) g->bad_total++;
        g->last_done = p->done;
    }
}

/* Reads path with a progress log; total: the size the calls should carry. */
static void read_logged(const char *what, const char *path, uint64_t total, int min_calls)
{
    progress_log g;
    memset(&g, 0, sizeof g);
    g.total = total;
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.threads = 2;
    o.progress = log_progress;
    o.progress_user = &g;
    tf_tensor t;
    tf_status st = tf_read_tensor_opts(path, &o, &t, NULL);
    CHECKF(st == TF_OK, "%s: %s", what, tf_last_error());
    CHECKF(g.calls >= min_calls && g.finished == 1 && g.after_finish == 0 && !strcmp(g.first_step, "reading"),
           "%s: %d calls (at least %d), %d finished, %d after it", what, g.calls, min_calls, g.finished,
           g.after_finish);
    CHECKF(g.bad_order == 0 && g.bad_total == 0 && (!total || g.last_done == total),
           "%s: done went back %d times, %d calls with another total than %llu, last done %llu", what,
           g.bad_order, g.bad_total, (unsigned long long)total, (unsigned long long)g.last_done);
    tf_tensor_free(&t);
}

static uint64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

/* The readers and builders report progress: bytes of the input where its
 * size is known, in order, and one last call with finished = 1. */
static void progress_reports(void)
{
    text a = {NULL, 0, 0, 0};
    for (int i = 0; i < 40000; ++i) add_line(&a, "%d %d %d %d.5", 1 + i % 101, 1 + i % 37, 1 + i / 40, i);
    const char *plain = path_of("progress.tns"), *gz = path_of("progress.tns.gz");
    put_file(plain, a.s, a.len);
    size_t zlen = 0;
    unsigned char *z = gz_pack(a.s, a.len, &zlen);
    put_file(gz, z, zlen);
    free(z);
    read_logged("mapped text (one chunk per thread or more)", plain, a.len, 2);
    tf_io_set_window_bytes(1 << 16); /* several windows */
    read_logged("gzip, streamed: compressed bytes", gz, file_size(gz), 4);
    tf_io_set_window_bytes(0);
    tf_tensor t;
    CHECK_OK(tf_read_tensor(plain, 2, &t, NULL));
    const char *bin = path_of("progress.bin");
    CHECK_OK(tf_write_tensor(bin, &t, TF_FILE_BIN));
    read_logged("binary, section by section", bin, file_size(bin), 5);
    /* a pipe: no size */
    pid_t pid;
    int saved = stdin_from(a.s, &pid);
    tf_io_set_window_bytes(1 << 16);
    read_logged("a pipe: no total", "-", 0, 3);
    tf_io_set_window_bytes(0);
    stdin_restore(saved, pid);
    /* a failed read ends with finished = 1 too */
    progress_log g;
    memset(&g, 0, sizeof g);
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.progress = log_progress;
    o.progress_user = &g;
    tf_tensor bad;
    const char *badp = path_of("progress_bad.tns");
    put_file(badp, "1 1 1 1\n2 2 x 2\n", 16);
    CHECK(tf_read_tensor_opts(badp, &o, &bad, NULL) == TF_ERR_PARSE && g.finished == 1 && g.after_finish == 0);

    /* plan builds and CP-ALS: the build is one step */
    memset(&g, 0, sizeof g);
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.backend = TF_BACKEND_CPU;
    po.progress = log_progress;
    po.progress_user = &g;
    tf_plan *p = NULL;
    CHECK_OK(tf_plan_build(&t, &po, &p));
    tf_plan_free(p);
    CHECKF(g.calls == 2 && g.finished == 1 && !strcmp(g.first_step, "building the plan"),
           "plan build: %d calls, %d finished, first step '%s'", g.calls, g.finished, g.first_step);
    memset(&g, 0, sizeof g);
    tf_cpd_opts co;
    tf_cpd_opts_default(&co);
    co.backend = TF_BACKEND_CPU;
    co.rank = 2;
    co.max_iters = 2;
    co.progress = log_progress;
    co.progress_user = &g;
    tf_ktensor k;
    CHECK_OK(tf_cpd(&t, &co, &k, NULL));
    tf_ktensor_free(&k);
    CHECKF(g.calls == 2 && g.finished == 1 && !strcmp(g.last_step, "building the plan"),
           "cpd: %d calls, %d finished, step '%s'", g.calls, g.finished, g.last_step);
    tf_tensor_free(&t);
    free(a.s);
}

/* The tool's progress line (cli/progress.c, compiled in here): after a
 * second, with the percentage; ended with a newline when stderr is a file;
 * offered only as the output level and stderr allow. */
static void progress_line(void)
{
    const char *path = path_of("progress_line.txt");
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (saved < 0 || fd < 0) { CHECK(!"cannot redirect stderr"); return; }
    dup2(fd, 2);
    close(fd);
    tf_progress p = {"reading", 430, 1000, 0};
    cli_progress(&p, (void *)"x.tns");
    usleep(1400000);
    p.finished = 1;
    cli_progress(&p, (void *)"x.tns");
    p = (tf_progress){"building the plan", 0, 0, 0}; /* a short one: never shown */
    cli_progress(&p, (void *)"cpd");
    p.finished = 1;
    cli_progress(&p, (void *)"cpd");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char buf[512] = "";
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = '\0';
    CHECKF(strstr(buf, "\rx.tns: reading 43% (430 B of 1000 B), 1.") == buf && n > 0 && buf[n - 1] == '\n' &&
               !strstr(buf, "cpd"),
           "progress line: '%s'", buf);
    cli_verbosity = CLI_QUIET;
    CHECK(cli_progress_fn() == NULL);
    cli_verbosity = CLI_VERBOSE;
    CHECK(cli_progress_fn() == cli_progress);
    cli_verbosity = CLI_NORMAL;
    CHECK(cli_progress_fn() == (isatty(2) ? cli_progress : NULL));
}

int main(void)
{
    mkdir(TF_TEST_TMP, 0777);
    mkdir(TMP, 0777);
    bounded_garbage(); /* first: it forks children that read (no OpenMP used before) */
    index_base();
    mtx_banner();
    streamed_same();
    streamed_errors();
    slice_counts();
    standard_input();
    shrinking_files();
    header_limit();
    compressed_inside();
    matrix_bounds();
    progress_reports();
    progress_line();
    return tf_test_finish("test_io_stream");
}
