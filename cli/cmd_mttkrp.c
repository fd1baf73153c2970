/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold mttkrp: one MTTKRP from factor files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "progress.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold mttkrp FILE|--gen SPEC --mode N --factors F1,F2,... -o OUT [options]\n"
    "\n"
    "Computes M = X_(N) (F_order * ... * F_1 without F_N), the matricised tensor\n"
    "times Khatri-Rao product for mode N, and writes M (dims[N] x R) to OUT.\n"
    "\n"
    "      --mode N         the mode, 1-based\n"
    "      --factors LIST   one dense matrix file per mode (rows = mode length,\n"
    "                       R columns each; text, one row per line, as written by\n"
    "                       tenfold cpd); the entry of mode N may be '-' (here\n"
    "                       not standard input: mode N's factor is not needed; it\n"
    "                       is read only to tell which file is wrong when the\n"
    "                       others disagree on the column count)\n"
    "  -o, --output OUT     output matrix file (written atomically; '-' is standard\n"
    "                       output, then the report goes to stderr)\n"
    "      --format F       auto|coo|csf|csf-short|fcoo|blco, or reference for\n"
    "                       the plain float64 single-threaded reference kernel\n"
    "                       (default auto)\n"
    "      --device D       cpu|gpu|auto (default cpu; auto: the GPU when one is\n"
    "                       present)\n"
    "      --precision P    double|single (single on the GPU only; default double)\n"
    CLI_MEMORY_LIMIT_HELP
    CLI_GPUS_HELP
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      threads (default: all cores)\n"
    CLI_VERBOSITY_HELP
    "  -h, --help           this help\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

static void free_factors(tf_matrix *f, uint32_t n)
{
    for (uint32_t m = 0; m < n; ++m) tf_matrix_free(&f[m]);
}

/* The column count most of the factors read have (`mode`'s counts only
 * when it was read), or 0 on a tie (then no single file can be blamed). */
static uint64_t majority_cols(const tf_tensor *t, uint32_t mode, const tf_matrix *f)
{
    uint64_t best = 0, best_n = 0, tie = 0;
    for (uint32_t m = 0; m < t->order; ++m) {
        if (m == mode && !f[m].data) continue;
        uint64_t n = 0;
        for (uint32_t k = 0; k < t->order; ++k) n += (k != mode || f[k].data) && f[k].cols == f[m].cols;
        if (n > best_n) { best = f[m].cols; best_n = n; tie = 0; }
        else if (n == best_n && f[m].cols != best) tie = 1;
    }
    return tie ? 0 : best;
}

/* Reads the factor of every mode but `mode` and checks the shapes; on
 * failure prints a message naming the file at fault and returns 1. *rank
 * is the common column count. */
static int read_factors(const tf_tensor *t, uint32_t mode, const char *const *files, tf_matrix *f,
                        uint64_t *rank)
{
    *rank = 0;
    for (uint32_t m = 0; m < t->order; ++m) {
        if (m == mode) continue;
        if (!strcmp(files[m], "-")) {
            fprintf(stderr, "tenfold: --factors: mode %u needs a factor file ('-' only stands for mode %u)\n",
                    m + 1, mode + 1);
            return CLI_FAIL;
        }
        if (tf_matrix_read(files[m], &f[m]) != TF_OK) return cli_fail();
        if (f[m].rows != t->dims[m]) {
            fprintf(stderr, "tenfold: factor %s has %llu rows, expected %llu (the length of mode %u)\n",
                    files[m], (unsigned long long)f[m].rows, (unsigned long long)t->dims[m], m + 1);
            return CLI_FAIL;
        }
    }
    /* Columns once all are read: the file whose count differs from most
     * others is the one at fault (not whichever came later). */
    uint64_t want = majority_cols(t, mode, f);
    if (!want && strcmp(files[mode], "-")) { /* a tie: mode N's file, if given, settles it */
        if (tf_matrix_read(files[mode], &f[mode]) == TF_OK) want = majority_cols(t, mode, f);
    }
    for (uint32_t m = 0; m < t->order; ++m) {
        if (m == mode || f[m].cols == want) continue;
        if (want) {
            fprintf(stderr, "tenfold: factor %s has %llu columns, expected %llu like the other factors\n",
                    files[m], (unsigned long long)f[m].cols, (unsigned long long)want);
        } else { /* a tie: name every file with its count */
            fprintf(stderr, "tenfold: the factors disagree on the number of columns:");
            for (uint32_t k = 0, first = 1; k < t->order; ++k)
                if (k != mode) {
                    fprintf(stderr, "%s %s has %llu", first ? "" : ",", files[k], (unsigned long long)f[k].cols);
                    first = 0;
                }
            fprintf(stderr, "\n");
        }
        return CLI_FAIL;
    }
    *rank = want;
    return CLI_OK;
}

