/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP on a backend (seams/gcp.h): GCP-Adam's epochs on samples (gcp.c) and
 * the dense mode's projected L-BFGS (gcp_lbfgs.c), apart from choosing and
 * creating the backend (the front end, front/gcp.c, does that). */
#ifndef TF_ALGO_GCP_H
#define TF_ALGO_GCP_H
#include "algo/checkpoint.h"
#include "seams/gcp.h"
#include "tenfold.h"

/* Allocates out, starts from o->init (checked by the caller; lambda folded
 * into the first factor) or from the scaled random start, runs GCP-Adam
 * (o->dense: the L-BFGS) on the backend (o resolved), filling rep and
 * calling o->callback per epoch, and copies the result into out, arranged
 * (unit 2-norm columns, components by lambda; freed on failure). X gives
 * the order and dims; xnorm is the whole tensor's Frobenius norm (on MPI
 * ranks X is a part), the random start's scale. ck (NULL: none; sampled
 * mode): the checkpoints to write, and with ck->done and resume the state
 * to go on from (resume: the checkpoint's factors; gcp_ckpt.c). */
tf_status tf_gcp_run(const tf_gcp_backend *be, const tf_tensor *X, double xnorm, const tf_gcp_opts *o,
                     tf_ckpt *ck, const tf_ktensor *resume, tf_ktensor *out, tf_gcp_report *rep);

/* The dense mode's minimisation from the backend's current factors
 * (tf_gcp_run calls it after init). */
tf_status tf_gcp_lbfgs(const tf_gcp_backend *be, const tf_gcp_opts *o, uint64_t nparams, tf_ktensor *start,
                       tf_gcp_report *rep);
/* Adam's schedule over a run (GCP-Adam's, and completion by Adam's): the
 * rate, its decay on a failed epoch, the moments' factors, the bound the
 * factors are projected onto, the iterations per epoch; b1t = beta1^t and
 * b2t = beta2^t (1 at the start) and iter (0 at the start: the gradient
 * sample's stream) are its state. */
typedef struct tf_gcp_adam {
    double rate, decay, beta1, beta2, eps, lower;
    uint32_t epoch_iters;
    double b1t, b2t;
    uint64_t iter;
} tf_gcp_adam;

/* One epoch: epoch_iters times a fresh gradient sample and an Adam step of
 * size rate sqrt(1 - b2^t) / (1 - b1^t); its times added into info's
 * t_sample, t_gradient, t_step. */
tf_status tf_gcp_adam_epoch(const tf_gcp_backend *be, tf_gcp_adam *a, tf_gcp_epoch *info);

/* After a failed epoch (the backend restored): the bias corrections wound
 * back by the epoch's iterations, the rate times decay (the samples go on
 * from iter: a retried epoch draws new ones). */
void tf_gcp_adam_undo(tf_gcp_adam *a);

/* Checkpoints of GCP-Adam (gcp_ckpt.c). The options line of the state
 * (what the trajectory depends on) into opt (len bytes). */
void tf_gcp_ckpt_options(const tf_gcp_opts *o, char *opt, size_t len);
/* After epoch `epoch` (last: the run ends with it): records the estimate,
 * and when one is due writes the factors, the moments (aux: a mode's m
 * and v side by side, dims x 2R) and a's and rep's state (collective). */
tf_status tf_gcp_ckpt_epoch(const tf_gcp_backend *be, const tf_tensor *X, const tf_gcp_opts *o, tf_ckpt *ck,
                            const tf_gcp_adam *a, const tf_gcp_report *rep, uint32_t epoch, double f, int last);
/* A resumed run (ck->done epochs, the backend started from the checkpoint's
 * factors): the moments into the backend, the schedule into a, the counts
 * and estimates into rep; *fprev the last estimate. */
tf_status tf_gcp_ckpt_resume(const tf_gcp_backend *be, const tf_tensor *X, const tf_gcp_opts *o, const tf_ckpt *ck,
                             tf_gcp_adam *a, tf_gcp_report *rep, double *fprev);
#endif
