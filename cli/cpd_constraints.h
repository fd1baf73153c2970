/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd`'s constraints (--nonneg [MODES], --l1 LAMBDA[@MODES], --l2
 * LAMBDA[@MODES], --nonneg-method admm|hals|auto, --admm-inner N,
 * --admm-tol T, --hals-inner N, --hals-tol T): parsed into a tf_cpd_update
 * (AO-ADMM, HALS or the library's choice when any is given), checked
 * against the tensor's order, and described for the text and JSON reports. */
#ifndef TF_CLI_CPD_CONSTRAINTS_H
#define TF_CLI_CPD_CONSTRAINTS_H
#include <stdint.h>

#include "json.h"
#include "tenfold.h"

#define CPD_ALL_MODES 0xffffffffu

enum { CPD_METHOD_AUTO = 0, CPD_METHOD_ADMM = 1, CPD_METHOD_HALS = 2 }; /* --nonneg-method */

typedef struct cpd_constraints {
    int any;              /* a constraint was given: the run is AO-ADMM or HALS */
    int method;           /* CPD_METHOD_*                                      */
    uint32_t nonneg;      /* mode masks (bit m: mode m + 1; CPD_ALL_MODES: every mode) */
    uint32_t l1_modes, l2_modes;
    double l1, l2;
    tf_cpd_update update; /* what tf_cpd gets (cpd_constraints_apply) */
} cpd_constraints;

/* The options' values (NULL: not given; nonneg_flag: --nonneg was given,
 * nonneg its optional list) into *c. Returns 0, or 2 after a usage error
 * naming the option and what was expected. */
typedef struct cpd_constraint_args {
    const char *nonneg; /* --nonneg's optional MODES          */
    int nonneg_flag;    /* --nonneg was given                 */
    const char *l1, *l2, *method, *admm_inner, *admm_tol, *hals_inner, *hals_tol;
} cpd_constraint_args;

int cpd_constraints_parse(const cpd_constraint_args *a, cpd_constraints *c);
/* "auto", "admm", "hals" */
const char *cpd_method_name(int method);
/* c->update for a tensor of `order` modes; a mode past the order, or --l1
 * on a mode without --nonneg under --nonneg-method hals, is a failure every
 * rank reaches alike ("--nonneg: mode 4, but the tensor has 3 modes").
 * Returns 0 or 1. */
int cpd_constraints_apply(cpd_constraints *c, uint32_t order);
/* "mode 1 nonneg; mode 2 nonneg, l1 0.1; mode 3 none" for the modes of the
 * run (after apply). */
void cpd_constraints_describe(const cpd_constraints *c, uint32_t order, char *buf, size_t len);
/* options.algorithm (the update that ran: rep->update_kind) and, with
 * constraints, options.nonneg_method, .algorithm_choice (auto: why),
 * .constraints[] and the inner iteration limits into the report. */
void cpd_constraints_json(const cpd_constraints *c, uint32_t order, const tf_cpd_report *rep, cli_json *j);
#endif
