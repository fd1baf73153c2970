/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by ALS on a backend (seams/complete.h): the algorithm itself,
 * apart from checking the inputs and creating the backend (the front end,
 * front/complete.c, does that). */
#ifndef TF_ALGO_COMPLETE_H
#define TF_ALGO_COMPLETE_H
#include "seams/complete.h"
#include "seams/gcp.h"
#include "tenfold.h"

/* Allocates out, starts from o->init (checked by the caller; lambda folded
 * into the first factor) or from factors 2u - 1 with u uniform in [0,1)
 * from o->seed (tf_cpd's stream), runs ALS on the backend (o resolved), the
 * start counting as iteration 0 of the stopping rule, filling rep (its
 * iterations allocated) and calling o->callback per iteration, and copies
 * the best model (by validation RMSE when there are validation entries,
 * else by training RMSE) into out (freed on failure). n_val and n_test are
 * the entry counts of the backend's validation and test sets (0: none). */
tf_status tf_complete_run(const tf_complete_backend *be, const tf_tensor *train, uint64_t n_val, uint64_t n_test,
                          const tf_complete_opts *o, tf_ktensor *out, tf_complete_report *rep);

/* The start on the host (allocated into k): o->init, or 2u - 1 per entry
 * from o->seed. */
tf_status tf_complete_start(const tf_tensor *X, const tf_complete_opts *o, tf_ktensor *k);

/* Completion by Adam (algo/complete_adam.c): GCP-Adam's epochs (algo/gcp.h)
 * on gb, a GCP backend in observed-only mode of the training entries (the
 * Gaussian loss, o->l2's gradient), measured per epoch by cb (the factors
 * copied into it: RMSEs, the kept model, the test RMSE, the result), as
 * tf_complete_run's report and stopping rule; a failed epoch is judged by
 * the validation RMSE (without validation entries: gb's fixed-sample
 * estimate plus l2 sum ||A_n||^2). */
tf_status tf_complete_adam_run(const tf_gcp_backend *gb, const tf_complete_backend *cb, const tf_tensor *train,
                               uint64_t n_val, uint64_t n_test, const tf_complete_opts *o, tf_ktensor *out,
                               tf_complete_report *rep);
#endif
