/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd --method gcp`: Generalized CP (tf_gcp) -- its options
 * (--loss, --samples, --fsamples, --epoch-iters, --epochs, --rate, --decay,
 * --fails, --dense-loss, --sampling), the line per epoch, the summary and its part of
 * the JSON report. */
#ifndef TF_CLI_CPD_GCP_H
#define TF_CLI_CPD_GCP_H
#include <stdint.h>

#include "json.h"
#include "tenfold.h"

typedef struct cpd_gcp {
    int on;                  /* --method gcp                          */
    tf_gcp_opts opts;
    tf_gcp_report rep;
    tf_gcp_epoch *epochs;    /* every epoch, for the report           */
    uint32_t nepochs, cap;
    int epochs_lost;         /* 1 if the list could not grow          */
} cpd_gcp;

/* The values given (NULL: not given) of the GCP options. */
typedef struct cpd_gcp_args {
    const char *loss, *samples, *fsamples, *epoch_iters, *epochs, *rate, *decay, *fails, *sampling;
    int dense;               /* --dense-loss */
} cpd_gcp_args;

/* The first GCP option given, as the user wrote it ("--loss"); NULL if none. */
const char *cpd_gcp_given(const cpd_gcp_args *g);
/* a->opts from the run's common options (rank, seed, threads, device) and
 * g. Returns 0 or 2 after a usage error. */
int cpd_gcp_options(cpd_gcp *a, const tf_cpd_opts *o, const cpd_gcp_args *g);
void cpd_gcp_free(cpd_gcp *a);
/* The callback of tf_gcp: keeps the epoch, prints its line. */
void cpd_gcp_on_epoch(const tf_gcp_epoch *e, void *user);
void cpd_gcp_print_start(const cpd_gcp *a, const char *start, const char *threads);
void cpd_gcp_print_summary(const cpd_gcp *a, double t_read, double t_write, double wall);
/* options.algorithm "GCP" and its parameters; iterations[], result and
 * timing_seconds of the report. */
void cpd_gcp_json_options(const cpd_gcp *a, cli_json *j);
void cpd_gcp_json_result(const cpd_gcp *a, double t_read, double t_write, double wall, cli_json *j);
#endif
