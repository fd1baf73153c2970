/* SPDX-License-Identifier: BSD-3-Clause */
/* The output level shared by the commands (-q / -v) and warnings. */
#include "verbosity.h"

#include <stdarg.h>
#include <stdio.h>

#include "args.h"

cli_level cli_verbosity = CLI_NORMAL;
int cli_quiet_flag, cli_verbose_flag;

int cli_verbosity_resolve(const char *cmd)
{
    if (cli_quiet_flag && cli_verbose_flag)
        return cli_usage(cmd, "-q/--quiet and -v/--verbose exclude each other");
    cli_verbosity = cli_quiet_flag ? CLI_QUIET : cli_verbose_flag ? CLI_VERBOSE : CLI_NORMAL;
    return -1;
}

void cli_warn(const char *fmt, ...)
{
    if (cli_quiet()) return;
    va_list ap;
    va_start(ap, fmt);
    cli_flush_stdout(); /* after what was printed before it, where both go to one place */
    fputs("tenfold: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}
