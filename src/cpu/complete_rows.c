/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion's row solves (cpu/complete_rows.h). Per row, the entries'
 * products h go into a block of TF_ROWS_BLOCK rows (H, entries-major), from
 * which sum h h^T and sum x h are added, every row of G a vector update
 * (SPLATT's buffered dsyrk, by hand: no BLAS call per block, built per
 * x86-64 level); then the Cholesky solve of the lower triangle. */
#include "cpu/complete_rows.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/blas_threads.h"
#include "cpu/dense.h"
#include "cpu/rowops.h"

/* Entries per block of h's. */
#define TF_ROWS_BLOCK 32u

/* The padded row length of the systems: R rounded up to whole 4-double
 * vectors (the pad columns of h are zero, so they add nothing). */
#define TF_ROWS_PAD(R) (((R) + 3) & ~(uint64_t)3)

/* Cholesky of the lower triangle of G (leading dimension ld) in place,
 * then G G^T a = b solved in place of b. 0, or 1 + the failing column: a
 * pivot not above 64 eps times its diagonal entry (or not finite). */
TF_ALWAYS_INLINE uint64_t cholesky(double *restrict G, uint64_t ld, double *restrict b, const uint64_t R)
{
    for (uint64_t j = 0; j < R; ++j) {
        double *gj = G + j * ld;
        const double diag = gj[j];
        double d = diag;
        for (uint64_t k = 0; k < j; ++k) d -= gj[k] * gj[k];
        /* a pivot at rounding level of its diagonal: singular (not a huge solution) */
        if (!(d > 64 * DBL_EPSILON * diag) || !isfinite(d)) return j + 1;
        const double ljj = sqrt(d), inv = 1.0 / ljj;
        gj[j] = ljj;
        for (uint64_t i = j + 1; i < R; ++i) {
            double *gi = G + i * ld;
            double s = gi[j];
            for (uint64_t k = 0; k < j; ++k) s -= gi[k] * gj[k];
            gi[j] = s * inv;
        }
    }
    for (uint64_t i = 0; i < R; ++i) { /* L y = b */
        const double *gi = G + i * ld;
        double s = b[i];
        for (uint64_t k = 0; k < i; ++k) s -= gi[k] * b[k];
        b[i] = s / gi[i];
    }
    for (uint64_t i = R; i-- > 0;) { /* L^T a = y */
        double s = b[i];
        for (uint64_t k = i + 1; k < R; ++k) s -= G[k * ld + i] * b[k];
        b[i] = s / G[i * ld + i];
    }
    return 0;
}

uint64_t tf_cholesky_solve(double *G, double *b, uint64_t R)
{
    return cholesky(G, R, b, R);
}

/* G's rows 0..R-1 (length P) += H^T H and b += H^T x over the block's n
 * entries, H entries-major (n x P, zero past R): whole rows, for P <= 16
 * two at a time sharing the loads of each h (above, one: the accumulators
 * of two would not fit the vector registers). Every element of G and b is summed over the entries in their order,
 * whatever the vector width. */
TF_ALWAYS_INLINE void add_block(double *restrict G, double *restrict b, const double *restrict H,
                                const double *restrict xb, uint32_t n, const uint64_t R, const uint64_t P)
{
    uint64_t r = 0;
    if (P <= 16) /* two rows' accumulators fit the vector registers */
        for (; r + 1 < R; r += 2) {
            double *restrict g0 = G + r * P, *restrict g1 = g0 + P;
            for (uint32_t k = 0; k < n; ++k) {
                const double *restrict hk = H + (uint64_t)k * P;
                const double w0 = hk[r], w1 = hk[r + 1];
                for (uint64_t s = 0; s < P; ++s) {
                    g0[s] += w0 * hk[s];
                    g1[s] += w1 * hk[s];
                }
            }
        }
    for (; r < R; ++r) {
        double *restrict g0 = G + r * P;
        for (uint32_t k = 0; k < n; ++k) {
            const double *restrict hk = H + (uint64_t)k * P;
            const double w0 = hk[r];
            for (uint64_t s = 0; s < P; ++s) g0[s] += w0 * hk[s];
        }
    }
    for (uint32_t k = 0; k < n; ++k) {
        const double *restrict hk = H + (uint64_t)k * P;
        const double x = xb[k];
        for (uint64_t s = 0; s < P; ++s) b[s] += x * hk[s];
    }
}

