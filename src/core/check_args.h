/* SPDX-License-Identifier: BSD-3-Clause */
/* Argument checks at the public entry points: a NULL pointer that must not
 * be NULL, or an argument outside its range, is TF_ERR_ARG with a one-line
 * message that names the function and the argument
 * ("tf_tensor_sort: t is NULL"), before anything is read through it. */
#ifndef TF_CORE_CHECK_ARGS_H
#define TF_CORE_CHECK_ARGS_H
#include "core/error.h"

/* Returns TF_ERR_ARG from the calling function when arg is NULL. */
#define TF_ARG_NOT_NULL(fn, arg)                                                                          \
    do {                                                                                                  \
        if (!(arg)) return tf_fail(TF_ERR_ARG, "%s: %s is NULL", (fn), #arg);                             \
    } while (0)

/* The tensor `name` of function fn can be looked at: not NULL, order in
 * TF_MIN_ORDER..TF_MAX_ORDER (ind[] and dims[] are indexed by it), and its
 * index and value arrays present when it has non-zeros. Its dims, indices
 * and values are tf_tensor_validate's to check. */
tf_status tf_tensor_arg(const char *fn, const char *name, const tf_tensor *t);

/* A thread count of fn's options: 0 (the default) or more; counts above
 * tf_thread_limit() are clamped where they are used (tf_resolve_threads). */
tf_status tf_threads_arg(const char *fn, int threads);
#endif
