/* SPDX-License-Identifier: BSD-3-Clause */
/* Number parsing for text input, built for speed.
 *
 * The parsers are sentinel-based: they stop at the first byte that cannot
 * continue a number and never look further. Every caller scans text that
 * ends in '\n' (the body parser copies an unterminated last line into a
 * buffer first), so no scan can run past its buffer without bounds checks
 * in the hot loop. A caller checks the byte where a parser stopped. */
#ifndef TF_IO_TEXT_PARSE_H
#define TF_IO_TEXT_PARSE_H

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Largest raw index a text file may hold: 1-based indices reach 2^32. */
#define TF_INDEX_RAW_MAX (1ULL << 32)

typedef enum tf_num_err {
    TF_NUM_OK = 0,
    TF_NUM_EMPTY,     /* no number here (a letter, punctuation, end of line) */
    TF_NUM_NEGATIVE,  /* '-' in front of an index                           */
    TF_NUM_OVERFLOW,  /* index > 2^32                                       */
    TF_NUM_NONFINITE, /* inf, nan, or a value beyond the double range       */
    TF_NUM_BAD        /* malformed number ("1e", "1.2.3" is caught by the caller) */
} tf_num_err;

/* Space, tab, CR, VT, FF separate fields; '\n' ends a line. */
static inline int tf_is_blank(char c)
{
    unsigned u = (unsigned char)c;
    return u <= ' ' && ((1ULL << u) & ((1ULL << ' ') | (1ULL << '\t') | (1ULL << '\r') |
                                       (1ULL << '\v') | (1ULL << '\f')));
}

static inline const char *tf_skip_blanks(const char *p)
{
    while (tf_is_blank(*p)) ++p;
    return p;
}

/* True where a field may end: a blank or the end of the line. */
static inline int tf_is_field_end(char c) { return c == '\n' || tf_is_blank(c); }

/* Decimal unsigned index, digits only. *err = TF_NUM_OK and *out <= 2^32 on
 * success. Returns where the digits stop. */
static inline const char *tf_parse_index(const char *p, uint64_t *out, tf_num_err *err)
{
    const char *s = p;
    uint64_t v = 0;
    unsigned d;
    while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
        v = v * 10 + d; /* may wrap for > 19 digits; checked below */
        ++p;
    }
    if (p == s) {
        *err = *p == '-' ? TF_NUM_NEGATIVE : TF_NUM_EMPTY;
        return p;
    }
    if (p - s > 10) { /* only leading zeros make a long index valid */
        const char *q = s;
        while (*q == '0') ++q;
        if (p - q > 10) { *err = TF_NUM_OVERFLOW; return p; }
        v = 0;
        for (; q < p; ++q) v = v * 10 + (unsigned)(*q - '0');
    }
    *err = v > TF_INDEX_RAW_MAX ? TF_NUM_OVERFLOW : TF_NUM_OK;
    *out = v;
    return p;
}

/* "inf..." or "nan..." in any case (p[0] is not '\n', and the && chain
 * stops at the first mismatch, so no read passes the line end). */
static inline int tf_is_inf_or_nan(const char *p)
{
    char a = (char)(p[0] | 0x20);
    if (a == 'i') return (p[1] | 0x20) == 'n' && (p[2] | 0x20) == 'f';
    if (a == 'n') return (p[1] | 0x20) == 'a' && (p[2] | 0x20) == 'n';
    return 0;
}

/* Slow path: correctly rounded conversion of the validated decimal token
 * s[0..n) through strtod. */
double tf_parse_value_slow(const char *s, size_t n, tf_num_err *err);

/* Decimal floating-point value: [+-] digits [. digits] [(e|E) [+-] digits].
 * Exact fast path (Clinger): a mantissa of at most 2^53 scaled by at most
 * 10^22 is one correctly rounded IEEE multiply or divide; everything else
 * goes through strtod. "inf"/"nan" and overflow give TF_NUM_NONFINITE. */
/* 1 if the 8 bytes of v (little-endian) are all ASCII digits: every byte's
 * high nibble is 3 and adding 6 to its low nibble does not carry. */
