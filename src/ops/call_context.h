/* SPDX-License-Identifier: BSD-3-Clause */
/* The context a front-end call runs in. */
#ifndef TF_OPS_CALL_CONTEXT_H
#define TF_OPS_CALL_CONTEXT_H
#include "backend/context.h"

/* What c runs on: an AUTO context (made for GPU 0) is resolved to GPU or
 * CPU on the first call that needs to know, and stays so. */
tf_backend tf_context_resolve(tf_context *c);

/* Under auto, a problem the GPU could not hold (TF_ERR_NOMEM) runs on the
 * CPU: writes "<the GPU's error>: running on the CPU" to note and clears
 * the error. One wording for CP-ALS, plans, SDDMM and SpTTM. */
void tf_cpu_fallback_note(char *note, size_t len);

/* `given` (resolved) if non-NULL, else a new default context for `backend` on GPU
 * `device`, returned in *own as well (the caller frees *own when done;
 * NULL when nothing was made). */
tf_status tf_context_for_call(tf_context *given, tf_backend backend, int device, int threads,
                              tf_context **use, tf_context **own);
#endif
