/* SPDX-License-Identifier: BSD-3-Clause */
/* Outputs of `tenfold cpd`: factor files and the JSON report. */
#include "cpd_output.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "history.h"
#include "json.h"
#include "outfile.h"
#include "report.h"
#include "verbosity.h"

void cpd_run_init(cpd_run *r)
{
    memset(r, 0, sizeof *r);
    tf_cpd_opts_default(&r->opts);
}

void cpd_run_free(cpd_run *r)
{
    tf_tensor_free(&r->t);
    tf_ktensor_free(&r->k);
    cpd_init_free(&r->init);
    cpd_apr_free(&r->apr);
    cpd_gcp_free(&r->gcp);
    cpd_run_abort_set(r);
    free(r->iters);
    r->iters = NULL;
}

void cpd_run_add_iter(cpd_run *r, const tf_cpd_iter *it)
{
    void *items = r->iters;
    cli_history_add(&items, &r->niters, &r->cap, sizeof *it, it, &r->iters_lost);
    r->iters = items;
}

void cpd_run_abort_set(cpd_run *r)
{
    if (r->set) tf_ktensor_out_abort(r->set); /* temporaries removed, the lock released */
    r->set = NULL;
}

/* The names of the factor set STEM that cli_paths_distinct compares: every
 * STEM.mode<N>.mat a set can have, STEM.lambda.mat, STEM.ktensor, STEM.set
 * and STEM.lock (the manifest and lock, outputs only). Returns the count. */
static int set_names(const char *stem, int output, char (*names)[sizeof ((cpd_run *)0)->stem + 32], cli_path *p,
                     int group)
{
    int n = 0;
    for (int m = 1; m <= TF_MAX_ORDER; ++m) snprintf(names[n++], sizeof names[0], "%s.mode%d.mat", stem, m);
    snprintf(names[n++], sizeof names[0], "%s.lambda.mat", stem);
    snprintf(names[n++], sizeof names[0], "%s.set", stem);
    if (output) {
        snprintf(names[n++], sizeof names[0], "%s.ktensor", stem);
        snprintf(names[n++], sizeof names[0], "%s.lock", stem);
    }
    for (int i = 0; i < n; ++i) {
        const char *what = !output ? "the --init file" : i == TF_MAX_ORDER + 1 ? "the manifest"
                         : i == TF_MAX_ORDER + 3 ? "the lock file" : "the factor file";
        p[i] = (cli_path){what, names[i], output, group};
    }
    return n;
}

int cpd_check_outputs(cpd_run *r)
{
    /* no output may be an input or another output: the input, --init's
     * files, the factor set, the report. --init STEM -o STEM is the one
     * overlap allowed: the start is read whole before the set is switched,
     * and the switch replaces that set as one. */
    enum { SET_NAMES = TF_MAX_ORDER + 4 };
    char (*names)[sizeof r->stem + 32] = malloc(2 * SET_NAMES * sizeof *names);
    cli_path p[2 * SET_NAMES + 2];
    if (!names) {
        fprintf(stderr, "tenfold: out of memory\n");
        return CLI_FAIL;
    }
    int n = 0;
    if (!cli_generated(r->path)) p[n++] = (cli_path){"the input", r->path, 0, 0};
    int same_set = 0;
    if (r->init.stem && !r->nowrite) {
        char a[sizeof r->stem + 8], b[sizeof r->stem + 8];
        tf_path_id ia, ib;
        snprintf(a, sizeof a, "%s.set", r->init.stem);
        snprintf(b, sizeof b, "%s.set", r->stem);
        tf_path_id_get(a, 1, &ia);
        tf_path_id_get(b, 1, &ib);
        same_set = tf_path_id_same(&ia, &ib);
    }
    if (r->init.stem) n += set_names(r->init.stem, 0, names, p + n, same_set);
    if (!r->nowrite) n += set_names(r->stem, 1, names + SET_NAMES, p + n, 1);
    if (r->json_path) p[n++] = (cli_path){"--json", r->json_path, 1, 0};
    int rc = cli_paths_distinct("cpd", p, n);
    free(names);
    if (rc) return rc;
    const char *json[1] = {r->json_path};
    if ((rc = cli_outputs_check(json, 1))) return rc;
    r->json_write_path = json[0]; /* standard output's alias when the report goes there */
    if (r->nowrite) return CLI_OK;
    /* the places of the set, and its lock, held from here to the switch: a
     * second run writing the same stem stops now, not after its work */
    const unsigned flags = TF_KTENSOR_SPLATT | (r->no_ktensor ? 0 : TF_KTENSOR_TTB);
    if (tf_ktensor_out_open(r->stem, flags, &r->set) != TF_OK) return cli_fail();
    return CLI_OK;
}

