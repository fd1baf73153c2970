/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's dense mode: the exact loss over every entry minimised by a
 * projected L-BFGS (10 pairs): the variables near the lower bound whose
 * gradient points outward take a scaled gradient step (onto the bound),
 * the others the two-loop direction,
 * an Armijo backtracking search along the projected path, stopping when
 * the projected gradient's largest entry is <= pgtol or the loss changes by
 * less than ftol |f| in two iterations in a row, the second after the
 * memory was cleared (or after max_epochs iterations). */
#include <math.h>
#include <string.h>

#include "algo/gcp.h"
#include "core/alloc.h"
#include "core/error.h"

#define PAIRS 10

static double dot(const double *a, const double *b, uint64_t n)
{
    double s = 0.0;
    for (uint64_t e = 0; e < n; ++e) s += a[e] * b[e];
    return s;
}

typedef struct lbfgs {
    uint64_t P;
    double lower;
    double *u, *g, *un, *gn, *d, *s[PAIRS], *y[PAIRS];
    double rho[PAIRS], alpha[PAIRS];
    int count, head; /* pairs held; the next pair's slot */
} lbfgs;

/* d = -H g over the free variables (the two-loop recursion, fixed ones 0
 * in q), d = -gamma g over the fixed ones (gamma: the recursion's scale;
 * the projection then puts them on the bound). */
static void direction(lbfgs *L, const unsigned char *fixed)
{
    const uint64_t P = L->P;
    double *q = L->d, gamma = 1.0;
    for (uint64_t e = 0; e < P; ++e) q[e] = fixed[e] ? 0.0 : L->g[e];
    for (int k = 0; k < L->count; ++k) {
        const int j = (L->head - 1 - k + PAIRS) % PAIRS;
        L->alpha[j] = L->rho[j] * dot(L->s[j], q, P);
        for (uint64_t e = 0; e < P; ++e) q[e] -= L->alpha[j] * L->y[j][e];
    }
    if (L->count) {
        const int j = (L->head - 1 + PAIRS) % PAIRS;
        gamma = dot(L->s[j], L->y[j], P) / dot(L->y[j], L->y[j], P);
        for (uint64_t e = 0; e < P; ++e) q[e] *= gamma;
    }
    for (int k = L->count - 1; k >= 0; --k) {
        const int j = (L->head - 1 - k + PAIRS) % PAIRS;
        const double beta = L->rho[j] * dot(L->y[j], q, P);
        for (uint64_t e = 0; e < P; ++e) q[e] += (L->alpha[j] - beta) * L->s[j][e];
    }
    for (uint64_t e = 0; e < P; ++e) q[e] = fixed[e] ? -gamma * L->g[e] : -q[e];
}

