/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold tucker: sparse Tucker decomposition (HOOI) of a tensor file. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "checkpoint_args.h"
#include "commands.h"
#include "json.h"
#include "outfile.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

static const char help[] =
    "usage: tenfold tucker FILE|--gen SPEC -r R1,R2,...,RN [options]\n"
    "\n"
    "Sparse Tucker decomposition of the tensor in FILE by higher-order orthogonal\n"
    "iteration (HOOI; the Tensor Toolbox's and pyttb's tucker_als): X ~ G x_1 U_1\n"
    "... x_N U_N with U_n (I_n x R_n) of orthonormal columns and the dense core G\n"
    "(R_1 x ... x R_N). Per iteration and mode n: Y_(n) = X x_k U_k^T for every\n"
    "k != n (TTMc, over compressed-fibre trees, never the dense tensor), then U_n =\n"
    "the R_n leading left singular vectors of Y_(n); after the last mode G = U_n^T\n"
    "Y_(n) and fit = 1 - sqrt(| ||X||^2 - ||G||^2 |) / ||X|| (pyttb's). Prints the\n"
    "problem, one line per iteration (fit, delta fit, seconds), the final fit and a\n"
    "timing breakdown (TTMc, singular vectors, core).\n"
    "\n"
    "  -r, --rank R1,..,RN  the core's lengths, one per mode (1..I_n, and at most\n"
    "                       the product of the others), or one R for every mode;\n"
    "                       required unless --init STEM gives them\n"
    "  -i, --iters N        maximum number of iterations (default 50)\n"
    "      --tol T          stop when |delta fit| < T (default 1e-4)\n"
    "      --init random    the start: factors uniform in [0,1) from --seed (default;\n"
    "                       pyttb's 'random'); the first mode's is not needed\n"
    "      --init hosvd     the truncated HOSVD: U_n = the R_n leading left singular\n"
    "                       vectors of X_(n), computed sparsely (pyttb's 'nvecs';\n"
    "                       --init nvecs is the same); deterministic\n"
    "      --init STEM      start from STEM.mode1.mat ... STEM.modeN.mat (I_n x R_n\n"
    "                       each, as -o writes them; read through STEM.set when\n"
    "                       there is one); without -r the ranks are their column\n"
    "                       counts (a stem named random, hosvd or nvecs: ./hosvd)\n"
    "      --seed S         seed of the random start (default 20240601)\n"
    "  -o, --stem STEM      write the result as one set: STEM.mode<N>.mat (factor N,\n"
    "                       I_N rows of R_N values) and STEM.core.tensor (the core in\n"
    "                       the Tensor Toolbox / pyttb export_data 'tensor' format:\n"
    "                       'tensor', N, R_1 .. R_N, then the values one per line,\n"
    "                       mode 1 fastest), switched in one step through STEM.set\n"
    "                       as cpd's factor sets (see tenfold cpd --help); nothing\n"
    "                       is written without -o\n"
    "      --json REPORT    a machine-readable report (JSON; '-' is standard output),\n"
    "                       switched together with the set when there is one:\n"
    "                       result.fit, iterations[].fit, timing_seconds\n"
    "      --memory-limit SIZE  host memory the dense arrays may take (Y_(n), the\n"
    "                       Grams, the core; 8G, 512M, ...; default: half the\n"
    "                       physical memory): checked before any work, a run over\n"
    "                       it stops with one line naming the sizes\n"
    "      --device D       auto|cpu|gpu (default auto: the GPU where there is one,\n"
    "                       else the CPU; a problem the GPU cannot hold or lacks\n"
    "                       -- both sides of a Y_(n) above 4096 -- runs on the CPU\n"
    "                       with a note; gpu: there or an error). On the GPU: the\n"
    "                       TTMc by a segmented pass over the non-zeros sorted per\n"
    "                       mode, cuBLAS / cuSOLVER for the vectors, fp64; the\n"
    "                       device budget (90% of its free memory) bounds it too\n"
    "      --gpus G         several GPUs in this process: a count N (GPUs 0..N-1),\n"
    "                       all, or a list of GPU numbers (0,2; '3,' is GPU 3\n"
    "                       alone); per mode each GPU owns a range of the rows of\n"
    "                       Y_(n), cut by non-zeros, and the non-zeros of those\n"
    "                       rows; the Grams and the core are summed on the host\n"
    CLI_CHECKPOINT_HELP
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      CPU threads (default: all cores, or OMP_NUM_THREADS;\n"
    "                       MPI ranks that share a host's cores split them)\n"
    CLI_VERBOSITY_HELP
    "                       (-v: each iteration's TTMc / vectors / core seconds)\n"
    "  -h, --help           this help\n"
    "\n"
    "The leading vectors of Y_(n) (I_n x C, C the product of the other ranks):\n"
    "the Gram Y Y^T and LAPACK dsyevr when I_n <= C and I_n <= 4096; the Gram\n"
    "Y^T Y when C < I_n and C <= 4096; else a randomised range finder with\n"
    "subspace iteration. Each column's largest-magnitude entry is positive, so\n"
    "the same input and seed give the same result.\n"
    "\n"
    "Several processes (a build with MPI): `mpirun -np P tenfold tucker FILE ...`\n"
    "runs on the ranks' CPUs: each rank reads its part of the non-zeros (a .bin\n"
    "at its offsets, other inputs whole then cut) and computes their part of\n"
    "Y_(n) (every rank holds a Y_(n) of full size: --memory-limit is per rank);\n"
    "the parts are summed on rank 0 (MPI_Reduce), which computes the leading\n"
    "vectors and the core and sends them to every rank. The fits, factors and\n"
    "core are the single process's (to rounding); --init hosvd gathers the\n"
    "non-zeros on rank 0 for the start. Rank 0 alone prints and writes. The\n"
    "ranks first check that they agree (the command, the options\n"
    "but -t, -o, --json, --memory-limit, and the tensor), else all stop with one\n"
    "line. Not on MPI ranks yet: --device gpu, --gpus, --checkpoint/--resume,\n"
    "standard input.\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

static const char *const device_names[] = {"auto", "cpu", "gpu"};

/* Under mpirun with several ranks: failures every rank reaches alike (the
 * same files and options) are said by rank 0 alone (run_context.h). */
static int ranks_on, other_rank;

typedef struct tucker_run {
    const char *path, *base, *init, *stem, *json_path, *json_write_path;
    int nranks;
    uint64_t ranks[TF_MAX_ORDER];
    int init_kind;                   /* tf_tucker_init                     */
    tf_matrix init_f[TF_MAX_ORDER];  /* --init STEM's factors              */
    uint32_t init_n;
    tf_tucker_opts opts;
    tf_tensor t;
    tf_read_info info;
    tf_ttensor result;
    tf_tucker_report rep;
    tf_ktensor_out *set;
    cli_gpus gpus;
    tf_context *ctx;
    double t_write, wall;
    tf_checkpoint ckpt;              /* --checkpoint, --checkpoint-every, --resume */
} tucker_run;

static void run_free(tucker_run *r)
{
    tf_tensor_free(&r->t);
    tf_ttensor_free(&r->result);
    tf_tucker_report_free(&r->rep);
    for (uint32_t m = 0; m < TF_MAX_ORDER; ++m) tf_matrix_free(&r->init_f[m]);
    if (r->set) tf_ktensor_out_abort(r->set);
    r->set = NULL;
    tf_context_free(r->ctx);
    r->ctx = NULL;
}

static int parse(int argc, char **argv, tucker_run *r, cli_args *a)
{
    const char *rank = NULL, *iters = NULL, *tol = NULL, *seed = NULL, *threads = NULL, *device = NULL,
               *mem = NULL, *ckpt = NULL, *every = NULL, *resume = NULL, *gpus = NULL;
    const cli_opt opts[] = {{"rank", 'r', &rank, NULL},          {"iters", 'i', &iters, NULL},
                            {"tol", 0, &tol, NULL},              {"seed", 0, &seed, NULL},
                            {"threads", 't', &threads, NULL},    {"stem", 'o', &r->stem, NULL},
                            {"json", 0, &r->json_path, NULL},    {"init", 0, &r->init, NULL},
                            {"device", 0, &device, NULL},        {"memory-limit", 0, &mem, NULL},
                            {"base", 0, &r->base, NULL},         {"checkpoint", 0, &ckpt, NULL},
                            {"checkpoint-every", 0, &every, NULL}, {"resume", 0, &resume, NULL},
                            {"gpus", 0, &gpus, NULL},            CLI_VERBOSITY_OPTS,
                            CLI_GEN_OPT,                         {0}};
    int rc = cli_parse(a, "tucker", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    if ((rc = cli_checkpoint_parse("tucker", ckpt, every, resume, &r->ckpt))) return rc;
    if (resume && r->init)
        return cli_usage("tucker", "--resume: not with --init (the checkpoint is where the run goes on from)");
    if (ckpt && r->stem && !strcmp(ckpt, r->stem))
        return cli_usage("tucker", "--checkpoint %s: the same stem as the result (-o); give the checkpoints their "
                                   "own", ckpt);
    r->path = a->pos[0];
    tf_tucker_opts *o = &r->opts;
    r->init_kind = TF_TUCKER_INIT_RANDOM;
    if (r->init && (!strcmp(r->init, "hosvd") || !strcmp(r->init, "nvecs"))) {
        r->init_kind = TF_TUCKER_INIT_HOSVD;
        r->init = NULL;
    } else if (r->init && !strcmp(r->init, "random")) {
        r->init = NULL;
    } else if (r->init) {
        if (!*r->init || !strcmp(r->init, "-"))
            return cli_usage("tucker", "--init: expected random, hosvd or the stem of factor files (STEM.mode1.mat "
                                       "...), got '%s'", r->init);
        r->init_kind = TF_TUCKER_INIT_GIVEN;
    }
    if (!rank && !r->init) return cli_usage("tucker", "missing -r R1,R2,... (the core's lengths, one per mode)");
    int dev = 0;
    uint64_t max_iters = o->max_iters;
    if ((rank && (rc = cli_u64_list("tucker", "-r/--rank", rank, 1, UINT32_MAX, r->ranks, TF_MAX_ORDER, &r->nranks))) ||
        (rc = cli_u64("tucker", "-i/--iters", iters, 1, 1000000, &max_iters)) ||
        (rc = cli_double("tucker", "--tol", tol, 0.0, 1.0, &o->tol)) ||
        (rc = cli_u64("tucker", "--seed", seed, 0, UINT64_MAX, &o->seed)) ||
        (rc = cli_threads("tucker", threads, &o->threads)) ||
        (rc = cli_choice("tucker", "--device", device, device_names, 3, &dev)) ||
        (rc = cli_size("tucker", "--memory-limit", mem, &o->memory_limit)) ||
        (rc = cli_parse_gpus("tucker", gpus, &r->gpus)))
        return rc;
    if (mem && !o->memory_limit) return cli_usage("tucker", "--memory-limit: 0 is not a size");
    o->max_iters = (uint32_t)max_iters;
    o->backend = (tf_backend)dev;
    if (gpus && dev == TF_BACKEND_CPU) return cli_usage("tucker", "--gpus: not with --device cpu");
    if (r->stem && (!*r->stem || !strcmp(r->stem, "-")))
        return cli_usage("tucker", "-o %s: the result is several files, give a stem (--json - puts the report on "
                                   "standard output)", r->stem);
    return -1;
}

/* The paths of a set STEM (its factor files, core, manifest, lock) for cli_paths_distinct. */
static int set_paths(const char *stem, int output, char (*names)[4200], cli_path *p, int group)
{
    int n = 0;
    for (int m = 1; m <= TF_MAX_ORDER; ++m) snprintf(names[n++], sizeof names[0], "%s.mode%d.mat", stem, m);
    snprintf(names[n++], sizeof names[0], "%s.set", stem);
    if (output) {
        snprintf(names[n++], sizeof names[0], "%s.core.tensor", stem);
        snprintf(names[n++], sizeof names[0], "%s.lock", stem);
    }
    for (int i = 0; i < n; ++i) p[i] = (cli_path){output ? "the output set" : "the --init file", names[i], output, group};
    return n;
}

/* Before the input is read: no output is an input or another output, the
 * places can be written, the set's lock is held (a second run writing the
 * same STEM fails now, not after its work). */
static int check_outputs(tucker_run *r)
{
    enum { SET = TF_MAX_ORDER + 3 };
    char (*names)[4200] = malloc(2 * SET * sizeof *names);
    cli_path p[2 * SET + 2];
    if (!names) {
        fprintf(stderr, "tenfold: out of memory\n");
        return CLI_FAIL;
    }
    int n = 0;
    if (!cli_generated(r->path)) p[n++] = (cli_path){"the input", r->path, 0, 0};
    int same = 0; /* --init STEM -o STEM: the set replaced by its own switch */
    if (r->init && r->stem) {
        char a[4200], b[4200];
        tf_path_id ia, ib;
        snprintf(a, sizeof a, "%s.set", r->init);
        snprintf(b, sizeof b, "%s.set", r->stem);
        tf_path_id_get(a, 1, &ia);
        tf_path_id_get(b, 1, &ib);
        same = tf_path_id_same(&ia, &ib);
    }
    if (r->init) n += set_paths(r->init, 0, names, p + n, same);
    if (r->stem) n += set_paths(r->stem, 1, names + SET, p + n, 1);
    if (r->json_path) p[n++] = (cli_path){"--json", r->json_path, 1, 0};
    int rc = cli_paths_distinct("tucker", p, n);
    free(names);
    if (rc) return rc;
    const char *json[1] = {r->json_path};
    if ((rc = cli_outputs_check(json, 1))) return rc;
    r->json_write_path = json[0];
    if (r->stem && tf_ttensor_out_open(r->stem, &r->set) != TF_OK) return cli_fail();
    return CLI_OK;
}

/* "tenfold: --init STEM: ..." */
static int init_fail(const tucker_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int init_fail(const tucker_run *r, const char *fmt, ...)
{
    if (!other_rank) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "tenfold: --init %s: ", r->init);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    return ranks_on ? cli_alike(CLI_FAIL) : CLI_FAIL;
}

/* cli_usage for an error found after the read (every rank alike on ranks). */
static int usage_alike(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_alike(const char *fmt, ...)
{
    if (!other_rank) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "tenfold tucker: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\ntry 'tenfold tucker --help'\n");
        va_end(ap);
    }
    return ranks_on ? cli_alike(CLI_USAGE) : CLI_USAGE;
}

/* The ranks against the tensor (and the --init files against both). */
static int check_ranks(tucker_run *r)
{
    const uint32_t N = r->t.order;
    if (r->init) {
        if (r->init_n != N)
            return init_fail(r, "%u factor file%s for an order-%u tensor (expected %s.mode1.mat .. %s.mode%u.mat)",
                             r->init_n, cli_s(r->init_n), N, r->init, r->init, N);
        for (uint32_t m = 0; m < N; ++m) {
            if (r->init_f[m].rows != r->t.dims[m])
                return init_fail(r, "%s.mode%u.mat has %llu row%s, expected %llu (the length of mode %u)", r->init,
                                 m + 1, (unsigned long long)r->init_f[m].rows, cli_s(r->init_f[m].rows),
                                 (unsigned long long)r->t.dims[m], m + 1);
            if (!r->nranks) continue;
            const uint64_t want = r->nranks == 1 ? r->ranks[0] : r->ranks[m];
            if (r->init_f[m].cols != want)
                return init_fail(r, "%s.mode%u.mat has %llu column%s, expected %llu (-r)", r->init, m + 1,
                                 (unsigned long long)r->init_f[m].cols, cli_s(r->init_f[m].cols),
                                 (unsigned long long)want);
        }
        if (!r->nranks) {
            for (uint32_t m = 0; m < N; ++m) r->ranks[m] = r->init_f[m].cols;
            r->nranks = (int)N;
        }
        r->opts.init_factors = r->init_f;
    }
    if (r->nranks != 1 && (uint32_t)r->nranks != N)
        return usage_alike("-r: %d ranks given for a tensor of %u modes (expected %u, or one for every mode)",
                           r->nranks, N, N);
    for (uint32_t m = 0; m < N; ++m) {
        const uint64_t R = r->nranks == 1 ? r->ranks[0] : r->ranks[m];
        if (R > r->t.dims[m])
            return usage_alike("-r: the rank of mode %u is %llu, larger than the mode's length %llu (expected "
                               "1..%llu)", m + 1, (unsigned long long)R, (unsigned long long)r->t.dims[m],
                               (unsigned long long)r->t.dims[m]);
        r->opts.ranks[m] = R;
    }
    for (uint32_t m = 0; m < N; ++m) {
        uint64_t others = 1;
        for (uint32_t k = 0; k < N && others < r->opts.ranks[m]; ++k)
            if (k != m) others *= r->opts.ranks[k];
        if (r->opts.ranks[m] > others)
            return usage_alike("-r: the rank of mode %u is %llu, more than the product of the other ranks "
                               "(%llu): expected at most that", m + 1, (unsigned long long)r->opts.ranks[m],
                               (unsigned long long)others);
    }
    return CLI_OK;
}

static void on_iteration(const tf_tucker_iter *it, void *user)
{
    (void)user;
    if (cli_quiet()) return;
    printf("  its = %3u (%.3f s)  fit = %.6g  delta = %+.4e", it->iter, it->seconds, it->fit, it->dfit);
    if (cli_verbose()) printf("  [ttmc %.3f  vectors %.3f  core %.3f s]", it->t_ttmc, it->t_svd, it->t_core);
    printf("\n");
    cli_flush_stdout();
}

static const char *svd_name(tf_tucker_svd m)
{
    switch (m) {
    case TF_TUCKER_SVD_ROW_GRAM: return "gram-rows";
    case TF_TUCKER_SVD_COL_GRAM: return "gram-cols";
    case TF_TUCKER_SVD_SUBSPACE: return "subspace";
    default: return "auto";
    }
}

static void ranks_text(const tucker_run *r, const char *sep, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t m = 0; m < r->t.order && at < len; ++m)
        at += (size_t)snprintf(buf + at, len - at, "%s%llu", m ? sep : "", (unsigned long long)r->opts.ranks[m]);
}

