/* SPDX-License-Identifier: BSD-3-Clause */
/* Writers and readers together: tns -> bin -> tns byte-identical on random
 * tensors, binary corruption detected, sptensor / ParTI / Matrix Market
 * round trips, xz and gzip input, atomic writes that leave nothing behind
 * on failure, dense .mat and Kruskal tensor output. */
#include <dirent.h>
#include <lzma.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "test_paths.h"
#include "core/rng.h"
#include "io/bin_format.h"
#include "io/checksum.h"
#include "tenfold.h"

#define TMP TF_TEST_TMP "/io_rt"

static char *path_of(const char *name) { return tt_path(TMP, name); }

static unsigned char *file_bytes(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { *len = 0; return NULL; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

static void put_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, len, f);
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* No temporary files may be left in TMP. */
static int leftover_temps(void)
{
    int n = 0;
    DIR *d = opendir(TMP);
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp.") != NULL;
    if (d) closedir(d);
    return n;
}

/* Random canonical tensor whose largest index in every mode is dims-1, so
 * a header-less text file gives back the same shape. */
static tf_tensor random_tensor(tf_rng *r, uint32_t order, uint64_t nnz, int integral)
{
    uint64_t dims[TF_MAX_ORDER];
    for (uint32_t m = 0; m < order; ++m) dims[m] = 1 + tf_rng_below(r, m == 0 ? 5000 : 60);
    tf_tensor t;
    if (tf_tensor_alloc(&t, order, dims, nnz) != TF_OK) abort();
    for (uint64_t k = 0; k < nnz; ++k) {
        for (uint32_t m = 0; m < order; ++m)
            t.ind[m][k] = k == 0 ? (uint32_t)(dims[m] - 1) : (uint32_t)tf_rng_below(r, dims[m]);
        t.vals[k] = integral
                        ? (double)((int64_t)tf_rng_below(r, 2001) - 1000)
                        : (tf_rng_uniform(r) - 0.5) * pow(10.0, (double)tf_rng_below(r, 30) - 15);
        if (t.vals[k] == 0) t.vals[k] = 3;
    }
    tf_tensor_canonicalize(&t, NULL, NULL);
    return t;
}

static int same_tensor(const tf_tensor *a, const tf_tensor *b)
{
    if (a->order != b->order || a->nnz != b->nnz) return 0;
    for (uint32_t m = 0; m < a->order; ++m)
        if (a->dims[m] != b->dims[m] || memcmp(a->ind[m], b->ind[m], a->nnz * 4)) return 0;
    return memcmp(a->vals, b->vals, a->nnz * 8) == 0;
}

static void tns_bin_tns(void)
{
    tf_rng r;
    tf_rng_seed(&r, 1234);
    for (int trial = 0; trial < 10; ++trial) {
        uint32_t order = 2 + (uint32_t)(trial % 5);
        tf_tensor x = random_tensor(&r, order, 1 + tf_rng_below(&r, 30000), trial % 2);
        tf_tensor y, z;
        tf_read_info info;
        CHECK_OK(tf_write_tensor(path_of("a.tns"), &x, TF_FILE_AUTO));
        CHECK_OK(tf_read_tensor(path_of("a.tns"), 2, &y, &info));
        CHECKF(same_tensor(&x, &y), "trial %d: tns read differs", trial);
        CHECK(info.format == TF_FILE_TNS && info.duplicates == 0 && info.zeros == 0);
        CHECK_OK(tf_write_tensor(path_of("a.bin"), &y, TF_FILE_AUTO));
        CHECK_OK(tf_read_tensor(path_of("a.bin"), 2, &z, &info));
        CHECKF(same_tensor(&x, &z), "trial %d: bin read differs", trial);
        CHECK(info.format == TF_FILE_BIN &&
              info.bytes == tf_bin_header_bytes(order) + tf_tensor_bytes(&x));
        CHECK_OK(tf_write_tensor(path_of("b.tns"), &z, TF_FILE_TNS));
        size_t la, lb;
        unsigned char *a = file_bytes(path_of("a.tns"), &la),
                      *b = file_bytes(path_of("b.tns"), &lb);
        CHECKF(a && b && la == lb && memcmp(a, b, la) == 0, "trial %d: tns files differ", trial);
        free(a);
        free(b);
        tf_tensor_free(&x);
        tf_tensor_free(&y);
        tf_tensor_free(&z);
    }
    /* the text itself: integers stay integers, others round-trip with %.17g */
    uint64_t dims[2] = {3, 2};
    tf_tensor t;
    tf_tensor_alloc(&t, 2, dims, 3);
    uint32_t i0[3] = {0, 1, 2}, i1[3] = {1, 0, 1};
    double v[3] = {5, -0.1, 1e300};
    memcpy(t.ind[0], i0, sizeof i0);
    memcpy(t.ind[1], i1, sizeof i1);
    memcpy(t.vals, v, sizeof v);
    CHECK_OK(tf_write_tensor(path_of("c.tns"), &t, TF_FILE_TNS));
    size_t n;
    char *text = (char *)file_bytes(path_of("c.tns"), &n);
    const char *want = "1 2 5\n2 1 -0.10000000000000001\n3 2 1.0000000000000001e+300\n";
    CHECKF(text && n == strlen(want) && !memcmp(text, want, n), "tns text: %.*s", (int)n, text);
    free(text);
    tf_tensor_free(&t);
}

static void expect_bin_error(const unsigned char *img, size_t len, tf_status want,
                             const char *needle)
{
    tf_tensor t;
    put_file(path_of("bad.bin"), img, len);
    tf_status s = tf_read_tensor(path_of("bad.bin"), 2, &t, NULL);
    CHECKF(s == want && strstr(tf_last_error(), needle) && strstr(tf_last_error(), "bad.bin"),
           "got %s: %s (want %s)", tf_status_name(s), tf_last_error(), needle);
    /* the same image from memory */
    s = tf_parse_tensor("mem.bin", (const char *)img, len, 2, &t, NULL);
    CHECKF(s == want && strstr(tf_last_error(), needle), "memory: %s", tf_last_error());
}

static void bin_corruption(void)
{
    tf_rng r;
    tf_rng_seed(&r, 99);
    tf_tensor x = random_tensor(&r, 3, 5000, 0), y;
    CHECK_OK(tf_write_tensor(path_of("c.bin"), &x, TF_FILE_BIN));
    size_t len;
    unsigned char *img = file_bytes(path_of("c.bin"), &len);
    const size_t hb = (size_t)tf_bin_header_bytes(3);
    CHECK(len == hb + 5000 * 20);
    CHECK_OK(tf_parse_tensor("mem.bin", (const char *)img, len, 2, &y, NULL));
    CHECK(same_tensor(&x, &y));
    tf_tensor_free(&y);

    unsigned char *bad = malloc(len + 16);
    /* a flipped bit anywhere in the payload or the checksum */
    const size_t spots[] = {hb, hb + 7, hb + 5000 * 4 + 3, hb + 5000 * 12, len - 1, hb - 8};
    for (size_t i = 0; i < sizeof spots / sizeof *spots; ++i) {
        memcpy(bad, img, len);
        bad[spots[i]] ^= 0x10;
        expect_bin_error(bad, len, TF_ERR_PARSE, "checksum mismatch");
    }
    /* a changed dim, still in range: only the checksum can tell */
    memcpy(bad, img, len);
    bad[32] ^= 0x01;
    expect_bin_error(bad, len, TF_ERR_PARSE, "checksum mismatch");
    memcpy(bad, img, len);
    memset(bad + 32, 0, 8); /* dim 0 */
    expect_bin_error(bad, len, TF_ERR_PARSE, "mode 1 length 0");
    expect_bin_error(img, len - 1, TF_ERR_PARSE, "truncated payload");
    expect_bin_error(img, 20, TF_ERR_PARSE, "truncated header");
    expect_bin_error(img, 40, TF_ERR_PARSE, "truncated header");
    memcpy(bad, img, len);
    memset(bad + len, 0, 16);
    expect_bin_error(bad, len + 16, TF_ERR_PARSE, "unexpected bytes");
    memcpy(bad, img, len);
    bad[8] = 2; /* version 2 */
    expect_bin_error(bad, len, TF_ERR_UNAVAILABLE, "version 2");
    memcpy(bad, img, len);
    bad[16] = 8; /* 8-byte indices */
    expect_bin_error(bad, len, TF_ERR_UNAVAILABLE, "widths");
    memcpy(bad, img, len);
    bad[12] = 17; /* order */
    expect_bin_error(bad, len, TF_ERR_PARSE, "order 17");

    /* A well-formed file (valid checksum) whose index is out of range. */
    tf_tensor evil;
    CHECK_OK(tf_tensor_copy(&x, &evil));
    evil.ind[1][10] = (uint32_t)evil.dims[1];
    memcpy(bad, img, len);
    memcpy(bad + hb + 5000 * 4 + 10 * 4, &evil.ind[1][10], 4);
    uint64_t sum = tf_bin_checksum(bad, &evil, 1);
    memcpy(bad + hb - 8, &sum, 8);
    expect_bin_error(bad, len, TF_ERR_RANGE, "non-zero 11: mode 2 index");
    /* ... and one that is valid but not canonical is sorted on the way in */
    tf_tensor_free(&evil);
    CHECK_OK(tf_tensor_copy(&x, &evil));
    for (uint32_t m = 0; m < 3; ++m) {
        uint32_t s = evil.ind[m][0];
        evil.ind[m][0] = evil.ind[m][1];
        evil.ind[m][1] = s;
    }
    double s0 = evil.vals[0]; evil.vals[0] = evil.vals[1]; evil.vals[1] = s0;
    unsigned char hdr[TF_BIN_HEADER_MAX];
    memcpy(hdr, img, hb);
    uint64_t sum2 = tf_bin_checksum(hdr, &evil, 2);
    memcpy(hdr + hb - 8, &sum2, 8);
    FILE *f = fopen(path_of("swap.bin"), "wb");
    fwrite(hdr, 1, hb, f);
    for (uint32_t m = 0; m < 3; ++m) fwrite(evil.ind[m], 4, evil.nnz, f);
    fwrite(evil.vals, 8, evil.nnz, f);
    fclose(f);
    CHECK_OK(tf_read_tensor(path_of("swap.bin"), 2, &y, NULL));
    CHECK(same_tensor(&x, &y));
    tf_tensor_free(&y);
    tf_tensor_free(&evil);
    free(bad);
    free(img);
    tf_tensor_free(&x);
}

static void header_round_trips(void)
{
    tf_rng r;
    tf_rng_seed(&r, 5);
    tf_tensor x = random_tensor(&r, 4, 3000, 0), y;
    x.dims[2] += 7; /* trailing empty slices: only a header keeps them */
    tf_read_info info;
    CHECK_OK(tf_write_tensor(path_of("h.tns"), &x, TF_FILE_TNS_HEADER));
    CHECK_OK(tf_read_tensor(path_of("h.tns"), 2, &y, &info));
    CHECK(same_tensor(&x, &y) && info.format == TF_FILE_TNS_HEADER && info.declared_dims);
    tf_tensor_free(&y);
    CHECK_OK(tf_write_tensor(path_of("s.tns"), &x, TF_FILE_SPTENSOR));
    CHECK_OK(tf_read_tensor(path_of("s.tns"), 1, &y, &info));
    CHECK(same_tensor(&x, &y) && info.format == TF_FILE_SPTENSOR && info.declared_dims);
    tf_tensor_free(&y);
    size_t n;
    char *text = (char *)file_bytes(path_of("s.tns"), &n);
    char head[128];
    snprintf(head, sizeof head, "sptensor\n4\n%llu %llu %llu %llu\n3000\n",
             (unsigned long long)x.dims[0], (unsigned long long)x.dims[1],
             (unsigned long long)x.dims[2], (unsigned long long)x.dims[3]);
    CHECKF(text && !strncmp(text, head, strlen(head)), "sptensor header: %.60s", text);
    free(text);
    /* without a header the shape shrinks to the largest index */
    CHECK_OK(tf_write_tensor(path_of("p.tns"), &x, TF_FILE_TNS));
    CHECK_OK(tf_read_tensor(path_of("p.tns"), 2, &y, &info));
    CHECK(y.dims[2] == x.dims[2] - 7 && !info.declared_dims);
    tf_tensor_free(&y);
    /* TF_FILE_AUTO on a .tns name keeps them: the ParTI header form (issue 12) */
    uint64_t implied[TF_MAX_ORDER];
    CHECK(tf_tensor_implied_dims(&x, implied) == 1 && implied[2] == x.dims[2] - 7 && implied[0] == x.dims[0]);
    CHECK(tf_write_format(path_of("a.tns"), &x, TF_FILE_AUTO) == TF_FILE_TNS_HEADER);
    CHECK(tf_write_format(path_of("a.tns"), &x, TF_FILE_TNS) == TF_FILE_TNS);
    CHECK(tf_write_format(path_of("a.bin"), &x, TF_FILE_AUTO) == TF_FILE_BIN);
    CHECK_OK(tf_write_tensor(path_of("a.tns"), &x, TF_FILE_AUTO));
    CHECK_OK(tf_read_tensor(path_of("a.tns"), 2, &y, &info));
    CHECK(same_tensor(&x, &y) && info.format == TF_FILE_TNS_HEADER && info.declared_dims);
    tf_tensor_free(&y);
    x.dims[2] -= 7; /* nothing to lose: AUTO stays plain FROSTT */
    CHECK(tf_tensor_implied_dims(&x, NULL) == 0);
    CHECK(tf_write_format(path_of("a.tns"), &x, TF_FILE_AUTO) == TF_FILE_TNS);
    CHECK_OK(tf_write_tensor(path_of("a.tns"), &x, TF_FILE_AUTO));
    CHECK_OK(tf_read_tensor(path_of("a.tns"), 2, &y, &info));
    CHECK(same_tensor(&x, &y) && info.format == TF_FILE_TNS && !info.declared_dims);
    tf_tensor_free(&y);
    tf_tensor_free(&x);
    /* one non-zero in a 2 x 2 x 2 tensor (the check --fix case) */
    const uint64_t d2[3] = {2, 2, 2};
    CHECK_OK(tf_tensor_alloc(&x, 3, d2, 1));
    x.ind[0][0] = x.ind[1][0] = x.ind[2][0] = 0;
    x.vals[0] = 1.5;
    CHECK_OK(tf_write_tensor(path_of("one.tns"), &x, TF_FILE_AUTO));
    CHECK_OK(tf_read_tensor(path_of("one.tns"), 1, &y, &info));
    CHECK(same_tensor(&x, &y) && y.dims[0] == 2 && y.dims[1] == 2 && y.dims[2] == 2);
    tf_tensor_free(&y);
    tf_tensor_free(&x);
}

static void mtx_round_trips(void)
{
    tf_rng r;
    tf_rng_seed(&r, 17);
    tf_tensor x = random_tensor(&r, 2, 4000, 1), y;
    x.dims[1] += 3;
    tf_read_info info;
    CHECK_OK(tf_write_tensor(path_of("m.mtx"), &x, TF_FILE_AUTO));
    CHECK_OK(tf_read_tensor(path_of("m.mtx"), 2, &y, &info));
    CHECK(same_tensor(&x, &y) && info.format == TF_FILE_MTX && !info.mtx_symmetric);
    tf_tensor_free(&y);
    /* symmetric file, expanded, written back as general, read again */
    const char *sym = "%%MatrixMarket matrix coordinate real symmetric\n% lower triangle\n4 4 4\n"
                      "1 1 2\n3 1 -1.5\n4 2 7\n4 4 1\n";
    put_file(path_of("sym.mtx"), sym, strlen(sym));
    CHECK_OK(tf_read_tensor(path_of("sym.mtx"), 2, &y, &info));
    CHECK(info.mtx_symmetric && y.nnz == 6 && info.entries == 4);
    double dense[16] = {0};
    for (uint64_t k = 0; k < y.nnz; ++k) dense[y.ind[0][k] * 4 + y.ind[1][k]] = y.vals[k];
    CHECK(dense[0] == 2 && dense[8] == -1.5 && dense[2] == -1.5 && dense[13] == 7 &&
          dense[7] == 7 && dense[15] == 1);
    tf_tensor z;
    CHECK_OK(tf_write_tensor(path_of("gen.mtx"), &y, TF_FILE_MTX));
    CHECK_OK(tf_read_tensor(path_of("gen.mtx"), 2, &z, &info));
    CHECK(same_tensor(&y, &z) && !info.mtx_symmetric);
    tf_tensor_free(&z);
    tf_tensor_free(&y);
    tf_tensor_free(&x);
    /* order 3 cannot be Matrix Market; nothing is written; no compressed output */
    tf_tensor t3 = random_tensor(&r, 3, 10, 1);
    CHECK(tf_write_tensor(path_of("t3.tns.xz"), &t3, TF_FILE_AUTO) == TF_ERR_UNAVAILABLE);
    CHECK(!exists(path_of("t3.tns.xz")));
    CHECK(tf_write_tensor(path_of("t3.mtx"), &t3, TF_FILE_AUTO) == TF_ERR_ARG);
    CHECK(!exists(path_of("t3.mtx")));
    tf_tensor_free(&t3);
}

static size_t xz_compress(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    size_t pos = 0;
    if (lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, in, n, out, &pos, cap) != LZMA_OK)
        return 0;
    return pos;
}

