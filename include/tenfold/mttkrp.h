/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/mttkrp.h — MTTKRP plans: built once for a tensor, a backend and a
 * format, run for any mode and factors. */
#ifndef TENFOLD_MTTKRP_H
#define TENFOLD_MTTKRP_H

#include "context.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tf_format {
    TF_FORMAT_AUTO = 0,
    TF_FORMAT_COO,   /* plain coordinate list                               */
    TF_FORMAT_CSF,   /* per-mode compressed sparse fibres (CPU)             */
    TF_FORMAT_FCOO,  /* flagged COO (GPU)                                   */
    TF_FORMAT_BLCO,  /* blocked linearised coordinates (GPU)                */
    TF_FORMAT_CSF_SHORT /* csf with every parent's fibres in order of length
                         * (CPU; csf and auto do it where fibres are short) */
} tf_format;

typedef struct tf_plan_opts {
    tf_backend backend;
    tf_format format;
    tf_precision precision;
    int threads;        /* CPU threads, 0 = default                    */
    int device;         /* GPU ordinal                                  */
    uint64_t rank_hint; /* expected rank (lets a backend size buffers)  */
    tf_context *context; /* devices, budget, tuning; NULL = a private default one */
    tf_progress_fn progress; /* the build's progress (tf_progress); NULL = none */
    void *progress_user;
} tf_plan_opts;

typedef struct tf_plan tf_plan;

void tf_plan_opts_default(tf_plan_opts *o);
/* Builds the data structure for MTTKRP on every mode of X. X must be
 * canonical or at least valid; the plan keeps its own copy of what it needs. */
tf_status tf_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan **out);
/* out (dims[mode] x R) = MTTKRP of X with factors[0..order-1] (dims[m] x R),
 * factors[mode] is not read. out is fully overwritten. On the GPU with
 * F-COO the first call for a mode (and for each new R) also times the
 * format's partition sizes and kernel variants and keeps the fastest, so
 * it takes longer. */
tf_status tf_plan_mttkrp(tf_plan *p, uint32_t mode, const tf_matrix *factors, tf_matrix *out);

typedef struct tf_mttkrp_run_opts {
    void *stream; /* GPU: a cudaStream_t to queue the run on, after the work already
                     there; when out is in GPU memory the call then returns at
                     once (out is written when the stream reaches that point).
                     NULL (default): the legacy default stream, and the call
                     returns when out is written. Ignored on the CPU.        */
} tf_mttkrp_run_opts;

/* tf_plan_mttkrp with dense operands in host or GPU memory: out (dims[mode]
 * x R, R = out->cols >= 1) = MTTKRP of the plan's tensor with factors[m]
 * (dims[m] x R) for m != mode (factors[mode] is not read; factors holds
 * order entries). Host arrays hold doubles or floats (any ld; what is not
 * doubles with ld = cols is converted on the host). A GPU plan (one GPU)
 * reads GPU arrays of its precision on its device in place (no host copy)
 * when ld = R and the data are 16-byte aligned, else copies them on the
 * device first, and writes a GPU out in place likewise; host and GPU arrays
 * may be mixed. A CPU plan, or one over several GPUs, takes host arrays
 * only. ro may be NULL (defaults). A wrong shape, precision or memory is
 * TF_ERR_ARG naming the array ("factor 2", "out"). tf_plan_mttkrp is this
 * with host doubles. */
tf_status tf_plan_mttkrp_dense(tf_plan *p, uint32_t mode, const tf_dense *factors, const tf_dense *out,
                               const tf_mttkrp_run_opts *ro);
/* Benchmark helper: `warmup` untimed then `reps` timed MTTKRPs of `mode`;
 * times_ms[0..reps-1] receives each run's milliseconds. GPU plans keep the
 * factors on the device and time with CUDA events; CPU plans use the wall
 * clock. out receives the result of the last run. */
tf_status tf_plan_time_mttkrp(tf_plan *p, uint32_t mode, const tf_matrix *factors, tf_matrix *out,
                              int warmup, int reps, double *times_ms);
void tf_plan_free(tf_plan *p);
/* Human-readable description ("cpu csf, 2 threads") and memory in bytes. */
const char *tf_plan_describe(const tf_plan *p);
/* Why a TF_BACKEND_AUTO plan runs on the CPU although a GPU is present
 * (the problem does not fit the GPU's memory budget), or a slower fallback
 * a GPU plan took (host memory could not be pinned for streaming); ""
 * otherwise. */
const char *tf_plan_note(const tf_plan *p);
uint64_t tf_plan_bytes(const tf_plan *p);
/* Bytes copied from host to device memory by one MTTKRP of `mode`: 0 for
 * a plan whose tensor is resident on its device, else what streams of it
 * (the F-COO copies that do not fit the GPU's budget; tf_tuning.stream). */
uint64_t tf_plan_streamed_bytes(const tf_plan *p, uint32_t mode);
/* The most host memory the build held at once above what was held before
 * it: the plan's own arrays and the builders' scratch, counted over
 * tenfold's allocations (not pinned or device memory; allocations made by
 * other threads during the build count too). */
uint64_t tf_plan_build_peak(const tf_plan *p);
tf_backend tf_plan_backend(const tf_plan *p);
tf_format tf_plan_format(const tf_plan *p);

/* Plain float64 reference MTTKRP (single-threaded, no reordering); the
 * yardstick the tests compare every kernel with. */
tf_status tf_mttkrp_reference(const tf_tensor *X, uint32_t mode, const tf_matrix *factors,
                              tf_matrix *out);

/* Names <-> formats for the CLI ("auto", "coo", "csf", "fcoo", "blco");
 * tf_format_parse returns -1 if unknown. */
int tf_format_parse(const char *s);
const char *tf_format_name(tf_format f);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_MTTKRP_H */
