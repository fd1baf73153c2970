/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/sddmm.h — sparse matrices (CSR) and SDDMM: one-shot calls and
 * plans built once and run many times, on the CPU, one GPU, several GPUs or
 * MPI ranks. */
#ifndef TENFOLD_SDDMM_H
#define TENFOLD_SDDMM_H

#include "context.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sparse matrix in compressed sparse row form. Column indices within a row
 * are ascending (tf_csr_from_coo sorts them); duplicates are allowed. */
typedef struct tf_csr {
    uint64_t rows;
    uint64_t cols;
    uint64_t nnz;
    uint64_t *rowptr;   /* rows + 1 offsets, rowptr[0] = 0, rowptr[rows] = nnz */
    uint32_t *colind;   /* nnz column indices                                  */
    double *vals;       /* nnz values                                          */
} tf_csr;

tf_status tf_csr_alloc(tf_csr *c, uint64_t rows, uint64_t cols, uint64_t nnz);
void tf_csr_free(tf_csr *c);
/* From an order-2 tensor (non-zeros in any order; mode 0 = rows). */
tf_status tf_csr_from_coo(const tf_tensor *S, tf_csr *out);
/* Back to an order-2 COO tensor in row-major order (explicit zeros kept). */
tf_status tf_csr_to_coo(const tf_csr *S, tf_tensor *out);
/* Checks shape, rowptr monotonicity, column bounds and finite values. */
tf_status tf_csr_validate(const tf_csr *S);

/* SDDMM, cuSPARSE semantics: with A (M x K) and B (N x K) dense row-major
 * and S (M x N) sparse, the output holds one value per non-zero of S:
 *   TF_SDDMM_SAMPLE: P = alpha * (A B^T) o spy(S) + beta * S
 *   TF_SDDMM_SCALE:  P = alpha * (A B^T) o S      + beta * S   (the paper's S o (A B^T))
 * K = 0 gives P = beta * S; nnz = 0 does nothing; neither launches a kernel. */
typedef enum tf_sddmm_op { TF_SDDMM_SAMPLE = 0, TF_SDDMM_SCALE } tf_sddmm_op;

typedef enum tf_sddmm_algo {
    TF_SDDMM_ALGO_AUTO = 0, /* CPU: OpenMP kernel; GPU: the fastest of a few ROW, SM-L2
                               and SM-SM configurations, timed on S before the run  */
    TF_SDDMM_ALGO_SM_L2,    /* GPU: column panels, active rows of A in shared memory  */
    TF_SDDMM_ALGO_SM_SM,    /* GPU: A and B tiles both in shared memory               */
    TF_SDDMM_ALGO_ROW,      /* GPU: non-zero-parallel in CSR order, A and B via L1/L2 */
    TF_SDDMM_ALGO_CUSPARSE, /* GPU: cusparseSDDMM (for comparison)                    */
    TF_SDDMM_ALGO_REFERENCE /* CPU: plain float64 reference                           */
} tf_sddmm_algo;

typedef struct tf_sddmm_opts {
    tf_sddmm_op op;         /* default TF_SDDMM_SAMPLE                          */
    double alpha;           /* default 1                                         */
    double beta;            /* default 0                                         */
    tf_backend backend;     /* default TF_BACKEND_AUTO                           */
    tf_sddmm_algo algo;     /* default TF_SDDMM_ALGO_AUTO                        */
    tf_precision precision; /* default TF_DOUBLE (inputs and output stay double) */
    int threads;            /* CPU threads, 0 = default                          */
    int device;             /* GPU ordinal                                       */
    uint32_t tile_j;        /* GPU column-panel width, 0 = L2-capacity model     */
    uint32_t tile_k;        /* GPU K-slice, 0 = quick auto-tune                  */
    uint32_t vwarp;         /* GPU ROW: lanes per non-zero (1, 2, 4, .., 32), 0 = auto-tune */
    uint32_t nper;          /* GPU ROW: non-zeros per virtual warp, 0 = auto-tune */
    int a_regs;             /* GPU ROW: 1 keeps a lane's slice of A's row in registers
                               (when one pass covers K), -1 reads A through L1, 0 = auto-tune */
    tf_context *context;    /* devices, tuning; NULL = a private default one       */
} tf_sddmm_opts;

