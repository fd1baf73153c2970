/* SPDX-License-Identifier: BSD-3-Clause */
/* The CSF MTTKRP traversal of one thread's share of the leaves. */
#ifndef TF_CPU_CSF_KERNEL_H
#define TF_CPU_CSF_KERNEL_H
#include "fmt/csf.h"

/* One thread's work: the leaves zlo..zhi-1 of a tree whose root mode is the
 * MTTKRP mode. Roots strictly between lo[0] and hi[0] lie entirely in the
 * range and are written to out; the two end roots may be shared with the
 * neighbouring threads, so their partial rows go to edge (lo[0] at edge,
 * hi[0] at edge + R when it differs) and the caller merges them. */
typedef struct tf_csf_job {
    const tf_csf *csf;
    const double *F[TF_MAX_ORDER];               /* factor of each level (F[0] unused) */
    uint64_t R;
    uint64_t zlo, zhi;                           /* leaf range, zlo < zhi          */
    uint64_t lo[TF_MAX_ORDER], hi[TF_MAX_ORDER]; /* tf_csf_leaf_path of zlo, zhi-1 */
    uint64_t first_gap_root; /* zero the empty output rows before roots >= this   */
    double *out;             /* dims[mode] x R                                     */
    double *edge;            /* 2 x R                                              */
    double *acc;             /* order x R scratch                                  */
    int stream;              /* write output rows with non-temporal stores         */
    int prefetch;            /* prefetch factor rows (register path: see the kernel) */
} tf_csf_job;

void tf_csf_mttkrp_job(const tf_csf_job *j);

/* tf_cpu_csf_plan_build with an explicit flat_ratio (see tf_csf_build) and
 * fibre order (by_length 1: every tree's fibres in order of length, 0:
 * none, -1: the trees whose fibres are short, the rule of the plan), so the
 * tests can force full trees, flat levels and either order. */
struct tf_plan;
tf_status tf_cpu_csf_plan_build_flat(const tf_tensor *X, const tf_plan_opts *o, double flat_ratio,
                                     int by_length, struct tf_plan *p);
/* Runs every MTTKRP of a CPU CSF plan on exactly `team` threads (at most
 * one per job) instead of the team from the work (0: from the work again).
 * The jobs, and so the result's bits, do not depend on the team. Other
 * plans are left alone. */
void tf_cpu_csf_plan_fix_team(struct tf_plan *p, int team);
/* Splits every MTTKRP of a CPU CSF plan into exactly `jobs` jobs (at most
 * one per non-zero; 0: from the tree and the rank again), so the tests put
 * job edges inside the slices of small tensors. Other plans are left alone. */
void tf_cpu_csf_plan_fix_jobs(struct tf_plan *p, int jobs);
/* Prefetches factor rows in every MTTKRP of a CPU CSF plan (on = 1), never
 * (0), or as the factors' sizes say (-1, the default), so the tests reach
 * the prefetching code on small tensors. Other plans are left alone. */
void tf_cpu_csf_plan_fix_prefetch(struct tf_plan *p, int on);
/* How many trees of a CPU CSF plan have their fibres in order of length
 * (0 for other plans). */
uint32_t tf_cpu_csf_plan_sorted(const struct tf_plan *p);
#endif
