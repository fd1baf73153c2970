/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold sddmm: SDDMM benchmark (GFLOP/s, next to cuSPARSE on the GPU;
 * --repeat: one-shot calls against a plan's runs; --gpus: a plan over
 * several GPUs, per-GPU non-zeros and times) or one SDDMM from given dense
 * matrices, written as Matrix Market. */
#include <math.h>
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
    "usage: tenfold sddmm MATRIX|--gen SPEC -k K [options]            (benchmark)\n"
    "       tenfold sddmm MATRIX -A FILE -B FILE -o OUT.mtx (compute one)\n"
    "\n"
    "Sampled dense-dense matrix multiplication with S (M x N) from MATRIX\n"
    "(.mtx or an order-2 .tns), A (M x K) and B (N x K) dense:\n"
    "  P = alpha * (A B^T) o spy(S) + beta * S     (default: alpha 1, beta 0)\n"
    "  P = alpha * (A B^T) o S      + beta * S     (with --scale)\n"
    "P has the pattern of S.\n"
    "\n"
    "Benchmark: random A and B, W untimed and N timed runs; prints the median\n"
    "time and GFLOP/s = 2 K nnz / median. On the GPU the same run also times\n"
    "cuSPARSE's cusparseSDDMM on the same inputs and prints its GFLOP/s and the\n"
    "max relative difference max|P - P_cusparse| / max|P_cusparse|.\n"
    "\n"
    "  -k, --k K            inner dimension (benchmark; 1..65536)\n"
    "  -A FILE, -B FILE     dense matrices (text, one row per line, as the\n"
    "                       factor files of tenfold cpd); with -o OUT.mtx\n"
    "  -o, --output OUT     result in S's pattern as Matrix Market (atomic; '-' is\n"
    "                       standard output, then the report goes to stderr)\n"
    "      --alpha X        default 1\n"
    "      --beta X         default 0\n"
    "      --scale          multiply by the values of S instead of its pattern\n"
    "      --device D       auto|cpu|gpu (default auto: the GPU when present)\n"
    "      --gpu N          GPU ordinal (default 0)\n"
    "      --gpus G         several GPUs: a count N (GPUs 0..N-1), all, or a list of\n"
    "                       GPU numbers (0,2; '3,' is GPU 3 alone); S is cut into one\n"
    "                       row panel per GPU with about nnz / N non-zeros each (a\n"
    "                       row is never split); each GPU builds and tunes its own\n"
    "                       panel and writes its slice of P. The benchmark prints\n"
    "                       the build (the one-time distribution) apart, then each\n"
    "                       GPU's rows, non-zeros and kernel time (CUDA events on\n"
    "                       each GPU, median) and the whole run's (no cuSPARSE)\n"
    "      --precision P    double|single (default double)\n"
    "      --algo A         auto|row|sm-l2|sm-sm (GPU scheme). row: non-zero-\n"
    "                       parallel in CSR order, A and B read through L1/L2;\n"
    "                       sm-l2: column panels, active rows of A in shared\n"
    "                       memory; sm-sm: A and B tiles in shared memory.\n"
    "                       auto (default) times a few configurations of each\n"
    "                       (row: also on a resident-sized, looping grid) on S\n"
    "                       (best of 4 runs after 1 warm-up each) and keeps the\n"
    "                       fastest; a named scheme tunes only its own. A\n"
    "                       single run (-o P.mtx) under auto takes the row scheme\n"
    "                       untimed: tuning pays over many runs (a plan), not one\n"
    "      --tile-j N       SM-L2/SM-SM column-panel width (default: L2 model)\n"
    "      --tile-k N       SM-L2/SM-SM K-slice (default: quick auto-tune)\n"
    "      --vwarp V        row: lanes per non-zero, 1|2|4|8|16|32 (default: tuned)\n"
    "      --nper N         row: non-zeros per virtual warp (default: tuned)\n"
    "      --a-regs X       row: auto|on|off: keep A's row in registers (default auto)\n"
    "      --reps N         timed runs (default 20)\n"
    "      --warmup W       untimed runs first (default 3)\n"
    "      --repeat N       benchmark: also N one-shot SDDMM calls (each validates\n"
    "                       S, tiles and uploads it and, on the GPU, times the\n"
    "                       candidate kernels) against a plan built once and run\n"
    "                       N times (tf_sddmm_plan_*: each run only moves A, B\n"
    "                       and P and launches the kernel chosen), A, B and P\n"
    "                       on the host; prints the wall time per call of each,\n"
    "                       the build, and the saving per call\n"
    "      --seed S         seed of the random A and B (default fixed)\n"
    "\n"
    "Several processes (a build with MPI): `mpirun -np P tenfold sddmm ...` cuts\n"
    "S into one row panel per rank with about nnz / P non-zeros each; every rank\n"
    "reads S, computes its panel's slice of P on the CPU (or, with --device gpu,\n"
    "on its GPU: a node's ranks take its GPUs in order) and the slices are\n"
    "all-gathered; rank 0 alone prints and writes. The benchmark times whole\n"
    "runs (every rank's panel, then the all-gather) and prints each rank's share.\n"
    "The ranks first check that they agree (the options but -t, -o, --gpu,\n"
    "--memory-limit; then S, A and B as read), else all stop with one line 'ranks\n"
    "disagree: rank R has ...'; a rank that does not answer within TF_MPI_TIMEOUT\n"
    "seconds (default 600) stops the run with a line naming it.\n"
    "\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    CLI_MEMORY_LIMIT_HELP
    "  -t, --threads N      CPU threads (default: all cores, or OMP_NUM_THREADS;\n"
    "                       MPI ranks that share a host's cores split them)\n"
    CLI_VERBOSITY_HELP
    "                       (-q: the benchmark's table only)\n"
    "  -h, --help           this help\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

