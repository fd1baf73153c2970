/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd --method apr`: CP-APR (Poisson CP of counts, tf_cp_apr) --
 * its options (--inner, --kappa; -i, --tol and --seed as CP-ALS's), the
 * line per outer iteration, the summary and its part of the JSON report. */
#ifndef TF_CLI_CPD_APR_H
#define TF_CLI_CPD_APR_H
#include <stdint.h>

#include "json.h"
#include "tenfold.h"

typedef struct cpd_apr {
    int on;                  /* --method apr                          */
    tf_cp_apr_opts opts;
    tf_cp_apr_report rep;
    tf_cp_apr_iter *iters;   /* every outer iteration, for the report */
    uint32_t niters, cap;
    int iters_lost;          /* 1 if the list could not grow          */
} cpd_apr;

/* a->opts from the run's common options (rank, seed, threads, device,
 * context) and the values given (NULL: not given) of -i (default 1000),
 * --tol (the KKT tolerance, default 1e-4), --inner (10), --kappa (0.01)
 * and --apr-algorithm (mu); pyttb's defaults otherwise. Returns 0 or 2
 * after a usage error. */
int cpd_apr_options(cpd_apr *a, const tf_cpd_opts *o, const char *iters, const char *tol, const char *inner,
                    const char *kappa, const char *algorithm);
void cpd_apr_free(cpd_apr *a);
/* The callback of tf_cp_apr: keeps the iteration, prints its line. */
void cpd_apr_on_iteration(const tf_cp_apr_iter *it, void *user);
/* "cpd: CP-APR (Poisson, multiplicative updates), rank 16, ..." */
void cpd_apr_print_start(const cpd_apr *a, const char *start, const char *threads);
/* The summary after the run: the final log-likelihood, why it stopped,
 * what the numbers mean, the inner iterations, the timing line. */
void cpd_apr_print_summary(const cpd_apr *a, double t_read, double t_write, double wall);
/* options.algorithm "CP-APR" and its parameters; iterations[], result and
 * timing_seconds of the report. */
void cpd_apr_json_options(const cpd_apr *a, cli_json *j);
void cpd_apr_json_result(const cpd_apr *a, uint64_t nnz, double t_read, double t_write, double wall, cli_json *j);
#endif