static size_t gz_compress(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return 0;
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t len = z.total_out;
    deflateEnd(&z);
    return rc == Z_STREAM_END ? len : 0;
}

static void compressed_input(void)
{
    tf_rng r;
    tf_rng_seed(&r, 23);
    tf_tensor x = random_tensor(&r, 3, 20000, 1), y;
    tf_read_info info;
    CHECK_OK(tf_write_tensor(path_of("z.tns"), &x, TF_FILE_TNS));
    CHECK_OK(tf_write_tensor(path_of("z.bin"), &x, TF_FILE_BIN));
    const char *src[2] = {"z.tns", "z.bin"};
    for (int s = 0; s < 2; ++s) {
        size_t n;
        unsigned char *plain = file_bytes(path_of(src[s]), &n);
        size_t cap = n + n / 2 + 1024;
        unsigned char *packed = malloc(cap * 2);
        for (int kind = 1; kind <= 2; ++kind) {
            size_t len =
                kind == 1 ? xz_compress(plain, n, packed, cap) : gz_compress(plain, n, packed, cap);
            CHECK(len > 0);
            char name[64];
            snprintf(name, sizeof name, "%s.%s", src[s], kind == 1 ? "xz" : "gz");
            put_file(path_of(name), packed, len);
            tf_status st = tf_read_tensor(path_of(name), 2, &y, &info);
            CHECKF(st == TF_OK && same_tensor(&x, &y) && info.compressed == kind &&
                       info.bytes == n && info.format == (s ? TF_FILE_BIN : TF_FILE_TNS),
                   "%s: %s", name, tf_last_error());
            tf_tensor_free(&y);
            /* truncated stream: an error naming the file */
            put_file(path_of(name), packed, len / 2);
            st = tf_read_tensor(path_of(name), 2, &y, &info);
            CHECKF(st == TF_ERR_PARSE && strstr(tf_last_error(), name) &&
                       strstr(tf_last_error(), kind == 1 ? "xz" : "gzip"),
                   "%s truncated: %s", name, tf_last_error());
            /* corrupt byte in the middle */
            packed[len / 2] ^= 0x55;
            put_file(path_of(name), packed, len);
            st = tf_read_tensor(path_of(name), 2, &y, &info);
            CHECKF(st != TF_OK && strstr(tf_last_error(), name), "%s corrupt: %s", name,
                   tf_last_error());
            tf_tensor_free(&y);
            packed[len / 2] ^= 0x55;
        }
        /* two concatenated gzip members read as one text */
        if (s == 0) {
            size_t half = n / 2;
            while (plain[half - 1] != '\n') ++half;
            size_t l1 = gz_compress(plain, half, packed, cap);
            size_t l2 = gz_compress(plain + half, n - half, packed + l1, cap);
            put_file(path_of("two.tns.gz"), packed, l1 + l2);
            CHECK_OK(tf_read_tensor(path_of("two.tns.gz"), 2, &y, &info));
            CHECK(same_tensor(&x, &y));
            tf_tensor_free(&y);
        }
        free(packed);
        free(plain);
    }
    tf_tensor_free(&x);
}

