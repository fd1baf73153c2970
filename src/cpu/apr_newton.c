/* SPDX-License-Identifier: BSD-3-Clause */
/* CP-APR's row-wise projected damped Newton step (cpu/apr_newton.h), step
 * for step pyttb's tt_cp_apr_pdnr row loop with calc_partials,
 * get_search_dir_pdnr, get_hessian and tt_linesearch_prowsubprob. */
#include "cpu/apr_newton.h"

#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/parallel.h"
#include "cpu/complete_rows.h"

#ifdef _OPENMP
#include <omp.h>
#else
static inline int omp_get_thread_num(void) { return 0; }
#endif

/* The line search's constants (pyttb: step 1, halved, at most 10 steps,
 * sufficient decrease 1e-4; minDescentTol = smallStepTol = 1e-7). */
#define LS_STEPS 10
#define LS_DECREASE 1.0e-4
#define LS_SMALL 1.0e-7

static inline double dot(const double *a, const double *b, uint64_t R)
{
    double s = 0.0;
    for (uint64_t r = 0; r < R; ++r) s += a[r] * b[r];
    return s;
}

/* NaN-sticky maximum (numpy's). */
static inline double max_nan(double m, double x)
{
    return (x > m || x != x) && m == m ? x : m;
}

/* calc_partials: v_j = <b, pi_j>, phi = sum_j x_j / max(v_j, eps) pi_j,
 * ups_j = x_j / max(v_j^2, eps). */
static void partials(const double *x, const double *pi, uint64_t J, uint64_t R, const double *b, double eps,
                     double *ups, double *phi)
{
    memset(phi, 0, R * sizeof *phi);
    for (uint64_t j = 0; j < J; ++j) {
        const double *p = pi + j * R;
        const double v = dot(b, p, R);
        const double w = x[j] / (v > eps ? v : eps);
        for (uint64_t r = 0; r < R; ++r) phi[r] += w * p[r];
        const double u = v * v;
        ups[j] = x[j] / (u > eps ? u : eps);
    }
}

/* The row objective -(-sum b + sum_j x_j log <b, pi_j>) (tt_loglikelihood_row, negated). */
static double objective(const double *x, const double *pi, uint64_t J, uint64_t R, const double *b)
{
    double s = 0.0, t = 0.0;
    for (uint64_t r = 0; r < R; ++r) s += b[r];
    for (uint64_t j = 0; j < J; ++j)
        if (x[j] != 0.0) t += x[j] * log(dot(b, pi + j * R, R));
    return -(t - s);
}

/* get_search_dir_pdnr: d (R) and the predicted reduction of the damped
 * quadratic model. H (R x R), rhs and diag (R) are workspace (diag may be
 * the line search's output: it is read before), fr R indices. */
static double search_dir(const double *pi, const double *ups, uint64_t J, uint64_t R, const double *g,
                         const double *b, double mu, double epsact, double *d, double *H, double *rhs,
                         double *diag, uint32_t *fr)
{
    /* pyttb's projGradStep = (b - g) * (b - (g > 0)) (its reading of the
     * MATLAB (b - g) .* (b - g > 0)), kept as pyttb has it */
    double wk = 0.0;
    for (uint64_t r = 0; r < R; ++r) {
        const double t = b[r] - (b[r] - g[r]) * (b[r] - (g[r] > 0.0 ? 1.0 : 0.0));
        wk += t * t;
    }
    wk = sqrt(wk);
    const double tol = epsact < wk ? epsact : wk;
    uint64_t F = 0;
    for (uint64_t r = 0; r < R; ++r) {
        d[r] = 0.0;
        if (b[r] <= tol && g[r] > 0.0) {
            if (b[r] != 0.0) d[r] = -g[r]; /* set G: along the gradient */
        } else {
            fr[F++] = (uint32_t)r; /* free */
        }
    }
    /* the damped Hessian of the free variables, lower triangle, summed
     * over the non-zeros in order (one pass over pi; rhs holds a non-zero's
     * free entries meanwhile) */
    for (uint64_t c = 0; c < F; ++c)
        for (uint64_t e = 0; e <= c; ++e) H[c * F + e] = 0.0;
    for (uint64_t j = 0; j < J; ++j) {
        const double *p = pi + j * R;
        for (uint64_t c = 0; c < F; ++c) rhs[c] = p[fr[c]];
        for (uint64_t c = 0; c < F; ++c) {
            const double uc = ups[j] * rhs[c];
            double *h = H + c * F;
            for (uint64_t e = 0; e <= c; ++e) h[e] += uc * rhs[e];
        }
    }
    for (uint64_t c = 0; c < F; ++c) {
        H[c * F + c] += mu;
        for (uint64_t e = 0; e < c; ++e) H[e * F + c] = H[c * F + e];
    }
    for (uint64_t c = 0; c < F; ++c) {
        rhs[c] = -g[fr[c]];
        diag[c] = H[c * F + c];
    }
    /* q = d_F' (H + mu I) d_F needs the matrix after the solve overwrote
     * its lower triangle and diagonal: the strict upper triangle (row-major,
     * e > c) and diag keep it */
    if (F && tf_cholesky_solve(H, rhs, F) != 0) { /* nearly singular: steepest descent (pyttb) */
        for (uint64_t r = 0; r < R; ++r) d[r] = -g[r];
        for (uint64_t c = 0; c < F; ++c) rhs[c] = -g[fr[c]];
    }
    for (uint64_t c = 0; c < F; ++c) d[fr[c]] = rhs[c];
    double q = 0.0, lin = 0.0;
    for (uint64_t c = 0; c < F; ++c) {
        double hc = 0.0;
        for (uint64_t e = 0; e < F; ++e) {
            const uint64_t lo = c < e ? c : e, hi = c < e ? e : c;
            const double h = c == e ? diag[c] : H[lo * F + hi]; /* untouched by the solve */
            hc += h * rhs[e];
        }
        q += rhs[c] * hc;
        lin += rhs[c] * g[fr[c]];
    }
    const double pred = lin + 0.5 * q;
    if (pred > 0.0)
        for (uint64_t r = 0; r < R; ++r) d[r] = -g[r];
    return pred;
}

