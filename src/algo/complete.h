/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion by ALS on a backend (seams/complete.h): the algorithm itself,
 * apart from checking the inputs and creating the backend (the front end,
 * front/complete.c, does that). */
#ifndef TF_ALGO_COMPLETE_H
#define TF_ALGO_COMPLETE_H
#include "seams/complete.h"
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
#endif
