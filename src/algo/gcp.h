/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP on a backend (seams/gcp.h): GCP-Adam's epochs on samples (gcp.c) and
 * the dense mode's projected L-BFGS (gcp_lbfgs.c), apart from choosing and
 * creating the backend (the front end, front/gcp.c, does that). */
#ifndef TF_ALGO_GCP_H
#define TF_ALGO_GCP_H
#include "seams/gcp.h"
#include "tenfold.h"

/* Allocates out, starts from o->init (checked by the caller; lambda folded
 * into the first factor) or from the scaled random start, runs GCP-Adam
 * (o->dense: the L-BFGS) on the backend (o resolved), filling rep and
 * calling o->callback per epoch, and copies the result into out, arranged
 * (unit 2-norm columns, components by lambda; freed on failure). X gives
 * the order and dims; xnorm is the whole tensor's Frobenius norm (on MPI
 * ranks X is a part), the random start's scale. */
tf_status tf_gcp_run(const tf_gcp_backend *be, const tf_tensor *X, double xnorm, const tf_gcp_opts *o,
                     tf_ktensor *out, tf_gcp_report *rep);

/* The dense mode's minimisation from the backend's current factors
 * (tf_gcp_run calls it after init). */
tf_status tf_gcp_lbfgs(const tf_gcp_backend *be, const tf_gcp_opts *o, uint64_t nparams, tf_ktensor *start,
                       tf_gcp_report *rep);
#endif
