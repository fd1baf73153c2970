/* SPDX-License-Identifier: BSD-3-Clause */
/* Text readers: every malformed input gives its status and a one-line
 * message naming file:line:field; header variants; 0-/1-based detection per
 * mode; duplicates, zeros, empty slices; comments, blank lines, CRLF;
 * exact value parsing; multi-chunk parallel parsing; Matrix Market;
 * dense .mat errors; sums of duplicates that overflow (double, and
 * tf_read_opts.precision single) named by both lines; the start of a text
 * (a UTF-8 BOM, CR-only line ends, compression that is not read). */
#include <stdarg.h>
#include <stdint.h>
#include <sys/stat.h>

#include "check.h"
#include "core/rng.h"
#include "tenfold.h"

/* Parses text and checks the status and that the message holds each needle. */
#define EXPECT_FAIL(name, text, want, ...)                                                         \
    expect_fail(__LINE__, name, text, want, __VA_ARGS__, NULL)

static void expect_fail(int line, const char *name, const char *text, tf_status want, ...)
{
    tf_tensor t;
    tf_read_info info;
    tf_status s = tf_parse_tensor(name, text, strlen(text), 2, &t, &info);
    const char *msg = tf_last_error();
    CHECKF(s == want, "line %d: status %s, expected %s (%s)", line, tf_status_name(s),
           tf_status_name(want), msg);
    CHECKF(strchr(msg, '\n') == NULL, "line %d: message is not one line", line);
    va_list ap;
    va_start(ap, want);
    for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
        CHECKF(strstr(msg, needle) != NULL, "line %d: message '%s' lacks '%s'", line, msg, needle);
    va_end(ap);
    CHECK(t.nnz == 0 && t.vals == NULL); /* failure leaves a freed, zeroed tensor */
    tf_tensor_free(&t);
}

static int parse_ok(const char *text, tf_tensor *t, tf_read_info *info)
{
    tf_status s = tf_parse_tensor("ok.tns", text, strlen(text), 2, t, info);
    CHECKF(s == TF_OK, "%s: %s", tf_status_name(s), tf_last_error());
    return s == TF_OK;
}

/* Checks entry k is (i0, i1, i2) 0-based with value v. */
static void check_entry3(const tf_tensor *t, uint64_t k, uint32_t i0, uint32_t i1, uint32_t i2,
                         double v)
{
    CHECKF(k < t->nnz && t->ind[0][k] == i0 && t->ind[1][k] == i1 && t->ind[2][k] == i2 &&
               t->vals[k] == v,
           "entry %llu", (unsigned long long)k);
}

static void malformed_tns(void)
{
    EXPECT_FAIL("t.tns", "1 1 1 1\n2 2 2 2 5\n", TF_ERR_PARSE,
                "t.tns:2: field 5: expected end of line", "4 fields, as on line 1", "found '5'");
    EXPECT_FAIL("t.tns", "1 1 1 1\n2 2 2\n", TF_ERR_PARSE, "t.tns:2: field 4: expected 4 fields",
                "found end of line");
    EXPECT_FAIL("t.tns", "1 1 1 1\n2 x 2 1\n", TF_ERR_PARSE,
                "t.tns:2: field 2: expected a non-negative integer index", "found 'x'");
    EXPECT_FAIL("t.tns", "1 -1 1 1\n", TF_ERR_PARSE, "t.tns:1: field 2:", "found '-1'");
    EXPECT_FAIL("t.tns", "1 1 1 1\n4294967297 1 1 1\n", TF_ERR_RANGE, "t.tns:2: field 1:",
                "index overflow", "found '4294967297'");
    EXPECT_FAIL("t.tns", "1 99999999999999999999999 1 1\n", TF_ERR_RANGE, "t.tns:1: field 2:",
                "index overflow");
    EXPECT_FAIL("t.tns", "1 1 1 1\n# c\n2 2 2 nan\n", TF_ERR_RANGE,
                "t.tns:3: field 4: expected a finite value", "found 'nan'");
    EXPECT_FAIL("t.tns", "1 1 1 -inf\n", TF_ERR_RANGE, "t.tns:1: field 4: expected a finite value");
    EXPECT_FAIL("t.tns", "1 1 1 Infinity\n", TF_ERR_RANGE, "t.tns:1: field 4:");
    EXPECT_FAIL("t.tns", "1 1 1 1e999\n", TF_ERR_RANGE,
                "t.tns:1: field 4: expected a finite value");
    EXPECT_FAIL("t.tns", "1 1 1 abc\n", TF_ERR_PARSE, "t.tns:1: field 4: expected a number",
                "found 'abc'");
    EXPECT_FAIL("t.tns", "1 1 1 1.5x\n", TF_ERR_PARSE, "t.tns:1: field 4: expected a number",
                "found '1.5x'");
    EXPECT_FAIL("t.tns", "1 1 1 1e\n", TF_ERR_PARSE, "t.tns:1: field 4: expected a number");
    EXPECT_FAIL("t.tns", "1 1 1 --1\n", TF_ERR_PARSE, "t.tns:1: field 4: expected a number");
    EXPECT_FAIL("t.tns", "1 1 1 0x10\n", TF_ERR_PARSE, "t.tns:1: field 4: expected a number");
    EXPECT_FAIL("t.tns", "1.5 1 1 1\n", TF_ERR_PARSE,
                "t.tns:1: field 1: expected a non-negative integer index", "found '1.5'");
    EXPECT_FAIL("t.tns", "\n\n1 5\n", TF_ERR_PARSE, "t.tns:3: expected 3 to 17 fields", "found 2");
    EXPECT_FAIL("t.tns", "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n", TF_ERR_PARSE, "t.tns:1:",
                "found 18");
    EXPECT_FAIL("t.tns", "1 1 1 1\n2 2", TF_ERR_PARSE, "t.tns:2: field 3: expected 4 fields",
                "found end of line"); /* truncated last line */
    EXPECT_FAIL("t.tns", "1 1 1 1\n2 2 2 ", TF_ERR_PARSE, "t.tns:2: field 4:");
    EXPECT_FAIL("t.tns", "", TF_ERR_PARSE, "t.tns", "no non-zeros");
    EXPECT_FAIL("t.tns", "# only a comment\n\n   \n", TF_ERR_PARSE, "no non-zeros");
    EXPECT_FAIL("t.tns", "1 1 1 0\n2 2 2 0.0\n", TF_ERR_PARSE, "no non-zeros");
    EXPECT_FAIL("t.tns", "1 1 1 2\n1 1 1 -2\n", TF_ERR_PARSE, "no non-zeros"); /* cancel out */
    /* 0-based mode (min 0) cannot hold 2^32 */
    EXPECT_FAIL("t.tns", "0 1 1 1\n4294967296 1 1 1\n", TF_ERR_RANGE, "t.tns:2: field 1:",
                "0-based");
    /* ParTI header */
    EXPECT_FAIL("t.tns", "3\n4 4\n1 1 1 1\n", TF_ERR_PARSE, "t.tns:2: expected 3 fields",
                "found 2");
    EXPECT_FAIL("t.tns", "3\n4 0 4\n1 1 1 1\n", TF_ERR_RANGE,
                "t.tns:2: field 2: expected a mode length", "found '0'");
    EXPECT_FAIL("t.tns", "3\n4 x 4\n1 1 1 1\n", TF_ERR_PARSE,
                "t.tns:2: field 2: expected a mode length", "found 'x'");
    EXPECT_FAIL("t.tns", "3\n4 4 4\n1 1 1 1\n1 5 1 1\n", TF_ERR_RANGE,
                "t.tns:4: field 2: expected an index of at most 4", "declared on line 2",
                "found '5'");
    EXPECT_FAIL("t.tns", "2\n3 3\n0 1 1\n3 1 1\n", TF_ERR_RANGE, "t.tns:4: field 1:", "0-based",
                "found '3'");
    EXPECT_FAIL("t.tns", "1\n4\n1 1\n", TF_ERR_RANGE,
                "t.tns:1: field 1: expected the number of modes");
    EXPECT_FAIL("t.tns", "17\n", TF_ERR_RANGE, "t.tns:1: field 1:", "found '17'");
    EXPECT_FAIL("t.tns", "3\n", TF_ERR_PARSE,
                "expected the line of mode lengths, found end of file");
    EXPECT_FAIL("t.tns", "3\n4 4 4\n1 1 1 1 1\n", TF_ERR_PARSE,
                "t.tns:3: field 5: expected end of line");
    EXPECT_FAIL("t.tns", "3\n4 4 4\n# nothing\n", TF_ERR_PARSE, "no non-zeros");
    /* Tensor Toolbox sptensor header */
    EXPECT_FAIL("t.tns", "sptensor\n3\n2 2 2\n3\n1 1 1 1\n2 2 2 2\n", TF_ERR_PARSE,
                "t.tns:4: the sptensor header declares 3 non-zeros", "2 coordinate lines");
    EXPECT_FAIL("t.tns", "sptensor\nx\n", TF_ERR_PARSE,
                "t.tns:2: field 1: expected the number of modes");
    EXPECT_FAIL("t.tns", "sptensor\n3\n2 2\n1\n1 1 1 1\n", TF_ERR_PARSE,
                "t.tns:3: expected 3 fields");
    EXPECT_FAIL("t.tns", "sptensor\n3\n2 2 2\n", TF_ERR_PARSE, "expected the number of non-zeros");
    EXPECT_FAIL("t.tns", "sptensor\n2\n2 2\n1\n1 3 1\n", TF_ERR_RANGE, "t.tns:5: field 2:",
                "at most 2");
    EXPECT_FAIL("t.tns", "ktensor\n2\n2 2\n", TF_ERR_UNAVAILABLE, "t.tns:1:", "ktensor");
    /* binary garbage and NUL bytes are parse errors, never crashes */
    EXPECT_FAIL("t.tns", "1 1 1 1\n\x01\x02\x03 1 1 1\n", TF_ERR_PARSE,
                "t.tns:2: field 1:", "\\x01");
}

