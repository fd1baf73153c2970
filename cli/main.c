/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold: command dispatch. Each command lives in cli/cmd_<name>.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "outfile.h"
#include "tenfold.h"
#include "wait_policy.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"cpd", cmd_cpd, "CP-ALS decomposition of a sparse tensor"},
    {"check", cmd_check, "validate a tensor file and report what was fixed"},
    {"stats", cmd_stats, "dims, slice-size distribution, skew and memory of each format"},
    {"convert", cmd_convert, "convert between tns, tns with header, sptensor, bin and mtx"},
    {"gen", cmd_gen, "generate a synthetic tensor (power-law skew, planted model)"},
    {"mttkrp", cmd_mttkrp, "one MTTKRP from given factor files"},
    {"sddmm", cmd_sddmm, "sampled dense-dense matrix product (benchmark or one product)"},
    {"ttm", cmd_ttm, "sparse tensor times matrix on one mode (benchmark or one product)"},
    {"bench", cmd_bench, "benchmark kernels (bench mttkrp FILE)"},
    {"info", cmd_info, "version, build options, threads and GPUs"},
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
            "130 / 143 after SIGINT / SIGTERM (temporary files removed, old outputs kept).\n"
            "\n"
            "Outputs: '-' is standard output (then progress goes to stderr); a symlink's\n"
            "target is replaced; FIFOs and devices are written directly; a regular file\n"
            "is written to a temporary name and renamed, sets of files all or nothing.\n"
            "Output places are checked before any input is read.\n");
}

int main(int argc, char **argv)
{
    cli_default_passive_wait(argv); /* first: before any OpenMP call */
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "--help") || !strcmp(c, "-h") || !strcmp(c, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(c, "--version") || !strcmp(c, "-V")) {
        printf("tenfold %s\n", TF_VERSION_STRING);
        return 0;
    }
    cli_install_signal_handlers(); /* SIGINT / SIGTERM remove live temporaries */
    for (int i = 0; i < NCOMMANDS; ++i)
        if (!strcmp(c, commands[i].name)) return commands[i].run(argc - 1, argv + 1);
    if (c[0] == '-') fprintf(stderr, "tenfold: unknown option '%s'\n", c);
    else fprintf(stderr, "tenfold: unknown command '%s'\n", c);
    fprintf(stderr, "try 'tenfold --help'\n");
    return 2;
}
