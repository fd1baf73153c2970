/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion's row solves (cpu/complete_rows.h). Per row, the entries'
 * products h go into a block of TF_ROWS_BLOCK columns (Ht: R rows of the
 * block's length, zero-padded), from which the lower triangle of sum h h^T
 * and sum x h are added as dot products of contiguous vectors (SPLATT's
 * buffered dsyrk, by hand: no BLAS call per block); then the Cholesky
 * solve. */
#include "cpu/complete_rows.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

/* Entries per block of h's. */
#define TF_ROWS_BLOCK 32u

uint64_t tf_cholesky_solve(double *G, double *b, uint64_t R)
{
    for (uint64_t j = 0; j < R; ++j) {
        double *gj = G + j * R;
        double d = gj[j];
        for (uint64_t k = 0; k < j; ++k) d -= gj[k] * gj[k];
        if (!(d > 0.0) || !isfinite(d)) return j + 1;
        const double ljj = sqrt(d), inv = 1.0 / ljj;
        gj[j] = ljj;
        for (uint64_t i = j + 1; i < R; ++i) {
            double *gi = G + i * R;
            double s = gi[j];
            for (uint64_t k = 0; k < j; ++k) s -= gi[k] * gj[k];
            gi[j] = s * inv;
        }
    }
    for (uint64_t i = 0; i < R; ++i) { /* L y = b */
        const double *gi = G + i * R;
        double s = b[i];
        for (uint64_t k = 0; k < i; ++k) s -= gi[k] * b[k];
        b[i] = s / gi[i];
    }
    for (uint64_t i = R; i-- > 0;) { /* L^T a = y */
        double s = b[i];
        for (uint64_t k = i + 1; k < R; ++k) s -= G[k * R + i] * b[k];
        b[i] = s / G[i * R + i];
    }
    return 0;
}

/* G's lower triangle += Ht Ht^T and b += Ht xb over a full block. */
static void add_block(double *G, double *b, const double *Ht, const double *xb, uint64_t R)
{
    for (uint64_t r = 0; r < R; ++r) {
        const double *hr = Ht + r * TF_ROWS_BLOCK;
        double *gr = G + r * R;
        for (uint64_t s = 0; s <= r; ++s) {
            const double *hs = Ht + s * TF_ROWS_BLOCK;
            double acc = 0.0;
            for (uint32_t k = 0; k < TF_ROWS_BLOCK; ++k) acc += hr[k] * hs[k];
            gr[s] += acc;
        }
        double acc = 0.0;
        for (uint32_t k = 0; k < TF_ROWS_BLOCK; ++k) acc += hr[k] * xb[k];
        b[r] += acc;
    }
}

/* One row: its system built from entries [k0, k1) and solved into a.
 * Returns 0 or 1 + the failing pivot's column. */
static uint64_t solve_row(const tf_complete_rows_in *in, uint64_t k0, uint64_t k1, double *G, double *Ht, double *xb,
                          double *a)
{
    const uint64_t R = in->R;
    const uint32_t N = in->X->order, n0 = in->mode;
    for (uint64_t r = 0; r < R; ++r) {
        memset(G + r * R, 0, (r + 1) * sizeof *G);
        a[r] = 0.0;
    }
    uint32_t fill = 0;
    for (uint64_t k = k0; k < k1; ++k) {
        const double *first = NULL;
        uint32_t n = 0;
        for (; n < N && !first; ++n)
            if (n != n0) first = in->A[n] + (uint64_t)in->X->ind[n][k] * R;
        double *col = Ht + fill;
        for (uint64_t r = 0; r < R; ++r) col[r * TF_ROWS_BLOCK] = first[r];
        for (; n < N; ++n) {
            if (n == n0) continue;
            const double *an = in->A[n] + (uint64_t)in->X->ind[n][k] * R;
            for (uint64_t r = 0; r < R; ++r) col[r * TF_ROWS_BLOCK] *= an[r];
        }
        xb[fill] = in->X->vals[k];
        if (++fill == TF_ROWS_BLOCK) {
            add_block(G, a, Ht, xb, R);
            fill = 0;
        }
    }
    if (fill) { /* the last block, zero-padded */
        for (uint64_t r = 0; r < R; ++r)
            memset(Ht + r * TF_ROWS_BLOCK + fill, 0, (TF_ROWS_BLOCK - fill) * sizeof *Ht);
        memset(xb + fill, 0, (TF_ROWS_BLOCK - fill) * sizeof *xb);
        add_block(G, a, Ht, xb, R);
    }
    for (uint64_t r = 0; r < R; ++r) G[r * R + r] += in->l2;
    return tf_cholesky_solve(G, a, R);
}

tf_status tf_cpu_complete_rows(const tf_complete_rows_in *in, double *out)
{
    const uint64_t R = in->R, rows = in->rows;
    int nt = in->threads;
    if ((uint64_t)nt > rows) nt = rows ? (int)rows : 1;
    const uint64_t per = R * R + R * TF_ROWS_BLOCK + TF_ROWS_BLOCK + 8; /* G, Ht, xb, padding */
    double *work = NULL;
    TF_TRY(TF_ALLOC(work, (uint64_t)nt * per, "completion row systems"));
    uint64_t bad = UINT64_MAX, bad_col = 0;
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *G = work + (uint64_t)tf_thread_id() * per;
        double *Ht = G + R * R, *xb = Ht + R * TF_ROWS_BLOCK;
        uint64_t my_bad = UINT64_MAX, my_col = 0;
#pragma omp for schedule(dynamic, 16)
        for (int64_t i = 0; i < (int64_t)rows; ++i) {
            const uint64_t c = solve_row(in, in->ptr[i], in->ptr[i + 1], G, Ht, xb, out + (uint64_t)i * R);
            if (c && (uint64_t)i < my_bad) {
                my_bad = (uint64_t)i;
                my_col = c;
            }
        }
#pragma omp critical(tf_complete_rows_bad)
        if (my_bad < bad) {
            bad = my_bad;
            bad_col = my_col;
        }
    }
    tf_free(work);
    if (bad == UINT64_MAX) return TF_OK;
    const uint64_t count = in->ptr[bad + 1] - in->ptr[bad];
    return tf_fail(TF_ERR_NUMERIC, "complete: row %llu of mode %u has a singular system (%llu observed entr%s for "
                                   "rank %llu, pivot %llu): give an L2 penalty > 0 (--l2)",
                   (unsigned long long)bad + 1, in->mode + 1, (unsigned long long)count, count == 1 ? "y" : "ies",
                   (unsigned long long)R, (unsigned long long)bad_col);
}
