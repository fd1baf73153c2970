/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU COO plan: the baseline. One pass over an unsorted copy of the COO
 * list, non-zeros split evenly over the threads. Two threads may hit the
 * same output row, so each thread either accumulates into its own copy of
 * the output (when the output is short compared with nnz) which are summed
 * afterwards, or adds its rows with atomics. */
#include <stdio.h>
#include <string.h>

#include "seams/plan.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/rowops.h"

/* Private output copies are used while (threads-1) * rows <= nnz and they
 * take at most this many bytes. */
#define COO_PRIVATE_MAX_BYTES (512ULL << 20)

typedef struct coo_plan {
    tf_tensor X;
    int threads;
} coo_plan;

static void coo_plan_destroy(void *impl)
{
    coo_plan *cp = impl;
    if (!cp) return;
    tf_tensor_free(&cp->X);
    tf_free(cp);
}

/* row = val_k * (Hadamard product of the factor rows of k, mode skipped) */
static void nnz_row(const tf_tensor *X, uint64_t k, uint32_t mode, const tf_matrix *F, uint64_t R,
                    double *row)
{
    int first = 1;
    for (uint32_t m = 0; m < X->order; ++m) {
        if (m == mode) continue;
        const double *f = F[m].data + (uint64_t)X->ind[m][k] * R;
        if (first) tf_row_scale(row, X->vals[k], f, R);
        else tf_row_mul(row, f, R);
        first = 0;
    }
}

static tf_status coo_plan_mttkrp(void *impl, uint32_t mode, const tf_matrix *F, tf_matrix *out)
{
    const coo_plan *cp = impl;
    const tf_tensor *X = &cp->X;
    const uint64_t R = out->cols, I = out->rows, nnz = X->nnz;
    const int T = tf_mttkrp_team(cp->threads, nnz, R, X->order); /* fewer on few non-zeros */
    tf_team_note(T); /* the dense steps after it keep this team */
    const uint64_t priv_elems = (uint64_t)(T - 1) * I * R;
    const int privatise = T > 1 && (uint64_t)(T - 1) * I <= nnz &&
                          priv_elems <= COO_PRIVATE_MAX_BYTES / sizeof(double);
    double *rows = NULL, *priv = NULL;
    TF_TRY(TF_ALLOC(rows, (uint64_t)T * R, "MTTKRP thread rows"));
    if (privatise) {
        tf_status s = TF_ALLOC(priv, priv_elems, "MTTKRP private outputs");
        if (s != TF_OK) { tf_free(rows); return s; }
    }
    double *const o = out->data;
#pragma omp parallel num_threads(T)
    {
        const int t = tf_thread_id(), nt = tf_thread_count();
        /* with privatisation, thread t > 0 writes to its own copy */
        double *dst = privatise && t > 0 ? priv + (uint64_t)(t - 1) * I * R : o;
        if (dst != o) memset(dst, 0, I * R * sizeof(double));
        const uint64_t ilo = I * (uint64_t)t / (uint64_t)nt, ihi = I * (uint64_t)(t + 1) / (uint64_t)nt;
        memset(o + ilo * R, 0, (ihi - ilo) * R * sizeof(double));
#pragma omp barrier
        double *row = rows + (uint64_t)t * R;
        const uint64_t lo = nnz * (uint64_t)t / (uint64_t)nt, hi = nnz * (uint64_t)(t + 1) / (uint64_t)nt;
        for (uint64_t k = lo; k < hi; ++k) {
            nnz_row(X, k, mode, F, R, row);
            double *y = dst + (uint64_t)X->ind[mode][k] * R;
            if (privatise || nt == 1) {
                tf_row_add(y, row, R);
            } else {
                for (uint64_t r = 0; r < R; ++r) {
#pragma omp atomic
                    y[r] += row[r];
                }
            }
        }
        if (privatise) {
#pragma omp barrier
            for (uint64_t i = ilo; i < ihi; ++i)
                for (int u = 1; u < nt; ++u)
                    tf_row_add(o + i * R, priv + ((uint64_t)(u - 1) * I + i) * R, R);
        }
    }
    tf_free(priv);
    tf_free(rows);
    return TF_OK;
}

static const tf_plan_ops coo_ops = {.mttkrp = coo_plan_mttkrp, .destroy = coo_plan_destroy};

tf_status tf_cpu_coo_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p)
{
    coo_plan *cp = NULL;
    TF_TRY(TF_CALLOC(cp, 1, "COO plan"));
    cp->threads = p->threads;
    tf_status s = tf_tensor_copy(X, &cp->X);
    if (s != TF_OK) { tf_free(cp); return s; }
    p->ops = &coo_ops;
    p->impl = cp;
    p->bytes = sizeof *cp + tf_tensor_bytes(&cp->X);
    snprintf(p->desc, sizeof p->desc, "cpu coo, %d thread%s", p->threads, p->threads == 1 ? "" : "s");
    return TF_OK;
}
