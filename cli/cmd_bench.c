/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold bench mttkrp: per-mode MTTKRP time, GFLOP/s and bytes moved of
 * each plan format and precision, on the CPU or the GPU, on a tensor file
 * and random factors. The models are in mttkrp_model.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "json.h"
#include "kernel_timing.h"
#include "mttkrp_model.h"
#include "outfile.h"
#include "progress.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

#define BENCH_CMD "bench mttkrp"
#define MAX_FORMATS 8
#define MAX_PRECISIONS 2
#define MAX_RUNS (MAX_FORMATS * MAX_PRECISIONS)
#define GPU_WARMUP 3 /* default untimed runs: kernel loading, clocks */
#define CPU_WARMUP 1

static const char help[] =
    "usage: tenfold bench mttkrp FILE|--gen SPEC [options]\n"
    "\n"
    "Times the MTTKRP of every mode with each plan format and precision, on the\n"
    "tensor in FILE and random factors: plan build time, rate (M non-zeros/s),\n"
    "memory and peak host memory of the build (tenfold's allocations above what\n"
    "was held before it, the plan's arrays and the builders' scratch), then per mode\n"
    "W untimed and N timed runs, of which the median is reported. GPU runs keep\n"
    "the factors on the device and time each run with CUDA events; CPU runs use\n"
    "the wall clock.\n"
    "\n"
    "      --format LIST    comma-separated formats: coo, csf, csf-short, fcoo,\n"
    "                       blco, auto (default coo,fcoo,blco on the GPU,\n"
    "                       coo,csf,csf-short when everything runs on the CPU;\n"
    "                       csf-short is csf with each node's fibres in order\n"
    "                       of length, what auto does on the CPU where fibres\n"
    "                       hold under 8 non-zeros on average)\n"
    "      --precision LIST comma-separated precisions: double, single (default\n"
    "                       double; single on the GPU only)\n"
    "      --device D       auto|cpu|gpu (default auto: fcoo and blco on the\n"
    "                       GPU, csf and csf-short on the CPU, coo and auto on the GPU when one is\n"
    "                       present, else on the CPU)\n"
    "      --gpu N          GPU ordinal (default 0)\n"
    "      --gpus G         several GPUs (a count N, all, or a list 0,2): each\n"
    "                       times its F-COO shards of a mode, the run ends when the\n"
    "                       last GPU's does (default format fcoo)\n"
    "      --memory-limit SIZE  device memory the plans may use (8G, 512M, ...;\n"
    "                       default: 90% of the GPU's free memory; a run on the\n"
    "                       CPU ignores it, with a note)\n"
    "  -r, --rank R         factor columns (default 16)\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      CPU threads (default: all cores)\n"
    "      --reps N         timed runs per mode (default 20)\n"
    "      --warmup W       untimed runs per mode first (default 3 on the GPU,\n"
    "                       1 on the CPU)\n"
    "      --seed S         seed of the random factors (default 1)\n"
    "      --json OUT       also write the results as JSON to OUT ('-': standard\n"
    "                       output, then the table goes to stderr)\n"
    CLI_VERBOSITY_HELP
    "                       (-q: the table only)\n"
    "  -h, --help           this help\n"
    "\n"
    "A run that cannot be made (a GPU format without a GPU, single precision on\n"
    "the CPU) prints one line 'tenfold: FORMAT PRECISION: why' on stderr; the\n"
    "others still run, and the exit status is 1.\n"
    "\n"
    "Models (mode n, order N, nnz non-zeros, rank R, value size s = 8 for double\n"
    "and 4 for single, I_m the length of mode m):\n"
    "  flops = nnz * R * N: per non-zero and column, N-1 multiplications (value\n"
    "          times the N-1 factor rows) and one addition.\n"
    "  bytes on the GPU, the compulsory traffic:\n"
    "        = T_n                      the format, read once: the plan's bytes\n"
    "                                   (fcoo: one of its N copies, bytes / N)\n"
    "        + sum_m I_m * R * s        every factor read once, the output\n"
    "                                   written once\n"
    "  bytes on the CPU, streaming:\n"
    "        = nnz * (4N + s)           indices and values, streamed once\n"
    "        + nnz * (N-1) * R * s      one factor row per non-zero and other mode\n"
    "        + I_n * R * s              the output, written once\n"
    "  GFLOP/s and GB/s divide these by the median time ('all': the sums over\n"
    "  the modes by the sum of the medians). frac (GPU runs) is GB/s over the\n"
    "  device copy bandwidth (bytes read + written per second by a large\n"
    "  device-to-device copy, measured once and printed in the header): 1.0\n"
    "  would move the compulsory bytes at copy speed. Formats that compress\n"
    "  fibres (csf) read fewer factor rows than the CPU model counts.\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

