/* SPDX-License-Identifier: BSD-3-Clause */
/* Minimal streaming JSON writer: commas, nesting and string escapes. */
#include "json.h"

#include <math.h>

static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
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
