/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold complete: tensor completion (a CP model of the observed entries
 * only) by ALS, with validation-based stopping and held-out test RMSE. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "json.h"
#include "outfile.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold complete TRAIN -r R [options]\n"
    "\n"
    "Tensor completion: fits a rank-R CP model to the entries listed in TRAIN\n"
    "only -- the entries not listed are unknown, not zero (ratings, sensor gaps)\n"
    "-- by alternating least squares with an L2 penalty, as SPLATT's `complete\n"
    "-a als` (Smith, Park & Karypis, SC16). Per iteration each row a of each\n"
    "factor in turn solves its own R x R system\n"
    "    (sum over its observed entries of h h^T + L I) a = sum x h\n"
    "(h the product of the other factors' rows at the entry) by Cholesky. Prints\n"
    "the training and validation RMSE per iteration, keeps the model of the best\n"
    "validation RMSE (training RMSE without --val), stops after --patience\n"
    "iterations without an improvement of more than --tol, and prints the test\n"
    "RMSE of the model kept.\n"
    "\n"
    "  -r, --rank R         rank of the model (1..1024; default 10)\n"
    "      --val FILE       validation entries (same tensor, held out): RMSE per\n"
    "                       iteration, and the stopping rule\n"
    "      --test FILE      test entries (held out): the RMSE of the model kept\n"
    "      --method M       als (default) | adam: GCP-Adam (Kolda & Hong) with the\n"
    "                       Gaussian loss on the observed entries only, the same\n"
    "                       objective as ALS's: each step's gradient from a\n"
    "                       uniform sample of TRAIN's entries (each weighing\n"
    "                       count / sample), no zeros, plus 2 L A_n; an\n"
    "                       iteration is an epoch of --epoch-iters steps; an epoch\n"
    "                       that raises the validation RMSE (without --val: the\n"
    "                       objective's fixed-sample estimate) is undone and the\n"
    "                       rate divided by 10; more than one such ends the run\n"
    "      --rate R         adam: the step size (default 1e-3)\n"
    "      --epoch-iters N  adam: steps per epoch (default 1000)\n"
    "      --samples S      adam: entries drawn per step (default 3% of TRAIN, at\n"
    "                       least 1000; >= TRAIN's count: every entry)\n"
    "      --l2 L           the penalty L >= 0 (SPLATT's --reg; default 100, as\n"
    "                       SPLATT's ALS): the objective is the sum of squared\n"
    "                       errors on TRAIN + L * sum of the factors' squared\n"
    "                       Frobenius norms\n"
    "  -i, --iters N        maximum number of iterations (default 1000)\n"
    "      --tol T          an iteration improves when it lowers the best RMSE by\n"
    "                       more than T (default 1e-4)\n"
    "      --patience N     stop after N iterations without improvement (default\n"
    "                       20, as SPLATT's)\n"
    "      --seed S         seed of the random start, factors uniform in [-1, 1)\n"
    "                       (default 20240601)\n"
    "      --init STEM      start from the factor set STEM (STEM.mode<N>.mat, as -o\n"
    "                       writes it; its lambda, if any, folded into the first\n"
    "                       factor); without -r the rank is its column count\n"
    "  -o, --stem STEM      write the model kept as cpd -o does: STEM.mode<N>.mat,\n"
    "                       STEM.lambda.mat (ones) and STEM.ktensor, one set\n"
    "                       switched through STEM.set (see tenfold cpd --help);\n"
    "                       tenfold predict STEM COORDS evaluates it\n"
    "      --json REPORT    a machine-readable report (JSON; '-' is standard output),\n"
    "                       switched together with the set when there is one:\n"
    "                       result.train_rmse, result.val_rmse, result.test_rmse,\n"
    "                       iterations[].train_rmse, iterations[].val_rmse\n"
    "      --device D       auto|cpu|gpu (default auto: one GPU where there is one,\n"
    "                       else the CPU). ALS on the GPU: every row's system\n"
    "                       summed and solved there (rank up to 128), the CPU's\n"
    "                       numbers to rounding; above, or a problem the GPU\n"
    "                       cannot hold, auto runs on the CPU (the note says\n"
    "                       why). --method adam on the GPU: the samples drawn\n"
    "                       and the gradient summed there (the CPU's draws)\n"
    "      --gpus G         several GPUs of this process: a count N (GPUs\n"
    "                       0..N-1), all, or a list of GPU numbers (0,2; '3,' is\n"
    "                       GPU 3 alone); every mode's rows are cut over them by\n"
    "                       training entries, each GPU solves its rows and sends\n"
    "                       them to the others: one GPU's factors, bit for bit.\n"
    "                       Adam: every GPU draws every sample, evaluates its\n"
    "                       part of it, the gradients summed (one GPU's run to\n"
    "                       rounding)\n"
    CLI_BASE_HELP
    "  -t, --threads N      CPU threads (default: all cores, or OMP_NUM_THREADS;\n"
    "                       MPI ranks that share a host's cores split them); the\n"
    "                       result does not depend on it\n"
    CLI_VERBOSITY_HELP
    "  -h, --help           this help\n"
    "\n"
    "The files are read as every tenfold input (duplicates summed), but their\n"
    "entries of value 0 are kept: an observed 0 (a rating, a reading) is data,\n"
    "fitted and counted in the RMSEs; the report says how many were kept. --val\n"
    "and --test must have TRAIN's order and indices inside its dims. tenfold\n"
    "split makes the three files from one.\n"
    "\n"
    "Several processes (a build with MPI): `mpirun -np P tenfold complete TRAIN\n"
    "...` cuts every mode's rows over the P ranks by training entries (as cpd\n"
    "does); each rank solves its rows' systems and the new rows go to every rank\n"
    "after each mode (MPI_Allgatherv); the RMSE sums are each rank's part summed\n"
    "over the ranks. The RMSEs, the model kept and the stopping point are the\n"
    "single process's (to rounding); rank 0 alone prints and writes. Every rank\n"
    "reads the whole files; the ranks first check that they agree (the command,\n"
    "the options but -t, -o, --json, and the entries read), else all stop with\n"
    "one line 'ranks disagree: ...'. Standard input cannot be read by ranks.\n"
    "With --device gpu each rank solves its rows on one GPU (one rank per GPU;\n"
    "the rows go among the GPUs through NCCL, or through the host where NCCL\n"
    "is missing or cannot serve them: TF_EXCHANGE=auto|nccl|host).\n"
    CLI_STDIN_HELP;