static double ttmc_total(const tucker_run *r)
{
    double s = 0.0;
    for (uint32_t m = 0; m < r->t.order; ++m) s += r->rep.t_ttmc[m];
    return s;
}

static void print_summary(const tucker_run *r)
{
    const tf_tucker_report *p = &r->rep;
    const uint32_t N = r->t.order;
    char ranks[256], a[32], b[32];
    ranks_text(r, ", ", ranks, sizeof ranks);
    if (p->converged)
        printf("final fit: %.6g after %u iteration%s (converged: |delta fit| < --tol %.2g)\n", p->fit, p->iters,
               cli_s(p->iters), r->opts.tol);
    else
        printf("final fit: %.6g after %u iteration%s (stopped at the iteration limit, -i %u)\n", p->fit, p->iters,
               cli_s(p->iters), r->opts.max_iters);
    printf("  fit = 1 - ||X - M|| / ||X|| (M: the Tucker model of ranks (%s); 1 is exact, 0 no better than zeros)\n",
           ranks);
    printf("leading vectors:");
    for (uint32_t m = 0; m < N; ++m) printf("%s mode %u %s", m ? "," : "", m + 1, svd_name(p->svd_method[m]));
    printf("\nmemory: largest Y_(n) %s, dense arrays %s at most\n", cli_bytes(a, sizeof a, (double)p->y_bytes),
           cli_bytes(b, sizeof b, (double)p->work_bytes));
    printf("ran on: %s (%s)\n", tf_backend_name(p->backend), p->plan);
    if (p->note[0]) printf("note: %s\n", p->note);
    printf("timing (s): read %.3f  init %.3f  build %.3f  ttmc %.3f  vectors %.3f  core %.3f  tucker total %.3f"
           "  write %.3f  wall %.3f\n",
           r->info.seconds, p->t_init, p->t_build, ttmc_total(r), p->t_svd, p->t_core, p->t_total, r->t_write, r->wall);
    printf("ttmc per mode (s):");
    for (uint32_t m = 0; m < N; ++m) printf(" %u: %.3f", m + 1, p->t_ttmc[m]);
    printf("\n");
}

