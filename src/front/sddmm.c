/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM one-shot entry points: options, argument checks, the K = 0 /
 * nnz = 0 cases, the COO entry point and the benchmark helper -- each a
 * plan built, run and freed (src/front/sddmm_plan.c). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "fmt/csr.h"
#include "front/sddmm_plan.h"

void tf_sddmm_opts_default(tf_sddmm_opts *o)
{
    if (!o) return;
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
    if (!S) return tf_fail(TF_ERR_ARG, "tf_sddmm: S is NULL");
    if (!A) return tf_fail(TF_ERR_ARG, "tf_sddmm: A is NULL");
    if (!B) return tf_fail(TF_ERR_ARG, "tf_sddmm: B is NULL");
    if (!o) return tf_fail(TF_ERR_ARG, "tf_sddmm: o is NULL (the options; tf_sddmm_opts_default)");
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
    return tf_sddmm_check_opts(o, "tf_sddmm");
}

/* One SDDMM: a plan built, run (after warmup + reps timed kernel runs when
 * reps > 0) and freed. K = 0 and nnz = 0 need no plan. */
static tf_status one_shot(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                          double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    if (info) memset(info, 0, sizeof *info);
    TF_TRY(check_args(S, A, B, o, P));
    if (warmup < 0 || reps < 0 || (reps > 0 && !times_ms))
        return tf_fail(TF_ERR_ARG, "tf_sddmm_time: warmup and reps must be >= 0 and times_ms non-NULL");
    if (S->nnz == 0 || A->cols == 0) { /* K = 0 leaves P = beta * S (SAMPLE and SCALE alike) */
        tf_backend be;
        TF_TRY(tf_sddmm_pick_backend(o, &be)); /* the same errors as with work to do */
        if (info) {
            info->backend = TF_BACKEND_CPU;
            info->algo = o->algo;
        }
        for (uint64_t k = 0; k < S->nnz; ++k) P[k] = o->beta * S->vals[k];
        for (int r = 0; r < reps; ++r) times_ms[r] = 0.0;
        return TF_OK;
    }
    tf_sddmm_plan *p = NULL;
    /* one run: a quick GPU build; timed runs (the benchmark helper) tune, as a plan does */
    TF_TRY(tf_sddmm_plan_build_borrowed(S, A->cols, o, reps == 0, &p));
    const tf_dense a = tf_dense_host(A), b = tf_dense_host(B);
    const tf_dense pd = {P, S->nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    tf_status s = reps > 0 ? tf_sddmm_plan_time(p, &a, &b, warmup, reps, times_ms) : TF_OK;
    if (s == TF_OK) s = tf_sddmm_plan_run(p, &a, &b, &pd, NULL);
    if (s == TF_OK && info) s = tf_sddmm_plan_info(p, info);
    tf_sddmm_plan_free(p);
    return s;
}

tf_status tf_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o, double *P,
                   tf_sddmm_info *info)
{
    return one_shot(S, A, B, o, P, 0, 0, NULL, info);
}

tf_status tf_sddmm_time(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                        double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    if (S && P && S->nnz && P == S->vals)
        return tf_fail(TF_ERR_ARG, "tf_sddmm_time: P must not alias S->vals (runs are repeated)");
    if (reps < 1) return tf_fail(TF_ERR_ARG, "tf_sddmm_time: reps must be >= 1, got %d", reps);
    return one_shot(S, A, B, o, P, warmup, reps, times_ms, info);
}

tf_status tf_sddmm_coo(const tf_tensor *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                       double *P, tf_sddmm_info *info)
{
    if (!S) return tf_fail(TF_ERR_ARG, "tf_sddmm_coo: S is NULL");
    if (!P && S->nnz) return tf_fail(TF_ERR_ARG, "tf_sddmm_coo: P is NULL");
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
