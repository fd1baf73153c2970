/* SPDX-License-Identifier: BSD-3-Clause */
/* Calls an optional tf_progress_fn (tenfold.h). */
#ifndef TF_CORE_PROGRESS_H
#define TF_CORE_PROGRESS_H
#include "tenfold.h"

/* The steps the library reports. */
#define TF_STEP_READ "reading"
#define TF_STEP_SORT "sorting"
#define TF_STEP_BUILD "building the plan"

static inline void tf_progress_report(tf_progress_fn fn, void *user, const char *step, uint64_t done,
                                      uint64_t total, int finished)
{
    if (!fn) return;
    tf_progress p = {step, done, total, finished};
    fn(&p, user);
}
#endif
