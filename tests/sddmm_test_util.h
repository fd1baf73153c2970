/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by test_sddmm.c and test_gpu_sddmm.c: random sparse matrices with
 * skewed and empty rows, random dense factors, and the element-wise check
 * of an SDDMM result against the float64 reference. */
#ifndef TF_TESTS_SDDMM_TEST_UTIL_H
#define TF_TESTS_SDDMM_TEST_UTIL_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "core/alloc.h"
#include "core/rng.h"
#include "tenfold.h"
#include "dense_test_util.h"
#include "test_random.h"

/* Random M x N matrix as a canonical COO tensor; hot != 0 puts about half
 * the non-zeros in one row (skew). */
static inline tf_tensor st_random_coo(tf_rng *rng, uint64_t M, uint64_t N, uint64_t nnz, int hot)
{
    const uint64_t dims[2] = {M, N};
    tf_tensor S;
    CHECK_OK(tf_tensor_alloc(&S, 2, dims, nnz));
    const uint32_t hot_row = tt_draw_sparse_index(rng, M);
    for (uint64_t k = 0; k < nnz; ++k) {
        S.ind[0][k] = hot && k % 2 == 0 ? hot_row : tt_draw_sparse_index(rng, M);
        S.ind[1][k] = tt_draw_sparse_index(rng, N);
        S.vals[k] = tf_rng_uniform(rng) * 2.0 - 1.0;
        if (S.vals[k] == 0.0) S.vals[k] = 0.25;
    }
    CHECK_OK(tf_tensor_canonicalize(&S, NULL, NULL));
    return S;
}

/* The GPU schemes the tests run, each in fp64 and fp32 (st_gpu_opts). */
static const tf_sddmm_algo st_gpu_algos[] = {TF_SDDMM_ALGO_AUTO, TF_SDDMM_ALGO_ROW, TF_SDDMM_ALGO_SM_L2,
                                             TF_SDDMM_ALGO_SM_SM, TF_SDDMM_ALGO_CUSPARSE};
#define ST_GPU_ALGOS (sizeof st_gpu_algos / sizeof *st_gpu_algos)

/* The default options on the GPU with `algo`, in fp32 when single. */
static inline tf_sddmm_opts st_gpu_opts(tf_sddmm_algo algo, int single)
{
    tf_sddmm_opts o;
    tf_sddmm_opts_default(&o);
    o.backend = TF_BACKEND_GPU;
    o.algo = algo;
    o.precision = single ? TF_SINGLE : TF_DOUBLE;
    return o;
}

/* st_random_coo as CSR. */
static inline tf_csr st_random_csr(tf_rng *rng, uint64_t M, uint64_t N, uint64_t nnz, int hot)
{
    tf_tensor coo = st_random_coo(rng, M, N, nnz, hot);
    tf_csr S;
    CHECK_OK(tf_csr_from_coo(&coo, &S));
    tf_tensor_free(&coo);
    return S;
}

/* A plan for S and K built from a copy of S that is overwritten and freed
 * before the plan is returned (a plan that kept pointers into it would
 * show); NULL when the build failed (a failed check). */
static inline tf_sddmm_plan *st_plan_from_copy(const char *what, const tf_csr *S, uint64_t K, const tf_sddmm_opts *o)
{
    tf_tensor coo;
    tf_csr copy;
    CHECK_OK(tf_csr_to_coo(S, &coo));
    CHECK_OK(tf_csr_from_coo(&coo, &copy));
    tf_tensor_free(&coo);
    tf_sddmm_plan *plan = NULL;
    const tf_status s = tf_sddmm_plan_build(&copy, K, o, &plan);
    CHECKF(s == TF_OK, "%s: build K=%llu algo=%d prec=%d: %s", what, (unsigned long long)K, (int)o->algo,
           (int)o->precision, tf_last_error());
    for (uint64_t k = 0; k < copy.nnz; ++k) copy.vals[k] = NAN, copy.colind[k] = 0;
    tf_csr_free(&copy);
    return plan;
}

static inline void st_poison(double *p, uint64_t n)
{
    for (uint64_t k = 0; k < n; ++k) p[k] = NAN;
}

/* Largest |P - ref| / (|alpha| sum_t |a_t b_t| (|s| for SCALE) + |beta s|)
 * over the non-zeros: the rounding-error scale of each entry. INFINITY if
 * any P is not finite (an unwritten, poisoned entry). */
static inline double st_max_err(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                                const double *P, const double *ref)
{
    const uint64_t K = A->cols;
    double worst = 0.0;
    for (uint64_t i = 0; i < S->rows; ++i)
        for (uint64_t k = S->rowptr[i]; k < S->rowptr[i + 1]; ++k) {
            if (!isfinite(P[k])) return INFINITY;
            const double *a = A->data + i * K, *b = B->data + (uint64_t)S->colind[k] * K;
            double absdot = 0.0;
            for (uint64_t t = 0; t < K; ++t) absdot += fabs(a[t] * b[t]);
            const double s = S->vals[k];
            const double scale = fabs(o->alpha) * absdot * (o->op == TF_SDDMM_SCALE ? fabs(s) : 1.0) +
                                 fabs(o->beta * s) + 1e-300;
            const double e = fabs(P[k] - ref[k]) / scale;
            if (e > worst) worst = e;
        }
    return worst;
}

/* One SDDMM with options o into a poisoned output, checked against the
 * float64 reference to tol (st_max_err); *info gets what ran. */
static inline void st_check_run(const char *what, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                                const tf_sddmm_opts *o, double tol, tf_sddmm_info *info)
{
    double *P = NULL, *ref = NULL;
    CHECK_OK(TF_ALLOC(P, S->nnz + 1, "P"));
    CHECK_OK(TF_ALLOC(ref, S->nnz + 1, "ref"));
    CHECK_OK(tf_sddmm_reference(S, A, B, o->op, o->alpha, o->beta, ref));
    st_poison(P, S->nnz);
    memset(info, 0, sizeof *info);
    const tf_status s = tf_sddmm(S, A, B, o, P, info);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    const double err = st_max_err(S, A, B, o, P, ref);
    CHECKF(err <= tol,
           "%s: K=%llu algo=%d (ran %d, Ti %u Tj %u Tk %u V %u nper %u regs %d) op=%d alpha=%g beta=%g prec=%d "
           "threads=%d: error %.3g > %.1g",
           what, (unsigned long long)A->cols, (int)o->algo, (int)info->algo, info->tile_i, info->tile_j,
           info->tile_k, info->vwarp, info->nper, info->a_regs, (int)o->op, o->alpha, o->beta, (int)o->precision,
           o->threads, err, tol);
    tf_free(P);
    tf_free(ref);
}
#endif
