/* SPDX-License-Identifier: BSD-3-Clause */
/* Sparse tensor helpers (issue 43): tensor times vectors, collapse, scale,
 * permute and subtensor, each a pass or two over the non-zeros. The passes
 * split the non-zeros into blocks of BLOCK; partial sums, counts and slab
 * vectors are combined in block order, so results do not depend on the
 * thread count. */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"

#define BLOCK 4096u
/* Threads for nb blocks: serial below a few blocks (a parallel region costs
 * more than it saves there). */
static int team(uint64_t nb)
{
    int nt = tf_default_threads();
    if (nb < 4) return 1;
    if ((uint64_t)nt > nb) nt = (int)nb;
    return nt;
}

static inline uint64_t block_end(uint64_t b, uint64_t nnz)
{
    const uint64_t e = (b + 1) * BLOCK;
    return e < nnz ? e : nnz;
}

static tf_status check_tensor(const char *fn, const tf_tensor *X)
{
    if (!X) return tf_fail(TF_ERR_ARG, "%s: X must not be NULL", fn);
    return tf_tensor_validate(X);
}

/* drop[m] = 1 for the modes listed (1..order distinct modes in range). */
static tf_status check_modes(const char *fn, const tf_tensor *X, uint32_t nmodes, const uint32_t *modes,
                             int *drop)
{
    if (nmodes == 0 || nmodes > X->order)
        return tf_fail(TF_ERR_ARG, "%s: %u modes, expected 1..%u (the tensor's order)", fn, nmodes, X->order);
    if (!modes) return tf_fail(TF_ERR_ARG, "%s: modes must not be NULL", fn);
    for (uint32_t m = 0; m < X->order; ++m) drop[m] = 0;
    for (uint32_t i = 0; i < nmodes; ++i) {
        if (modes[i] >= X->order)
            return tf_fail(TF_ERR_ARG, "%s: mode %u is outside 1..%u (1-based)", fn, modes[i] + 1, X->order);
        if (drop[modes[i]]) return tf_fail(TF_ERR_ARG, "%s: mode %u is listed twice", fn, modes[i] + 1);
        drop[modes[i]] = 1;
    }
    return TF_OK;
}

/* Value j after the vectors of the dropped modes (w[m] NULL: none). */
static inline double scaled(const tf_tensor *X, const double *const *w, uint64_t j)
{
    double v = X->vals[j];
    for (uint32_t m = 0; m < X->order; ++m)
        if (w[m]) v *= w[m][X->ind[m][j]];
    return v;
}

static inline double combine(tf_collapse_op op, double a, double b)
{
    return op == TF_COLLAPSE_SUM ? a + b : op == TF_COLLAPSE_MAX ? fmax(a, b) : fmin(a, b);
}

/* The neutral start of a reduction: 0, or -inf / +inf (stands for "no value
 * yet": the values are finite). */
static inline double start(tf_collapse_op op)
{
    return op == TF_COLLAPSE_SUM ? 0.0 : op == TF_COLLAPSE_MAX ? -INFINITY : INFINITY;
}

static inline double finish(double v) { return isinf(v) ? 0.0 : v; }

/* k == 0: the whole tensor to one value. */
static tf_status reduce_all(const tf_tensor *X, const double *const *w, tf_collapse_op op, double *dense)
{
    const uint64_t nnz = X->nnz, nb = (nnz + BLOCK - 1) / BLOCK;
    double *part = NULL;
    TF_TRY(TF_ALLOC(part, nb ? nb : 1, "reduction partials"));
    const int nt = team(nb);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        double acc = start(op);
        for (uint64_t j = (uint64_t)b * BLOCK, e = block_end((uint64_t)b, nnz); j < e; ++j)
            acc = combine(op, acc, scaled(X, w, j));
        part[b] = acc;
    }
    double acc = start(op);
    for (uint64_t b = 0; b < nb; ++b) acc = combine(op, acc, part[b]);
    dense[0] = finish(acc);
    tf_free(part);
    return TF_OK;
}

/* k == 1: onto the dense vector of mode q. Contiguous slabs of the
 * non-zeros, each into a vector of its own, added in slab order; the slab
 * count depends on nnz and the mode's length only. */