int cpd_write_factors(cpd_run *r)
{
    if (r->nowrite) return CLI_OK;
    double t0 = tf_wtime();
    if (tf_ktensor_out_put(r->set, &r->k) != TF_OK) {
        cpd_run_abort_set(r);
        return cli_fail();
    }
    r->t_write = tf_wtime() - t0;
    for (uint32_t m = 0; m < r->k.order; ++m)
        snprintf(r->written[r->nwritten++], sizeof r->written[0], "%s.mode%u.mat", r->stem, m + 1);
    snprintf(r->written[r->nwritten++], sizeof r->written[0], "%s.lambda.mat", r->stem);
    if (!r->no_ktensor) snprintf(r->written[r->nwritten++], sizeof r->written[0], "%s.ktensor", r->stem);
    return CLI_OK;
}

int cpd_switch(cpd_run *r)
{
    if (r->nowrite) return CLI_OK;
    tf_ktensor_out *set = r->set;
    r->set = NULL;
    if (tf_ktensor_out_commit(set) != TF_OK) return cli_fail();
    if (!cli_quiet())
        printf("wrote: %s.mode{1..%u}.mat, %s.lambda.mat%s%s%s (one set: %s.set)\n", r->stem, r->k.order, r->stem,
               r->no_ktensor ? "" : ", ", r->no_ktensor ? "" : r->stem, r->no_ktensor ? "" : ".ktensor", r->stem);
    return CLI_OK;
}

static void json_options(cli_json *j, const cpd_run *r)
{
    const tf_cpd_opts *o = &r->opts;
    const int apr = r->apr.on;
    json_object(j, "options");
    json_u64(j, "rank", o->rank);
    json_u64(j, "max_iters", apr ? r->apr.opts.max_iters : r->gcp.on ? r->gcp.opts.max_epochs : o->max_iters);
    json_num(j, "tol", apr ? r->apr.opts.stoptol : r->gcp.on ? r->gcp.opts.gtol : o->tol);
    json_u64(j, "seed", o->seed);
    if (r->init.stem) json_str(j, "init", r->init.stem);
    else if (o->start == TF_START_NVECS) json_str(j, "init", "nvecs");
    else json_num(j, "init", NAN); /* null: the random start from the seed */
    json_u64(j, "threads", (uint64_t)(o->threads ? o->threads : tf_default_threads()));
    json_u64(j, "memory_limit", r->memory_limit);
    json_str(j, "device", tf_backend_name(o->backend));
    json_str(j, "format", tf_format_name(o->format));
    json_str(j, "precision", o->precision == TF_SINGLE ? "single" : "double");
    if (apr) cpd_apr_json_options(&r->apr, j);
    else if (r->gcp.on) cpd_gcp_json_options(&r->gcp, j);
    else cpd_constraints_json(&r->cons, r->t.order, &r->rep, j);
    json_end(j);
}

const char *cpd_schedule_name(int schedule)
{
    return schedule == TF_PARTITION_LONGEST_FIRST ? "longest-first" : "contiguous";
}

static void json_outputs(cli_json *j, const cpd_run *r)
{
    json_array(j, "outputs");
    for (int i = 0; i < r->nwritten; ++i) json_str(j, NULL, r->written[i]);
    json_end(j);
}

