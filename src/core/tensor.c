/* SPDX-License-Identifier: BSD-3-Clause */
/* COO tensor: allocation, validation, sorting, canonical form. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/canonical.h"
#include "core/check_args.h"
#include "core/error.h"
#include "core/parallel.h"
#include "core/radix.h"

#define TF_DIM_LIMIT (1ULL << 32)

static tf_status check_shape(uint32_t order, const uint64_t *dims)
{
    if (order < TF_MIN_ORDER || order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "tensor order %u is outside %d..%d", order, TF_MIN_ORDER,
                       TF_MAX_ORDER);
    for (uint32_t m = 0; m < order; ++m) {
        if (dims[m] == 0)
            return tf_fail(TF_ERR_RANGE, "mode %u has length 0 (expected at least 1)", m + 1);
        if (dims[m] > TF_DIM_LIMIT)
            return tf_fail(TF_ERR_RANGE,
                           "mode %u has length %llu, longer than the 2^32 that uint32 indices allow",
                           m + 1, (unsigned long long)dims[m]);
    }
    return TF_OK;
}

tf_status tf_tensor_arg(const char *fn, const char *name, const tf_tensor *t)
{
    if (!t) return tf_fail(TF_ERR_ARG, "%s: %s is NULL", fn, name);
    if (t->order < TF_MIN_ORDER || t->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "%s: %s has order %u (expected %d..%d)", fn, name, t->order, TF_MIN_ORDER,
                       TF_MAX_ORDER);
    if (t->nnz && !t->vals)
        return tf_fail(TF_ERR_ARG, "%s: %s has %llu non-zeros but no values (NULL)", fn, name,
                       (unsigned long long)t->nnz);
    for (uint32_t m = 0; m < t->order; ++m)
        if (t->nnz && !t->ind[m])
            return tf_fail(TF_ERR_ARG, "%s: %s has %llu non-zeros but no indices of mode %u (NULL)", fn, name,
                           (unsigned long long)t->nnz, m + 1);
    return TF_OK;
}

tf_status tf_threads_arg(const char *fn, int threads)
{
    if (threads < 0) return tf_fail(TF_ERR_ARG, "%s: threads %d is negative (0: the default)", fn, threads);
    return TF_OK;
}

tf_status tf_tensor_alloc(tf_tensor *t, uint32_t order, const uint64_t *dims, uint64_t nnz)
{
    TF_ARG_NOT_NULL("tf_tensor_alloc", t);
    memset(t, 0, sizeof *t);
    TF_ARG_NOT_NULL("tf_tensor_alloc", dims);
    TF_TRY(check_shape(order, dims));
    t->order = order;
    t->nnz = nnz;
    for (uint32_t m = 0; m < order; ++m) {
        t->dims[m] = dims[m];
        tf_status s = TF_ALLOC(t->ind[m], nnz, "tensor indices");
        if (s != TF_OK) { tf_tensor_free(t); return s; }
    }
    tf_status s = TF_ALLOC(t->vals, nnz, "tensor values");
    if (s != TF_OK) { tf_tensor_free(t); return s; }
    return TF_OK;
}

void tf_tensor_free(tf_tensor *t)
{
    if (!t) return;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_free(t->ind[m]);
    tf_free(t->vals);
    memset(t, 0, sizeof *t);
}

tf_status tf_tensor_copy(const tf_tensor *src, tf_tensor *dst)
{
    TF_ARG_NOT_NULL("tf_tensor_copy", dst);
    memset(dst, 0, sizeof *dst);
    TF_TRY(tf_tensor_arg("tf_tensor_copy", "src", src));
    TF_TRY(tf_tensor_alloc(dst, src->order, src->dims, src->nnz));
    for (uint32_t m = 0; m < src->order; ++m)
        memcpy(dst->ind[m], src->ind[m], src->nnz * sizeof(uint32_t));
    memcpy(dst->vals, src->vals, src->nnz * sizeof(double));
    return TF_OK;
}

/* The first non-zero whose mode-m index is out of range (m < order) or
 * whose value is not finite (m == order), or UINT64_MAX. Every plan build
 * scans the whole tensor (400 MB for 20M non-zeros of order 3): the
 * threads split it into blocks, a block is tested with a branch-free
 * (vectorised) loop, and only a block with a bad entry is searched. */