static const char *const device_names[] = {"auto", "cpu", "gpu"};
static const char *const method_names[] = {"als", "adam"};

typedef struct complete_run {
    const char *path, *val_path, *test_path, *base, *stem, *json_path, *json_write_path, *init;
    int rank_given;
    cli_gpus gpus;
    tf_ktensor start;
    tf_complete_opts opts;
    tf_tensor train, val, test;
    tf_read_info info, vinfo, tinfo;
    tf_ktensor result;
    tf_complete_report rep;
    tf_ktensor_out *set;
    double t_write, wall;
} complete_run;

static void run_free(complete_run *r)
{
    tf_tensor_free(&r->train);
    tf_tensor_free(&r->val);
    tf_tensor_free(&r->test);
    tf_ktensor_free(&r->result);
    tf_ktensor_free(&r->start);
    tf_complete_report_free(&r->rep);
    if (r->set) tf_ktensor_out_abort(r->set);
    r->set = NULL;
}

static int parse(int argc, char **argv, complete_run *r, cli_args *a)
{
    const char *rank = NULL, *iters = NULL, *tol = NULL, *seed = NULL, *threads = NULL, *device = NULL,
               *method = NULL, *l2 = NULL, *patience = NULL,
               *rate = NULL, *epoch_iters = NULL, *samples = NULL, *gpus = NULL;
    const cli_opt opts[] = {{"rank", 'r', &rank, NULL},         {"iters", 'i', &iters, NULL},
                            {"tol", 0, &tol, NULL},             {"seed", 0, &seed, NULL},
                            {"threads", 't', &threads, NULL},   {"stem", 'o', &r->stem, NULL},
                            {"json", 0, &r->json_path, NULL},   {"device", 0, &device, NULL},
                            {"method", 0, &method, NULL},       {"l2", 0, &l2, NULL},
                            {"patience", 0, &patience, NULL},   {"val", 0, &r->val_path, NULL},
                            {"test", 0, &r->test_path, NULL},   {"base", 0, &r->base, NULL},
                            {"init", 0, &r->init, NULL},        {"rate", 0, &rate, NULL},
                            {"epoch-iters", 0, &epoch_iters, NULL}, {"samples", 0, &samples, NULL},
                            {"gpus", 0, &gpus, NULL},           CLI_VERBOSITY_OPTS,
                            {0}};
    int rc = cli_parse(a, "complete", help, argc, argv, opts, 1, 1, "TRAIN");
    if (rc >= 0) return rc;
    r->path = a->pos[0];
    tf_complete_opts *o = &r->opts;
    if (!rank && !r->init) return cli_usage("complete", "missing -r R (the rank of the model)");
    r->rank_given = rank != NULL;
    int dev = 0, meth = 0;
    uint64_t R = o->rank, max_iters = o->max_iters, pat = o->patience, eit = o->epoch_iters;
    if ((rc = cli_u64("complete", "-r/--rank", rank, 1, TF_COMPLETE_MAX_RANK, &R)) ||
        (rc = cli_u64("complete", "-i/--iters", iters, 1, 1000000, &max_iters)) ||
        (rc = cli_u64("complete", "--patience", patience, 1, 1000000, &pat)) ||
        (rc = cli_double("complete", "--tol", tol, 0.0, 1e300, &o->tol)) ||
        (rc = cli_double("complete", "--l2", l2, 0.0, 1e300, &o->l2)) ||
        (rc = cli_u64("complete", "--seed", seed, 0, UINT64_MAX, &o->seed)) ||
        (rc = cli_threads("complete", threads, &o->threads)) ||
        (rc = cli_choice("complete", "--device", device, device_names, 3, &dev)) ||
        (rc = cli_choice("complete", "--method", method, method_names, 2, &meth)) ||
        (rc = cli_double("complete", "--rate", rate, 1e-300, 1e300, &o->rate)) ||
        (rc = cli_u64("complete", "--epoch-iters", epoch_iters, 1, 100000000, &eit)) ||
        (rc = cli_u64("complete", "--samples", samples, 1, UINT64_MAX, &o->samples)) ||
        (rc = cli_parse_gpus("complete", gpus, &r->gpus)))
        return rc;
    if (gpus && dev == TF_BACKEND_CPU) return cli_usage("complete", "--gpus: not with --device cpu");
    o->epoch_iters = (uint32_t)eit;
    if (!meth && (rate || epoch_iters || samples))
        return cli_usage("complete", "--rate, --epoch-iters and --samples are --method adam's");
    o->rank = R;
    o->max_iters = (uint32_t)max_iters;
    o->patience = (uint32_t)pat;
    o->backend = (tf_backend)dev;
    o->method = meth ? TF_COMPLETE_ADAM : TF_COMPLETE_ALS;
    if (r->stem && (!*r->stem || !strcmp(r->stem, "-")))
        return cli_usage("complete", "-o %s: the model is several files, give a stem (--json - puts the report on "
                                     "standard output)", r->stem);
    const char *ins[3] = {r->path, r->val_path, r->test_path};
    const char *names[3] = {"TRAIN", "--val", "--test"};
    if ((rc = cli_one_stdin("complete", ins, names, 3))) return rc;
    return -1;
}

