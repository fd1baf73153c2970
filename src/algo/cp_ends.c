/* SPDX-License-Identifier: BSD-3-Clause */
/* The two ends every CP method shares (algo/cp_ends.h). */
#include "algo/cp_ends.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/rng.h"

void tf_cp_start_random(tf_ktensor *k, uint64_t seed)
{
    /* the factors in turn, mode after mode, of one generator's uniforms; filled
     * in parallel from jumped generators (the same values: core/rng.h), so a
     * billion-entry start is not one thread's (1B-non-zero runs: 32M rows x 32) */
    double *out[TF_MAX_ORDER];
    uint64_t len[TF_MAX_ORDER];
    for (uint32_t m = 0; m < k->order; ++m) {
        out[m] = k->factors[m].data;
        len[m] = k->dims[m] * k->rank;
    }
    tf_rng_fill_uniform(seed, out, len, k->order, 0);
    for (uint64_t r = 0; r < k->rank; ++r) k->lambda[r] = 1.0;
}

void tf_cp_start_given(tf_ktensor *k, const tf_ktensor *init, int fold)
{
    const uint64_t R = k->rank;
    for (uint32_t m = 0; m < k->order; ++m)
        memcpy(k->factors[m].data, init->factors[m].data, k->dims[m] * R * sizeof(double));
    for (uint64_t r = 0; r < R; ++r) k->lambda[r] = init->lambda && !fold ? init->lambda[r] : 1.0;
    if (!fold || !init->lambda) return;
    double *a = k->factors[0].data;
    for (uint64_t i = 0; i < k->dims[0]; ++i)
        for (uint64_t r = 0; r < R; ++r) a[i * R + r] *= init->lambda[r];
}

/* Rows of a block of the column sums: the sums are added block by block in
 * block order, so they are the same for any thread count (and a factor of
 * at most this many rows is summed in row order, as one loop would). */
#define ARRANGE_BLOCK 8192u

/* norm[r] <- sum over the rows of A (I x R) of |a| (norm1) or a^2, from
 * partial sums of fixed row blocks (part: ceil(I / ARRANGE_BLOCK) x R). */
static void column_sums(const double *A, uint64_t I, uint64_t R, int norm1, double *part, double *norm)
{
    const uint64_t nb = (I + ARRANGE_BLOCK - 1) / ARRANGE_BLOCK;
#pragma omp parallel for num_threads(tf_resolve_threads(0)) schedule(static) if (nb > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        double *p = part + (uint64_t)b * R;
        const uint64_t lo = (uint64_t)b * ARRANGE_BLOCK, hi = lo + ARRANGE_BLOCK < I ? lo + ARRANGE_BLOCK : I;
        for (uint64_t r = 0; r < R; ++r) p[r] = 0.0;
        for (uint64_t i = lo; i < hi; ++i)
            for (uint64_t r = 0; r < R; ++r) p[r] += norm1 ? fabs(A[i * R + r]) : A[i * R + r] * A[i * R + r];
    }
    for (uint64_t r = 0; r < R; ++r) norm[r] = nb ? part[r] : 0.0;
    for (uint64_t b = 1; b < nb; ++b)
        for (uint64_t r = 0; r < R; ++r) norm[r] += part[b * R + r];
}

/* Every row of A scaled by scale[] column by column, then its entries
 * permuted (row[r] <- row[perm[r]]; perm NULL: kept), in one parallel pass
 * (buf: nt x R doubles, a row's copy per thread). */
static void scale_permute(double *A, uint64_t I, uint64_t R, const double *scale, const uint64_t *perm, int nt,
                          double *buf)
{
#pragma omp parallel num_threads(nt) if (nt > 1 && I * R > 100000)
    {
        double *tmp = buf + (uint64_t)tf_thread_id() * R;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)I; ++i) {
            double *row = A + (uint64_t)i * R;
            for (uint64_t r = 0; r < R; ++r) row[r] *= scale[r];
            if (!perm) continue;
            memcpy(tmp, row, R * sizeof *tmp);
            for (uint64_t r = 0; r < R; ++r) row[r] = tmp[perm[r]];
        }
    }
}

/* Tensor Toolbox `arrange`: every factor column scaled to unit 2-norm
 * (norm1: 1-norm; the norms go into lambda; a zero column makes its lambda
 * 0), then components sorted by lambda, largest first (stable, so ties
 * keep their order). Also the final finiteness check: a non-finite entry
 * makes its column norm non-finite. Row-major passes only (factors can
 * have millions of rows). */
tf_status tf_cp_arrange(tf_ktensor *k, int norm1)
{
    const uint64_t R = k->rank;
    const int nt = tf_resolve_threads(0);
    uint64_t most = 0;
    for (uint32_t m = 0; m < k->order; ++m) most = k->dims[m] > most ? k->dims[m] : most;
    const uint64_t nb = (most + ARRANGE_BLOCK - 1) / ARRANGE_BLOCK;
    double *norm = NULL, *scale = NULL, *part = NULL, *buf = NULL;
    uint64_t *perm = NULL;
    tf_status s = TF_ALLOC(norm, (uint64_t)k->order * R, "ktensor column norms");
    if (s == TF_OK) s = TF_ALLOC(scale, (uint64_t)k->order * R, "ktensor column scales");
    if (s == TF_OK) s = TF_ALLOC(perm, R, "ktensor order");
    if (s == TF_OK) s = TF_ALLOC(part, (nb ? nb : 1) * R, "ktensor column partial sums");
    if (s == TF_OK) s = TF_ALLOC(buf, (uint64_t)nt * R, "ktensor reorder buffers");
    if (s != TF_OK) goto done;
    /* the norms of every factor first (lambda takes them), then one pass a
     * factor scales and reorders its rows */
    for (uint32_t m = 0; m < k->order; ++m) {
        double *nm = norm + (uint64_t)m * R, *sc = scale + (uint64_t)m * R;
        column_sums(k->factors[m].data, k->dims[m], R, norm1, part, nm);
        for (uint64_t r = 0; r < R; ++r) {
            if (!isfinite(nm[r]) || !isfinite(k->lambda[r])) {
                s = tf_fail(TF_ERR_NUMERIC, "cpd: factor %u column %llu is not finite", m + 1,
                            (unsigned long long)r + 1);
                goto done;
            }
            if (!norm1) nm[r] = sqrt(nm[r]);
            k->lambda[r] *= nm[r];
            sc[r] = nm[r] > 0.0 ? 1.0 / nm[r] : 1.0;
        }
    }
    int sorted = 1;
    for (uint64_t r = 0; r < R; ++r) perm[r] = r;
    for (uint64_t r = 1; r < R; ++r) { /* insertion sort: R is small */
        uint64_t p = perm[r], j = r;
        for (; j > 0 && k->lambda[perm[j - 1]] < k->lambda[p]; --j) perm[j] = perm[j - 1];
        perm[j] = p;
        sorted &= j == r;
    }
    if (!sorted) {
        memcpy(buf, k->lambda, R * sizeof *buf);
        for (uint64_t r = 0; r < R; ++r) k->lambda[r] = buf[perm[r]];
    }
    for (uint32_t m = 0; m < k->order; ++m)
        scale_permute(k->factors[m].data, k->dims[m], R, scale + (uint64_t)m * R, sorted ? NULL : perm, nt, buf);
done:
    tf_free(norm);
    tf_free(scale);
    tf_free(perm);
    tf_free(part);
    tf_free(buf);
    return s;
}