static void malformed_mtx(void)
{
    const char *gen = "%%MatrixMarket matrix coordinate real general\n";
    char buf[512];
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
                TF_ERR_UNAVAILABLE, "m.mtx:1: field 3:", "array");
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n",
                TF_ERR_UNAVAILABLE, "m.mtx:1: field 4:", "complex");
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n1 1 1\n",
                TF_ERR_UNAVAILABLE, "m.mtx:1: field 5:", "hermitian");
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix coordinate real diagonal\n2 2 1\n1 1 1\n",
                TF_ERR_PARSE, "m.mtx:1: field 5:", "found 'diagonal'");
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix coordinate real\n2 2 1\n1 1 1\n", TF_ERR_PARSE,
                "m.mtx:1:", "5 fields");
    snprintf(buf, sizeof buf, "%s%% c\n3 3 3\n1 1 1\n2 2 2\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_PARSE, "m.mtx:3: the size line declares 3 entries",
                "2 entry lines");
    snprintf(buf, sizeof buf, "%s3 3 2\n1 1 1\n2 4 2\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_RANGE, "m.mtx:4: field 2: expected an index in 1..3",
                "declared on line 2", "found '4'");
    snprintf(buf, sizeof buf, "%s3 3 2\n1 1 1\n0 2 2\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_RANGE, "m.mtx:4: field 1:", "found '0'");
    snprintf(buf, sizeof buf, "%s3 3\n1 1 1\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_PARSE, "m.mtx:2: expected 3 fields");
    snprintf(buf, sizeof buf, "%s%% only comments\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_PARSE, "expected the size line");
    snprintf(buf, sizeof buf, "%s0 3 1\n1 1 1\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_RANGE, "m.mtx:2: field 1:");
    snprintf(buf, sizeof buf, "%s3 3 1\n1 1 x\n", gen);
    EXPECT_FAIL("m.mtx", buf, TF_ERR_PARSE, "m.mtx:3: field 3: expected a number", "found 'x'");
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 5\n",
                TF_ERR_PARSE, "m.mtx:3: field 3: expected end of line (2 fields");
    EXPECT_FAIL("m.mtx", "%%MatrixMarket matrix coordinate real symmetric\n3 2 1\n3 2 9\n",
                TF_ERR_PARSE, "m.mtx:2: a symmetric matrix must be square");
    EXPECT_FAIL("m.mtx",
                "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 2\n2 1 1\n2 2 3\n",
                TF_ERR_PARSE, "m.mtx:4:", "skew-symmetric");
}

static void variants(void)
{
    tf_tensor t;
    tf_read_info info;
    /* FROSTT with comments, blank lines, tabs, runs of spaces, CRLF, no final newline */
    if (parse_ok("# header comment\r\n\r\n1 1 1 1.5\r\n  # indented comment\n2\t3  4 \t-2\r\n\n"
                 "3 1 2 7e-1",
                 &t, &info)) {
        CHECK(t.order == 3 && t.nnz == 3 && t.dims[0] == 3 && t.dims[1] == 3 && t.dims[2] == 4);
        check_entry3(&t, 0, 0, 0, 0, 1.5);
        check_entry3(&t, 1, 1, 2, 3, -2.0);
        check_entry3(&t, 2, 2, 0, 1, 0.7);
        CHECK(info.format == TF_FILE_TNS && info.lines == 7 && info.entries == 3);
        CHECK(info.index_base == 1 && info.base_source == TF_BASE_DETECTED && !info.declared_dims);
        tf_tensor_free(&t);
    }
    /* one base per file: mode 1 has a 0, so every mode is 0-based */
    if (parse_ok("0 1 1 1\n2 3 1 2\n", &t, &info)) {
        CHECK(info.index_base == 0 && info.base_source == TF_BASE_DETECTED);
        CHECK(t.dims[0] == 3 && t.dims[1] == 4 && t.dims[2] == 2);
        check_entry3(&t, 0, 0, 1, 1, 1.0);
        check_entry3(&t, 1, 2, 3, 1, 2.0);
        tf_tensor_free(&t);
    }
    /* all 0-based, index 2^32-1 is the largest allowed */
    if (parse_ok("0 0 0 1\n4294967295 5 0 1\n", &t, &info)) {
        CHECK(t.dims[0] == 4294967296ULL && t.ind[0][1] == UINT32_MAX);
        CHECK(info.index_base == 0);
        tf_tensor_free(&t);
    }
    /* 1-based index 2^32 is the largest allowed */
    if (parse_ok("4294967296 1 1 1\n", &t, &info)) {
        CHECK(t.dims[0] == 4294967296ULL && t.ind[0][0] == UINT32_MAX);
        tf_tensor_free(&t);
    }
    /* duplicates summed and counted, zeros dropped and counted, unsorted input sorted */
    if (parse_ok("2 2 2 1\n1 1 1 1\n1 1 1 2\n3 3 3 0\n1 1 1 4\n", &t, &info)) {
        CHECK(t.nnz == 2 && info.entries == 5 && info.duplicates == 2 && info.zeros == 1);
        check_entry3(&t, 0, 0, 0, 0, 7.0);
        check_entry3(&t, 1, 1, 1, 1, 1.0);
        CHECK(t.dims[0] == 3); /* the zero entry still defines the shape */
        tf_tensor_free(&t);
    }
    /* empty slices: indices 2..4 of every mode never appear */
    if (parse_ok("1 1 1 1\n5 5 5 2\n", &t, &info)) {
        CHECK(t.nnz == 2 && t.dims[0] == 5 && t.dims[1] == 5 && t.dims[2] == 5);
        tf_tensor_free(&t);
    }
    /* ParTI header: dims larger than the largest index */
    if (parse_ok("# comment\n3\n10 20 30\n1 2 3 4.5\n", &t, &info)) {
        CHECK(info.format == TF_FILE_TNS_HEADER && info.declared_dims);
        CHECK(t.dims[0] == 10 && t.dims[1] == 20 && t.dims[2] == 30);
        check_entry3(&t, 0, 0, 1, 2, 4.5);
        tf_tensor_free(&t);
    }
    /* ParTI header, 0-based file (an index 0 in mode 1 makes mode 2 0-based too) */
    if (parse_ok("2\n3 3\n0 1 1\n2 2 1\n", &t, &info)) {
        CHECK(t.order == 2 && info.index_base == 0 && t.dims[0] == 3 && t.dims[1] == 3);
        CHECK(t.ind[0][1] == 2 && t.ind[1][1] == 2);
        tf_tensor_free(&t);
    }
    /* Tensor Toolbox / pyttb sptensor export */
    if (parse_ok(
            "sptensor\n3\n4 3 2\n2\n1 1 1 1.0000000000000000e+00\n4 3 2 -2.5000000000000000e+00\n",
            &t, &info)) {
        CHECK(info.format == TF_FILE_SPTENSOR && info.declared_dims);
        CHECK(t.dims[0] == 4 && t.dims[1] == 3 && t.dims[2] == 2 && t.nnz == 2);
        check_entry3(&t, 1, 3, 2, 1, -2.5);
        tf_tensor_free(&t);
    }
    /* order 2 and order 16 */
    if (parse_ok("1 2 3\n", &t, &info)) {
        CHECK(t.order == 2 && t.vals[0] == 3);
        tf_tensor_free(&t);
    }
    if (parse_ok("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 0.5\n", &t, &info)) {
        CHECK(t.order == 16 && t.dims[15] == 16 && t.vals[0] == 0.5);
        tf_tensor_free(&t);
    }
}

/* 17-19 digit mantissas with exponents around the extended-precision fast
 * path's range (|e| <= 27 and beyond), a third of them with a decimal point
 * among the digits (parsed 8 digits at a time), plus exact midpoints between
 * doubles (2^53 + odd, whose rounding is a tie): bit-identical to strtod. */
static void exact_long_mantissas(void)
{
    tf_rng r;
    tf_rng_seed(&r, 4242);
    const size_t n = 100000;
    size_t cap = n * 48, len = 0;
    char *text = malloc(cap);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; ++i) {
        char num[48];
        if (i % 10 == 0) { /* a tie: 2^53 + odd integer, or 2^54 + 2 * odd */
            uint64_t base = (i % 20 == 0) ? (1ULL << 53) : (1ULL << 54);
            uint64_t step = (i % 20 == 0) ? 1 : 2;
            snprintf(num, sizeof num, "%llu", (unsigned long long)(base + step * (2 * tf_rng_below(&r, 1000) + 1)));
        } else {
            uint64_t digits = 17 + tf_rng_below(&r, 3), m = 1 + tf_rng_below(&r, 9);
            for (uint64_t d = 1; d < digits; ++d) m = m * 10 + tf_rng_below(&r, 10);
            int e = (int)tf_rng_below(&r, 71) - 35 - (int)digits;
            snprintf(num, sizeof num, "%llue%d", (unsigned long long)m, e);
            if (i % 3 == 1) { /* a decimal point inside the digits: the 8-at-a-time path */
                size_t at = 1 + (size_t)tf_rng_below(&r, digits - 1);
                memmove(num + at + 1, num + at, strlen(num + at) + 1);
                num[at] = '.';
            }
        }
        want[i] = strtod(num, NULL);
        len += (size_t)snprintf(text + len, cap - len, "%zu 1 %s\n", i + 1, num);
    }
    tf_tensor t;
    tf_status s = tf_parse_tensor("long.tns", text, len, 2, &t, NULL);
    CHECKF(s == TF_OK, "%s", tf_last_error());
    if (s == TF_OK) {
        size_t bad = 0;
        for (size_t i = 0; i < n && t.nnz == n; ++i)
            if (memcmp(&t.vals[i], &want[i], sizeof(double)) != 0 && bad++ < 5)
                fprintf(stderr, "long value %zu: got %.17g want %.17g\n", i, t.vals[i], want[i]);
        CHECKF(t.nnz == n && bad == 0, "%zu of %zu long-mantissa values differ from strtod", bad, n);
        tf_tensor_free(&t);
    }
    free(text);
    free(want);
}

/* Values must equal strtod's correctly rounded result bit for bit. */
static void exact_values(void)
{
    static const char *fixed[] = {"1",
                                  "-7",
                                  "+3",
                                  "0.1",
                                  "1.5",
                                  "-2.25e-3",
                                  "1e22",
                                  "1e23",
                                  "9007199254740993",
                                  "0.1000000000000000055511151231257827",
                                  "123456789012345678901234567890",
                                  "4.9406564584124654e-324",
                                  "1.7976931348623157e308",
                                  "2.2250738585072014E-308",
                                  ".5",
                                  "5.",
                                  "1.0000000000000000e+00",
                                  "3.14159265358979323846264338327950288"};
    const size_t nf = sizeof fixed / sizeof *fixed;
    tf_rng r;
    tf_rng_seed(&r, 42);
    const size_t n = nf + 4000;
    size_t cap = n * 48, len = 0;
    char *text = malloc(cap);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < n; ++i) {
        char num[40];
        if (i < nf) snprintf(num, sizeof num, "%s", fixed[i]);
        else {
            double v = (tf_rng_uniform(&r) - 0.5) * pow(10.0, (double)tf_rng_below(&r, 40) - 20.0);
            const char *fmt[] = {"%.17g", "%.6f", "%.3e", "%.15g", "%.0f", "%.20f"};
            snprintf(num, sizeof num, fmt[tf_rng_below(&r, 6)], v);
        }
        want[i] = strtod(num, NULL);
        if (want[i] == 0.0) { snprintf(num, sizeof num, "1"); want[i] = 1.0; }
        len += (size_t)snprintf(text + len, cap - len, "%zu 1 %s\n", i + 1, num);
    }
    tf_tensor t;
    tf_read_info info;
    tf_status s = tf_parse_tensor("v.tns", text, len, 2, &t, &info);
    CHECKF(s == TF_OK, "%s", tf_last_error());
    if (s == TF_OK) {
        size_t bad = 0;
        for (size_t i = 0; i < n && t.nnz == n; ++i)
            if (memcmp(&t.vals[i], &want[i], sizeof(double)) != 0) {
                if (bad++ < 5)
                    fprintf(stderr, "value %zu: got %.17g want %.17g\n", i, t.vals[i], want[i]);
            }
        CHECKF(t.nnz == n && bad == 0, "%zu of %zu values differ from strtod", bad, n);
        tf_tensor_free(&t);
    }
    free(text);
    free(want);
}

