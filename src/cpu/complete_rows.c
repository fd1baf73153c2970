/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion's row solves (cpu/complete_rows.h). Per row, the entries'
 * products h go into a block of TF_ROWS_BLOCK rows (H, entries-major), from
 * which sum h h^T and sum x h are added, every row of G a vector update
 * (SPLATT's buffered dsyrk, by hand: no BLAS call per block, built per
 * x86-64 level; from rank 9 only the lower triangle, in register tiles);
 * then the Cholesky solve of the lower triangle. */
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

/* Four doubles, loaded and stored anywhere (GCC's vector extension: AVX2
 * registers in the v3 / v4 clones, two SSE2 halves in the default one). */
typedef double tf_rows_v4 __attribute__((vector_size(32), aligned(8)));

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

/* sum_k a[k] b[k], k < n: eight partial sums (two vectors) over whole
 * groups of 8, then 4, added pairwise in a fixed order, then the rest. */
TF_ALWAYS_INLINE double dot_v(const double *restrict a, const double *restrict b, uint64_t n)
{
    tf_rows_v4 s0 = {0.0, 0.0, 0.0, 0.0}, s1 = s0;
    uint64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        s0 += *(const tf_rows_v4 *)(a + k) * *(const tf_rows_v4 *)(b + k);
        s1 += *(const tf_rows_v4 *)(a + k + 4) * *(const tf_rows_v4 *)(b + k + 4);
    }
    if (k + 4 <= n) {
        s0 += *(const tf_rows_v4 *)(a + k) * *(const tf_rows_v4 *)(b + k);
        k += 4;
    }
    const tf_rows_v4 t = s0 + s1;
    double s = (t[0] + t[1]) + (t[2] + t[3]);
    for (; k < n; ++k) s += a[k] * b[k];
    return s;
}

/* cholesky() for the ranks of the tiles, in vectors: right-looking (column
 * j scaled, then every later row i updated from it by a contiguous axpy
 * against column j's copy c), the forward solve by vector dots, the back
 * substitution by rows of L. The same pivot rule against the original
 * diagonal (kept in dg). c, dg: R doubles each. */
TF_ALWAYS_INLINE uint64_t cholesky_v(double *restrict G, uint64_t ld, double *restrict b, double *restrict c,
                                     double *restrict dg, const uint64_t R)
{
    for (uint64_t j = 0; j < R; ++j) dg[j] = G[j * ld + j];
    for (uint64_t j = 0; j < R; ++j) {
        double *gj = G + j * ld;
        const double d = gj[j];
        if (!(d > 64 * DBL_EPSILON * dg[j]) || !isfinite(d)) return j + 1;
        const double ljj = sqrt(d), inv = 1.0 / ljj;
        gj[j] = ljj;
        for (uint64_t i = j + 1; i < R; ++i) {
            double *gi = G + i * ld;
            gi[j] *= inv;
            c[i] = gi[j];
        }
        for (uint64_t i = j + 1; i < R; ++i) { /* G[i][j+1..i] -= L[i][j] L[j+1..i][j] */
            double *restrict gi = G + i * ld;
            const double lij = gi[j];
            for (uint64_t k = j + 1; k <= i; ++k) gi[k] -= lij * c[k];
        }
    }
    for (uint64_t i = 0; i < R; ++i) /* L y = b */
        b[i] = (b[i] - dot_v(G + i * ld, b, i)) / G[i * ld + i];
    for (uint64_t i = R; i-- > 0;) { /* L^T a = y, by rows of L: a_i final, then taken from the a_k, k < i */
        const double *restrict gi = G + i * ld;
        const double ai = b[i] / gi[i];
        b[i] = ai;
        for (uint64_t k = 0; k < i; ++k) b[k] -= gi[k] * ai;
    }
    return 0;
}

uint64_t tf_cholesky_solve(double *G, double *b, uint64_t R)
{
    return cholesky(G, R, b, R);
}

