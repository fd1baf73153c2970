/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/cpd.h — CP-ALS (tf_cpd) and its nvecs start (tf_nvecs). */
#ifndef TENFOLD_CPD_H
#define TENFOLD_CPD_H

#include "checkpoint.h"
#include "context.h"
#include "ktensor.h"
#include "mttkrp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_cpd_iter {
    uint32_t iter;     /* 1-based                         */
    double fit;
    double dfit;       /* fit - previous fit               */
    double seconds;    /* wall time of this iteration     */
    /* This iteration's share of the step times of tf_cpd_report (seconds,
     * measured the same way): MTTKRP summed over the modes, the dense
     * steps, the fit. */
    double t_mttkrp;
    double t_dense;
    double t_fit;
    uint32_t inner_iters; /* AO-ADMM: this iteration's ADMM iterations, HALS:
                             its sweeps, summed over the modes (0 for ALS) */
} tf_cpd_iter;

typedef void (*tf_cpd_callback)(const tf_cpd_iter *it, void *user);

/* The per-mode update of CP (tf_cpd_opts.update). Every method is the same
 * loop -- per mode the MTTKRP M, then the update of that mode's factor from
 * M and the Hadamard product V of the other modes' Grams, then the column
 * normalisation -- and differs only in the update. Kinds are appended,
 * never renumbered. */
typedef enum tf_cpd_update_kind {
    TF_CPD_UPDATE_ALS = 0,    /* least squares: A <- M pinv(V) (the default; CP-ALS) */
    TF_CPD_UPDATE_AO_ADMM = 1, /* constrained / regularised least squares by AO-ADMM
                                 (Huang, Sidiropoulos & Liavas 2016; SPLATT's
                                 AO-ADMM): per mode a few ADMM iterations with one
                                 Cholesky factor of V + rho I (rho = trace(V) / R)
                                 and the proximal operators of tf_cpd_constraint;
                                 the dual variable is kept from one outer iteration
                                 to the next (a mode's first update starts from the
                                 least-squares solution). A mode with neither nonneg
                                 nor l1 is solved in closed form, A <- M (V + l2
                                 I)^-1; with nonneg alone, a least-squares solution
                                 with no negative entry is the update as it is.
                                 Every backend: the CPU (also on MPI ranks) and the
                                 GPU (one, several, GPU ranks; fp64 and fp32), whose
                                 inner iterations and fits are the CPU's from the
                                 same start                                         */
    TF_CPD_UPDATE_HALS = 2,   /* non-negative CP by HALS (hierarchical ALS: Cichocki &
                                 Phan 2009; tensorly's non_negative_parafac_hals): per
                                 mode with nonneg, a few sweeps over the columns, each
                                 solved exactly with the others fixed,
                                 A(:,r) <- max(0, (M(:,r) - A V(:,r) + V(r,r) A(:,r)
                                 - l1) / (V(r,r) + l2)), from the factor as it is (warm
                                 start), until a sweep changes A by less than
                                 hals_tol times the first sweep (squared norms) or
                                 after hals_max_inner sweeps (tensorly's 5 and 1e-8).
                                 A mode without nonneg is solved in closed form, A <-
                                 M (V + l2 I)^-1 (l1 there is refused: AO-ADMM has
                                 it). CPU backend (also on MPI ranks); the GPU
                                 backends refuse it with TF_ERR_UNAVAILABLE (on a GPU,
                                 TF_CPD_UPDATE_AUTO picks AO-ADMM instead)          */
    TF_CPD_UPDATE_AUTO = 3    /* the library picks: with non-negativity alone (no l1,
                                 no l2 on any mode) HALS or AO-ADMM by the measured
                                 rule of tf_cpd_update_choose, with l1 or l2
                                 AO-ADMM, with no constraint ALS;
                                 tf_cpd_report.update_kind says which ran          */
} tf_cpd_update_kind;

/* What AO-ADMM (or HALS) imposes on one mode's factor A (any combination): the
 * update minimises 1/2 ||X - model||^2 + l1 ||A||_1 + l2/2 ||A||_F^2 over
 * A (>= 0 with nonneg), the other factors and lambda fixed. Columns are
 * normalised as in CP-ALS (divided by positive norms, so the constraints
 * hold); the penalties apply to the factor as updated, which carries the
 * weights at that moment. All zero: unconstrained. */
