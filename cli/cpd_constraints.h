/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd`'s constraints (--nonneg [MODES], --l1 LAMBDA[@MODES], --l2
 * LAMBDA[@MODES], --admm-inner N, --admm-tol T): parsed into a
 * tf_cpd_update (AO-ADMM when any is given), checked against the tensor's
 * order, and described for the text and JSON reports. */
#ifndef TF_CLI_CPD_CONSTRAINTS_H
#define TF_CLI_CPD_CONSTRAINTS_H
#include <stdint.h>

#include "json.h"
#include "tenfold.h"

#define CPD_ALL_MODES 0xffffffffu

typedef struct cpd_constraints {
    int any;              /* a constraint was given: the run is AO-ADMM */
    uint32_t nonneg;      /* mode masks (bit m: mode m + 1; CPD_ALL_MODES: every mode) */
    uint32_t l1_modes, l2_modes;
    double l1, l2;
    tf_cpd_update update; /* what tf_cpd gets (cpd_constraints_apply) */
} cpd_constraints;

/* The options' values (NULL: not given; nonneg_flag: --nonneg was given,
 * nonneg its optional list) into *c. Returns 0, or 2 after a usage error
 * naming the option and what was expected. */
int cpd_constraints_parse(const char *nonneg, int nonneg_flag, const char *l1, const char *l2, const char *inner,
                          const char *tol, cpd_constraints *c);
/* c->update for a tensor of `order` modes; a mode past the order is a
 * failure every rank reaches alike ("--nonneg: mode 4, but the tensor has 3
 * modes"). Returns 0 or 1. */
int cpd_constraints_apply(cpd_constraints *c, uint32_t order);
/* "mode 1 nonneg; mode 2 nonneg, l1 0.1; mode 3 none" for the modes of the
 * run (after apply). */
void cpd_constraints_describe(const cpd_constraints *c, uint32_t order, char *buf, size_t len);
/* options.algorithm and, for AO-ADMM, options.constraints[] and the inner
 * iteration limits into the report. */
void cpd_constraints_json(const cpd_constraints *c, uint32_t order, cli_json *j);
#endif