static tf_status iterate(const tf_gcp_backend *be, const tf_gcp_opts *o, lbfgs *L, unsigned char *fixed,
                         tf_gcp_report *rep)
{
    const uint64_t P = L->P;
    const double lb = L->lower;
    double f = 0.0, t0 = tf_wtime();
    TF_TRY(be->ops->dense_fg(be->ctx, L->u, &f, L->g));
    rep->t_gradient += tf_wtime() - t0;
    rep->loss_initial = rep->loss_estimate = f;
    if (!isfinite(f)) return tf_fail(TF_ERR_NUMERIC, "gcp: the loss of the start is not finite (%g)", f);
    int stalled = 0;
    for (uint32_t it = 1; it <= o->max_epochs; ++it) {
        const double t_iter = tf_wtime();
        /* the projected gradient; the variables within eps of the bound whose
         * gradient points outward are held (Bertsekas 1982: eps = min(1e-3,
         * the projected gradient's norm), so that the set settles) */
        double pg = 0.0, pg2 = 0.0;
        for (uint64_t e = 0; e < P; ++e) {
            double p = L->u[e] - L->g[e];
            if (p < lb) p = lb;
            p = fabs(p - L->u[e]);
            if (p > pg) pg = p;
            pg2 += p * p;
        }
        if (pg <= o->pgtol) {
            rep->converged = 1;
            break;
        }
        const double eps = sqrt(pg2) < 1e-3 ? sqrt(pg2) : 1e-3;
        for (uint64_t e = 0; e < P; ++e) fixed[e] = L->u[e] <= lb + eps && L->g[e] > 0.0;
        direction(L, fixed);
        double gd = dot(L->g, L->d, P);
        if (!(gd < 0.0)) { /* not a descent direction: steepest descent, memory cleared */
            L->count = 0;
            direction(L, fixed);
            gd = dot(L->g, L->d, P);
        }
        double step = 1.0;
        if (!L->count) { /* the first step (or after a reset): at most 1 in the largest entry */
            double dmax = 0.0;
            for (uint64_t e = 0; e < P; ++e) dmax = fabs(L->d[e]) > dmax ? fabs(L->d[e]) : dmax;
            if (dmax > 1.0) step = 1.0 / dmax;
        }
        double fn = 0.0;
        int accepted = 0;
        for (int ls = 0; ls < 60 && !accepted; ++ls, step *= 0.5) {
            double decrease = 0.0;
            for (uint64_t e = 0; e < P; ++e) {
                double v = L->u[e] + step * L->d[e];
                L->un[e] = v < lb ? lb : v;
                decrease += L->g[e] * (L->un[e] - L->u[e]);
            }
            t0 = tf_wtime();
            TF_TRY(be->ops->dense_fg(be->ctx, L->un, &fn, L->gn));
            rep->t_gradient += tf_wtime() - t0;
            accepted = isfinite(fn) && fn <= f + 1e-4 * decrease;
            if (accepted) break;
        }
        if (!accepted) { /* no decrease along the path: from a scaled gradient step once more, then done */
            if (!L->count) {
                rep->converged = 1;
                break;
            }
            L->count = 0;
            continue;
        }
        double *sj = L->s[L->head], *yj = L->y[L->head];
        for (uint64_t e = 0; e < P; ++e) {
            sj[e] = L->un[e] - L->u[e];
            yj[e] = L->gn[e] - L->g[e];
        }
        const double sy = dot(sj, yj, P);
        if (sy > 1e-12 * dot(yj, yj, P)) {
            L->rho[L->head] = 1.0 / sy;
            L->head = (L->head + 1) % PAIRS;
            if (L->count < PAIRS) ++L->count;
        }
        double *tmp = L->u;
        L->u = L->un;
        L->un = tmp;
        tmp = L->g;
        L->g = L->gn;
        L->gn = tmp;
        const double change = f - fn;
        f = fn;
        rep->epochs = it;
        rep->iters = it;
        rep->loss_estimate = f;
        if (o->callback) {
            tf_gcp_epoch info;
            memset(&info, 0, sizeof info);
            info.epoch = it;
            info.loss_estimate = f;
            info.rate = step;
            info.seconds = tf_wtime() - t_iter;
            info.t_gradient = info.seconds;
            o->callback(&info, o->user);
        }
        const double scale = fabs(f) > 1.0 ? fabs(f) : 1.0;
        if (change <= o->ftol * scale) { /* stalled: a stale memory, or the end (twice in a row) */
            if (stalled++) {
                rep->converged = 1;
                break;
            }
            L->count = 0;
        } else {
            stalled = 0;
        }
        if (o->stop && *o->stop) {
            rep->stopped = 1;
            break;
        }
    }
    double g_unused = 0.0; /* the backend's factors back at the iterate (a search may have left a trial) */
    return be->ops->dense_fg(be->ctx, L->u, &g_unused, L->gn);
}

tf_status tf_gcp_lbfgs(const tf_gcp_backend *be, const tf_gcp_opts *o, uint64_t nparams, tf_ktensor *start,
                       tf_gcp_report *rep)
{
    lbfgs L;
    memset(&L, 0, sizeof L);
    L.P = nparams;
    L.lower = tf_gcp_loss_lower_bound(o->loss);
    double *mem = NULL;
    unsigned char *fixed = NULL;
    TF_TRY(TF_ALLOC(mem, (5 + 2 * PAIRS) * nparams, "GCP L-BFGS vectors"));
    tf_status s = TF_ALLOC(fixed, nparams, "GCP L-BFGS bounds");
    if (s == TF_OK) {
        double *p = mem;
        L.u = p, p += nparams;
        L.g = p, p += nparams;
        L.un = p, p += nparams;
        L.gn = p, p += nparams;
        L.d = p, p += nparams;
        for (int j = 0; j < PAIRS; ++j) {
            L.s[j] = p, p += nparams;
            L.y[j] = p, p += nparams;
        }
        double *u = L.u;
        for (uint32_t n = 0; n < start->order; ++n) {
            const uint64_t len = start->dims[n] * start->rank;
            for (uint64_t e = 0; e < len; ++e) u[e] = start->factors[n].data[e] < L.lower ? L.lower
                                                                                       : start->factors[n].data[e];
            u += len;
        }
        s = iterate(be, o, &L, fixed, rep);
    }
    tf_free(mem);
    tf_free(fixed);
    return s;
}
