/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal streaming JSON writer: commas, nesting and string escapes. */
#include "json.h"

#include <math.h>

/* Length of the well-formed UTF-8 sequence at p (RFC 3629: no overlong
 * forms, no surrogates, at most U+10FFFF), 0 when it is not one. */
static int utf8_len(const unsigned char *p)
{
    const unsigned char c = p[0];
    int n;
    unsigned char lo = 0x80, hi = 0xBF; /* the second byte's range */
    if (c >= 0xC2 && c <= 0xDF) n = 2;
    else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else return 0;
    if (p[1] < lo || p[1] > hi) return 0;
    for (int i = 2; i < n; ++i)
        if (p[i] < 0x80 || p[i] > 0xBF) return 0;
    return n;
}

/* A JSON string: '"' and '\\' escaped, control characters as \u00XX,
 * well-formed UTF-8 as it is, and each byte that is not part of one (a
 * file name in another encoding) as \ufffd, the replacement character,
 * so the report is always valid JSON (RFC 8259 wants UTF-8). */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p++);
        } else if (*p < 0x20 || *p == 0x7f) {
            fprintf(f, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            fputc(*p++, f);
        } else {
            const int n = utf8_len(p);
            if (n) fwrite(p, 1, (size_t)n, f), p += n;
            else fputs("\\ufffd", f), ++p;
        }
    }
    fputc('"', f);
}

/* Separator, indentation and key of the next member. */
static void member(cli_json *j, const char *key)
{
    if (j->count[j->depth]++) fputc(',', j->f);
    fprintf(j->f, "\n%*s", 2 * j->depth, "");
    if (key) {
        put_string(j->f, key);
        fputs(": ", j->f);
    }
}

static void open_level(cli_json *j, char c)
{
    fputc(c, j->f);
    if (j->depth + 1 >= CLI_JSON_DEPTH) return; /* deeper nesting is not used */
    ++j->depth;
    j->count[j->depth] = 0;
    j->close[j->depth] = c == '{' ? '}' : ']';
}

void json_open(cli_json *j, FILE *f)
{
    j->f = f;
    j->depth = 0;
    j->count[0] = 0;
    open_level(j, '{');
}

void json_close(cli_json *j)
{
    json_end(j);
    fputc('\n', j->f);
}

void json_object(cli_json *j, const char *key) { member(j, key); open_level(j, '{'); }
void json_array(cli_json *j, const char *key) { member(j, key); open_level(j, '['); }

void json_end(cli_json *j)
{
    if (j->depth == 0) return;
    if (j->count[j->depth]) fprintf(j->f, "\n%*s", 2 * (j->depth - 1), "");
    fputc(j->close[j->depth], j->f);
    --j->depth;
}

void json_str(cli_json *j, const char *key, const char *v)
{
    member(j, key);
    put_string(j->f, v ? v : "");
}

void json_num(cli_json *j, const char *key, double v)
{
    member(j, key);
    if (isfinite(v)) fprintf(j->f, "%.17g", v);
    else fputs("null", j->f);
}

void json_u64(cli_json *j, const char *key, uint64_t v)
{
    member(j, key);
    fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_bool(cli_json *j, const char *key, int v)
{
    member(j, key);
    fputs(v ? "true" : "false", j->f);
}
