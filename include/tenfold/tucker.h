/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/tucker.h — TTMc (the sparse tensor times every factor but one,
 * tf_ttmc) and sparse Tucker by HOOI (tf_tucker), with its result, the
 * Tucker tensor tf_ttensor, and its files. */
#ifndef TENFOLD_TUCKER_H
#define TENFOLD_TUCKER_H

#include "checkpoint.h"
#include "context.h"
#include "ktensor.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ TTMc */

/* Where a TTMc ran (the optional output of tf_ttmc). */
typedef tf_run_info tf_ttmc_info;

typedef struct tf_ttmc_opts {
    tf_backend backend;   /* default TF_BACKEND_AUTO: the CPU (one TTMc does not pay
                             for the GPU's set-up); TF_BACKEND_GPU: GPU 0 of the
                             context (a segmented pass over the non-zeros sorted by
                             the mode, fp64; the same bits every run)                   */
    int threads;          /* CPU threads, 0 = default                                  */
    tf_context *context;  /* devices, tuning; NULL = a private default one             */
    tf_ttmc_info *info;   /* optional output (NULL: none)                               */
} tf_ttmc_opts;

void tf_ttmc_opts_default(tf_ttmc_opts *o);

/* TTMc of X for `mode` n: the unfolding
 *   Y_(n) = X_(n) (U_N kron ... kron U_1, U_n left out),
 * dims[n] rows and C = prod_{k != n} R_k columns (R_k = U[k].cols), i.e. the
 * mode-n unfolding of X x_1 U_1^T ... x_N U_N^T without mode n. Column order
 * (the Tensor Toolbox's / pyttb's tenmat(ttm(X, U, -n, 't'), n)): entry
 *   Y(i, c),  c = sum_{k != n} r_k s_k,  s_k = prod_{j < k, j != n} R_j,
 * holds sum over the non-zeros x at (.., i at mode n, ..) of x prod_{k != n}
 * U_k(i_k, r_k) -- the lowest mode's column index runs fastest. U has
 * X->order matrices, U[k] dims[k] x R_k (R_k >= 1) for k != n; U[n] is not
 * read. out (dims[n] x C, row-major) is allocated by the call. The dense
 * tensor is never formed: the non-zeros are walked as a compressed-fibre
 * tree rooted at mode n whose inner nodes keep the Kronecker products of
 * the modes below them (Smith & Karypis, Euro-Par 2017), on OpenMP threads
 * that own rows of Y; the result does not depend on the thread count. */
tf_status tf_ttmc(const tf_tensor *X, uint32_t mode, const tf_matrix *U, const tf_ttmc_opts *o, tf_matrix *out);

/* ------------------------------------------------------------ the result */

/* A Tucker tensor: core x_1 U_1 x_2 U_2 ... x_N U_N. */
typedef struct tf_ttensor {
    uint32_t order;
    uint64_t dims[TF_MAX_ORDER];     /* I_n: the rows of factor n                   */
    uint64_t ranks[TF_MAX_ORDER];    /* R_n: the core's lengths, factor n's columns  */
    double *core;                    /* prod R_n values, mode 1 fastest: G(r_1, ..,
                                        r_N) at r_1 + R_1 (r_2 + R_2 (r_3 + ...)),
                                        the Tensor Toolbox's (column-major) order   */
    tf_matrix factors[TF_MAX_ORDER]; /* dims[n] x ranks[n], row-major; tf_tucker's
                                        have orthonormal columns                    */
} tf_ttensor;

/* Allocates the core and the factors (contents undefined). */
tf_status tf_ttensor_alloc(tf_ttensor *t, uint32_t order, const uint64_t *dims, const uint64_t *ranks);
void tf_ttensor_free(tf_ttensor *t);

/* The files of a Tucker tensor, one factor set (see tf_ktensor_write for the
 * switch: STEM.set, the manifest, is the commit; STEM.lock; readers through
 * the manifest see the whole old or the whole new set):
 *   STEM.mode<N>.mat   factor N (dims[N] rows x ranks[N] columns, as
 *                      tf_matrix_write writes: one row per line)
 *   STEM.core.tensor   the core in the Tensor Toolbox / pyttb export_data
 *                      "tensor" format: the line "tensor", the order, the
 *                      ranks on one line, then the prod R_n values one per
 *                      line, mode 1 fastest (pyttb.import_data reads it)
 * Files of a previous set of the stem that this one lacks (a CP set's
 * STEM.lambda.mat and STEM.ktensor, modes beyond the order) are removed by
 * the switch. */
tf_status tf_ttensor_write(const char *stem, const tf_ttensor *t);
/* In steps, with other files switched together (a report): open checks the
 * places and takes the lock (before a long computation), put writes the
 * factor and core files to their temporaries, then tf_ktensor_out_add /
 * _commit / _abort as for a Kruskal tensor's set. */
