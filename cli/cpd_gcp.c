/* SPDX-License-Identifier: BSD-3-Clause */
/* `tenfold cpd --method gcp` (cpd_gcp.h). */
#include "cpd_gcp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "history.h"
#include "report.h"
#include "verbosity.h"

const char *cpd_gcp_given(const cpd_gcp_args *g)
{
    return g->loss ? "--loss" : g->samples ? "--samples" : g->fsamples ? "--fsamples"
         : g->epoch_iters ? "--epoch-iters" : g->epochs ? "--epochs" : g->rate ? "--rate"
         : g->decay ? "--decay" : g->fails ? "--fails" : g->dense ? "--dense-loss" : g->sampling ? "--sampling"
         : NULL;
}

/* "NZ,Z" -> two counts (0: GenTen's default). */
static int pair(const char *opt, const char *s, uint64_t *nz, uint64_t *z)
{
    if (!s) return CLI_OK;
    uint64_t v[2] = {0, 0};
    int n = 0;
    int rc = cli_u64_list("cpd", opt, s, 0, UINT64_C(1) << 40, v, 2, &n);
    if (rc) return rc;
    if (n != 2) return cli_usage("cpd", "%s: expected NZ,Z (non-zero and zero samples), got '%s'", opt, s);
    *nz = v[0];
    *z = v[1];
    return CLI_OK;
}

int cpd_gcp_options(cpd_gcp *a, const tf_cpd_opts *o, const cpd_gcp_args *g)
{
    tf_gcp_opts *p = &a->opts;
    tf_gcp_opts_default(p);
    if (!g->loss) return cli_usage("cpd", "--method gcp needs --loss (gaussian, poisson, poisson-log, bernoulli-odds, "
                                          "bernoulli-logit, gamma, rayleigh)");
    const int loss = tf_gcp_loss_parse(g->loss);
    if (loss < 0)
        return cli_usage("cpd", "--loss: expected gaussian, poisson, poisson-log, bernoulli-odds (bernoulli), "
                                "bernoulli-logit, gamma or rayleigh, got '%s'", g->loss);
    p->loss = (tf_gcp_loss)loss;
    p->dense = g->dense;
    uint64_t iters = p->epoch_iters, epochs = 0, fails = p->max_fails;
    int rc;
    if ((rc = pair("--samples", g->samples, &p->gnz, &p->gz)) || (rc = pair("--fsamples", g->fsamples, &p->fnz, &p->fz)) ||
        (rc = cli_u64("cpd", "--epoch-iters", g->epoch_iters, 1, 100000000, &iters)) ||
        (rc = cli_u64("cpd", "--epochs", g->epochs, 1, 100000000, &epochs)) ||
        (rc = cli_double("cpd", "--rate", g->rate, 1e-300, 1e6, &p->rate)) ||
        (rc = cli_double("cpd", "--decay", g->decay, 1e-300, 1.0, &p->decay)) ||
        (rc = cli_u64("cpd", "--fails", g->fails, 0, 1000000, &fails)))
        return rc;
    if (g->sampling) {
        if (!strcmp(g->sampling, "stratified")) p->sampling = TF_GCP_STRATIFIED;
        else if (!strcmp(g->sampling, "semi-stratified")) p->sampling = TF_GCP_SEMI_STRATIFIED;
        else return cli_usage("cpd", "--sampling: expected stratified or semi-stratified, got '%s'", g->sampling);
    }
    if (g->dense && (g->samples || g->fsamples || g->epoch_iters || g->rate || g->decay || g->fails || g->sampling))
        return cli_usage("cpd", "--dense-loss takes every entry by L-BFGS: not with %s",
                         g->samples ? "--samples" : g->fsamples ? "--fsamples" : g->epoch_iters ? "--epoch-iters"
                         : g->rate ? "--rate" : g->decay ? "--decay" : g->fails ? "--fails" : "--sampling");
    p->epoch_iters = (uint32_t)iters;
    p->max_epochs = (uint32_t)epochs;
    p->max_fails = (uint32_t)fails;
    p->rank = o->rank;
    p->seed = o->seed;
    p->threads = o->threads;
    p->backend = o->backend;
    p->device = o->device;
    return CLI_OK;
}

void cpd_gcp_free(cpd_gcp *a)
{
    free(a->epochs);
    a->epochs = NULL;
    a->nepochs = a->cap = 0;
}

void cpd_gcp_on_epoch(const tf_gcp_epoch *e, void *user)
{
    cpd_gcp *a = user;
    void *items = a->epochs;
    cli_history_add(&items, &a->nepochs, &a->cap, sizeof *e, e, &a->epochs_lost);
    a->epochs = items;
    if (cli_quiet()) return;
    if (a->opts.dense)
        printf("  its = %3u (%.3f s)  loss = %.10g  step = %.3g\n", e->epoch, e->seconds, e->loss_estimate, e->rate);
    else
        printf("  epoch = %3u (%.3f s)  loss estimate = %.10g  rate = %.3g%s", e->epoch, e->seconds, e->loss_estimate,
               e->rate, e->failed ? "  failed (undone, rate decayed)" : "");
    if (!a->opts.dense && cli_verbose())
        printf("  [sample %.3f  gradient %.3f  step %.3f  estimate %.3f s]", e->t_sample, e->t_gradient, e->t_step,
               e->t_estimate);
    if (!a->opts.dense) printf("\n");
    cli_flush_stdout();
}

