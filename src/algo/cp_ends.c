/* SPDX-License-Identifier: BSD-3-Clause */
/* The two ends every CP method shares (algo/cp_ends.h). */
#include "algo/cp_ends.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
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

/* row[r] <- row[perm[r]] through buf (R doubles). */
static void permute_row(double *row, const uint64_t *perm, uint64_t R, double *buf)
{
    memcpy(buf, row, R * sizeof *buf);
    for (uint64_t r = 0; r < R; ++r) row[r] = buf[perm[r]];
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
    double *norm = NULL, *tmp = NULL;
    uint64_t *perm = NULL;
    tf_status s = TF_ALLOC(norm, R, "ktensor column norms");
    if (s == TF_OK) s = TF_ALLOC(perm, R, "ktensor order");
    if (s != TF_OK) goto done;
    for (uint32_t m = 0; m < k->order; ++m) {
        double *a = k->factors[m].data;
        const uint64_t I = k->dims[m];
        for (uint64_t r = 0; r < R; ++r) norm[r] = 0.0;
        for (uint64_t i = 0; i < I; ++i)
            for (uint64_t r = 0; r < R; ++r) norm[r] += norm1 ? fabs(a[i * R + r]) : a[i * R + r] * a[i * R + r];
        for (uint64_t r = 0; r < R; ++r) {
            if (!isfinite(norm[r]) || !isfinite(k->lambda[r])) {
                s = tf_fail(TF_ERR_NUMERIC, "cpd: factor %u column %llu is not finite", m + 1,
                            (unsigned long long)r + 1);
                goto done;
            }
            if (!norm1) norm[r] = sqrt(norm[r]);
            k->lambda[r] *= norm[r];
            norm[r] = norm[r] > 0.0 ? 1.0 / norm[r] : 1.0;
        }
        for (uint64_t i = 0; i < I; ++i)
            for (uint64_t r = 0; r < R; ++r) a[i * R + r] *= norm[r];
    }
    int sorted = 1;
    for (uint64_t r = 0; r < R; ++r) perm[r] = r;
    for (uint64_t r = 1; r < R; ++r) { /* insertion sort: R is small */
        uint64_t p = perm[r], j = r;
        for (; j > 0 && k->lambda[perm[j - 1]] < k->lambda[p]; --j) perm[j] = perm[j - 1];
        perm[j] = p;
        sorted &= j == r;
    }
    if (sorted) goto done;
    s = TF_ALLOC(tmp, R, "ktensor reorder buffer");
    if (s != TF_OK) goto done;
    permute_row(k->lambda, perm, R, tmp);
    for (uint32_t m = 0; m < k->order; ++m)
        for (uint64_t i = 0; i < k->dims[m]; ++i) permute_row(k->factors[m].data + i * R, perm, R, tmp);
done:
    tf_free(norm);
    tf_free(perm);
    tf_free(tmp);
    return s;
}
