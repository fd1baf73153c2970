/* SPDX-License-Identifier: BSD-3-Clause */
/* The rows of the CUDA backend's tables of entry points. Each GPU operation
 * family keeps its table in its own header (seams/context.h: the devices
 * and the context; plan.h: MTTKRP plans; cpd.h: CP-ALS; sddmm_backends.h;
 * spttm_backends.h; model_backends.h), as a macro TF_CUDA_<FAMILY>_API(ROW)
 * that calls ROW once per entry point; seams/cuda_module.h composes them.
 * A row is
 *
 *     ROW(front, ret, name, params, args, pre, answer)
 *
 * and everything else about the entry point is made from it:
 * - its declaration, `ret name params;` (TF_CUDA_DECLARE_, in the family's
 *   header after the table);
 * - its field in the module's table tf_cuda_api, and the declaration of
 *   `ret name_impl params`, which the CUDA code defines (src/gpu/<op>/) and
 *   src/gpu/runtime/api.cu gathers into the table;
 * - its front end in libtenfold (src/gpu/entry/entry_points.c), the same in
 *   CUDA and CPU-only builds: it runs `pre`, then calls name_impl through
 *   the module's table, or, without a backend (a CPU-only build, or the
 *   module missing or failing to load), returns `answer`.
 * The fields:
 * - front: how the front end reaches the backend. MAY_LOAD: loads the
 *   module on first use. IF_LOADED: only a module already loaded, never
 *   loading it -- the entry is passed something only the module can have
 *   made (a plan, a device context), or must stay light (what a pointer
 *   is: without the module no tenfold GPU memory exists). MAY_LOAD_VOID and
 *   IF_LOADED_VOID: the same for ret void (answer left empty).
 * - ret, name, params: the prototype; args: params' names, in parentheses.
 * - pre: statements run first (may be empty): the clearing of
 *   out-parameters, so that a failure leaves them defined, and argument
 *   checks, which may return (TF_TRY) before anything loads; no comma
 *   outside parentheses (the field is passed on between macros).
 * - answer: the value returned without a backend. For a status,
 *   tf_cuda_unavailable("GPU plans need") fails with TF_ERR_UNAVAILABLE and
 *   "GPU plans need the CUDA backend, whose module <why not>" (CUDA build)
 *   or "..., which this build of tenfold does not have" (CPU-only build);
 *   tf_cuda_unavailable(NULL) says "no CUDA backend: ..." alone.
 * A name in params must not be the name of a macro (the rows are expanded
 * where the whole seam is visible). */
#ifndef TF_SEAMS_CUDA_TABLE_H
#define TF_SEAMS_CUDA_TABLE_H

/* The declaration of a row's entry point: TF_CUDA_<FAMILY>_API(TF_CUDA_DECLARE_). */
#define TF_CUDA_DECLARE_(front, ret, name, params, args, pre, answer) ret name params;

#endif
