/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold ttm: sparse tensor times matrix on one mode (benchmark, or one
 * product from a factor file written as .tns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "outfile.h"
#include "kernel_timing.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold ttm FILE|--gen SPEC --rank R [--mode N|all] [options]   (benchmark)\n"
    "       tenfold ttm FILE --mode N --factor F -o OUT.tns        (compute one)\n"
    "\n"
    "Y = X x_N U with U of size I_N x R (rows = length of mode N):\n"
    "  Y(.., r, ..) = sum_i X(.., i, ..) U(i, r).\n"
    "(The Tensor Toolbox's ttm takes the R x I_N transpose of U.) Y is\n"
    "semi-sparse: one dense length-R row for every distinct index tuple of the\n"
    "other modes (fibre) of X.\n"
    "\n"
    "Benchmark: random U, W untimed and N timed runs per mode; prints the median\n"
    "time and GB/s of the traffic model nnz (value + index) + nnz R (rows of U)\n"
    "+ fibres R (Y), in the chosen precision. On the GPU the CPU backend is timed\n"
    "too, for comparison.\n"
    "\n"
    "      --mode N         the mode, 1-based, or 'all' (benchmark default)\n"
    "  -r, --rank R         columns of U (benchmark)\n"
    "      --factor F       U as a dense text matrix (I_N rows, R columns)\n"
    "  -o, --output OUT     Y's non-zeros as a tensor file (.tns, .bin; atomic; '-'\n"
    "                       is standard output, then the report goes to stderr);\n"
    "                       its mode N has length R\n"
    "      --device D       auto|cpu|gpu (default auto: the GPU when present)\n"
    "      --gpu N          GPU ordinal (default 0)\n"
    "      --precision P    double|single (default double)\n"
    "      --reps N         timed runs (default 20)\n"
    "      --warmup W       untimed runs first (default 3)\n"
    "      --seed S         seed of the random U (default fixed)\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    CLI_MEMORY_LIMIT_HELP
    "  -t, --threads N      CPU threads (default: all cores)\n"
    CLI_VERBOSITY_HELP
    "                       (-q: the benchmark's table only)\n"
    "  -h, --help           this help\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

typedef struct ttm_cli {
    int mode1; /* 0 = all */
    uint64_t rank, seed;
    int reps, warmup, threads;
    tf_spttm_opts o;
    const char *factor, *out_path;
    const char *base; /* --base */
    uint64_t memory_limit; /* --memory-limit, 0 = none */
    int device_auto;       /* --device auto (the default): one product may fall back to the CPU */
} ttm_cli;

static int parse(int argc, char **argv, cli_args *a, ttm_cli *c)
{
    const char *mode = NULL, *rank = NULL, *factor = NULL, *out = NULL, *device = NULL, *gpu = NULL,
               *precision = NULL, *reps = NULL, *warmup = NULL, *seed = NULL, *threads = NULL,
               *base = NULL, *mem = NULL;
    const cli_opt opts[] = {{"mode", 0, &mode, NULL},         {"rank", 'r', &rank, NULL},
                            {"factor", 0, &factor, NULL},     {"output", 'o', &out, NULL},
                            {"device", 0, &device, NULL},     {"gpu", 0, &gpu, NULL},
                            {"precision", 0, &precision, NULL}, {"reps", 0, &reps, NULL},
                            {"warmup", 0, &warmup, NULL},     {"seed", 0, &seed, NULL},
                            {"threads", 't', &threads, NULL}, {"base", 0, &base, NULL},
                            {"memory-limit", 0, &mem, NULL},  CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    int rc = cli_parse(a, "ttm", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    memset(c, 0, sizeof *c);
    c->base = base;
    tf_spttm_opts_default(&c->o);
    c->reps = 20;
    c->warmup = 3;
    c->seed = TF_DEFAULT_SEED;
    if (mode && strcmp(mode, "all") && (rc = cli_int("ttm", "--mode", mode, 1, TF_MAX_ORDER, &c->mode1))) return rc;
    if ((rc = cli_u64("ttm", "--rank", rank, 1, 1u << 20, &c->rank)) ||
        ((c->device_auto = !device || !strcmp(device, "auto")), 0) ||
        (rc = cli_device_precision("ttm", device, precision, &c->o.backend, &c->o.precision)) ||
        (rc = cli_int("ttm", "--gpu", gpu, 0, 1023, &c->o.device)) ||
        (rc = cli_int("ttm", "--reps", reps, 1, 100000, &c->reps)) ||
        (rc = cli_int("ttm", "--warmup", warmup, 0, 100000, &c->warmup)) ||
        (rc = cli_u64("ttm", "--seed", seed, 0, UINT64_MAX, &c->seed)) ||
        (rc = cli_threads("ttm", threads, &c->threads)) ||
        (rc = cli_memory_limit("ttm", mem, &c->memory_limit)))
        return rc;
    c->o.threads = c->threads;
    c->factor = factor;
    c->out_path = out;
    if (factor || out) {
        if (!(factor && out)) return cli_usage("ttm", "computing one product needs both --factor F and -o OUT");
        if (!c->mode1) return cli_usage("ttm", "computing one product needs --mode N (1-based)");
        if (rank) return cli_usage("ttm", "--rank is for the benchmark; with --factor R is its column count");
    } else if (!rank) {
        return cli_usage("ttm", "missing --rank R (benchmark) or --factor F and -o OUT (compute one)");
    }
    const char *const inputs[] = {a->pos[0], factor}, *const names[] = {"FILE", "--factor"};
    if ((rc = cli_one_stdin("ttm", inputs, names, 2))) return rc;
    return -1;
}

static void fill_random(tf_matrix *U, uint64_t seed)
{
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 7; /* splitmix64 stream */
    for (uint64_t k = 0; k < U->rows * U->cols; ++k) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        U->data[k] = (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
}

/* One mode on one backend: prints a row; returns 0 or 1. */
static int bench_row(const ttm_cli *c, const tf_tensor *X, uint32_t mode, const tf_matrix *U, tf_backend be,
                     double *times)
{
    tf_spttm_opts o = c->o;
    o.backend = be;
    tf_semisparse Y;
    if (tf_spttm_time(X, mode, U, &o, c->warmup, c->reps, times, &Y) != TF_OK) {
        /* the table row, and the one line on stderr the exit status goes with */
        printf("%-4s %4u   failed: %s\n", be == TF_BACKEND_GPU ? "gpu" : "cpu", mode + 1, tf_last_error());
        fprintf(stderr, "tenfold: ttm mode %u on the %s: %s\n", mode + 1, be == TF_BACKEND_GPU ? "GPU" : "CPU",
                tf_last_error());
        return CLI_FAIL;
    }
    const double med = cli_median_ms(times, c->reps), min = times[0];
    const double vb = o.precision == TF_SINGLE ? 4.0 : 8.0, R = (double)U->cols;
    const double bytes = (double)X->nnz * (vb + 4.0) + (double)X->nnz * R * vb + (double)Y.nfibers * R * vb;
    printf("%-4s %4u %12llu %12.4f %12.4f %9.2f\n", be == TF_BACKEND_GPU ? "gpu" : "cpu", mode + 1,
           (unsigned long long)Y.nfibers, med, min, bytes / (med * 1e-3) / 1e9);
    tf_semisparse_free(&Y);
    return CLI_OK;
}

static int benchmark(const ttm_cli *c, const tf_tensor *X)
{
    double *times = calloc((size_t)c->reps, sizeof *times);
    if (!times) return cli_fail();
    char dev[320];
    if (!cli_quiet())
        printf("ttm: rank %llu, %s, %s, %d timed run%s after %d warm-up\n", (unsigned long long)c->rank,
               c->o.precision == TF_SINGLE ? "single" : "double",
               cli_device_label(c->o.backend, c->o.device, c->threads, dev, sizeof dev), c->reps,
               cli_s((uint64_t)c->reps), c->warmup);
    printf("%-4s %4s %12s %12s %12s %9s\n", "dev", "mode", "fibres", "median ms", "min ms", "GB/s");
    int rc = CLI_OK;
    for (uint32_t m = 0; m < X->order; ++m) {
        if (c->mode1 && m + 1 != (uint32_t)c->mode1) continue;
        tf_matrix U = {0};
        if (tf_matrix_alloc(&U, X->dims[m], c->rank) != TF_OK) { rc = cli_fail(); break; }
        fill_random(&U, c->seed + m);
        rc |= bench_row(c, X, m, &U, c->o.backend, times);
        if (c->o.backend == TF_BACKEND_GPU) rc |= bench_row(c, X, m, &U, TF_BACKEND_CPU, times);
        tf_matrix_free(&U);
    }
    free(times);
    return rc;
}

static int compute_one(const ttm_cli *c, const tf_tensor *X)
{
    const uint32_t mode = (uint32_t)c->mode1 - 1;
    tf_matrix U = {0};
    tf_semisparse Y = {0};
    tf_tensor T = {0};
    int rc = CLI_OK;
    if (tf_matrix_read(c->factor, &U) != TF_OK) { rc = cli_fail(); goto done; }
    if (U.rows != X->dims[mode]) {
        fprintf(stderr, "tenfold: factor %s has %llu rows, expected %llu (the length of mode %d)\n", c->factor,
                (unsigned long long)U.rows, (unsigned long long)X->dims[mode], c->mode1);
        rc = CLI_FAIL;
        goto done;
    }
    const double t0 = tf_wtime();
    tf_spttm_opts o = c->o;
    tf_spttm_info info;
    o.info = &info;
    if (c->device_auto) o.backend = TF_BACKEND_AUTO; /* the library falls back to the CPU if the GPU cannot hold it */
    if (tf_spttm(X, mode, &U, &o, &Y) != TF_OK || tf_semisparse_to_tensor(&Y, &T) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    const double secs = tf_wtime() - t0;
    if (T.nnz == 0) {
        fprintf(stderr, "tenfold: the product has no non-zero entry; nothing to write to %s\n", c->out_path);
        rc = CLI_FAIL;
        goto done;
    }
    if (tf_write_tensor(c->out_path, &T, TF_FILE_AUTO) != TF_OK) { rc = cli_fail(); goto done; }
    if (!cli_quiet()) {
        if (info.note[0]) printf("note: %s\n", info.note);
        printf("ttm: mode %d, rank %llu, %s, %llu fibre%s, %.6f s\n", c->mode1, (unsigned long long)U.cols,
               info.backend == TF_BACKEND_GPU ? "gpu" : "cpu", (unsigned long long)Y.nfibers, cli_s(Y.nfibers), secs);
        printf("wrote: %s (%llu non-zero%s; mode %d has length %llu)\n", c->out_path, (unsigned long long)T.nnz,
               cli_s(T.nnz), c->mode1, (unsigned long long)U.cols);
    }
done:
    tf_matrix_free(&U);
    tf_semisparse_free(&Y);
    tf_tensor_free(&T);
    return rc;
}

int cmd_ttm(int argc, char **argv)
{
    cli_args a;
    ttm_cli c;
    int rc = parse(argc, argv, &a, &c);
    if (rc >= 0) return rc;
    const cli_path paths[] = {{"the input", cli_generated(a.pos[0]) ? NULL : a.pos[0], 0, 0},
                              {"--factor", c.factor, 0, 0}, {"-o", c.out_path, 1, 0}};
    if ((rc = cli_paths_distinct("ttm", paths, 3))) return rc;
    if ((rc = cli_outputs_check(&c.out_path, 1))) return rc; /* before reading */
    if ((rc = cli_gpu_precheck(c.o.backend, c.o.device, NULL, "--device"))) return rc;
    tf_tensor X;
    tf_read_info info;
    if ((rc = cli_load_precision("ttm", a.pos[0], c.threads, c.base, c.o.precision, &X, &info))) return rc;
    if (c.mode1 > (int)X.order) {
        rc = cli_usage("ttm", "--mode %d: the tensor has modes 1..%u", c.mode1, X.order);
    } else {
        if (!cli_quiet()) cli_print_problem(stdout, a.pos[0], &X, &info);
        if (cli_verbose()) cli_print_read(stdout, &info);
        tf_context *ctx = NULL; /* one for the run (every mode's SpTTM) */
        rc = cli_run_context(c.o.backend, c.o.device, c.threads, c.memory_limit, "--device", &ctx);
        c.o.context = ctx;
        if (rc == CLI_OK) rc = c.factor ? compute_one(&c, &X) : benchmark(&c, &X);
        tf_context_free(ctx);
    }
    tf_tensor_free(&X);
    return rc;
}