typedef struct tf_cpd_constraint {
    int nonneg; /* 1: every entry >= 0 (projection)                       */
    double l1;  /* >= 0: sparsity (soft threshold at l1 / rho)             */
    double l2;  /* >= 0: ridge (l2 added to the diagonal of V)             */
} tf_cpd_constraint;

/* The update and its parameters. Set it up with tf_cpd_update_default,
 * which sets `size`: later versions append fields and read only the `size`
 * bytes a caller's header knew, the rest taking their defaults, so a
 * program built against this header keeps working with later libraries. */
typedef struct tf_cpd_update {
    uint32_t size;            /* sizeof(tf_cpd_update) (tf_cpd_update_default)    */
    tf_cpd_update_kind kind;  /* default TF_CPD_UPDATE_ALS                        */
    uint32_t max_inner;       /* AO-ADMM: ADMM iterations per mode update at most
                                 (default 25)                                     */
    double inner_tol;         /* AO-ADMM: stop when the primal and dual residuals
                                 relative to the factor and the dual are both
                                 at most it (default 1e-2; 0: run max_inner)      */
    tf_cpd_constraint mode[TF_MAX_ORDER]; /* per mode (0-based); modes past the
                                 tensor's order must be all zero                  */
    /* appended (0.x, issue 44): HALS's limits */
    uint32_t hals_max_inner;  /* HALS: sweeps per mode update at most (default 5,
                                 tensorly's; 1..100000)                           */
    double hals_tol;          /* HALS: stop when a sweep's squared change is below
                                 hals_tol times the first sweep's (default 1e-8,
                                 tensorly's; 0: run hals_max_inner)                */
} tf_cpd_update;

/* ALS, no constraints, the AO-ADMM and HALS defaults. */
void tf_cpd_update_default(tf_cpd_update *u);
/* "ALS", "AO-ADMM", "HALS", "auto" ("unknown" for another value). */
const char *tf_cpd_update_name(tf_cpd_update_kind k);

/* The kind TF_CPD_UPDATE_AUTO runs for u's constraints on X at `rank`
 * (tf_cpd decides the same way): ALS without a constraint, AO-ADMM when a
 * mode has l1 or l2, else (non-negativity alone) HALS or AO-ADMM by a rule
 * measured on real tensors (docs/DESIGN.md, "HALS") -- AO-ADMM when
 * `backend` is TF_BACKEND_GPU (the run's backend as asked: HALS is not on
 * the GPU yet). why (may be NULL): a line saying why, e.g. "non-negativity
 * alone: HALS". A kind other than AUTO is returned as it is. */
tf_cpd_update_kind tf_cpd_update_choose(const tf_tensor *X, uint64_t rank, const tf_cpd_update *u,
                                        tf_backend backend, char *why, size_t why_len);

/* How CP-ALS starts when tf_cpd_opts.init is NULL. */
typedef enum tf_cpd_start {
    TF_START_RANDOM = 0, /* factors uniform in [0,1) drawn from seed (default)      */
    TF_START_NVECS = 1   /* factors 2..N: the R leading left singular vectors of the
                            mode-n unfoldings (tf_nvecs; the Tensor Toolbox's and
                            pyttb's init 'nvecs', tensorly's 'svd'). Factor 1 is
                            not needed (CP-ALS solves for it first) and starts at
                            zero; columns past a mode's length (R > dims[n]) are
                            filled as the random start would fill them. Not
                            with distributed_input (no rank holds all of X). */
} tf_cpd_start;

