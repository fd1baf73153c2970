/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd --method apr` (cpd_apr.h). */
#include "cpd_apr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "history.h"
#include "report.h"
#include "verbosity.h"

int cpd_apr_options(cpd_apr *a, const tf_cpd_opts *o, const char *iters, const char *tol, const char *inner,
                    const char *kappa, const char *algorithm)
{
    static const char *const algorithms[] = {"mu", "pdnr"}; /* tf_cp_apr_algorithm's order */
    tf_cp_apr_opts *p = &a->opts;
    tf_cp_apr_opts_default(p);
    uint64_t max_iters = p->max_iters, max_inner = p->max_inner;
    int rc, alg = 0;
    if ((rc = cli_choice("cpd", "--apr-algorithm", algorithm, algorithms, 2, &alg))) return rc;
    p->algorithm = (tf_cp_apr_algorithm)alg;
    if (p->algorithm == TF_CP_APR_PDNR && kappa)
        return cli_usage("cpd", "--kappa: not with --apr-algorithm pdnr (its rows need no scooch)");
    if ((rc = cli_u64("cpd", "-i/--iters", iters, 1, 1000000, &max_iters)) ||
        (rc = cli_double("cpd", "--tol", tol, 0.0, 1e6, &p->stoptol)) ||
        (rc = cli_u64("cpd", "--inner", inner, 1, 100000, &max_inner)) ||
        (rc = cli_double("cpd", "--kappa", kappa, 0.0, 1e6, &p->kappa)))
        return rc;
    p->max_iters = (uint32_t)max_iters;
    p->max_inner = (uint32_t)max_inner;
    p->rank = o->rank;
    p->seed = o->seed;
    p->threads = o->threads;
    p->backend = o->backend;
    p->device = o->device;
    return CLI_OK;
}

void cpd_apr_free(cpd_apr *a)
{
    free(a->iters);
    a->iters = NULL;
    a->niters = a->cap = 0;
}

void cpd_apr_on_iteration(const tf_cp_apr_iter *it, void *user)
{
    cpd_apr *a = user;
    void *items = a->iters;
    cli_history_add(&items, &a->niters, &a->cap, sizeof *it, it, &a->iters_lost);
    a->iters = items;
    if (cli_quiet()) return;
    printf("  its = %3u (%.3f s)  loglik = %.10g  kkt = %.4e  inner = %u", it->iter, it->seconds, it->loglik, it->kkt,
           it->inner_iters);
    if (cli_verbose())
        printf("  [phi %.3f  dense %.3f  loglik %.3f s, %llu scooched]", it->t_phi, it->t_dense, it->t_loglik,
               (unsigned long long)it->scooched);
    printf("\n");
    cli_flush_stdout();
}

void cpd_apr_print_start(const cpd_apr *a, const char *start, const char *threads)
{
    const tf_cp_apr_opts *o = &a->opts;
    if (o->algorithm == TF_CP_APR_PDNR)
        printf("cpd: CP-APR (Poisson, row-wise projected damped Newton, pdnr), rank %llu, max %u outer iteration%s of "
               "at most %u Newton steps per row, tol %g (KKT), %s, %s\n",
               (unsigned long long)o->rank, o->max_iters, cli_s(o->max_iters), o->max_inner, o->stoptol, start,
               threads);
    else
        printf("cpd: CP-APR (Poisson, multiplicative updates), rank %llu, max %u outer iteration%s of at most %u "
               "inner per mode, tol %g (KKT), kappa %g, %s, %s\n",
               (unsigned long long)o->rank, o->max_iters, cli_s(o->max_iters), o->max_inner, o->stoptol, o->kappa,
               start, threads);
}

void cpd_apr_print_summary(const cpd_apr *a, double t_read, double t_write, double wall)
{
    const tf_cp_apr_report *r = &a->rep;
    const tf_cp_apr_opts *o = &a->opts;
    if (r->converged && o->algorithm == TF_CP_APR_PDNR)
        printf("final log-likelihood: %.10g after %u iteration%s (converged: every row's KKT violation < --tol %.2g "
               "at its first Newton step)\n", r->loglik, r->iters, cli_s(r->iters), o->stoptol);
    else if (r->converged)
        printf("final log-likelihood: %.10g after %u iteration%s (converged: every mode's KKT violation < --tol %.2g "
               "at its first inner iteration)\n", r->loglik, r->iters, cli_s(r->iters), o->stoptol);
    else if (r->stopped)
        printf("final log-likelihood: %.10g after %u iteration%s (stopped; KKT violation %.3g)\n", r->loglik, r->iters,
               cli_s(r->iters), r->kkt);
    else
        printf("final log-likelihood: %.10g after %u iteration%s (stopped at the iteration limit, -i %u; KKT violation "
               "%.3g > --tol %.2g: more iterations, -i %u, go on)\n", r->loglik, r->iters, cli_s(r->iters),
               o->max_iters, r->kkt, o->stoptol, 4 * r->iters);
    printf("  log-likelihood = sum over the non-zeros of x log m - the sum of the model m (Poisson, without the\n"
           "  log x! terms; higher is better); the KKT violation is 0 at a stationary point\n");
    if (o->algorithm == TF_CP_APR_PDNR)
        printf("CP-APR: %llu Newton step%s over the rows (at most %u per row and iteration)\n",
               (unsigned long long)r->inner_iters, cli_s(r->inner_iters), o->max_inner);
    else
        printf("CP-APR: %llu inner iteration%s (at most %u per mode and iteration), %llu factor entr%s moved off zero "
               "by kappa\n", (unsigned long long)r->inner_iters, cli_s(r->inner_iters), o->max_inner,
               (unsigned long long)r->scooched, r->scooched == 1 ? "y" : "ies");
    printf("plan: %s\n", r->plan);
    if (r->note[0]) printf("note: %s\n", r->note);
    if (cli_verbose()) {
        char bytes[32];
        printf("Khatri-Rao cache: %s, %llu of %llu Phi passes read it\n",
               r->cache_bytes ? cli_bytes(bytes, sizeof bytes, (double)r->cache_bytes) : "none",
               (unsigned long long)r->cached_passes, (unsigned long long)r->passes);
    }
    printf("timing (s): read %.3f  build %.3f  phi %.3f  dense %.3f  loglik %.3f  cpd total %.3f  write %.3f"
           "  wall %.3f\n", t_read, r->t_build, r->t_phi, r->t_dense, r->t_loglik, r->t_total, t_write, wall);
}

void cpd_apr_json_options(const cpd_apr *a, cli_json *j)
{
    const tf_cp_apr_opts *o = &a->opts;
    json_str(j, "algorithm", "CP-APR");
    json_str(j, "apr_algorithm", o->algorithm == TF_CP_APR_PDNR ? "pdnr" : "mu");
    json_u64(j, "max_inner", o->max_inner);
    json_num(j, "kappa", o->kappa);
    json_num(j, "kappatol", o->kappatol);
    json_num(j, "epsdivzero", o->epsdivzero);
}

void cpd_apr_json_result(const cpd_apr *a, uint64_t nnz, double t_read, double t_write, double wall, cli_json *j)
{
    const tf_cp_apr_report *p = &a->rep;
    json_str(j, "plan", p->plan);
    if (p->note[0]) json_str(j, "note", p->note);
    json_object(j, "build");
    json_num(j, "nnz_per_second", p->t_build > 0 ? (double)nnz / p->t_build : 0.0);
    json_u64(j, "peak_host_bytes", p->build_peak_bytes);
    json_end(j);
    if (p->parts > 1) {
        json_object(j, "parts");
        json_u64(j, "count", (uint64_t)p->parts);
        json_end(j);
    }
    json_array(j, "iterations");
    for (uint32_t i = 0; i < a->niters; ++i) {
        const tf_cp_apr_iter *it = &a->iters[i];
        json_object(j, NULL);
        json_u64(j, "iter", it->iter);
        json_num(j, "log_likelihood", it->loglik);
        json_num(j, "kkt_violation", it->kkt);
        json_u64(j, "inner_iterations", it->inner_iters);
        json_u64(j, "scooched", it->scooched);
        json_num(j, "seconds", it->seconds);
        json_end(j);
    }
    json_end(j);
    if (a->iters_lost) json_bool(j, "iterations_complete", 0);
    json_object(j, "result");
    json_num(j, "log_likelihood", p->loglik);
    json_num(j, "kkt_violation", p->kkt);
    json_u64(j, "iterations", p->iters);
    json_bool(j, "converged", p->converged);
    json_u64(j, "inner_iterations", p->inner_iters);
    json_u64(j, "scooched", p->scooched);
    json_u64(j, "passes", p->passes);
    json_u64(j, "cached_passes", p->cached_passes);
    json_u64(j, "cache_bytes", p->cache_bytes);
    json_end(j);
    json_object(j, "timing_seconds");
    json_num(j, "read", t_read);
    json_num(j, "init", 0.0);
    json_num(j, "build", p->t_build);
    json_num(j, "phi", p->t_phi);
    json_num(j, "dense", p->t_dense);
    json_num(j, "loglik", p->t_loglik);
    json_num(j, "cpd_total", p->t_total);
    json_num(j, "write", t_write);
    json_num(j, "wall", wall);
    json_end(j);
}
