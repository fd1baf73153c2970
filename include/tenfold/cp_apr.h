/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/cp_apr.h — CP-APR: non-negative CP of count data under a Poisson
 * model (Chi & Kolda 2012), by multiplicative updates, as pyttb's
 * cp_apr(algorithm='mu'), or by row-wise projected damped Newton steps, as
 * its cp_apr(algorithm='pdnr'). */
#ifndef TENFOLD_CP_APR_H
#define TENFOLD_CP_APR_H

#include "checkpoint.h"
#include "context.h"
#include "ktensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The method (appended, never renumbered). */
typedef enum tf_cp_apr_algorithm {
    TF_CP_APR_MU = 0,  /* multiplicative updates (pyttb's 'mu', the default)   */
    TF_CP_APR_PDNR = 1 /* row-wise projected damped Newton (pyttb's 'pdnr',
                          Hansen, Plantenga & Kolda 2015): the CPU only yet
                          (one process or MPI ranks)                          */
} tf_cp_apr_algorithm;

/* One outer iteration, as the callback sees it. */
typedef struct tf_cp_apr_iter {
    uint32_t iter;          /* 1-based                                          */
    double loglik;          /* the Poisson log-likelihood of the model after it:
                               sum over the non-zeros of x log m, minus the sum
                               of the whole model (pyttb's tt_loglikelihood: no
                               log x! term)                                     */
    double kkt;             /* the KKT violation: over the modes, the largest
                               max |min(B, 1 - Phi)| of the mode's last inner
                               iteration (PDNR: of a row's first Newton step)   */
    uint32_t inner_iters;   /* inner iterations, summed over the modes (PDNR:
                               Newton steps, summed over the rows)              */
    uint64_t scooched;      /* factor entries moved off zero by kappa            */
    double seconds;         /* wall time of the iteration                        */
    double t_phi;           /* its Phi passes over the non-zeros                 */
    double t_dense;         /* its row steps (scooch, update, normalisation;
                               PDNR: the row subproblems, t_phi then 0)          */
    double t_loglik;        /* its log-likelihood                                */
} tf_cp_apr_iter;

typedef void (*tf_cp_apr_callback)(const tf_cp_apr_iter *it, void *user);

/* The options. Set them up with tf_cp_apr_opts_default, which sets `size`:
 * later versions append fields and read only the `size` bytes a caller's
 * header knew, the rest taking their defaults. Parameter names and
 * defaults are pyttb's (cp_apr). */
typedef struct tf_cp_apr_opts {
    uint32_t size;              /* sizeof(tf_cp_apr_opts) (tf_cp_apr_opts_default) */
    tf_cp_apr_algorithm algorithm; /* TF_CP_APR_MU (default) or TF_CP_APR_PDNR      */
    uint64_t rank;              /* 1..TF_MAX_RANK (default 10)                      */
    uint32_t max_iters;         /* outer iterations at most (pyttb maxiters, 1000)  */
    uint32_t max_inner;         /* inner iterations per mode at most
                                   (maxinneriters, 10; PDNR: Newton steps per row) */
    double stoptol;             /* stop when every mode's first inner iteration has
                                   KKT violation < stoptol (1e-4); an inner loop
                                   stops at the first below it                      */
    double kappa;               /* (MU only) the offset of entries that violate complementary
                                   slackness (1e-2): from the second outer iteration
                                   on, A_n(i,r) += kappa where A_n(i,r) < kappatol
                                   and the mode's last Phi(i,r) > 0 (0: never)      */
    double kappatol;            /* (1e-10)                                          */
    double epsdivzero;          /* the model's floor in x / m (1e-10)               */
    double epsactive;           /* the active-set tolerance of PDNR (epsActive,
                                   1e-8; not used by MU)                           */
    uint64_t seed;              /* the random start: factors uniform in [0,1) (default
                                   TF_DEFAULT_SEED; the same stream as tf_cpd's)    */
    int threads;                /* CPU threads, 0 = default                         */
    tf_backend backend;         /* default TF_BACKEND_AUTO: one GPU where the context's
                                   device (without a context, the machine) has one, in
                                   double precision -- the CPU when the GPU cannot hold
                                   the problem, rep->note saying why -- else the CPU;
                                   TF_BACKEND_GPU: one GPU (not several, nor GPU ranks) */
    int device;                 /* GPU ordinal (without a context)                  */
    tf_context *context;        /* NULL = a private one. A distributed context
                                   (MPI ranks) runs on the ranks: each computes the
                                   Phi rows it owns                                 */
    const tf_ktensor *init;     /* the start; NULL (default) = the random one. Else
                                   order, dims and rank as X and rank, every entry
                                   finite and >= 0, lambda (NULL = all 1) >= 0     */
    tf_cp_apr_callback callback; /* after every outer iteration (may be NULL)       */
    void *user;
    const volatile int *stop;   /* NULL, or a flag read after every outer iteration
                                   (after the callback): non-zero ends the run there,
                                   as a success with rep->stopped = 1              */
    int distributed_input;      /* a distributed context: 1 when X holds only this
                                   rank's part of the non-zeros (as tf_cpd_opts's)  */
    uint64_t cache_bytes;       /* the most memory the CPU backend may keep the
                                   Khatri-Rao rows of the mode being updated in
                                   (pyttb's Pi: non-zeros x rank doubles; built by
                                   a mode's first pass, read by its others: where
                                   the other factors' rows miss the caches, a pass
                                   from it is several times faster). Default
                                   TF_CP_APR_CACHE_AUTO: a quarter of the physical
                                   memory; 0: none. The results do not depend on it */
    const tf_checkpoint *checkpoint; /* appended (issue 49): checkpoints and resume
                                   (tenfold/checkpoint.h); NULL (default) = none;
                                   MU only                                          */
    /* appended (issue 45): PDNR's parameters (pyttb's names) */
    double mu0;                 /* the damping every row starts from (mu0, 1e-5)    */
    int inexact;                /* 1 (default): inexact Newton steps -- two steps
                                   per row in the first outer iteration, then a row
                                   tolerance of max(stoptol, last KKT / 100); the
                                   run stops when no row moved at the tolerance
                                   stoptol. 0: stoptol throughout                  */
} tf_cp_apr_opts;

