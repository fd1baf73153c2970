/* tenfold bench mttkrp: per-mode MTTKRP time, GFLOP/s and bytes moved of
 * each plan format, on a tensor file and random factors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "json.h"
#include "outfile.h"
#include "report.h"

#define BENCH_CMD "bench mttkrp"
#define MAX_FORMATS 8

static const char help[] =
    "usage: tenfold bench mttkrp FILE [options]\n"
    "\n"
    "Times the MTTKRP of every mode with each plan format, on the tensor in FILE\n"
    "and random factors: plan build time and memory, then per mode one warm-up\n"
    "run and N timed runs, of which the median is reported.\n"
    "\n"
    "      --format LIST    comma-separated formats (default coo,csf)\n"
    "  -r, --rank R         factor columns (default 16)\n"
    "  -t, --threads N      threads (default: all cores)\n"
    "      --reps N         timed runs per mode (default 20)\n"
    "      --warmup N       untimed runs per mode first (default 1)\n"
    "      --seed S         seed of the random factors (default 1)\n"
    "      --json OUT       also write the results as JSON to OUT\n"
    "  -h, --help           this help\n"
    "\n"
    "Models (per mode m, order N, nnz non-zeros, rank R):\n"
    "  flops = nnz * R * N: per non-zero and column, N-1 multiplications (value\n"
    "          times the N-1 factor rows) and one addition.\n"
    "  bytes = nnz * (4N + 8)          indices and values, streamed once\n"
    "        + nnz * (N-1) * R * 8     one factor row per non-zero and other mode\n"
    "        + dims[m] * R * 8         the output, written once\n"
    "  GFLOP/s and GB/s divide these by the median time. Formats that compress\n"
    "  fibres read fewer factor rows than the model counts.\n";

typedef struct mode_result {
    double median_ms, min_ms;
    double gflop, gbytes;  /* the models' amounts, in 1e9 */
    double gflops, gbps;   /* divided by the median time */
} mode_result;

typedef struct format_result {
    tf_format format;
    int ok;
    char plan[96];
    char error[256];
    double build_s;
    uint64_t bytes;
    mode_result mode[TF_MAX_ORDER];
    double total_ms;
} format_result;

typedef struct bench_opts {
    uint64_t rank, seed;
    int threads, reps, warmup;
    const char *json_path;
} bench_opts;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

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

/* The flop and byte models of the help text, and their rates at `secs`. */
static void model(const tf_tensor *t, uint32_t m, uint64_t R, double secs, mode_result *r)
{
    const double nnz = (double)t->nnz, N = t->order, rank = (double)R;
    r->gflop = nnz * rank * N / 1e9;
    r->gbytes = (nnz * (4.0 * N + 8.0) + nnz * (N - 1) * rank * 8.0 + (double)t->dims[m] * rank * 8.0) / 1e9;
    r->gflops = secs > 0 ? r->gflop / secs : 0;
    r->gbps = secs > 0 ? r->gbytes / secs : 0;
}

/* Builds a plan of one format and times every mode; failures are recorded
 * in res (the other formats still run). */
