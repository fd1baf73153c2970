/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend of completion by ALS (the vtable of src/seams/complete.h):
 * per mode a copy of the training entries sorted by that mode's index and
 * its row offsets, the factors and the kept (best) ones in host memory;
 * the row solves are cpu/complete_rows.c, the errors cpu/model_values.c's
 * pass.
 *
 * Distributed (several ranks, seams/dist.h; as CP-APR's CPU ranks): rank r
 * holds, per mode, the training entries whose index lies in its rows
 * [row_lo[r], row_lo[r+1]) and solves those rows alone (the same kernel,
 * the same bits as one process); after each mode every rank's rows go to
 * every rank (allgatherv), so every rank holds every factor, the kept ones
 * too. The sums of squared errors are each rank's part (the training
 * entries of its mode-1 rows, a contiguous range of the validation and test
 * entries) summed over the ranks, the same on every rank, so every rank
 * keeps and stops alike; a singular row fails every rank with the lowest
 * such rank's message (the single process's). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "seams/complete.h"
#include "seams/dist.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/complete_rows.h"
#include "cpu/model_values.h"

typedef struct cpu_complete {
    uint32_t order;
    uint64_t rank;
    uint64_t dims[TF_MAX_ORDER];
    int threads;
    tf_tensor by[TF_MAX_ORDER];   /* the training entries sorted by mode m first */
    uint64_t *ptr[TF_MAX_ORDER];  /* dims[m] + 1 row offsets into by[m]         */
    const tf_tensor *sets[3];     /* train (by[0]), val, test (borrowed; NULL: none) */
    tf_ktensor cur, kept;         /* lambda all ones                             */
    double *row_sse;              /* max_dim: the rows' errors of a fused update */
    uint64_t max_dim;
    int started;
    const tf_dist *dist;                  /* NULL: one process                                   */
    const uint64_t *row_lo[TF_MAX_ORDER]; /* distributed: rank r's rows [row_lo[r], row_lo[r+1])  */
    tf_tensor part[2];                    /* distributed: views of this rank's val and test entries */
} cpu_complete;

/* This process's rows of mode m: all of them, or its rank's range. */
static void my_rows(const cpu_complete *c, uint32_t m, uint64_t *lo, uint64_t *hi)
{
    *lo = c->dist ? c->row_lo[m][c->dist->rank] : 0;
    *hi = c->dist ? c->row_lo[m][c->dist->rank + 1] : c->dims[m];
}

/* Over ranks: s (this rank's status of a step) made every rank's. The
 * lowest failing rank's status and message go to every rank, which fail
 * with them (tf_fail_shared); TF_OK when none failed. */
static tf_status share_status(const cpu_complete *c, tf_status s)
{
    if (!c->dist) return s;
    struct {
        int32_t status;
        char msg[508];
    } what;
    memset(&what, 0, sizeof what);
    uint64_t holder = s != TF_OK ? (uint64_t)c->dist->rank : UINT64_MAX;
    if (s != TF_OK) {
        what.status = (int32_t)s;
        snprintf(what.msg, sizeof what.msg, "%s", tf_last_error());
    }
    TF_TRY(c->dist->allreduce_u64(&holder, 1, TF_RANKS_MIN));
    if (holder == UINT64_MAX) return TF_OK;
    TF_TRY(c->dist->bcast_from(&what, sizeof what, (int)holder));
    return tf_fail_shared((tf_status)what.status, "%s", what.msg);
}

static tf_status cpu_init(void *ctx, const tf_ktensor *start)
{
    cpu_complete *c = ctx;
    if (!start || start->order != c->order || start->rank != c->rank)
        return tf_fail(TF_ERR_ARG, "completion backend: the start does not match order %u rank %llu", c->order,
                       (unsigned long long)c->rank);
    for (uint32_t m = 0; m < c->order; ++m) {
        if (start->factors[m].rows != c->dims[m] || start->factors[m].cols != c->rank)
            return tf_fail(TF_ERR_ARG, "completion backend: start factor %u is %llu x %llu, expected %llu x %llu",
                           m + 1, (unsigned long long)start->factors[m].rows,
                           (unsigned long long)start->factors[m].cols, (unsigned long long)c->dims[m],
                           (unsigned long long)c->rank);
        memcpy(c->cur.factors[m].data, start->factors[m].data, c->dims[m] * c->rank * sizeof(double));
    }
    c->started = 1;
    return TF_OK;
}