static void atomic_writes(void)
{
    tf_rng r;
    tf_rng_seed(&r, 31);
    tf_tensor x = random_tensor(&r, 3, 50000, 0);
    /* missing directory */
    CHECK(tf_write_tensor(TMP "/missing/dir/x.tns", &x, TF_FILE_TNS) == TF_ERR_IO);
    CHECK(strstr(tf_last_error(), "missing/dir/x.tns") != NULL);
    CHECK(!exists(TMP "/missing"));
    /* target is a directory: the rename fails, the temporary file goes */
    mkdir(path_of("adir"), 0777);
    CHECK(tf_write_tensor(path_of("adir"), &x, TF_FILE_TNS) == TF_ERR_IO);
    CHECK(tf_write_tensor(path_of("adir"), &x, TF_FILE_BIN) == TF_ERR_IO);
    CHECK(leftover_temps() == 0);
    rmdir(path_of("adir"));
    /* a write that fails half-way (file size limit) keeps the old file */
    tf_tensor small = random_tensor(&r, 3, 10, 1);
    CHECK_OK(tf_write_tensor(path_of("keep.tns"), &small, TF_FILE_TNS));
    size_t n0, n1;
    unsigned char *before = file_bytes(path_of("keep.tns"), &n0);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 64 << 10;
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        tf_status s1 = tf_write_tensor(path_of("keep.tns"), &x, TF_FILE_TNS);
        tf_status s2 = tf_write_tensor(path_of("keep.tns"), &x, TF_FILE_BIN);
        tf_matrix big;
        tf_matrix_alloc(&big, 20000, 4);
        for (uint64_t i = 0; i < 80000; ++i) big.data[i] = (double)i;
        tf_status s3 = tf_matrix_write(path_of("keep.tns"), &big);
        tf_matrix_free(&big);
        setrlimit(RLIMIT_FSIZE, &old);
        CHECKF(s1 == TF_ERR_IO && s2 == TF_ERR_IO && s3 == TF_ERR_IO, "%s", tf_last_error());
        unsigned char *after = file_bytes(path_of("keep.tns"), &n1);
        CHECK(n0 == n1 && !memcmp(before, after, n0));
        free(after);
        CHECK(leftover_temps() == 0);
    }
    free(before);
    /* read-only directory (root ignores permissions, so only checked otherwise) */
    if (geteuid() != 0) {
        mkdir(path_of("ro"), 0555);
        chmod(path_of("ro"), 0555);
        CHECK(tf_write_tensor(path_of("ro/x.tns"), &x, TF_FILE_TNS) == TF_ERR_IO);
        CHECK(!exists(path_of("ro/x.tns")));
        rmdir(path_of("ro"));
    }
    /* an invalid tensor is refused before any file is touched */
    small.vals[0] = NAN;
    CHECK(tf_write_tensor(path_of("nan.tns"), &small, TF_FILE_TNS) == TF_ERR_RANGE);
    CHECK(!exists(path_of("nan.tns")));
    tf_tensor_free(&small);
    tf_tensor_free(&x);
}