/* tf_cp_apr_opts.cache_bytes: a quarter of the machine's physical memory. */
#define TF_CP_APR_CACHE_AUTO UINT64_MAX

typedef struct tf_cp_apr_report {
    uint32_t iters;             /* outer iterations run                             */
    int converged;              /* 1: every mode's first inner iteration met stoptol */
    int stopped;                /* 1: opts.stop ended the run                        */
    double loglik;              /* the final model's log-likelihood                  */
    double kkt;                 /* the last iteration's KKT violation                */
    uint64_t inner_iters;       /* inner iterations in all                           */
    uint64_t scooched;          /* entries moved off zero by kappa in all            */
    double t_build;             /* the backend's set-up (the non-zeros by mode)      */
    uint64_t build_peak_bytes;  /* host memory the set-up held at most above what was
                                   held before it (tenfold's allocations)           */
    double t_phi, t_dense, t_loglik; /* summed over the iterations                   */
    double t_total;             /* the whole call                                    */
    int parts;                  /* MPI ranks that took part (0: one process)          */
    uint64_t cache_bytes;       /* the Khatri-Rao cache held at most (0: none)        */
    uint64_t passes;            /* Phi passes over the non-zeros ...                  */
    uint64_t cached_passes;     /* ... and those that read the cache                  */
    char plan[96];              /* what ran ("CPU, 3 modes' non-zeros by row, ...")  */
    char note[256];             /* why it runs where it does (auto), else ""         */
} tf_cp_apr_report;

void tf_cp_apr_opts_default(tf_cp_apr_opts *o);

/* CP-APR of X, whose values must be counts: integers >= 0 (else TF_ERR_ARG
 * naming the first other non-zero, its index and value). out (allocated by
 * the call; free with tf_ktensor_free) is the model with every factor
 * column of unit 1-norm (pyttb's normtype=1) and the components sorted by
 * lambda, largest first. The iteration is pyttb's tt_cp_apr_mu: per outer
 * iteration, per mode n, the "scooch" (kappa), B = A_n diag(lambda), up to
 * max_inner multiplicative updates B <- B .* Phi with Phi = (X_(n) ./
 * max(B Pi^T, epsdivzero)) Pi (Pi the Khatri-Rao rows of the other factors
 * at the non-zeros), stopping at KKT violation max|min(B, 1 - Phi)| <
 * stoptol, then lambda = column sums of B and B's columns divided by them.
 * TF_CP_APR_PDNR is pyttb's tt_cp_apr_pdnr instead: per outer iteration and
 * mode, every row of B solved as its own Poisson subproblem by at most
 * max_inner projected damped Newton steps with a line search (no kappa),
 * stopping when no row moved (opts.inexact says at which tolerance); a
 * start row of all zeros gets 1e-8 in its first column, and a row of X
 * without non-zeros makes the model's row 0. */
tf_status tf_cp_apr(const tf_tensor *X, const tf_cp_apr_opts *o, tf_ktensor *out, tf_cp_apr_report *rep);

/* The Poisson log-likelihood of K for X (pyttb's tt_loglikelihood):
 * sum over the non-zeros of x log m - the sum of all of K's entries, on the
 * CPU (threads 0 = default; the same bits for any count). K's entries and
 * lambda (NULL = ones) must be >= 0. */
tf_status tf_cp_apr_loglik(const tf_tensor *X, const tf_ktensor *K, int threads, double *out);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_CP_APR_H */