/* Before the inputs are read: no output is an input or another output, the
 * places can be written, the set's lock is held. */
static int check_outputs(complete_run *r)
{
    char names[TF_MAX_ORDER + 4][4200];
    cli_path p[TF_MAX_ORDER + 8];
    int n = 0;
    p[n++] = (cli_path){"TRAIN", r->path, 0, 0};
    if (r->val_path) p[n++] = (cli_path){"--val", r->val_path, 0, 0};
    if (r->test_path) p[n++] = (cli_path){"--test", r->test_path, 0, 0};
    if (r->stem) {
        int k = 0;
        for (int m = 1; m <= TF_MAX_ORDER; ++m) snprintf(names[k++], sizeof names[0], "%s.mode%d.mat", r->stem, m);
        snprintf(names[k++], sizeof names[0], "%s.lambda.mat", r->stem);
        snprintf(names[k++], sizeof names[0], "%s.ktensor", r->stem);
        snprintf(names[k++], sizeof names[0], "%s.set", r->stem);
        snprintf(names[k++], sizeof names[0], "%s.lock", r->stem);
        for (int i = 0; i < k; ++i) p[n++] = (cli_path){"the output set", names[i], 1, 1};
    }
    if (r->json_path) p[n++] = (cli_path){"--json", r->json_path, 1, 0};
    int rc = cli_paths_distinct("complete", p, n);
    if (rc) return rc;
    const char *json[1] = {r->json_path};
    if ((rc = cli_outputs_check(json, 1))) return rc;
    r->json_write_path = json[0];
    if (r->stem && tf_ktensor_out_open(r->stem, TF_KTENSOR_ALL, &r->set) != TF_OK) return cli_fail();
    return CLI_OK;
}