typedef struct sddmm_cli {
    uint64_t K, seed;
    int reps, warmup, threads, device;
    int repeat; /* --repeat N: N one-shot calls against N plan runs (0: not) */
    cli_gpus gpus; /* --gpus (n = 0, all = 0: not given) */
    tf_sddmm_opts o;
    const char *a_path, *b_path, *out_path;
    const char *base; /* --base */
    uint64_t memory_limit; /* --memory-limit, 0 = none */
    int device_auto;       /* --device auto (the default): computing one SDDMM lets
                              the library fall back to the CPU when the GPU cannot hold it */
} sddmm_cli;

static int parse(int argc, char **argv, cli_args *a, sddmm_cli *c)
{
    const char *k = NULL, *A = NULL, *B = NULL, *out = NULL, *alpha = NULL, *beta = NULL, *device = NULL,
               *gpu = NULL, *precision = NULL, *algo = NULL, *tj = NULL, *tk = NULL, *reps = NULL, *warmup = NULL,
               *seed = NULL, *threads = NULL, *vwarp = NULL, *nper = NULL, *a_regs = NULL, *base = NULL,
               *mem = NULL, *repeat = NULL, *gpus = NULL;
    int scale = 0;
    const cli_opt opts[] = {{"k", 'k', &k, NULL},          {"A", 'A', &A, NULL},
                            {"B", 'B', &B, NULL},          {"output", 'o', &out, NULL},
                            {"alpha", 0, &alpha, NULL},    {"beta", 0, &beta, NULL},
                            {"scale", 0, NULL, &scale},    {"device", 0, &device, NULL},
                            {"gpu", 0, &gpu, NULL},        {"precision", 0, &precision, NULL},
                            {"algo", 0, &algo, NULL},      {"tile-j", 0, &tj, NULL},
                            {"tile-k", 0, &tk, NULL},      {"reps", 0, &reps, NULL},
                            {"warmup", 0, &warmup, NULL},  {"seed", 0, &seed, NULL},
                            {"threads", 't', &threads, NULL}, {"vwarp", 0, &vwarp, NULL},
                            {"nper", 0, &nper, NULL},      {"a-regs", 0, &a_regs, NULL},
                            {"base", 0, &base, NULL},      {"memory-limit", 0, &mem, NULL},
                            {"repeat", 0, &repeat, NULL},  {"gpus", 0, &gpus, NULL},
                            CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    int rc = cli_parse(a, "sddmm", help, argc, argv, opts, 1, 1, "MATRIX");
    if (rc >= 0) return rc;
    memset(c, 0, sizeof *c);
    c->base = base;
    tf_sddmm_opts_default(&c->o);
    c->reps = 20;
    c->warmup = 3;
    c->seed = TF_DEFAULT_SEED;
    static const char *const algo_names[] = {"auto", "sm-l2", "sm-sm", "row"};
    static const tf_sddmm_algo algo_values[] = {TF_SDDMM_ALGO_AUTO, TF_SDDMM_ALGO_SM_L2, TF_SDDMM_ALGO_SM_SM,
                                                TF_SDDMM_ALGO_ROW};
    static const char *const regs_names[] = {"auto", "on", "off"};
    int algo_i = 0, regs_i = 0;
    uint64_t tile_j = 0, tile_k = 0, vw = 0, np = 0;
    if ((rc = cli_u64("sddmm", "-k", k, 1, 65536, &c->K)) ||
        (rc = cli_double("sddmm", "--alpha", alpha, -INFINITY, INFINITY, &c->o.alpha)) ||
        (rc = cli_double("sddmm", "--beta", beta, -INFINITY, INFINITY, &c->o.beta)) ||
        ((c->device_auto = !device || !strcmp(device, "auto")), 0) ||
        (rc = cli_device_precision("sddmm", device, precision, &c->o.backend, &c->o.precision)) ||
        (rc = cli_int("sddmm", "--gpu", gpu, 0, 1023, &c->device)) ||
        (rc = cli_choice("sddmm", "--algo", algo, algo_names, 4, &algo_i)) ||
        (rc = cli_u64("sddmm", "--tile-j", tj, 1, UINT32_MAX, &tile_j)) ||
        (rc = cli_u64("sddmm", "--tile-k", tk, 1, 65536, &tile_k)) ||
        (rc = cli_u64("sddmm", "--vwarp", vwarp, 1, 32, &vw)) ||
        (rc = cli_u64("sddmm", "--nper", nper, 1, 65536, &np)) ||
        (rc = cli_choice("sddmm", "--a-regs", a_regs, regs_names, 3, &regs_i)) ||
        (rc = cli_int("sddmm", "--reps", reps, 1, 100000, &c->reps)) ||
        (rc = cli_int("sddmm", "--warmup", warmup, 0, 100000, &c->warmup)) ||
        (rc = cli_int("sddmm", "--repeat", repeat, 1, 1000000, &c->repeat)) ||
        (rc = cli_u64("sddmm", "--seed", seed, 0, UINT64_MAX, &c->seed)) ||
        (rc = cli_threads("sddmm", threads, &c->threads)) ||
        (rc = cli_memory_limit("sddmm", mem, &c->memory_limit)) ||
        (rc = cli_parse_gpus("sddmm", gpus, &c->gpus)))
        return rc;
    if (gpus) {
        if (device && c->o.backend == TF_BACKEND_CPU) return cli_usage("sddmm", "--gpus: not with --device cpu");
        if (gpu) return cli_usage("sddmm", "--gpus and --gpu: name the GPUs in --gpus alone");
        c->o.backend = TF_BACKEND_GPU;
        c->device_auto = 0;
    }
    c->o.op = scale ? TF_SDDMM_SCALE : TF_SDDMM_SAMPLE;
    c->o.algo = algo_values[algo_i];
    c->o.tile_j = (uint32_t)tile_j;
    c->o.tile_k = (uint32_t)tile_k;
    if (vw & (vw - 1)) return cli_usage("sddmm", "--vwarp %s is not a power of two", vwarp);
    c->o.vwarp = (uint32_t)vw;
    c->o.nper = (uint32_t)np;
    c->o.a_regs = regs_i == 1 ? 1 : regs_i == 2 ? -1 : 0;
    c->o.threads = c->threads;
    c->o.device = c->device;
    if (algo_i && c->o.backend != TF_BACKEND_GPU)
        return cli_usage("sddmm", "--algo %s is a GPU scheme; it needs --device gpu", algo);
    c->a_path = A;
    c->b_path = B;
    c->out_path = out;
    const int compute = A || B || out;
    if (compute && !(A && B && out)) return cli_usage("sddmm", "computing one SDDMM needs all of -A, -B and -o");
    if (compute && k) return cli_usage("sddmm", "-k is for the benchmark; with -A/-B K is their column count");
    if (compute && repeat) return cli_usage("sddmm", "--repeat is for the benchmark (-k K)");
    if (!compute && !k) return cli_usage("sddmm", "missing -k K (benchmark) or -A, -B and -o (compute one)");
    const char *const inputs[] = {a->pos[0], A, B}, *const names[] = {"MATRIX", "-A", "-B"};
    if ((rc = cli_one_stdin("sddmm", inputs, names, 3))) return rc;
    return -1;
}

static tf_matrix random_dense(uint64_t rows, uint64_t cols, uint64_t seed, tf_status *s)
{
    tf_matrix m = {0};
    *s = tf_matrix_alloc(&m, rows, cols);
    if (*s != TF_OK) return m;
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1; /* splitmix64 stream */
    for (uint64_t k = 0; k < rows * cols; ++k) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        z ^= z >> 31;
        m.data[k] = (double)(z >> 11) * 0x1.0p-53 * 2.0 - 1.0;
    }
    return m;
}

