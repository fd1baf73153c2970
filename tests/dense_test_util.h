/* SPDX-License-Identifier: BSD-3-Clause */
/* Dense operands (tf_dense) for the tests of plan runs (SDDMM, MTTKRP):
 * host arrays of either precision with padded rows, precision conversions,
 * poisoning, and arrays in GPU memory as a user's program holds them
 * (hooks/device_memory.h; fails without the CUDA backend). */
#ifndef TF_TESTS_DENSE_TEST_UTIL_H
#define TF_TESTS_DENSE_TEST_UTIL_H
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "core/alloc.h"
#include "hooks/device_memory.h"
#include "tenfold.h"

/* m's values as `prec` (double or float) in a new host array (tf_alloc)
 * whose rows are ld >= m->cols apart; the extra columns hold NaN, so a
 * kernel that read them would show. */
static inline void *dt_host_values(const tf_matrix *m, uint64_t ld, tf_precision prec)
{
    const size_t w = prec == TF_SINGLE ? sizeof(float) : sizeof(double);
    unsigned char *p = NULL;
    CHECK_OK(tf_alloc((void **)&p, m->rows * ld + 1, w, "test operand"));
    for (uint64_t i = 0; i < m->rows; ++i)
        for (uint64_t k = 0; k < ld; ++k) {
            const double v = k < m->cols ? m->data[i * m->cols + k] : NAN;
            if (prec == TF_SINGLE) ((float *)p)[i * ld + k] = (float)v;
            else ((double *)p)[i * ld + k] = v;
        }
    return p;
}

static inline tf_dense dt_dense(void *data, uint64_t rows, uint64_t cols, uint64_t ld, tf_precision prec,
                                tf_memory memory)
{
    tf_dense d = {data, rows, cols, ld, prec, memory};
    return d;
}

/* n values of precision prec at p, as doubles in out. */
static inline void dt_doubles(const void *p, tf_precision prec, uint64_t n, double *out)
{
    for (uint64_t k = 0; k < n; ++k) out[k] = prec == TF_SINGLE ? (double)((const float *)p)[k] : ((const double *)p)[k];
}

/* n NaNs of precision prec at p (host memory). */
static inline void dt_poison_as(void *p, tf_precision prec, uint64_t n)
{
    for (uint64_t k = 0; k < n; ++k) {
        if (prec == TF_SINGLE) ((float *)p)[k] = NAN;
        else ((double *)p)[k] = NAN;
    }
}

/* The rows x cols values at p (rows ld apart, precision prec) as doubles in
 * out (rows x cols); 1 if the padding of every row (columns cols..ld-1)
 * still holds NaN (nothing wrote past the columns), else 0. */
static inline int dt_gather(const void *p, uint64_t rows, uint64_t cols, uint64_t ld, tf_precision prec, double *out)
{
    int pad_ok = 1;
    for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t k = 0; k < ld; ++k) {
            const double v = prec == TF_SINGLE ? (double)((const float *)p)[i * ld + k] : ((const double *)p)[i * ld + k];
            if (k < cols) out[i * cols + k] = v;
            else if (!isnan(v)) pad_ok = 0;
        }
    return pad_ok;
}

/* One array in GPU memory (or pinned / managed), with its host image. */
typedef struct dt_gpu_arr {
    unsigned char *base; /* allocation                        */
    void *data;          /* base, or base + one element (misaligned) */
    tf_test_mem kind;
} dt_gpu_arr;

static inline dt_gpu_arr dt_gpu_new(size_t bytes, tf_test_mem kind)
{
    dt_gpu_arr g = {NULL, NULL, kind};
    CHECK_OK(tf_test_gpu_alloc((void **)&g.base, bytes + 16, kind));
    g.data = g.base;
    return g;
}

static inline void dt_gpu_del(dt_gpu_arr *g) { tf_test_gpu_free(g->base, g->kind); }

/* m as `prec` values with rows ld apart (NaN padding) into g at `offset` bytes. */
static inline void dt_gpu_put(dt_gpu_arr *g, const tf_matrix *m, uint64_t ld, tf_precision prec, size_t offset)
{
    const size_t w = prec == TF_SINGLE ? 4 : 8;
    void *h = dt_host_values(m, ld, prec);
    g->data = g->base + offset;
    CHECK_OK(tf_test_gpu_put(g->data, h, m->rows * ld * w));
    tf_free(h);
}

#endif
