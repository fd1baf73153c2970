/* SPDX-License-Identifier: BSD-3-Clause */
/* CPU CSF plan: one tree per mode, rooted at that mode. The MTTKRP of a mode
 * splits the tree's non-zeros into equal jobs (not its slices, so a heavy
 * slice cannot serialise the run); a job that starts or ends inside a slice
 * keeps that slice's partial row privately and the partial rows are merged
 * after the parallel region, in job order. The jobs depend on the tree and
 * the rank only, never on the thread count, so every team size sums each
 * output row in the same order: the same bits on 1 or 32 threads (methods
 * that amplify rounding, such as AO-ADMM's inner stopping test, then give
 * the same result on any machine size). */
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
/* Non-zeros per job: a job cost ~0.2 us besides its non-zeros (uber-apr14 at
 * R 16, one thread: 1024 per job +8 %, 2048 +4 %, 4096 +2 % against one job;
 * ~0.05 us since the kernel's row zeroing is no memset: CMakeLists.txt), and
 * the team uber-apr14's work gets (~10 threads) still has ten jobs each (102
 * a tree). */
#define CSF_JOB_NNZ 4096
/* At most this many jobs; at a rank whose edge rows (2 x R doubles a job)
 * would pass CSF_EDGE_BYTES, consecutive jobs are run as one. */
#define CSF_MAX_JOBS 16384
#define CSF_EDGE_BYTES (64ULL << 20)

/* How many jobs a tree of nnz non-zeros is split into: a function of the
 * tree alone (the same sums for any team). */
static uint64_t job_count(uint64_t nnz)
{
    const uint64_t k = nnz / CSF_JOB_NNZ;
    return k < 1 ? 1 : k > CSF_MAX_JOBS ? CSF_MAX_JOBS : k;
}

/* A tree's jobs: leaf ranges and the leaf paths of their ends, made once
 * with the tree (a function of the tree alone; the MTTKRP only reads it). */
typedef struct csf_split {
    uint64_t n;      /* jobs */
    uint32_t depth;  /* path levels kept: the compressed ones (0..flat-1)   */
    uint64_t *z;     /* n + 1 leaf bounds                                    */
    uint64_t *lo;    /* n x depth: tf_csf_leaf_path of z[k], levels < depth  */
    uint64_t *hi;    /* n x depth: the same of z[k + 1] - 1                  */
} csf_split;

typedef struct csf_plan {
    uint32_t order;
    int threads;
    int fixed_team; /* > 0: every MTTKRP on exactly this many threads (tests) */
    int fixed_jobs; /* > 0: the non-zeros in exactly this many jobs (tests) */
    int fixed_prefetch; /* >= 0: prefetch rows (1) or not (0) whatever their size (tests) */
    uint32_t sorted;    /* trees with their fibres in order of length */
    uint32_t built;     /* bit m: tree[m] was built (a rank's shard of mode m: that tree alone) */
    tf_csf tree[TF_MAX_ORDER]; /* tree[m] is rooted at mode m */
    csf_split split[TF_MAX_ORDER];
} csf_plan;

static void split_free(csf_split *sp)
{
    tf_free(sp->z);
    tf_free(sp->lo);
    tf_free(sp->hi);
    memset(sp, 0, sizeof *sp);
}

static void csf_plan_destroy(void *impl)
{
    csf_plan *cp = impl;
    if (!cp) return;
    for (uint32_t m = 0; m < cp->order; ++m) {
        tf_csf_free(&cp->tree[m]);
        split_free(&cp->split[m]);
    }
    tf_free(cp);
}

/* Splits the leaves of c into K equal ranges (K <= nnz, so none is empty). */
static tf_status split_build(const tf_csf *c, uint64_t K, int threads, csf_split *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->n = K;
    sp->depth = c->flat;
    const uint64_t d = sp->depth ? sp->depth : 1;
    tf_status s = TF_ALLOC(sp->z, K + 1, "MTTKRP job bounds");
    if (s == TF_OK) s = TF_ALLOC(sp->lo, K * d, "MTTKRP job paths");
    if (s == TF_OK) s = TF_ALLOC(sp->hi, K * d, "MTTKRP job paths");
    if (s != TF_OK) {
        split_free(sp);
        return s;
    }
    for (uint64_t k = 0; k <= K; ++k) sp->z[k] = (uint64_t)((unsigned __int128)c->nnz * k / K);
#pragma omp parallel for num_threads(tf_resolve_threads(threads)) schedule(static) if (K > 256)
    for (int64_t k = 0; k < (int64_t)K; ++k) {
        uint64_t path[TF_MAX_ORDER];
        tf_csf_leaf_path(c, sp->z[k], path);
        memcpy(sp->lo + (uint64_t)k * d, path, sp->depth * sizeof *path);
        tf_csf_leaf_path(c, sp->z[k + 1] - 1, path);
        memcpy(sp->hi + (uint64_t)k * d, path, sp->depth * sizeof *path);
    }
    return TF_OK;
}

