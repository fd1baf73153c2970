/* SPDX-License-Identifier: BSD-3-Clause */
/* Internal error reporting: a thread-local one-line message per failure. */
#ifndef TF_CORE_ERROR_H
#define TF_CORE_ERROR_H
#include "tenfold.h"

#if defined(__GNUC__)
#define TF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TF_PRINTF(a, b)
#endif

/* Records a message for the calling thread and returns s, so callers can
 * write `return tf_fail(TF_ERR_PARSE, "%s:%llu: ...", ...)`. */
tf_status tf_fail(tf_status s, const char *fmt, ...) TF_PRINTF(2, 3);
/* The same for a failure every rank of a distributed run reached together,
 * with the same message (a collective decision: the ranks disagree, a file
 * read in parts is refused): tf_last_error_shared() says so until the next
 * failure. */
tf_status tf_fail_shared(tf_status s, const char *fmt, ...) TF_PRINTF(2, 3);
/* Clears the calling thread's message. */
void tf_clear_error(void);

#define TF_TRY(expr)                                                          \
    do {                                                                      \
        tf_status tf_try_s_ = (expr);                                         \
        if (tf_try_s_ != TF_OK) return tf_try_s_;                             \
    } while (0)

#endif
