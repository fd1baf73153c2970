/* SPDX-License-Identifier: BSD-3-Clause */
/* TTMc on the CPU over compressed-fibre trees (Smith & Karypis, "Accelerating
 * the Tucker decomposition with compressed sparse tensors", Euro-Par 2017).
 *
 * For mode n the tree is rooted at n (level 0), the other modes below it by
 * increasing length (fewer nodes high up, where the Kronecker products are
 * long), every level compressed. A node q of level l stands for the sum over
 * its subtree
 *   S(q) = sum over its children c of U_{m(l+1)}(i_c, :) kron S(c),
 * S of a leaf being its value, so S(q) has P(l+1) = prod_{j > l} R_{m(j)}
 * entries (the deepest mode fastest) and each inner node's Kronecker product
 * is formed once for all the non-zeros below it -- the memoisation. A root
 * slice's S is the row i of Y_(n), up to the order of its columns, which a
 * fixed map puts into tf_ttmc's (the lowest mode fastest; none needed when
 * the levels below the root run by decreasing mode number).
 *
 * Threads: a root slice is one row of Y, so threads take whole slices (no
 * two write one row; dynamic schedule for skewed slices) and the rows with
 * no non-zero are written as zeros by the slice after them. A mode of few
 * slices (a short mode: fewer than 64) is cut instead into a fixed number of
 * chunks of about equal non-zeros, each summed into a partial Y of its own,
 * the partials then added in chunk order. Neither way depends on the thread
 * count, so neither does the result. */
#include <string.h>

#include "seams/tucker.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "fmt/csf.h"

#define SHORT_MODE_SLICES 64u /* fewer root slices than this: chunks          */
#define MAX_CHUNKS 16u

static uint64_t partial_limit = (uint64_t)1 << 24; /* doubles of the chunks' partials */
static uint32_t forced_chunks;

void tf_cpu_ttmc_set_chunking(uint64_t partial_doubles, uint32_t chunks)
{
    partial_limit = partial_doubles;
    forced_chunks = chunks;
}

struct tf_cpu_ttmc {
    uint32_t order;
    int threads;
    uint64_t nnz;
    uint64_t dims[TF_MAX_ORDER];
    int have[TF_MAX_ORDER];
    tf_csf tree[TF_MAX_ORDER];
};

void tf_cpu_ttmc_free(tf_cpu_ttmc *p)
{
    if (!p) return;
    for (uint32_t m = 0; m < p->order; ++m)
        if (p->have[m]) tf_csf_free(&p->tree[m]);
    tf_free(p);
}

tf_status tf_cpu_ttmc_create(const tf_tensor *X, const int *want, int threads, tf_cpu_ttmc **out)
{
    *out = NULL;
    tf_cpu_ttmc *p = NULL;
    TF_TRY(TF_CALLOC(p, 1, "TTMc trees"));
    p->order = X->order;
    p->threads = tf_resolve_threads(threads);
    p->nnz = X->nnz;
    memcpy(p->dims, X->dims, sizeof p->dims);
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < X->order && s == TF_OK; ++m) {
        if (want && !want[m]) continue;
        uint32_t mo[TF_MAX_ORDER];
        tf_csf_default_order(X, m, mo);
        /* a flat ratio above any level's share: every level a tree level */
        s = tf_csf_build(X, mo, 2.0, p->threads, &p->tree[m]);
        if (s == TF_OK) p->have[m] = 1;
    }
    if (s != TF_OK) {
        tf_cpu_ttmc_free(p);
        return s;
    }
    *out = p;
    return TF_OK;
}

/* One run: the tree, its levels' factors and sizes. */
typedef struct run {
    const tf_csf *t;
    uint32_t N;
    const double *U[TF_MAX_ORDER]; /* per level (l >= 1): U of its mode */
    uint64_t R[TF_MAX_ORDER];      /* per level: its rank              */
    uint64_t P[TF_MAX_ORDER + 1];  /* P[l] = prod_{j >= l} R[j]; P[N] = 1 */
    uint64_t C;                    /* P[1]                              */
    const uint64_t *colmap;        /* level layout -> tf_ttmc column, or NULL */
} run;

static inline void axpy(double a, const double *x, double *y, uint64_t n)
{
#pragma omp simd
    for (uint64_t k = 0; k < n; ++k) y[k] += a * x[k];
}

static void node_sum(const run *r, uint32_t l, uint64_t q, double *out, double *const *scr);

/* dst (P[lc] entries, level layout) += the contribution of child c (level lc):
 * U_{m(lc)}(i_c, :) kron S(c). */