static void bench_format(const tf_tensor *t, const tf_matrix *f, const bench_opts *o, format_result *res)
{
    tf_plan_opts po;
    tf_plan_opts_default(&po);
    po.format = res->format;
    po.threads = o->threads;
    po.rank_hint = o->rank;
    tf_plan *p = NULL;
    tf_matrix out = {0};
    double *times = calloc((size_t)o->reps, sizeof *times);
    double t0 = tf_wtime();
    tf_status s = times ? tf_plan_build(t, &po, &p) : TF_ERR_NOMEM;
    res->build_s = tf_wtime() - t0;
    if (s == TF_OK) {
        snprintf(res->plan, sizeof res->plan, "%s", tf_plan_describe(p));
        res->bytes = tf_plan_bytes(p);
    }
    for (uint32_t m = 0; s == TF_OK && m < t->order; ++m) {
        s = tf_matrix_alloc(&out, t->dims[m], o->rank);
        if (s == TF_OK) s = tf_plan_time_mttkrp(p, m, f, &out, o->warmup, o->reps, times);
        tf_matrix_free(&out);
        if (s != TF_OK) break;
        qsort(times, (size_t)o->reps, sizeof *times, cmp_double);
        mode_result *r = &res->mode[m];
        r->min_ms = times[0];
        r->median_ms = o->reps % 2 ? times[o->reps / 2] : 0.5 * (times[o->reps / 2 - 1] + times[o->reps / 2]);
        model(t, m, o->rank, r->median_ms / 1e3, r);
        res->total_ms += r->median_ms;
    }
    res->ok = s == TF_OK;
    if (!res->ok)
        snprintf(res->error, sizeof res->error, "%s", times ? tf_last_error() : "out of memory");
    tf_plan_free(p);
    free(times);
}

static void print_result(const tf_tensor *t, const format_result *r)
{
    const char *name = tf_format_name(r->format);
    if (!r->ok) {
        fprintf(stderr, "tenfold: %s: %s\n", name, r->error);
        return;
    }
    char mem[32];
    printf("%-6s build %.3f s, %s (%s)\n", name, r->build_s, cli_bytes(mem, sizeof mem, (double)r->bytes),
           r->plan);
    for (uint32_t m = 0; m < t->order; ++m) {
        const mode_result *x = &r->mode[m];
        printf("%-6s %4u %12.3f %12.3f %9.2f %9.3f %9.2f\n", name, m + 1, x->median_ms, x->min_ms,
               x->gflops, x->gbytes, x->gbps);
    }
    double flops = 0, bytes = 0;
    for (uint32_t m = 0; m < t->order; ++m) {
        flops += r->mode[m].gflop;
        bytes += r->mode[m].gbytes;
    }
    const double secs = r->total_ms / 1e3;
    printf("%-6s %4s %12.3f %12s %9.2f %9.3f %9.2f\n", name, "all", r->total_ms, "",
           secs > 0 ? flops / secs : 0, bytes, secs > 0 ? bytes / secs : 0);
}

static int write_json(const char *path, const char *file, const tf_tensor *t, double read_s,
                      const bench_opts *o, const format_result *res, int n)
{
    cli_outfile out;
    if (cli_out_open(&out, path)) return CLI_FAIL;
    cli_json j;
    json_open(&j, out.f);
    json_str(&j, "tenfold", TF_VERSION_STRING);
    json_str(&j, "command", BENCH_CMD);
    json_object(&j, "input");
    json_str(&j, "path", file);
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
    json_u64(&j, "warmup", (uint64_t)o->warmup);
    json_u64(&j, "seed", o->seed);
    json_end(&j);
    json_object(&j, "models");
    json_str(&j, "flops", "nnz * R * order");
    json_str(&j, "bytes", "nnz * (4 * order + 8) + nnz * (order - 1) * R * 8 + dims[mode] * R * 8");
    json_end(&j);
    json_array(&j, "formats");
    for (int i = 0; i < n; ++i) {
        const format_result *r = &res[i];
        json_object(&j, NULL);
        json_str(&j, "format", tf_format_name(r->format));
        json_bool(&j, "ok", r->ok);
        if (!r->ok) {
            json_str(&j, "error", r->error);
            json_end(&j);
            continue;
        }
        json_str(&j, "plan", r->plan);
        json_num(&j, "build_seconds", r->build_s);
        json_u64(&j, "bytes", r->bytes);
        json_array(&j, "modes");
        for (uint32_t m = 0; m < t->order; ++m) {
            const mode_result *x = &r->mode[m];
            json_object(&j, NULL);
            json_u64(&j, "mode", m + 1);
            json_num(&j, "median_ms", x->median_ms);
            json_num(&j, "min_ms", x->min_ms);
            json_num(&j, "gflops", x->gflops);
            json_num(&j, "gbytes", x->gbytes);
            json_num(&j, "gbytes_per_s", x->gbps);
            json_end(&j);
        }
        json_end(&j);
        json_num(&j, "all_modes_ms", r->total_ms);
        json_end(&j);
    }
    json_end(&j);
    json_close(&j);
    if (cli_out_commit(&out)) return CLI_FAIL;
    printf("wrote: %s (report)\n", path);
    return CLI_OK;
}