static int write_json(tucker_run *r)
{
    if (!r->json_path) return CLI_OK;
    const char *path = r->json_write_path ? r->json_write_path : r->json_path;
    cli_outfile out;
    if (cli_out_open(&out, path)) return CLI_FAIL;
    const tf_tucker_report *p = &r->rep;
    const uint32_t N = r->t.order;
    cli_json j;
    json_open(&j, out.f);
    json_str(&j, "tenfold", tf_version());
    json_u64(&j, "schema", CLI_JSON_SCHEMA);
    json_str(&j, "command", "tucker");
    cli_json_input(&j, r->path, &r->t, &r->info);
    json_object(&j, "options");
    json_array(&j, "ranks");
    for (uint32_t m = 0; m < N; ++m) json_u64(&j, NULL, r->opts.ranks[m]);
    json_end(&j);
    json_u64(&j, "max_iters", r->opts.max_iters);
    json_num(&j, "tol", r->opts.tol);
    json_u64(&j, "seed", r->opts.seed);
    json_str(&j, "init", r->init ? r->init : r->init_kind == TF_TUCKER_INIT_HOSVD ? "hosvd" : "random");
    json_u64(&j, "threads", (uint64_t)(r->opts.threads ? r->opts.threads : tf_default_threads()));
    json_u64(&j, "memory_limit", r->opts.memory_limit);
    json_str(&j, "device", tf_backend_name(p->backend));
    json_end(&j);
    if (p->note[0]) json_str(&j, "note", p->note);
    json_array(&j, "iterations");
    for (uint32_t i = 0; i < p->iters; ++i) {
        const tf_tucker_iter *it = &p->iterations[i];
        json_object(&j, NULL);
        json_u64(&j, "iter", it->iter);
        json_num(&j, "fit", it->fit);
        json_num(&j, "delta_fit", it->dfit);
        json_num(&j, "seconds", it->seconds);
        json_num(&j, "ttmc_seconds", it->t_ttmc);
        json_num(&j, "vectors_seconds", it->t_svd);
        json_num(&j, "core_seconds", it->t_core);
        json_end(&j);
    }
    json_end(&j);
    json_object(&j, "result");
    json_num(&j, "fit", p->fit);
    json_u64(&j, "iterations", p->iters);
    json_bool(&j, "converged", p->converged);
    json_num(&j, "norm_x", p->norm_x);
    json_array(&j, "leading_vectors");
    for (uint32_t m = 0; m < N; ++m) json_str(&j, NULL, svd_name(p->svd_method[m]));
    json_end(&j);
    json_str(&j, "plan", p->plan);
    json_u64(&j, "y_bytes", p->y_bytes);
    json_u64(&j, "dense_bytes", p->work_bytes);
    json_end(&j);
    json_object(&j, "timing_seconds");
    json_num(&j, "read", r->info.seconds);
    json_num(&j, "init", p->t_init);
    json_num(&j, "build", p->t_build);
    json_array(&j, "ttmc_per_mode");
    for (uint32_t m = 0; m < N; ++m) json_num(&j, NULL, p->t_ttmc[m]);
    json_end(&j);
    json_num(&j, "ttmc", ttmc_total(r));
    json_num(&j, "vectors", p->t_svd);
    json_num(&j, "core", p->t_core);
    json_num(&j, "tucker_total", p->t_total);
    json_num(&j, "write", r->t_write);
    json_num(&j, "wall", r->wall);
    json_end(&j);
    json_array(&j, "outputs");
    if (r->set) {
        char f[4200];
        for (uint32_t m = 0; m < N; ++m) {
            snprintf(f, sizeof f, "%s.mode%u.mat", r->stem, m + 1);
            json_str(&j, NULL, f);
        }
        snprintf(f, sizeof f, "%s.core.tensor", r->stem);
        json_str(&j, NULL, f);
    }
    json_end(&j);
    json_close(&j);
    if (!r->set) return cli_out_commit(&out);
    /* switched with the set: a report that cannot be written stops the run before the switch */
    int rc = cli_out_close(&out);
    if (rc == CLI_OK && tf_ktensor_out_add(r->set, path, out.buf, out.len) != TF_OK) rc = cli_fail();
    cli_out_abort(&out);
    return rc;
}