static tf_status cpu_update(void *ctx, uint32_t mode, double l2, double *sse)
{
    cpu_complete *c = ctx;
    if (mode >= c->order || !c->started)
        return tf_fail(TF_ERR_ARG, "completion backend: mode %u outside 1..%u, or init not called", mode + 1,
                       c->order);
    tf_complete_rows_in in;
    memset(&in, 0, sizeof in);
    in.X = &c->by[mode];
    in.ptr = c->ptr[mode];
    in.mode = mode;
    uint64_t lo, hi;
    my_rows(c, mode, &lo, &hi);
    in.rows = hi - lo;
    in.first = lo;
    for (uint32_t m = 0; m < c->order; ++m) in.A[m] = c->cur.factors[m].data;
    in.R = c->rank;
    in.l2 = l2;
    in.threads = c->threads;
    if (sse) {
        if (!c->row_sse) TF_TRY(TF_ALLOC(c->row_sse, c->max_dim, "completion row errors"));
        in.row_sse = c->row_sse;
    }
    TF_TRY(share_status(c, tf_cpu_complete_rows(&in, c->cur.factors[mode].data + lo * c->rank)));
    if (sse) *sse = tf_cpu_complete_rows_sse(&in);
    if (!c->dist) return TF_OK;
    TF_TRY(c->dist->allgather_rows(c->cur.factors[mode].data, c->row_lo[mode], c->rank, c->dist->round_bytes));
    return sse ? c->dist->allreduce_sum(sse, 1) : TF_OK;
}

static tf_status sse_of(const cpu_complete *c, const tf_ktensor *k, tf_complete_set set, double *sse)
{
    *sse = 0.0;
    if ((unsigned)set > TF_COMPLETE_TEST) return tf_fail(TF_ERR_ARG, "completion backend: unknown set %d", (int)set);
    const tf_tensor *X = c->sets[set];
    if (X && X->nnz) TF_TRY(tf_cpu_model_sse(X, k, c->threads, sse));
    return c->dist ? c->dist->allreduce_sum(sse, 1) : TF_OK;
}

static tf_status cpu_sse(void *ctx, tf_complete_set set, double *sse)
{
    const cpu_complete *c = ctx;
    return sse_of(c, &c->cur, set, sse);
}

static tf_status cpu_kept_sse(void *ctx, tf_complete_set set, double *sse)
{
    const cpu_complete *c = ctx;
    return sse_of(c, &c->kept, set, sse);
}

static tf_status cpu_frob_sq(void *ctx, double *sq)
{
    const cpu_complete *c = ctx;
    double s = 0.0;
    for (uint32_t m = 0; m < c->order; ++m) {
        const double *a = c->cur.factors[m].data;
        for (uint64_t j = 0; j < c->dims[m] * c->rank; ++j) s += a[j] * a[j];
    }
    *sq = s;
    return TF_OK;
}

static tf_status cpu_keep(void *ctx)
{
    cpu_complete *c = ctx;
    for (uint32_t m = 0; m < c->order; ++m)
        memcpy(c->kept.factors[m].data, c->cur.factors[m].data, c->dims[m] * c->rank * sizeof(double));
    return TF_OK;
}

static tf_status cpu_result(void *ctx, tf_ktensor *out)
{
    const cpu_complete *c = ctx;
    for (uint32_t m = 0; m < c->order; ++m)
        memcpy(out->factors[m].data, c->kept.factors[m].data, c->dims[m] * c->rank * sizeof(double));
    return TF_OK;
}

static void cpu_destroy(void *ctx)
{
    cpu_complete *c = ctx;
    if (!c) return;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        tf_tensor_free(&c->by[m]);
        tf_free(c->ptr[m]);
    }
    tf_ktensor_free(&c->cur);
    tf_ktensor_free(&c->kept);
    tf_free(c->row_sse);
    tf_free(c);
}

static const tf_complete_backend_ops cpu_ops = {cpu_init, cpu_update, cpu_sse, cpu_frob_sq, cpu_keep,
                                                cpu_kept_sse, cpu_result, cpu_destroy};

/* Mode m's copy by[m] (of this process's rows lo..hi-1): sorted by m, then
 * by the other modes in order; its row offsets (hi - lo + 1). */
static tf_status group(cpu_complete *c, uint32_t m)
{
    uint64_t lo, hi;
    my_rows(c, m, &lo, &hi);
    uint32_t order[TF_MAX_ORDER];
    uint32_t n = 0;
    order[n++] = m;
    for (uint32_t k = 0; k < c->order; ++k)
        if (k != m) order[n++] = k;
    TF_TRY(tf_tensor_sort(&c->by[m], order));
    const uint64_t rows = hi - lo;
    TF_TRY(TF_ALLOC(c->ptr[m], rows + 1, "completion row offsets"));
    uint64_t *p = c->ptr[m];
    memset(p, 0, (rows + 1) * sizeof *p);
    const uint32_t *ind = c->by[m].ind[m];
    for (uint64_t k = 0; k < c->by[m].nnz; ++k) {
        if (ind[k] < lo || ind[k] >= hi)
            return tf_fail(TF_ERR_ARG, "completion backend: a mode-%u entry of row %llu is outside this rank's rows "
                                       "%llu..%llu", m + 1, (unsigned long long)ind[k] + 1,
                           (unsigned long long)lo + 1, (unsigned long long)hi);
        ++p[ind[k] - lo + 1];
    }
    for (uint64_t i = 0; i < rows; ++i) p[i + 1] += p[i];
    return TF_OK;
}

