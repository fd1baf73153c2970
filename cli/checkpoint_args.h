/* SPDX-License-Identifier: BSD-3-Clause */
/* --checkpoint STEM, --checkpoint-every N[,Tm] and --resume STEM of the
 * iterative commands (cpd, tucker): into a tf_checkpoint. */
#ifndef TF_CLI_CHECKPOINT_ARGS_H
#define TF_CLI_CHECKPOINT_ARGS_H
#include "tenfold.h"

#define CLI_CHECKPOINT_HELP                                                                          \
    "      --checkpoint STEM  save the run's state as it goes: the factors (a factor\n"              \
    "                       set, STEM.mode<N>.mat ...) and STEM.state (the iteration,\n"             \
    "                       the fits so far, what the next iteration needs), switched\n"             \
    "                       in one step (a run killed while it writes leaves the\n"                  \
    "                       previous checkpoint whole); after every iteration unless\n"              \
    "                       --checkpoint-every says otherwise, and always after the\n"               \
    "                       last. On MPI ranks rank 0 writes\n"                                      \
    "      --checkpoint-every E  when: N (every N iterations), Tm / Ts / Th (when T\n"               \
    "                       minutes / seconds / hours have passed since the last one)\n"             \
    "                       or both, comma-separated (10,5m)\n"                                      \
    "      --resume STEM    go on from the checkpoint STEM up to -i iterations in\n"                \
    "                       all: the run ends with the fits and factors it would\n"                 \
    "                       have had without the stop. The tensor, rank, method and\n"              \
    "                       options that shape the result must be the checkpoint's\n"               \
    "                       (else one line naming what differs, exit 1);\n"                          \
    "                       --checkpoint may name the same STEM\n"

/* Fills *out (zeroed first) from the three values (each NULL when not
 * given). Returns 0 or a usage error (2). */
int cli_checkpoint_parse(const char *cmd, const char *path, const char *every, const char *resume, tf_checkpoint *out);
/* The line that says what the checkpoints do ("" when none), for the
 * command's start lines. */
void cli_checkpoint_describe(const tf_checkpoint *c, char *buf, size_t len);
#endif