static void json_result(cli_json *j, const cpd_run *r)
{
    const tf_cpd_report *p = &r->rep;
    json_str(j, "plan", p->plan);
    if (p->note[0]) json_str(j, "note", p->note);
    json_object(j, "build");
    json_num(j, "nnz_per_second", p->t_build > 0 ? (double)r->t.nnz / p->t_build : 0.0);
    json_u64(j, "peak_host_bytes", p->build_peak_bytes);
    if (p->device_bytes) json_u64(j, "device_bytes", p->device_bytes);
    json_end(j);
    if (p->parts > 1) {
        json_object(j, "parts");
        json_u64(j, "count", (uint64_t)p->parts);
        json_num(j, "imbalance", p->imbalance);
        json_num(j, "exchange_seconds", p->t_exchange);
        json_array(j, "modes");
        for (uint32_t m = 0; m < r->t.order; ++m) {
            json_object(j, NULL);
            json_str(j, "schedule", cpd_schedule_name(p->schedule[m]));
            json_num(j, "imbalance", p->mode_imbalance[m]);
            json_end(j);
        }
        json_end(j);
        json_end(j);
    }
    json_array(j, "iterations");
    for (uint32_t i = 0; i < r->niters; ++i) {
        json_object(j, NULL);
        json_u64(j, "iter", r->iters[i].iter);
        json_num(j, "fit", r->iters[i].fit);
        json_num(j, "delta_fit", r->iters[i].dfit);
        json_num(j, "seconds", r->iters[i].seconds);
        if (r->cons.any) json_u64(j, "inner_iterations", r->iters[i].inner_iters);
        json_end(j);
    }
    json_end(j);
    if (r->iters_lost) json_bool(j, "iterations_complete", 0); /* out of memory for the list */
    json_object(j, "result");
    json_num(j, "fit", p->fit);
    json_u64(j, "iterations", p->iters);
    json_bool(j, "converged", p->converged);
    json_u64(j, "pinv_fallbacks", p->pinv_fallbacks);
    if (r->cons.any) json_u64(j, "inner_iterations", p->inner_iters);
    json_end(j);
    json_object(j, "timing_seconds");
    json_num(j, "read", r->info.seconds);
    json_num(j, "init", p->t_init);
    json_num(j, "build", p->t_build);
    double mtt = 0;
    json_array(j, "mttkrp_per_mode");
    for (uint32_t m = 0; m < r->t.order; ++m) json_num(j, NULL, p->t_mttkrp[m]), mtt += p->t_mttkrp[m];
    json_end(j);
    json_num(j, "mttkrp", mtt);
    json_num(j, "dense", p->t_dense);
    json_num(j, "fit", p->t_fit);
    json_num(j, "setup", p->t_setup);
    json_num(j, "finish", p->t_finish);
    json_num(j, "cpd_total", p->t_total);
    json_num(j, "write", r->t_write);
    json_num(j, "wall", r->wall);
    json_end(j);
    json_outputs(j, r);
}

int cpd_write_json(cpd_run *r)
{
    if (!r->json_path) return CLI_OK;
    const char *path = r->json_write_path ? r->json_write_path : r->json_path;
    cli_outfile out;
    if (cli_out_open(&out, path)) return CLI_FAIL;
    cli_json j;
    json_open(&j, out.f);
    json_str(&j, "tenfold", tf_version());
    json_u64(&j, "schema", CLI_JSON_SCHEMA);
    json_str(&j, "command", "cpd");
    cli_json_input(&j, r->path, &r->t, &r->info);
    json_options(&j, r);
    if (r->apr.on) {
        cpd_apr_json_result(&r->apr, r->t.nnz, r->info.seconds, r->t_write, r->wall, &j);
        json_outputs(&j, r);
    } else if (r->gcp.on) {
        cpd_gcp_json_result(&r->gcp, r->info.seconds, r->t_write, r->wall, &j);
        json_outputs(&j, r);
    } else {
        json_result(&j, r);
    }
    json_close(&j);
    if (!r->set) return cli_out_commit(&out);
    /* with the factor set: renamed by the same switch (a report that cannot
     * be written -- standard output, a FIFO or a device written now --
     * stops the run before the switch, the previous set untouched) */
    int rc = cli_out_close(&out);
    if (rc == CLI_OK && tf_ktensor_out_add(r->set, path, out.buf, out.len) != TF_OK) rc = cli_fail();
    cli_out_abort(&out);
    if (rc) cpd_run_abort_set(r);
    return rc;
}

void cpd_print_json_written(const cpd_run *r)
{
    if (r->json_path && !cli_quiet()) printf("wrote: %s (report)\n", r->json_path);
}