typedef struct tf_cpd_opts {
    uint64_t rank;          /* 1..TF_MAX_RANK                             */
    uint32_t max_iters;     /* default 50                                 */
    double tol;             /* stop when |dfit| < tol, default 1e-5       */
    uint64_t seed;          /* default TF_DEFAULT_SEED                    */
    int threads;            /* 0 = default                                */
    tf_backend backend;
    tf_format format;
    tf_precision precision;
    int device;
    tf_cpd_callback callback; /* called after every iteration (may be NULL) */
    void *user;
    tf_context *context;      /* devices, budget, tuning; NULL = a private one */
    tf_progress_fn progress;  /* progress of building the plan / backend
                                 (tf_progress); NULL = none                     */
    void *progress_user;
    const tf_ktensor *init;   /* the start; NULL (default) = the one `start`
                                 names (random: factors uniform in [0,1)
                                 drawn from seed). Else order, dims and
                                 rank as X and rank, factors[m] dims[m] x rank,
                                 finite; lambda (NULL = all 1) is folded into
                                 factors[0]. CP-ALS solves for factor 1 from the
                                 others first, so factors[1..] steer the run; a
                                 previous result continues it.                 */
    int distributed_input;    /* a distributed context (tf_context_opts.distributed): 1
                                 when X holds only this rank's part of the non-zeros
                                 (tf_read_opts.part / parts, tf_tensor_keep_part; dims
                                 are the whole tensor's): the ranks send each other the
                                 non-zeros of every mode's rows, so no rank holds the
                                 whole tensor; 0 (default): every rank holds all of X */
    const volatile int *stop; /* NULL (default) or a flag read after every
                                 iteration (after the callback): non-zero ends
                                 the run there with the factors so far, as a
                                 success with rep->stopped = 1. The callback or
                                 a signal handler may set it (bindings: a
                                 Python callback, Ctrl-C).                     */
    tf_cpd_start start;       /* the start when init is NULL: TF_START_RANDOM
                                 (default) or TF_START_NVECS                   */
    const tf_cpd_update *update; /* the per-mode update; NULL (default) = ALS
                                 (tf_cpd_update_default). A kind a backend lacks
                                 is TF_ERR_UNAVAILABLE naming both (never run as
                                 another kind); under TF_BACKEND_AUTO such a run
                                 goes to the CPU, with a note                  */
    const tf_checkpoint *checkpoint; /* appended (issue 49): checkpoints and resume
                                 (tenfold/checkpoint.h); NULL (default) = none.
                                 Every update kind on the CPU and MPI ranks; ALS
                                 also on GPUs (one, several, GPU ranks); AO-ADMM
                                 on a GPU is TF_ERR_UNAVAILABLE (its dual
                                 variables stay on the device)                 */
} tf_cpd_opts;


typedef struct tf_cpd_report {
    uint32_t iters;
    int converged;
    double fit;
    double t_build;                     /* plan construction               */
    /* Step times in seconds, summed over iterations (GPU: CUDA events on
     * the device, the iteration queued without waits; CPU: wall clock). */
    double t_mttkrp[TF_MAX_ORDER];      /* per mode                        */
    double t_dense;                     /* Gram, Hadamard, solve, normalise */
    double t_fit;                       /* fit computation (CPU CP-ALS on one
                                           process: ||K||^2 alone, the inner
                                           product rides on the last mode's
                                           dense pass and counts as dense) */
    double t_total;                     /* whole tf_cpd call               */
    uint64_t pinv_fallbacks;            /* solves that fell back to pinv   */
    char plan[96];                      /* tf_plan_describe of the plan    */
    char note[256];                     /* why an auto run is not on the GPU it
                                           would have used ("GPU 0 ... : running
                                           on the CPU"), "" otherwise        */
    uint64_t build_peak_bytes;          /* host memory the build held at most
                                           above what was held before it, as
                                           tf_plan_build_peak counts it     */
    int stopped;                        /* 1 if tf_cpd_opts.stop ended the run */
    /* Several GPUs or ranks (else 0): how many took part, the factor-row
     * exchange time (seconds, summed over iterations; part of t_dense) and
     * the load imbalance of the shards: max over modes of the largest
     * part's non-zeros over the mean, minus 1 (0.01 = 1 %). */
    int parts;
    double t_exchange;
    double imbalance;
    uint64_t device_bytes;              /* GPU memory the run held after its build,
                                           all GPUs of this process (0 on the CPU) */
    double t_init;                      /* computing the start (TF_START_NVECS;
                                           part of t_total), else 0          */
    uint64_t inner_iters;               /* AO-ADMM: ADMM iterations, HALS: column
                                           sweeps, summed over the modes and
                                           iterations (0: ALS, or closed-form
                                           modes only)                       */
    /* Several GPUs or ranks: per mode, the schedule its rows were cut by
     * (TF_PARTITION_CONTIGUOUS or TF_PARTITION_LONGEST_FIRST) and that cut's
     * imbalance (`imbalance` is the largest of them). */
    int schedule[TF_MAX_ORDER];
    double mode_imbalance[TF_MAX_ORDER];
    tf_cpd_update_kind update_kind;     /* the update that ran (TF_CPD_UPDATE_AUTO
                                           resolved: ALS, AO-ADMM or HALS)   */
    char update_note[128];              /* why TF_CPD_UPDATE_AUTO chose it (as
                                           tf_cpd_update_choose says), else "" */
    double t_setup;                     /* the start drawn (or copied) and put on
                                           the backend (part of t_total)     */
    double t_finish;                    /* the result fetched from the backend,
                                           back in the caller's labels and
                                           arranged (part of t_total)        */
} tf_cpd_report;