static void add_child(const run *r, uint32_t lc, uint64_t c, double *dst, double *const *scr)
{
    const tf_csf *t = r->t;
    const uint64_t R = r->R[lc];
    const double *u = r->U[lc] + (uint64_t)t->fids[lc][c] * R;
    if (lc == r->N - 1) { /* a leaf: its value */
        axpy(t->vals[c], u, dst, R);
        return;
    }
    const uint64_t P = r->P[lc + 1];
    double *s = scr[lc];
    node_sum(r, lc, c, s, scr);
    for (uint64_t a = 0; a < R; ++a)
        if (u[a] != 0.0) axpy(u[a], s, dst + a * P, P);
}

/* out (P[l + 1] entries) = S(q) for node q of level l (l <= N - 2). */
static void node_sum(const run *r, uint32_t l, uint64_t q, double *out, double *const *scr)
{
    memset(out, 0, r->P[l + 1] * sizeof *out);
    const uint64_t *fp = r->t->fptr[l];
    for (uint64_t c = fp[q]; c < fp[q + 1]; ++c) add_child(r, l + 1, c, out, scr);
}

/* Y's row i from a level-layout row. */
static void put_row(const run *r, const double *row, double *y)
{
    if (!r->colmap) {
        memcpy(y, row, r->C * sizeof *y);
        return;
    }
    for (uint64_t x = 0; x < r->C; ++x) y[r->colmap[x]] = row[x];
}

/* Per-thread scratch: a row of C, then S of each inner level (scr[l], P[l+1]). */
static uint64_t scratch_doubles(const run *r)
{
    uint64_t n = r->C;
    for (uint32_t l = 1; l + 1 < r->N; ++l) n += r->P[l + 1];
    return n;
}

static void scratch_split(const run *r, double *base, double **row, double **scr)
{
    *row = base;
    base += r->C;
    for (uint32_t l = 1; l + 1 < r->N; ++l) {
        scr[l] = base;
        base += r->P[l + 1];
    }
}

/* The first leaf below node q of level 1. */
static uint64_t first_leaf(const run *r, uint64_t q)
{
    for (uint32_t l = 1; l + 1 < r->N; ++l) q = r->t->fptr[l][q];
    return q;
}

/* Rows owned by threads: one root slice at a time. */
static tf_status by_slices(const run *r, uint64_t I, double *Y, int threads)
{
    const tf_csf *t = r->t;
    const uint64_t C = r->C, ns = t->nodes[0];
    const uint64_t per = scratch_doubles(r);
    double *scratch = NULL;
    TF_TRY(TF_ALLOC(scratch, per * (uint64_t)threads, "TTMc scratch"));
    if (ns == 0) memset(Y, 0, I * C * sizeof *Y);
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        double *row, *scr[TF_MAX_ORDER] = {0};
        scratch_split(r, scratch + per * (uint64_t)tf_thread_id(), &row, scr);
#pragma omp for schedule(dynamic, 1)
        for (int64_t s = 0; s < (int64_t)ns; ++s) {
            const uint64_t i = t->fids[0][s];
            /* the empty rows before this slice (and after the last) */
            const uint64_t prev = s ? (uint64_t)t->fids[0][s - 1] + 1 : 0;
            if (i > prev) memset(Y + prev * C, 0, (i - prev) * C * sizeof *Y);
            if ((uint64_t)s == ns - 1 && i + 1 < I) memset(Y + (i + 1) * C, 0, (I - i - 1) * C * sizeof *Y);
            node_sum(r, 0, (uint64_t)s, row, scr);
            put_row(r, row, Y + i * C);
        }
    }
    tf_free(scratch);
    return TF_OK;
}

/* A short mode: chunks of level-1 nodes of about equal non-zeros, each into
 * its own partial (level layout), added in chunk order. */
