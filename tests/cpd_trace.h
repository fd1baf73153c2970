/* SPDX-License-Identifier: BSD-3-Clause */
/* The fit of every CP-ALS iteration, recorded through tf_cpd_opts.callback
 * (the GPU CP-ALS tests compare runs iteration by iteration). */
#ifndef TF_TESTS_CPD_TRACE_H
#define TF_TESTS_CPD_TRACE_H
#include "tenfold.h"

#define MAX_IT 64

typedef struct trace {
    uint32_t n;
    double fit[MAX_IT];
} trace;

static void record(const tf_cpd_iter *it, void *user)
{
    trace *t = user;
    if (t->n < MAX_IT) t->fit[t->n++] = it->fit;
}
#endif