static void on_iteration(const tf_complete_iter *it, void *user)
{
    (void)user;
    if (cli_quiet()) return;
    printf("  its = %3u (%.3f s)  train rmse = %.6f", it->iter, it->seconds, it->train_rmse);
    if (it->val_rmse == it->val_rmse) printf("  val rmse = %.6f", it->val_rmse);
    if (it->failed) printf("  failed: undone, rate now %g", it->rate * 0.1);
    if (cli_verbose()) printf("  objective = %.10g  [solve %.3f  rmse %.3f s]", it->objective, it->t_solve, it->t_rmse);
    printf("\n");
    cli_flush_stdout();
}

static void print_summary(const complete_run *r)
{
    const tf_complete_report *p = &r->rep;
    uint32_t fails = 0;
    for (uint32_t i = 0; i < p->iters; ++i) fails += p->iterations[i].failed != 0;
    if (p->converged && fails > r->opts.max_fails)
        printf("stopped after %u epoch%s (%u failed epochs)\n", p->iters, cli_s(p->iters), fails);
    else if (p->converged)
        printf("stopped after %u iteration%s (%u without improving the %s RMSE by more than --tol %.2g)\n", p->iters,
               cli_s(p->iters), r->opts.patience, r->val.nnz ? "validation" : "training", r->opts.tol);
    else
        printf("stopped after %u iteration%s (the iteration limit, -i %u)\n", p->iters, cli_s(p->iters),
               r->opts.max_iters);
    printf("model kept: iteration %u  train rmse = %.6f", p->best_iter, p->train_rmse);
    if (p->val_rmse == p->val_rmse) printf("  val rmse = %.6f", p->val_rmse);
    printf("\n");
    if (p->test_rmse == p->test_rmse)
        printf("test rmse = %.6f (%llu held-out entr%s)\n", p->test_rmse, (unsigned long long)r->test.nnz,
               r->test.nnz == 1 ? "y" : "ies");
    if (p->note[0]) printf("note: %s\n", p->note);
    printf("plan: %s\n", p->plan);
    printf("timing (s): read %.3f  build %.3f  solve %.3f  rmse %.3f  test %.3f  complete total %.3f  write %.3f  "
           "wall %.3f\n",
           r->info.seconds + r->vinfo.seconds + r->tinfo.seconds, p->t_build, p->t_solve, p->t_rmse, p->t_test,
           p->t_total, r->t_write, r->wall);
    if (p->iters) printf("per iteration (s): %.4f (solve %.4f)\n", (p->t_solve + p->t_rmse) / p->iters,
                         p->t_solve / p->iters);
}