/* What run_mttkrp did: the kernel's seconds, the plan (build seconds and
 * bytes; 0 for the reference) and its description. */
typedef struct mttkrp_run {
    double secs, build_secs;
    uint64_t plan_bytes;
    char desc[128];
} mttkrp_run;

/* Runs the kernel into out and fills r; returns the status. */
static tf_status run_mttkrp(const tf_tensor *t, uint32_t mode, const tf_matrix *f, tf_matrix *out,
                            int reference, tf_format fmt, int threads, tf_backend backend, tf_precision prec,
                            tf_context *ctx, mttkrp_run *r)
{
    double t0 = tf_wtime();
    if (reference) {
        snprintf(r->desc, sizeof r->desc, "float64 reference");
        tf_status s = tf_mttkrp_reference(t, mode, f, out);
        r->secs = tf_wtime() - t0;
        return s;
    }
    tf_plan_opts o;
    tf_plan_opts_default(&o);
    o.backend = backend;
    o.format = fmt;
    o.precision = prec;
    o.context = ctx;
    o.threads = threads;
    o.rank_hint = out->cols;
    o.progress = cli_progress_fn();
    o.progress_user = (void *)"mttkrp";
    tf_plan *p = NULL;
    tf_status s = tf_plan_build(t, &o, &p);
    r->build_secs = tf_wtime() - t0;
    if (s != TF_OK) return s;
    snprintf(r->desc, sizeof r->desc, "%s", tf_plan_describe(p));
    r->plan_bytes = tf_plan_bytes(p);
    t0 = tf_wtime();
    s = tf_plan_mttkrp(p, mode, f, out);
    r->secs = tf_wtime() - t0;
    tf_plan_free(p);
    return s;
}