void cpd_gcp_print_start(const cpd_gcp *a, const char *start, const char *threads)
{
    const tf_gcp_opts *o = &a->opts;
    if (o->dense) {
        printf("cpd: GCP, %s loss over every entry (dense, L-BFGS), rank %llu, max %u iterations, %s, %s\n",
               tf_gcp_loss_name(o->loss), (unsigned long long)o->rank, o->max_epochs ? o->max_epochs : 1000, start,
               threads);
        return;
    }
    printf("cpd: GCP-Adam, %s loss, %s sampling, rank %llu, max %u epochs of %u iterations, rate %g (decay %g, max "
           "fails %u), %s, %s\n", tf_gcp_loss_name(o->loss), tf_gcp_sampling_name(o->sampling),
           (unsigned long long)o->rank, o->max_epochs ? o->max_epochs : 100,
           o->epoch_iters, o->rate, o->decay, o->max_fails, start, threads);
}

void cpd_gcp_print_summary(const cpd_gcp *a, double t_read, double t_write, double wall)
{
    const tf_gcp_report *r = &a->rep;
    const tf_gcp_opts *o = &a->opts;
    if (o->dense) {
        printf("final loss: %.12g after %u iteration%s (%s)\n", r->loss_estimate, r->epochs, cli_s(r->epochs),
               r->converged ? "converged" : r->stopped ? "stopped" : "stopped at the iteration limit, --epochs");
        printf("  loss = the sum over every entry (zeros too) of the %s loss f(x, m)\n", tf_gcp_loss_name(o->loss));
    } else {
        printf("final loss estimate: %.10g after %u epoch%s, %u failed (%s)\n", r->loss_estimate, r->epochs,
               cli_s(r->epochs), r->fails,
               r->fails > o->max_fails ? "stopped: more failed epochs than --fails"
               : r->stopped ? "stopped" : r->converged ? "converged" : "the epoch limit, --epochs");
        printf("  loss estimate = the %s loss summed over a fixed sample of %llu non-zeros and %llu zeros, weighted\n"
               "  to stand for the whole tensor (start: %.10g); samples per iteration: %llu non-zeros, %llu %s\n",
               tf_gcp_loss_name(o->loss), (unsigned long long)r->fnz, (unsigned long long)r->fz, r->loss_initial,
               (unsigned long long)r->gnz, (unsigned long long)r->gz,
               o->sampling == TF_GCP_SEMI_STRATIFIED ? "uniform entries (semi-stratified)" : "zeros");
    }
    printf("plan: %s\n", r->plan);
    if (r->note[0]) printf("note: %s\n", r->note);
    printf("timing (s): read %.3f  build %.3f  sample %.3f  gradient %.3f  step %.3f  estimate %.3f  cpd total %.3f"
           "  write %.3f  wall %.3f\n", t_read, r->t_build, r->t_sample, r->t_gradient, r->t_step, r->t_estimate,
           r->t_total, t_write, wall);
}

void cpd_gcp_json_options(const cpd_gcp *a, cli_json *j)
{
    const tf_gcp_opts *o = &a->opts;
    const tf_gcp_report *r = &a->rep;
    json_str(j, "algorithm", o->dense ? "GCP dense L-BFGS" : "GCP-Adam");
    json_str(j, "loss", tf_gcp_loss_name(o->loss));
    json_bool(j, "dense_loss", o->dense);
    if (!o->dense) {
        json_u64(j, "epoch_iters", o->epoch_iters);
        json_num(j, "rate", o->rate);
        json_num(j, "decay", o->decay);
        json_u64(j, "max_fails", o->max_fails);
        json_str(j, "sampling", tf_gcp_sampling_name(o->sampling));
        json_u64(j, "samples_nonzero", r->gnz);
        json_u64(j, "samples_zero", r->gz);
        json_u64(j, "fsamples_nonzero", r->fnz);
        json_u64(j, "fsamples_zero", r->fz);
    }
}

void cpd_gcp_json_result(const cpd_gcp *a, double t_read, double t_write, double wall, cli_json *j)
{
    const tf_gcp_report *p = &a->rep;
    json_str(j, "plan", p->plan);
    if (p->note[0]) json_str(j, "note", p->note);
    json_array(j, "iterations");
    for (uint32_t i = 0; i < a->nepochs; ++i) {
        const tf_gcp_epoch *e = &a->epochs[i];
        json_object(j, NULL);
        json_u64(j, "iter", e->epoch);
        json_num(j, "loss_estimate", e->loss_estimate);
        json_num(j, "rate", e->rate);
        json_bool(j, "failed", e->failed);
        json_num(j, "seconds", e->seconds);
        json_end(j);
    }
    json_end(j);
    if (a->epochs_lost) json_bool(j, "iterations_complete", 0);
    json_object(j, "result");
    json_num(j, "loss_estimate", p->loss_estimate);
    json_num(j, "loss_initial", p->loss_initial);
    json_u64(j, "iterations", p->epochs);
    json_u64(j, "adam_iterations", p->iters);
    json_u64(j, "failed_epochs", p->fails);
    json_bool(j, "converged", p->converged);
    json_end(j);
    json_object(j, "timing_seconds");
    json_num(j, "read", t_read);
    json_num(j, "build", p->t_build);
    json_num(j, "sample", p->t_sample);
    json_num(j, "gradient", p->t_gradient);
    json_num(j, "step", p->t_step);
    json_num(j, "estimate", p->t_estimate);
    json_num(j, "cpd_total", p->t_total);
    json_num(j, "write", t_write);
    json_num(j, "wall", wall);
    json_end(j);
}