/* Ranks from which LAPACK's blocked dpotrf / dpotrs solve the rows' systems
 * (below, the hand Cholesky: no call overhead, a rounding-level pivot
 * refused). */
#define TF_ROWS_LAPACK_RANK 24u

/* The system's solve: G's rows are the column-major upper triangle LAPACK
 * factors (A = U^T U, U^T our lower triangle). */
TF_ALWAYS_INLINE uint64_t solve_system(double *restrict G, uint64_t P, double *restrict b, const uint64_t R)
{
    if (R < TF_ROWS_LAPACK_RANK) return cholesky(G, P, b, R);
    const int n = (int)R, ld = (int)P, one = 1;
    int info = 0;
    dpotrf_("U", &n, G, &ld, &info, 1);
    if (info) return info > 0 ? (uint64_t)info : 1;
    dpotrs_("U", &n, &one, G, &ld, b, &n, &info, 1);
    return info ? 1 : 0;
}

/* One row's system from entries [k0, k1), solved into a (R, P constants
 * in the specialisations below, so G's rows stay in registers). Work: G (R
 * x P), H (TF_ROWS_BLOCK x P), xb (TF_ROWS_BLOCK), bb (P). Returns 0 or 1 +
 * the failing pivot's column. */
TF_ALWAYS_INLINE uint64_t row_solve(const tf_complete_rows_in *in, uint64_t k0, uint64_t k1, double *restrict G,
                                    double *restrict H, double *restrict xb, double *restrict bb, double *a,
                                    double *row_sse, const uint64_t R, const uint64_t P)
{
    const uint32_t N = in->X->order, n0 = in->mode;
    const double *A[TF_MAX_ORDER];
    const uint32_t *ind[TF_MAX_ORDER];
    uint32_t M = 0; /* the other modes */
    for (uint32_t n = 0; n < N; ++n)
        if (n != n0) {
            A[M] = in->A[n];
            ind[M++] = in->X->ind[n];
        }
    memset(G, 0, R * P * sizeof *G);
    memset(bb, 0, P * sizeof *bb);
    uint32_t fill = 0;
    for (uint64_t k = k0; k < k1; ++k) {
        double *restrict h = H + (uint64_t)fill * P;
        const double *restrict a0 = A[0] + (uint64_t)ind[0][k] * R;
        if (M == 2) {
            const double *restrict a1 = A[1] + (uint64_t)ind[1][k] * R;
            for (uint64_t r = 0; r < R; ++r) h[r] = a0[r] * a1[r];
        } else {
            for (uint64_t r = 0; r < R; ++r) h[r] = a0[r];
            for (uint32_t m = 1; m < M; ++m) {
                const double *restrict am = A[m] + (uint64_t)ind[m][k] * R;
                for (uint64_t r = 0; r < R; ++r) h[r] *= am[r];
            }
        }
        for (uint64_t r = R; r < P; ++r) h[r] = 0.0;
        xb[fill] = in->X->vals[k];
        if (++fill == TF_ROWS_BLOCK) {
            add_block(G, bb, H, xb, fill, R, P);
            fill = 0;
        }
    }
    if (fill) add_block(G, bb, H, xb, fill, R, P);
    for (uint64_t r = 0; r < R; ++r) G[r * P + r] += in->l2;
    const uint64_t bad = solve_system(G, P, bb, R);
    memcpy(a, bb, R * sizeof *a);
    if (row_sse && !bad) { /* the new row's error on its entries, while they are in cache */
        double sse = 0.0;
        for (uint64_t k = k0; k < k1; ++k) {
            const double *restrict a0 = A[0] + (uint64_t)ind[0][k] * R;
            for (uint64_t r = 0; r < R; ++r) H[r] = bb[r] * a0[r];
            for (uint32_t m = 1; m < M; ++m) {
                const double *restrict am = A[m] + (uint64_t)ind[m][k] * R;
                for (uint64_t r = 0; r < R; ++r) H[r] *= am[r];
            }
            double v = 0.0;
            for (uint64_t r = 0; r < R; ++r) v += H[r];
            const double e = in->X->vals[k] - v;
            sse += e * e;
        }
        *row_sse = sse;
    }
    return bad;
}

