/* SPDX-License-Identifier: BSD-3-Clause */
/* Slow path of tf_parse_value: long mantissas and large exponents go
 * through strtod, which rounds correctly. The token was already checked
 * against the decimal grammar, so strtod sees no hex floats or words. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/text_parse.h"

double tf_parse_value_slow(const char *s, size_t n, tf_num_err *err)
{
    char small[128];
    char *buf = small;
    if (n >= sizeof small) {
        buf = malloc(n + 1);
        if (!buf) { *err = TF_NUM_BAD; return 0.0; }
    }
    memcpy(buf, s, n);
    buf[n] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    *err = TF_NUM_OK;
    if (end != buf + n) *err = TF_NUM_BAD;
    else if (!isfinite(v)) *err = TF_NUM_NONFINITE;
    if (buf != small) free(buf);
    return v;
}