/* What a run chose (filled when the info pointer is non-NULL). */
typedef struct tf_sddmm_info {
    tf_backend backend;     /* TF_BACKEND_CPU or TF_BACKEND_GPU                  */
    tf_sddmm_algo algo;     /* the algorithm that ran                            */
    uint32_t tile_i;        /* GPU: rows of A staged per thread block            */
    uint32_t tile_j;        /* GPU: column-panel width                           */
    uint32_t tile_k;        /* GPU: K-slice                                      */
    uint32_t vwarp;         /* GPU: threads per non-zero (virtual warp)          */
    uint32_t nper;          /* GPU ROW: non-zeros per virtual warp (tiles are 0) */
    int a_regs;             /* GPU ROW: 1 if A's row was kept in registers       */
    uint64_t blocks;        /* GPU: thread blocks per launch                     */
    uint32_t panels;        /* row panels of S the plan runs (tf_sddmm_plan_panel):
                               one per GPU of a context of several GPUs, else 1;
                               with several, the fields above are those of the
                               first panel with non-zeros                        */
    char note[256];         /* why an auto run is on the CPU (the GPU could not
                               hold it: "...: running on the CPU"), else ""      */
} tf_sddmm_info;

void tf_sddmm_opts_default(tf_sddmm_opts *o);
/* An algorithm's name as the tool spells it: "auto", "sm-l2", "sm-sm", "row",
 * "cusparse", "reference" ("unknown" otherwise). A CPU run's info says auto
 * for its OpenMP kernel. */
const char *tf_sddmm_algo_name(tf_sddmm_algo a);
/* P (S->nnz values, in S's order; may alias S->vals) as above. */
tf_status tf_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                   double *P, tf_sddmm_info *info);
/* The same with S as an order-2 COO tensor (P in S's non-zero order). */
tf_status tf_sddmm_coo(const tf_tensor *S, const tf_matrix *A, const tf_matrix *B,
                       const tf_sddmm_opts *o, double *P, tf_sddmm_info *info);
/* Plain float64 reference SDDMM over a CSR matrix (single-threaded). */
tf_status tf_sddmm_reference(const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                             tf_sddmm_op op, double alpha, double beta, double *P);
/* Benchmark helper: prepares once (GPU: tiles, uploads), then `warmup`
 * untimed and `reps` timed runs; times_ms[0..reps-1] gets each run (CUDA
 * events on the GPU, wall clock on the CPU). P receives the last result of
 * a run from the original S values (P must not alias S->vals here). */
tf_status tf_sddmm_time(const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                        const tf_sddmm_opts *o, double *P, int warmup, int reps, double *times_ms,
                        tf_sddmm_info *info);

/* SDDMM plans: build once for a pattern S and an inner dimension K, run
 * many times with new A and B (ALS, LDA, attention), in the manner of
 * cuSPARSE's cusparseSDDMM_bufferSize / _preprocess / cusparseSDDMM. The
 * build validates S and the options, chooses the backend (as tf_sddmm), and
 * on the GPU tiles S, uploads it and, under TF_SDDMM_ALGO_AUTO, times the
 * candidate kernels on S once; a run then moves only what is on the host
 * (A, B in; P out) and launches the kernel chosen. tf_sddmm is build + run
 * + free. A plan keeps what it needs of S (S may be freed after the build),
 * borrows the options' context (which must outlive it; NULL: the plan owns
 * a private one), and is used by one thread, and one stream, at a time
 * (runs share the plan's device buffers). */
typedef struct tf_sddmm_plan tf_sddmm_plan;