static tf_status reduce_vector(const tf_tensor *X, const double *const *w, tf_collapse_op op, uint32_t q,
                               double *dense)
{
    const uint64_t nnz = X->nnz, D = X->dims[q], nb = (nnz + BLOCK - 1) / BLOCK;
    uint64_t S = nb < 16 ? nb : 16;
    const uint64_t room = 4 * nnz + 65536; /* slab vectors held: about the tensor's size at most */
    if (S > 1 && S * D > room) S = room / D;
    if (S < 2) {
        for (uint64_t i = 0; i < D; ++i) dense[i] = start(op);
        const uint32_t *ind = X->ind[q];
        for (uint64_t j = 0; j < nnz; ++j) dense[ind[j]] = combine(op, dense[ind[j]], scaled(X, w, j));
        for (uint64_t i = 0; i < D; ++i) dense[i] = finish(dense[i]);
        return TF_OK;
    }
    double *part = NULL;
    TF_TRY(TF_ALLOC(part, S * D, "reduction slab vectors"));
    const int nt = team(4 * S);
#pragma omp parallel for num_threads(nt < (int)S ? nt : (int)S) schedule(static, 1) if (nt > 1)
    for (int64_t s = 0; s < (int64_t)S; ++s) {
        double *p = part + (uint64_t)s * D;
        for (uint64_t i = 0; i < D; ++i) p[i] = start(op);
        const uint64_t j0 = nnz / S * (uint64_t)s + ((uint64_t)s < nnz % S ? (uint64_t)s : nnz % S);
        const uint64_t j1 = j0 + nnz / S + ((uint64_t)s < nnz % S);
        const uint32_t *ind = X->ind[q];
        for (uint64_t j = j0; j < j1; ++j) p[ind[j]] = combine(op, p[ind[j]], scaled(X, w, j));
    }
    const int64_t Dn = (int64_t)D;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1 && D > 65536)
    for (int64_t i = 0; i < Dn; ++i) {
        double acc = part[i];
        for (uint64_t s = 1; s < S; ++s) acc = combine(op, acc, part[s * D + (uint64_t)i]);
        dense[i] = finish(acc);
    }
    tf_free(part);
    return TF_OK;
}

/* Moves t's arrays into ones of its nnz when that is at most half their
 * length (a failed allocation keeps the longer arrays). */
static void shrink(tf_tensor *t, uint64_t had)
{
    if (t->nnz > had / 2 || had < 1024) return;
    tf_tensor s;
    if (tf_tensor_alloc(&s, t->order, t->dims, t->nnz) != TF_OK) {
        tf_clear_error();
        return;
    }
    for (uint32_t m = 0; m < t->order; ++m) tf_copy_bytes(s.ind[m], t->ind[m], t->nnz * sizeof(uint32_t));
    tf_copy_bytes(s.vals, t->vals, t->nnz * sizeof(double));
    tf_tensor_free(t);
    *t = s;
}

/* k >= 2: a sparse tensor over the kept modes. */
static tf_status reduce_sparse(const tf_tensor *X, const double *const *w, const int *drop, tf_collapse_op op,
                               tf_tensor *out)
{
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint32_t k = 0, kept[TF_MAX_ORDER] = {0};
    for (uint32_t m = 0; m < X->order; ++m)
        if (!drop[m]) kept[k] = m, dims[k++] = X->dims[m];
    tf_tensor Y;
    TF_TRY(tf_tensor_alloc(&Y, k, dims, X->nnz));
    const uint64_t nnz = X->nnz, nb = (nnz + BLOCK - 1) / BLOCK;
    for (uint32_t l = 0; l < k; ++l) tf_copy_bytes(Y.ind[l], X->ind[kept[l]], nnz * sizeof(uint32_t));
    const int nt = team(nb);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b)
        for (uint64_t j = (uint64_t)b * BLOCK, e = block_end((uint64_t)b, nnz); j < e; ++j)
            Y.vals[j] = scaled(X, w, j);
    tf_status s = TF_OK;
    if (op == TF_COLLAPSE_SUM) {
        s = tf_tensor_canonicalize(&Y, NULL, NULL);
    } else {
        s = tf_tensor_sort(&Y, NULL);
        uint64_t o = 0;
        for (uint64_t j = 0; s == TF_OK && j < Y.nnz;) {
            double v = Y.vals[j];
            uint64_t e = j + 1;
            for (; e < Y.nnz; ++e) {
                uint32_t l = 0;
                while (l < k && Y.ind[l][e] == Y.ind[l][j]) ++l;
                if (l < k) break;
                v = combine(op, v, Y.vals[e]);
            }
            if (v != 0.0) {
                for (uint32_t l = 0; l < k; ++l) Y.ind[l][o] = Y.ind[l][j];
                Y.vals[o++] = v;
            }
            j = e;
        }
        if (s == TF_OK) Y.nnz = o;
    }
    if (s != TF_OK) {
        tf_tensor_free(&Y);
        return s;
    }
    shrink(&Y, nnz);
    *out = Y;
    return TF_OK;
}

