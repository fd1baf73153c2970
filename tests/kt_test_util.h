/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by test_ktensor_ops.c and test_tensor_ops.c: the seed of a run
 * (fresh each run unless TF_TEST_SEED says one; printed, so a failure can
 * be replayed), the bundled real tensor, and a comparison of one value with
 * its reference within a bound relative to the sum of the magnitudes of
 * its terms. */
#ifndef TF_TESTS_KT_TEST_UTIL_H
#define TF_TESTS_KT_TEST_UTIL_H
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "core/rng.h"
#include "tenfold.h"

static inline uint64_t kt_seed(const char *name)
{
    const char *env = getenv("TF_TEST_SEED");
    uint64_t seed = env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20);
    printf("%s: seed %llu (TF_TEST_SEED=%llu replays this run)\n", name, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* |got - want| <= tol * mag (mag: the sum of the terms' magnitudes, >= |want|);
 * NaN or infinity fails. */
static inline int kt_close(double got, double want, double mag, double tol)
{
    return isfinite(got) && fabs(got - want) <= tol * (mag > fabs(want) ? mag : fabs(want)) + 1e-300;
}

/* The bundled uber-apr14 tensor (data/uber-apr14.tns.xz): 30 x 24 x 659 x 1086, 416,744 non-zeros. */
static inline int kt_read_uber(tf_tensor *X)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/uber-apr14.tns.xz", TF_REPO_DATA);
    tf_status s = tf_read_tensor(path, 0, X, NULL);
    CHECKF(s == TF_OK, "reading %s: %s", path, tf_last_error());
    return s == TF_OK;
}

/* A NaN-filled array of n doubles (the outputs a call must overwrite). */
static inline double *kt_poisoned(uint64_t n)
{
    double *p = malloc((n ? n : 1) * sizeof *p);
    for (uint64_t i = 0; i < n; ++i) p[i] = NAN;
    return p;
}
#endif