/* What ran, by name (the CPU's OpenMP kernel says auto in its info). */
static const char *algo_name(tf_sddmm_algo a)
{
    return a == TF_SDDMM_ALGO_AUTO ? "openmp" : tf_sddmm_algo_name(a);
}

/* Times one algorithm; prints its line; *median_ms gets the median. */
static tf_status time_one(const char *label, const tf_csr *S, const tf_matrix *A, const tf_matrix *B,
                          const tf_sddmm_opts *o, const sddmm_cli *c, double *P, double *median_ms)
{
    double *times = calloc((size_t)c->reps, sizeof *times);
    if (!times) return TF_ERR_NOMEM;
    tf_sddmm_info info;
    tf_status s = tf_sddmm_time(S, A, B, o, P, c->warmup, c->reps, times, &info);
    if (s == TF_OK) {
        *median_ms = cli_median_ms(times, c->reps);
        const double gflops = 2.0 * (double)c->K * (double)S->nnz / (*median_ms * 1e-3) / 1e9;
        printf("%-9s %-9s %12.4f %12.4f %10.2f", label, algo_name(info.algo), *median_ms, times[0], gflops);
        if (info.backend == TF_BACKEND_GPU && info.algo == TF_SDDMM_ALGO_ROW)
            printf("   vwarp %u nper %u A in %s blocks %llu", info.vwarp, info.nper, info.a_regs ? "registers" : "L1",
                   (unsigned long long)info.blocks);
        else if (info.backend == TF_BACKEND_GPU && info.algo != TF_SDDMM_ALGO_CUSPARSE)
            printf("   Ti %u Tj %u Tk %u vwarp %u blocks %llu", info.tile_i, info.tile_j, info.tile_k, info.vwarp,
                   (unsigned long long)info.blocks);
        printf("\n");
    }
    free(times);
    return s;
}

