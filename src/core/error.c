/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char tf_errbuf[1024];
/* Failures counted, and the count at the last one every rank reached
 * together (tf_fail_shared): that one is shared while no other came after. */
static _Thread_local uint64_t tf_errserial, tf_errshared;

static void set_message(const char *fmt, va_list ap)
{
    vsnprintf(tf_errbuf, sizeof tf_errbuf, fmt, ap);
    /* keep it one line */
    for (char *p = tf_errbuf; *p; ++p)
        if (*p == '\n' || *p == '\r') *p = ' ';
    ++tf_errserial;
}

tf_status tf_fail(tf_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    return s;
}

tf_status tf_fail_shared(tf_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_message(fmt, ap);
    va_end(ap);
    tf_errshared = tf_errserial;
    return s;
}

int tf_last_error_shared(void) { return tf_errshared != 0 && tf_errshared == tf_errserial; }

void tf_clear_error(void)
{
    tf_errbuf[0] = '\0';
    ++tf_errserial;
}

const char *tf_last_error(void) { return tf_errbuf; }

const char *tf_status_name(tf_status s)
{
    switch (s) {
    case TF_OK: return "ok";
    case TF_ERR_ARG: return "invalid argument";
    case TF_ERR_IO: return "i/o error";
    case TF_ERR_PARSE: return "parse error";
    case TF_ERR_RANGE: return "out of range";
    case TF_ERR_NOMEM: return "out of memory";
    case TF_ERR_NUMERIC: return "numerical error";
    case TF_ERR_UNAVAILABLE: return "not available";
    case TF_ERR_DEVICE: return "device error";
    }
    return "unknown status";
}