static uint64_t first_bad(const tf_tensor *t, uint32_t m)
{
    enum { BLOCK = 4096 };
    const uint64_t n = t->nnz, dim = m < t->order ? t->dims[m] : 0;
    const int64_t nb = (int64_t)((n + BLOCK - 1) / BLOCK);
    const uint32_t *ix = m < t->order ? t->ind[m] : NULL;
    const double *v = t->vals;
    uint64_t bad = UINT64_MAX;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) reduction(min : bad) if (nb > 16)
    for (int64_t b = 0; b < nb; ++b) {
        const uint64_t lo = (uint64_t)b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        int any = 0;
        if (ix) for (uint64_t k = lo; k < hi; ++k) any |= (uint64_t)ix[k] >= dim;
        else for (uint64_t k = lo; k < hi; ++k) any |= !(fabs(v[k]) <= DBL_MAX); /* NaN too */
        for (uint64_t k = lo; any && k < hi; ++k)
            if (ix ? (uint64_t)ix[k] >= dim : !isfinite(v[k])) {
                if (k < bad) bad = k;
                break;
            }
    }
    return bad;
}

tf_status tf_tensor_validate(const tf_tensor *t)
{
    TF_ARG_NOT_NULL("tf_tensor_validate", t);
    TF_TRY(check_shape(t->order, t->dims));
    if (t->nnz && !t->vals) return tf_fail(TF_ERR_ARG, "tensor has %llu non-zeros but no values",
                                           (unsigned long long)t->nnz);
    for (uint32_t m = 0; m < t->order; ++m) {
        if (t->nnz && !t->ind[m])
            return tf_fail(TF_ERR_ARG, "tensor mode %u has no index array", m + 1);
        const uint64_t bad = first_bad(t, m);
        if (bad != UINT64_MAX)
            return tf_fail(TF_ERR_RANGE, "non-zero %llu: mode %u index %u is outside 0..%llu",
                           (unsigned long long)bad, m + 1, t->ind[m][bad], (unsigned long long)(t->dims[m] - 1));
    }
    const uint64_t bad = first_bad(t, t->order);
    if (bad != UINT64_MAX)
        return tf_fail(TF_ERR_RANGE, "non-zero %llu: value is not finite", (unsigned long long)bad);
    return TF_OK;
}

/* Sum of squares of scale * value over fixed 64Ki-element blocks added in
 * block order, so the result is bit-identical for any thread count. */
static double sum_squares(const tf_tensor *t, double scale)
{
    enum { BLOCK = 1 << 16, STACK_BLOCKS = 256 };
    const uint64_t n = t->nnz, nb = (n + BLOCK - 1) / BLOCK;
    double stack[STACK_BLOCKS], *part = stack, total = 0.0;
    if (nb > STACK_BLOCKS && TF_ALLOC(part, nb, "norm partial sums") != TF_OK) part = NULL;
    if (!part) { /* allocation failed: serial sum, still deterministic */
        for (uint64_t k = 0; k < n; ++k) total += (scale * t->vals[k]) * (scale * t->vals[k]);
        return total;
    }
    const double *v = t->vals;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        uint64_t lo = (uint64_t)b * BLOCK, hi = lo + BLOCK < n ? lo + BLOCK : n;
        double s = 0.0;
        for (uint64_t k = lo; k < hi; ++k) s += (scale * v[k]) * (scale * v[k]);
        part[b] = s;
    }
    for (uint64_t b = 0; b < nb; ++b) total += part[b];
    if (part != stack) tf_free(part);
    return total;
}

/* The value functions' argument check: a tensor whose values can be read,
 * else a message and 0 (the convention of the functions without a status:
 * tf_plan_bytes(NULL) is 0, tf_plan_describe(NULL) ""). */
