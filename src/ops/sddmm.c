/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM front end: options, argument checks, the K = 0 / nnz = 0 cases,
 * backend choice, the COO entry point and the benchmark helper. */
#include <stdio.h>
#include <string.h>

#include "backend/sddmm_backends.h"
#include "core/alloc.h"
#include "core/error.h"
#include "fmt/csr.h"
#include "ops/call_context.h"

void tf_sddmm_opts_default(tf_sddmm_opts *o)
{
    memset(o, 0, sizeof *o);
    o->op = TF_SDDMM_SAMPLE;
    o->alpha = 1.0;
    o->beta = 0.0;
    o->backend = TF_BACKEND_AUTO;
    o->algo = TF_SDDMM_ALGO_AUTO;
    o->precision = TF_DOUBLE;
}

static tf_status check_args(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                            const double *P)
{
    if (!S || !A || !B || !o) return tf_fail(TF_ERR_ARG, "tf_sddmm: S, A, B and the options must not be NULL");
    TF_TRY(tf_csr_validate(S));
    if (S->nnz && !P) return tf_fail(TF_ERR_ARG, "tf_sddmm: output array P is NULL");
    if (A->rows != S->rows)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: A has %llu rows, expected %llu (the rows of S)",
                       (unsigned long long)A->rows, (unsigned long long)S->rows);
    if (B->rows != S->cols)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: B has %llu rows, expected %llu (the columns of S)",
                       (unsigned long long)B->rows, (unsigned long long)S->cols);
    if (A->cols != B->cols)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: A has %llu columns and B %llu, expected the same K",
                       (unsigned long long)A->cols, (unsigned long long)B->cols);
    if (A->cols && ((A->rows && !A->data) || (B->rows && !B->data)))
        return tf_fail(TF_ERR_ARG, "tf_sddmm: A or B has no data");
    if (o->op != TF_SDDMM_SAMPLE && o->op != TF_SDDMM_SCALE)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: unknown op %d", (int)o->op);
    if (o->precision != TF_DOUBLE && o->precision != TF_SINGLE)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: unknown precision %d", (int)o->precision);
    if ((int)o->algo < TF_SDDMM_ALGO_AUTO || o->algo > TF_SDDMM_ALGO_REFERENCE)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: unknown algorithm %d", (int)o->algo);
    if (o->vwarp > 32 || (o->vwarp & (o->vwarp - 1)))
        return tf_fail(TF_ERR_ARG, "tf_sddmm: vwarp %u is not 0 (auto) or a power of two up to 32", o->vwarp);
    if (o->a_regs < -1 || o->a_regs > 1)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: a_regs %d is not -1, 0 (auto) or 1", o->a_regs);
    return TF_OK;
}

/* GPU-only algorithms force the GPU; the reference forces the CPU. */
static tf_backend pick_backend(const tf_sddmm_opts *o)
{
    if (o->algo == TF_SDDMM_ALGO_REFERENCE) return TF_BACKEND_CPU;
    if (o->algo == TF_SDDMM_ALGO_SM_L2 || o->algo == TF_SDDMM_ALGO_SM_SM || o->algo == TF_SDDMM_ALGO_ROW ||
        o->algo == TF_SDDMM_ALGO_CUSPARSE)
        return TF_BACKEND_GPU;
    if (o->backend == TF_BACKEND_AUTO) {
        const int gpu = o->context ? tf_context_resolve(o->context) == TF_BACKEND_GPU : tf_gpu_count() > 0;
        return gpu ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    }
    return o->backend;
}

/* The GPU run borrows the options' context, or a private one for this call. */
static tf_status run_gpu(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                         double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    tf_sddmm_opts go = *o;
    tf_context *own = NULL;
    TF_TRY(tf_context_for_call(o->context, TF_BACKEND_GPU, o->device, o->threads, &go.context, &own));
    tf_status s = tf_cuda_sddmm(S, A, B, &go, P, warmup, reps, times_ms, info);
    tf_context_free(own);
    return s;
}

static void info_cpu(tf_sddmm_info *info, tf_sddmm_algo algo)
{
    if (!info) return;
    memset(info, 0, sizeof *info);
    info->backend = TF_BACKEND_CPU;
    info->algo = algo;
}