static inline int tf_eight_digits(uint64_t v)
{
    return ((v & 0xF0F0F0F0F0F0F0F0ULL) |
            (((v + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) == 0x3333333333333333ULL;
}

/* Value of 8 ASCII digits (first digit in the lowest byte): pairs, then
 * quads, then the whole, each step one multiply-add over packed lanes. */
static inline uint64_t tf_eight_digit_value(uint64_t v)
{
    v -= 0x3030303030303030ULL;
    v = v * 10 + (v >> 8); /* pairs p0..p3 (p0 = first two digits) in bytes 0, 2, 4, 6 */
    /* bits 32..63 of the sums: p0*10^6 + p2*10^2 and p1*10^4 + p3 */
    v = ((v & 0x000000FF000000FFULL) * ((1000000ULL << 32) + 100ULL) +
         ((v >> 16) & 0x000000FF000000FFULL) * ((10000ULL << 32) + 1ULL)) >> 32;
    return v;
}

/* tf_parse_value with the end of the buffer known (p < end): long digit
 * runs after the first significant digit are read 8 at a time. */
static inline const char *tf_parse_value_to(const char *p, const char *end, double *out,
                                            tf_num_err *err);

static inline const char *tf_parse_value(const char *p, double *out, tf_num_err *err)
{
    return tf_parse_value_to(p, NULL, out, err);
}

static inline const char *tf_parse_value_to(const char *p, const char *end, double *out,
                                            tf_num_err *err)
{
    static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    const char *s = p;
    int neg = 0;
    if (*p == '-') { neg = 1; ++p; }
    else if (*p == '+') ++p;
    uint64_t m = 0;
    int64_t e10 = 0;
    int sig = 0, inexact = 0, any = 0;
    unsigned d;
    for (; (d = (unsigned)(unsigned char)*p - '0') < 10; ++p, any = 1) {
        if (sig < 19) { m = m * 10 + d; sig += m != 0; }
        else { ++e10; inexact |= d != 0; }
    }
    if (*p == '.') {
        for (++p; (d = (unsigned)(unsigned char)*p - '0') < 10; ++p, any = 1) {
            /* once a significant digit is in, every digit counts: take 8 at once */
            while (m != 0 && sig <= 11 && end && end - p >= 8) {
                uint64_t w;
                memcpy(&w, p, sizeof w);
                if (!tf_eight_digits(w)) break;
                m = m * 100000000ULL + tf_eight_digit_value(w);
                sig += 8;
                e10 -= 8;
                p += 8;
            }
            if ((d = (unsigned)(unsigned char)*p - '0') >= 10) break;
            if (sig < 19) { m = m * 10 + d; sig += m != 0; --e10; }
            else inexact |= d != 0;
        }
    }
    if (!any) {
        *err = tf_is_inf_or_nan(p) ? TF_NUM_NONFINITE : TF_NUM_EMPTY;
        return p;
    }
    if (*p == 'e' || *p == 'E') {
        ++p;
        int eneg = 0;
        if (*p == '-') { eneg = 1; ++p; }
        else if (*p == '+') ++p;
        if ((unsigned)(unsigned char)*p - '0' >= 10) { *err = TF_NUM_BAD; return p; }
        int64_t x = 0;
        for (; (d = (unsigned)(unsigned char)*p - '0') < 10; ++p)
            if (x < 1000000) x = x * 10 + d;
        e10 += eneg ? -x : x;
    }
    *err = TF_NUM_OK;
    if (!inexact) {
        while (m > (1ULL << 53) && m % 10 == 0) { m /= 10; ++e10; }
        if (m <= (1ULL << 53) && e10 >= -22 && e10 <= 22) {
            double v = (double)m;
            v = e10 >= 0 ? v * pow10[e10] : v / pow10[-e10];
            *out = neg ? -v : v;
            return p;
        }
        if (m == 0) { *out = neg ? -0.0 : 0.0; return p; }
#if defined(__x86_64__) && LDBL_MANT_DIG == 64
        /* Long mantissas (17-19 digits, as "%.17g" writes): m < 2^64 and
         * 10^k (k <= 27) are exact in x87 extended precision, so r is x
         * rounded once to 64 bits. Rounding r to double gives x rounded to
         * double unless r sits exactly on a midpoint between two doubles
         * (its 11 extra bits are 10000000000): only then ask strtod. */
        if (e10 >= -27 && e10 <= 27) {
            static const long double pow10l[28] = {
                1e0L,  1e1L,  1e2L,  1e3L,  1e4L,  1e5L,  1e6L,  1e7L,  1e8L,  1e9L,
                1e10L, 1e11L, 1e12L, 1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L,
                1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L};
            const long double r =
                e10 >= 0 ? (long double)m * pow10l[e10] : (long double)m / pow10l[-e10];
            uint64_t bits;
            memcpy(&bits, &r, sizeof bits); /* explicit 64-bit significand */
            if ((bits & 0x7FF) != 0x400) {
                const double v = (double)r;
                *out = neg ? -v : v;
                return p;
            }
        }
#endif
    }
    *out = tf_parse_value_slow(s, (size_t)(p - s), err);
    return p;
}

#endif