/* The backend without its entries (make_sets groups them). */
static tf_status create(const tf_tensor *train, const tf_complete_opts *o, cpu_complete **made)
{
    cpu_complete *c = NULL;
    *made = NULL;
    TF_TRY(TF_ALLOC(c, 1, "completion backend"));
    memset(c, 0, sizeof *c);
    c->order = train->order;
    c->rank = o->rank;
    memcpy(c->dims, train->dims, sizeof c->dims);
    for (uint32_t m = 0; m < c->order; ++m)
        if (c->dims[m] > c->max_dim) c->max_dim = c->dims[m];
    c->threads = tf_resolve_threads(o->threads);
    tf_status s = tf_ktensor_alloc(&c->cur, c->order, c->dims, c->rank);
    if (s == TF_OK) s = tf_ktensor_alloc(&c->kept, c->order, c->dims, c->rank);
    if (s == TF_OK)
        for (uint64_t r = 0; r < c->rank; ++r) c->cur.lambda[r] = c->kept.lambda[r] = 1.0;
    if (s != TF_OK) {
        cpu_destroy(c);
        return s;
    }
    *made = c;
    return TF_OK;
}

tf_status tf_cpu_complete_backend_create(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                                         const tf_complete_opts *o, tf_complete_backend *out)
{
    cpu_complete *c;
    TF_TRY(create(train, o, &c));
    tf_status s = TF_OK;
    for (uint32_t m = 0; m < c->order && s == TF_OK; ++m) {
        s = tf_tensor_copy(train, &c->by[m]);
        if (s == TF_OK) s = group(c, m);
    }
    if (s != TF_OK) {
        cpu_destroy(c);
        return s;
    }
    c->sets[TF_COMPLETE_TRAIN] = &c->by[0];
    c->sets[TF_COMPLETE_VAL] = val;
    c->sets[TF_COMPLETE_TEST] = test;
    out->ops = &cpu_ops;
    out->ctx = c;
    snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, per-row Cholesky over %u sorted cop%s, %d thread%s",
             c->order, c->order == 1 ? "y" : "ies", c->threads, c->threads == 1 ? "" : "s");
    return TF_OK;
}

/* Entry r * n / parts, rounded down, without overflow. */
static uint64_t cut(uint64_t n, uint64_t r, uint64_t parts)
{
    return n / parts * r + n % parts * r / parts;
}

/* This rank's contiguous range of X's entries (a view; NULL X: NULL). */
static const tf_tensor *rank_part(const tf_tensor *X, const tf_dist *d, tf_tensor *view)
{
    if (!X) return NULL;
    const uint64_t P = (uint64_t)d->size, k0 = cut(X->nnz, (uint64_t)d->rank, P);
    *view = *X;
    view->nnz = cut(X->nnz, (uint64_t)d->rank + 1, P) - k0;
    for (uint32_t m = 0; m < X->order; ++m) view->ind[m] = X->ind[m] + k0;
    view->vals = X->vals + k0;
    return view;
}

tf_status tf_cpu_complete_backend_create_dist(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                                              const tf_complete_opts *o, tf_tensor *shard,
                                              const uint64_t *const *row_lo, const tf_dist *dist,
                                              tf_complete_backend *out)
{
    cpu_complete *c;
    tf_status s = create(train, o, &c);
    if (s != TF_OK) {
        for (uint32_t m = 0; m < train->order; ++m) tf_tensor_free(&shard[m]);
        return s;
    }
    c->dist = dist;
    for (uint32_t m = 0; m < c->order; ++m) {
        c->by[m] = shard[m]; /* taken over: freed by cpu_destroy */
        memset(&shard[m], 0, sizeof shard[m]);
        c->row_lo[m] = row_lo[m];
    }
    for (uint32_t m = 0; m < c->order && s == TF_OK; ++m) s = group(c, m);
    if (s != TF_OK) {
        cpu_destroy(c);
        return s;
    }
    c->sets[TF_COMPLETE_TRAIN] = &c->by[0]; /* every entry in one rank's mode-1 rows */
    c->sets[TF_COMPLETE_VAL] = rank_part(val, dist, &c->part[0]);
    c->sets[TF_COMPLETE_TEST] = rank_part(test, dist, &c->part[1]);
    out->ops = &cpu_ops;
    out->ctx = c;
    snprintf(out->plan_desc, sizeof out->plan_desc, "CPU, per-row Cholesky, %d ranks (%d thread%s each)",
             dist->size, c->threads, c->threads == 1 ? "" : "s");
    return TF_OK;
}
