/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold: command dispatch. Each command lives in cli/cmd_<name>.c. */
#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "run_context.h"
#include "tenfold.h"
#include "wait_policy.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
    int ranks; /* runs over MPI ranks (starts MPI and checks the ranks agree itself) */
} command;

static const command commands[] = {
    {"cpd", cmd_cpd, "CP decomposition of a sparse tensor (ALS, constrained, CP-APR)", 1},
    {"tucker", cmd_tucker, "Tucker decomposition of a sparse tensor (HOOI)", 1},
    {"complete", cmd_complete, "tensor completion from observed entries (ALS; RMSE on held-out entries)", 1},
    {"predict", cmd_predict, "a model's values at given coordinates (missing entries)", 0},
    {"split", cmd_split, "split a tensor's entries into training, validation and test files", 0},
    {"check", cmd_check, "validate a tensor file and report what was fixed", 0},
    {"stats", cmd_stats, "dims, slice-size distribution, skew and memory of each format", 0},
    {"convert", cmd_convert, "convert between tns, tns with header, sptensor, bin and mtx", 0},
    {"gen", cmd_gen, "generate a synthetic tensor (power-law skew, planted model)", 1},
    {"mttkrp", cmd_mttkrp, "one MTTKRP from given factor files", 0},
    {"sddmm", cmd_sddmm, "sampled dense-dense matrix product (benchmark or one product)", 1},
    {"ttm", cmd_ttm, "sparse tensor times matrix on one mode (benchmark or one product)", 0},
    {"bench", cmd_bench, "benchmark kernels (bench mttkrp FILE)", 0},
    {"info", cmd_info, "version, build options, threads and GPUs", 0},
};
enum { NCOMMANDS = sizeof commands / sizeof *commands };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: tenfold <command> [options]\n"
            "       tenfold <command> --help\n"
            "\n"
            "Sparse tensor decomposition and sparse-dense kernels (version %s).\n"
            "\n"
            "commands:\n",
            TF_VERSION_STRING);
    for (int i = 0; i < NCOMMANDS; ++i) fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].summary);
    fprintf(f,
            "\n"
            "options:\n"
            "  -h, --help     this help\n"
            "  -V, --version  print the version\n"
            "\n"
            "Exit status: 0 success, 1 failure (one-line message on stderr), 2 usage error,\n"
            "130 / 143 after SIGINT / SIGTERM (temporary files removed, old outputs kept;\n"
            "a signal once the outputs' switch has begun finishes it: exit 0).\n"
            "\n"
            "Outputs: '-' is standard output (then progress goes to stderr); a symlink's\n"
            "target is replaced; FIFOs and devices are written directly; a regular file\n"
            "is written to a temporary name and renamed; cpd's factor set is switched in\n"
            "one step (STEM.set, see tenfold cpd --help). Output places are checked before\n"
            "any input is read; an output that is an input or another output of the run\n"
            "is a usage error.\n");
}

/* What was printed on standard output must have reached it: `tenfold
 * stats x.tns > /dev/full` is a failure (exit 1 and a message), not a
 * success with the report lost. stdio buffers the output, so the error
 * shows only when the buffer is flushed: here, at the end of main, for
 * every command (as gnulib's close_stdout). Nothing pending on a closed
 * descriptor (`>&-` with nothing printed) is not an error. Files the
 * library writes to "-" go to the descriptor directly and report their
 * own errors. */
static int close_stdout(int rc)
{
    const int pending = __fpending(stdout) != 0, prev_fail = ferror(stdout) != 0;
    errno = 0;
    const int close_fail = fclose(stdout) != 0;
    const int err = close_fail && errno ? errno : cli_stdout_errno();
    if (!prev_fail && !(close_fail && (pending || err != EBADF))) return rc;
    if (err) fprintf(stderr, "tenfold: error writing standard output: %s\n", strerror(err));
    else fprintf(stderr, "tenfold: error writing standard output\n");
    return rc ? rc : 1;
}

static int run(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        usage(stdout);
        cli_flush_stdout();
        return 0;
    }
    if (!strcmp(c, "--version") || !strcmp(c, "-V")) {
        printf("tenfold %s\n", TF_VERSION_STRING);
        return 0;
    }
    cli_install_signal_handlers(); /* SIGINT / SIGTERM remove live temporaries */
    for (int i = 0; i < NCOMMANDS; ++i) {
        if (strcmp(c, commands[i].name)) continue;
        /* under mpirun, a command of one process still meets the others'
         * first check, so a rank running another command fails them all */
        int rc = commands[i].ranks ? CLI_OK : cli_ranks_same_command(&argc, &argv, c);
        return rc ? rc : commands[i].run(argc - 1, argv + 1);
    }
    if (c[0] == '-') fprintf(stderr, "tenfold: unknown option '%s'\n", c);
    else fprintf(stderr, "tenfold: unknown command '%s'\n", c);
    fprintf(stderr, "try 'tenfold --help'\n");
    return 2;
}

int main(int argc, char **argv)
{
    cli_prepare_environment(argv); /* first: before any OpenMP or BLAS call */
    return close_stdout(run(argc, argv));
}