typedef struct mode_result {
    double median_ms, min_ms;
    double gflop, gbytes; /* the models' amounts, in 1e9 */
    double gflops, gbps;  /* divided by the median time */
    double frac;          /* gbps over the copy bandwidth; NAN on the CPU */
    double stream_gb;     /* copied from host memory (a streamed plan), 1e9 bytes */
    double stream_gbps;   /* divided by the median time */
} mode_result;

/* One format in one precision. */
typedef struct run_result {
    tf_format format;       /* as asked                             */
    tf_precision precision;
    tf_backend backend;     /* cpu or gpu (--device resolved)       */
    tf_format used;         /* the plan's format (auto resolved)    */
    int warmup;
    int ok;
    char plan[96];
    char error[256];
    double build_s;
    uint64_t bytes, build_peak;
    mode_result mode[TF_MAX_ORDER];
    mode_result all; /* sums over the modes (median_ms: sum of medians) */
} run_result;

typedef struct bench_opts {
    uint64_t rank, seed;
    int threads, reps, warmup, gpu; /* warmup < 0: the backend's default */
    tf_backend device;              /* as asked: auto, cpu or gpu        */
    const char *json_path;
    int any_cpu, any_gpu;
    char gpu_name[256];
    double copy_bw; /* bytes/s; 0 when not measured */
    double h2d_bw;  /* pinned host -> device bytes/s, measured for the first streamed plan; 0 = not */
    tf_context *ctx; /* the run's context: its GPU is set up before any plan is timed */
    uint64_t memory_limit; /* --memory-limit, 0 = none */
    cli_gpus gpus;         /* --gpus */
} bench_opts;

static const char *const device_names[] = {"auto", "cpu", "gpu"}; /* tf_backend's order */
static const char *const precision_names[] = {"double", "single"};

static const char *prec_name(tf_precision p) { return precision_names[p == TF_SINGLE]; }