static void fill_random(tf_rng *r, double *v, uint64_t n)
{
    for (uint64_t i = 0; i < n; ++i) {
        double s = tf_rng_uniform(r) - 0.5;
        v[i] = s * pow(10.0, (double)tf_rng_below(r, 600) - 300);
        if (i % 97 == 0) v[i] = 0.0;
        if (i % 89 == 0) v[i] = 4.9406564584124654e-324 * (double)(1 + tf_rng_below(r, 1000));
    }
}

static void dense_files(void)
{
    tf_rng r;
    tf_rng_seed(&r, 77);
    tf_matrix a, b;
    CHECK_OK(tf_matrix_alloc(&a, 300, 7));
    fill_random(&r, a.data, 300 * 7);
    a.data[5] = -0.0;
    CHECK_OK(tf_matrix_write(path_of("a.mat"), &a));
    CHECK_OK(tf_matrix_read(path_of("a.mat"), &b));
    CHECK(b.rows == 300 && b.cols == 7 && !memcmp(a.data, b.data, 300 * 7 * sizeof(double)));
    tf_matrix_free(&b);
    /* SPLATT layout: signed values, each followed by one space */
    size_t n;
    char *text = (char *)file_bytes(path_of("a.mat"), &n);
    int lines = 0, layout = 1;
    for (size_t i = 0; i < n; ++i)
        if (text[i] == '\n') {
            ++lines;
            layout &= i > 0 && text[i - 1] == ' ';
        }
    CHECK(lines == 300 && layout && (text[0] == '+' || text[0] == '-'));
    free(text);

    /* Kruskal tensor, SPLATT files */
    uint64_t dims[3] = {40, 7, 12};
    tf_ktensor k;
    CHECK_OK(tf_ktensor_alloc(&k, 3, dims, 5));
    fill_random(&r, k.lambda, 5);
    for (uint32_t m = 0; m < 3; ++m) fill_random(&r, k.factors[m].data, dims[m] * 5);
    CHECK_OK(tf_ktensor_write_splatt(path_of("kt"), &k));
    for (uint32_t m = 0; m < 3; ++m) {
        char name[64];
        snprintf(name, sizeof name, "kt.mode%u.mat", m + 1);
        CHECK_OK(tf_matrix_read(path_of(name), &b));
        CHECK(b.rows == dims[m] && b.cols == 5 &&
              !memcmp(b.data, k.factors[m].data, dims[m] * 5 * sizeof(double)));
        tf_matrix_free(&b);
    }
    CHECK_OK(tf_matrix_read(path_of("kt.lambda.mat"), &b));
    CHECK(b.rows == 5 && b.cols == 1 && !memcmp(b.data, k.lambda, 5 * sizeof(double)));
    tf_matrix_free(&b);

    /* Tensor Toolbox ktensor: check the layout and read every number back */
    CHECK_OK(tf_ktensor_write_ttb(path_of("kt.ttb"), &k));
    FILE *f = fopen(path_of("kt.ttb"), "r");
    char word[32];
    unsigned order = 0, rank = 0, d[3] = {0};
    int ok = f && fscanf(f, "%31s %u %u %u %u %u", word, &order, &d[0], &d[1], &d[2], &rank) == 6 &&
             !strcmp(word, "ktensor") && order == 3 && d[0] == 40 && d[1] == 7 && d[2] == 12 &&
             rank == 5;
    for (unsigned i = 0; ok && i < rank; ++i) {
        double v;
        ok = fscanf(f, "%lf", &v) == 1 && v == k.lambda[i];
    }
    for (uint32_t m = 0; ok && m < 3; ++m) {
        unsigned two, rows, cols;
        ok = fscanf(f, "%31s %u %u %u", word, &two, &rows, &cols) == 4 && !strcmp(word, "matrix") &&
             two == 2 && rows == dims[m] && cols == 5;
        for (uint64_t i = 0; ok && i < dims[m] * 5; ++i) {
            double v;
            ok = fscanf(f, "%lf", &v) == 1 && v == k.factors[m].data[i];
        }
    }
    CHECK(ok && fscanf(f, "%31s", word) == EOF);
    if (f) fclose(f);
    /* each factor row on its own line: 4 + 1 + 3 * (3 + rows) lines */
    text = (char *)file_bytes(path_of("kt.ttb"), &n);
    lines = 0;
    for (size_t i = 0; i < n; ++i) lines += text[i] == '\n';
    CHECK(lines == 5 + 3 * 3 + 40 + 7 + 12);
    free(text);
    /* a non-finite factor is refused before any file is written */
    k.factors[2].data[3] = INFINITY;
    CHECK(tf_ktensor_write_splatt(path_of("bad"), &k) == TF_ERR_NUMERIC);
    CHECK(!exists(path_of("bad.mode1.mat")) && !exists(path_of("bad.lambda.mat")));
    tf_ktensor_free(&k);
    tf_matrix_free(&a);
}