/* What the ranks must agree on (cli_agree_begin): the options that shape
 * the result; not -t, -o, --json or --memory-limit, which may differ between
 * nodes or matter on rank 0 alone. */
static void agree_record(tf_agree *a, const tucker_run *r, int parse_rc)
{
    cli_agree_begin(a, "tucker", parse_rc, r->path);
    if (parse_rc >= 0) return;
    const tf_tucker_opts *o = &r->opts;
    char ranks[TF_MAX_ORDER * 24] = "";
    size_t at = 0;
    for (int m = 0; m < r->nranks && at < sizeof ranks; ++m)
        at += (size_t)snprintf(ranks + at, sizeof ranks - at, "%s%llu", m ? "," : "", (unsigned long long)r->ranks[m]);
    cli_agree_str(a, "-r/--rank", ranks);
    cli_agree_u64(a, "-i/--iters", o->max_iters);
    cli_agree_double(a, "--tol", o->tol);
    cli_agree_u64(a, "--seed", o->seed);
    cli_agree_str(a, "--init", r->init ? r->init : r->init_kind == TF_TUCKER_INIT_HOSVD ? "hosvd" : "random");
    cli_agree_str(a, "--device", device_names[o->backend]);
    cli_agree_str(a, "--base", r->base ? r->base : "auto");
    cli_agree_gpus(a, &r->gpus);
    cli_agree_str(a, "--checkpoint", r->ckpt.path);
    cli_agree_str(a, "--resume", r->ckpt.resume);
}