/* Job i of a split taken g jobs at a time: jobs g i .. g i + g - 1 as one. */
static uint64_t group_first(uint64_t i, uint64_t g) { return i * g; }
static uint64_t group_last(const csf_split *sp, uint64_t i, uint64_t g)
{
    const uint64_t last = i * g + g - 1;
    return last < sp->n ? last : sp->n - 1;
}

static void job_of(const tf_csf *c, const csf_split *sp, uint64_t i, uint64_t g, tf_csf_job *j)
{
    const uint64_t a = group_first(i, g), b = group_last(sp, i, g), d = sp->depth;
    j->csf = c;
    j->zlo = sp->z[a];
    j->zhi = sp->z[b + 1];
    for (uint32_t l = 0; l < c->order; ++l) {
        j->lo[l] = l < d ? sp->lo[a * d + l] : j->zlo;
        j->hi[l] = l < d ? sp->hi[b * d + l] : j->zhi - 1;
    }
    /* the first job that reaches a root zeroes the empty rows before it */
    const uint64_t prev_hi = a ? sp->hi[(a - 1) * d] : 0;
    j->first_gap_root = a == 0 ? 0 : (j->lo[0] > prev_hi ? j->lo[0] : prev_hi + 1);
}

/* Adds the jobs' end rows into out in job order; the first job to reach a
 * root stores its row, later ones add to it. */
static void merge_edges(const tf_csf *c, const csf_split *sp, uint64_t n, uint64_t g, const double *edges,
                        uint64_t R, double *out)
{
    const uint32_t *rid = c->fids[0];
    const uint64_t d = sp->depth;
    uint64_t prev_hi = 0;
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t lo0 = sp->lo[group_first(i, g) * d], hi0 = sp->hi[group_last(sp, i, g) * d];
        const double *edge = edges + i * 2 * R;
        double *row = out + (uint64_t)rid[lo0] * R;
        if (i > 0 && lo0 == prev_hi) tf_row_add(row, edge, R);
        else tf_row_copy(row, edge, R);
        if (hi0 != lo0) tf_row_copy(out + (uint64_t)rid[hi0] * R, edge + R, R);
        prev_hi = hi0;
    }
}

static tf_status csf_plan_mttkrp(void *impl, uint32_t mode, const tf_matrix *factors, tf_matrix *out)
{
    const csf_plan *cp = impl;
    if (!(cp->built >> mode & 1u))
        return tf_fail(TF_ERR_ARG, "CSF plan: mode %u's tree was not built (a plan of one mode)", mode + 1);
    const tf_csf *c = &cp->tree[mode];
    const uint64_t R = out->cols, I = out->rows;
    if (c->nnz == 0) {
        memset(out->data, 0, I * R * sizeof(double));
        return TF_OK;
    }
    csf_split own;
    memset(&own, 0, sizeof own);
    const csf_split *sp = &cp->split[mode];
    if (cp->fixed_jobs > 0) {
        TF_TRY(split_build(c, (uint64_t)cp->fixed_jobs < c->nnz ? (uint64_t)cp->fixed_jobs : c->nnz, 1, &own));
        sp = &own;
    }
    /* the split's jobs taken g at a time when their edge rows would pass
     * CSF_EDGE_BYTES (a large rank): still a function of the tree and R */
    const uint64_t fit = CSF_EDGE_BYTES / (2 * R * sizeof(double)), most = fit ? fit : 1;
    const uint64_t g = (sp->n + most - 1) / most, n = (sp->n + g - 1) / g;
    /* a small tree: fewer threads than the plan's (their wake-up would cost
     * more than their share); the dense steps after it keep this team */
    int T = cp->fixed_team > 0 ? cp->fixed_team : tf_mttkrp_team(cp->threads, c->nnz, R, c->order);
    if ((uint64_t)T > n) T = (int)n;
    tf_team_note(T);
    double *edges = NULL, *acc = NULL;
    const uint64_t per_thread = (uint64_t)c->order * R; /* a job's accumulators, one set per thread */
    tf_status s = TF_ALLOC(edges, n * 2 * R, "MTTKRP job edge rows");
    if (s == TF_OK) s = TF_ALLOC(acc, (uint64_t)T * per_thread, "MTTKRP thread rows");
    if (s != TF_OK) {
        tf_free(edges);
        split_free(&own);
        return s;
    }
    const int stream = I * R * sizeof(double) >= CSF_STREAM_MIN_BYTES;
    int prefetch = cp->fixed_prefetch > 0;
    for (uint32_t l = c->flat > 1 ? c->flat - 1 : 1; cp->fixed_prefetch < 0 && l < c->order; ++l)
        if (c->dims[l] * R * sizeof(double) >= CSF_PREFETCH_MIN_BYTES) prefetch = 1;
    /* contiguous runs of jobs per thread: a thread walks one range of the tree */
#pragma omp parallel num_threads(T) if (T > 1)
    {
        double *mine = acc + (uint64_t)tf_thread_id() * per_thread;
        tf_csf_job j;
#pragma omp for schedule(static)
        for (int64_t i = 0; i < (int64_t)n; ++i) {
            job_of(c, sp, (uint64_t)i, g, &j);
            for (uint32_t l = 1; l < c->order; ++l) j.F[l] = factors[c->mode_order[l]].data;
            j.R = R;
            j.out = out->data;
            j.edge = edges + (uint64_t)i * 2 * R;
            j.acc = mine;
            j.stream = stream;
            j.prefetch = prefetch;
            tf_csf_mttkrp_job(&j);
        }
    }

    merge_edges(c, sp, n, g, edges, R, out->data);
    /* empty rows after the last root */
    const uint64_t tail = (uint64_t)c->fids[0][c->nodes[0] - 1] + 1;
    if (tail < I) memset(out->data + tail * R, 0, (I - tail) * R * sizeof(double));
    tf_free(acc);
    tf_free(edges);
    split_free(&own);
    return TF_OK;
}