static tf_status by_chunks(const run *r, uint64_t I, double *Y, int threads, uint32_t chunks)
{
    const tf_csf *t = r->t;
    const uint64_t C = r->C, n1 = t->nodes[1], IC = I * C;
    const uint64_t per = scratch_doubles(r);
    uint64_t lo[MAX_CHUNKS + 1];
    /* chunk k starts at the first level-1 node whose first leaf is at or past k nnz / chunks */
    lo[0] = 0;
    lo[chunks] = n1;
    for (uint32_t k = 1; k < chunks; ++k) {
        const uint64_t target = t->nnz * k / chunks;
        uint64_t a = lo[k - 1], b = n1;
        while (a < b) {
            const uint64_t mid = a + (b - a) / 2;
            if (first_leaf(r, mid) < target) a = mid + 1;
            else b = mid;
        }
        lo[k] = a;
    }
    double *part = NULL, *scratch = NULL;
    tf_status s = TF_ALLOC(part, IC * chunks, "TTMc partial outputs");
    if (s == TF_OK) s = TF_ALLOC(scratch, per * (uint64_t)threads, "TTMc scratch");
    if (s != TF_OK) {
        tf_free(part);
        return s;
    }
#pragma omp parallel num_threads(threads) if (threads > 1)
    {
        double *row, *scr[TF_MAX_ORDER] = {0};
        scratch_split(r, scratch + per * (uint64_t)tf_thread_id(), &row, scr);
        (void)row;
#pragma omp for schedule(dynamic, 1)
        for (int64_t k = 0; k < (int64_t)chunks; ++k) {
            double *p = part + (uint64_t)k * IC;
            memset(p, 0, IC * sizeof *p);
            if (lo[k] >= lo[k + 1]) continue;
            /* the root slice holding the chunk's first node */
            uint64_t a = 0, b = t->nodes[0];
            while (b - a > 1) {
                const uint64_t mid = a + (b - a) / 2;
                if (t->fptr[0][mid] <= lo[k]) a = mid;
                else b = mid;
            }
            for (uint64_t q = lo[k]; q < lo[k + 1]; ++q) {
                while (t->fptr[0][a + 1] <= q) ++a;
                add_child(r, 1, q, p + (uint64_t)t->fids[0][a] * C, scr);
            }
        }
    }
    /* Y = the partials' sum in chunk order, into tf_ttmc's columns */
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1 && IC > 65536)
    for (int64_t i = 0; i < (int64_t)I; ++i) {
        double *y = Y + (uint64_t)i * C;
        for (uint64_t x = 0; x < C; ++x) {
            double v = 0.0;
            for (uint32_t k = 0; k < chunks; ++k) v += part[(uint64_t)k * IC + (uint64_t)i * C + x];
            y[r->colmap ? r->colmap[x] : x] = v;
        }
    }
    tf_free(part);
    tf_free(scratch);
    return TF_OK;
}

tf_status tf_cpu_ttmc_run(tf_cpu_ttmc *p, uint32_t mode, const tf_matrix *U, double *Y)
{
    if (mode >= p->order || !p->have[mode])
        return tf_fail(TF_ERR_ARG, "TTMc: no tree was built for mode %u", mode + 1);
    const tf_csf *t = &p->tree[mode];
    const uint32_t N = p->order;
    run r;
    memset(&r, 0, sizeof r);
    r.t = t;
    r.N = N;
    for (uint32_t l = 1; l < N; ++l) {
        r.U[l] = U[t->mode_order[l]].data;
        r.R[l] = U[t->mode_order[l]].cols;
    }
    r.P[N] = 1;
    for (uint32_t l = N - 1; l >= 1; --l) r.P[l] = r.P[l + 1] * r.R[l];
    r.C = r.P[1];
    const uint64_t I = p->dims[mode], C = r.C;
    /* level layout -> tf_ttmc's column: the identity when the levels below
     * the root run by decreasing mode number */
    int identity = 1;
    for (uint32_t l = 2; l < N; ++l) identity &= t->mode_order[l] < t->mode_order[l - 1];
    uint64_t *colmap = NULL;
    if (!identity) {
        TF_TRY(TF_ALLOC(colmap, C, "TTMc column map"));
        uint64_t stride[TF_MAX_ORDER] = {0}, st = 1;
        for (uint32_t m = 0; m < N; ++m)
            if (m != mode) stride[m] = st, st *= U[m].cols;
        for (uint64_t x = 0; x < C; ++x) {
            uint64_t rest = x, col = 0;
            for (uint32_t l = N - 1; l >= 1; --l) { /* the deepest level fastest */
                col += (rest % r.R[l]) * stride[t->mode_order[l]];
                rest /= r.R[l];
            }
            colmap[x] = col;
        }
        r.colmap = colmap;
    }
    /* the work: leaves R[N-1] each, an inner node of level l P[l] */
    uint64_t work = p->nnz * r.R[N - 1];
    for (uint32_t l = 1; l + 1 < N; ++l) work += t->nodes[l] * r.P[l];
    uint32_t chunks = 0;
    if (forced_chunks) {
        chunks = forced_chunks;
    } else if (t->nodes[0] < SHORT_MODE_SLICES && t->nodes[1] >= 2) {
        uint64_t c = p->nnz / 4096; /* at least 4096 non-zeros a chunk */
        if (c > MAX_CHUNKS) c = MAX_CHUNKS;
        if (c > t->nodes[1]) c = t->nodes[1];
        while (c > 1 && c * I * C > partial_limit) --c;
        chunks = c >= 2 ? (uint32_t)c : 0;
    }
    if (chunks > MAX_CHUNKS) chunks = MAX_CHUNKS;
    if (chunks && t->nodes[1] < chunks) chunks = (uint32_t)t->nodes[1];
    const uint64_t units = chunks >= 2 ? chunks : t->nodes[0];
    const int threads = tf_team_for_work(p->threads, units ? units : 1, work + I * C);
    tf_status s = chunks >= 2 && t->nnz ? by_chunks(&r, I, Y, threads, chunks) : by_slices(&r, I, Y, threads);
    tf_free(colmap);
    return s;
}
