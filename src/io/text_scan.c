/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/text_scan.h"

#include <stdio.h>
#include <string.h>

#include "io/text_parse.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

uint64_t tf_count_newlines(const char *p, size_t n)
{
    uint64_t count = 0;
    size_t i = 0;
#if defined(__SSE2__)
    /* cmpeq gives -1 per '\n' byte; subtracting it counts in 8-bit lanes
     * for up to 255 steps, then psadbw sums the lanes. */
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_setzero_si128();
    while (i + 16 <= n) {
        __m128i acc = _mm_setzero_si128();
        size_t steps = (n - i) / 16;
        if (steps > 255) steps = 255;
        for (size_t s = 0; s < steps; ++s, i += 16)
            acc = _mm_sub_epi8(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(p + i)), nl));
        __m128i sums = _mm_sad_epu8(acc, zero);
        count += (uint64_t)_mm_cvtsi128_si64(sums) +
                 (uint64_t)_mm_cvtsi128_si64(_mm_unpackhi_epi64(sums, sums));
    }
#endif
    for (; i < n; ++i) count += p[i] == '\n';
    return count;
}

uint64_t tf_line_at(const char *text, size_t pos) { return 1 + tf_count_newlines(text, pos); }

void tf_lines_init(tf_line_cursor *c, const char *text, size_t len, size_t start)
{
    c->text = text;
    c->len = len;
    c->pos = start;
    c->line = start ? tf_count_newlines(text, start) : 0;
}

int tf_lines_next(tf_line_cursor *c, size_t *b, size_t *e)
{
    if (c->pos >= c->len) return 0;
    const char *s = c->text + c->pos;
    const char *nl = memchr(s, '\n', c->len - c->pos);
    size_t end = nl ? (size_t)(nl - c->text) : c->len;
    *b = c->pos;
    *e = end;
    if (*e > *b && c->text[*e - 1] == '\r') --*e;
    c->pos = nl ? end + 1 : c->len;
    ++c->line;
    return 1;
}

int tf_token_next(const char **p, const char *end, const char **tok, size_t *len)
{
    const char *q = *p;
    while (q < end && tf_is_blank(*q)) ++q;
    if (q >= end || *q == '\n') { *p = q; return 0; }
    const char *s = q;
    while (q < end && !tf_is_field_end(*q)) ++q;
    *tok = s;
    *len = (size_t)(q - s);
    *p = q;
    return 1;
}

uint32_t tf_token_count(const char *p, const char *end)
{
    const char *tok;
    size_t len;
    uint32_t n = 0;
    while (tf_token_next(&p, end, &tok, &len) && n < UINT32_MAX) ++n;
    return n;
}

int tf_token_u64(const char *tok, size_t len, uint64_t *v)
{
    if (len == 0 || len > 19) return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; ++i) {
        unsigned d = (unsigned)(unsigned char)tok[i] - '0';
        if (d > 9) return 0;
        x = x * 10 + d;
    }
    *v = x;
    return 1;
}

int tf_token_is(const char *tok, size_t len, const char *word)
{
    size_t n = strlen(word);
    if (len != n) return 0;
    for (size_t i = 0; i < n; ++i) {
        char c = tok[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != word[i]) return 0;
    }
    return 1;
}

void tf_describe_found(const char *p, const char *end, char *buf, size_t cap)
{
    if (p >= end) { snprintf(buf, cap, "end of file"); return; }
    const char *q = p;
    while (q < end && *q == '\r') ++q;
    if (q >= end || *q == '\n') { snprintf(buf, cap, "end of line"); return; }
    size_t o = 0;
    if (cap < 8) { if (cap) buf[0] = '\0'; return; }
    buf[o++] = '\'';
    int n = 0;
    for (q = p; q < end && !tf_is_field_end(*q) && n < 24; ++q, ++n) {
        unsigned char c = (unsigned char)*q;
        if (o + 6 >= cap) break;
        if (c >= 0x20 && c < 0x7f && c != '\'') buf[o++] = (char)c;
        else o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    if (q < end && !tf_is_field_end(*q) && o + 5 < cap) { memcpy(buf + o, "...", 3); o += 3; }
    buf[o++] = '\'';
    buf[o] = '\0';
}