/* A text large enough to be split into many chunks: results are identical
 * for 1 and 2 threads, and an error deep inside reports its exact line. */
static void parallel_chunks(void)
{
    const size_t lines = 300000;
    size_t cap = lines * 40, len = 0;
    char *text = malloc(cap);
    tf_rng r;
    tf_rng_seed(&r, 7);
    for (size_t i = 0; i < lines; ++i) {
        if (i % 1000 == 500) len += (size_t)snprintf(text + len, cap - len, "# comment %zu\n\n", i);
        len += (size_t)snprintf(text + len, cap - len, "%llu %llu %llu %llu\n",
                                (unsigned long long)tf_rng_below(&r, 50000) + 1,
                                (unsigned long long)tf_rng_below(&r, 3000) + 1,
                                (unsigned long long)tf_rng_below(&r, 700) + 1,
                                (unsigned long long)tf_rng_below(&r, 9) + 1);
    }
    tf_tensor a, b;
    tf_read_info ia, ib;
    CHECK_OK(tf_parse_tensor("big.tns", text, len, 1, &a, &ia));
    CHECK_OK(tf_parse_tensor("big.tns", text, len, 2, &b, &ib));
    CHECK(a.nnz == b.nnz && ia.entries == lines && ib.entries == lines);
    CHECK(ia.lines == lines + 2 * (lines / 1000));
    int same = a.nnz == b.nnz;
    for (uint32_t m = 0; same && m < 3; ++m)
        same = !memcmp(a.ind[m], b.ind[m], a.nnz * sizeof(uint32_t)) && a.dims[m] == b.dims[m];
    CHECK(same && !memcmp(a.vals, b.vals, a.nnz * sizeof(double)));
    CHECK(ia.duplicates == ib.duplicates && ia.duplicates + a.nnz == lines);
    tf_tensor_free(&a);
    tf_tensor_free(&b);

    /* Put an error on a line far into the text and one in the last line. */
    size_t pos = 0, line = 1, target = 0;
    for (; pos < len && line < 250001; ++pos) if (text[pos] == '\n') ++line;
    target = line;
    text[pos] = 'z'; /* first character of that line */
    char want[64];
    snprintf(want, sizeof want, "big.tns:%zu: field 1:", target);
    tf_status s = tf_parse_tensor("big.tns", text, len, 2, &a, &ia);
    CHECKF(s == TF_ERR_PARSE && strstr(tf_last_error(), want), "%s", tf_last_error());
    text[pos] = '1';
    size_t total_lines = line;
    for (; pos < len; ++pos) if (text[pos] == '\n') ++total_lines;
    len -= 3; /* cut the last line short: "i j k v\n" -> "i j k" (no newline) */
    snprintf(want, sizeof want, "big.tns:%zu: field 4:", total_lines - 1);
    s = tf_parse_tensor("big.tns", text, len, 2, &a, &ia);
    CHECKF(s == TF_ERR_PARSE && strstr(tf_last_error(), want), "%s (want %s)", tf_last_error(),
           want);
    free(text);
}