/* Runs once (reps = 0: untimed) or warmup + reps timed runs. */
static tf_status run(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o, double *P,
                     int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    if (info) memset(info, 0, sizeof *info);
    TF_TRY(check_args(S, A, B, o, P));
    if (warmup < 0 || reps < 0 || (reps > 0 && !times_ms))
        return tf_fail(TF_ERR_ARG, "tf_sddmm_time: warmup and reps must be >= 0 and times_ms non-NULL");
    const tf_backend be = pick_backend(o);
    if (be != TF_BACKEND_CPU && be != TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: unknown backend %d", (int)o->backend);
    if (be == TF_BACKEND_CPU && o->backend == TF_BACKEND_GPU)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: the reference algorithm runs on the CPU, not the GPU backend");
    if (be == TF_BACKEND_GPU && o->backend == TF_BACKEND_CPU)
        return tf_fail(TF_ERR_ARG, "tf_sddmm: algorithm %d runs on the GPU, not the CPU backend", (int)o->algo);
    /* Nothing to compute: K = 0 leaves P = beta * S (SAMPLE and SCALE alike). */
    if (S->nnz == 0 || A->cols == 0) {
        info_cpu(info, o->algo);
        for (uint64_t k = 0; k < S->nnz; ++k) P[k] = o->beta * S->vals[k];
        for (int r = 0; r < reps; ++r) times_ms[r] = 0.0;
        return TF_OK;
    }
    char note[sizeof info->note] = "";
    if (be == TF_BACKEND_GPU) {
        const tf_status s = run_gpu(S, A, B, o, P, warmup, reps, times_ms, info);
        /* under auto, a problem the GPU cannot hold runs on the CPU, which says why */
        if (s != TF_ERR_NOMEM || o->backend != TF_BACKEND_AUTO || o->algo != TF_SDDMM_ALGO_AUTO) return s;
        tf_cpu_fallback_note(note, sizeof note);
    }
    const int reference = o->algo == TF_SDDMM_ALGO_REFERENCE;
    info_cpu(info, reference ? TF_SDDMM_ALGO_REFERENCE : TF_SDDMM_ALGO_AUTO);
    if (info) snprintf(info->note, sizeof info->note, "%s", note);
    const int total = warmup + (reps > 0 ? reps : 1);
    for (int r = 0; r < total; ++r) {
        const double t0 = tf_wtime();
        TF_TRY(reference ? tf_sddmm_reference(S, A, B, o->op, o->alpha, o->beta, P) : tf_cpu_sddmm(S, A, B, o, P));
        if (r >= warmup && reps > 0) times_ms[r - warmup] = (tf_wtime() - t0) * 1e3;
    }
    return TF_OK;
}

tf_status tf_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o, double *P,
                   tf_sddmm_info *info)
{
    return run(S, A, B, o, P, 0, 0, NULL, info);
}

tf_status tf_sddmm_time(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                        double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    if (S && P && S->nnz && P == S->vals)
        return tf_fail(TF_ERR_ARG, "tf_sddmm_time: P must not alias S->vals (runs are repeated)");
    if (reps < 1) return tf_fail(TF_ERR_ARG, "tf_sddmm_time: reps must be >= 1, got %d", reps);
    return run(S, A, B, o, P, warmup, reps, times_ms, info);
}

tf_status tf_sddmm_coo(const tf_tensor *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                       double *P, tf_sddmm_info *info)
{
    if (!S) return tf_fail(TF_ERR_ARG, "tf_sddmm_coo: S is NULL");
    tf_csr c;
    uint64_t *perm = NULL;
    double *pc = NULL;
    TF_TRY(tf_csr_from_coo_perm(S, &c, &perm));
    tf_status s = TF_ALLOC(pc, c.nnz ? c.nnz : 1, "SDDMM output in CSR order");
    if (s == TF_OK) s = tf_sddmm(&c, A, B, o, pc, info);
    if (s == TF_OK)
        for (uint64_t k = 0; k < c.nnz; ++k) P[perm[k]] = pc[k];
    tf_free(pc);
    tf_free(perm);
    tf_csr_free(&c);
    return s;
}
