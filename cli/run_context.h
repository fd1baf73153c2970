/* The context of one command run: its device (per --device / --gpu) and
 * the tuning policy with the TF_* benchmark overrides of the environment. */
#ifndef TF_CLI_RUN_CONTEXT_H
#define TF_CLI_RUN_CONTEXT_H
#include "tenfold.h"

/* Creates *out for `backend` (AUTO: the GPU when one is present) on GPU
 * `device`; on failure prints "tenfold: <opt>: <why>" and returns 1
 * (opt names the option that asked for the device, e.g. "--device gpu"). */
int cli_run_context(tf_backend backend, int device, int threads, const char *opt, tf_context **out);
#endif
