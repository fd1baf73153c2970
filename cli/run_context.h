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
/* The same, spanning the ranks of MPI_COMM_WORLD when distributed (cpd under mpirun). */
int cli_run_context_ranks(tf_backend backend, int device, int threads, uint64_t memory_limit, int distributed,
                          const char *opt, tf_context **out);

/* The --memory-limit line of the --help texts. */
#define CLI_MEMORY_LIMIT_HELP                                                                  \
    "      --memory-limit SIZE  device memory tenfold may use (8G, 512M, ...;\n"              \
    "                       default: 90% of the GPU's free memory); past it a GPU\n"           \
    "                       run stops with one line naming the limit\n"
#endif