static int tucker_ranks(int argc, char **argv, int rank, int size, double t_start);

/* Under mpirun with several ranks: every rank reads its part of the
 * non-zeros and computes their part of each Y_(n); rank 0 alone prints and
 * writes. A failure on one rank ends them all (the others would wait in a
 * collective). */
int cmd_tucker(int argc, char **argv)
{
    const double t_start = tf_wtime();
    int rank = 0, size = 1;
    int rc = cli_ranks_start(&argc, &argv, &rank, &size);
    if (rc) return rc;
    return cli_ranks_end(tucker_ranks(argc, argv, rank, size, t_start), size);
}

/* Before any read on ranks: what they cannot run yet, refused on every rank alike. */
static int ranks_refuse(const tucker_run *r, int size)
{
    if (!strcmp(r->path, "-"))
        return cli_fail_all("tucker: reading standard input ('-') is not possible on MPI ranks: ranks 1..%d get none "
                            "(mpirun passes it to rank 0 alone); convert it to a file first (tenfold convert - "
                            "FILE.bin)", size - 1);
    if (r->gpus.n || r->gpus.all)
        return cli_fail_all("tucker: --gpus is not available on %d MPI ranks (several GPUs run in one process)", size);
    if (r->opts.backend == TF_BACKEND_GPU)
        return cli_fail_all("tucker: not available on GPUs of MPI ranks yet (--device cpu: the ranks' CPUs; or the "
                            "GPUs of one process, --gpus)");
    if (r->ckpt.path || r->ckpt.resume)
        return cli_fail_all("tucker: --checkpoint and --resume are not available on MPI ranks yet (one process "
                            "writes them)");
    return CLI_OK;
}

