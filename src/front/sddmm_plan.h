/* SPDX-License-Identifier: BSD-3-Clause */
/* The SDDMM plan of the front end (src/front/sddmm_plan.c), shared with the
 * one-shot entry points (src/front/sddmm.c), which are build + run + free. */
#ifndef TF_FRONT_SDDMM_PLAN_H
#define TF_FRONT_SDDMM_PLAN_H
#include "tenfold.h"

/* op, precision, algorithm and the row-scheme knobs of o; `who` starts the message. */
tf_status tf_sddmm_check_opts(const tf_sddmm_opts *o, const char *who);

/* The backend o asks for (GPU-only algorithms force the GPU, the reference
 * the CPU; AUTO: the GPU when one is present); a contradiction is TF_ERR_ARG. */
tf_status tf_sddmm_pick_backend(const tf_sddmm_opts *o, tf_backend *out);

/* tf_sddmm_plan_build for the one-shot calls: S was validated by the
 * caller, which also keeps it alive and unchanged until the plan is freed
 * (a CPU plan borrows it instead of copying it). */
/* once: for one run (tf_sddmm: under the auto algorithm a GPU builds quickly,
 * TF_SDDMM_ALGO_QUICK, instead of tuning). */
tf_status tf_sddmm_plan_build_borrowed(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int once,
                                       tf_sddmm_plan **out);
#endif