static int write_json(complete_run *r)
{
    if (!r->json_path) return CLI_OK;
    const char *path = r->json_write_path ? r->json_write_path : r->json_path;
    cli_outfile out;
    if (cli_out_open(&out, path)) return CLI_FAIL;
    const tf_complete_report *p = &r->rep;
    cli_json j;
    json_open(&j, out.f);
    json_str(&j, "tenfold", tf_version());
    json_u64(&j, "schema", CLI_JSON_SCHEMA);
    json_str(&j, "command", "complete");
    cli_json_input(&j, r->path, &r->train, &r->info);
    json_object(&j, "options");
    json_str(&j, "method", r->opts.method == TF_COMPLETE_ADAM ? "adam" : "als");
    if (r->opts.method == TF_COMPLETE_ADAM) {
        json_num(&j, "rate", r->opts.rate);
        json_u64(&j, "epoch_iters", r->opts.epoch_iters);
        json_u64(&j, "samples", r->opts.samples);
    }
    json_u64(&j, "rank", r->opts.rank);
    json_num(&j, "l2", r->opts.l2);
    json_u64(&j, "max_iters", r->opts.max_iters);
    json_num(&j, "tol", r->opts.tol);
    json_u64(&j, "patience", r->opts.patience);
    json_u64(&j, "seed", r->opts.seed);
    json_u64(&j, "threads", (uint64_t)(r->opts.threads ? r->opts.threads : tf_default_threads()));
    if (r->val_path) json_str(&j, "val", r->val_path);
    if (r->test_path) json_str(&j, "test", r->test_path);
    if (r->init) json_str(&j, "init", r->init);
    json_u64(&j, "val_nnz", r->val.nnz);
    json_u64(&j, "test_nnz", r->test.nnz);
    json_u64(&j, "train_zeros_kept", r->info.zeros_kept);
    json_u64(&j, "val_zeros_kept", r->vinfo.zeros_kept);
    json_u64(&j, "test_zeros_kept", r->tinfo.zeros_kept);
    json_str(&j, "device", strstr(p->plan, "GPU") ? "gpu" : "cpu");
    json_end(&j);
    if (p->note[0]) json_str(&j, "note", p->note);
    json_str(&j, "plan", p->plan);
    json_array(&j, "iterations");
    for (uint32_t i = 0; i < p->iters; ++i) {
        const tf_complete_iter *it = &p->iterations[i];
        json_object(&j, NULL);
        json_u64(&j, "iter", it->iter);
        json_num(&j, "train_rmse", it->train_rmse);
        json_num(&j, "val_rmse", it->val_rmse);
        json_num(&j, "objective", it->objective);
        json_num(&j, "seconds", it->seconds);
        json_num(&j, "solve_seconds", it->t_solve);
        json_num(&j, "rmse_seconds", it->t_rmse);
        if (r->opts.method == TF_COMPLETE_ADAM) {
            json_num(&j, "rate", it->rate);
            json_u64(&j, "failed", (uint64_t)it->failed);
        }
        json_end(&j);
    }
    json_end(&j);
    json_object(&j, "result");
    json_num(&j, "train_rmse", p->train_rmse);
    json_num(&j, "val_rmse", p->val_rmse);
    json_num(&j, "test_rmse", p->test_rmse);
    json_num(&j, "objective", p->objective);
    json_u64(&j, "iterations", p->iters);
    json_u64(&j, "best_iteration", p->best_iter);
    json_bool(&j, "converged", p->converged);
    json_end(&j);
    json_object(&j, "timing_seconds");
    json_num(&j, "read", r->info.seconds + r->vinfo.seconds + r->tinfo.seconds);
    json_num(&j, "build", p->t_build);
    json_num(&j, "solve", p->t_solve);
    json_num(&j, "rmse", p->t_rmse);
    json_num(&j, "test", p->t_test);
    json_num(&j, "per_iteration", p->iters ? (p->t_solve + p->t_rmse) / p->iters : 0.0);
    json_num(&j, "complete_total", p->t_total);
    json_num(&j, "write", r->t_write);
    json_num(&j, "wall", r->wall);
    json_end(&j);
    json_array(&j, "outputs");
    if (r->set) {
        char f[4200];
        for (uint32_t m = 0; m < r->train.order; ++m) {
            snprintf(f, sizeof f, "%s.mode%u.mat", r->stem, m + 1);
            json_str(&j, NULL, f);
        }
        snprintf(f, sizeof f, "%s.lambda.mat", r->stem);
        json_str(&j, NULL, f);
        snprintf(f, sizeof f, "%s.ktensor", r->stem);
        json_str(&j, NULL, f);
    }
    json_end(&j);
    json_close(&j);
    if (!r->set) return cli_out_commit(&out);
    int rc = cli_out_close(&out);
    if (rc == CLI_OK && tf_ktensor_out_add(r->set, path, out.buf, out.len) != TF_OK) rc = cli_fail();
    cli_out_abort(&out);
    return rc;
}

static int load_all(complete_run *r)
{
    int rc;
    if ((rc = cli_load_observed("complete", r->path, r->opts.threads, r->base, &r->train, &r->info))) return rc;
    if (r->val_path && (rc = cli_load_observed("complete", r->val_path, r->opts.threads, r->base, &r->val, &r->vinfo)))
        return rc;
    if (r->test_path &&
        (rc = cli_load_observed("complete", r->test_path, r->opts.threads, r->base, &r->test, &r->tinfo)))
        return rc;
    return CLI_OK;
}

/* What the ranks must agree on (cli_agree_begin): the options that shape
 * the result; not -t, -o, --json, which may differ or matter on rank 0 alone. */
