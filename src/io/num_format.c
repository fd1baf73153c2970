/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/num_format.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

char *tf_format_u64(char *dst, uint64_t v)
{
    char tmp[20];
    char *p = tmp + sizeof tmp;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (v >= 10) { p -= 2; memcpy(p, digit_pairs + 2 * v, 2); }
    else *--p = (char)('0' + v);
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(dst, p, n);
    return dst + n;
}

char *tf_format_value(char *dst, double v)
{
    const double lim = 9007199254740992.0; /* 2^53 */
    if (v > -lim && v < lim && v == (double)(int64_t)v) {
        int64_t i = (int64_t)v;
        if (i < 0 || (i == 0 && signbit(v))) *dst++ = '-';
        return tf_format_u64(dst, i < 0 ? (uint64_t)(-i) : (uint64_t)i);
    }
    char buf[40];
    int n = snprintf(buf, sizeof buf, "%.17g", v);
    if (n < 0) n = 0;
    if (n > TF_VALUE_MAX_CHARS) n = TF_VALUE_MAX_CHARS;
    memcpy(dst, buf, (size_t)n);
    return dst + n;
}
