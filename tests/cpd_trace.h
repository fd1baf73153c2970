/* SPDX-License-Identifier: BSD-3-Clause */
/* The fit and the AO-ADMM inner iterations of every CP iteration, recorded
 * through tf_cpd_opts.callback (the GPU CP tests compare runs iteration by
 * iteration); an AO-ADMM update. */
#ifndef TF_TESTS_CPD_TRACE_H
#define TF_TESTS_CPD_TRACE_H
#include "tenfold.h"

#define MAX_IT 64

typedef struct trace {
    uint32_t n;
    double fit[MAX_IT];
    uint32_t inner[MAX_IT]; /* AO-ADMM: the iteration's inner iterations */
} trace;

static void record(const tf_cpd_iter *it, void *user)
{
    trace *t = user;
    if (t->n < MAX_IT) {
        t->inner[t->n] = it->inner_iters;
        t->fit[t->n++] = it->fit;
    }
}

/* An AO-ADMM update (tf_cpd_update_default's limits) imposing nonneg on the
 * modes of the mask nonneg and l1 on those of l1_modes. */
static inline void admm_update(tf_cpd_update *u, unsigned nonneg, unsigned l1_modes, double l1)
{
    tf_cpd_update_default(u);
    u->kind = TF_CPD_UPDATE_AO_ADMM;
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) {
        u->mode[m].nonneg = (int)(nonneg >> m & 1u);
        u->mode[m].l1 = l1_modes >> m & 1u ? l1 : 0.0;
    }
}
#endif
