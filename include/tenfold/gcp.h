/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/gcp.h — Generalized CP (GCP, Hong, Kolda & Duersch 2020): a CP
 * model fitted under a loss other than least squares (Poisson, Bernoulli,
 * Gamma, ...), by Adam on stratified or semi-stratified samples of the
 * entries (GCP-Adam, Kolda & Hong, SIMODS 2020, as GenTen's gcp-sgd), or
 * on every entry of a small tensor (dense-loss mode, to check against pyttb's gcp_opt). */
#ifndef TENFOLD_GCP_H
#define TENFOLD_GCP_H

#include "checkpoint.h"
#include "context.h"
#include "ktensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The loss f(x, m) of an entry x under the model value m (appended, never
 * renumbered). Definitions as pyttb's gcp handles (eps = 1e-10):
 *   GAUSSIAN        (x - m)^2                                  m any
 *   POISSON         m - x log(m + eps)    (identity link)      m >= 0
 *   POISSON_LOG     exp(m) - x m          (log link)           m any
 *   BERNOULLI_ODDS  log(m + 1) - x log(m + eps)                m >= 0
 *   BERNOULLI_LOGIT log(1 + exp(m)) - x m                      m any
 *   GAMMA           x / (m + eps) + log(m + eps)               m >= 0
 *   RAYLEIGH        2 log(m + eps) + (pi/4) (x / (m + eps))^2  m >= 0
 * "m >= 0": the factors are kept >= 0 (projected after every step). */
typedef enum tf_gcp_loss {
    TF_GCP_GAUSSIAN = 0,
    TF_GCP_POISSON = 1,
    TF_GCP_POISSON_LOG = 2,
    TF_GCP_BERNOULLI_ODDS = 3,
    TF_GCP_BERNOULLI_LOGIT = 4,
    TF_GCP_GAMMA = 5,
    TF_GCP_RAYLEIGH = 6
} tf_gcp_loss;
#define TF_GCP_LOSSES 7

/* "gaussian", "poisson", "poisson-log", "bernoulli-odds", "bernoulli-logit",
 * "gamma", "rayleigh" (NULL outside the range). */
const char *tf_gcp_loss_name(tf_gcp_loss loss);
/* The loss of a name (also "normal" = gaussian, "bernoulli" =
 * bernoulli-odds as GenTen's, "logit" = bernoulli-logit, "count" =
 * poisson); -1 if none. */
int tf_gcp_loss_parse(const char *name);
/* The lower bound of the factors under the loss: 0, or -HUGE_VAL. */
double tf_gcp_loss_lower_bound(tf_gcp_loss loss);

/* How the gradient's zeros are drawn (appended, never renumbered):
 *   STRATIFIED       uniform coordinates that are not non-zeros (a hash
 *                    set of the non-zeros; a hit is drawn again), weight
 *                    (prod dims - nnz) / gz -- GenTen's "stratified"
 *   SEMI_STRATIFIED  uniform coordinates of the whole tensor, kept without
 *                    the probe (a hit on a non-zero counts as a 0), weight
 *                    prod dims / gz, and every non-zero sample counts
 *                    f(x, m) - f(0, m) (its derivative likewise), so the
 *                    gradient stays unbiased (Kolda & Hong 2020, sec. 3.3;
 *                    GenTen's "semi-stratified"): no probe per draw.
 * The fixed sample of the loss estimate is stratified either way (drawn
 * once), as GenTen's. */
typedef enum tf_gcp_sampling {
    TF_GCP_STRATIFIED = 0,
    TF_GCP_SEMI_STRATIFIED = 1
} tf_gcp_sampling;

/* "stratified", "semi-stratified" (NULL outside the range). */
const char *tf_gcp_sampling_name(tf_gcp_sampling s);

/* One epoch (sampled mode) or iteration (dense mode), as the callback sees it. */
typedef struct tf_gcp_epoch {
    uint32_t epoch;         /* 1-based                                            */
    double loss_estimate;   /* the fixed sample's weighted loss after it (dense
                               mode: the exact loss over every entry)             */
    double rate;            /* the step size it ran with (dense: the line step)   */
    int failed;             /* 1: the estimate rose, the epoch was undone and the
                               rate decayed                                       */
    double seconds;         /* wall time of the epoch                             */
    double t_sample;        /* drawing the gradient samples                       */
    double t_gradient;      /* model values + loss derivatives + the MTTKRP       */
    double t_step;          /* the Adam steps                                      */
    double t_estimate;      /* the loss estimate                                  */
} tf_gcp_epoch;

typedef void (*tf_gcp_callback)(const tf_gcp_epoch *e, void *user);

/* The options. Set them up with tf_gcp_opts_default, which sets `size`:
 * later versions append fields and read only the `size` bytes a caller's
 * header knew. Names and defaults are GenTen's gcp-sgd (Adam step). */
typedef struct tf_gcp_opts {
    uint32_t size;          /* sizeof(tf_gcp_opts) (tf_gcp_opts_default)            */
    tf_gcp_loss loss;       /* default TF_GCP_GAUSSIAN                               */
    uint64_t rank;          /* 1..TF_MAX_RANK (default 10)                           */
    uint64_t seed;          /* the random start and the samples (TF_DEFAULT_SEED)    */
    /* Samples (0 = GenTen's defaults). Function estimate, drawn once:
     * fnz = min(max(ceil(nnz/100), 100000), nnz) non-zeros and fz =
     * min(fnz, zeros) zeros; gradient, drawn afresh every iteration:
     * gnz = min(max(ceil(3 nnz / max_epochs), 1000), nnz) and gz =
     * min(gnz, zeros). A non-zero sample weighs nnz / (its count), a zero
     * one (prod dims - nnz) / (its count). */
    uint64_t fnz, fz, gnz, gz;
    uint32_t epoch_iters;   /* Adam iterations per epoch (1000)                      */
    uint32_t max_epochs;    /* (100)                                                 */
    double rate;            /* Adam's step size (1e-3)                               */
    double decay;           /* the rate's factor after a failed epoch (0.1)          */
    uint32_t max_fails;     /* stop after more failed epochs than this (1)           */
    double beta1, beta2, adam_eps; /* 0.9, 0.999, 1e-8 (step m / sqrt(v + eps))      */
    double gtol;            /* stop when the estimate falls below it (0: never)      */
    int dense;              /* 1: dense-loss mode: every entry (zeros counted, weight
                               1) by a deterministic projected L-BFGS; the tensor
                               may have at most 2^26 entries. max_epochs is then
                               its iteration limit, default 1000               */
    double ftol;            /* dense: stop when the loss changes by < ftol |f| in
                               an iteration (1e-12)                              */
    double pgtol;           /* dense: stop when the projected gradient's largest
                               entry is <= pgtol (1e-8)                         */
    int threads;            /* CPU threads, 0 = default                              */
    tf_backend backend;     /* AUTO (one GPU where the context's device -- without
                               a context, the machine -- has one, else the CPU),
                               CPU, or GPU (one GPU; not dense: TF_ERR_UNAVAILABLE) */
    int device;
    tf_context *context;    /* NULL = none. A distributed context (MPI ranks, CPU):
                               every rank draws the same samples and evaluates
                               its own (the result is one process's, to rounding);
                               not with dense. One of one GPU: that GPU; of several
                               GPUs or GPU ranks: those GPUs, each holding the whole
                               tensor and evaluating its part of every sample (one
                               GPU's result to rounding; sampled, stratified, no
                               checkpoints: else TF_ERR_UNAVAILABLE)            */
    const tf_ktensor *init; /* the start; NULL (default) = random: uniform [0,1)
                               factors (tf_cpd's stream for the seed) scaled alike
                               so that the model's norm is the tensor's. Else
                               X's order, dims and the rank; lambda folded into
                               the first factor; >= the loss's bound          */
    tf_gcp_callback callback; /* after every epoch (may be NULL)                     */
    void *user;
    const volatile int *stop; /* NULL, or a flag read after every epoch            */
    int distributed_input;  /* a distributed context: 1 when X holds only this
                               rank's part of the non-zeros, [nnz p / P, nnz (p +
                               1) / P) of the canonical tensor (tf_read_opts.part;
                               as tf_cpd_opts's); 0: every rank holds all of X   */
    tf_gcp_sampling sampling; /* the gradient samples' zeros (TF_GCP_STRATIFIED);
                               SEMI_STRATIFIED: gz defaults to gnz (at most
                               prod dims), zeros or not. Sampled mode only  */
    const tf_checkpoint *checkpoint; /* NULL (default) = none. Sampled mode: after
                               an epoch (every every_iters-th epoch, or by time;
                               the last always) the factors, Adam's moments and
                               schedule (rate, bias corrections, the gradient
                               samples' counter), the failed epochs and every
                               epoch's estimate; a resumed run goes on from
                               there to the same estimates and factors as a run
                               never stopped (max_epochs in all; the seed,
                               loss, sampling, sample sizes, epoch_iters and
                               Adam's constants must be the checkpoint's). Not
                               with dense (TF_ERR_ARG)                        */
} tf_gcp_opts;

typedef struct tf_gcp_report {
    uint32_t epochs;        /* epochs (dense: iterations) run                        */
    uint32_t fails;         /* failed epochs                                         */
    uint64_t iters;         /* Adam iterations run (failed epochs' too)              */
    int converged;          /* dense: a tolerance met; sampled: gtol met            */
    int stopped;            /* opts.stop ended the run                               */
    double loss_initial;    /* the estimate at the start                             */
    double loss_estimate;   /* the final estimate (the last good epoch's)            */
    uint64_t fnz, fz, gnz, gz; /* the sample sizes used                              */
    double t_build;         /* the set-up: the hash of the non-zeros, the f sample   */
    double t_sample, t_gradient, t_step, t_estimate; /* summed over the epochs     */
    double t_total;
    char plan[96];
    char note[256];
} tf_gcp_report;

void tf_gcp_opts_default(tf_gcp_opts *o);

/* GCP of X under o->loss (values checked for it: Poisson ones counts,
 * Bernoulli ones 0/1, Gamma and Rayleigh ones > 0, as pyttb's). out
 * (allocated by the call; free with tf_ktensor_free) is the model, every
 * column of unit 2-norm with the norms in lambda, sorted by lambda. */
tf_status tf_gcp(const tf_tensor *X, const tf_gcp_opts *o, tf_ktensor *out, tf_gcp_report *rep);

/* The exact GCP loss of K (lambda NULL: ones) for X over every entry
 * (zeros counted), for tensors of at most 2^26 entries; threads 0 = default. */
tf_status tf_gcp_loss_dense(const tf_tensor *X, const tf_ktensor *K, tf_gcp_loss loss, int threads, double *out);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_GCP_H */
