/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU context with a tuning policy, for the GPU tests that run one
 * method under a tuning other than the defaults. */
#ifndef TF_TESTS_GPU_CONTEXT_H
#define TF_TESTS_GPU_CONTEXT_H
#include "tenfold.h"

static inline tf_status tt_gpu_context(const tf_tuning *tuning, tf_context **ctx)
{
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    co.tuning = tuning;
    *ctx = NULL;
    return tf_context_create(&co, ctx);
}
#endif