void tf_cpd_opts_default(tf_cpd_opts *o);
/* CP-ALS (or the update o->update names). out is allocated by the call
 * (free with tf_ktensor_free). Any finite values work: when the largest
 * |value| is outside 2^-40..2^40 the iteration runs on a copy of the values
 * scaled by an exact power of two (safe in fp32 too) and lambda is scaled
 * back; fits are scale-invariant (an l1 penalty is scaled with the values,
 * so the problem solved is the one asked). */
tf_status tf_cpd(const tf_tensor *X, const tf_cpd_opts *o, tf_ktensor *out, tf_cpd_report *rep);

/* The leading mode-n vectors of X: the r leading left singular vectors of
 * the unfolding X_(n) (dims[n] x the product of the other lengths), i.e.
 * the eigenvectors of the Gram X_(n) X_(n)^T with the r largest eigenvalues,
 * computed without forming X_(n): its columns are the distinct index tuples
 * of the other modes (the non-zeros sorted by those modes, as SpTTM's
 * fibres), and the Gram is either formed from them (sum over fibres of the
 * outer products of their values) or applied as Y = X_(n) (X_(n)^T V), two
 * sparse passes. Columns in decreasing eigenvalue order, each with unit
 * norm and its largest-magnitude entry positive (the first such entry, as
 * pyttb's sptensor.nvecs flips them). */
typedef enum tf_nvecs_method {
    TF_NVECS_AUTO = 0,     /* DENSE for dims[n] <= 1024; else SUBSPACE on the formed
                              Gram when dims[n] <= 4096 and forming it costs less
                              than ~20 sparse passes, else SUBSPACE on the sparse
                              operator                                            */
    TF_NVECS_DENSE = 1,    /* the Gram formed (dims[n]^2 doubles, at most 16384
                              rows), eigenvectors by LAPACK dsyevr: exact         */
    TF_NVECS_SUBSPACE = 2  /* block subspace iteration on the sparse operator:
                              r + 10 columns from a fixed random start, each step
                              a Chebyshev filter of degree <= 8 (damping the
                              eigenvalues below the block's smallest Ritz value;
                              converged leading vectors locked and deflated),
                              then Rayleigh-Ritz (dsyevd), until every residual
                              ||G u - t u|| <= tol * t_1                           */
} tf_nvecs_method;

typedef struct tf_nvecs_opts {
    int threads;             /* 0 = default                                        */
    tf_nvecs_method method;  /* default TF_NVECS_AUTO                              */
    double tol;              /* subspace iteration: relative residual, default 1e-12 */
    uint32_t max_iters;      /* subspace iteration: at most this many applications of
                                G (default 3000); then the vectors so far,
                                info->residual says how close they are             */
    uint64_t seed;           /* the subspace iteration's random start (default
                                TF_DEFAULT_SEED)                                   */
} tf_nvecs_opts;

typedef struct tf_nvecs_info {
    tf_nvecs_method method;  /* TF_NVECS_DENSE or TF_NVECS_SUBSPACE: what ran      */
    int formed_gram;         /* 1 when the Gram was formed (DENSE, or SUBSPACE on it) */
    uint32_t iters;          /* SUBSPACE: applications of G to the block (0 for DENSE) */
    double residual;         /* largest ||G u - t u|| / t_1 of the r vectors         */
    double seconds;          /* the whole call                                       */
} tf_nvecs_info;

void tf_nvecs_opts_default(tf_nvecs_opts *o);
/* out (allocated by the call: dims[mode] x r, row-major) gets the vectors;
 * values (NULL, or r doubles) the eigenvalues of the Gram (squared singular
 * values), decreasing. 1 <= r <= dims[mode]. opts and info may be NULL. */
tf_status tf_nvecs(const tf_tensor *X, uint32_t mode, uint64_t r, const tf_nvecs_opts *opts, tf_matrix *out,
                   double *values, tf_nvecs_info *info);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_CPD_H */