static void matrix_market(void)
{
    tf_tensor t;
    tf_read_info info;
    const char *gen = "%%MatrixMarket matrix coordinate real general\n% comment\n%\n3 4 3\n"
                      "3 4 1.5\n1 1 -2\n2 3 1e2\n";
    if (parse_ok(gen, &t, &info)) {
        CHECK(info.format == TF_FILE_MTX && !info.mtx_symmetric && !info.mtx_pattern);
        CHECK(t.order == 2 && t.dims[0] == 3 && t.dims[1] == 4 && t.nnz == 3);
        CHECK(t.ind[0][0] == 0 && t.ind[1][0] == 0 && t.vals[0] == -2);
        CHECK(t.ind[0][2] == 2 && t.ind[1][2] == 3 && t.vals[2] == 1.5);
        tf_tensor_free(&t);
    }
    /* symmetric: off-diagonal entries mirrored, diagonal kept once */
    if (parse_ok("%%MatrixMarket matrix coordinate integer symmetric\n3 3 3\n1 1 4\n2 1 5\n3 2 6\n",
                 &t, &info)) {
        CHECK(info.mtx_symmetric && t.nnz == 5 && info.entries == 3);
        double dense[9] = {0};
        for (uint64_t k = 0; k < t.nnz; ++k) dense[t.ind[0][k] * 3 + t.ind[1][k]] = t.vals[k];
        CHECK(dense[0] == 4 && dense[1] == 5 && dense[3] == 5 && dense[5] == 6 && dense[7] == 6);
        tf_tensor_free(&t);
    }
    /* skew-symmetric: mirror negated */
    if (parse_ok("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n", &t,
                 &info)) {
        CHECK(t.nnz == 2 && t.ind[0][0] == 0 && t.ind[1][0] == 1 && t.vals[0] == -3 &&
              t.vals[1] == 3);
        tf_tensor_free(&t);
    }
    /* pattern: values are 1; banner words are case-insensitive */
    if (parse_ok("%%MatrixMarket Matrix Coordinate Pattern General\n2 5 2\n1 5\n2 1\n", &t,
                 &info)) {
        CHECK(info.mtx_pattern && t.nnz == 2 && t.vals[0] == 1 && t.vals[1] == 1 && t.dims[1] == 5);
        tf_tensor_free(&t);
    }
}

