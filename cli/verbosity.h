/* SPDX-License-Identifier: BSD-3-Clause */
/* How much a command prints, one setting for every command (-q / -v):
 *   quiet    only errors and the requested outputs (files, the tables of
 *            the benchmarks and stats, check's warnings): no header,
 *            progress, iteration or summary lines, no warnings
 *   normal   the default
 *   verbose  more: read statistics, per-iteration step times, plan
 *            details, the progress line also when stderr is no terminal
 * A command lists CLI_VERBOSITY_OPTS in its option table and
 * CLI_VERBOSITY_HELP in its --help; cli_parse sets cli_verbosity. */
#ifndef TF_CLI_VERBOSITY_H
#define TF_CLI_VERBOSITY_H

typedef enum cli_level { CLI_QUIET = 0, CLI_NORMAL = 1, CLI_VERBOSE = 2 } cli_level;

extern cli_level cli_verbosity;
/* Where the option table puts -q / -v (read by cli_verbosity_resolve). */
extern int cli_quiet_flag, cli_verbose_flag;

#define CLI_VERBOSITY_OPTS {"quiet", 'q', NULL, &cli_quiet_flag}, {"verbose", 'v', NULL, &cli_verbose_flag}
#define CLI_VERBOSITY_HELP                                                                    \
    "  -q, --quiet          only errors and the requested outputs: no header,\n"            \
    "                       progress, iteration or summary lines, no warnings\n"           \
    "  -v, --verbose        more: read statistics, step times, plan details; the\n"        \
    "                       progress line also when stderr is not a terminal\n"
/* The closing paragraph about the progress line (commands that read). */
#define CLI_PROGRESS_HELP                                                                     \
    "\n"                                                                                       \
    "A read or plan build that takes over a second shows a progress line on\n"              \
    "stderr (the percentage of the file where its size is known), redrawn in\n"             \
    "place and erased when done -- when stderr is a terminal, or with -v (then\n"           \
    "ended with a newline), never with -q.\n"

/* Sets cli_verbosity from the flags; a usage error (returns 2) when both
 * were given, else -1. */
int cli_verbosity_resolve(const char *cmd);

static inline int cli_quiet(void) { return cli_verbosity == CLI_QUIET; }
static inline int cli_verbose(void) { return cli_verbosity >= CLI_VERBOSE; }

/* "tenfold: warning: ..." on stderr, one line; nothing under -q. */
void cli_warn(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
#endif