/* Ranks from which the lower triangle is formed in tiles and solved by
 * cholesky_v (below, whole rows and cholesky(); measured on MovieLens 100k,
 * one thread: the tiles 1.6x the square at rank 32, 1.2x at 16, 1.1-1.2x at 10). */
#define TF_ROWS_TILE_RANK 9u

/* G's lower triangle (rows 0..P-1 of length P) += H^T H over the block's n
 * entries, in tiles of 4 rows x 8 (or 4) columns kept in registers over
 * the block, the loads of each h's columns shared by the tile's 4 rows:
 * about half the square's work. Tiles on the diagonal also fill some
 * entries above it (never read). */
TF_ALWAYS_INLINE void add_triangle(double *restrict G, const double *restrict H, uint32_t n, const uint64_t P)
{
    for (uint64_t r0 = 0; r0 < P; r0 += 4) {
        double *restrict g = G + r0 * P;
        uint64_t c0 = 0;
        for (; c0 + 8 <= r0 + 4; c0 += 8) {
            tf_rows_v4 a00 = *(const tf_rows_v4 *)(g + c0), a01 = *(const tf_rows_v4 *)(g + c0 + 4);
            tf_rows_v4 a10 = *(const tf_rows_v4 *)(g + P + c0), a11 = *(const tf_rows_v4 *)(g + P + c0 + 4);
            tf_rows_v4 a20 = *(const tf_rows_v4 *)(g + 2 * P + c0), a21 = *(const tf_rows_v4 *)(g + 2 * P + c0 + 4);
            tf_rows_v4 a30 = *(const tf_rows_v4 *)(g + 3 * P + c0), a31 = *(const tf_rows_v4 *)(g + 3 * P + c0 + 4);
            for (uint32_t k = 0; k < n; ++k) {
                const double *restrict hk = H + (uint64_t)k * P;
                const tf_rows_v4 h0 = *(const tf_rows_v4 *)(hk + c0), h1 = *(const tf_rows_v4 *)(hk + c0 + 4);
                const double w0 = hk[r0], w1 = hk[r0 + 1], w2 = hk[r0 + 2], w3 = hk[r0 + 3];
                a00 += w0 * h0;
                a01 += w0 * h1;
                a10 += w1 * h0;
                a11 += w1 * h1;
                a20 += w2 * h0;
                a21 += w2 * h1;
                a30 += w3 * h0;
                a31 += w3 * h1;
            }
            *(tf_rows_v4 *)(g + c0) = a00, *(tf_rows_v4 *)(g + c0 + 4) = a01;
            *(tf_rows_v4 *)(g + P + c0) = a10, *(tf_rows_v4 *)(g + P + c0 + 4) = a11;
            *(tf_rows_v4 *)(g + 2 * P + c0) = a20, *(tf_rows_v4 *)(g + 2 * P + c0 + 4) = a21;
            *(tf_rows_v4 *)(g + 3 * P + c0) = a30, *(tf_rows_v4 *)(g + 3 * P + c0 + 4) = a31;
        }
        if (c0 < r0 + 4) { /* the last 4 columns */
            tf_rows_v4 a0 = *(const tf_rows_v4 *)(g + c0), a1 = *(const tf_rows_v4 *)(g + P + c0);
            tf_rows_v4 a2 = *(const tf_rows_v4 *)(g + 2 * P + c0), a3 = *(const tf_rows_v4 *)(g + 3 * P + c0);
            for (uint32_t k = 0; k < n; ++k) {
                const double *restrict hk = H + (uint64_t)k * P;
                const tf_rows_v4 h0 = *(const tf_rows_v4 *)(hk + c0);
                a0 += hk[r0] * h0;
                a1 += hk[r0 + 1] * h0;
                a2 += hk[r0 + 2] * h0;
                a3 += hk[r0 + 3] * h0;
            }
            *(tf_rows_v4 *)(g + c0) = a0, *(tf_rows_v4 *)(g + P + c0) = a1;
            *(tf_rows_v4 *)(g + 2 * P + c0) = a2, *(tf_rows_v4 *)(g + 3 * P + c0) = a3;
        }
    }
}