static const tf_plan_ops csf_ops = {.mttkrp = csf_plan_mttkrp, .destroy = csf_plan_destroy};

void tf_cpu_csf_plan_fix_team(struct tf_plan *p, int team)
{
    if (p && p->ops == &csf_ops) ((csf_plan *)p->impl)->fixed_team = team;
}

void tf_cpu_csf_plan_fix_jobs(struct tf_plan *p, int jobs)
{
    if (p && p->ops == &csf_ops) ((csf_plan *)p->impl)->fixed_jobs = jobs;
}

uint32_t tf_cpu_csf_plan_sorted(const struct tf_plan *p)
{
    return p && p->ops == &csf_ops ? ((const csf_plan *)p->impl)->sorted : 0;
}

void tf_cpu_csf_plan_fix_prefetch(struct tf_plan *p, int on)
{
    if (p && p->ops == &csf_ops) ((csf_plan *)p->impl)->fixed_prefetch = on;
}

/* The fibre order of the format: csf, the trees as built (0); csf-short,
 * every tree by fibre length (1); auto, the trees whose fibres are short
 * (CSF_SHORT_FIBRE; -1). */
static int fibre_rule(const tf_plan_opts *o)
{
    return o->format == TF_FORMAT_CSF_SHORT ? 1 : o->format == TF_FORMAT_CSF ? 0 : -1;
}

tf_status tf_cpu_csf_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p)
{
    return tf_cpu_csf_plan_build_flat(X, o, CSF_FLAT_RATIO, fibre_rule(o), p);
}

/* The trees of the modes in `modes` (bit m: tree m). */
static tf_status build_trees(const tf_tensor *X, const tf_plan_opts *o, double flat_ratio, int by_length,
                             uint32_t modes, tf_plan *p)
{
    csf_plan *cp = NULL;
    TF_TRY(TF_CALLOC(cp, 1, "CSF plan"));
    cp->order = X->order;
    cp->threads = p->threads;
    cp->fixed_prefetch = -1;
    cp->built = modes;
    uint64_t bytes = sizeof *cp;
    for (uint32_t m = 0; m < X->order; ++m) {
        if (!(modes >> m & 1u)) continue;
        uint32_t mo[TF_MAX_ORDER];
        tf_csf_default_order(X, m, mo);
        tf_status s = tf_csf_build(X, mo, flat_ratio, p->threads, &cp->tree[m]);
        const double mean = tf_csf_mean_fibre(&cp->tree[m]);
        if (s == TF_OK && cp->tree[m].flat >= 2 && (by_length > 0 || (by_length < 0 && mean < CSF_SHORT_FIBRE))) {
            s = tf_csf_sort_fibres(&cp->tree[m], p->threads);
            cp->sorted += s == TF_OK;
        }
        if (s == TF_OK && cp->tree[m].nnz > 0) s = split_build(&cp->tree[m], job_count(cp->tree[m].nnz), p->threads, &cp->split[m]);
        if (s != TF_OK) { csf_plan_destroy(cp); return s; }
        bytes += tf_csf_bytes(&cp->tree[m]) + cp->split[m].n * (1 + 2 * (uint64_t)cp->split[m].depth) * sizeof(uint64_t);
    }
    p->ops = &csf_ops;
    p->impl = cp;
    p->bytes = bytes;
    /* csf-short says how many trees it ordered (all but those without a
     * fibre level); auto's and csf's desc is the same */
    if (by_length > 0)
        snprintf(p->desc, sizeof p->desc, "cpu csf-short (%u of %d trees by fibre length), %d thread%s", cp->sorted,
                 __builtin_popcount(modes), p->threads, p->threads == 1 ? "" : "s");
    else
        snprintf(p->desc, sizeof p->desc, "cpu csf, %d thread%s", p->threads, p->threads == 1 ? "" : "s");
    return TF_OK;
}

tf_status tf_cpu_csf_plan_build_flat(const tf_tensor *X, const tf_plan_opts *o, double flat_ratio,
                                     int by_length, tf_plan *p)
{
    return build_trees(X, o, flat_ratio, by_length, (1u << X->order) - 1, p);
}

tf_status tf_cpu_csf_plan_build_mode(const tf_tensor *X, const tf_plan_opts *o, uint32_t mode, tf_plan *p)
{
    return build_trees(X, o, CSF_FLAT_RATIO, fibre_rule(o), 1u << mode, p);
}
