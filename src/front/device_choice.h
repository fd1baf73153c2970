/* SPDX-License-Identifier: BSD-3-Clause */
/* The context a front-end call runs in. */
#ifndef TF_FRONT_DEVICE_CHOICE_H
#define TF_FRONT_DEVICE_CHOICE_H
#include "seams/context.h"

/* What c runs on: an AUTO context (made for GPU 0) is resolved to GPU or
 * CPU on the first call that needs to know, and stays so. */
tf_backend tf_context_resolve(tf_context *c);

/* The device choice of every operation (plans, CP-ALS, SDDMM, SpTTM and
 * those to come), in one place:
 * - tf_choose_backend: `asked` unless AUTO; under AUTO the GPU when the
 *   context's device is one (without a context: when the machine has one)
 *   and the operation can run there (gpu_capable: its format, algorithm or
 *   options exist on the GPU), else the CPU (not gpu_capable: the CPU
 *   without asking CUDA anything, so nothing loads; CP-APR);
 * - tf_gpu_fallback: after a GPU attempt failed with s, 1 when the work
 *   runs on the CPU instead -- under AUTO, a problem the GPU could not hold
 *   (TF_ERR_NOMEM) -- with "<the GPU's error>: running on the CPU" in note
 *   and the error cleared; 0 when s stands. */
tf_backend tf_choose_backend(tf_context *c, tf_backend asked, int gpu_capable);
int tf_gpu_fallback(tf_status s, tf_backend asked, char *note, size_t len);
/* The note alone (the wording of tf_gpu_fallback), error cleared. */
void tf_cpu_fallback_note(char *note, size_t len);

/* `given` (resolved) if non-NULL, else a new default context for `backend` on GPU
 * `device`, returned in *own as well (the caller frees *own when done;
 * NULL when nothing was made). */
tf_status tf_context_for_call(tf_context *given, tf_backend backend, int device, int threads,
                              tf_context **use, tf_context **own);
#endif