/* Parses the --format list into res[].format. */
static int parse_formats(const char *list, format_result *res, int *n)
{
    char *buf = NULL;
    const char *piece[MAX_FORMATS];
    int rc = cli_split(BENCH_CMD, "--format", list, &buf, piece, MAX_FORMATS, n);
    for (int i = 0; rc == CLI_OK && i < *n; ++i) {
        int f = tf_format_parse(piece[i]);
        if (f < 0) rc = cli_usage(BENCH_CMD, "--format: unknown format '%s' (formats: coo, csf, fcoo, blco, amped, auto)",
                                  piece[i]);
        else res[i].format = (tf_format)f;
    }
    free(buf);
    return rc;
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

    const char *formats = "coo,csf", *rank = NULL, *threads = NULL, *reps = NULL, *warmup = NULL,
               *seed = NULL, *json = NULL;
    const cli_opt opts[] = {{"format", 0, &formats, NULL}, {"rank", 'r', &rank, NULL},
                            {"threads", 't', &threads, NULL}, {"reps", 0, &reps, NULL},
                            {"warmup", 0, &warmup, NULL}, {"seed", 0, &seed, NULL},
                            {"json", 0, &json, NULL}, {0}};
    cli_args a;
    int rc = cli_parse(&a, BENCH_CMD, help, argc - 1, argv + 1, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    bench_opts o = {.rank = 16, .seed = 1, .reps = 20, .warmup = 1, .json_path = json};
    format_result res[MAX_FORMATS];
    int nfmt = 0;
    memset(res, 0, sizeof res);
    if ((rc = cli_u64(BENCH_CMD, "-r/--rank", rank, 1, 1u << 20, &o.rank)) ||
        (rc = cli_threads(BENCH_CMD, threads, &o.threads)) ||
        (rc = cli_int(BENCH_CMD, "--reps", reps, 1, 1000000, &o.reps)) ||
        (rc = cli_int(BENCH_CMD, "--warmup", warmup, 0, 1000000, &o.warmup)) ||
        (rc = cli_u64(BENCH_CMD, "--seed", seed, 0, UINT64_MAX, &o.seed)) ||
        (rc = parse_formats(formats, res, &nfmt)))
        return rc;

    tf_tensor t;
    tf_read_info info;
    tf_matrix f[TF_MAX_ORDER];
    memset(f, 0, sizeof f);
    if ((rc = cli_load(a.pos[0], o.threads, &t, &info))) return rc;
    cli_print_problem(stdout, a.pos[0], &t, &info);
    if (random_factors(&t, o.rank, o.seed, f) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    printf("bench:  rank %llu, %d warm-up + %d timed runs per mode, seed %llu\n",
           (unsigned long long)o.rank, o.warmup, o.reps, (unsigned long long)o.seed);
    printf("%-6s %4s %12s %12s %9s %9s %9s\n", "format", "mode", "median ms", "min ms", "GFLOP/s",
           "GB", "GB/s");
    int failed = 0;
    for (int i = 0; i < nfmt; ++i) {
        bench_format(&t, f, &o, &res[i]);
        print_result(&t, &res[i]);
        failed |= !res[i].ok;
    }
    rc = failed ? CLI_FAIL : CLI_OK;
    if (o.json_path && write_json(o.json_path, a.pos[0], &t, info.seconds, &o, res, nfmt)) rc = CLI_FAIL;
done:
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&f[m]);
    tf_tensor_free(&t);
    return rc;
}