/* A sum of duplicates that is not finite is an error at read time naming
 * the file, both lines (the file's own numbers), the field and the
 * coordinate (issue 41 item 3); tf_read_opts.precision TF_SINGLE also
 * holds every value and sum to the float range. */
static void expect_fail_opts(int line, const char *name, const char *text, const tf_read_opts *o, tf_status want,
                             const char *needle)
{
    tf_tensor t;
    tf_read_info info;
    tf_status s = tf_parse_tensor_opts(name, text, strlen(text), o, &t, &info);
    const char *msg = tf_last_error();
    CHECKF(s == want && strstr(msg, needle) && !strchr(msg, '\n'), "line %d: %s \"%s\", expected %s \"%s\"", line,
           tf_status_name(s), msg, tf_status_name(want), needle);
    tf_tensor_free(&t);
}

static void duplicate_sums(void)
{
    EXPECT_FAIL("d.tns", "1 1 1 1e308\n1 1 1 1e308\n2 2 2 1\n", TF_ERR_RANGE,
                "d.tns:2: field 4: coordinate 1 1 1 again (first on line 1;", "found 1e+308",
                "overflows the double range");
    /* comment and blank lines: the file's own line numbers */
    EXPECT_FAIL("d.tns", "# c\n\n1 1 1 1e308\n2 2 2 1\n# x\n\n1 1 1 1e308\n", TF_ERR_RANGE, "d.tns:7: field 4:",
                "first on line 3;");
    /* negative sums, the third entry, a 0-based file (its own indices quoted) */
    EXPECT_FAIL("d.tns", "0 0 1 -1e308\n1 1 1 1\n0 0 1 -5e307\n0 0 1 -9e307\n", TF_ERR_RANGE,
                "d.tns:4: field 4: coordinate 0 0 1 again (first on line 1;");
    /* ParTI and sptensor headers: entry lines after them */
    EXPECT_FAIL("d.tns", "3\n2 2 2\n1 1 1 1e308\n2 2 2 1e308\n1 1 1 1e308\n", TF_ERR_RANGE, "d.tns:5: field 4:",
                "first on line 3;");
    EXPECT_FAIL("d.tns", "sptensor\n2\n2 2\n2\n# x\n1 1 1e308\n2 1 1\n1 1 1e308\n", TF_ERR_PARSE,
                "declares 2 non-zeros, but 3");
    EXPECT_FAIL("d.tns", "sptensor\n2\n2 2\n3\n# x\n1 1 1e308\n2 1 1\n1 1 1e308\n", TF_ERR_RANGE,
                "d.tns:8: field 3: coordinate 1 1 again (first on line 6;");
    /* Matrix Market, and a symmetric one whose mirror overflows */
    EXPECT_FAIL("d.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n1 2 1e308\n2 2 1\n1 2 1e308\n",
                TF_ERR_RANGE, "d.mtx:6: field 3: coordinate 1 2 again (first on line 4;");
    EXPECT_FAIL("s.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1e308\n1 2 1e308\n",
                TF_ERR_RANGE, "s.mtx:3: field 3 (mirrored): coordinate 1 2 again (first on line 4;");

    /* large values whose sums stay finite: all read, values in place */
    tf_tensor t;
    tf_read_info info;
    if (parse_ok("1 1 1 1e308\n1 1 1 -1e308\n2 2 2 1e308\n3 1 1 -1e308\n1 1 1 5\n2 1 1 -1.5e308\n", &t, &info)) {
        CHECK(t.nnz == 4 && info.duplicates == 2 && info.zeros == 0);
        check_entry3(&t, 0, 0, 0, 0, 5);
        check_entry3(&t, 1, 1, 0, 0, -1.5e308);
        check_entry3(&t, 2, 1, 1, 1, 1e308);
        check_entry3(&t, 3, 2, 0, 0, -1e308);
        tf_tensor_free(&t);
    }

    /* Many chunks and windows' worth of lines with comment lines among them:
     * every value near 1e300, so the sum of all overflows and the careful
     * path runs; the result equals the same text's at 1e0 scaled. */
    const size_t lines = 200000;
    size_t cap = lines * 48, len = 0, len1 = 0;
    char *text = malloc(cap), *text1 = malloc(cap);
    tf_rng r;
    tf_rng_seed(&r, 11);
    uint64_t line = 0, first_line = 0, second_line = 0;
    for (size_t i = 0; i < lines; ++i) {
        if (i % 997 == 3) {
            len += (size_t)snprintf(text + len, cap - len, "# comment %zu\n\n", i);
            len1 += (size_t)snprintf(text1 + len1, cap - len1, "# comment %zu\n\n", i);
            line += 2;
        }
        const unsigned a = (unsigned)tf_rng_below(&r, 3000) + 1, b = (unsigned)tf_rng_below(&r, 200) + 1,
                       c = (unsigned)tf_rng_below(&r, 50) + 1, v = (unsigned)tf_rng_below(&r, 9) + 1;
        len += (size_t)snprintf(text + len, cap - len, "%u %u %u %ue300\n", a, b, c, v);
        len1 += (size_t)snprintf(text1 + len1, cap - len1, "%u %u %u %u\n", a, b, c, v);
        ++line;
    }
    tf_tensor big, small;
    tf_read_info ib, is;
    CHECK_OK(tf_parse_tensor("big.tns", text, len, 2, &big, &ib));
    CHECK_OK(tf_parse_tensor("small.tns", text1, len1, 2, &small, &is));
    int same = big.nnz == small.nnz && ib.duplicates == is.duplicates && ib.duplicates > 0;
    for (uint32_t m = 0; same && m < 3; ++m) same = !memcmp(big.ind[m], small.ind[m], big.nnz * sizeof(uint32_t));
    for (uint64_t k = 0; same && k < big.nnz; ++k) same = fabs(big.vals[k] / 1e300 - small.vals[k]) <= 1e-12 * small.vals[k];
    CHECK(same);
    tf_tensor_free(&big);
    tf_tensor_free(&small);
    /* ... and two lines far apart made the same coordinate of 1.7e308 */
    len = 0;
    line = 0;
    tf_rng_seed(&r, 11);
    for (size_t i = 0; i < lines; ++i) {
        if (i % 997 == 3) {
            len += (size_t)snprintf(text + len, cap - len, "# comment %zu\n\n", i);
            line += 2;
        }
        ++line;
        if (i == 60000 || i == 170000) {
            len += (size_t)snprintf(text + len, cap - len, "5000 300 70 1.7e308\n");
            *(i == 60000 ? &first_line : &second_line) = line;
            continue;
        }
        len += (size_t)snprintf(text + len, cap - len, "%u %u %u 1\n", (unsigned)tf_rng_below(&r, 3000) + 1,
                                (unsigned)tf_rng_below(&r, 200) + 1, (unsigned)tf_rng_below(&r, 50) + 1);
    }
    char want[128];
    snprintf(want, sizeof want, "big.tns:%llu: field 4: coordinate 5000 300 70 again (first on line %llu;",
             (unsigned long long)second_line, (unsigned long long)first_line);
    for (int threads = 1; threads <= 2; ++threads) {
        tf_status s = tf_parse_tensor("big.tns", text, len, threads, &big, &ib);
        CHECKF(s == TF_ERR_RANGE && strstr(tf_last_error(), want), "%d threads: %s (want %s)", threads,
               tf_last_error(), want);
    }
    free(text);
    free(text1);

    /* the precision the values are for */
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.precision = TF_SINGLE;
    expect_fail_opts(__LINE__, "f.tns", "1 1 1 3e38\n1 1 1 3e38\n2 2 2 1\n", &o, TF_ERR_RANGE,
                     "f.tns:2: field 4: coordinate 1 1 1 again (first on line 1; 2 entries, summed): expected a sum "
                     "that fits single precision");
    expect_fail_opts(__LINE__, "f.tns", "1 1 1 3e38\n1 1 1 3e38\n2 2 2 1\n", &o, TF_ERR_RANGE, "the sum is 6e+38");
    expect_fail_opts(__LINE__, "f.tns", "1 1 1 1\n2 2 2 -1e39\n", &o, TF_ERR_RANGE,
                     "f.tns:2: field 4: expected a value that fits single precision");
    expect_fail_opts(__LINE__, "f.tns", "2 2 2 1\n# c\n1 1 1 4e38\n", &o, TF_ERR_RANGE,
                     "f.tns:3: field 4: expected a value that fits single precision");
    expect_fail_opts(__LINE__, "f.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 2e38\n1 1 2e38\n",
                     &o, TF_ERR_RANGE, "f.mtx:4: field 3: coordinate 1 1 again (first on line 3;");
    const char *fits = "1 1 1 3e38\n1 1 1 3e38\n1 1 1 -3e38\n2 2 2 1\n";
    CHECK_OK(tf_parse_tensor_opts("f.tns", fits, strlen(fits), &o, &t, &info));
    CHECK(t.nnz == 2 && t.vals[0] == 3e38);
    tf_tensor_free(&t);
    const char *dbl = "1 1 1 3e38\n1 1 1 3e38\n2 2 2 1e39\n";
    if (parse_ok(dbl, &t, &info)) { /* double (the default) takes them */
        CHECK(t.nnz == 2 && t.vals[0] == 6e38 && t.vals[1] == 1e39);
        tf_tensor_free(&t);
    }

    /* tenfold binary: named by non-zero */
    mkdir(TF_TEST_TMP, 0777);
    const char *bin = TF_TEST_TMP "/io_parse_dups.bin";
    uint64_t dims[2] = {3, 3};
    tf_tensor d;
    CHECK_OK(tf_tensor_alloc(&d, 2, dims, 3));
    const uint32_t i0[3] = {2, 0, 2}, i1[3] = {1, 0, 1};
    const double v[3] = {1e308, 1, 1e308};
    memcpy(d.ind[0], i0, sizeof i0);
    memcpy(d.ind[1], i1, sizeof i1);
    memcpy(d.vals, v, sizeof v);
    CHECK_OK(tf_write_tensor(bin, &d, TF_FILE_BIN));
    tf_tensor_free(&d);
    tf_status s = tf_read_tensor(bin, 2, &t, &info);
    CHECKF(s == TF_ERR_RANGE && strstr(tf_last_error(), "io_parse_dups.bin: non-zero 3: coordinate 2 1 again (first "
                                                        "on non-zero 1;"),
           "%s", tf_last_error());
    remove(bin);
}