static void agree_record(tf_agree *ag, const complete_run *r, int parse_rc)
{
    cli_agree_begin(ag, "complete", parse_rc, r->path);
    if (parse_rc >= 0) return;
    const tf_complete_opts *o = &r->opts;
    cli_agree_u64(ag, "-r/--rank", r->rank_given ? o->rank : 0);
    cli_agree_u64(ag, "-i/--iters", o->max_iters);
    cli_agree_double(ag, "--tol", o->tol);
    cli_agree_double(ag, "--l2", o->l2);
    cli_agree_u64(ag, "--patience", o->patience);
    cli_agree_u64(ag, "--seed", o->seed);
    cli_agree_str(ag, "--method", method_names[o->method == TF_COMPLETE_ADAM]);
    cli_agree_str(ag, "--device", device_names[o->backend]);
    cli_agree_gpus(ag, &r->gpus);
    cli_agree_str(ag, "--base", r->base ? r->base : "auto");
    cli_agree_str(ag, "--init", r->init);
    cli_agree_str(ag, "--val", r->val_path ? "given" : NULL);
    cli_agree_str(ag, "--test", r->test_path ? "given" : NULL);
    cli_agree_str(ag, "TF_PARTITION", getenv("TF_PARTITION"));
}

static int complete_ranks(int argc, char **argv, int rank, int size, double t_start);

/* Under mpirun with several ranks: every rank reads the entries and solves
 * its rows; rank 0 alone prints and writes. A failure on one rank ends
 * them all (the others would wait in a collective). */
int cmd_complete(int argc, char **argv)
{
    const double t_start = tf_wtime();
    int rank = 0, size = 1;
    int rc = cli_ranks_start(&argc, &argv, &rank, &size);
    if (rc) return rc;
    return cli_ranks_end(complete_ranks(argc, argv, rank, size, t_start), size);
}

/* load_all on several ranks: the ranks agree on how their reads went
 * before any says it, so a file that fails to read (on every rank, or on
 * some) stops every rank with one line (rank 0's) and no rank waits. */
static int load_ranks(complete_run *r, int size)
{
    if (size < 2) return load_all(r);
    cli_hold_failures(1);
    const int rc = load_all(r);
    cli_hold_failures(0);
    char what[512];
    snprintf(what, sizeof what, "%s", rc ? tf_last_error() : "ok");
    tf_agree ag;
    memset(&ag, 0, sizeof ag);
    tf_agree_add(&ag, "read", rc ? what : "ok");
    if (cli_ranks_agree(&ag, size)) return CLI_FAIL; /* "ranks disagree: rank R has read ..." */
    return rc ? cli_fail_all("%s", what) : CLI_OK;
}

/* The same entries on every rank (after the reads, before any collective of the run). */
static int agree_inputs(const complete_run *r, int size)
{
    int rc = cli_ranks_agree_input(&r->train, &r->info, r->opts.threads, size);
    if (!rc && r->val_path) rc = cli_ranks_agree_input(&r->val, &r->vinfo, r->opts.threads, size);
    if (!rc && r->test_path) rc = cli_ranks_agree_input(&r->test, &r->tinfo, r->opts.threads, size);
    return rc;
}

