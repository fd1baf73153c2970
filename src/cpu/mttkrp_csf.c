/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU CSF plan: one tree per mode, rooted at that mode. The MTTKRP of a mode
 * splits the tree's non-zeros evenly over the threads (not its slices, so a
 * heavy slice cannot serialise the run); a thread that starts or ends inside
 * a slice keeps that slice's partial row privately and the partial rows are
 * merged after the parallel region, in thread order. */
#include <stdio.h>
#include <string.h>

#include "seams/plan.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/csf_kernel.h"
#include "cpu/rowops.h"

/* A level below the root is kept as a tree only while its fibres hold on
 * average more than 1/CSF_FLAT_RATIO non-zeros (see fmt/csf.h). */
#define CSF_FLAT_RATIO 0.5
/* A tree's fibres are put in order of length within their parents
 * (fmt/csf_sort.c) when they hold fewer than this many non-zeros on
 * average: below it the exit of the loop over a fibre, mispredicted once
 * per fibre, costs as much as the fibre's multiply-adds (uber-apr14's 4.3,
 * nycflights13's first tree 2.7; its others hold 63, where the order does
 * not matter). */
#define CSF_SHORT_FIBRE 8.0
/* Output rows are written with non-temporal stores when the output is at
 * least this large: it cannot stay in the caches anyway, and the factor
 * rows can. */
#define CSF_STREAM_MIN_BYTES (64ULL << 20)
/* Factor rows are prefetched by the register-held kernel when a factor of
 * the two lowest levels is at least this large; smaller ones stay in a
 * core's L2 cache (512 KiB-2 MiB here), and prefetching them costs time. */
#define CSF_PREFETCH_MIN_BYTES (512ULL << 10)

typedef struct csf_plan {
    uint32_t order;
    int threads;
    int fixed_team; /* > 0: every MTTKRP on exactly this many threads (tests) */
    int fixed_prefetch; /* >= 0: prefetch rows (1) or not (0) whatever their size (tests) */
    uint32_t sorted;    /* trees with their fibres in order of length */
    tf_csf tree[TF_MAX_ORDER]; /* tree[m] is rooted at mode m */
} csf_plan;

static void csf_plan_destroy(void *impl)
{
    csf_plan *cp = impl;
    if (!cp) return;
    for (uint32_t m = 0; m < cp->order; ++m) tf_csf_free(&cp->tree[m]);
    tf_free(cp);
}

/* Splits the leaves into T equal ranges; returns how many jobs are non-empty. */
static int partition(const tf_csf *c, int T, uint64_t R, tf_csf_job *jobs)
{
    int n = 0;
    uint64_t prev_hi = 0;
    for (int t = 0; t < T; ++t) {
        const uint64_t zlo = c->nnz * (uint64_t)t / (uint64_t)T;
        const uint64_t zhi = c->nnz * (uint64_t)(t + 1) / (uint64_t)T;
        if (zlo == zhi) continue;
        tf_csf_job *j = &jobs[n];
        j->csf = c;
        j->R = R;
        j->zlo = zlo;
        j->zhi = zhi;
        tf_csf_leaf_path(c, zlo, j->lo);
        tf_csf_leaf_path(c, zhi - 1, j->hi);
        /* the first job that reaches a root zeroes the empty rows before it */
        j->first_gap_root = n == 0 ? 0 : (j->lo[0] > prev_hi ? j->lo[0] : prev_hi + 1);
        prev_hi = j->hi[0];
        ++n;
    }
    return n;
}

/* Adds the jobs' end rows into out in job order; the first job to reach a
 * root stores its row, later ones add to it. */
static void merge_edges(const tf_csf *c, const tf_csf_job *jobs, int n, uint64_t R, double *out)
{
    const uint32_t *rid = c->fids[0];
    for (int i = 0; i < n; ++i) {
        const tf_csf_job *j = &jobs[i];
        double *row = out + (uint64_t)rid[j->lo[0]] * R;
        if (i > 0 && j->lo[0] == jobs[i - 1].hi[0]) tf_row_add(row, j->edge, R);
        else tf_row_copy(row, j->edge, R);
        if (j->hi[0] != j->lo[0]) tf_row_copy(out + (uint64_t)rid[j->hi[0]] * R, j->edge + R, R);
    }
}

