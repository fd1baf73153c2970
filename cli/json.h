/* SPDX-License-Identifier: BSD-3-Clause */
/* A minimal streaming JSON writer for the --json reports. */
#ifndef TF_CLI_JSON_H
#define TF_CLI_JSON_H
#include <stdint.h>
#include <stdio.h>

#define CLI_JSON_DEPTH 16
/* Version of the reports' layout (docs/report-schema.md); raised when a
 * member is removed or changes meaning, not when one is added. */
#define CLI_JSON_SCHEMA 1

typedef struct cli_json {
    FILE *f;
    int depth;
    int count[CLI_JSON_DEPTH]; /* members written at each level */
    char close[CLI_JSON_DEPTH]; /* '}' or ']' for each open level */
} cli_json;

/* key is NULL inside arrays (and for the outermost value). */
void json_open(cli_json *j, FILE *f);              /* starts the top-level object */
void json_close(cli_json *j);                      /* ends it, with a newline     */
void json_object(cli_json *j, const char *key);
void json_array(cli_json *j, const char *key);
void json_end(cli_json *j);                        /* ends an object or array     */
void json_str(cli_json *j, const char *key, const char *v);
void json_num(cli_json *j, const char *key, double v); /* non-finite -> null */
void json_u64(cli_json *j, const char *key, uint64_t v);
void json_bool(cli_json *j, const char *key, int v);
#endif