/* row_solve per constant rank and ISA level. */
#define TF_ROW_SOLVE(suffix, RANK)                                                                                \
    TF_KERNEL_CLONES static uint64_t row_solve_##suffix(const tf_complete_rows_in *in, uint64_t k0, uint64_t k1,  \
                                                        double *G, double *H, double *xb, double *bb, double *a, \
                                                        double *sse)                                              \
    {                                                                                                             \
        return row_solve(in, k0, k1, G, H, xb, bb, a, sse, (RANK), TF_ROWS_PAD(RANK));                            \
    }
TF_ROW_SOLVE(r4, 4)
TF_ROW_SOLVE(r8, 8)
TF_ROW_SOLVE(r10, 10)
TF_ROW_SOLVE(r16, 16)
TF_ROW_SOLVE(r20, 20)
TF_ROW_SOLVE(r32, 32)
TF_ROW_SOLVE(any, in->R)

static uint64_t solve_row(const tf_complete_rows_in *in, uint64_t k0, uint64_t k1, double *G, double *H, double *xb,
                          double *bb, double *a, double *sse)
{
    switch (in->R) {
    case 4: return row_solve_r4(in, k0, k1, G, H, xb, bb, a, sse);
    case 8: return row_solve_r8(in, k0, k1, G, H, xb, bb, a, sse);
    case 10: return row_solve_r10(in, k0, k1, G, H, xb, bb, a, sse);
    case 16: return row_solve_r16(in, k0, k1, G, H, xb, bb, a, sse);
    case 20: return row_solve_r20(in, k0, k1, G, H, xb, bb, a, sse);
    case 32: return row_solve_r32(in, k0, k1, G, H, xb, bb, a, sse);
    default: return row_solve_any(in, k0, k1, G, H, xb, bb, a, sse);
    }
}

tf_status tf_cpu_complete_rows(const tf_complete_rows_in *in, double *out)
{
    const uint64_t R = in->R, rows = in->rows;
    int nt = in->threads;
    if ((uint64_t)nt > rows) nt = rows ? (int)rows : 1;
    const uint64_t P = TF_ROWS_PAD(R);
    const uint64_t per = R * P + P * TF_ROWS_BLOCK + TF_ROWS_BLOCK + P + 8; /* G, H, xb, bb, padding */
    double *work = NULL;
    TF_TRY(TF_ALLOC(work, (uint64_t)nt * per, "completion row systems"));
    uint64_t bad = UINT64_MAX, bad_col = 0;
    const int blas = R >= TF_ROWS_LAPACK_RANK ? tf_blas_threads_pin_single() : 0; /* LAPACK inside the team */
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *G = work + (uint64_t)tf_thread_id() * per;
        double *H = G + R * P, *xb = H + P * TF_ROWS_BLOCK, *bb = xb + TF_ROWS_BLOCK;
        uint64_t my_bad = UINT64_MAX, my_col = 0;
#pragma omp for schedule(dynamic, 16)
        for (int64_t i = 0; i < (int64_t)rows; ++i) {
            const uint64_t c = solve_row(in, in->ptr[i], in->ptr[i + 1], G, H, xb, bb, out + (uint64_t)i * R,
                                       in->row_sse ? in->row_sse + i : NULL);
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
    if (R >= TF_ROWS_LAPACK_RANK) tf_blas_threads_restore(blas);
    tf_free(work);
    if (bad == UINT64_MAX) return TF_OK;
    const uint64_t count = in->ptr[bad + 1] - in->ptr[bad];
    return tf_fail(TF_ERR_NUMERIC, "complete: row %llu of mode %u has a singular system (%llu observed entr%s for "
                                   "rank %llu, pivot %llu): %s",
                   (unsigned long long)(in->first + bad) + 1, in->mode + 1, (unsigned long long)count,
                   count == 1 ? "y" : "ies",
                   (unsigned long long)R, (unsigned long long)bad_col,
                   in->l2 > 0.0 ? "the factors are not finite (scale the values, or a larger --l2)"
                                : "give an L2 penalty > 0 (--l2)");
}

double tf_cpu_complete_rows_sse(const tf_complete_rows_in *in)
{
    double s = 0.0;
    for (uint64_t i = 0; i < in->rows; ++i) s += in->row_sse[i];
    return s;
}