/* tt_linesearch_prowsubprob from b along d into bn; returns the objective
 * at b (*f_old), at the unit step (*f_unit; f_old when it failed). */
static void line_search(const double *x, const double *pi, uint64_t J, uint64_t R, const double *d, const double *g,
                        const double *b, const double *phi, double *bn, double *f_old, double *f_unit,
                        uint64_t *evals)
{
    double step = 1.0, f_new = INFINITY, f1 = INFINITY;
    *f_old = objective(x, pi, J, R, b);
    ++*evals;
    int count = 1;
    double sum = 0.0;
    while (count <= LS_STEPS) {
        double gd = 0.0;
        sum = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            const double t = b[r] + step * d[r];
            bn[r] = t * (double)(t > 0.0);
            gd += g[r] * (bn[r] - b[r]);
            sum += bn[r];
        }
        if (gd > 0.0 || sum < LS_SMALL) {
            f_new = INFINITY;
        } else {
            f_new = objective(x, pi, J, R, bn);
            ++*evals;
            if (count == 1) f1 = f_new;
            if (f_new <= *f_old + LS_DECREASE * gd) break;
        }
        step *= 0.5;
        ++count;
    }
    if (isinf(f1)) f1 = *f_old;
    if ((count >= LS_STEPS && f_new > *f_old) || sum < LS_SMALL) { /* the multiplicative step */
        for (uint64_t r = 0; r < R; ++r) {
            const double t = b[r] * phi[r];
            bn[r] = t * (double)(t > 0.0);
        }
        ++*evals; /* pyttb evaluates it (for its display) */
        f1 = *f_old;
    }
    *f_unit = f1;
}

uint64_t tf_apr_newton_ws_doubles(uint64_t J, uint64_t R)
{
    return J + R * (R + 6) + R; /* ups; phi g d bn H rhs; fr (R uint32s in R doubles) */
}

uint32_t tf_apr_newton_row(const double *x, const double *pi, uint64_t J, uint64_t R, const tf_apr_newton_params *p,
                           double *b, double *ws, double *kkt0, int *changed, uint64_t *evals)
{
    double *ups = ws, *phi = ups + J, *g = phi + R, *d = g + R, *bn = d + R, *rhs = bn + R, *H = rhs + R;
    uint32_t *fr = (uint32_t *)(H + R * R);
    double mu = p->mu0;
    uint32_t i = 0;
    *kkt0 = 0.0;
    *changed = 0;
    for (i = 0; i < p->max_inner; ++i) {
        partials(x, pi, J, R, b, p->epsdivzero, ups, phi);
        double kkt = 0.0;
        for (uint64_t r = 0; r < R; ++r) {
            g[r] = 1.0 - phi[r];
            const double t = b[r] != b[r] ? b[r] : b[r] < g[r] ? b[r] : g[r];
            kkt = max_nan(kkt, fabs(t));
        }
        if (i == 0) *kkt0 = kkt;
        if (kkt < p->row_tol) break;
        *changed = 1;
        const double pred = search_dir(pi, ups, J, R, g, b, mu, p->epsactive, d, H, rhs, bn, fr);
        double f_old, f_unit;
        line_search(x, pi, J, R, d, g, b, phi, bn, &f_old, &f_unit, evals);
        memcpy(b, bn, R * sizeof *b);
        const double rho = (f_old - f_unit) / -pred;
        if (pred == 0.0) mu *= 10.0;
        else if (rho < 0.25) mu *= 3.5;
        else if (rho > 0.75) mu *= 2.0 / 7.0;
    }
    return i < p->max_inner ? i + 1 : p->max_inner;
}