/* splitmix64: deterministic factor values in [0, 1) without library internals */
static double next_uniform(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

static tf_status random_factors(const tf_tensor *t, uint64_t rank, uint64_t seed, tf_matrix *f)
{
    uint64_t state = seed;
    for (uint32_t m = 0; m < t->order; ++m) {
        tf_status s = tf_matrix_alloc(&f[m], t->dims[m], rank);
        if (s != TF_OK) return s;
        for (uint64_t i = 0; i < t->dims[m] * rank; ++i) f[m].data[i] = next_uniform(&state);
    }
    return TF_OK;
}

/* --device auto: the GPU formats on the GPU (which reports when there is
 * none), csf and csf-short on the CPU, coo and auto on the GPU when one is present. */
static tf_backend resolve_backend(tf_backend device, tf_format f, int have_gpu)
{
    if (device != TF_BACKEND_AUTO) return device;
    switch (f) {
    case TF_FORMAT_CSF:
    case TF_FORMAT_CSF_SHORT: return TF_BACKEND_CPU;
    case TF_FORMAT_COO:
    case TF_FORMAT_AUTO: return have_gpu ? TF_BACKEND_GPU : TF_BACKEND_CPU;
    default: return TF_BACKEND_GPU;
    }
}

/* Fills r's rates from its amounts, median time and the copy bandwidth. */
static void rates(mode_result *r, double copy_bw, int gpu)
{
    const double secs = r->median_ms / 1e3;
    r->gflops = secs > 0 ? r->gflop / secs : 0;
    r->gbps = secs > 0 ? r->gbytes / secs : 0;
    r->stream_gbps = secs > 0 ? r->stream_gb / secs : 0;
    r->frac = gpu && copy_bw > 0 ? r->gbps * 1e9 / copy_bw : NAN;
}

/* Builds the plan of one run and times every mode; a failure is recorded
 * in res (the other runs still go). */
static void bench_run(const tf_tensor *t, const tf_matrix *f, bench_opts *o, run_result *res)
{
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.backend = res->backend;
    po.format = res->format;
    po.precision = res->precision;
    po.threads = o->threads;
    po.device = o->gpu;
    po.rank_hint = o->rank;
    po.context = o->ctx;
    po.progress = cli_progress_fn();
    po.progress_user = (void *)BENCH_CMD;
    res->warmup = o->warmup >= 0 ? o->warmup : res->backend == TF_BACKEND_GPU ? GPU_WARMUP : CPU_WARMUP;
    tf_plan *p = NULL;
    tf_matrix out = {0};
    double *times = calloc((size_t)o->reps, sizeof *times);
    double t0 = tf_wtime();
    tf_status s = times ? tf_plan_build(t, &po, &p) : TF_ERR_NOMEM;
    res->build_s = tf_wtime() - t0;
    if (s == TF_OK) {
        snprintf(res->plan, sizeof res->plan, "%s", tf_plan_describe(p));
        res->bytes = tf_plan_bytes(p);
        res->build_peak = tf_plan_build_peak(p);
        res->used = tf_plan_format(p);
    }
    const int gpu = res->backend == TF_BACKEND_GPU;
    for (uint32_t m = 0; s == TF_OK && m < t->order; ++m) {
        s = tf_matrix_alloc(&out, t->dims[m], o->rank);
        if (s == TF_OK) s = tf_plan_time_mttkrp(p, m, f, &out, res->warmup, o->reps, times);
        tf_matrix_free(&out);
        if (s != TF_OK) break;
        mode_result *r = &res->mode[m];
        r->median_ms = cli_median_ms(times, o->reps); /* sorts times */
        r->min_ms = times[0];
        r->gflop = cli_mttkrp_flops(t, o->rank) / 1e9;
        r->gbytes = cli_mttkrp_bytes(t, p, m, o->rank, res->precision) / 1e9;
        r->stream_gb = (double)tf_plan_streamed_bytes(p, m) / 1e9;
        rates(r, o->copy_bw, gpu);
        res->all.median_ms += r->median_ms;
        res->all.gflop += r->gflop;
        res->all.gbytes += r->gbytes;
        res->all.stream_gb += r->stream_gb;
    }
    /* the ceiling of a streamed plan: measured once, when one streams */
    if (s == TF_OK && res->all.stream_gb > 0 && o->h2d_bw == 0 && tf_gpu_h2d_bandwidth(o->gpu, &o->h2d_bw) != TF_OK)
        o->h2d_bw = -1;
    rates(&res->all, o->copy_bw, gpu);
    res->ok = s == TF_OK;
    if (!res->ok) snprintf(res->error, sizeof res->error, "%s", times ? tf_last_error() : "out of memory");
    tf_plan_free(p);
    free(times);
}

static void print_row(const char *name, const char *prec, const char *mode, const mode_result *x,
                      int with_min)
{
    char min[32] = "", frac[16] = "-";
    if (with_min) snprintf(min, sizeof min, "%.3f", x->min_ms);
    if (isfinite(x->frac)) snprintf(frac, sizeof frac, "%.3f", x->frac);
    printf("%-9s %-6s %5s %12.3f %12s %9.2f %9.3f %9.2f %6s\n", name, prec, mode, x->median_ms, min, x->gflops,
           x->gbytes, x->gbps, frac);
}

static void print_result(const tf_tensor *t, const run_result *r, double h2d_bw)
{
    const char *name = tf_format_name(r->format), *prec = prec_name(r->precision);
    if (!r->ok) { /* a row in the table, and the error line on stderr */
        printf("%-9s %-6s failed: %s\n", name, prec, r->error);
        cli_flush_stdout();
        fprintf(stderr, "tenfold: %s %s: %s\n", name, prec, r->error);
        return;
    }
    char mem[32], peak[32];
    printf("%-9s %-6s build %.3f s (%.1f M nnz/s, peak host %s), %s (%s)\n", name, prec, r->build_s,
           r->build_s > 0 ? (double)t->nnz / r->build_s / 1e6 : 0.0,
           cli_bytes(peak, sizeof peak, (double)r->build_peak), cli_bytes(mem, sizeof mem, (double)r->bytes),
           r->plan);
    for (uint32_t m = 0; m < t->order; ++m) {
        char mode[16];
        snprintf(mode, sizeof mode, "%u", m + 1);
        print_row(name, prec, mode, &r->mode[m], 1);
    }
    print_row(name, prec, "all", &r->all, 0);
    if (r->all.stream_gb > 0) {
        printf("%-9s %-6s streamed from host memory: %.3f GB per all-mode pass, %.2f GB/s", name, prec,
               r->all.stream_gb, r->all.stream_gbps);
        if (h2d_bw > 0) printf(" = %.2f of the pinned host-to-device %.2f GB/s", r->all.stream_gbps * 1e9 / h2d_bw, h2d_bw / 1e9);
        printf("\n");
    }
    cli_flush_stdout();
}

static void json_mode(cli_json *j, const mode_result *x)
{
    json_num(j, "median_ms", x->median_ms);
    json_num(j, "gflop", x->gflop);
    json_num(j, "gflops", x->gflops);
    json_num(j, "gbytes", x->gbytes);
    json_num(j, "gbytes_per_s", x->gbps);
    json_num(j, "frac", x->frac);
    json_num(j, "streamed_gbytes", x->stream_gb);
    json_num(j, "streamed_gbytes_per_s", x->stream_gbps);
}

static int write_json(const char *path, const char *file, const tf_tensor *t, double read_s,
                      const bench_opts *o, const run_result *res, int n)
{
    cli_outfile out;
    if (cli_out_open(&out, path)) return CLI_FAIL;
    cli_json j;
    json_open(&j, out.f);
    json_str(&j, "tenfold", tf_version());
    json_u64(&j, "schema", CLI_JSON_SCHEMA);
    json_str(&j, "command", BENCH_CMD);
    json_object(&j, "input");
    if (cli_generated(file)) { /* --gen: no file (null), the SPEC and the rate */
        json_num(&j, "path", NAN);
        json_str(&j, "generated", cli_generated(file));
        json_num(&j, "nnz_per_second", read_s > 0 ? (double)t->nnz / read_s : NAN);
    } else {
        json_str(&j, "path", file);
    }
    json_u64(&j, "order", t->order);
    json_array(&j, "dims");
    for (uint32_t m = 0; m < t->order; ++m) json_u64(&j, NULL, t->dims[m]);
    json_end(&j);
    json_u64(&j, "nnz", t->nnz);
    json_num(&j, "read_seconds", read_s);
    json_end(&j);
    json_object(&j, "options");
    json_u64(&j, "rank", o->rank);
    json_u64(&j, "threads", (uint64_t)(o->threads ? o->threads : tf_default_threads()));
    json_u64(&j, "reps", (uint64_t)o->reps);
    json_num(&j, "warmup", o->warmup >= 0 ? (double)o->warmup : NAN); /* null: per backend */
    json_u64(&j, "seed", o->seed);
    json_str(&j, "device", device_names[o->device]);
    json_u64(&j, "gpu", (uint64_t)o->gpu);
    json_end(&j);
    if (o->any_gpu) {
        json_object(&j, "gpu");
        json_u64(&j, "ordinal", (uint64_t)o->gpu);
        json_str(&j, "name", o->gpu_name);
        json_num(&j, "copy_bandwidth_bytes_per_s", o->copy_bw > 0 ? o->copy_bw : NAN);
        json_num(&j, "h2d_bandwidth_bytes_per_s", o->h2d_bw > 0 ? o->h2d_bw : NAN);
        json_end(&j);
    } else {
        json_num(&j, "gpu", NAN);
    }
    json_object(&j, "models");
    json_str(&j, "flops", CLI_MTTKRP_FLOPS_MODEL);
    json_str(&j, "bytes_gpu", CLI_MTTKRP_GPU_BYTES_MODEL);
    json_str(&j, "bytes_cpu", CLI_MTTKRP_CPU_BYTES_MODEL);
    json_str(&j, "s", "bytes of a value: 8 double, 4 single");
    json_str(&j, "frac", "gbytes_per_s * 1e9 / gpu.copy_bandwidth_bytes_per_s (GPU runs)");
    json_end(&j);
    json_array(&j, "results");
    for (int i = 0; i < n; ++i) {
        const run_result *r = &res[i];
        json_object(&j, NULL);
        json_str(&j, "format", tf_format_name(r->format));
        json_str(&j, "precision", prec_name(r->precision));
        json_str(&j, "device", tf_backend_name(r->backend));
        json_bool(&j, "ok", r->ok);
        if (!r->ok) {
            json_str(&j, "error", r->error);
            json_end(&j);
            continue;
        }
        json_str(&j, "used_format", tf_format_name(r->used));
        json_str(&j, "plan", r->plan);
        json_u64(&j, "warmup", (uint64_t)r->warmup);
        json_num(&j, "build_seconds", r->build_s);
        json_num(&j, "build_nnz_per_second", r->build_s > 0 ? (double)t->nnz / r->build_s : 0.0);
        json_u64(&j, "build_peak_host_bytes", r->build_peak);
        json_u64(&j, "bytes", r->bytes);
        json_array(&j, "modes");
        for (uint32_t m = 0; m < t->order; ++m) {
            json_object(&j, NULL);
            json_u64(&j, "mode", m + 1);
            json_num(&j, "min_ms", r->mode[m].min_ms);
            json_mode(&j, &r->mode[m]);
            json_end(&j);
        }
        json_end(&j);
        json_object(&j, "all_modes");
        json_mode(&j, &r->all);
        json_end(&j);
        json_end(&j);
    }
    json_end(&j);
    json_close(&j);
    if (cli_out_commit(&out)) return CLI_FAIL;
    if (!cli_quiet()) printf("wrote: %s (report)\n", path);
    return CLI_OK;
}

/* Parses the --format list. */
static int parse_formats(const char *list, tf_format *fmt, int *n)
{
    char *buf = NULL;
    const char *piece[MAX_FORMATS];
    int rc = cli_split(BENCH_CMD, "--format", list, &buf, piece, MAX_FORMATS, n);
    for (int i = 0; rc == CLI_OK && i < *n; ++i) {
        int f = tf_format_parse(piece[i]);
        if (f < 0) rc = cli_usage(BENCH_CMD, "--format: unknown format '%s' (formats: coo, csf, csf-short, fcoo, blco, auto)",
                                  piece[i]);
        else fmt[i] = (tf_format)f;
    }
    free(buf);
    return rc;
}

/* Parses the --precision list. */
static int parse_precisions(const char *list, tf_precision *prec, int *n)
{
    char *buf = NULL;
    const char *piece[MAX_PRECISIONS];
    int rc = cli_split(BENCH_CMD, "--precision", list, &buf, piece, MAX_PRECISIONS, n);
    for (int i = 0; rc == CLI_OK && i < *n; ++i) {
        int p = 0;
        rc = cli_choice(BENCH_CMD, "--precision", piece[i], precision_names, 2, &p);
        prec[i] = p ? TF_SINGLE : TF_DOUBLE;
    }
    free(buf);
    return rc;
}

/* The header lines: runs, devices and the copy bandwidth (measured here). */
static void print_setup(bench_opts *o)
{
    char warm[64];
    if (o->warmup >= 0) snprintf(warm, sizeof warm, "%d", o->warmup);
    else if (o->any_gpu && o->any_cpu) snprintf(warm, sizeof warm, "%d (gpu) / %d (cpu)", GPU_WARMUP, CPU_WARMUP);
    else snprintf(warm, sizeof warm, "%d", o->any_gpu ? GPU_WARMUP : CPU_WARMUP);
    const int say = !cli_quiet(), nthreads = o->threads ? o->threads : tf_default_threads();
    if (say)
        printf("bench:  rank %llu, %s warm-up + %d timed run%s per mode, seed %llu\n", (unsigned long long)o->rank,
               warm, o->reps, cli_s((uint64_t)o->reps), (unsigned long long)o->seed);
    if (say && o->any_cpu) printf("cpu:    %d thread%s\n", nthreads, cli_s((uint64_t)nthreads));
    if (!o->any_gpu) return;
    if (tf_gpu_describe(o->gpu, o->gpu_name, sizeof o->gpu_name) != TF_OK) {
        snprintf(o->gpu_name, sizeof o->gpu_name, "unavailable");
        if (say) printf("gpu %d:  unavailable (%s)\n", o->gpu, tf_last_error());
        return;
    }
    if (tf_gpu_copy_bandwidth(o->gpu, &o->copy_bw) != TF_OK) {
        o->copy_bw = 0;
        if (say) printf("gpu %d:  %s; copy bandwidth unavailable (%s)\n", o->gpu, o->gpu_name, tf_last_error());
        return;
    }
    if (say) printf("gpu %d:  %s; copy bandwidth (read + write) %.1f GB/s\n", o->gpu, o->gpu_name, o->copy_bw / 1e9);
}

int cmd_bench(int argc, char **argv)
{
    if (argc < 2) return cli_usage("bench", "missing benchmark name (expected: bench mttkrp FILE)");
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(help, stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "mttkrp"))
        return cli_usage("bench", "unknown benchmark '%s' (expected: bench mttkrp FILE)", argv[1]);

    const char *formats = NULL, *precisions = "double", *device = NULL, *gpu = NULL, *rank = NULL,
               *threads = NULL, *reps = NULL, *warmup = NULL, *seed = NULL, *json = NULL;
    const char *base = NULL, *mem = NULL, *gpus_spec = NULL;
    const cli_opt opts[] = {{"format", 0, &formats, NULL},      {"precision", 0, &precisions, NULL},
                            {"device", 0, &device, NULL},       {"gpu", 0, &gpu, NULL},
                            {"rank", 'r', &rank, NULL},         {"threads", 't', &threads, NULL}, {"base", 0, &base, NULL},
                            {"reps", 0, &reps, NULL},           {"warmup", 0, &warmup, NULL},
                            {"seed", 0, &seed, NULL},           {"json", 0, &json, NULL},
                            {"memory-limit", 0, &mem, NULL},    {"gpus", 0, &gpus_spec, NULL},
                            CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    cli_args a;
    int rc = cli_parse(&a, BENCH_CMD, help, argc - 1, argv + 1, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    bench_opts o = {.rank = 16, .seed = 1, .reps = 20, .warmup = -1, .json_path = json};
    tf_format fmt[MAX_FORMATS];
    tf_precision prec[MAX_PRECISIONS];
    int nfmt = 0, nprec = 0, dev = TF_BACKEND_AUTO;
    if ((rc = cli_u64(BENCH_CMD, "-r/--rank", rank, 1, 1u << 20, &o.rank)) ||
        (rc = cli_threads(BENCH_CMD, threads, &o.threads)) ||
        (rc = cli_int(BENCH_CMD, "--reps", reps, 1, 1000000, &o.reps)) ||
        (rc = cli_int(BENCH_CMD, "--warmup", warmup, 0, 1000000, &o.warmup)) ||
        (rc = cli_u64(BENCH_CMD, "--seed", seed, 0, UINT64_MAX, &o.seed)) ||
        (rc = cli_choice(BENCH_CMD, "--device", device, device_names, 3, &dev)) ||
        (rc = cli_int(BENCH_CMD, "--gpu", gpu, 0, 1023, &o.gpu)) ||
        (rc = parse_precisions(precisions, prec, &nprec)) ||
        (rc = cli_memory_limit(BENCH_CMD, mem, &o.memory_limit)) ||
        (rc = cli_parse_gpus(BENCH_CMD, gpus_spec, &o.gpus)))
        return rc;
    if (gpus_spec) {
        if (dev == TF_BACKEND_CPU) return cli_usage(BENCH_CMD, "--gpus: not with --device cpu");
        dev = TF_BACKEND_GPU;
        if (!formats) formats = "fcoo";
    }
    o.device = (tf_backend)dev;
    const int have_gpu = o.device != TF_BACKEND_CPU && tf_gpu_count() > 0; /* --device cpu loads no CUDA */
    if (!formats)
        formats = o.device == TF_BACKEND_CPU || (o.device == TF_BACKEND_AUTO && !have_gpu) ? "coo,csf,csf-short"
                                                                                          : "coo,fcoo,blco";
    if ((rc = parse_formats(formats, fmt, &nfmt))) return rc;

    /* the runs: every format in every precision */
    run_result res[MAX_RUNS];
    int nrun = 0;
    memset(res, 0, sizeof res);
    for (int p = 0; p < nprec; ++p)
        for (int i = 0; i < nfmt; ++i) {
            run_result *r = &res[nrun++];
            r->format = fmt[i];
            r->precision = prec[p];
            r->backend = resolve_backend(o.device, fmt[i], have_gpu);
            if (r->backend == TF_BACKEND_GPU) o.any_gpu = 1;
            else o.any_cpu = 1;
        }
    if (!o.any_cpu && !have_gpu) { /* nothing can run: say so before reading FILE */
        char why[1024];
        const tf_cuda_module_state st = tf_cuda_module(1, why, sizeof why);
        if (st == TF_CUDA_MODULE_LOADED) {
            snprintf(why, sizeof why, "no CUDA device is present");
        } else if (st != TF_CUDA_MODULE_NONE) {
            char m[sizeof why];
            snprintf(m, sizeof m, "%s", why);
            snprintf(why, sizeof why, "no CUDA backend: its module %.900s", m);
        }
        if (o.device == TF_BACKEND_GPU)
            fprintf(stderr, "tenfold: --device gpu: %s (coo, csf and csf-short run on the CPU with --device cpu)\n", why);
        else
            fprintf(stderr, "tenfold: --format %s: GPU formats, and %s (the CPU runs coo, csf and csf-short)\n", formats, why);
        return CLI_FAIL;
    }

    tf_tensor t;
    tf_read_info info;
    tf_matrix f[TF_MAX_ORDER];
    memset(f, 0, sizeof f);
    const cli_path paths[] = {{"the input", cli_generated(a.pos[0]) ? NULL : a.pos[0], 0, 0},
                              {"--json", o.json_path, 1, 0}};
    if ((rc = cli_paths_distinct(BENCH_CMD, paths, 2))) return rc;
    if ((rc = cli_outputs_check(&o.json_path, 1))) return rc; /* before reading */
    if ((rc = cli_load_base(BENCH_CMD, a.pos[0], o.threads, base, &t, &info))) return rc;
    if (!cli_quiet()) cli_print_problem(stdout, a.pos[0], &t, &info);
    if (cli_verbose()) cli_print_read(stdout, &info);
    if (random_factors(&t, o.rank, o.seed, f) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    /* one context for every run; its GPU (streams, handles) is made here,
     * so no plan's build time includes setting up the device */
    if ((rc = cli_run_context_ranks(o.any_gpu && have_gpu ? TF_BACKEND_GPU : TF_BACKEND_CPU, o.gpu, &o.gpus,
                                    o.threads, o.memory_limit, 0, "--gpu", &o.ctx)))
        goto done;
    uint64_t budget = 0;
    if (o.any_gpu && have_gpu && tf_context_memory_budget(o.ctx, &budget) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    print_setup(&o);
    printf("%-9s %-6s %5s %12s %12s %9s %9s %9s %6s\n", "format", "prec", "mode", "median ms", "min ms",
           "GFLOP/s", "GB", "GB/s", "frac");
    cli_flush_stdout();
    int failed = 0;
    for (int i = 0; i < nrun; ++i) {
        bench_run(&t, f, &o, &res[i]);
        print_result(&t, &res[i], o.h2d_bw);
        failed |= !res[i].ok;
    }
    rc = failed ? CLI_FAIL : CLI_OK;
    if (o.json_path && write_json(o.json_path, a.pos[0], &t, info.seconds, &o, res, nrun)) rc = CLI_FAIL;
done:
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&f[m]);
    tf_tensor_free(&t);
    tf_context_free(o.ctx);
    return rc;
}