/* G's rows 0..R-1 (length P) += H^T H and b += H^T x over the block's n
 * entries, H entries-major (n x P, zero past R): below rank
 * TF_ROWS_TILE_RANK whole rows, two at a time sharing the loads of each h;
 * from it the lower triangle in tiles (add_triangle; G then P x P). Every
 * element of G and b is summed over the entries in their order, whatever
 * the vector width. */
TF_ALWAYS_INLINE void add_block(double *restrict G, double *restrict b, const double *restrict H,
                                const double *restrict xb, uint32_t n, const uint64_t R, const uint64_t P)
{
    uint64_t r = 0;
    if (R >= TF_ROWS_TILE_RANK) {
        add_triangle(G, H, n, P);
        r = R;
    } else
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
 * refused; measured on MovieLens 100k, one thread: the vector one 7 % faster
 * than OpenBLAS at rank 32, 13 % at 64; larger ranks not measured). */
#ifndef TF_ROWS_LAPACK_RANK
#define TF_ROWS_LAPACK_RANK 65u
#endif

/* The system's solve: G's rows are the column-major upper triangle LAPACK
 * factors (A = U^T U, U^T our lower triangle). */
TF_ALWAYS_INLINE uint64_t solve_system(double *restrict G, uint64_t P, double *restrict b, double *restrict work,
                                        const uint64_t R)
{
    if (R < TF_ROWS_TILE_RANK) return cholesky(G, P, b, R);
    if (R < TF_ROWS_LAPACK_RANK) return cholesky_v(G, P, b, work, work + R, R);
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
    memset(G, 0, P * P * sizeof *G); /* P rows: the tiles' (add_triangle) */
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
    const uint64_t bad = solve_system(G, P, bb, H, R); /* H (32 P doubles) free now: its scratch */
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
TF_ROW_SOLVE(r24, 24)
TF_ROW_SOLVE(r32, 32)
TF_ROW_SOLVE(r48, 48)
TF_ROW_SOLVE(r64, 64)
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
    case 24: return row_solve_r24(in, k0, k1, G, H, xb, bb, a, sse);
    case 32: return row_solve_r32(in, k0, k1, G, H, xb, bb, a, sse);
    case 48: return row_solve_r48(in, k0, k1, G, H, xb, bb, a, sse);
    case 64: return row_solve_r64(in, k0, k1, G, H, xb, bb, a, sse);
    default: return row_solve_any(in, k0, k1, G, H, xb, bb, a, sse);
    }
}

tf_status tf_cpu_complete_rows(const tf_complete_rows_in *in, double *out)
{
    const uint64_t R = in->R, rows = in->rows;
    int nt = in->threads;
    if ((uint64_t)nt > rows) nt = rows ? (int)rows : 1;
    const uint64_t P = TF_ROWS_PAD(R);
    const uint64_t per = P * P + P * TF_ROWS_BLOCK + TF_ROWS_BLOCK + P + 8; /* G, H, xb, bb, padding */
    double *work = NULL;
    TF_TRY(TF_ALLOC(work, (uint64_t)nt * per, "completion row systems"));
    uint64_t bad = UINT64_MAX, bad_col = 0;
    const int blas = R >= TF_ROWS_LAPACK_RANK ? tf_blas_threads_pin_single() : 0; /* LAPACK inside the team */
#pragma omp parallel num_threads(nt) if (nt > 1)
    {
        double *G = work + (uint64_t)tf_thread_id() * per;
        double *H = G + P * P, *xb = H + P * TF_ROWS_BLOCK, *bb = xb + TF_ROWS_BLOCK;
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