/* One GPU's operands of a run of a plan over several GPUs (see
 * tf_sddmm_run_opts.parts), for panel g (tf_sddmm_plan_panel):
 *   A  the panel's rows of A (row_hi - row_lo rows), or all of A (S's rows:
 *      its rows row_lo .. row_hi - 1 are read), K columns
 *   B  all of B (S's columns x K)
 *   P  the panel's slice of P (nnz_hi - nnz_lo values), or all of P (S's
 *      non-zeros: values nnz_lo .. nnz_hi - 1 are written); ignored by
 *      tf_sddmm_plan_time_panels
 * each in GPU memory of the panel's GPU (read and written there, no copies),
 * managed memory, or host memory (copied as in a run of one GPU). */
typedef struct tf_sddmm_part_operands {
    tf_dense A, B, P;
} tf_sddmm_part_operands;

typedef struct tf_sddmm_run_opts {
    void *stream; /* GPU: a cudaStream_t to queue the run on, after the work already
                     there; when P is in GPU memory the call then returns at once
                     (P is written when the stream reaches that point). NULL
                     (default): the legacy default stream, and the call returns
                     when P is written. Ignored on the CPU. A plan over several
                     GPUs: a stream of the plan's first GPU (panel 0's); every
                     panel starts after the work queued there before the call,
                     the panels on the other GPUs run on their own streams, and
                     the stream waits for all of them; work of the other GPUs
                     that writes operands a panel reads must be complete before
                     the call. NULL: each panel on the legacy default stream of
                     its GPU, after the work queued on the legacy streams of all
                     the plan's GPUs, and the call returns when P is written.    */
    /* Per-GPU operands instead of A, B and P (which must then be NULL): one
     * tf_sddmm_part_operands per panel, nparts = tf_sddmm_info.panels, each
     * GPU array in memory of its panel's GPU (a GPU array elsewhere is
     * TF_ERR_ARG: nothing is copied between GPUs). NULL (default): A, B and P
     * are given whole. On one GPU or the CPU, one part: A, B and P whole. */
    const tf_sddmm_part_operands *parts;
    uint32_t nparts;
} tf_sddmm_run_opts;

/* One row panel of a plan (tf_sddmm_plan_panel). */
typedef struct tf_sddmm_panel {
    int device;              /* its GPU's ordinal; -1 for a plan on the CPU          */
    uint64_t row_lo, row_hi; /* its rows of S, [row_lo, row_hi)                      */
    uint64_t nnz_lo, nnz_hi; /* its non-zeros in S's (CSR) order, [nnz_lo, nnz_hi):
                                the slice of P it writes                            */
    double build_ms;         /* wall time of its part of the build (panel, tiles,
                                upload, tuning; the GPUs build at the same time)    */
    tf_sddmm_info info;      /* what its build chose (zeros: a panel without
                                non-zeros, which launches nothing)                  */
} tf_sddmm_panel;

/* Builds a plan for S (validated as tf_csr_validate) and inner dimension K
 * (>= 1) with the options o (NULL: defaults); *out is NULL on failure. Under
 * TF_BACKEND_AUTO a problem the GPU cannot hold is planned on the CPU, and
 * the plan's info says why (note). On a context of several GPUs
 * (tf_context_opts.ndevices > 1) S is cut into one contiguous row panel per
 * GPU with about nnz / GPUs non-zeros each (by the prefix sums of the rows'
 * counts; a row is never split, so a heavy row makes its panel heavier), and
 * each GPU builds (and, under TF_SDDMM_ALGO_AUTO, tunes) its own part of the
 * plan on its panel, all at the same time on one host thread each; a run
 * runs the panels at the same time, each writing its slice of P. On a
 * context over MPI ranks (tf_context_opts.distributed), every rank passes
 * the same S; S is cut the same way into one panel per rank, each rank
 * plans its own panel (on the CPU or its GPU; tf_sddmm_plan_panel(plan, 0)
 * describes it), and a run computes that panel's slice and all-gathers P,
 * which must then be host memory of doubles: every rank ends with all of P.
 * Every rank must build, run and free the plan together (collectives). */