static tf_status csf_plan_mttkrp(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out)
{
    const csf_plan *cp = impl;
    const tf_csf *c = &cp->tree[mode];
    const uint64_t R = out->cols, I = out->rows;
    if (c->nnz == 0) {
        memset(out->data, 0, I * R * sizeof(double));
        return TF_OK;
    }
    /* a small tree: fewer threads than the plan's (their wake-up would cost
     * more than their share); the dense steps after it keep this team */
    int T = cp->fixed_team > 0 ? cp->fixed_team : tf_mttkrp_team(cp->threads, c->nnz, R, c->order);
    if ((uint64_t)T > c->nnz) T = (int)c->nnz;
    tf_team_note(T);
    tf_csf_job *jobs = NULL;
    double *scratch = NULL;
    const uint64_t per_job = (2 + c->order) * R; /* edge rows + accumulators */
    TF_TRY(TF_CALLOC(jobs, (uint64_t)T, "MTTKRP thread jobs"));
    tf_status s = TF_ALLOC(scratch, (uint64_t)T * per_job, "MTTKRP thread rows");
    if (s != TF_OK) { tf_free(jobs); return s; }

    const int n = partition(c, T, R, jobs);
    for (int i = 0; i < n; ++i) {
        tf_csf_job *j = &jobs[i];
        for (uint32_t l = 1; l < c->order; ++l) j->F[l] = factors[c->mode_order[l]].data;
        j->out = out->data;
        j->edge = scratch + (uint64_t)i * per_job;
        j->acc = j->edge + 2 * R;
        j->stream = I * R * sizeof(double) >= CSF_STREAM_MIN_BYTES;
        j->prefetch = cp->fixed_prefetch > 0;
        for (uint32_t l = c->flat > 1 ? c->flat - 1 : 1; cp->fixed_prefetch < 0 && l < c->order; ++l)
            if (c->dims[l] * R * sizeof(double) >= CSF_PREFETCH_MIN_BYTES) j->prefetch = 1;
    }
#pragma omp parallel for num_threads(T) schedule(static, 1) if (T > 1)
    for (int i = 0; i < n; ++i) tf_csf_mttkrp_job(&jobs[i]);

    merge_edges(c, jobs, n, R, out->data);
    /* empty rows after the last root */
    const uint64_t tail = (uint64_t)c->fids[0][c->nodes[0] - 1] + 1;
    if (tail < I) memset(out->data + tail * R, 0, (I - tail) * R * sizeof(double));
    tf_free(scratch);
    tf_free(jobs);
    return TF_OK;
}

static const tf_plan_ops csf_ops = {.mttkrp = csf_plan_mttkrp, .destroy = csf_plan_destroy};

void tf_cpu_csf_plan_fix_team(struct tf_plan *p, int team)
{
    if (p && p->ops == &csf_ops) ((csf_plan *)p->impl)->fixed_team = team;
}

uint32_t tf_cpu_csf_plan_sorted(const struct tf_plan *p)
{
    return p && p->ops == &csf_ops ? ((const csf_plan *)p->impl)->sorted : 0;
}

void tf_cpu_csf_plan_fix_prefetch(struct tf_plan *p, int on)
{
    if (p && p->ops == &csf_ops) ((csf_plan *)p->impl)->fixed_prefetch = on;
}

tf_status tf_cpu_csf_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p)
{
    /* csf: the trees as built; csf-short: every tree by fibre length; auto:
     * the trees whose fibres are short (CSF_SHORT_FIBRE) */
    const int by_length = o->format == TF_FORMAT_CSF_SHORT ? 1 : o->format == TF_FORMAT_CSF ? 0 : -1;
    return tf_cpu_csf_plan_build_flat(X, o, CSF_FLAT_RATIO, by_length, p);
}

tf_status tf_cpu_csf_plan_build_flat(const tf_tensor *X, const tf_plan_opts *o, double flat_ratio,
                                     int by_length, tf_plan *p)
{
    csf_plan *cp = NULL;
    TF_TRY(TF_CALLOC(cp, 1, "CSF plan"));
    cp->order = X->order;
    cp->threads = p->threads;
    cp->fixed_prefetch = -1;
    uint64_t bytes = sizeof *cp;
    for (uint32_t m = 0; m < X->order; ++m) {
        uint32_t mo[TF_MAX_ORDER];
        tf_csf_default_order(X, m, mo);
        tf_status s = tf_csf_build(X, mo, flat_ratio, p->threads, &cp->tree[m]);
        const double mean = tf_csf_mean_fibre(&cp->tree[m]);
        if (s == TF_OK && cp->tree[m].flat >= 2 && (by_length > 0 || (by_length < 0 && mean < CSF_SHORT_FIBRE))) {
            s = tf_csf_sort_fibres(&cp->tree[m], p->threads);
            cp->sorted += s == TF_OK;
        }
        if (s != TF_OK) { csf_plan_destroy(cp); return s; }
        bytes += tf_csf_bytes(&cp->tree[m]);
    }
    p->ops = &csf_ops;
    p->impl = cp;
    p->bytes = bytes;
    /* csf-short says how many trees it ordered (all but those without a
     * fibre level); auto's and csf's desc is the same */
    if (by_length > 0)
        snprintf(p->desc, sizeof p->desc, "cpu csf-short (%u of %u trees by fibre length), %d thread%s", cp->sorted,
                 X->order, p->threads, p->threads == 1 ? "" : "s");
    else
        snprintf(p->desc, sizeof p->desc, "cpu csf, %d thread%s", p->threads, p->threads == 1 ? "" : "s");
    return TF_OK;
}