tf_status tf_ttensor_out_open(const char *stem, tf_ktensor_out **o);
tf_status tf_ttensor_out_put(tf_ktensor_out *o, const tf_ttensor *t);
/* The factor files STEM.mode1.mat .. STEM.mode<n>.mat of a set (through its
 * manifest when there is one, as tf_ktensor_read), each with its own column
 * count: factors[0..*order) allocated by the call (free each with
 * tf_matrix_free), *order = n. */
tf_status tf_factor_files_read(const char *stem, tf_matrix *factors, uint32_t *order);

/* ------------------------------------------------------------ HOOI */

/* How tf_tucker starts. */
typedef enum tf_tucker_init {
    TF_TUCKER_INIT_RANDOM = 0, /* factors uniform in [0,1) from seed (default; pyttb's 'random') */
    TF_TUCKER_INIT_HOSVD = 1,  /* factor n: the R_n leading left singular vectors of X_(n)
                                  (tf_nvecs: pyttb's init 'nvecs', i.e. the truncated HOSVD) */
    TF_TUCKER_INIT_GIVEN = 2   /* init_factors                                                 */
} tf_tucker_init;

/* How a mode's leading left singular vectors of Y_(n) (I_n x C) were found
 * (tf_tucker_report.svd_method). */
typedef enum tf_tucker_svd {
    TF_TUCKER_SVD_AUTO = 0,      /* by the sizes (tf_tucker_opts.svd)                          */
    TF_TUCKER_SVD_ROW_GRAM = 1,  /* the Gram Y Y^T (I_n x I_n) and dsyevr (pyttb's way): when
                                    I_n <= C and I_n <= 4096                                    */
    TF_TUCKER_SVD_COL_GRAM = 2,  /* the Gram Y^T Y (C x C) and dsyevr, then Y V orthonormalised
                                    (Householder QR): when C < I_n and C <= 4096                 */
    TF_TUCKER_SVD_SUBSPACE = 3   /* randomised range finder + subspace iteration on Y (R_n + 10
                                    columns, Householder QR, Rayleigh-Ritz by dsyevr) until the
                                    residuals are <= 1e-12 of the largest value: otherwise     */
} tf_tucker_svd;

typedef struct tf_tucker_iter {
    uint32_t iter;    /* 1-based                                      */
    double fit;
    double dfit;      /* fit - previous fit (the first: fit - 0)      */
    double seconds;   /* wall time of this iteration                  */
    double t_ttmc;    /* this iteration's TTMc, summed over the modes  */
    double t_svd;     /* its leading singular vectors                  */
    double t_core;    /* its core and fit                              */
} tf_tucker_iter;

typedef void (*tf_tucker_callback)(const tf_tucker_iter *it, void *user);

/* The options. Versioned by `size` (tf_tucker_opts_default sets the
 * caller's sizeof): the library reads the first `size` bytes a caller's
 * header knew, the fields past them taking their defaults, so later
 * versions append fields without breaking programs built before them. */
