/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-ALS on a backend (seams/cpd.h) that holds the tensor: the
 * algorithm itself, apart from choosing and creating the backend (the
 * front end, front/cpd.c, does that). */
#ifndef TF_ALGO_CP_ALS_H
#define TF_ALGO_CP_ALS_H
#include "seams/cpd.h"
#include "tenfold.h"

/* Allocates out, starts from o->init (lambda folded into factor 1; checked
 * by the caller) or from factors uniform in [0,1) drawn from o->seed,
 * iterates until |delta fit| < o->tol or o->max_iters (normx2 = ||X||^2 > 0),
 * filling rep's iteration counts, fit and step times, and copies the
 * backend's result into out (freed on failure). ck (NULL: none): the
 * checkpoints to write, and the state to go on from when ck->done > 0 (then
 * o->init is the checkpoint's model, in the run's labels and scale, and
 * ck->aux the backend's state in the run's labels). */
struct tf_ckpt;
tf_status tf_als_run(const tf_cpd_backend *be, const tf_tensor *X, const tf_cpd_opts *o, double normx2,
                     struct tf_ckpt *ck, tf_ktensor *out, tf_cpd_report *rep);
/* Tensor Toolbox `arrange`: unit-norm columns (norms into lambda), components
 * sorted by lambda, largest first; fails on a non-finite entry
 * (tf_cp_arrange of algo/cp_ends.h with the 2-norm). */
tf_status tf_als_arrange(tf_ktensor *k);
#endif