/* Parts of a tensor (tf_read_opts.part / parts, not collective: read
 * whole, then cut): from a .bin and from a .tns they are the same
 * consecutive ranges of the canonical tensor, their union is the tensor,
 * total_nnz is the whole's; more parts than non-zeros give empty parts; a
 * part number out of range is an argument error; a .bin whose non-zeros
 * are not in order gives the parts of its canonical tensor, as one process
 * reads it (a .bin read in parts at its offsets by MPI ranks:
 * tests/cli/mpi_agree.sh); a collective read without MPI ranks fails. */
static void parts(void)
{
    tf_rng r;
    tf_rng_seed(&r, 99);
    tf_tensor x = random_tensor(&r, 3, 5000, 0);
    CHECK_OK(tf_write_tensor(path_of("p.bin"), &x, TF_FILE_AUTO));
    CHECK_OK(tf_write_tensor(path_of("p.tns"), &x, TF_FILE_AUTO));
    const uint64_t counts[] = {1, 2, 3, 7, x.nnz + 3};
    for (unsigned c = 0; c < sizeof counts / sizeof *counts; ++c) {
        const uint64_t P = counts[c];
        for (int f = 0; f < 2; ++f) {
            uint64_t at = 0;
            int ok = 1;
            for (uint64_t p = 0; p < P; ++p) {
                tf_read_opts o;
                tf_read_opts_default(&o);
                o.part = p;
                o.parts = P;
                tf_tensor y;
                tf_read_info info;
                tf_status s = tf_read_tensor_opts(path_of(f ? "p.tns" : "p.bin"), &o, &y, &info);
                if (s != TF_OK) {
                    CHECKF(0, "part %llu of %llu (%s): %s", (unsigned long long)p, (unsigned long long)P,
                           f ? "tns" : "bin", tf_last_error());
                    ok = 0;
                    break;
                }
                ok &= info.total_nnz == x.nnz && y.order == x.order && at + y.nnz <= x.nnz;
                for (uint32_t m = 0; ok && m < x.order; ++m)
                    ok &= y.dims[m] == x.dims[m] && !memcmp(y.ind[m], x.ind[m] + at, y.nnz * 4);
                ok &= !memcmp(y.vals, x.vals + at, y.nnz * 8);
                at += y.nnz;
                tf_tensor_free(&y);
            }
            CHECKF(ok && at == x.nnz, "%llu parts of a %s file: %llu of %llu non-zeros in order", (unsigned long long)P,
                   f ? "tns" : "bin", (unsigned long long)at, (unsigned long long)x.nnz);
        }
    }
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.part = 3;
    o.parts = 3;
    tf_tensor y;
    CHECK(tf_read_tensor_opts(path_of("p.bin"), &o, &y, NULL) == TF_ERR_ARG);
    /* a binary file whose non-zeros are not in order: the parts of its canonical tensor */
    tf_tensor w;
    CHECK_OK(tf_tensor_alloc(&w, 2, (const uint64_t[]){4, 4}, 4));
    const uint32_t i0[] = {3, 0, 2, 1}, i1[] = {0, 1, 2, 3};
    const double v[] = {1, 2, 3, 4};
    memcpy(w.ind[0], i0, sizeof i0);
    memcpy(w.ind[1], i1, sizeof i1);
    memcpy(w.vals, v, sizeof v);
    CHECK_OK(tf_bin_write(path_of("unsorted.bin"), &w));
    const uint32_t c0[] = {0, 1, 2, 3}, c1[] = {1, 3, 2, 0};
    const double cv[] = {2, 4, 3, 1};
    for (uint64_t p = 0; p < 2; ++p) {
        o.part = p;
        o.parts = 2;
        tf_status s = tf_read_tensor_opts(path_of("unsorted.bin"), &o, &y, NULL);
        CHECKF(s == TF_OK && y.nnz == 2 && !memcmp(y.ind[0], c0 + 2 * p, 8) && !memcmp(y.ind[1], c1 + 2 * p, 8) &&
                   !memcmp(y.vals, cv + 2 * p, 16),
               "unsorted .bin, part %llu of 2: %s", (unsigned long long)p, s ? tf_last_error() : "other non-zeros");
        tf_tensor_free(&y);
    }
    /* collective: the parts are MPI ranks, which this process is not */
    o.part = 0;
    o.parts = 2;
    o.collective = 1;
    CHECKF(tf_read_tensor_opts(path_of("p.bin"), &o, &y, NULL) != TF_OK && *tf_last_error(),
           "a collective read without ranks fails: %s", tf_last_error());
    tf_tensor_free(&w);
    tf_tensor_free(&x);
}

