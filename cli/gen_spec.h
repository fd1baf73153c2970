/* SPDX-License-Identifier: BSD-3-Clause */
/* --gen SPEC: a tensor generated in memory (tf_generate) in place of the
 * input file of the commands that read one. SPEC is a comma-separated list
 * of key=value fields named like `tenfold gen`'s flags, lists joined by x:
 *   dims=2000000x1000000x200000,nnz=20M,alpha=0.7,seed=1,rank=0,noise=0,counts=0
 * dims and nnz are required; alpha (one value or one per mode), seed,
 * rank, noise and counts default as in `tenfold gen`. */
#ifndef TF_CLI_GEN_SPEC_H
#define TF_CLI_GEN_SPEC_H
#include <stddef.h>

#include "tenfold.h"

/* The value of --gen on this command line (NULL if none); cli_parse
 * places it as the first positional argument. */
extern const char *cli_gen_arg;

/* The option table entry and the help lines of every command that reads a tensor. */
#define CLI_GEN_OPT {"gen", 0, &cli_gen_arg, NULL}
#define CLI_GEN_HELP                                                                        \
    "      --gen SPEC       generate the tensor in memory instead of reading a file:\n"       \
    "                       dims=D1xD2x..,nnz=N[,alpha=A][,seed=S][,rank=R][,noise=E]\n"    \
    "                       [,counts=C] as the same flags of tenfold gen (e.g.\n"           \
    "                       dims=2Mx1Mx200k,nnz=20M,alpha=0.7; per-mode alpha as\n"        \
    "                       A1xA2x..; counts=4: integer counts of mean 4, for --method\n"  \
    "                       apr)\n"

/* Parses SPEC into *o (usage error naming the field: message, returns 2). */
int cli_gen_parse(const char *cmd, const char *spec, tf_gen_opts *o);
/* SPEC of o in the canonical form above (every field but zero rank/noise/counts). Returns buf. */
const char *cli_gen_format(char *buf, size_t len, const tf_gen_opts *o);
/* The canonical SPEC if path is this run's --gen value, else NULL. */
const char *cli_generated(const char *path);
/* Generates part `part` of `parts` of the tensor of SPEC with `threads`
 * threads (parts >= 2: the MPI ranks together, each generating only its
 * part, tf_generate_part); info->seconds is the generation time,
 * total_nnz the whole's non-zeros, checksum (on ranks) a hash of the
 * canonical SPEC, the rest zero. Usage error: 2; failure: "tenfold:
 * <error>", 1. */
int cli_gen_load(const char *cmd, const char *spec, int threads, uint64_t part, uint64_t parts, tf_tensor *t,
                 tf_read_info *info);
/* Host memory the last cli_gen_load's generator held at most (this process). */
uint64_t cli_gen_peak(void);
#endif