/* Row i's Khatri-Rao rows (pyttb's tt_calcpi_prowsubprob: the other modes'
 * rows multiplied in increasing mode order) and values, non-zeros [k0, k1). */
static void row_pi(const tf_apr_newton_in *in, uint64_t k0, uint64_t k1, double *pi, double *x)
{
    const tf_tensor *S = in->S;
    const uint64_t R = in->R;
    for (uint64_t k = k0; k < k1; ++k) {
        double *q = pi + (k - k0) * R;
        for (uint64_t r = 0; r < R; ++r) q[r] = 1.0;
        for (uint32_t m = 0; m < S->order; ++m) {
            if (m == in->mode) continue;
            const double *a = in->A[m] + (uint64_t)S->ind[m][k] * R;
            for (uint64_t r = 0; r < R; ++r) q[r] *= a[r];
        }
        x[k - k0] = S->vals[k];
    }
}

tf_status tf_cpu_apr_newton(const tf_apr_newton_in *in, const tf_apr_newton_params *p, double *B,
                            tf_apr_newton_stats *st)
{
    const tf_tensor *S = in->S;
    const uint64_t R = in->R, lo = in->row_lo, hi = in->row_hi, rows = hi - lo;
    const uint32_t *idx = S->ind[in->mode];
    memset(st, 0, sizeof *st);
    uint64_t *ptr = NULL;
    TF_TRY(TF_ALLOC(ptr, rows + 1, "CP-APR Newton row starts"));
    uint64_t k = 0, longest = 0;
    for (uint64_t i = lo; i <= hi; ++i) { /* ptr[i - lo]: the first non-zero of row i */
        ptr[i - lo] = k;
        while (k < S->nnz && idx[k] == i) ++k;
    }
    for (uint64_t i = 0; i < rows; ++i)
        if (ptr[i + 1] - ptr[i] > longest) longest = ptr[i + 1] - ptr[i];
    const int nt = tf_team_for_work(in->threads, rows, S->nnz * R * R + rows);
    const uint64_t per = longest * (R + 1) + tf_apr_newton_ws_doubles(longest, R);
    double *ws = NULL;
    tf_status s = TF_ALLOC(ws, per * (uint64_t)nt, "CP-APR Newton workspace");
    if (s != TF_OK) {
        tf_free(ptr);
        return s;
    }
    double kkt = 0.0;
    uint64_t steps = 0, changed = 0, evals = 0;
#pragma omp parallel num_threads(nt) if (nt > 1) reduction(+ : steps, changed, evals)
    {
        double *w = ws + per * (uint64_t)omp_get_thread_num();
        double *pi = w, *x = pi + longest * R, *rw = x + longest;
        double my_kkt = 0.0;
#pragma omp for schedule(dynamic, 16)
        for (int64_t ii = 0; ii < (int64_t)rows; ++ii) {
            double *b = B + ((uint64_t)ii + lo) * R;
            const uint64_t k0 = ptr[ii], k1 = ptr[ii + 1];
            if (k0 == k1) { /* an empty row of X: 0 (pyttb) */
                memset(b, 0, R * sizeof *b);
                continue;
            }
            row_pi(in, k0, k1, pi, x);
            double k0v;
            int moved;
            uint64_t ev = 0;
            steps += tf_apr_newton_row(x, pi, k1 - k0, R, p, b, rw, &k0v, &moved, &ev);
            changed += (uint64_t)moved;
            evals += ev;
            my_kkt = max_nan(my_kkt, k0v);
        }
#pragma omp critical(tf_apr_newton_kkt)
        kkt = max_nan(kkt, my_kkt); /* a maximum: the same for any order */
    }
    tf_free(ws);
    tf_free(ptr);
    st->kkt = kkt;
    st->steps = steps;
    st->rows_changed = changed;
    st->evals = evals;
    return TF_OK;
}
