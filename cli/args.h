/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared command-line parsing for the tenfold commands: a table of
 * options, positional arguments, number and list parsing, and the
 * one-line usage / runtime error conventions:
 *   usage error   -> "tenfold <cmd>: ..." + "try 'tenfold <cmd> --help'", exit 2
 *   runtime error -> "tenfold: <tf_last_error()>", exit 1
 * Every function that can fail prints its message and returns the exit
 * code (2), so callers write `if ((rc = cli_u64(...))) return rc;`. */
#ifndef TF_CLI_ARGS_H
#define TF_CLI_ARGS_H
#include <stdint.h>

#include "tenfold.h"

#define CLI_OK 0
#define CLI_FAIL 1
#define CLI_USAGE 2
#define CLI_MAX_POS 8

typedef struct cli_opt {
    const char *name;   /* long name without dashes ("rank")                */
    char short_name;    /* 'r', or 0                                        */
    const char **value; /* option takes a value: where it goes              */
    int *flag;          /* option takes no value: set to 1                  */
} cli_opt;

typedef struct cli_args {
    const char *cmd;              /* command name for messages ("cpd")      */
    const char *pos[CLI_MAX_POS]; /* positional arguments in order          */
    int npos;
} cli_args;

/* Parses argv[1..argc-1] (argv[0] is the command name) against opts
 * (terminated by a zero entry). "--help"/"-h" prints help to stdout.
 * Returns -1 to go on, 0 after --help, 2 on a usage error. Positional
 * arguments must number min_pos..max_pos; pos_names describes them for
 * the "missing" message ("FILE", "IN OUT"). Also sets the output level
 * (-q / -v, when opts lists CLI_VERBOSITY_OPTS; verbosity.h). The value of
 * --gen (an option whose value goes to cli_gen_arg, gen_spec.h) becomes
 * a->pos[0], the other positional arguments moving up. */
int cli_parse(cli_args *a, const char *cmd, const char *help, int argc, char **argv,
              const cli_opt *opts, int min_pos, int max_pos, const char *pos_names);

/* Prints a usage error for a->cmd and returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Prints "tenfold: <tf_last_error()>" and returns 1. The "/dev/fd/N" alias
 * an output to standard output is written through (outfile.h) is named
 * "standard output" there. */
int cli_fail(void);
/* The alias of standard output that cli_fail names so (NULL: none). */
void cli_set_stdout_alias(const char *alias);

/* Number parsing of option values (NULL value -> keeps *out, returns 0).
 * The whole string must be a number within [lo, hi]. */
int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *out);
int cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out);
/* A byte size: a number with an optional K, M, G or T (powers of 1024;
 * "KB", "KiB" alike) suffix; "0" allowed. */
int cli_size(const char *cmd, const char *opt, const char *s, uint64_t *out);
/* Comma-separated lists: *n entries (1..max). */
int cli_u64_list(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                 uint64_t *out, int max, int *n);
int cli_double_list(const char *cmd, const char *opt, const char *s, double lo, double hi,
                    double *out, int max, int *n);
/* One of names[0..count-1]; *out = its position. */
int cli_choice(const char *cmd, const char *opt, const char *s, const char *const *names, int count,
               int *out);
/* Splits a comma-separated list into at most max pieces, pointing into a
 * copy owned by *buf (free it). Empty pieces are kept. */
int cli_split(const char *cmd, const char *opt, const char *s, char **buf, const char **out, int max,
              int *n);

/* Thread count option: NULL or "0" -> 0 (library default). */
int cli_threads(const char *cmd, const char *s, int *out);
#endif