/* The start of a text (issue 41 item 11): a UTF-8 BOM is skipped before any
 * format; lines ended by CR alone and compressed data that is not xz or
 * gzip are named. */
static void text_starts(void)
{
    static const char *const ok[] = {
        "\xef\xbb\xbf" "1 1 1 1\n2 2 2 2\n",
        "\xef\xbb\xbf" "sptensor\n3\n2 2 2\n2\n1 1 1 1\n2 2 2 2\n",
        "\xef\xbb\xbf" "3\n2 2 2\n1 1 1 1\n2 2 2 2\n",
        "\xef\xbb\xbf" "# comment\n1 1 1 1\n2 2 2 2\n",
        "\xef\xbb\xbf" "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n",
        "1 1 1 1\r\n2 2 2 2\r\n",  /* CR LF stays fine */
        "1\r1 1 1\n2 2 2 2\n",     /* one CR inside a line: a blank */
        "1 1 1 1\r",               /* one line ended by CR */
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; ++i) {
        tf_tensor t;
        tf_read_info info;
        tf_status s = tf_parse_tensor("ok.tns", ok[i], strlen(ok[i]), 2, &t, &info);
        CHECKF(s == TF_OK && t.nnz >= 1, "case %zu: %s", i, tf_last_error());
        tf_tensor_free(&t);
    }
    EXPECT_FAIL("cr.tns", "1 1 1 1\r2 2 2 2\r", TF_ERR_PARSE, "cr.tns:1: lines end with CR only");
    EXPECT_FAIL("cr.tns", "# c\r1 1 1 1\r2 2 2 2\r", TF_ERR_PARSE, "cr.tns:1: lines end with CR only");
    EXPECT_FAIL("cr.tns", "\xef\xbb\xbf" "sptensor\r3\r2 2 2\r", TF_ERR_PARSE, "cr.tns:1: lines end with CR only");
    EXPECT_FAIL("cr.mtx", "%%MatrixMarket matrix coordinate real general\r2 2 1\r1 1 1\r", TF_ERR_PARSE,
                "cr.mtx:1: lines end with CR only");
    /* legacy .lzma (LZMA_Alone: properties, dictionary size, size -1) and others */
    static const char lzma_alone[] = "\x5d\x00\x00\x80\x00\xff\xff\xff\xff\xff\xff\xff\xff\x00\x18\x88\x1f";
    tf_tensor t;
    tf_read_info info;
    tf_status s = tf_parse_tensor("x.tns.lzma", lzma_alone, sizeof lzma_alone - 1, 2, &t, &info);
    CHECKF(s == TF_ERR_UNAVAILABLE && strstr(tf_last_error(), "x.tns.lzma: an lzma-compressed file (not supported: "
                                                              "use xz)"), "%s", tf_last_error());
    EXPECT_FAIL("x.zst", "\x28\xb5\x2f\xfd\x20\x10", TF_ERR_UNAVAILABLE, "x.zst: a zstd-compressed file");
    EXPECT_FAIL("x.bz2", "BZh91AY&SY", TF_ERR_UNAVAILABLE, "x.bz2: a bzip2-compressed file");
    EXPECT_FAIL("bom.tns", "\xef\xbb\xbf", TF_ERR_PARSE, "bom.tns: empty file");

    /* dense .mat files the same way */
    mkdir(TF_TEST_TMP, 0777);
    const char *mat = TF_TEST_TMP "/io_parse_start.mat";
    struct { const char *text; size_t len; tf_status want; const char *needle; } cases[] = {
        {"\xef\xbb\xbf" "1 2\n3 4\n", 0, TF_OK, NULL},
        {"\xef\xbb\xbf" "# factor\n1 2\n3 4", 0, TF_OK, NULL},
        {"1 2\r3 4\r", 0, TF_ERR_PARSE, "io_parse_start.mat:1: lines end with CR only"},
        {lzma_alone, sizeof lzma_alone - 1, TF_ERR_UNAVAILABLE,
         "io_parse_start.mat: an lzma-compressed file (not supported: use xz)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        FILE *f = fopen(mat, "wb");
        fwrite(cases[i].text, 1, cases[i].len ? cases[i].len : strlen(cases[i].text), f);
        fclose(f);
        tf_matrix m;
        s = tf_matrix_read(mat, &m);
        if (cases[i].want == TF_OK)
            CHECKF(s == TF_OK && m.rows == 2 && m.cols == 2 && m.data[0] == 1 && m.data[3] == 4, "case %zu: %s", i,
                   tf_last_error());
        else
            CHECKF(s == cases[i].want && strstr(tf_last_error(), cases[i].needle), "case %zu: %s", i, tf_last_error());
        tf_matrix_free(&m);
    }
    remove(mat);
}

/* Reading files: missing file, directory, malformed text and .mat files. */
static void files(void)
{
    tf_tensor t;
    tf_read_info info;
    tf_status s = tf_read_tensor(TF_TEST_TMP "/no/such/file.tns", 2, &t, &info);
    CHECK(s == TF_ERR_IO && strstr(tf_last_error(), "file.tns"));
    s = tf_read_tensor(TF_TEST_TMP, 2, &t, &info);
    CHECK(s == TF_ERR_IO && strstr(tf_last_error(), "directory"));

    mkdir(TF_TEST_TMP, 0777);
    const char *path = TF_TEST_TMP "/io_parse_bad.tns";
    FILE *f = fopen(path, "w");
    fputs("1 2 3 4\n1 2 3 4\n\n1 2 three 4\n", f);
    fclose(f);
    s = tf_read_tensor(path, 2, &t, &info);
    CHECKF(s == TF_ERR_PARSE && strstr(tf_last_error(), "io_parse_bad.tns:4: field 3:") &&
               strstr(tf_last_error(), "found 'three'"),
           "%s", tf_last_error());
    f = fopen(path, "w");
    fclose(f);
    s = tf_read_tensor(path, 2, &t, &info);
    CHECK(s == TF_ERR_PARSE && strstr(tf_last_error(), "empty"));
    remove(path);

    /* dense .mat reader errors */
    const char *mat = TF_TEST_TMP "/io_parse_bad.mat";
    struct { const char *text; tf_status want; const char *needle; } cases[] = {
        {"1 2 3\n4 5\n", TF_ERR_PARSE, "io_parse_bad.mat:2: field 3: expected 3 values"},
        {"# c\n1 2\n3 4 5\n", TF_ERR_PARSE, "io_parse_bad.mat:3: field 3: expected end of line"},
        {"1 2\n3 x\n", TF_ERR_PARSE, "io_parse_bad.mat:2: field 2: expected a number, found 'x'"},
        {"1 nan\n", TF_ERR_RANGE, "io_parse_bad.mat:1: field 2: expected a finite value"},
        {"# nothing\n", TF_ERR_PARSE, "no matrix rows"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        f = fopen(mat, "w");
        fputs(cases[i].text, f);
        fclose(f);
        tf_matrix m;
        s = tf_matrix_read(mat, &m);
        CHECKF(s == cases[i].want && strstr(tf_last_error(), cases[i].needle), "case %zu: %s", i,
               tf_last_error());
        tf_matrix_free(&m);
    }
    remove(mat);
}

/* tf_read_opts.keep_zeros (issue 46): explicit zeros are kept and counted in
 * info.zeros_kept -- a listed 0, a coordinate whose duplicates cancel --
 * from unsorted and already-sorted text, Matrix Market and tenfold binary;
 * without it they are dropped (info.zeros). */
static tf_status parse_keep(const char *name, const char *text, int keep, tf_tensor *t, tf_read_info *info)
{
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.threads = 2;
    o.keep_zeros = keep;
    memset(t, 0xA5, sizeof *t); /* poisoned: the reader must set everything */
    memset(info, 0xA5, sizeof *info);
    return tf_parse_tensor_opts(name, text, strlen(text), &o, t, info);
}

static void keep_zeros(void)
{
    tf_tensor t;
    tf_read_info info;
    static const char unsorted[] = "2 2 2 1\n1 1 1 0\n3 3 3 5\n2 1 1 2\n2 1 1 -2\n1 2 1 0.0\n";
    CHECK_OK(parse_keep("z.tns", unsorted, 0, &t, &info));
    CHECK(t.nnz == 2 && info.zeros == 3 && info.zeros_kept == 0 && info.duplicates == 1);
    tf_tensor_free(&t);
    CHECK_OK(parse_keep("z.tns", unsorted, 1, &t, &info));
    CHECKF(t.nnz == 5 && info.zeros == 0 && info.zeros_kept == 3 && info.duplicates == 1, "nnz %llu kept %llu",
           (unsigned long long)t.nnz, (unsigned long long)info.zeros_kept);
    if (t.nnz == 5) {
        check_entry3(&t, 0, 0, 0, 0, 0.0);
        check_entry3(&t, 1, 0, 1, 0, 0.0);
        check_entry3(&t, 2, 1, 0, 0, 0.0); /* 2 - 2: observed, summed to 0 */
        check_entry3(&t, 3, 1, 1, 1, 1.0);
        check_entry3(&t, 4, 2, 2, 2, 5.0);
    }
    tf_tensor_free(&t);
    /* already sorted, with zeros: the fast path must not skip them */
    static const char sorted[] = "1 1 1 0\n1 1 2 3\n2 2 2 0\n";
    CHECK_OK(parse_keep("s.tns", sorted, 1, &t, &info));
    CHECK(t.nnz == 3 && info.zeros_kept == 2 && t.vals[0] == 0.0 && t.vals[1] == 3.0 && t.vals[2] == 0.0);
    tf_tensor_free(&t);
    CHECK_OK(parse_keep("s.tns", sorted, 0, &t, &info));
    CHECK(t.nnz == 1 && info.zeros == 2 && t.vals[0] == 3.0);
    tf_tensor_free(&t);
    /* only zeros: an error without the option, a tensor with it */
    CHECK(parse_keep("a.tns", "1 1 1 0\n2 2 2 0\n", 0, &t, &info) == TF_ERR_PARSE);
    tf_tensor_free(&t);
    CHECK_OK(parse_keep("a.tns", "1 1 1 0\n2 2 2 0\n", 1, &t, &info));
    CHECK(t.nnz == 2 && info.zeros_kept == 2);
    tf_tensor_free(&t);
    /* Matrix Market */
    static const char mtx[] = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 0\n2 2 4\n3 1 0\n";
    CHECK_OK(parse_keep("m.mtx", mtx, 1, &t, &info));
    CHECK(t.nnz == 3 && info.zeros_kept == 2);
    tf_tensor_free(&t);
    CHECK_OK(parse_keep("m.mtx", mtx, 0, &t, &info));
    CHECK(t.nnz == 1 && info.zeros == 2);
    tf_tensor_free(&t);
    /* tenfold binary holding a zero (written from a tensor read with the option) */
    CHECK_OK(parse_keep("z.tns", unsorted, 1, &t, &info));
    mkdir(TF_TEST_TMP, 0777);
    const char *bin = TF_TEST_TMP "/io_parse_keep_zeros.bin";
    CHECK_OK(tf_write_tensor(bin, &t, TF_FILE_BIN));
    tf_tensor_free(&t);
    tf_read_opts o;
    tf_read_opts_default(&o);
    o.keep_zeros = 1;
    memset(&t, 0xA5, sizeof t);
    CHECK_OK(tf_read_tensor_opts(bin, &o, &t, &info));
    CHECK(t.nnz == 5 && info.zeros_kept == 3 && t.vals[0] == 0.0);
    tf_tensor_free(&t);
    CHECK_OK(tf_read_tensor(bin, 2, &t, &info));
    CHECK(t.nnz == 2 && info.zeros == 3);
    tf_tensor_free(&t);
    remove(bin);
    /* a bad value of the option */
    CHECK(parse_keep("z.tns", unsorted, 2, &t, &info) == TF_ERR_ARG && strstr(tf_last_error(), "keep_zeros"));
}

int main(void)
{
    keep_zeros();
    malformed_tns();
    malformed_mtx();
    variants();
    exact_values();
    exact_long_mantissas();
    parallel_chunks();
    matrix_market();
    files();
    duplicate_sums();
    text_starts();
    return tf_test_finish("test_io_parse");
}