typedef struct tf_tucker_opts {
    size_t size;                  /* sizeof(tf_tucker_opts) of the caller               */
    uint64_t ranks[TF_MAX_ORDER]; /* R_n per mode (0-based n < order): 1..dims[n], and at most
                                     the product of the other modes' R_k (required)      */
    uint32_t max_iters;           /* default 50 (the Tensor Toolbox's; pyttb's is 1000)  */
    double tol;                   /* stop when |fit - previous fit| < tol (default 1e-4) */
    tf_tucker_init init;          /* default TF_TUCKER_INIT_RANDOM                        */
    const tf_matrix *init_factors;/* TF_TUCKER_INIT_GIVEN: `order` matrices, [n] dims[n] x
                                     ranks[n], finite; the first mode of dimorder is not
                                     read (HOOI computes it first) and may be {0}        */
    uint64_t seed;                /* the random start (default TF_DEFAULT_SEED)           */
    const uint32_t *dimorder;     /* the order the modes are updated in (a permutation of
                                     0..order-1); NULL (default) = 0, 1, .., order-1     */
    int threads;                  /* CPU threads, 0 = default                            */
    tf_backend backend;           /* default TF_BACKEND_AUTO: the context's GPU(s) (without
                                     a context: one, where the machine has one), else the
                                     CPU; under auto a run the GPU cannot hold (its device
                                     budget) or lacks (the subspace method) runs on the CPU
                                     with a note. A context of several GPUs: each owns rows
                                     of Y_(n). A context of MPI ranks: their CPUs, each
                                     rank the TTMc of its part of the non-zeros (a whole
                                     I_n x C Y_(n) on every rank), summed on rank 0, which
                                     computes the factors and core for every rank; GPUs
                                     of MPI ranks: TF_ERR_UNAVAILABLE                   */
    int device;                   /* GPU ordinal (without a context)                     */
    tf_context *context;          /* NULL = a private default one                        */
    tf_tucker_callback callback;  /* after every iteration (may be NULL)                 */
    void *user;
    const volatile int *stop;     /* NULL, or a flag read after every iteration (after the
                                     callback): non-zero ends the run there, a success
                                     with rep->stopped = 1                                */
    uint64_t memory_limit;        /* host bytes the run's dense arrays may take (Y_(n), the
                                     Grams, the core, the factors): 0 (default) = half the
                                     machine's physical memory. Checked before any work,
                                     on either device: over it is TF_ERR_NOMEM naming the
                                     sizes. A GPU run checks its device budget as well   */
    tf_tucker_svd svd;            /* default TF_TUCKER_SVD_AUTO; another value forces it  */
    const tf_checkpoint *checkpoint; /* appended (issue 49): checkpoints and resume
                                     (tenfold/checkpoint.h); NULL (default) = none; not
                                     on MPI ranks yet (TF_ERR_UNAVAILABLE)              */
    int distributed_input;        /* appended (issue 47): a context of MPI ranks: 1 when X
                                     holds only this rank's part of the non-zeros (X's
                                     dims the whole tensor's; as tf_cpd_opts's), 0
                                     (default) when every rank holds all of X. HOSVD
                                     start of parts: the non-zeros gathered on rank 0
                                     for it (rank 0 holds the whole tensor meanwhile).
                                     Every rank calls with the same options, seed and
                                     init_factors                                       */
} tf_tucker_opts;

/* The defaults in the first `size` bytes of o, o->size = size (callers use
 * tf_tucker_opts_default). Nothing for NULL or a size below sizeof(size_t). */
void tf_tucker_opts_init(tf_tucker_opts *o, size_t size);
static inline void tf_tucker_opts_default(tf_tucker_opts *o) { tf_tucker_opts_init(o, sizeof *o); }

typedef struct tf_tucker_report {
    uint32_t iters;
    int converged;                 /* |dfit| < tol                                     */
    int stopped;                   /* tf_tucker_opts.stop ended the run                */
    double fit;                    /* 1 - sqrt(| ||X||^2 - ||G||^2 |) / ||X|| (pyttb's)  */
    double norm_x;                 /* ||X||                                            */
    tf_backend backend;            /* where it ran                                     */
    char note[256];                /* why an auto run is not on the GPU, else ""       */
    /* seconds */
    double t_init;                 /* the start (HOSVD: its tf_nvecs calls)            */
    double t_build;                /* the backend: the compressed-fibre trees          */
    double t_ttmc[TF_MAX_ORDER];   /* per mode, summed over the iterations             */
    double t_svd;                  /* leading singular vectors                         */
    double t_core;                 /* core and fit                                     */
    double t_total;                /* the whole call                                   */
    tf_tucker_svd svd_method[TF_MAX_ORDER]; /* what the last iteration ran per mode */
    uint64_t y_bytes;              /* the largest Y_(n): max_n I_n prod_{k!=n} R_k doubles */
    uint64_t work_bytes;           /* every dense array the run held at most (what the
                                      memory limit was checked against)              */
    tf_tucker_iter *iterations;    /* every iteration (iters of them), allocated by the
                                      call: free with tf_tucker_report_free          */
    char plan[96];                 /* what ran: "cpu csf (3 trees)", "GPU 0, fp64, ..." */
} tf_tucker_report;

void tf_tucker_report_free(tf_tucker_report *r);

/* Sparse Tucker by higher-order orthogonal iteration (HOOI; the Tensor
 * Toolbox's and pyttb's tucker_als): per mode n in dimorder, Y_(n) = TTMc
 * (tf_ttmc) with the current factors and U_n = the R_n leading left singular
 * vectors of Y_(n) (each column's largest-magnitude entry positive, so runs
 * are deterministic); after the last mode the core G = U_n^T Y_(n) and
 * fit = 1 - sqrt(| ||X||^2 - ||G||^2 |) / ||X|| (pyttb's formula); stop when
 * |fit - previous fit| < tol (previous of the first: 0) or after max_iters.
 * The dense tensor is never formed; the largest dense array is a Y_(n). out
 * (allocated by the call; tf_ttensor_free) gets the factors (orthonormal
 * columns) and the core; rep (may be NULL; tf_tucker_report_free) the fits
 * and times. */
tf_status tf_tucker(const tf_tensor *X, const tf_tucker_opts *o, tf_ttensor *out, tf_tucker_report *rep);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_TUCKER_H */
