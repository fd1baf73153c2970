/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR by multiplicative updates on a backend (seams/cp_apr.h): the
 * algorithm itself, apart from choosing and creating the backend (the front
 * end, front/cp_apr.c, does that). */
#ifndef TF_ALGO_CP_APR_H
#define TF_ALGO_CP_APR_H
#include "seams/cp_apr.h"
#include "tenfold.h"

/* Allocates out, starts from o->init (checked by the caller; lambda kept)
 * or from factors uniform in [0,1) drawn from o->seed, runs pyttb's
 * tt_cp_apr_mu on the backend (o resolved: every field set), filling rep's
 * counts, log-likelihood and step times and calling o->callback per outer
 * iteration, and copies the backend's result into out, arranged (unit
 * 1-norm columns, components by lambda, largest first; freed on failure).
 * ck (NULL: none): the checkpoints to write; with ck->done > 0 the run goes
 * on from the checkpoint's model `resume` (as the backend held it) and
 * ck->aux (every mode's Phi, with kappa). */
struct tf_ckpt;
tf_status tf_apr_run(const tf_cp_apr_backend *be, const tf_tensor *X, const tf_cp_apr_opts *o, struct tf_ckpt *ck,
                     const tf_ktensor *resume, tf_ktensor *out, tf_cp_apr_report *rep);
#endif
