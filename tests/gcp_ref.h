/* SPDX-License-Identifier: BSD-3-Clause */
/* The float64 reference of a GCP pass over a drawn sample (tests/test_gpu_gcp.c,
 * test_gpu_complete_adam.c): plain loops, no kernel of the library's. */
#ifndef TF_TESTS_GCP_REF_H
#define TF_TESTS_GCP_REF_H
#include <math.h>
#include <string.h>

#include "cpu/gcp_loss.h"
#include "cpu/gcp_sample.h"
#include "tenfold.h"

/* The loss of sample s at K and (G non-NULL) its gradient plus 2 l2 u (the
 * observed-only mode's penalty; 0: none), with the sums of the terms'
 * magnitudes (fmag; gmag per entry). */
static inline double gcp_ref_pass(const tf_gcp_samples *s, const tf_ktensor *K, int loss, double l2, double *fmag,
                                  double *G, double *gmag)
{
    const uint32_t N = s->order;
    const uint64_t R = K->rank;
    uint64_t off[TF_MAX_ORDER], total = 0;
    for (uint32_t n = 0; n < N; ++n) {
        off[n] = total;
        total += K->dims[n] * R;
    }
    for (uint32_t n = 0; G && n < N; ++n)
        for (uint64_t e = 0; e < K->dims[n] * R; ++e) {
            G[off[n] + e] = 2.0 * l2 * K->factors[n].data[e];
            gmag[off[n] + e] = fabs(G[off[n] + e]);
        }
    double f = 0.0, fm = 0.0;
    for (uint64_t j = 0; j < s->n; ++j) {
        double m = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            double p = 1.0;
            for (uint32_t n = 0; n < N; ++n) p *= K->factors[n].data[(uint64_t)s->ind[n][j] * R + r];
            m += p;
        }
        const double w = j < s->nnz_part ? s->w_nz : s->w_z;
        const int semi_nz = s->semi && j < s->nnz_part; /* semi-stratified: f(x, m) - f(0, m) */
        const double t = w * (tf_gcp_f(loss, s->vals[j], m) - (semi_nz ? tf_gcp_f(loss, 0.0, m) : 0.0));
        f += t;
        fm += fabs(t);
        if (!G) continue;
        const double y = w * (tf_gcp_df(loss, s->vals[j], m) - (semi_nz ? tf_gcp_df(loss, 0.0, m) : 0.0));
        for (uint32_t n = 0; n < N; ++n)
            for (uint64_t r = 0; r < R; ++r) {
                double p = y;
                for (uint32_t k = 0; k < N; ++k)
                    if (k != n) p *= K->factors[k].data[(uint64_t)s->ind[k][j] * R + r];
                const uint64_t e = off[n] + (uint64_t)s->ind[n][j] * R + r;
                G[e] += p;
                gmag[e] += fabs(p);
            }
    }
    *fmag = fm;
    return f;
}

#endif
