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

/* One path of a run, for cli_paths_distinct. */
typedef struct cli_path {
    const char *what;   /* how messages name it: "--json", "the input", ... */
    const char *path;   /* NULL: not used in this run                       */
    int output;         /* 1: the run writes it                             */
    int group;          /* paths of one group (non-zero) may be the same
                           file: a set replaced by its own switch            */
} cli_path;

/* Before anything is read or written: when an output is the same file as
 * an input or another output -- after symlinks, by device and inode, or the
 * same new name in the same directory (tf_path_id_get) -- prints a usage
 * error naming both and returns 2. Character devices (/dev/null, a
 * terminal) never count. */
int cli_paths_distinct(const char *cmd, const cli_path *p, int n);

/* Checks the n outputs (NULL entries are skipped) with tf_output_check,
 * before any input is read. On failure prints "tenfold: ..." and returns
 * 1. When one of them is standard output ("-", /dev/stdout, ...), that
 * entry is replaced by a "/dev/fd/N" alias of the real standard output
 * and descriptor 1 goes to stderr from here on: everything the command
 * prints for people lands there and the output stays clean. */
int cli_outputs_check(const char **paths, int n);

/* Removes live temporary files on SIGINT / SIGTERM and exits with
 * 128 + the signal (130 / 143); a switch of the outputs that had begun
 * (tf_output_cleanup finishes it) exits 0 instead: the outputs are
 * complete. SIGINT is left alone when it was ignored on entry (nohup,
 * background jobs of non-interactive shells). */
void cli_install_signal_handlers(void);

typedef struct cli_outfile {
    FILE *f;          /* text goes here (held in memory)    */
    char *buf;
    size_t len;
    const char *path;
} cli_outfile;

/* Starts a text output. Prints "tenfold: ..." and returns 1 on failure. */
int cli_out_open(cli_outfile *o, const char *path);
/* Ends the text: o->buf and o->len hold it (cli_out_abort frees it).
 * Prints "tenfold: ..." and returns 1 when it could not be kept. */
int cli_out_close(cli_outfile *o);
/* Writes the text to path (tf_write_file); on any error prints
 * "tenfold: ..." and returns 1 (no partial file is left). */
int cli_out_commit(cli_outfile *o);
/* Drops the text. */
void cli_out_abort(cli_outfile *o);
#endif
