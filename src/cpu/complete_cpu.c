/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU backend of completion by ALS (the vtable of src/seams/complete.h):
 * per mode a copy of the training entries sorted by that mode's index and
 * its row offsets, the factors and the kept (best) ones in host memory;
 * the row solves are cpu/complete_rows.c, the errors cpu/model_values.c's
 * pass. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "seams/complete.h"
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
} cpu_complete;

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
    in.rows = c->dims[mode];
    for (uint32_t m = 0; m < c->order; ++m) in.A[m] = c->cur.factors[m].data;
    in.R = c->rank;
    in.l2 = l2;
    in.threads = c->threads;
    if (sse) {
        if (!c->row_sse) TF_TRY(TF_ALLOC(c->row_sse, c->max_dim, "completion row errors"));
        in.row_sse = c->row_sse;
    }
    TF_TRY(tf_cpu_complete_rows(&in, c->cur.factors[mode].data));
    if (sse) *sse = tf_cpu_complete_rows_sse(&in);
    return TF_OK;
}

static tf_status sse_of(const cpu_complete *c, const tf_ktensor *k, tf_complete_set set, double *sse)
{
    *sse = 0.0;
    if ((unsigned)set > TF_COMPLETE_TEST) return tf_fail(TF_ERR_ARG, "completion backend: unknown set %d", (int)set);
    const tf_tensor *X = c->sets[set];
    if (!X || !X->nnz) return TF_OK;
    return tf_cpu_model_sse(X, k, c->threads, sse);
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
    for (uint32_t m = 0; m < c->order; ++m) {
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

/* Mode m's copy: sorted by m, then by the other modes in order; its row offsets. */
static tf_status group(cpu_complete *c, const tf_tensor *train, uint32_t m)
{
    TF_TRY(tf_tensor_copy(train, &c->by[m]));
    uint32_t order[TF_MAX_ORDER];
    uint32_t n = 0;
    order[n++] = m;
    for (uint32_t k = 0; k < c->order; ++k)
        if (k != m) order[n++] = k;
    TF_TRY(tf_tensor_sort(&c->by[m], order));
    TF_TRY(TF_ALLOC(c->ptr[m], c->dims[m] + 1, "completion row offsets"));
    uint64_t *p = c->ptr[m];
    memset(p, 0, (c->dims[m] + 1) * sizeof *p);
    const uint32_t *ind = c->by[m].ind[m];
    for (uint64_t k = 0; k < train->nnz; ++k) ++p[ind[k] + 1];
    for (uint64_t i = 0; i < c->dims[m]; ++i) p[i + 1] += p[i];
    return TF_OK;
}

tf_status tf_cpu_complete_backend_create(const tf_tensor *train, const tf_tensor *val, const tf_tensor *test,
                                         const tf_complete_opts *o, tf_complete_backend *out)
{
    cpu_complete *c = NULL;
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
    for (uint32_t m = 0; m < c->order && s == TF_OK; ++m) s = group(c, train, m);
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
