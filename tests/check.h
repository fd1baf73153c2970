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
#ifdef _OPENMP
#include <omp.h>
#endif

static int tf_t_pass, tf_t_fail;

/* OpenMP's default team for what follows (a test of results that must not
 * depend on it). */
static inline void tf_test_set_threads(int n)
{
#ifdef _OPENMP
    omp_set_num_threads(n);
#else
    (void)n;
#endif
}

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

/* Margins: the worst ratio of a checked error to its bound at each check
 * that notes one (TF_T_MARGIN(err, bound) next to the CHECK, or kt_close),
 * printed by tf_test_finish under TF_TEST_MARGINS=1 as
 * "margin FILE:LINE WORST" (1 = at the bound; a seed sweep reads these to
 * find the bounds that hold with little room). */
typedef struct {
    const char *file;
    int line;
    double worst;
} tf_t_margin_at;
static tf_t_margin_at tf_t_margins[256];
static int tf_t_nmargins;

static inline void tf_t_margin(const char *file, int line, double err, double bound)
{
    const double q = isnan(err) || isnan(bound) ? INFINITY : bound > 0 ? fabs(err) / bound : err == 0 ? 0.0 : INFINITY;
    int i = 0;
    while (i < tf_t_nmargins && (tf_t_margins[i].line != line || strcmp(tf_t_margins[i].file, file))) ++i;
    if (i == tf_t_nmargins) {
        if (i == (int)(sizeof tf_t_margins / sizeof *tf_t_margins)) return;
        tf_t_margins[tf_t_nmargins++] = (tf_t_margin_at){file, line, q};
    } else if (q > tf_t_margins[i].worst) tf_t_margins[i].worst = q;
}
#define TF_T_MARGIN(err, bound) tf_t_margin(__FILE__, __LINE__, (err), (bound))

static inline int tf_test_finish(const char *name)
{
    const char *env = getenv("TF_TEST_MARGINS");
    if (env && !strcmp(env, "1"))
        for (int i = 0; i < tf_t_nmargins; ++i)
            printf("margin %s:%d %.3g\n", strrchr(tf_t_margins[i].file, '/') ? strrchr(tf_t_margins[i].file, '/') + 1
                                                                               : tf_t_margins[i].file,
                   tf_t_margins[i].line, tf_t_margins[i].worst);
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
