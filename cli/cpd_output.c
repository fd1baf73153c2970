/* SPDX-License-Identifier: BSD-3-Clause */
/* Outputs of `tenfold cpd`: factor files and the JSON report. */
#include "cpd_output.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
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
    free(r->iters);
    r->iters = NULL;
}

void cpd_run_add_iter(cpd_run *r, const tf_cpd_iter *it)
{
    if (r->niters == r->cap) {
        uint32_t cap = r->cap ? 2 * r->cap : 64;
        tf_cpd_iter *p = realloc(r->iters, cap * sizeof *p);
        if (!p) { r->iters_lost = 1; return; }
        r->iters = p;
        r->cap = cap;
    }
    r->iters[r->niters++] = *it;
}

int cpd_check_outputs(cpd_run *r)
{
    char files[3][sizeof r->stem + 32];
    const char *paths[4] = {NULL, NULL, NULL, r->json_path};
    if (!r->nowrite) {
        snprintf(files[0], sizeof files[0], "%s.mode1.mat", r->stem);
        snprintf(files[1], sizeof files[1], "%s.lambda.mat", r->stem);
        snprintf(files[2], sizeof files[2], "%s.ktensor", r->stem);
        paths[0] = files[0], paths[1] = files[1], paths[2] = r->no_ktensor ? NULL : files[2];
    }
    const int rc = cli_outputs_check(paths, 4);
    r->json_write_path = paths[3]; /* standard output's alias when the report goes there */
    return rc;
}

int cpd_write_factors(cpd_run *r)
{
    if (r->nowrite) return CLI_OK;
    double t0 = tf_wtime();
    unsigned flags = TF_KTENSOR_SPLATT | (r->no_ktensor ? 0 : TF_KTENSOR_TTB);
    if (tf_ktensor_write(r->stem, &r->k, flags) != TF_OK) return cli_fail();
    r->t_write = tf_wtime() - t0;
    for (uint32_t m = 0; m < r->k.order; ++m)
        snprintf(r->written[r->nwritten++], sizeof r->written[0], "%s.mode%u.mat", r->stem, m + 1);
    snprintf(r->written[r->nwritten++], sizeof r->written[0], "%s.lambda.mat", r->stem);
    if (!r->no_ktensor) snprintf(r->written[r->nwritten++], sizeof r->written[0], "%s.ktensor", r->stem);
    if (!cli_quiet())
        printf("wrote: %s.mode{1..%u}.mat, %s.lambda.mat%s%s%s\n", r->stem, r->k.order, r->stem,
           r->no_ktensor ? "" : ", ", r->no_ktensor ? "" : r->stem, r->no_ktensor ? "" : ".ktensor");
    return CLI_OK;
}

static void json_input(cli_json *j, const cpd_run *r)
{
    const tf_read_info *in = &r->info;
    const char *spec = cli_generated(r->path);
    json_object(j, "input");
    if (spec) { /* --gen: no file (null), the SPEC and the rate */
        json_num(j, "file", NAN);
        json_str(j, "generated", spec);
        json_num(j, "nnz_per_second", in->seconds > 0 ? (double)r->t.nnz / in->seconds : NAN);
    } else {
        json_str(j, "file", r->path);
    }
    json_str(j, "format", spec ? "generated" : cli_file_format_name(in->format));
    json_str(j, "compression", in->compressed ? cli_compression_name(in->compressed) : "none");
    json_u64(j, "bytes", in->bytes);
    json_u64(j, "lines", in->lines);
    json_u64(j, "entries", in->entries);
    json_u64(j, "duplicates_summed", in->duplicates);
    json_u64(j, "zeros_dropped", in->zeros);
    json_u64(j, "index_base", (uint64_t)in->index_base);
    json_str(j, "index_base_from", cli_base_source_name(in->base_source));
    json_num(j, "read_seconds", in->seconds);
    json_end(j);

    json_object(j, "tensor");
    json_u64(j, "order", r->t.order);
    json_array(j, "dims");
    for (uint32_t m = 0; m < r->t.order; ++m) json_u64(j, NULL, r->t.dims[m]);
    json_end(j);
    json_u64(j, "nnz", r->t.nnz);
    json_num(j, "density", cli_density(&r->t));
    json_u64(j, "coo_bytes", tf_tensor_bytes(&r->t));
    json_end(j);
}

static void json_options(cli_json *j, const cpd_run *r)
{
    const tf_cpd_opts *o = &r->opts;
    json_object(j, "options");
    json_u64(j, "rank", o->rank);
    json_u64(j, "max_iters", o->max_iters);
    json_num(j, "tol", o->tol);
    json_u64(j, "seed", o->seed);
    if (r->init.stem) json_str(j, "init", r->init.stem);
    else if (o->start == TF_START_NVECS) json_str(j, "init", "nvecs");
    else json_num(j, "init", NAN); /* null: the random start from the seed */
    json_u64(j, "threads", (uint64_t)(o->threads ? o->threads : tf_default_threads()));
    json_u64(j, "memory_limit", r->memory_limit);
    json_str(j, "device", tf_backend_name(o->backend));
    json_str(j, "format", tf_format_name(o->format));
    json_str(j, "precision", o->precision == TF_SINGLE ? "single" : "double");
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
        json_end(j);
    }
    json_array(j, "iterations");
    for (uint32_t i = 0; i < r->niters; ++i) {
        json_object(j, NULL);
        json_u64(j, "iter", r->iters[i].iter);
        json_num(j, "fit", r->iters[i].fit);
        json_num(j, "delta_fit", r->iters[i].dfit);
        json_num(j, "seconds", r->iters[i].seconds);
        json_end(j);
    }
    json_end(j);
    if (r->iters_lost) json_bool(j, "iterations_complete", 0); /* out of memory for the list */
    json_object(j, "result");
    json_num(j, "fit", p->fit);
    json_u64(j, "iterations", p->iters);
    json_bool(j, "converged", p->converged);
    json_u64(j, "pinv_fallbacks", p->pinv_fallbacks);
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
    json_num(j, "cpd_total", p->t_total);
    json_num(j, "write", r->t_write);
    json_num(j, "wall", r->wall);
    json_end(j);
    json_array(j, "outputs");
    for (int i = 0; i < r->nwritten; ++i) json_str(j, NULL, r->written[i]);
    json_end(j);
}

int cpd_write_json(const cpd_run *r)
{
    if (!r->json_path) return CLI_OK;
    cli_outfile out;
    if (cli_out_open(&out, r->json_write_path ? r->json_write_path : r->json_path)) return CLI_FAIL;
    cli_json j;
    json_open(&j, out.f);
    json_str(&j, "tenfold", tf_version());
    json_u64(&j, "schema", CLI_JSON_SCHEMA);
    json_str(&j, "command", "cpd");
    json_input(&j, r);
    json_options(&j, r);
    json_result(&j, r);
    json_close(&j);
    if (cli_out_commit(&out)) return CLI_FAIL;
    if (!cli_quiet()) printf("wrote: %s (report)\n", r->json_path);
    return CLI_OK;
}
