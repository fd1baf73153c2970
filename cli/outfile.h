/* Text outputs of the CLI written atomically: a temporary file next to
 * the target, renamed over it only when everything was written. */
#ifndef TF_CLI_OUTFILE_H
#define TF_CLI_OUTFILE_H
#include <stdio.h>

typedef struct cli_outfile {
    FILE *f;
    char tmp[4096];
    const char *path;
} cli_outfile;

/* Opens "<path>.tmp.XXXXXX". Prints "tenfold: ..." and returns 1 on failure. */
int cli_out_open(cli_outfile *o, const char *path);
/* Flushes, closes and renames; on any error removes the temporary file,
 * prints "tenfold: ..." and returns 1. */
int cli_out_commit(cli_outfile *o);
/* Closes and removes the temporary file. */
void cli_out_abort(cli_outfile *o);
#endif