static int values_readable(const char *fn, const tf_tensor *t)
{
    if (!t) return tf_fail(TF_ERR_ARG, "%s: t is NULL", fn), 0;
    if (t->nnz && !t->vals)
        return tf_fail(TF_ERR_ARG, "%s: t has %llu non-zeros but no values (NULL)", fn, (unsigned long long)t->nnz), 0;
    return 1;
}

double tf_tensor_norm2(const tf_tensor *t)
{
    if (!values_readable("tf_tensor_norm2", t)) return 0.0;
    return sum_squares(t, 1.0);
}

/* Scaled by 2^-e, e the exponent of the largest |value|: every scaled value
 * is below 2 in magnitude and the largest is at least 1 (2^-74 for subnormal
 * values), so the sum neither
 * overflows (for fewer than 2^1020 values) nor underflows to zero. */
double tf_tensor_norm(const tf_tensor *t)
{
    if (!values_readable("tf_tensor_norm", t)) return 0.0;
    double amax = 0.0;
    for (uint64_t k = 0; k < t->nnz; ++k) amax = fmax(amax, fabs(t->vals[k]));
    if (!(amax > 0.0) || !isfinite(amax)) return amax;
    int e = ilogb(amax);
    if (e < -1000) e = -1000; /* subnormal maximum: 2^-e must stay finite */
    return ldexp(sqrt(sum_squares(t, ldexp(1.0, -e))), e);
}

uint32_t tf_tensor_implied_dims(const tf_tensor *t, uint64_t *implied)
{
    if (tf_tensor_arg("tf_tensor_implied_dims", "t", t) != TF_OK) return 0;
    uint32_t lost = 0;
    for (uint32_t m = 0; m < t->order; ++m) {
        uint64_t top = 0;
        const uint32_t *ix = t->ind[m];
        for (uint64_t k = 0; k < t->nnz; ++k)
            if ((uint64_t)ix[k] + 1 > top) top = (uint64_t)ix[k] + 1;
        if (implied) implied[m] = top;
        lost += t->dims[m] > top;
    }
    return lost;
}

uint64_t tf_tensor_bytes(const tf_tensor *t)
{
    if (!t) return tf_fail(TF_ERR_ARG, "tf_tensor_bytes: t is NULL"), 0;
    if (t->order < TF_MIN_ORDER || t->order > TF_MAX_ORDER)
        return tf_fail(TF_ERR_ARG, "tf_tensor_bytes: t has order %u (expected %d..%d)", t->order, TF_MIN_ORDER,
                       TF_MAX_ORDER), 0;
    return t->nnz * (t->order * sizeof(uint32_t) + sizeof(double));
}

/* 1 if already ordered by mode_order (lexicographic, non-strict). */
static int is_sorted(const tf_tensor *t, const uint32_t *mo)
{
    for (uint64_t k = 1; k < t->nnz; ++k) {
        for (uint32_t l = 0; l < t->order; ++l) {
            uint32_t a = t->ind[mo[l]][k - 1], b = t->ind[mo[l]][k];
            if (a < b) goto next;
            if (a > b) return 0;
        }
    next:;
    }
    return 1;
}

tf_status tf_tensor_sort(tf_tensor *t, const uint32_t *mode_order)
{
    TF_TRY(tf_tensor_arg("tf_tensor_sort", "t", t));
    uint32_t mo[TF_MAX_ORDER], seen = 0;
    for (uint32_t l = 0; l < t->order; ++l) {
        mo[l] = mode_order ? mode_order[l] : l;
        if (mo[l] >= t->order || (seen >> mo[l] & 1u))
            return tf_fail(TF_ERR_ARG, "tf_tensor_sort: mode_order is not a permutation of 0..%u (%u %sat position %u)",
                           t->order - 1, mo[l], mo[l] < t->order ? "again " : "", l);
        seen |= 1u << mo[l];
    }
    if (t->nnz < 2 || is_sorted(t, mo)) return TF_OK;
    /* sorted into new arrays, then swapped in: one copy of the COO more */
    uint32_t *cols[TF_MAX_ORDER] = {0};
    double *vals = NULL;
    tf_status s = TF_ALLOC(vals, t->nnz, "sorted values");
    for (uint32_t l = 0; s == TF_OK && l < t->order; ++l) s = TF_ALLOC(cols[l], t->nnz, "sorted indices");
    if (s == TF_OK) s = tf_radix_sort_into(t, mo, t->order, cols, vals, 0);
    if (s == TF_OK) {
        for (uint32_t l = 0; l < t->order; ++l) {
            uint32_t *old = t->ind[mo[l]];
            t->ind[mo[l]] = cols[l];
            cols[l] = old;
        }
        double *old = t->vals;
        t->vals = vals;
        vals = old;
    }
    for (uint32_t l = 0; l < t->order; ++l) tf_free(cols[l]);
    tf_free(vals);
    return s;
}

