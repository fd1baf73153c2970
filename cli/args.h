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
    /* Both value and flag: the value is optional (--nonneg, --nonneg 1,3):
     * *flag = 1, and *value = the inline value (--opt=V) or the next
     * argument when that starts with a digit (else left as it is). */
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
/* fflush(stdout), remembering the first failure's errno: main's exit check
 * (a lost write to standard output is exit 1) then names the reason, which
 * stdio itself does not keep. Every explicit flush of stdout goes here. */
void cli_flush_stdout(void);
/* errno of the first failed cli_flush_stdout, 0 if none failed. */
int cli_stdout_errno(void);

/* The "/dev/fd/N" name the outputs to standard output go to the library
 * under (outfile.h): cli_fail says "standard output" for it. */
void cli_set_stdout_alias(const char *alias);

/* Prints "tenfold: <tf_last_error()>" and returns 1. A failure every MPI
 * rank reached together (tf_last_error_shared) is printed by rank 0 alone. */
int cli_fail(void);
/* on = 1: cli_fail prints nothing until cli_hold_failures(0) (the message
 * stays in tf_last_error()): ranks that agree on a failure before one of
 * them says it. */
void cli_hold_failures(int on);
/* Over MPI ranks (run_context.h): this process's rank (0 without ranks). */
void cli_set_rank(int rank);
/* A failure every rank of the run reaches alike (from the options they
 * agreed on): "tenfold: <message>" from rank 0 alone; returns 1. */
int cli_fail_all(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* rc, a failure every rank reached alike, already said (a usage error on
 * every rank): marks the run as cli_fail_all does. */
int cli_alike(int rc);
/* 1 once the run failed on every rank alike (cli_fail_all, or cli_fail of a
 * shared failure): the ranks then end without MPI_Abort (cli_ranks_end). */
int cli_failed_together(void);

/* Number parsing of option values (NULL value -> keeps *out, returns 0).
 * The whole string must be a number within [lo, hi]. */
int cli_u64(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
int cli_int(const char *cmd, const char *opt, const char *s, int lo, int hi, int *out);
/* Doubles: finite, in [lo, hi] (lo = -INFINITY / hi = INFINITY: no bound on
 * that side). One parser says every message: "expected a number in [0, 1]",
 * "expected a finite number" (inf, nan), "'1e-400' is too small" (below
 * the smallest normal double: underflow, never a silent 0), "too large". */
int cli_double(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out);
/* The same in [lo, hi) (hi itself is out: alpha). */
int cli_double_below(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out);
/* A byte size: a number with an optional K, M, G, T, P or E (powers of
 * 1024; "KB", "KiB" alike) suffix; "0" allowed; 2^63 bytes or more is
 * "too large". */
int cli_size(const char *cmd, const char *opt, const char *s, uint64_t *out);
/* Comma-separated lists: *n entries (1..max). */
int cli_u64_list(const char *cmd, const char *opt, const char *s, uint64_t lo, uint64_t hi,
                 uint64_t *out, int max, int *n);
int cli_double_list(const char *cmd, const char *opt, const char *s, double lo, double hi, int open_hi,
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
