/* SPDX-License-Identifier: BSD-3-Clause */
/* Outputs of the CLI. Every rule about where an output goes (standard
 * output for "-", symlinks, FIFOs and devices, temporary file + rename)
 * lives in the library (tenfold.h, "output files"); this is the CLI's side:
 * checking the outputs before the work, text outputs such as the JSON
 * reports, and the signal handlers that remove live temporaries. */
#ifndef TF_CLI_OUTFILE_H
#define TF_CLI_OUTFILE_H
#include <stddef.h>
#include <stdio.h>

/* Checks the n outputs (NULL entries are skipped) with tf_output_check,
 * before any input is read. On failure prints "tenfold: ..." and returns
 * 1. When one of them is standard output ("-", /dev/stdout, ...), that
 * entry is replaced by a "/dev/fd/N" alias of the real standard output
 * and descriptor 1 goes to stderr from here on: everything the command
 * prints for people lands there and the output stays clean. */
int cli_outputs_check(const char **paths, int n);

/* Removes live temporary files on SIGINT / SIGTERM and exits with
 * 128 + the signal (130 / 143). SIGINT is left alone when it was ignored
 * on entry (nohup, background jobs of non-interactive shells). */
void cli_install_signal_handlers(void);

typedef struct cli_outfile {
    FILE *f;          /* text goes here (held in memory)    */
    char *buf;
    size_t len;
    const char *path;
} cli_outfile;

/* Starts a text output. Prints "tenfold: ..." and returns 1 on failure. */
int cli_out_open(cli_outfile *o, const char *path);
/* Writes the text to path (tf_write_file); on any error prints
 * "tenfold: ..." and returns 1 (no partial file is left). */
int cli_out_commit(cli_outfile *o);
/* Drops the text. */
void cli_out_abort(cli_outfile *o);
#endif