static int complete_ranks(int argc, char **argv, int rank, int size, double t_start)
{
    complete_run r;
    memset(&r, 0, sizeof r);
    tf_complete_opts_default(&r.opts);
    tf_context *ctx = NULL;
    cli_args a;
    int rc = parse(argc, argv, &r, &a);
    if (size > 1) { /* first of all: the same command and options everywhere */
        tf_agree ag;
        agree_record(&ag, &r, rc);
        const int arc = cli_ranks_agree(&ag, size);
        if (arc) return arc;
        if (rc >= 0) return cli_alike(rc); /* --help or a usage error on every rank */
    }
    if (rc >= 0) return rc;
    const int several = r.gpus.n > 1 || r.gpus.all;
    if (several && size > 1)
        return cli_fail_all("complete: --gpus: a run on %d MPI ranks takes one GPU per rank (--device gpu)", size);
    if ((r.gpus.n || r.gpus.all || (size > 1 && r.opts.backend == TF_BACKEND_GPU)) &&
        (rc = cli_gpu_precheck(TF_BACKEND_GPU, 0, &r.gpus, "--device")))
        return rc; /* a missing GPU costs no read */
    if (size > 1) { /* from here on every rank has the same options */
        const char *ins[3] = {r.path, r.val_path, r.test_path};
        for (int i = 0; i < 3; ++i)
            if (ins[i] && !strcmp(ins[i], "-"))
                return cli_fail_all("complete: reading standard input ('-') is not possible on MPI ranks: ranks "
                                    "1..%d get none (mpirun passes it to rank 0 alone); convert it to a file first "
                                    "(tenfold convert - FILE.bin)", size - 1);
        if (r.opts.backend != TF_BACKEND_GPU) r.opts.backend = TF_BACKEND_CPU;
        if (rank != 0) { /* rank 0 alone prints and writes */
            cli_verbosity = CLI_QUIET;
            r.stem = NULL;
            r.json_path = NULL;
        }
    }
    if ((rc = check_outputs(&r))) goto done;
    if (r.init) { /* before the tensors */
        if (tf_ktensor_read(r.init, &r.start, NULL) != TF_OK) {
            fprintf(stderr, "tenfold: --init %s: %s\n", r.init, tf_last_error());
            rc = CLI_FAIL;
            goto done;
        }
        if (!r.rank_given) r.opts.rank = r.start.rank;
        r.opts.init = &r.start;
    }
    if ((rc = load_ranks(&r, size))) goto done;
    if (size > 1) {
        if ((rc = agree_inputs(&r, size))) goto done;
        if ((rc = cli_run_context_ranks(r.opts.backend, 0, NULL, r.opts.threads, 0, 1, "--device", &ctx))) goto done;
        r.opts.context = ctx;
    } else if (r.gpus.n || r.gpus.all) { /* this process's GPUs */
        if ((rc = cli_run_context_ranks(TF_BACKEND_GPU, 0, &r.gpus, r.opts.threads, 0, 0, "--gpus", &ctx))) goto done;
        r.opts.context = ctx;
    }
    char each[64] = ""; /* CPU ranks: every rank's team */
    if (r.opts.backend != TF_BACKEND_GPU && (rc = cli_rank_threads(r.opts.threads, rank, size, each, sizeof each)))
        goto done;
    if (!cli_quiet()) {
        cli_print_problem(stdout, r.path, &r.train, &r.info);
        cli_print_fixes(stdout, &r.train, &r.info);
        char nthreads[128];
        cli_threads_text(r.opts.threads, nthreads, sizeof nthreads);
        printf("complete: %s, rank %llu, l2 %g, max %u iteration%s, tol %g, patience %u, %s %llu, %llu training / "
               "%llu validation / %llu test entries, %s\n",
               r.opts.method == TF_COMPLETE_ADAM ? "Adam (Gaussian loss, observed entries)" : "ALS",
               (unsigned long long)r.opts.rank, r.opts.l2, r.opts.max_iters, cli_s(r.opts.max_iters), r.opts.tol,
               r.opts.patience, r.init ? "start from --init, seed unused" : "seed", (unsigned long long)r.opts.seed, (unsigned long long)r.train.nnz,
               (unsigned long long)r.val.nnz, (unsigned long long)r.test.nnz, nthreads);
        printf("observed zeros kept: %llu training / %llu validation / %llu test entries of value 0\n",
               (unsigned long long)r.info.zeros_kept, (unsigned long long)r.vinfo.zeros_kept,
               (unsigned long long)r.tinfo.zeros_kept);
        if (size > 1)
            printf("ranks: %d (MPI), %s%s\n", size,
                   r.opts.backend == TF_BACKEND_GPU ? "one GPU each" : "the CPU backend on each", each);
        cli_flush_stdout();
    }
    r.opts.callback = on_iteration;
    if (tf_complete(&r.train, r.val_path ? &r.val : NULL, r.test_path ? &r.test : NULL, &r.opts, &r.result, &r.rep) !=
        TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if (r.set) {
        const double t0 = tf_wtime();
        if (tf_ktensor_out_put(r.set, &r.result) != TF_OK) {
            rc = cli_fail();
            goto done;
        }
        r.t_write = tf_wtime() - t0;
    }
    r.wall = tf_wtime() - t_start;
    if ((rc = write_json(&r))) goto done;
    if (r.set) {
        tf_ktensor_out *set = r.set;
        r.set = NULL;
        if (tf_ktensor_out_commit(set) != TF_OK) {
            rc = cli_fail();
            goto done;
        }
        if (!cli_quiet())
            printf("wrote: %s.mode{1..%u}.mat, %s.lambda.mat, %s.ktensor (one set: %s.set)\n", r.stem, r.train.order,
                   r.stem, r.stem, r.stem);
    }
    if (!cli_quiet()) print_summary(&r);
    if (r.json_path && !cli_quiet()) printf("wrote: %s (report)\n", r.json_path);
done:
    run_free(&r);
    tf_context_free(ctx);
    return rc;
}
