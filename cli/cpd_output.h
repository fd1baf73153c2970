/* SPDX-License-Identifier: BSD-3-Clause */
/* State of one `tenfold cpd` run and its outputs: the factor files and
 * the --json report. */
#ifndef TF_CLI_CPD_OUTPUT_H
#define TF_CLI_CPD_OUTPUT_H
#include "cpd_apr.h"
#include "cpd_gcp.h"
#include "cpd_constraints.h"
#include "cpd_init.h"
#include "run_context.h"
#include "tenfold.h"

typedef struct cpd_run {
    const char *path;       /* input file                          */
    char stem[2048];        /* output stem                         */
    int nowrite;
    int no_ktensor;         /* --no-ktensor: no STEM.ktensor        */
    const char *json_path;  /* NULL: no report                     */
    const char *json_write_path; /* where it is written (cpd_check_outputs) */
    const char *base;       /* --base: NULL (auto), "0" or "1"     */
    cpd_init init;          /* --init STEM: the start's files      */
    uint64_t memory_limit;  /* --memory-limit in bytes, 0 = none   */
    cli_gpus gpus;          /* --gpus                              */
    cpd_constraints cons;   /* --nonneg, --l1, --l2 (AO-ADMM)      */
    cpd_apr apr;            /* --method apr (CP-APR): its options,
                               report and iterations               */
    tf_checkpoint ckpt;     /* --checkpoint, --checkpoint-every, --resume */
    const char *ckpt_every; /* --checkpoint-every as given (the ranks agree on it) */
    cpd_gcp gcp;            /* --method gcp (GCP): the same        */
    tf_cpd_opts opts;
    tf_tensor t;
    tf_read_info info;
    tf_ktensor k;
    tf_cpd_report rep;
    tf_cpd_iter *iters;     /* every iteration, for the report     */
    uint32_t niters, cap;
    int iters_lost;         /* 1 if the list could not grow         */
    double t_write;         /* seconds writing the factor files     */
    double wall;            /* seconds from start to the end of the
                               factor files                         */
    char written[TF_MAX_ORDER + 2][2048 + 64]; /* files written    */
    int nwritten;
    tf_ktensor_out *set;    /* the factor set being written (its lock
                               held from cpd_check_outputs to the switch) */
} cpd_run;

void cpd_run_init(cpd_run *r);
void cpd_run_free(cpd_run *r);
void cpd_run_add_iter(cpd_run *r, const tf_cpd_iter *it);
/* The outputs asked for (factor files, report), checked before the input
 * is read: no output may be the input, a --init file (unless -o is the same
 * stem: the same set's switch) or another output (usage error, 2); the
 * places are checked and the set's lock taken (1 with a message naming the
 * path, or "STEM: another tenfold run is writing this factor set (pid N)").
 * Returns the exit code. */
int cpd_check_outputs(cpd_run *r);
/* Writes the factor files to their temporaries unless --nowrite; sets
 * t_write. Returns the exit code (1 with a message on failure, the set
 * aborted). */
int cpd_write_factors(cpd_run *r);
/* Writes the --json report if asked: with a factor set, to a temporary
 * switched with the set (or, for standard output, a FIFO or a device,
 * directly now); without one, atomically on its own. A failure aborts the
 * set: the previous one stays. Returns the exit code. */
int cpd_write_json(cpd_run *r);
/* The switch: the set (and the report with it) replaces the previous one
 * in one step (tf_ktensor_out_commit); prints what was written. Returns
 * the exit code. */
int cpd_switch(cpd_run *r);
void cpd_print_json_written(const cpd_run *r);
/* The name of a tf_cpd_report.schedule entry: "contiguous", "longest-first". */
const char *cpd_schedule_name(int schedule);
/* Removes the set's temporaries and releases its lock (no switch). */
void cpd_run_abort_set(cpd_run *r);
#endif
