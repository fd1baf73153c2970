/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM internals shared by the front end (src/front/sddmm*.c), the CPU
 * backend (src/cpu/sddmm_cpu.c) and the CUDA backend (src/gpu/sddmm;
 * CPU-only builds link src/gpu/none, which reports no GPU). Each backend
 * has a plan of its own behind an opaque pointer: build (S, K and the
 * options checked by the front end, K >= 1 and nnz >= 1), run (operand
 * shapes and precisions checked by the front end), time, free. */
#ifndef TF_SEAMS_SDDMM_BACKENDS_H
#define TF_SEAMS_SDDMM_BACKENDS_H
#include "seams/cuda_table.h"
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Internal algorithm value of a one-shot call (tf_sddmm, tf_sddmm_coo) where
 * the caller asked for auto: the GPU runs the row scheme in its first
 * configuration, with no tiling and nothing timed -- a build that costs about
 * as much as cuSPARSE's set-up, where tuning pays only over many runs (a plan).
 * Never public: tf_sddmm_check_opts rejects it from users. */
#define TF_SDDMM_ALGO_QUICK ((tf_sddmm_algo)(TF_SDDMM_ALGO_REFERENCE + 32))

/* P[k] from the dot product d of row i of A and row j of B (S[k] at (i, j)). */
static inline double tf_sddmm_combine(tf_sddmm_op op, double alpha, double beta, double d, double s)
{
    const double sampled = op == TF_SDDMM_SCALE ? d * s : d;
    return beta == 0.0 ? alpha * sampled : alpha * sampled + beta * s;
}

/* ---- CPU: an OpenMP kernel (nnz-balanced over CSR rows, vectorised dot
 * products; float arithmetic on TF_SINGLE plans) or the reference. */
typedef struct tf_sddmm_cpu tf_sddmm_cpu;
/* borrow: keep a pointer to S (the caller keeps it alive and unchanged for
 * the plan's life: the one-shot tf_sddmm) instead of a copy. */
tf_status tf_cpu_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, int borrow,
                                  tf_sddmm_cpu **out);
/* A, B and P in host memory (the front end has resolved and checked that). */
tf_status tf_cpu_sddmm_plan_run(tf_sddmm_cpu *c, const tf_dense *A, const tf_dense *B, const tf_dense *P);
void tf_cpu_sddmm_plan_free(tf_sddmm_cpu *c);

/* ---- CUDA. The backend's plan holds one part per row panel of S, each on
 * its GPU (src/gpu/sddmm/plan.cu): panels[0..npanels) come with their rows
 * and non-zeros (the front end's cut: one panel, all of S, on the context's
 * GPU; or one per GPU of a context of several, panel g on its g-th GPU);
 * the build fills in each one's device, build time and choice (info), each
 * GPU building and tuning its own panel (o->context is set). Runs take one
 * tf_sddmm_part_operands per panel, already cut to the panel by the front
 * end (A its rows, B whole, P its slice; shapes and precisions checked
 * there): each array is placed by its memory (TF_MEMORY_AUTO resolved from
 * the pointer, HOST / DEVICE checked against it) and precision; a GPU array
 * on another of the plan's GPUs is copied peer-to-peer, unless given_parts
 * (the caller's per-GPU operands: then it is an error). */
typedef struct tf_sddmm_gpu tf_sddmm_gpu;
/* What a pointer is, as CUDA sees it (tf_cuda_memory_of). */
enum { TF_CUDA_PTR_HOST = 0, TF_CUDA_PTR_DEVICE = 1, TF_CUDA_PTR_MANAGED = 2 };
/* The entry points (the rows' format: seams/cuda_table.h):
 * - tf_cuda_sddmm_plan_build, _run, _free as above; a plan exists only if
 *   the module made it, so run, time and free never load it;
 * - tf_cuda_sddmm_plan_time: times_ms[r]: run r, all panels; part_ms (NULL:
 *   not wanted): reps x npanels;
 * - tf_cuda_memory_of: what p points to, as CUDA sees it:
 *   TF_CUDA_PTR_DEVICE (device memory, *device its GPU), TF_CUDA_PTR_MANAGED
 *   (managed memory, readable by host and GPUs) or TF_CUDA_PTR_HOST
 *   (anything else: pageable or pinned host memory; always without the CUDA
 *   backend, which it never loads: without it no tenfold GPU memory exists). */
#define TF_CUDA_SDDMM_API(ROW)                                                                                     \
    ROW(MAY_LOAD, tf_status, tf_cuda_sddmm_plan_build,                                                             \
        (const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, uint32_t npanels, tf_sddmm_panel *panels,            \
         tf_sddmm_gpu **out),                                                                                      \
        (S, K, o, npanels, panels, out), *out = NULL;, tf_cuda_unavailable("GPU SDDMM needs"))                     \
    ROW(IF_LOADED, tf_status, tf_cuda_sddmm_plan_run,                                                              \
        (tf_sddmm_gpu * g, const tf_sddmm_part_operands *ops, int given_parts, const tf_sddmm_run_opts *ro),       \
        (g, ops, given_parts, ro), , tf_cuda_unavailable("GPU SDDMM needs"))                                       \
    ROW(IF_LOADED, tf_status, tf_cuda_sddmm_plan_time,                                                             \
        (tf_sddmm_gpu * g, const tf_sddmm_part_operands *ops, int given_parts, int warmup, int reps,               \
         double *times_ms, double *part_ms),                                                                       \
        (g, ops, given_parts, warmup, reps, times_ms, part_ms), , tf_cuda_unavailable("GPU SDDMM needs"))          \
    ROW(IF_LOADED_VOID, void, tf_cuda_sddmm_plan_free, (tf_sddmm_gpu * g), (g), , )                                \
    ROW(IF_LOADED, int, tf_cuda_memory_of, (const void *p, int *device), (p, device),                              \
        if (device) *device = -1;, TF_CUDA_PTR_HOST)
TF_CUDA_SDDMM_API(TF_CUDA_DECLARE_)

#ifdef __cplusplus
}
#endif
#endif