static tf_status reduce(const char *fn, const tf_tensor *X, uint32_t nmodes, const uint32_t *modes,
                        const double *const *vecs, tf_collapse_op op, tf_tensor *out, double *dense)
{
    if (out) memset(out, 0, sizeof *out);
    TF_TRY(check_tensor(fn, X));
    int drop[TF_MAX_ORDER];
    TF_TRY(check_modes(fn, X, nmodes, modes, drop));
    const double *w[TF_MAX_ORDER] = {0};
    if (vecs) {
        for (uint32_t i = 0; i < nmodes; ++i) {
            if (!vecs[i]) return tf_fail(TF_ERR_ARG, "%s: the vector of mode %u is NULL", fn, modes[i] + 1);
            for (uint64_t e = 0; e < X->dims[modes[i]]; ++e)
                if (!isfinite(vecs[i][e]))
                    return tf_fail(TF_ERR_ARG, "%s: entry %llu of the vector of mode %u is %g (expected finite values)",
                                   fn, (unsigned long long)e, modes[i] + 1, vecs[i][e]);
            w[modes[i]] = vecs[i];
        }
    }
    const uint32_t k = X->order - nmodes;
    if (k >= 2 && !out)
        return tf_fail(TF_ERR_ARG, "%s: %u modes are left, so out (a sparse tensor) must not be NULL", fn, k);
    if (k < 2 && !dense)
        return tf_fail(TF_ERR_ARG, "%s: %u mode%s left, so dense must not be NULL", fn, k, k == 1 ? " is" : "s are");
    if (k == 0) return reduce_all(X, w, op, dense);
    if (k == 1) {
        uint32_t q = 0;
        while (drop[q]) ++q;
        return reduce_vector(X, w, op, q, dense);
    }
    return reduce_sparse(X, w, drop, op, out);
}

tf_status tf_tensor_ttv(const tf_tensor *X, uint32_t nmodes, const uint32_t *modes, const double *const *vecs,
                        tf_tensor *out, double *dense)
{
    if (!vecs) {
        if (out) memset(out, 0, sizeof *out);
        return tf_fail(TF_ERR_ARG, "tf_tensor_ttv: vecs must not be NULL");
    }
    return reduce("tf_tensor_ttv", X, nmodes, modes, vecs, TF_COLLAPSE_SUM, out, dense);
}

tf_status tf_tensor_collapse(const tf_tensor *X, uint32_t nmodes, const uint32_t *modes, tf_collapse_op op,
                             tf_tensor *out, double *dense)
{
    if (op != TF_COLLAPSE_SUM && op != TF_COLLAPSE_MAX && op != TF_COLLAPSE_MIN) {
        if (out) memset(out, 0, sizeof *out);
        return tf_fail(TF_ERR_ARG, "tf_tensor_collapse: unknown operation %d (sum, max or min)", (int)op);
    }
    return reduce("tf_tensor_collapse", X, nmodes, modes, NULL, op, out, dense);
}

/* ------------------------------------------------ filters: scale, subtensor */

/* out gets the non-zeros j of X with keep(j), in order, each mapped by
 * fill(j, o) (which writes out's entry o). Two passes over blocks: count,
 * then write at the blocks' offsets. */
typedef int (*keep_fn)(const void *ctx, const tf_tensor *X, uint64_t j, double *v);

static tf_status filter(const tf_tensor *X, const uint64_t *dims, const uint64_t *shift, keep_fn keep,
                        const void *ctx, tf_tensor *out)
{
    const uint64_t nnz = X->nnz, nb = (nnz + BLOCK - 1) / BLOCK;
    uint64_t *cnt = NULL;
    TF_TRY(TF_ALLOC(cnt, nb + 1, "filter counts"));
    const int nt = team(nb);
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        uint64_t c = 0;
        double v;
        for (uint64_t j = (uint64_t)b * BLOCK, e = block_end((uint64_t)b, nnz); j < e; ++j) c += keep(ctx, X, j, &v);
        cnt[b] = c;
    }
    uint64_t total = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        const uint64_t c = cnt[b];
        cnt[b] = total;
        total += c;
    }
    tf_status s = tf_tensor_alloc(out, X->order, dims, total);
    if (s != TF_OK) {
        tf_free(cnt);
        return s;
    }
    const uint32_t N = X->order;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t b = 0; b < (int64_t)nb; ++b) {
        uint64_t o = cnt[b];
        double v;
        for (uint64_t j = (uint64_t)b * BLOCK, e = block_end((uint64_t)b, nnz); j < e; ++j) {
            if (!keep(ctx, X, j, &v)) continue;
            for (uint32_t m = 0; m < N; ++m) out->ind[m][o] = (uint32_t)(X->ind[m][j] - shift[m]);
            out->vals[o++] = v;
        }
    }
    tf_free(cnt);
    return TF_OK;
}

