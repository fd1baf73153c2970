/* SPDX-License-Identifier: BSD-3-Clause */
/* CLI outputs: checks before the work, text outputs, signal cleanup. */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "tenfold.h"

/* "/dev/fd/N" of the process's real standard output once descriptor 1
 * has been pointed at stderr (see cli_outputs_check). */
static char stdout_alias[32];

int cli_outputs_check(const char **paths, int n)
{
    int to_stdout = 0;
    for (int i = 0; i < n; ++i) {
        int s = 0;
        if (!paths[i]) continue;
        if (tf_output_check(paths[i], &s) != TF_OK) return cli_fail();
        if (s) to_stdout = 1;
    }
    if (!to_stdout) return CLI_OK;
    /* The output takes standard output: keep that descriptor for it under
     * another number, and point descriptor 1 (printf & co) at stderr, so
     * what the command prints for people cannot mix into the output. */
    if (!stdout_alias[0]) {
        fflush(stdout);
        const int keep = fcntl(1, F_DUPFD_CLOEXEC, 3);
        if (keep < 0 || dup2(2, 1) < 0) {
            fprintf(stderr, "tenfold: standard output: cannot set it apart for the output: %s\n",
                    strerror(errno));
            return CLI_FAIL;
        }
        snprintf(stdout_alias, sizeof stdout_alias, "/dev/fd/%d", keep);
        cli_set_stdout_alias(stdout_alias); /* its messages say "standard output" */
    }
    for (int i = 0; i < n; ++i) {
        int s = 0;
        if (paths[i] && tf_output_check(paths[i], &s) == TF_OK && s) paths[i] = stdout_alias;
    }
    return CLI_OK;
}

static void on_signal(int sig)
{
    tf_output_cleanup();
    _exit(128 + sig);
}

void cli_install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; ++i) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN && sigs[i] == SIGINT)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

int cli_out_open(cli_outfile *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->f = open_memstream(&o->buf, &o->len);
    if (!o->f) {
        fprintf(stderr, "tenfold: %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

int cli_out_commit(cli_outfile *o)
{
    int bad = ferror(o->f);
    if (fclose(o->f) != 0) bad = 1;
    o->f = NULL;
    int rc = 0;
    if (bad || !o->buf) {
        fprintf(stderr, "tenfold: %s: out of memory for the text\n", o->path);
        rc = 1;
    } else if (tf_write_file(o->path, o->buf, o->len) != TF_OK) {
        rc = cli_fail();
    }
    free(o->buf);
    o->buf = NULL;
    return rc;
}

void cli_out_abort(cli_outfile *o)
{
    if (o->f) fclose(o->f);
    o->f = NULL;
    free(o->buf);
    o->buf = NULL;
}