tf_status tf_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out);
/* The same for a run or a few (what tf_sddmm does): under TF_SDDMM_ALGO_AUTO a
 * GPU plan runs the row scheme in its default configuration, with no tiling
 * and nothing timed -- a build costing about as much as cuSPARSE's set-up,
 * where tuning (tf_sddmm_plan_build) pays only over many runs. */
tf_status tf_sddmm_plan_build_once(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, tf_sddmm_plan **out);
/* P = the SDDMM of the plan's S with A (S->rows x K) and B (S->cols x K),
 * as tf_sddmm; P (S->nnz x 1) is written in S's order. Host arrays are
 * double, or float on a TF_SINGLE plan; GPU arrays are of the plan's
 * precision and are read and written in place (no copies) when A and B
 * have ld = K, K is a multiple of 16 bytes of values (2 doubles, 4 floats)
 * and the data 16-byte aligned -- else they are copied on the device into
 * a padded buffer first. A CPU plan takes host arrays only. ro may be NULL
 * (defaults). A wrong shape, precision or memory is TF_ERR_ARG naming the
 * array; a plan after tf_sddmm_plan_free is TF_ERR_ARG (always caught in
 * debug builds, which keep freed plans' headers). On several GPUs each GPU
 * takes its panel's rows of A and all of B and writes its slice of P: host
 * arrays are copied to (and P from) every GPU by one host thread each; GPU
 * arrays on one of the plan's GPUs are read in place by that GPU's panel and
 * copied peer-to-peer (cudaMemcpyPeerAsync) to the others, whose slices of P
 * go back the same way; ro->parts gives each GPU its own operands (no
 * copies between GPUs at all). */
tf_status tf_sddmm_plan_run(tf_sddmm_plan *plan, const tf_dense *A, const tf_dense *B, const tf_dense *P,
                            const tf_sddmm_run_opts *ro);
/* Benchmark helper: places A and B as a run does, then `warmup` untimed and
 * `reps` timed runs of the kernel alone (CUDA events on the GPU, wall clock
 * on the CPU), times_ms[0..reps-1] getting each; P is not written. */
tf_status tf_sddmm_plan_time(tf_sddmm_plan *plan, const tf_dense *A, const tf_dense *B, int warmup, int reps,
                             double *times_ms);
/* The same per panel: A and B as tf_sddmm_plan_run takes them (or NULL with
 * ro->parts; ro may be NULL; its stream is not used), placed once; then each
 * run launches every panel's kernel at once, CUDA events on each GPU around
 * its kernel, and on the first GPU around all of them (the other GPUs start
 * after an event of the first and the first waits for theirs). times_ms[r]
 * gets run r's whole time (first start to last end), part_ms (NULL: not
 * wanted; else reps x panels values) part_ms[r * panels + g] panel g's kernel
 * in run r (0 for a panel without non-zeros). */
tf_status tf_sddmm_plan_time_panels(tf_sddmm_plan *plan, const tf_dense *A, const tf_dense *B,
                                    const tf_sddmm_run_opts *ro, int warmup, int reps, double *times_ms,
                                    double *part_ms);
/* What the build chose (backend, algorithm, tiles, note; panels). */
tf_status tf_sddmm_plan_info(const tf_sddmm_plan *plan, tf_sddmm_info *info);
/* Panel g (0 .. panels - 1) of the plan: its GPU, rows, non-zeros, build time
 * and choice. A plan on one GPU or on the CPU has one panel, all of S. */
tf_status tf_sddmm_plan_panel(const tf_sddmm_plan *plan, uint32_t g, tf_sddmm_panel *panel);
/* Frees the plan and its device memory; NULL is ignored. */
void tf_sddmm_plan_free(tf_sddmm_plan *plan);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_SDDMM_H */