typedef struct {
    const double *v;
    uint32_t mode;
    double alpha;
} scale_ctx;

static int scale_keep(const void *ctx, const tf_tensor *X, uint64_t j, double *v)
{
    const scale_ctx *c = ctx;
    double x = c->alpha * X->vals[j];
    if (c->v) x *= c->v[X->ind[c->mode][j]];
    *v = x;
    return x != 0.0;
}

tf_status tf_tensor_scale(const tf_tensor *X, uint32_t mode, const double *v, double alpha, tf_tensor *out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_tensor_scale: out must not be NULL");
    memset(out, 0, sizeof *out);
    TF_TRY(check_tensor("tf_tensor_scale", X));
    if (v && mode >= X->order)
        return tf_fail(TF_ERR_ARG, "tf_tensor_scale: mode %u is outside 1..%u (1-based)", mode + 1, X->order);
    if (!isfinite(alpha)) return tf_fail(TF_ERR_ARG, "tf_tensor_scale: alpha is %g (expected a finite number)", alpha);
    if (v)
        for (uint64_t i = 0; i < X->dims[mode]; ++i)
            if (!isfinite(v[i]))
                return tf_fail(TF_ERR_ARG, "tf_tensor_scale: v[%llu] is %g (expected finite values)",
                               (unsigned long long)i, v[i]);
    const scale_ctx c = {v, v ? mode : 0, alpha};
    const uint64_t shift[TF_MAX_ORDER] = {0};
    return filter(X, X->dims, shift, scale_keep, &c, out);
}

typedef struct {
    const uint64_t *lo, *hi;
} box_ctx;

static int box_keep(const void *ctx, const tf_tensor *X, uint64_t j, double *v)
{
    const box_ctx *c = ctx;
    for (uint32_t m = 0; m < X->order; ++m) {
        const uint64_t i = X->ind[m][j];
        if (i < c->lo[m] || i >= c->hi[m]) return 0;
    }
    *v = X->vals[j];
    return 1;
}

tf_status tf_tensor_subtensor(const tf_tensor *X, const uint64_t *lo, const uint64_t *hi, tf_tensor *out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_tensor_subtensor: out must not be NULL");
    memset(out, 0, sizeof *out);
    TF_TRY(check_tensor("tf_tensor_subtensor", X));
    if (!lo || !hi) return tf_fail(TF_ERR_ARG, "tf_tensor_subtensor: lo and hi must not be NULL");
    uint64_t dims[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m) {
        if (lo[m] >= hi[m] || hi[m] > X->dims[m])
            return tf_fail(TF_ERR_ARG,
                           "tf_tensor_subtensor: mode %u range %llu..%llu is not within 0..%llu with lo < hi", m + 1,
                           (unsigned long long)lo[m], (unsigned long long)hi[m], (unsigned long long)X->dims[m]);
        dims[m] = hi[m] - lo[m];
    }
    const box_ctx c = {lo, hi};
    return filter(X, dims, lo, box_keep, &c, out);
}

/* ---------------------------------------------------------------- permute */

tf_status tf_tensor_permute(const tf_tensor *X, const uint32_t *perm, tf_tensor *out)
{
    if (!out) return tf_fail(TF_ERR_ARG, "tf_tensor_permute: out must not be NULL");
    memset(out, 0, sizeof *out);
    TF_TRY(check_tensor("tf_tensor_permute", X));
    if (!perm) return tf_fail(TF_ERR_ARG, "tf_tensor_permute: perm must not be NULL");
    int seen[TF_MAX_ORDER] = {0};
    uint64_t dims[TF_MAX_ORDER];
    for (uint32_t m = 0; m < X->order; ++m) {
        if (perm[m] >= X->order || seen[perm[m]])
            return tf_fail(TF_ERR_ARG, "tf_tensor_permute: perm is not a permutation of 0..%u (entry %u is %u)",
                           X->order - 1, m, perm[m]);
        seen[perm[m]] = 1;
        dims[m] = X->dims[perm[m]];
    }
    TF_TRY(tf_tensor_alloc(out, X->order, dims, X->nnz));
    for (uint32_t m = 0; m < X->order; ++m) tf_copy_bytes(out->ind[m], X->ind[perm[m]], X->nnz * sizeof(uint32_t));
    tf_copy_bytes(out->vals, X->vals, X->nnz * sizeof(double));
    tf_status s = tf_tensor_sort(out, NULL);
    if (s != TF_OK) tf_tensor_free(out);
    return s;
}
