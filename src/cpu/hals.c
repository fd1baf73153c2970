/* SPDX-License-Identifier: BSD-3-Clause */
/* HALS's column sweeps for one non-negative factor on the CPU. See hals.h.
 * A block of rows is transposed into thread scratch (its R columns, each
 * contiguous), so the update of one column over the block's rows runs
 * across rows: s = A V(:,r) for 8 rows at a time, their sums in registers
 * over k (one load per multiply-add), then the clipped quotient and the
 * squared change in one vector loop. */
#include "cpu/hals.h"

#include <math.h>
#include <omp.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/rowops.h"

uint64_t tf_hals_block_rows(uint64_t R)
{
    /* the block's A and M (2 R n doubles) in ~32 KiB */
    uint64_t n = (2048 / (R ? R : 1)) & ~(uint64_t)7;
    return n < 8 ? 8 : n > 256 ? 256 : n;
}

/* Rows a block's transposed columns are padded to (a multiple of LANES),
 * the padding zero: its rows stay zero and add nothing. */
#define LANES 8
static inline uint64_t padded(uint64_t n) { return (n + LANES - 1) / LANES * LANES; }

/* One sweep over rows [0, n) of a block: Ain (n x R, the rows before the
 * sweep) -> Aout (may be Ain); scratch of 2 R p + p doubles, p = padded(n).
 * Returns the squared change. Built for each x86-64 level (rowops.h: AVX2,
 * AVX-512 where the CPU has them). */
TF_KERNEL_CLONES static double block_sweep(const double *M, const double *Ain, double *Aout, uint64_t n,
                                           uint64_t R, const double *V, double l1, double l2, double *scratch)
{
    const uint64_t p = padded(n);
    double *At = scratch, *Mt = scratch + R * p, *s = scratch + 2 * R * p;
    for (uint64_t k = 0; k < R; ++k)
        for (uint64_t i = n; i < p; ++i) At[k * p + i] = Mt[k * p + i] = 0.0;
    for (uint64_t i = 0; i < n; ++i)
        for (uint64_t k = 0; k < R; ++k) {
            At[k * p + i] = Ain[i * R + k];
            Mt[k * p + i] = M[i * R + k];
        }
    double err = 0.0;
    for (uint64_t r = 0; r < R; ++r) {
        const double vrr = V[r * R + r];
        if (vrr == 0.0) continue; /* tensorly's `if UtU[k, k]`: the column stays */
        const double den = vrr + l2;
        const double *Vr = V + r * R;
        /* s = A V(:,r) over LANES rows at a time, the sums in registers
         * across k (one load of A per multiply-add) */
        for (uint64_t i0 = 0; i0 < p; i0 += LANES) {
            double acc[LANES] = {0.0};
            for (uint64_t k = 0; k < R; ++k) {
                const double v = Vr[k], *ak = At + k * p + i0;
#pragma omp simd
                for (int j = 0; j < LANES; ++j) acc[j] += v * ak[j];
            }
            for (int j = 0; j < LANES; ++j) s[i0 + (uint64_t)j] = acc[j];
        }
        double *ar = At + r * p;
        const double *mr = Mt + r * p;
        /* the squared changes in a fixed vector order (the build's, not the thread count's) */
#pragma omp simd reduction(+ : err)
        for (uint64_t i = 0; i < p; ++i) {
            const double num = mr[i] - s[i] + vrr * ar[i] - l1;
            double q = num / den;
            q = q <= 0.0 ? 0.0 : q; /* the projection; -0 becomes +0, NaN stays (caught by the sum) */
            q = i < n ? q : 0.0;    /* padding stays zero (with l1 > 0 too) */
            const double d = ar[i] - q;
            err += d * d;
            ar[i] = q;
        }
    }
    for (uint64_t i = 0; i < n; ++i)
        for (uint64_t k = 0; k < R; ++k) Aout[i * R + k] = At[k * p + i];
    return err;
}

tf_status tf_dense_hals(const double *M, const double *A0, double *A, uint64_t I, uint64_t R, const double *V,
                        const tf_hals_mode *o, int threads, uint32_t *inner)
{
    *inner = 0;
    if (R == 0 || R > TF_MAX_RANK)
        return tf_fail(TF_ERR_ARG, "HALS: rank %llu is outside 1..%u", (unsigned long long)R, TF_MAX_RANK);
    if (o->max_inner < 1) return tf_fail(TF_ERR_ARG, "HALS: max_inner is 0 (expected at least 1)");
    for (uint64_t e = 0; e < R * R; ++e)
        if (!isfinite(V[e]))
            return tf_fail(TF_ERR_NUMERIC, "HALS: the %llu x %llu normal matrix (Hadamard of Grams) is not finite; "
                                           "the factors diverged", (unsigned long long)R, (unsigned long long)R);
    const uint64_t rows = tf_hals_block_rows(R), nblocks = (I + rows - 1) / rows;
    const int nt = tf_team_for_work(threads, nblocks, I * R * (R + 4));
    double *part = NULL, *scratch = NULL;
    const uint64_t per_thread = (2 * R + 1) * padded(rows);
    tf_status s = TF_ALLOC(part, nblocks ? nblocks : 1, "HALS sweep sums");
    if (s == TF_OK) s = TF_ALLOC(scratch, (uint64_t)nt * per_thread, "HALS row blocks");
    double first = 0.0;
    for (uint32_t it = 0; s == TF_OK && it < o->max_inner;) {
        const double *in = it == 0 ? A0 : A;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 4) if (nt > 1)
        for (int64_t b = 0; b < (int64_t)nblocks; ++b) {
            const uint64_t i = (uint64_t)b * rows, n = I - i < rows ? I - i : rows;
            part[b] = block_sweep(M + i * R, in + i * R, A + i * R, n, R, V, o->l1, o->l2,
                                  scratch + (uint64_t)omp_get_thread_num() * per_thread);
        }
        double err = 0.0;
        for (uint64_t b = 0; b < nblocks; ++b) err += part[b];
        if (o->allreduce_sum && (s = o->allreduce_sum(&err, 1)) != TF_OK) break;
        *inner = ++it;
        if (!isfinite(err)) {
            s = tf_fail(TF_ERR_NUMERIC, "HALS: the update is not finite; the factors diverged");
            break;
        }
        if (it == 1) first = err;
        /* tensorly's stop; a sweep that changed nothing is a fixed point (the
         * next would compute the same numbers) */
        if (err < o->tol * first || err == 0.0) break;
    }
    tf_free(part);
    tf_free(scratch);
    return s;
}
