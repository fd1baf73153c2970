/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/complete.h — tensor completion: a CP model fitted to the observed
 * entries of a tensor only (entries not listed are unknown, not zero), by
 * alternating least squares with an L2 penalty, as SPLATT's `complete -a
 * als` (Smith, Park & Karypis, SC16), or by GCP-Adam on samples of the
 * observed entries, with validation-based stopping and RMSE on held-out
 * entries. */
#ifndef TENFOLD_COMPLETE_H
#define TENFOLD_COMPLETE_H

#include "context.h"
#include "ktensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The method (appended, never renumbered). */
typedef enum tf_complete_method {
    TF_COMPLETE_ALS = 0, /* alternating least squares, one R x R solve per row (default) */
    TF_COMPLETE_ADAM = 1 /* GCP-Adam with the Gaussian loss on the observed entries
                            only: samples of them (no zeros), the same objective
                            as ALS's (l2 included), epochs of epoch_iters steps */
} tf_complete_method;

/* One iteration (ALS: every mode updated once; Adam: an epoch of epoch_iters
 * steps), as the callback sees it. */
typedef struct tf_complete_iter {
    uint32_t iter;       /* 1-based                                                */
    double train_rmse;   /* sqrt(sum over the training entries of (x - m)^2 / count) */
    double val_rmse;     /* the same over the validation entries (NaN: none given)  */
    double objective;    /* sum over the training entries of (x - m)^2 + l2 * sum_n
                            ||A_n||_F^2: what ALS decreases                          */
    double seconds;      /* wall time of the iteration                               */
    double t_solve;      /* its row solves (normal equations, Cholesky; the training
                            error, computed with the last mode's rows)              */
    double t_rmse;       /* its validation error pass                                */
    /* appended for the Adam method (ALS: 0): */
    double rate;         /* Adam: the step size the epoch ran with                   */
    int failed;          /* Adam: 1 when the epoch raised the validation RMSE (without
                            validation entries: the fixed sample's estimate of the
                            objective) and was undone, the rate decayed; the RMSEs
                            are those of the epoch's (discarded) model               */
} tf_complete_iter;

typedef void (*tf_complete_callback)(const tf_complete_iter *it, void *user);

/* The options. Set them up with tf_complete_opts_default, which sets `size`:
 * later versions append fields and read only the `size` bytes a caller's
 * header knew, the rest taking their defaults. Names, meanings and defaults
 * are SPLATT's `complete` ALS's where it has them. */
typedef struct tf_complete_opts {
    uint32_t size;              /* sizeof(tf_complete_opts) (tf_complete_opts_default) */
    tf_complete_method method;  /* TF_COMPLETE_ALS                                     */
    uint64_t rank;              /* 1..TF_COMPLETE_MAX_RANK (default 10)               */
    uint32_t max_iters;         /* iterations at most (SPLATT's 1000)                  */
    double l2;                  /* the penalty lambda >= 0 on every factor: each row a
                                   of mode n solves (sum over its observed entries of
                                   h h^T + l2 I) a = sum x h, h the product of the
                                   other factors' rows (SPLATT's --reg, whose ALS
                                   default is 100). 0 needs every row to have at least
                                   rank observed entries in general position          */
    double tol;                 /* an iteration improves when it lowers the best
                                   validation RMSE (the training RMSE without
                                   validation entries) by more than tol (1e-4)        */
    uint32_t patience;          /* stop after this many iterations in a row without
                                   improvement (SPLATT's 20)                           */
    uint64_t seed;              /* the random start: factors uniform in [-1, 1) (as
                                   SPLATT's), default TF_DEFAULT_SEED                 */
    int threads;                /* CPU threads, 0 = default; the result does not
                                   depend on it                                        */
    tf_backend backend;         /* TF_BACKEND_AUTO (default: one GPU where there is
                                   one, else the CPU), TF_BACKEND_CPU or TF_BACKEND_GPU
                                   (ALS, rank up to 128: every row's system summed
                                   and solved on the device; Adam: the samples drawn
                                   and the gradient summed there; the CPU's numbers to
                                   rounding)                                           */
    int device;                 /* GPU ordinal (without a context)                      */
    tf_context *context;        /* NULL = none; one of one GPU runs it there; a
                                   distributed context (MPI ranks, CPU): every rank
                                   calls with the same entries and options, solves its
                                   rows (cut by training entries) and gets the single
                                   process's model and RMSEs (to rounding); one of
                                   several GPUs or GPU ranks runs on those GPUs (ALS:
                                   one GPU's factors bit for bit; Adam: every GPU
                                   draws every sample and evaluates its part, the
                                   gradients summed -- one GPU's run to rounding)     */
    const tf_ktensor *init;     /* the start; NULL (default) = the random one. Else
                                   order, dims and rank as the training tensor's and
                                   rank, every entry finite; lambda (NULL = ones) is
                                   multiplied into the first factor                   */
    tf_complete_callback callback; /* after every iteration (may be NULL)             */
    void *user;
    const volatile int *stop;   /* NULL, or a flag read after every iteration (after the
                                   callback): non-zero ends the run there, as a success
                                   with rep->stopped = 1                               */
    /* Appended: the Adam method's (GCP-Adam's names and defaults; ALS ignores
     * them). An iteration is an epoch; max_iters, tol and patience apply to
     * epochs as to ALS's iterations, and also the run stops after more than
     * max_fails failed epochs. */
    double rate;                /* Adam's step size (1e-3)                              */
    double decay;               /* the rate's factor after a failed epoch (0.1)        */
    uint32_t epoch_iters;       /* Adam steps per epoch (1000)                          */
    uint32_t max_fails;         /* (1)                                                   */
    uint64_t samples;           /* training entries drawn (uniformly, with replacement,
                                   each weighing n / samples) for every step's
                                   gradient; 0 = GCP's min(max(ceil(3 n / 100), 1000),
                                   n); >= n: every entry, weight 1 (the full gradient) */
    uint64_t fsamples;          /* the fixed sample of the objective's estimate (used
                                   without validation entries); 0 = GCP's
                                   min(max(ceil(n / 100), 100000), n); >= n: all      */
} tf_complete_opts;

/* The largest rank (the per-row solves hold R x R systems per thread). */
#define TF_COMPLETE_MAX_RANK 1024u

typedef struct tf_complete_report {
    uint32_t iters;             /* iterations run                                      */
    uint32_t best_iter;         /* the iteration of the model returned (0: the start)  */
    int converged;              /* 1: stopped for `patience` iterations without improvement */
    int stopped;                /* 1: opts.stop ended the run                          */
    double train_rmse;          /* of the model returned                                */
    double val_rmse;            /* of the model returned (NaN: no validation entries)  */
    double test_rmse;           /* of the model returned (NaN: no test entries)        */
    double objective;           /* of the model returned                                */
    tf_complete_iter *iterations; /* every iteration (iters of them), allocated by the
                                   call: free with tf_complete_report_free             */
    double t_build;             /* the backend's set-up (the entries sorted by mode;
                                   Adam: also the sampler's)                           */
    double t_solve, t_rmse;     /* summed over the iterations                           */
    double t_test;              /* the test RMSE                                        */
    double t_total;             /* the whole call                                       */
    char plan[96];              /* what ran                                             */
    char note[256];             /* why it runs where it does, else ""                  */
} tf_complete_report;

void tf_complete_opts_default(tf_complete_opts *o);
void tf_complete_report_free(tf_complete_report *r);

/* Completes the tensor whose observed entries are `train` (every value is an
 * observation, zeros included; the entries not listed are unknown). val and
 * test (may be NULL) are held-out entries of the same tensor: same order,
 * every index inside train's dims (their own dims are not read). ALS: per
 * iteration every mode n in turn has each of its rows solve its own
 * regularised normal equations from the training entries in its slice
 * (rows without entries become zero when l2 > 0). Adam: per iteration an
 * epoch of epoch_iters Adam steps on the same objective, each step's
 * gradient from `samples` training entries drawn uniformly (weight n /
 * samples) plus 2 l2 A_n; an epoch that raises the validation RMSE (the
 * objective's estimate without validation entries) is undone and the rate
 * times decay. After each iteration the training and validation RMSE. The model returned in out (allocated by the
 * call; free with tf_ktensor_free; lambda all ones) is the best one seen by
 * validation RMSE (by training RMSE without validation entries), as
 * SPLATT's; rep (may be NULL) gets the RMSEs, its test RMSE included. */
tf_status tf_complete(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test, const tf_complete_opts *o,
                      tf_ktensor *out, tf_complete_report *rep);

/* sqrt(sum over X's entries of (x - m)^2 / nnz), m the model K at the
 * entries' coordinates (K's dims at least X's indices; X's own dims are
 * not read), on the CPU (threads 0 = default; the same bits for any count).
 * An X without entries gives NaN. */
tf_status tf_complete_rmse(const tf_tensor *X, const tf_ktensor *K, int threads, double *rmse);

/* The model K at a list of coordinates: out[j] = sum_r lambda_r prod_n
 * A_n(C_jn, r) for every entry j of C (its values are not read; its dims
 * need only hold its indices, each inside K's dims), out nnz doubles. */
tf_status tf_complete_predict(const tf_tensor *C, const tf_ktensor *K, int threads, double *out);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_COMPLETE_H */
