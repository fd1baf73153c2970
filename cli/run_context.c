/* SPDX-License-Identifier: BSD-3-Clause */
/* One tf_context per command run. */
#include "run_context.h"

#include <stdio.h>

#include "args.h"

int cli_run_context(tf_backend backend, int device, int threads, uint64_t memory_limit, const char *opt,
                    tf_context **out)
{
    return cli_run_context_ranks(backend, device, threads, memory_limit, 0, opt, out);
}

int cli_run_context_ranks(tf_backend backend, int device, int threads, uint64_t memory_limit, int distributed,
                          const char *opt, tf_context **out)
{
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.distributed = distributed;
    o.backend = backend;
    o.device = device;
    o.threads = threads;
    o.memory_limit = memory_limit;
    tf_tuning_from_env(&o.tuning); /* TF_FCOO_MINB=4 etc. stay usable for measurements */
    if (tf_context_create(&o, out) == TF_OK) return CLI_OK;
    fprintf(stderr, "tenfold: %s: %s\n", opt, tf_last_error());
    return CLI_FAIL;
}
