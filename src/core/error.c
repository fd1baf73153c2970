/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char tf_errbuf[1024];

tf_status tf_fail(tf_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tf_errbuf, sizeof tf_errbuf, fmt, ap);
    va_end(ap);
    /* keep it one line */
    for (char *p = tf_errbuf; *p; ++p)
        if (*p == '\n' || *p == '\r') *p = ' ';
    return s;
}

void tf_clear_error(void) { tf_errbuf[0] = '\0'; }

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