int cmd_mttkrp(int argc, char **argv)
{
    const char *mode_s = NULL, *factors = NULL, *out_path = NULL, *format = NULL, *threads = NULL;
    const char *base = NULL, *device = NULL, *precision = NULL, *gpus_spec = NULL, *mem = NULL;
    const cli_opt opts[] = {{"mode", 0, &mode_s, NULL},     {"factors", 0, &factors, NULL},
                            {"output", 'o', &out_path, NULL}, {"format", 0, &format, NULL},
                            {"threads", 't', &threads, NULL}, {"base", 0, &base, NULL},
                            {"device", 0, &device, NULL},   {"precision", 0, &precision, NULL},
                            {"gpus", 0, &gpus_spec, NULL},  {"memory-limit", 0, &mem, NULL},
                            CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    static const char *const device_names[] = {"auto", "cpu", "gpu"}; /* tf_backend's order */
    static const char *const precision_names[] = {"double", "single"};
    cli_args a;
    int rc = cli_parse(&a, "mttkrp", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    if (!mode_s) return cli_usage("mttkrp", "missing --mode N");
    if (!factors) return cli_usage("mttkrp", "missing --factors F1,F2,...");
    if (!out_path) return cli_usage("mttkrp", "missing -o OUT");
    int mode1 = 0, nthreads = 0, nfiles = 0, fmt = TF_FORMAT_AUTO;
    int reference = format && !strcmp(format, "reference");
    if ((rc = cli_int("mttkrp", "--mode", mode_s, 1, TF_MAX_ORDER, &mode1))) return rc;
    if ((rc = cli_threads("mttkrp", threads, &nthreads))) return rc;
    if (format && !reference && ((fmt = tf_format_parse(format)) < 0))
        return cli_usage("mttkrp", "--format: expected auto, coo, csf, csf-short, fcoo, blco or reference, got '%s'", format);
    int dev = TF_BACKEND_CPU, prec = 0;
    cli_gpus gpus;
    uint64_t memory_limit = 0;
    if ((rc = cli_memory_limit("mttkrp", mem, &memory_limit)) ||
        (rc = cli_choice("mttkrp", "--device", device, device_names, 3, &dev)) ||
        (rc = cli_choice("mttkrp", "--precision", precision, precision_names, 2, &prec)) ||
        (rc = cli_parse_gpus("mttkrp", gpus_spec, &gpus)))
        return rc;
    if (gpus_spec) {
        if (device && dev == TF_BACKEND_CPU) return cli_usage("mttkrp", "--gpus: not with --device cpu");
        dev = TF_BACKEND_GPU;
    }
    if (reference && (dev == TF_BACKEND_GPU || prec))
        return cli_usage("mttkrp", "--format reference: the float64 kernel on the CPU (no --device gpu, --gpus or "
                                   "--precision single)");
    char *buf = NULL;
    const char *files[TF_MAX_ORDER];
    if ((rc = cli_split("mttkrp", "--factors", factors, &buf, files, TF_MAX_ORDER, &nfiles))) return rc;
    for (int i = 0; i < nfiles; ++i)
        if (!*files[i]) {
            rc = cli_usage("mttkrp", "--factors: entry %d of '%s' is empty: expected one factor file per mode, "
                                     "F1,F2,... ('-' for mode %d's, which is not read)", i + 1, factors, mode1);
            free(buf);
            return rc;
        }

    tf_tensor t;
    tf_read_info info;
    tf_context *ctx = NULL;
    tf_matrix f[TF_MAX_ORDER], out = {0};
    memset(f, 0, sizeof f);
    cli_path paths[TF_MAX_ORDER + 2] = {{"the input", cli_generated(a.pos[0]) ? NULL : a.pos[0], 0, 0},
                                        {"-o", out_path, 1, 0}};
    for (int i = 0; i < nfiles; ++i) /* '-' and '' stand for the mode computed: no file */
        paths[2 + i] = (cli_path){"the factor", strcmp(files[i], "-") && *files[i] ? files[i] : NULL, 0, 0};
    if ((rc = cli_paths_distinct("mttkrp", paths, 2 + nfiles))) goto done_buf;
    if ((rc = cli_outputs_check(&out_path, 1))) goto done_buf; /* before reading */
    if (!reference && (rc = cli_gpu_precheck((tf_backend)dev, 0, &gpus, "--device"))) goto done_buf;
    if ((rc = cli_load_precision("mttkrp", a.pos[0], nthreads, base, prec ? TF_SINGLE : TF_DOUBLE, &t, &info)))
        goto done_buf;
    const uint32_t mode = (uint32_t)mode1 - 1;
    if (mode >= t.order) {
        rc = cli_usage("mttkrp", "--mode %d: the tensor has modes 1..%u", mode1, t.order);
        goto done;
    }
    if ((uint32_t)nfiles != t.order) {
        rc = cli_usage("mttkrp", "--factors: expected %u files (one per mode, '-' allowed for mode %d), got %d",
                       t.order, mode1, nfiles);
        goto done;
    }
    uint64_t rank = 0;
    if ((rc = read_factors(&t, mode, files, f, &rank))) goto done;
    if (tf_matrix_alloc(&out, t.dims[mode], rank) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    mttkrp_run run = {0};
    if (dev != TF_BACKEND_CPU && !reference &&
        (rc = cli_run_context_ranks((tf_backend)dev, 0, &gpus, nthreads, memory_limit, 0, "--device", &ctx)))
        goto done;
    if (run_mttkrp(&t, mode, f, &out, reference, (tf_format)fmt, nthreads, (tf_backend)dev,
                   prec ? TF_SINGLE : TF_DOUBLE, ctx, &run) != TF_OK ||
        tf_matrix_write(out_path, &out) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if (!cli_quiet()) cli_print_problem(stdout, a.pos[0], &t, &info);
    if (cli_verbose()) {
        char mem[32];
        cli_print_read(stdout, &info);
        if (!reference)
            printf("plan:   %s, built in %.3f s, %s\n", run.desc, run.build_secs,
                   cli_bytes(mem, sizeof mem, (double)run.plan_bytes));
    }
    if (!cli_quiet()) {
        printf("mttkrp: mode %d, rank %llu, %s, %.6f s\n", mode1, (unsigned long long)rank, run.desc, run.secs);
        printf("wrote:  %s (%llu x %llu)\n", out_path, (unsigned long long)out.rows, (unsigned long long)out.cols);
    }
done:
    tf_context_free(ctx);
    free_factors(f, TF_MAX_ORDER);
    tf_matrix_free(&out);
    tf_tensor_free(&t);
done_buf:
    free(buf);
    return rc;
}