/* The input, this rank's part of it on several ranks: the ranks agree on
 * how their reads went before any says it, so a file that fails to read
 * (on every rank, or on some) stops every rank with one line (rank 0's)
 * and no rank waits. */
static int load_ranks(tucker_run *r, int rank, int size)
{
    if (size < 2) return cli_load_base("tucker", r->path, r->opts.threads, r->base, &r->t, &r->info);
    cli_hold_failures(1);
    const int rc = cli_load_part("tucker", r->path, r->opts.threads, r->base, (uint64_t)rank, (uint64_t)size, &r->t,
                                 &r->info);
    cli_hold_failures(0);
    char what[512];
    snprintf(what, sizeof what, "%s", rc ? tf_last_error() : "ok");
    tf_agree ag;
    memset(&ag, 0, sizeof ag);
    tf_agree_add(&ag, "read", what);
    if (cli_ranks_agree(&ag, size)) return CLI_FAIL; /* "ranks disagree: rank R has read ..." */
    return rc ? cli_fail_all("%s", what) : CLI_OK;
}

static int tucker_ranks(int argc, char **argv, int rank, int size, double t_start)
{
    tucker_run r;
    memset(&r, 0, sizeof r);
    tf_tucker_opts_default(&r.opts);
    cli_args a;
    int rc = parse(argc, argv, &r, &a);
    if (size > 1) { /* first of all: the same command and options everywhere */
        tf_agree ag;
        agree_record(&ag, &r, rc);
        const int arc = cli_ranks_agree(&ag, size);
        if (arc) {
            run_free(&r);
            return arc;
        }
        if (rc >= 0) return cli_alike(rc); /* --help or a usage error on every rank */
    }
    if (rc >= 0) return rc;
    if (size > 1) { /* from here on every rank has the same options: a failure of them is every rank's */
        if ((rc = ranks_refuse(&r, size))) {
            run_free(&r);
            return rc;
        }
        ranks_on = 1;
        r.opts.backend = TF_BACKEND_CPU;
        if (rank != 0) { /* rank 0 alone prints and writes */
            other_rank = 1;
            cli_verbosity = CLI_QUIET;
            r.stem = NULL;
            r.json_path = NULL;
        }
    }
    if ((rc = cli_gpu_precheck(r.opts.backend, 0, &r.gpus, "--device"))) return rc; /* costs no read */
    if ((rc = check_outputs(&r))) goto done;
    if (r.init && tf_factor_files_read(r.init, r.init_f, &r.init_n) != TF_OK) { /* before the tensor */
        rc = init_fail(&r, "%s", tf_last_error());
        goto done;
    }
    /* several ranks: each reads its part of the non-zeros (tf_tucker_opts.distributed_input) */
    if ((rc = load_ranks(&r, rank, size))) goto done;
    /* before any collective of the computation: the same tensor on every rank */
    if ((rc = cli_ranks_agree_input(&r.t, &r.info, r.opts.threads, size))) goto done;
    r.opts.distributed_input = size > 1;
    if ((rc = check_ranks(&r))) goto done;
    r.opts.init = (tf_tucker_init)r.init_kind;
    if ((size > 1 || r.opts.backend != TF_BACKEND_CPU) &&
        (rc = cli_run_context_ranks(r.opts.backend, 0, &r.gpus, r.opts.threads, 0, size > 1, "--device", &r.ctx)))
        goto done;
    r.opts.context = r.ctx;
    char each[64] = ""; /* every rank's team (tucker runs on CPU ranks) */
    if ((rc = cli_rank_threads(r.opts.threads, rank, size, each, sizeof each))) goto done;
    if (!cli_quiet()) {
        cli_print_problem(stdout, r.path, &r.t, &r.info);
        cli_print_fixes(stdout, &r.t, &r.info);
    }
    if (cli_verbose()) cli_print_read(stdout, &r.info);
    if (!cli_quiet()) {
        char ranks[256], start[4300];
        ranks_text(&r, " x ", ranks, sizeof ranks);
        if (r.init) snprintf(start, sizeof start, "start %s.mode{1..%u}.mat", r.init, r.t.order);
        else if (r.init_kind == TF_TUCKER_INIT_HOSVD) snprintf(start, sizeof start, "start hosvd");
        else snprintf(start, sizeof start, "seed %llu", (unsigned long long)r.opts.seed);
        char nthreads[128];
        cli_threads_text(r.opts.threads, nthreads, sizeof nthreads);
        printf("tucker: ranks %s, max %u iteration%s, tol %g, %s, %s\n", ranks, r.opts.max_iters,
               cli_s(r.opts.max_iters), r.opts.tol, start, nthreads);
        if (size > 1) printf("MPI ranks: %d, the CPU backend on each%s\n", size, each);
        cli_flush_stdout();
    }
    if (r.ckpt.path || r.ckpt.resume) {
        r.opts.checkpoint = &r.ckpt;
        char line[4400];
        cli_checkpoint_describe(&r.ckpt, line, sizeof line);
        if (!cli_quiet()) printf("checkpoints: %s\n", line);
    }
    r.opts.callback = on_iteration;
    if (tf_tucker(&r.t, &r.opts, &r.result, &r.rep) != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if (r.set) {
        const double t0 = tf_wtime();
        if (tf_ttensor_out_put(r.set, &r.result) != TF_OK) {
            rc = cli_fail();
            goto done;
        }
        r.t_write = tf_wtime() - t0;
    }
    r.wall = tf_wtime() - t_start;
    if ((rc = write_json(&r))) goto done; /* before the switch: its failure keeps the old set */
    if (r.set) {
        tf_ktensor_out *set = r.set;
        r.set = NULL;
        if (tf_ktensor_out_commit(set) != TF_OK) {
            rc = cli_fail();
            goto done;
        }
        if (!cli_quiet())
            printf("wrote: %s.mode{1..%u}.mat, %s.core.tensor (one set: %s.set)\n", r.stem, r.t.order, r.stem, r.stem);
    }
    if (!cli_quiet()) print_summary(&r);
    if (r.json_path && !cli_quiet()) printf("wrote: %s (report)\n", r.json_path);
done:
    run_free(&r);
    return rc;
}