tf_status tf_tensor_canonicalize(tf_tensor *t, uint64_t *duplicates, uint64_t *zeros)
{
    return tf_tensor_canonicalize_zeros(t, 0, duplicates, zeros);
}

tf_status tf_tensor_canonicalize_zeros(tf_tensor *t, int keep_zeros, uint64_t *duplicates, uint64_t *zeros)
{
    uint64_t dups = 0, zer = 0;
    TF_TRY(tf_tensor_arg("tf_tensor_canonicalize", "t", t));
    TF_TRY(tf_tensor_sort(t, NULL));
    const uint32_t N = t->order;
    uint64_t w = 0;
    for (uint64_t k = 0; k < t->nnz;) {
        double v = t->vals[k];
        uint64_t j = k + 1;
        for (; j < t->nnz; ++j) {
            int same = 1;
            for (uint32_t m = 0; m < N; ++m)
                if (t->ind[m][j] != t->ind[m][k]) { same = 0; break; }
            if (!same) break;
            v += t->vals[j];
        }
        dups += j - k - 1;
        if (v == 0.0) ++zer;
        if (v != 0.0 || keep_zeros) {
            for (uint32_t m = 0; m < N; ++m) t->ind[m][w] = t->ind[m][k];
            t->vals[w] = v;
            ++w;
        }
        k = j;
    }
    t->nnz = w;
    if (duplicates) *duplicates = dups;
    if (zeros) *zeros = zer;
    return TF_OK;
}

tf_status tf_matrix_alloc(tf_matrix *m, uint64_t rows, uint64_t cols)
{
    TF_ARG_NOT_NULL("tf_matrix_alloc", m);
    memset(m, 0, sizeof *m);
    if (cols != 0 && rows > UINT64_MAX / cols)
        return tf_fail(TF_ERR_RANGE, "matrix %llu x %llu is too large", (unsigned long long)rows,
                       (unsigned long long)cols);
    TF_TRY(TF_ALLOC(m->data, rows * cols, "dense matrix"));
    m->rows = rows;
    m->cols = cols;
    return TF_OK;
}

void tf_matrix_free(tf_matrix *m)
{
    if (!m) return;
    tf_free(m->data);
    memset(m, 0, sizeof *m);
}

tf_status tf_ktensor_alloc(tf_ktensor *k, uint32_t order, const uint64_t *dims, uint64_t rank)
{
    TF_ARG_NOT_NULL("tf_ktensor_alloc", k);
    memset(k, 0, sizeof *k);
    TF_ARG_NOT_NULL("tf_ktensor_alloc", dims);
    TF_TRY(check_shape(order, dims));
    if (rank == 0) return tf_fail(TF_ERR_ARG, "tf_ktensor_alloc: rank must be at least 1");
    k->order = order;
    k->rank = rank;
    tf_status s = TF_ALLOC(k->lambda, rank, "ktensor lambda");
    for (uint32_t m = 0; s == TF_OK && m < order; ++m) {
        k->dims[m] = dims[m];
        s = tf_matrix_alloc(&k->factors[m], dims[m], rank);
    }
    if (s != TF_OK) tf_ktensor_free(k);
    return s;
}

void tf_ktensor_free(tf_ktensor *k)
{
    if (!k) return;
    tf_free(k->lambda);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&k->factors[m]);
    memset(k, 0, sizeof *k);
}
