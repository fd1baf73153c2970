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

int cli_paths_distinct(const char *cmd, const cli_path *p, int n)
{
    if (n <= 0) return CLI_OK;
    tf_path_id *id = malloc((size_t)n * sizeof *id);
    if (!id) {
        fprintf(stderr, "tenfold: out of memory\n");
        return CLI_FAIL;
    }
    for (int i = 0; i < n; ++i) tf_path_id_get(p[i].path, p[i].output, &id[i]);
    int rc = CLI_OK;
    for (int i = n - 1; i >= 0 && rc == CLI_OK; --i) { /* a later output is named first */
        if (!p[i].output || !p[i].path) continue;
        for (int j = 0; j < n && rc == CLI_OK; ++j) {
            if (j == i || !p[j].path || (p[j].output && j > i)) continue; /* each pair of outputs once */
            if (p[i].group && p[i].group == p[j].group) continue;
            if (!tf_path_id_same(&id[i], &id[j])) continue;
            rc = cli_usage(cmd, "%s %s is the same file as %s %s (an output may not overwrite an input or another "
                           "output)", p[i].what, p[i].path, p[j].what, p[j].path);
        }
    }
    free(id);
    return rc;
}

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
        cli_flush_stdout();
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

/* A SIGINT this process sent itself is no Ctrl-C: OpenBLAS raises one when
 * it cannot start its threads (its own message on stderr says so), and the
 * run failed. Async-signal-safe: write and _exit only. */
static int self_raised(int sig, const siginfo_t *si)
{
    return sig == SIGINT && si && (si->si_code == SI_TKILL || si->si_code == SI_USER) && si->si_pid == getpid();
}

static void on_signal(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    /* a switch of the outputs already begun is finished, not undone: the
     * outputs are complete and the run exits 0 (README, "Outputs") */
    const int complete = tf_output_cleanup();
    if (self_raised(sig, si)) {
        static const char msg[] =
            "tenfold: a library in this process raised SIGINT (OpenBLAS does when it cannot start its threads: "
            "see its message above; fewer threads, e.g. OPENBLAS_NUM_THREADS=1 or -t, or a higher process "
            "limit, may help)\n";
        ssize_t w = write(2, msg, sizeof msg - 1);
        (void)w;
        _exit(1);
    }
    _exit(complete ? 0 : 128 + sig);
}

void cli_install_signal_handlers(void)
{
    static const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; ++i) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN && sigs[i] == SIGINT)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO;
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

int cli_out_close(cli_outfile *o)
{
    int bad = ferror(o->f);
    if (fclose(o->f) != 0) bad = 1;
    o->f = NULL;
    if (bad || !o->buf) {
        fprintf(stderr, "tenfold: %s: out of memory for the text\n", o->path);
        return 1;
    }
    return 0;
}

int cli_out_commit(cli_outfile *o)
{
    int rc = 0;
    if (cli_out_close(o)) {
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
