/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal test harness: CHECK macros, a pass/fail count, and the closing
 * "N passed, N failed" line ctest logs show. Exit 0 iff nothing failed;
 * exit 77 (ctest SKIP) when a test says it cannot run here. */
#ifndef TF_TESTS_CHECK_H
#define TF_TESTS_CHECK_H
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tf_t_pass, tf_t_fail;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (cond) ++tf_t_pass;                                                         \
        else { ++tf_t_fail; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
    } while (0)

#define CHECKF(cond, ...)                                                              \
    do {                                                                               \
        if (cond) ++tf_t_pass;                                                         \
        else { ++tf_t_fail; fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
               fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); }                    \
    } while (0)

/* Asserts a tenfold call returns TF_OK, printing tf_last_error() if not. */
#define CHECK_OK(call)                                                                 \
    do {                                                                               \
        tf_status s_ = (call);                                                         \
        if (s_ == TF_OK) ++tf_t_pass;                                                  \
        else { ++tf_t_fail; fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, \
                                    tf_status_name(s_), tf_last_error()); }            \
    } while (0)

/* Asserts a tenfold call fails with status `want` and a one-line message
 * (tf_last_error) that contains `part`. */
#define CHECK_FAILS(call, want, part)                                                                          \
    do {                                                                                                       \
        const tf_status st_ = (call);                                                                          \
        const char *msg_ = tf_last_error();                                                                    \
        CHECKF(st_ == (want) && strstr(msg_, (part)) && !strchr(msg_, '\n'), "%s -> %s \"%s\" (expected %s, \"%s\")", \
               #call, tf_status_name(st_), msg_, tf_status_name(want), (part));                                \
    } while (0)

static inline int tf_test_finish(const char *name)
{
    printf("%s: %d passed, %d failed\n", name, tf_t_pass, tf_t_fail);
    return tf_t_fail ? 1 : 0;
}

/* A GPU test's quick subset (for compute-sanitizer and the device's quick
 * runs): `--quick` as its first argument, or TF_TEST_QUICK=1. */
static inline int tf_test_quick(int argc, char **argv)
{
    const char *env = getenv("TF_TEST_QUICK");
    return (argc > 1 && !strcmp(argv[1], "--quick")) || (env && !strcmp(env, "1"));
}

/* Whether the GPUs are physical ones: not under TF_TEST_GPUS (several
 * logical GPUs on one physical GPU; docs/DESIGN.md, "Several GPUs on one"),
 * where NCCL refuses one device twice and a caller's device pointers name
 * physical GPUs, so such cases are left out. */
static inline int tf_test_nccl_ok(void)
{
    return getenv("TF_TEST_GPUS") == NULL;
}

static inline int tf_test_skip(const char *name, const char *why)
{
    printf("%s: skipped: %s\n", name, why);
    return 77;
}

/* Relative error ||a - b|| / ||b|| (||b|| = 0 -> absolute). */
static inline double tf_rel_err(const double *a, const double *b, size_t n)
{
    double d = 0, r = 0;
    for (size_t i = 0; i < n; ++i) {
        d += (a[i] - b[i]) * (a[i] - b[i]);
        r += b[i] * b[i];
    }
    if (isnan(d)) return INFINITY;
    return r > 0 ? sqrt(d / r) : sqrt(d);
}
#endif
