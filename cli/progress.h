/* SPDX-License-Identifier: BSD-3-Clause */
/* The one-line progress note of long reads and plan builds, on stderr:
 * "reading data.tns: 43% (1.2 GB of 2.8 GB), 3.1 s". It appears once an
 * operation has run for a second, is redrawn in place (\r) at most four
 * times a second (once a second when stderr is not a terminal), and is
 * erased when the operation ends (ended with a newline instead when
 * stderr is not a terminal). Shown when stderr is a terminal or under -v,
 * never under -q. The library reports (tf_progress callbacks: bytes of the
 * input where its size is known); a helper thread draws, so a step that
 * reports nothing for a while (a plan build, a stalled pipe) still shows
 * its time. */
#ifndef TF_CLI_PROGRESS_H
#define TF_CLI_PROGRESS_H
#include "tenfold.h"

/* The tool's tf_progress_fn; user is the label (a string that outlives the
 * operation: the input's name, the command). */
void cli_progress(const tf_progress *p, void *user);
/* cli_progress when a progress line may be shown (output level, stderr a
 * terminal), else NULL: what the commands put in the options' progress. */
tf_progress_fn cli_progress_fn(void);
#endif