/* --repeat N: N one-shot calls, then a plan built once and run N times;
 * wall time of each (A, B and P on the host), one line each and the saving. */
static tf_status repeat_calls(const sddmm_cli *c, const tf_csr *S, const tf_matrix *A, const tf_matrix *B, double *P)
{
    const int n = c->repeat;
    tf_status s = TF_OK;
    double t0 = tf_wtime();
    for (int i = 0; i < n && s == TF_OK; ++i) s = tf_sddmm(S, A, B, &c->o, P, NULL);
    const double shot = (tf_wtime() - t0) * 1e3;
    tf_sddmm_plan *plan = NULL;
    t0 = tf_wtime();
    if (s == TF_OK) s = tf_sddmm_plan_build(S, c->K, &c->o, &plan);
    const double build = (tf_wtime() - t0) * 1e3;
    if (s != TF_OK) return s;
    const tf_dense a = tf_dense_host(A), b = tf_dense_host(B);
    const tf_dense p = {P, S->nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    t0 = tf_wtime();
    for (int i = 0; i < n && s == TF_OK; ++i) s = tf_sddmm_plan_run(plan, &a, &b, &p, NULL);
    const double runs = (tf_wtime() - t0) * 1e3;
    tf_sddmm_plan_free(plan);
    if (s != TF_OK) return s;
    printf("repeat %d: one-shot %.4f ms per call (%.3f ms in all)\n", n, shot / n, shot);
    printf("repeat %d: plan    %.4f ms per run (%.3f ms in all) + build %.3f ms once\n", n, runs / n, runs, build);
    printf("repeat %d: saving  %.4f ms per call (%.2fx); with the build, %.2fx over %d calls\n", n, (shot - runs) / n,
           runs > 0 ? shot / runs : 0.0, shot / (runs + build), n);
    return TF_OK;
}

/* The rows of a panel as "lo..hi" (empty: "-"). */
static const char *rows_text(const tf_sddmm_panel *q, char *buf, size_t len)
{
    if (q->row_hi == q->row_lo) snprintf(buf, len, "-");
    else snprintf(buf, len, "%llu..%llu", (unsigned long long)q->row_lo, (unsigned long long)(q->row_hi - 1));
    return buf;
}

/* --gpus: a plan over several GPUs; the build (the one-time distribution)
 * apart, then per GPU its rows, non-zeros, choice, build and median kernel
 * time (CUDA events on each GPU), and the whole run's median. */
static int benchmark_panels(const sddmm_cli *c, const tf_csr *S, const tf_matrix *A, const tf_matrix *B)
{
    tf_sddmm_plan *plan = NULL;
    const double t0 = tf_wtime();
    if (tf_sddmm_plan_build(S, c->K, &c->o, &plan) != TF_OK) return cli_fail();
    const double build_ms = (tf_wtime() - t0) * 1e3;
    tf_sddmm_info info;
    tf_sddmm_plan_info(plan, &info);
    const uint32_t n = info.panels;
    double *t = calloc((size_t)c->reps, sizeof *t), *part = calloc((size_t)c->reps * n, sizeof *part);
    double *col = calloc((size_t)c->reps, sizeof *col);
    const tf_dense a = tf_dense_host(A), b = tf_dense_host(B);
    int rc = CLI_OK;
    if (!t || !part || !col) {
        fprintf(stderr, "tenfold: out of memory for the timings\n");
        rc = CLI_FAIL;
    } else if (tf_sddmm_plan_time_panels(plan, &a, &b, NULL, c->warmup, c->reps, t, part) != TF_OK) {
        rc = cli_fail();
    }
    if (rc == CLI_OK) {
        char devs[160] = "", *at = devs;
        for (uint32_t g = 0; g < n; ++g) {
            tf_sddmm_panel q;
            tf_sddmm_plan_panel(plan, g, &q);
            at += snprintf(at, sizeof devs - (size_t)(at - devs), "%s%d", g ? "," : "", q.device);
        }
        if (!cli_quiet())
            printf("sddmm: K %llu, %s, %s, %u GPU%s (%s), %d timed run%s after %d warm-up\n", (unsigned long long)c->K,
                   c->o.precision == TF_SINGLE ? "single" : "double", c->o.op == TF_SDDMM_SCALE ? "scale" : "sample", n,
                   n == 1 ? "" : "s", devs, c->reps, cli_s((uint64_t)c->reps), c->warmup);
        printf("build: %.1f ms once (S cut into %u row panels by non-zeros; each GPU tiles, uploads and tunes its own, "
               "all at once)\n", build_ms, n);
        printf("%-4s %-6s %-21s %-22s %-6s %9s %10s %10s\n", "gpu", "device", "rows", "non-zeros", "algo", "build ms",
               "median ms", "GFLOP/s");
        double slowest = 0.0;
        for (uint32_t g = 0; g < n; ++g) {
            tf_sddmm_panel q;
            tf_sddmm_plan_panel(plan, g, &q);
            for (int r = 0; r < c->reps; ++r) col[r] = part[(size_t)r * n + g];
            const double med = cli_median_ms(col, c->reps), nz = (double)(q.nnz_hi - q.nnz_lo);
            char rows[48], share[48];
            snprintf(share, sizeof share, "%llu (%.1f%%)", (unsigned long long)(q.nnz_hi - q.nnz_lo),
                     S->nnz ? 100.0 * nz / (double)S->nnz : 0.0);
            printf("%-4u %-6d %-21s %-22s %-6s %9.1f %10.4f %10.2f\n", g, q.device, rows_text(&q, rows, sizeof rows),
                   share, nz > 0 ? algo_name(q.info.algo) : "-", q.build_ms, med,
                   med > 0 ? 2.0 * (double)c->K * nz / (med * 1e-3) / 1e9 : 0.0);
            if (med > slowest) slowest = med;
        }
        const double whole = cli_median_ms(t, c->reps);
        printf("%-4s %-6s %-21s %-22llu %-6s %9.1f %10.4f %10.2f\n", "all", "-", "-", (unsigned long long)S->nnz, "-",
               build_ms, whole, whole > 0 ? 2.0 * (double)c->K * (double)S->nnz / (whole * 1e-3) / 1e9 : 0.0);
        if (!cli_quiet())
            printf("the whole run: first GPU's start to the last one's end; the slowest GPU alone %.4f ms\n", slowest);
    }
    free(t);
    free(part);
    free(col);
    tf_sddmm_plan_free(plan);
    return rc;
}

/* Under mpirun: a plan over the ranks (one row panel each), whole runs
 * timed on the wall clock (every rank's panel, then P all-gathered); each
 * rank's rows, non-zeros and panel time come to rank 0 with the run. */
static int benchmark_ranks(const sddmm_cli *c, const tf_csr *S, const tf_matrix *A, const tf_matrix *B, double *P,
                           int rank, int size)
{
    tf_sddmm_plan *plan = NULL;
    double t0 = tf_wtime();
    if (tf_sddmm_plan_build(S, c->K, &c->o, &plan) != TF_OK) return cli_fail();
    const double build_ms = (tf_wtime() - t0) * 1e3;
    const tf_dense a = tf_dense_host(A), b = tf_dense_host(B);
    const tf_dense p = {P, S->nnz, 1, 1, TF_DOUBLE, TF_MEMORY_HOST};
    const int runs = c->warmup + c->reps;
    double *t = calloc((size_t)c->reps, sizeof *t), *mine = calloc((size_t)c->reps, sizeof *mine);
    double *share = calloc((size_t)size * 3 + 1, sizeof *share);
    int rc = CLI_OK;
    if (!t || !mine || !share) {
        fprintf(stderr, "tenfold: out of memory for the timings\n");
        rc = CLI_FAIL;
    }
    for (int i = 0; i < runs && rc == CLI_OK; ++i) {
        t0 = tf_wtime();
        if (tf_sddmm_plan_run(plan, &a, &b, &p, NULL) != TF_OK) rc = cli_fail();
        if (i >= c->warmup) t[i - c->warmup] = (tf_wtime() - t0) * 1e3;
    }
    if (rc == CLI_OK && tf_sddmm_plan_time(plan, &a, &b, 0, c->reps, mine) != TF_OK) rc = cli_fail();
    tf_sddmm_panel q;
    memset(&q, 0, sizeof q);
    if (rc == CLI_OK) tf_sddmm_plan_panel(plan, 0, &q);
    /* every rank's rows, non-zeros and median panel time, to all (a sum of
     * vectors that are zero but for each rank's own entries) */
    if (rc == CLI_OK) {
        share[3 * rank] = (double)(q.row_hi - q.row_lo);
        share[3 * rank + 1] = (double)(q.nnz_hi - q.nnz_lo);
        share[3 * rank + 2] = cli_median_ms(mine, c->reps);
        if (tf_mpi_allreduce_sum(share, (uint64_t)size * 3) != TF_OK) rc = cli_fail();
    }
    if (rc == CLI_OK && rank == 0) {
        const double whole = cli_median_ms(t, c->reps);
        printf("sddmm: K %llu, %s, %s, %d MPI ranks (%s), %d timed run%s after %d warm-up\n",
               (unsigned long long)c->K, c->o.precision == TF_SINGLE ? "single" : "double",
               c->o.op == TF_SDDMM_SCALE ? "scale" : "sample", size,
               c->o.backend == TF_BACKEND_GPU ? "one GPU each" : "the CPU on each", c->reps, cli_s((uint64_t)c->reps),
               c->warmup);
        printf("build: %.1f ms (S cut into %d row panels by non-zeros; each rank plans its own)\n", build_ms, size);
        printf("%-5s %12s %-22s %10s %10s\n", "rank", "rows", "non-zeros", "median ms", "GFLOP/s");
        for (int r = 0; r < size; ++r) {
            const double nz = share[3 * r + 1], ms = share[3 * r + 2];
            char nzs[48];
            snprintf(nzs, sizeof nzs, "%.0f (%.1f%%)", nz, S->nnz ? 100.0 * nz / (double)S->nnz : 0.0);
            printf("%-5d %12.0f %-22s %10.4f %10.2f\n", r, share[3 * r], nzs, ms,
                   ms > 0 ? 2.0 * (double)c->K * nz / (ms * 1e-3) / 1e9 : 0.0);
        }
        printf("%-5s %12llu %-22llu %10.4f %10.2f   (whole runs: panels + all-gather of P)\n", "all",
               (unsigned long long)S->rows, (unsigned long long)S->nnz, whole,
               whole > 0 ? 2.0 * (double)c->K * (double)S->nnz / (whole * 1e-3) / 1e9 : 0.0);
    }
    free(t);
    free(mine);
    free(share);
    tf_sddmm_plan_free(plan);
    return rc;
}

static int benchmark(const sddmm_cli *c, const tf_csr *S, int rank, int size)
{
    tf_status s1, s2;
    tf_matrix A = random_dense(S->rows, c->K, c->seed, &s1), B = random_dense(S->cols, c->K, c->seed + 1, &s2);
    double *P = calloc(S->nnz + 1, sizeof *P), *Q = calloc(S->nnz + 1, sizeof *Q);
    int rc = CLI_OK;
    if (s1 != TF_OK || s2 != TF_OK || !P || !Q) {
        fprintf(stderr, "tenfold: out of memory for A, B and the results (K = %llu)\n", (unsigned long long)c->K);
        rc = CLI_FAIL;
        goto done;
    }
    if (size > 1) {
        rc = benchmark_ranks(c, S, &A, &B, P, rank, size);
        goto done;
    }
    if (c->gpus.all || c->gpus.n > 1) {
        rc = benchmark_panels(c, S, &A, &B);
        if (rc == CLI_OK && c->repeat && repeat_calls(c, S, &A, &B, P) != TF_OK) rc = cli_fail();
        goto done;
    }
    char dev[320];
    if (!cli_quiet())
        printf("sddmm: K %llu, %s, %s, %s, %d timed run%s after %d warm-up\n", (unsigned long long)c->K,
               c->o.precision == TF_SINGLE ? "single" : "double", c->o.op == TF_SDDMM_SCALE ? "scale" : "sample",
               cli_device_label(c->o.backend, c->device, c->threads, dev, sizeof dev), c->reps,
               cli_s((uint64_t)c->reps), c->warmup);
    printf("%-9s %-9s %12s %12s %10s\n", "impl", "algo", "median ms", "min ms", "GFLOP/s");
    double ms = 0, ms_ref = 0;
    if (time_one("tenfold", S, &A, &B, &c->o, c, P, &ms) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if (c->repeat && repeat_calls(c, S, &A, &B, P) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if (c->o.backend == TF_BACKEND_GPU && c->o.op == TF_SDDMM_SAMPLE) {
        tf_sddmm_opts o = c->o;
        o.algo = TF_SDDMM_ALGO_CUSPARSE;
        if (time_one("cusparse", S, &A, &B, &o, c, Q, &ms_ref) != TF_OK) {
            printf("cusparse  unavailable: %s\n", tf_last_error());
        } else {
            double diff = 0, scale = 0;
            for (uint64_t k = 0; k < S->nnz; ++k) {
                diff = fmax(diff, fabs(P[k] - Q[k]));
                scale = fmax(scale, fabs(Q[k]));
            }
            printf("speedup over cusparse: %.2fx, max relative difference %.3g\n", ms_ref / ms,
                   scale > 0 ? diff / scale : diff);
        }
    }
done:
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    free(P);
    free(Q);
    return rc;
}

/* The dense operands every rank read: their shapes and contents. */
static int agree_operands(const tf_matrix *A, const tf_matrix *B, int threads, int size)
{
    if (size < 2) return CLI_OK;
    tf_agree a;
    memset(&a, 0, sizeof a);
    const tf_matrix *m[2] = {A, B};
    for (int i = 0; i < 2; ++i) {
        char buf[64];
        snprintf(buf, sizeof buf, "%llu x %llu", (unsigned long long)m[i]->rows, (unsigned long long)m[i]->cols);
        tf_agree_add(&a, i ? "-B" : "-A", buf);
        snprintf(buf, sizeof buf, "%016llx",
                 (unsigned long long)tf_checksum_bytes(m[i]->data, m[i]->rows * m[i]->cols * sizeof(double), 0,
                                                       threads));
        tf_agree_add(&a, i ? "-B checksum" : "-A checksum", buf);
    }
    return cli_ranks_agree(&a, size);
}

static int compute_one(const sddmm_cli *c, const tf_tensor *coo, const tf_csr *S, int rank, int size)
{
    tf_matrix A = {0}, B = {0};
    tf_tensor out = {0};
    int rc = CLI_OK;
    if (tf_matrix_read(c->a_path, &A) != TF_OK || tf_matrix_read(c->b_path, &B) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if ((rc = agree_operands(&A, &B, c->threads, size))) goto done;
    /* Name the file at fault: a row count is fixed by the matrix; the
     * column counts only need to agree (then both files are named). */
    const char *bad = A.rows != S->rows ? c->a_path : B.rows != S->cols ? c->b_path : NULL;
    if (bad) {
        const int a_bad = bad == c->a_path;
        fprintf(stderr, "tenfold: %s %s has %llu rows, expected %llu (the %s of the %llu x %llu matrix)\n",
                a_bad ? "-A" : "-B", bad, (unsigned long long)(a_bad ? A.rows : B.rows),
                (unsigned long long)(a_bad ? S->rows : S->cols), a_bad ? "rows" : "columns",
                (unsigned long long)S->rows, (unsigned long long)S->cols);
        rc = CLI_FAIL;
        goto done;
    }
    if (A.cols != B.cols) {
        fprintf(stderr, "tenfold: -A %s has %llu columns and -B %s has %llu; they must have the same number K\n",
                c->a_path, (unsigned long long)A.cols, c->b_path, (unsigned long long)B.cols);
        rc = CLI_FAIL;
        goto done;
    }
    /* Output in the input's (canonical, row-major) order: CSR order equals it. */
    tf_sddmm_info info;
    const double t0 = tf_wtime();
    tf_sddmm_opts o = c->o;
    if (c->device_auto && o.algo == TF_SDDMM_ALGO_AUTO && size == 1) o.backend = TF_BACKEND_AUTO;
    /* over ranks every rank ends with all of P; rank 0 writes it */
    if (tf_tensor_copy(coo, &out) != TF_OK || tf_sddmm(S, &A, &B, &o, out.vals, &info) != TF_OK ||
        (rank == 0 && tf_write_tensor(c->out_path, &out, TF_FILE_MTX) != TF_OK)) {
        rc = cli_fail();
        goto done;
    }
    if (!cli_quiet()) {
        if (info.note[0]) printf("note: %s\n", info.note);
        printf("sddmm: K %llu, %s, %s, %.6f s\n", (unsigned long long)A.cols,
               info.backend == TF_BACKEND_GPU ? "gpu" : "cpu", algo_name(info.algo), tf_wtime() - t0);
        if (info.panels > 1) printf("panels: %u GPUs, one row panel each\n", info.panels);
        if (size > 1) printf("ranks: %d (MPI), one row panel each, P all-gathered\n", size);
        printf("wrote: %s (%llu x %llu, %llu entr%s)\n", c->out_path, (unsigned long long)S->rows,
               (unsigned long long)S->cols, (unsigned long long)S->nnz, S->nnz == 1 ? "y" : "ies");
    }
done:
    tf_matrix_free(&A);
    tf_matrix_free(&B);
    tf_tensor_free(&out);
    return rc;
}

/* What the ranks must agree on (cli_agree_begin): what is computed and
 * how; not -t, -o, --gpu or --memory-limit (node-local or rank 0's). */
static void agree_record(tf_agree *a, const sddmm_cli *c, int parse_rc, const char *path)
{
    cli_agree_begin(a, "sddmm", parse_rc, path);
    if (parse_rc >= 0) return;
    const tf_sddmm_opts *o = &c->o;
    cli_agree_str(a, "mode", c->out_path ? "one product (-A, -B, -o)" : "the benchmark (-k)");
    cli_agree_str(a, "-A", !c->a_path ? NULL : strcmp(c->a_path, "-") ? "a file" : "standard input ('-')");
    cli_agree_str(a, "-B", !c->b_path ? NULL : strcmp(c->b_path, "-") ? "a file" : "standard input ('-')");
    cli_agree_u64(a, "-k", c->K);
    cli_agree_double(a, "--alpha", o->alpha);
    cli_agree_double(a, "--beta", o->beta);
    cli_agree_str(a, "--scale", o->op == TF_SDDMM_SCALE ? "yes" : "no");
    cli_agree_str(a, "--device", c->device_auto ? "auto" : tf_backend_name(o->backend));
    cli_agree_str(a, "--precision", o->precision == TF_SINGLE ? "single" : "double");
    cli_agree_str(a, "--algo", tf_sddmm_algo_name(o->algo));
    cli_agree_u64(a, "--tile-j", o->tile_j);
    cli_agree_u64(a, "--tile-k", o->tile_k);
    cli_agree_u64(a, "--vwarp", o->vwarp);
    cli_agree_u64(a, "--nper", o->nper);
    cli_agree_u64(a, "--a-regs", (uint64_t)(o->a_regs + 1));
    cli_agree_u64(a, "--reps", (uint64_t)c->reps);
    cli_agree_u64(a, "--warmup", (uint64_t)c->warmup);
    cli_agree_u64(a, "--repeat", (uint64_t)c->repeat);
    cli_agree_u64(a, "--seed", c->seed);
    cli_agree_str(a, "--base", c->base ? c->base : "auto");
    cli_agree_gpus(a, &c->gpus);
}

static int sddmm_ranks(int argc, char **argv, int rank, int size);

/* Under mpirun with several ranks: each rank its row panel, P all-gathered;
 * rank 0 alone prints and writes (a failure on one rank ends them all). */
int cmd_sddmm(int argc, char **argv)
{
    int rank = 0, size = 1;
    int rc = cli_ranks_start(&argc, &argv, &rank, &size);
    if (rc) return rc;
    return cli_ranks_end(sddmm_ranks(argc, argv, rank, size), size);
}

static int sddmm_ranks(int argc, char **argv, int rank, int size)
{
    cli_args a;
    sddmm_cli c;
    int rc = parse(argc, argv, &a, &c);
    if (size > 1) { /* first of all, CPU or GPU ranks: the same command and options everywhere */
        tf_agree ag;
        agree_record(&ag, &c, rc, rc < 0 ? a.pos[0] : NULL);
        const int arc = cli_ranks_agree(&ag, size);
        if (arc) return arc;
        if (rc >= 0) return cli_alike(rc); /* --help or a usage error on every rank */
    }
    if (rc >= 0) return rc;
    if (size > 1) { /* from here on every rank has the same options: a failure of them is every rank's */
        const char *const in[] = {a.pos[0], c.a_path, c.b_path};
        for (int i = 0; i < 3; ++i)
            if (in[i] && !strcmp(in[i], "-"))
                return cli_fail_all("sddmm: reading standard input ('-') is not possible on MPI ranks: ranks 1..%d "
                                    "get none (mpirun passes it to rank 0 alone); convert it to a file first",
                                    size - 1);
        if (c.gpus.n > 1 || c.gpus.all)
            return cli_fail_all("sddmm: --gpus: a run on %d MPI ranks takes one GPU per rank (--device gpu)", size);
        /* ranks run on the CPU unless --device gpu (as cpd's): auto was resolved to
         * the GPU when one is present, which would put more ranks than GPUs on them */
        if (c.device_auto || c.o.backend != TF_BACKEND_GPU) c.o.backend = TF_BACKEND_CPU;
        if (c.o.backend == TF_BACKEND_CPU && c.o.algo == TF_SDDMM_ALGO_CUSPARSE) c.o.algo = TF_SDDMM_ALGO_AUTO;
        /* rank 0 alone prints and writes: the others' standard output goes nowhere */
        if (rank != 0 && !freopen("/dev/null", "w", stdout)) {
            fprintf(stderr, "tenfold: sddmm: rank %d cannot silence its output\n", rank);
            return CLI_FAIL;
        }
    }
    const cli_path paths[] = {{"the input", cli_generated(a.pos[0]) ? NULL : a.pos[0], 0, 0},
                              {"-A", c.a_path, 0, 0}, {"-B", c.b_path, 0, 0}, {"-o", c.out_path, 1, 0}};
    if (rank == 0 && (rc = cli_paths_distinct("sddmm", paths, 4))) return rc;
    if (rank == 0 && (rc = cli_outputs_check(&c.out_path, 1))) return rc; /* before reading */
    /* one context for the run (the kernel and cuSPARSE share the GPU's set-up),
     * before reading: --gpus beyond the machine fails at once */
    tf_context *ctx = NULL;
    if ((rc = cli_run_context_ranks(c.o.backend, c.device, &c.gpus, c.threads, c.memory_limit, size > 1, "--device",
                                    &ctx)))
        return rc;
    tf_tensor coo;
    tf_read_info info;
    if ((rc = cli_load_precision("sddmm", a.pos[0], c.threads, c.base, c.o.precision, &coo, &info))) {
        tf_context_free(ctx);
        return rc;
    }
    /* before any collective of the computation: the same matrix on every rank */
    if ((rc = cli_ranks_agree_input(&coo, &info, c.threads, size))) {
        tf_tensor_free(&coo);
        tf_context_free(ctx);
        return rc;
    }
    tf_csr S;
    if (coo.order != 2) {
        fprintf(stderr, "tenfold: %s is an order-%u tensor; sddmm needs a matrix (order 2)\n", a.pos[0], coo.order);
        tf_tensor_free(&coo);
        tf_context_free(ctx);
        return CLI_FAIL;
    }
    if (tf_csr_from_coo(&coo, &S) != TF_OK) {
        tf_tensor_free(&coo);
        tf_context_free(ctx);
        return cli_fail();
    }
    if (!cli_quiet()) cli_print_problem(stdout, a.pos[0], &coo, &info);
    if (cli_verbose()) cli_print_read(stdout, &info);
    c.o.context = ctx;
    rc = c.out_path ? compute_one(&c, &coo, &S, rank, size) : benchmark(&c, &S, rank, size);
    tf_context_free(ctx);
    tf_csr_free(&S);
    tf_tensor_free(&coo);
    return rc;
}