/* The checksum in pieces (MPI ranks hashing the blocks of their parts,
 * src/io/read_ranks.c): the blocks' hashes folded in order equal
 * tf_checksum, for sections of a part block, of whole blocks and of
 * nothing; tf_tensor_checksum is what the tensor's .bin holds. */
static void checksum_pieces(void)
{
    const uint64_t B = TF_CHECKSUM_BLOCK, sizes[] = {0, 5, 8, 1000, B, B + 3, 3 * B + 12345};
    unsigned char *p = malloc(3 * B + 12345);
    for (uint64_t i = 0; i < 3 * B + 12345; ++i) p[i] = (unsigned char)(i * 2654435761u >> 13);
    for (unsigned c = 0; c < sizeof sizes / sizeof *sizes; ++c) {
        const uint64_t n = sizes[c];
        uint64_t h = tf_checksum_start(77, n);
        for (uint64_t b = 0; b * B < n; ++b)
            h = tf_checksum_fold(h, tf_checksum_block(p + b * B, n - b * B < B ? n - b * B : B, b));
        CHECKF(h == tf_checksum(p, n, 77, 2) && h == tf_checksum_bytes(p, n, 77, 1), "checksum in pieces, %llu bytes",
               (unsigned long long)n);
    }
    free(p);
    tf_rng r;
    tf_rng_seed(&r, 5);
    tf_tensor x = random_tensor(&r, 3, 3000, 0);
    CHECK_OK(tf_write_tensor(path_of("sum.bin"), &x, TF_FILE_BIN));
    size_t len;
    unsigned char *img = file_bytes(path_of("sum.bin"), &len);
    uint64_t stored;
    memcpy(&stored, img + tf_bin_header_bytes(3) - 8, 8);
    CHECK(tf_tensor_checksum(&x, 2) == stored);
    free(img);
    tf_tensor_free(&x);
}

int main(void)
{
    mkdir(TF_TEST_TMP, 0777);
    mkdir(TMP, 0777);
    tns_bin_tns();
    bin_corruption();
    checksum_pieces();
    header_round_trips();
    mtx_round_trips();
    compressed_input();
    atomic_writes();
    dense_files();
    parts();
    return tf_test_finish("test_io_roundtrip");
}
