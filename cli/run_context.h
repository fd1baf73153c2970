/* SPDX-License-Identifier: BSD-3-Clause */
/* The context of one command run: its device (per --device / --gpu) and
 * the tuning policy with the TF_* benchmark overrides of the environment. */
#ifndef TF_CLI_RUN_CONTEXT_H
#define TF_CLI_RUN_CONTEXT_H
#include "tenfold.h"

/* Creates *out for `backend` (AUTO: the GPU when one is present) on GPU
 * `device` with a device memory limit (0: none; --memory-limit); on
 * failure prints "tenfold: <opt>: <why>" and returns 1 (opt names the
 * option that asked for the device, e.g. "--device"). */
int cli_run_context(tf_backend backend, int device, int threads, uint64_t memory_limit, const char *opt,
                    tf_context **out);
/* --gpus N|all|LIST: a count (GPUs 0..N-1), every GPU, or GPU numbers
 * (a comma makes a list: "2," is GPU 2 alone). n = 0 and all = 0: not given. */
typedef struct cli_gpus {
    int n, all;
    int dev[TF_MAX_GPUS];
} cli_gpus;
/* Parses s (NULL: not given); a usage error (exit 2) on a bad spec. */
int cli_parse_gpus(const char *cmd, const char *s, cli_gpus *g);
/* The same as cli_run_context on the GPUs of `gpus` (NULL or not given:
 * `device`; given, an auto backend becomes the GPU), spanning the ranks of
 * MPI_COMM_WORLD when distributed (cpd under mpirun). */
int cli_run_context_ranks(tf_backend backend, int device, const cli_gpus *gpus, int threads, uint64_t memory_limit,
                          int distributed, const char *opt, tf_context **out);

/* Before the input is read: when the run asks for a GPU (backend GPU, or
 * --gpus), the CUDA module loads and the GPUs asked for exist; else prints
 * "tenfold: <opt>: <why>" and returns 1, so a missing GPU costs no read. */
int cli_gpu_precheck(tf_backend backend, int device, const cli_gpus *gpus, const char *opt);

/* Under mpirun (a build with MPI): MPI started, this process's rank and
 * the number of ranks (1, 0 without mpirun or MPI); a failure is reported. */
int cli_ranks_start(int *argc, char ***argv, int *rank, int *size);
/* The end of a command over ranks: a failure on one rank ends them all
 * (the others would wait in a collective) unless every rank failed alike
 * (cli_failed_together), then MPI is stopped; rc back. */
int cli_ranks_end(int rc, int size);

/* "N threads" for the CPU team of a run asking for `threads` (0: the
 * default), which says where the default is this rank's share of its
 * host's CPUs: "16 threads (32 CPUs shared by 2 ranks on this host)". */
void cli_threads_text(int threads, char *buf, size_t len);
/* On `size` > 1 CPU ranks, every rank's team (a collective: every rank
 * calls it, quiet or not) for the ranks line: ", 16 threads each" or
 * ", 10-11 threads each"; "" on one process. 1 after a failure (said). */
int cli_rank_threads(int threads, int rank, int size, char *buf, size_t len);

/* What the ranks must agree on before they work together (tf_mpi_agree):
 * first the command and its options, right after MPI starts (before any
 * read, and before any NCCL set-up of GPU ranks); then the input, right
 * after the read, before any collective of the computation. A record
 * begins with the command, how its options parsed (parse_rc: -1 valid, 0
 * --help, 2 a usage error) and the input's kind (a file, standard input,
 * --gen SPEC; not its path, which may differ between nodes); then the
 * options that must match, by name as in --help. */
void cli_agree_begin(tf_agree *a, const char *cmd, int parse_rc, const char *path);
void cli_agree_str(tf_agree *a, const char *name, const char *value); /* NULL: "(none)" */
void cli_agree_u64(tf_agree *a, const char *name, uint64_t value);
void cli_agree_double(tf_agree *a, const char *name, double value);
void cli_agree_gpus(tf_agree *a, const cli_gpus *g);
/* With several ranks: 0 if every rank's record is equal, else 1 after one
 * line from rank 0 ("tenfold: ranks disagree: rank R has ...") on every
 * rank alike; a rank that does not answer (TF_MPI_TIMEOUT) is named. */
int cli_ranks_agree(const tf_agree *a, int size);
/* The same for the input read: order, dims, the whole tensor's non-zeros
 * and checksum (info->checksum of a part read, else t's own). */
int cli_ranks_agree_input(const tf_tensor *t, const tf_read_info *info, int threads, int size);
/* For a command that does not run over ranks: under mpirun (a build with
 * MPI), the ranks compare the command alone, so one running another
 * command than the others fails them all at once instead of leaving them
 * waiting; MPI is stopped again. 0 or the exit code. */
int cli_ranks_same_command(int *argc, char ***argv, const char *cmd);

/* --memory-limit SIZE (cli_size; NULL: not given, *out kept): GPU memory.
 * 0 is a usage error (it would mean "no limit", which is the default). Any
 * other size is taken -- 1 byte is a way to see the GPU's fallbacks -- and a
 * run on the CPU gets a note that the CPU ignores it. */
int cli_memory_limit(const char *cmd, const char *s, uint64_t *out);

/* The --gpus lines of the --help texts. */
#define CLI_GPUS_HELP                                                                          \
    "      --gpus G         several GPUs in this process: a count N (GPUs 0..N-1),\n"          \
    "                       all, or a list of GPU numbers (0,2; '3,' is GPU 3\n"           \
    "                       alone); every mode's non-zeros are split over them by\n"        \
    "                       ranges of its index, balanced by non-zeros (F-COO\n"            \
    "                       shards; --memory-limit applies to each GPU)\n"

/* The --memory-limit line of the --help texts. */
#define CLI_MEMORY_LIMIT_HELP                                                                  \
    "      --memory-limit SIZE  device memory tenfold may use (8G, 512M, ...;\n"              \
    "                       default: 90% of the GPU's free memory); past it a GPU\n"           \
    "                       run stops with one line naming the limit (0 is not a\n"           \
    "                       size; a run on the CPU ignores it, with a note)\n"
#endif
