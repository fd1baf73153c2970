/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold cpd: CP decomposition of a sparse tensor file (CP-ALS; AO-ADMM
 * or HALS with --nonneg / --l1 / --l2; CP-APR with --method apr, cpd_apr.c;
 * GCP with --method gcp, cpd_gcp.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "checkpoint_args.h"
#include "commands.h"
#include "cpd_output.h"
#include "progress.h"
#include "report.h"
#include "run_context.h"
#include "verbosity.h"

/* Set to 1 when the GPU CP-ALS backend lands: --device auto then hands the
 * choice to the library instead of falling back to the CPU here. */

static const char help[] =
    "usage: tenfold cpd FILE|--gen SPEC -r R [options]\n"
    "\n"
    "CP decomposition of the sparse tensor in FILE (CP-ALS; CP-APR with --method\n"
    "apr; GCP with --method gcp) (.tns FROSTT text with or\n"
    "without the ParTI header, Tensor Toolbox sptensor, tenfold .bin, Matrix\n"
    "Market .mtx; .xz and .gz are read directly). Prints the problem, one line\n"
    "per iteration (fit, delta fit, seconds), the final fit and a timing\n"
    "breakdown, and writes the factors.\n"
    "\n"
    "  -r, --rank R         rank of the decomposition, 1..16384 (required unless\n"
    "                       --init gives it)\n"
    "      --method M       als (default): CP-ALS, least squares (AO-ADMM with the\n"
    "                       constraints below); apr: CP-APR, the Poisson model of\n"
    "                       count data (Chi & Kolda 2012) by multiplicative updates,\n"
    "                       as pyttb's cp_apr(algorithm='mu'): the values must be\n"
    "                       counts (integers >= 0), the factors are non-negative with\n"
    "                       columns of unit 1-norm; one line per outer iteration with\n"
    "                       the log-likelihood (sum of x log m - sum of m; higher is\n"
    "                       better) and the KKT violation, which ends the run when\n"
    "                       every mode's is below --tol at its first inner\n"
    "                       iteration. With apr, -i is the outer iterations (default\n"
    "                       1000) and --tol the KKT tolerance (default 1e-4); on one\n"
    "                       GPU (fp64; auto where one is present), several (--gpus)\n"
    "                       or the CPU, also on MPI ranks (CPU or GPU); one GPU\n"
    "                       streams the copies of the non-zeros from host memory when\n"
    "                       they do not fit it\n"
    "                       gcp: Generalized CP (Kolda & Hong 2020) under --loss,\n"
    "                       by Adam on stratified (or --sampling semi-stratified)\n"
    "                       samples of the entries (GenTen's\n"
    "                       gcp-sgd: every iteration a fresh sample of non-zeros and\n"
    "                       zeros, weighted; epochs of --epoch-iters iterations; an\n"
    "                       epoch whose loss estimate (a fixed sample's) rises is\n"
    "                       undone and the rate decays); one line per epoch with\n"
    "                       the estimate. On one GPU (fp64, the CPU's samples; auto\n"
    "                       where one is present), several (--gpus: each GPU holds\n"
    "                       the whole tensor and takes its part of every sample)\n"
    "                       or the CPU, also on MPI ranks (CPU or GPU; the same\n"
    "                       samples and results as one process or one GPU);\n"
    "                       --dense-loss on the CPU only\n"
    "      --loss L         gcp: gaussian, poisson (m - x log m, factors >= 0),\n"
    "                       poisson-log (e^m - x m), bernoulli-odds (= bernoulli,\n"
    "                       log(m+1) - x log m, >= 0), bernoulli-logit\n"
    "                       (log(1+e^m) - x m), gamma, rayleigh (>= 0): pyttb's\n"
    "                       gcp_opt definitions (docs/USAGE.md)\n"
    "      --samples NZ,Z   gcp: gradient samples per iteration (default GenTen's:\n"
    "                       max(3 nnz / epochs, 1000) non-zeros, as many zeros)\n"
    "      --sampling S     gcp: the gradient samples' zeros: stratified (default:\n"
    "                       uniform coordinates that are not non-zeros, a hit drawn\n"
    "                       again) or semi-stratified (uniform over every entry, no\n"
    "                       probe; the non-zero samples count f(x,m) - f(0,m):\n"
    "                       unbiased, Kolda & Hong 2020; GenTen's); Z defaults to NZ\n"
    "      --fsamples NZ,Z  gcp: the loss estimate's fixed sample (default\n"
    "                       max(nnz / 100, 100000) non-zeros, as many zeros)\n"
    "      --epoch-iters N  gcp: iterations per epoch (default 1000)\n"
    "      --epochs N       gcp: epochs at most (default 100; --dense-loss: its\n"
    "                       iterations, default 1000)\n"
    "      --rate R         gcp: Adam's step size (default 0.001)\n"
    "      --decay D        gcp: the rate's factor after a failed epoch (0.1)\n"
    "      --fails N        gcp: stop after more than N failed epochs (default 1)\n"
    "                       gcp with --checkpoint: a checkpoint after epochs (the\n"
    "                       factors, Adam's moments, rate and sample counter);\n"
    "                       --resume goes on to --epochs in all (not --dense-loss)\n"
    "      --dense-loss     gcp: the exact loss over every entry (at most 2^26),\n"
    "                       minimised by L-BFGS: to check against pyttb's gcp_opt\n"
    "      --inner N        apr: multiplicative updates per mode and outer iteration\n"
    "                       at most (default 10)\n"
    "      --kappa K        apr: the offset that moves a factor entry off zero where\n"
    "                       it is below 1e-10 while its gradient says it should grow\n"
    "                       (default 0.01; 0: never; mu only)\n"
    "      --apr-algorithm A  apr: mu (multiplicative updates, the default) or pdnr\n"
    "                       (row-wise projected Newton steps, pyttb's 'pdnr':\n"
    "                       far fewer outer iterations; the CPU only yet; --inner\n"
    "                       is then Newton steps per row; no --kappa, no\n"
    "                       checkpoints)\n"
    "  -i, --iters N        maximum number of iterations (default 50)\n"
    "      --tol T          stop when |delta fit| < T (default 1e-5)\n"
    "      --seed S         seed of the random initial factors (default 20240601;\n"
    "                       the same seed prints the same fits)\n"
    "      --init random    the start: random factors from --seed (the default)\n"
    "      --init nvecs     factors 2..N start as the R leading left singular\n"
    "                       vectors of the mode-n unfoldings (the Tensor Toolbox's\n"
    "                       and pyttb's 'nvecs', tensorly's 'svd'; --init svd is\n"
    "                       the same), computed sparsely; deterministic (no seed).\n"
    "                       Factor 1 is not needed: CP-ALS solves for it first.\n"
    "                       Columns past a mode's length are the random start's.\n"
    "                       Not on MPI ranks yet\n"
    "                       Not with --method apr (negative entries)\n"
    "      --init STEM      start from STEM.mode1.mat ... STEM.modeN.mat (one per\n"
    "                       mode: its length x R, as -o writes them) and, if it is\n"
    "                       there, STEM.lambda.mat (folded into the first factor)\n"
    "                       instead of random factors: --init of a run's -o STEM\n"
    "                       continues that run; R is the files' column count. Read\n"
    "                       through STEM.set when there is one (the set whole);\n"
    "                       -o STEM too replaces that set by its own switch\n"
    "                       (a stem named random, nvecs or svd: --init ./nvecs)\n"
    "      --nonneg [MODES] non-negative factors: all of them, or those of the\n"
    "                       1-based MODES (--nonneg 1,3; a value after --nonneg\n"
    "                       is taken as MODES when it starts with a digit). Runs\n"
    "                       HALS or AO-ADMM instead of ALS (--nonneg-method); every\n"
    "                       entry of those factors is >= 0\n"
    "      --l1 LAMBDA[@MODES]  sparse factors: LAMBDA ||A||_1 added to the\n"
    "                       squared error for every mode, or the MODES after @\n"
    "                       (--l1 0.1@2); larger LAMBDA, more zeros\n"
    "      --l2 LAMBDA[@MODES]  ridge: LAMBDA/2 ||A||_F^2 (alone it is a\n"
    "                       closed-form solve per mode)\n"
    "      --nonneg-method M  how the constraints are imposed: admm (AO-ADMM,\n"
    "                       Huang et al. 2016, SPLATT's: per mode a few ADMM\n"
    "                       iterations on one Cholesky factor; any combination),\n"
    "                       hals (HALS, Cichocki & Phan 2009, tensorly's\n"
    "                       non_negative_parafac_hals: per mode a few sweeps over\n"
    "                       the columns, each solved exactly; --l1 only on --nonneg\n"
    "                       modes) or auto (the default: HALS for non-negativity\n"
    "                       alone, AO-ADMM with --l1 / --l2; the update: line and\n"
    "                       the report say which ran and why). --admm-inner /\n"
    "                       --admm-tol imply admm, --hals-inner / --hals-tol hals\n"
    "      --admm-inner N   AO-ADMM: ADMM iterations per mode update at most\n"
    "                       (default 25)\n"
    "      --admm-tol T     AO-ADMM: stop them when the primal and dual residuals,\n"
    "                       relative to the factor and the dual, are <= T (default\n"
    "                       0.01)\n"
    "      --hals-inner N   HALS: column sweeps per mode update at most (default 5)\n"
    "      --hals-tol T     HALS: stop them when a sweep changes the factor by less\n"
    "                       than T times the first sweep (squared norms; default\n"
    "                       1e-8). The constraints combine per mode (--nonneg --l1\n"
    "                       0.1: non-negative and sparse); the report names the\n"
    "                       method, the constraints and the inner iterations.\n"
    "                       AO-ADMM runs on the CPU, MPI ranks and GPUs (--device\n"
    "                       gpu, --gpus, GPU ranks: the CPU's fits and inner\n"
    "                       iterations from the same start); HALS on the CPU and\n"
    "                       CPU ranks (on a GPU, auto picks AO-ADMM)\n"
    CLI_CHECKPOINT_HELP
    "                       (every method: ALS, AO-ADMM, HALS, apr; on the CPU, MPI\n"
    "                       ranks and GPUs, AO-ADMM's on the CPU and CPU ranks only)\n"
    CLI_BASE_HELP
    CLI_GEN_HELP
    "  -t, --threads N      CPU threads (default: all cores, or OMP_NUM_THREADS;\n"
    "                       MPI ranks that share a host's cores split them)\n"
    "  -o, --stem STEM      write STEM.mode1.mat ... STEM.modeN.mat, STEM.lambda.mat\n"
    "                       (SPLATT layout), STEM.ktensor and STEM.set (the set's\n"
    "                       manifest, see below); default STEM: FILE's\n"
    "                       name without directory and extensions, in the current\n"
    "                       directory (data/uber-apr14.tns.xz -> ./uber-apr14.*;\n"
    "                       FILE '-' -> ./stdin.*; --gen -> ./gen.*);\n"
    "                       a STEM ending in / or naming a directory puts the\n"
    "                       default stem there (-o out/ -> out/uber-apr14.*)\n"
    "      --no-ktensor     do not write STEM.ktensor: it holds the same numbers as\n"
    "                       the .mat files in one Tensor Toolbox / pyttb\n"
    "                       export_data file, so it doubles the output\n"
    "      --nowrite        do not write the factors\n"
    "      --json REPORT    also write a machine-readable report (JSON) to REPORT,\n"
    "                       switched together with the factors; '-' is standard\n"
    "                       output (progress then goes to stderr). REPORT may not\n"
    "                       be FILE, a --init file or a file of the set (usage\n"
    "                       error)\n"
    "      --device D       auto|cpu|gpu (default auto: the GPU when one is present\n"
    "                       and supported, except for problems so small that the\n"
    "                       CPU finishes before the GPU has started (a note says\n"
    "                       so); else the CPU)\n"
    "      --format F       auto|coo|csf|csf-short|fcoo|blco (default auto)\n"
    "      --precision P    double|single (default double)\n"
    CLI_MEMORY_LIMIT_HELP
    "                       (under --device auto: it runs on the CPU, with a note)\n"
    CLI_GPUS_HELP
    CLI_VERBOSITY_HELP
    "                       (-v: each iteration's MTTKRP / dense / fit seconds)\n"
    "  -h, --help           this help\n"
    "\n"
    "A rank above the shortest mode's length draws a warning (that mode's factor\n"
    "cannot have independent columns).\n"
    "\n"
    "The factor files (and a --json file) are one set, switched in one step: all\n"
    "are written to temporary names first, then STEM.set, the set's manifest naming\n"
    "them, is renamed into place -- the switch -- and the files after it. --init\n"
    "STEM reads through STEM.set, so it sees the whole previous set or the whole new\n"
    "one, even if a writer was killed between two renames; the next run writing\n"
    "STEM finishes such a switch and removes what the killed run left. A failure\n"
    "before the switch (also of the report) leaves the previous set as it was, no\n"
    "temporary behind, exit 1. SIGINT / SIGTERM before the switch: the same, exit\n"
    "130 / 143; once the switch has begun it is finished and the run exits 0.\n"
    "STEM.lock is held from the start of the run to the switch: a second run\n"
    "writing the same STEM fails at once (\"another tenfold run is writing this\n"
    "factor set (pid N)\"). Output places are checked before the input is read. The\n"
    "timing line's write is the time writing the factors; wall includes it.\n"
    "\n"
    "Several GPUs (--gpus): each GPU computes the MTTKRP and the new factor rows\n"
    "of its part of every mode, the rows go to the other GPUs (GPU to GPU where\n"
    "they reach each other, else through NCCL), and the fits equal one GPU's (to\n"
    "rounding); the plan line says how many GPUs and how the rows go, -v the\n"
    "exchange time, the load imbalance and the memory per non-zero, and how each\n"
    "mode's rows were cut: contiguous ranges, or longest-first (heaviest rows\n"
    "first, each to the lightest part; chosen where it lowers the largest part\n"
    "by more than 2 %; TF_PARTITION=contiguous|longest forces one).\n"
    "\n"
    "Several processes (a build with MPI, `tenfold info` says): `mpirun -np P\n"
    "tenfold cpd FILE ...` splits every mode's non-zeros over the P ranks in the\n"
    "same way and exchanges the new factor rows after each mode; rank 0 alone\n"
    "prints and writes; the fits and factors are the\n"
    "single process's. The ranks run the CPU backend in double precision\n"
    "(MPI_Allgatherv) or, with --device gpu, one GPU each (a node's ranks take\n"
    "its GPUs in order; NCCL shares the rows where it loads and the GPUs are\n"
    "distinct, else they go through pinned host memory and MPI; the plan line\n"
    "says which and why; TF_EXCHANGE=auto|nccl|host). Each rank holds only its\n"
    "part of the non-zeros: a tenfold .bin file is read at the part's offsets (other\n"
    "inputs are read whole, then cut), and the ranks send each other every\n"
    "mode's rows (MPI_Alltoallv). OpenMPI binds each of 2 or fewer ranks to one\n"
    "core unless started with --bind-to none (tenfold notes it on stderr). The\n"
    "ranks first check that they agree (the command and the options above but -t,\n"
    "-o, --json, --nowrite, --no-ktensor, --memory-limit; then the tensor read:\n"
    "order, dims, non-zeros, checksum), else all stop with one line 'ranks\n"
    "disagree: rank R has ...'; a .bin read in parts is accepted or refused as one\n"
    "process would. A rank that does not answer within TF_MPI_TIMEOUT seconds\n"
    "(default 600; TF_NCCL_TIMEOUT for the NCCL waits of GPU ranks) stops the run\n"
    "with a line naming it. Standard input ('-') cannot be read by ranks.\n"
    CLI_STDIN_HELP
    CLI_PROGRESS_HELP;

static const char *const device_names[] = {"auto", "cpu", "gpu"};
static const char *const precision_names[] = {"double", "single"};

/* basename of path without compression and tensor-format extensions
 * ("gen" for --gen). */
static void default_stem(const char *path, char *stem, size_t len)
{
    static const char *const ext[] = {".xz", ".gz", ".bz2", ".tns", ".bin", ".tfb",
                                      ".mtx", ".txt", ".dat", ".tensor", ".sptensor"};
    if (!strcmp(path, "-")) { /* standard input */
        snprintf(stem, len, "stdin");
        return;
    }
    const char *base = strrchr(path, '/');
    if (cli_generated(path)) base = NULL, path = "gen";
    snprintf(stem, len, "%s", base ? base + 1 : path);
    for (int stripped = 1; stripped;) {
        stripped = 0;
        size_t n = strlen(stem);
        for (size_t e = 0; e < sizeof ext / sizeof *ext; ++e) {
            size_t k = strlen(ext[e]);
            if (n > k && !strcmp(stem + n - k, ext[e])) {
                stem[n - k] = '\0';
                stripped = 1;
                break;
            }
        }
    }
    if (!stem[0]) snprintf(stem, len, "tenfold");
}

static void on_iteration(const tf_cpd_iter *it, void *user)
{
    cpd_run *run = user;
    cpd_run_add_iter(run, it);
    if (cli_quiet()) return;
    printf("  its = %3u (%.3f s)  fit = %.6g  delta = %+.4e", it->iter, it->seconds, it->fit, it->dfit);
    if (run->cons.any) printf("  inner = %u", it->inner_iters);
    if (cli_verbose())
        printf("  [mttkrp %.3f  dense %.3f  fit %.3f s]", it->t_mttkrp, it->t_dense, it->t_fit);
    printf("\n");
    cli_flush_stdout();
}

/* A rank above the shortest mode's length: that factor's columns cannot
 * be independent (the normal equations become rank-deficient). */
static void warn_rank(const tf_tensor *t, uint64_t rank)
{
    uint32_t shortest = 0;
    for (uint32_t m = 1; m < t->order; ++m)
        if (t->dims[m] < t->dims[shortest]) shortest = m;
    if (rank > t->dims[shortest])
        cli_warn("rank %llu exceeds the length of mode %u (%llu), the shortest mode: its factor cannot "
                 "have %llu independent columns", (unsigned long long)rank, shortest + 1,
                 (unsigned long long)t->dims[shortest], (unsigned long long)rank);
}


/* What --method apr does not take: the constraints (its factors are
 * non-negative already), the nvecs start (negative entries), fp32 and a
 * format (it keeps its own layout). Returns 0 or 2 after a usage error. */
static int apr_conflicts(const char *init, const cpd_constraint_args *ca, const char *precision, const char *format,
                         const char *method)
{
    const char *cons = ca->nonneg_flag || ca->nonneg ? "--nonneg" : ca->l1 ? "--l1" : ca->l2 ? "--l2"
                     : ca->method ? "--nonneg-method" : ca->admm_inner ? "--admm-inner" : ca->admm_tol ? "--admm-tol"
                     : ca->hals_inner ? "--hals-inner" : ca->hals_tol ? "--hals-tol" : NULL;
    if (cons)
        return cli_usage("cpd", "%s: not with --method %s (its factors have their own bounds; the "
                         "constraints are AO-ADMM's and HALS's)", cons, method);
    if (init && (!strcmp(init, "nvecs") || !strcmp(init, "svd")))
        return cli_usage("cpd", "--init %s: not with --method %s (singular vectors have negative entries; it "
                         "starts from --init random or --init STEM)", init, method);
    if (precision && strcmp(precision, "double"))
        return cli_usage("cpd", "--precision %s: not with --method %s (it runs in double precision)", precision, method);
    if (format && strcmp(format, "auto"))
        return cli_usage("cpd", "--format %s: not with --method %s (it keeps the non-zeros in its own "
                         "layout)", format, method);
    return CLI_OK;
}

/* Parses the options into run->opts; returns -1 to go on or an exit code. */
static int parse(int argc, char **argv, cpd_run *run, cli_args *a)
{
    const char *rank = NULL, *iters = NULL, *tol = NULL, *seed = NULL, *threads = NULL, *stem = NULL,
               *json = NULL, *device = NULL, *format = NULL, *precision = NULL, *mem = NULL, *init = NULL,
               *gpus = NULL, *method = NULL, *apr_inner = NULL, *kappa = NULL, *ckpt = NULL, *resume = NULL,
               *apr_alg = NULL;
    cpd_constraint_args ca;
    memset(&ca, 0, sizeof ca);
    cpd_gcp_args ga;
    memset(&ga, 0, sizeof ga);
    const cli_opt opts[] = {
        {"rank", 'r', &rank, NULL},      {"iters", 'i', &iters, NULL},
        {"tol", 0, &tol, NULL},          {"seed", 0, &seed, NULL},
        {"threads", 't', &threads, NULL}, {"stem", 'o', &stem, NULL},
        {"base", 0, &run->base, NULL},
        {"nowrite", 0, NULL, &run->nowrite}, {"json", 0, &json, NULL},
        {"no-ktensor", 0, NULL, &run->no_ktensor},
        {"device", 0, &device, NULL},    {"format", 0, &format, NULL},
        {"precision", 0, &precision, NULL}, {"memory-limit", 0, &mem, NULL},
        {"init", 0, &init, NULL},        {"gpus", 0, &gpus, NULL},
        {"nonneg", 0, &ca.nonneg, &ca.nonneg_flag}, {"l1", 0, &ca.l1, NULL},
        {"l2", 0, &ca.l2, NULL},         {"nonneg-method", 0, &ca.method, NULL},
        {"admm-inner", 0, &ca.admm_inner, NULL}, {"admm-tol", 0, &ca.admm_tol, NULL},
        {"hals-inner", 0, &ca.hals_inner, NULL}, {"hals-tol", 0, &ca.hals_tol, NULL},
        {"method", 0, &method, NULL},
        {"inner", 0, &apr_inner, NULL},  {"kappa", 0, &kappa, NULL},
        {"apr-algorithm", 0, &apr_alg, NULL},
        {"checkpoint", 0, &ckpt, NULL},  {"checkpoint-every", 0, &run->ckpt_every, NULL},
        {"resume", 0, &resume, NULL},
        {"loss", 0, &ga.loss, NULL},     {"samples", 0, &ga.samples, NULL},
        {"fsamples", 0, &ga.fsamples, NULL}, {"epoch-iters", 0, &ga.epoch_iters, NULL},
        {"epochs", 0, &ga.epochs, NULL}, {"rate", 0, &ga.rate, NULL},
        {"decay", 0, &ga.decay, NULL},   {"fails", 0, &ga.fails, NULL},
        {"sampling", 0, &ga.sampling, NULL},
        {"dense-loss", 0, NULL, &ga.dense},
        CLI_VERBOSITY_OPTS, CLI_GEN_OPT, {0}};
    int rc = cli_parse(a, "cpd", help, argc, argv, opts, 1, 1, "FILE");
    if (rc >= 0) return rc;
    if (method && strcmp(method, "als") && strcmp(method, "apr") && strcmp(method, "gcp"))
        return cli_usage("cpd", "--method: expected als, apr or gcp, got '%s'", method);
    run->apr.on = method && !strcmp(method, "apr");
    run->gcp.on = method && !strcmp(method, "gcp");
    if (!run->apr.on && (apr_inner || kappa || apr_alg))
        return cli_usage("cpd", "%s: only with --method apr",
                         apr_inner ? "--inner" : kappa ? "--kappa" : "--apr-algorithm");
    if (!run->gcp.on && cpd_gcp_given(&ga))
        return cli_usage("cpd", "%s: only with --method gcp", cpd_gcp_given(&ga));
    if (run->gcp.on && (iters || tol))
        return cli_usage("cpd", "%s: not with --method gcp (its limit is --epochs)", iters ? "-i/--iters" : "--tol");
    if ((run->apr.on || run->gcp.on) && (rc = apr_conflicts(init, &ca, precision, format, method)))
        return rc;
    if ((rc = cli_checkpoint_parse("cpd", ckpt, run->ckpt_every, resume, &run->ckpt))) return rc;
    if (run->gcp.on && (ckpt || resume) && ga.dense)
        return cli_usage("cpd", "%s: not with --dense-loss (its runs are short; the sampled GCP-Adam's epochs are "
                         "checkpointed)", ckpt ? "--checkpoint" : "--resume");
    if (resume && init)
        return cli_usage("cpd", "--resume: not with --init (the checkpoint is where the run goes on from)");
    if (init && (!strcmp(init, "nvecs") || !strcmp(init, "svd"))) {
        run->opts.start = TF_START_NVECS;
        init = NULL;
    } else if (init && !strcmp(init, "random")) {
        init = NULL;
    }
    if (!rank && !init) return cli_usage("cpd", "missing -r R (the rank)");
    if (init && (!*init || !strcmp(init, "-")))
        return cli_usage("cpd", "--init: expected random, nvecs, svd or the stem of factor files (STEM.mode1.mat "
                                "...), got '%s'", init);
    run->init.stem = init; /* read by cmd_cpd, after the outputs are checked */
    run->opts.rank = 0;    /* 0 with --init and no -r: the files' column count */
    tf_cpd_opts *o = &run->opts;
    uint64_t max_iters = o->max_iters;
    int dev = 0, prec = 0, fmt = TF_FORMAT_AUTO;
    if ((rc = cli_u64("cpd", "-r/--rank", rank, 1, TF_MAX_RANK, &o->rank)) ||
        (rc = cli_u64("cpd", "-i/--iters", iters, 1, 1000000, &max_iters)) ||
        (rc = cli_double("cpd", "--tol", tol, 0.0, 1.0, &o->tol)) ||
        (rc = cli_u64("cpd", "--seed", seed, 0, UINT64_MAX, &o->seed)) ||
        (rc = cli_threads("cpd", threads, &o->threads)) ||
        (rc = cli_choice("cpd", "--device", device, device_names, 3, &dev)) ||
        (rc = cli_choice("cpd", "--precision", precision, precision_names, 2, &prec)) ||
        (rc = cli_memory_limit("cpd", mem, &run->memory_limit)) ||
        (rc = cli_parse_gpus("cpd", gpus, &run->gpus)) ||
        (rc = cpd_constraints_parse(&ca, &run->cons)))
        return rc;
    if (gpus && dev == TF_BACKEND_CPU) return cli_usage("cpd", "--gpus: not with --device cpu");
    if (format && (fmt = tf_format_parse(format)) < 0)
        return cli_usage("cpd", "--format: expected auto|coo|csf|csf-short|fcoo|blco, got '%s'", format);
    o->max_iters = (uint32_t)max_iters;
    o->backend = (tf_backend)dev; /* device_names follows tf_backend's order */
    if (run->apr.on && (rc = cpd_apr_options(&run->apr, o, iters, tol, apr_inner, kappa, apr_alg))) return rc;
    if (run->gcp.on && (rc = cpd_gcp_options(&run->gcp, o, &ga))) return rc;
    o->format = (tf_format)fmt;
    o->precision = prec ? TF_SINGLE : TF_DOUBLE;
    run->json_path = json;
    run->path = a->pos[0];
    if (stem && !strcmp(stem, "-"))
        return cli_usage("cpd", "-o -: the factors are several files, give a stem (--json - puts the "
                         "report on standard output)");
    struct stat st;
    size_t n = stem ? strlen(stem) : 0;
    if (stem && !(n && stem[n - 1] == '/') && !(stat(stem, &st) == 0 && S_ISDIR(st.st_mode))) {
        snprintf(run->stem, sizeof run->stem, "%s", stem);
    } else { /* no stem, or a directory: the default stem (there) */
        char base[1024];
        default_stem(run->path, base, sizeof base);
        snprintf(run->stem, sizeof run->stem, "%s%s%s", stem ? stem : "", n && stem[n - 1] != '/' ? "/" : "",
                 base);
    }
    if (ckpt && !run->nowrite && !strcmp(ckpt, run->stem))
        return cli_usage("cpd", "--checkpoint %s: the same stem as the factors (-o); give the checkpoints their own",
                         ckpt);
    return -1;
}

/* The device line before the run. Under auto it asks CUDA nothing and
 * loads no CUDA module: the library decides (a small problem runs on the
 * CPU without loading or starting CUDA) and the plan line says which it took. */
static void choose_device(tf_cpd_opts *o)
{
    if (o->backend != TF_BACKEND_AUTO) {
        if (!cli_quiet()) printf("device: %s\n", tf_backend_name(o->backend));
        return;
    }
    char why[1024]; /* looks for the CUDA module without loading it */
    const tf_cuda_module_state st = tf_cuda_module(0, why, sizeof why);
    if (st < TF_CUDA_MODULE_FOUND) {
        o->backend = TF_BACKEND_CPU;
        if (cli_quiet()) return;
        if (st == TF_CUDA_MODULE_NONE) printf("device: cpu (built without CUDA)\n");
        else printf("device: cpu (no CUDA backend: its module %s)\n", why);
        return;
    }
    if (!cli_quiet())
        printf("device: auto (a GPU when one is present, the CPU for a small problem or without one; "
               "the plan line says which)\n");
}

/* What the final fit means, and what to try when the limit stopped a run
 * whose fit was still rising (a new user's first question). */
static void print_fit_meaning(const cpd_run *run)
{
    const tf_cpd_report *r = &run->rep;
    printf("  fit = 1 - ||X - M|| / ||X|| (M: the rank-%u model; 1 is exact, 0 no better than zeros)\n",
           (unsigned)run->opts.rank);
    if (r->converged || !run->niters) return;
    const double d = run->iters[run->niters - 1].dfit;
    if (d > run->opts.tol)
        printf("  the fit was still rising (last delta %.2g > --tol %.2g): try more iterations (-i %u),\n"
               "  a larger rank for a closer model (-r %u), or a larger --tol to stop sooner\n",
               d, run->opts.tol, 4 * r->iters, (unsigned)(2 * run->opts.rank));
}

static void print_summary(const cpd_run *run)
{
    const tf_cpd_report *r = &run->rep;
    const uint32_t N = run->t.order;
    if (r->converged)
        printf("final fit: %.6g after %u iteration%s (converged: |delta fit| < --tol %.2g)\n", r->fit, r->iters,
               cli_s(r->iters), run->opts.tol);
    else
        printf("final fit: %.6g after %u iteration%s (stopped at the iteration limit, -i %u)\n", r->fit, r->iters,
               cli_s(r->iters), run->opts.max_iters);
    print_fit_meaning(run);
    if (run->cons.any && r->update_kind == TF_CPD_UPDATE_HALS) {
        uint32_t nn = 0; /* modes that run sweeps (the others are solved in closed form) */
        for (uint32_t m = 0; m < N; ++m) nn += run->cons.update.mode[m].nonneg != 0;
        const double updates = (double)r->iters * nn;
        printf("HALS: %llu column sweep%s (%.1f per update of a non-negative mode; at most %u)\n",
               (unsigned long long)r->inner_iters, cli_s(r->inner_iters), updates > 0 ? r->inner_iters / updates : 0.0,
               run->cons.update.hals_max_inner);
    } else if (run->cons.any) {
        uint32_t prox = 0; /* modes that run ADMM iterations (the others are solved in closed form) */
        for (uint32_t m = 0; m < N; ++m) prox += run->cons.update.mode[m].nonneg || run->cons.update.mode[m].l1 > 0;
        const double updates = (double)r->iters * prox;
        printf("AO-ADMM: %llu inner iteration%s (%.1f per update of a mode with nonneg or l1; at most %u)\n",
               (unsigned long long)r->inner_iters, cli_s(r->inner_iters), updates > 0 ? r->inner_iters / updates : 0.0,
               run->cons.update.max_inner);
    }
    if (r->pinv_fallbacks)
        printf("note: %llu solve%s fell back to the pseudo-inverse (rank-deficient normal equations)\n",
               (unsigned long long)r->pinv_fallbacks, cli_s(r->pinv_fallbacks));
    printf("plan: %s\n", r->plan);
    if (r->note[0]) printf("note: %s\n", r->note);
    double mtt = 0;
    for (uint32_t m = 0; m < N; ++m) mtt += r->t_mttkrp[m];
    char init[40] = "";
    if (run->opts.start == TF_START_NVECS && !run->opts.init) snprintf(init, sizeof init, "  nvecs %.3f", r->t_init);
    printf("timing (s): read %.3f%s  build %.3f  setup %.3f  mttkrp %.3f  dense %.3f  fit %.3f  finish %.3f  "
           "cpd total %.3f  write %.3f  wall %.3f\n",
           run->info.seconds, init, r->t_build, r->t_setup, mtt, r->t_dense, r->t_fit, r->t_finish, r->t_total,
           run->t_write, run->wall);
    if (cli_verbose()) {
        char peak[32], coo[32];
        printf("build: %.1f M non-zeros/s, peak host memory %s above the input (COO %s)\n",
               r->t_build > 0 ? (double)run->t.nnz / r->t_build / 1e6 : 0.0,
               cli_bytes(peak, sizeof peak, (double)r->build_peak_bytes),
               cli_bytes(coo, sizeof coo, (double)tf_tensor_bytes(&run->t)));
        if (r->device_bytes) {
            char dev[32];
            const double nnz = run->t.nnz ? (double)run->t.nnz : 1.0;
            printf("memory: GPU %s held%s (%.1f B per non-zero), host peak %.1f B per non-zero above the input "
                   "(%.1f B per non-zero)\n",
                   cli_bytes(dev, sizeof dev, (double)r->device_bytes), r->parts > 1 ? " by this process's GPUs" : "",
                   (double)r->device_bytes / nnz, (double)r->build_peak_bytes / nnz,
                   (double)tf_tensor_bytes(&run->t) / nnz);
        }
    }
    if (r->parts > 1)
        printf("parts: %d, shard imbalance %.2f%% (largest part's non-zeros over the mean), factor exchange %.3f s\n",
               r->parts, 100.0 * r->imbalance, r->t_exchange);
    if (r->parts > 1 && cli_verbose()) { /* each mode's cut (src/front/partition.c; TF_PARTITION forces one) */
        printf("partition:");
        for (uint32_t m = 0; m < N; ++m)
            printf("%s mode %u %s %.2f%%", m ? "," : "", m + 1, cpd_schedule_name(r->schedule[m]),
                   100.0 * r->mode_imbalance[m]);
        printf("\n");
    }
    printf("mttkrp per mode (s):");
    for (uint32_t m = 0; m < N; ++m) printf(" %u: %.3f", m + 1, r->t_mttkrp[m]);
    printf("\n");
}

/* What the ranks must agree on (cli_agree_begin): the options that shape
 * the result; not -t, -o, --json, --nowrite, --no-ktensor or
 * --memory-limit, which may differ between nodes or matter on rank 0 alone. */
static void agree_record(tf_agree *a, const cpd_run *run, int parse_rc)
{
    cli_agree_begin(a, "cpd", parse_rc, run->path);
    if (parse_rc >= 0) return;
    const tf_cpd_opts *o = &run->opts;
    cli_agree_u64(a, "-r/--rank", o->rank);
    cli_agree_u64(a, "-i/--iters", o->max_iters);
    cli_agree_double(a, "--tol", o->tol);
    cli_agree_u64(a, "--seed", o->seed);
    cli_agree_str(a, "--init", run->init.stem);
    cli_agree_str(a, "--device", device_names[o->backend]);
    cli_agree_str(a, "--precision", precision_names[o->precision == TF_SINGLE]);
    cli_agree_str(a, "--format", tf_format_name(o->format));
    cli_agree_str(a, "--base", run->base ? run->base : "auto");
    cli_agree_gpus(a, &run->gpus);
    const cpd_constraints *c = &run->cons;
    cli_agree_u64(a, "--nonneg", c->nonneg);
    cli_agree_double(a, "--l1", c->l1);
    cli_agree_u64(a, "--l1 modes", c->l1_modes);
    cli_agree_double(a, "--l2", c->l2);
    cli_agree_u64(a, "--l2 modes", c->l2_modes);
    cli_agree_str(a, "--nonneg-method", cpd_method_name(c->method));
    cli_agree_u64(a, "--admm-inner", c->update.max_inner);
    cli_agree_double(a, "--admm-tol", c->update.inner_tol);
    cli_agree_u64(a, "--hals-inner", c->update.hals_max_inner);
    cli_agree_double(a, "--hals-tol", c->update.hals_tol);
    cli_agree_str(a, "TF_PARTITION", getenv("TF_PARTITION")); /* every rank must cut the rows alike */
    cli_agree_u64(a, "--method", (uint64_t)run->apr.on + 2 * (uint64_t)run->gcp.on);
    cli_agree_str(a, "--checkpoint", run->ckpt.path); /* every rank takes part in a write */
    cli_agree_str(a, "--checkpoint-every", run->ckpt_every);
    cli_agree_str(a, "--resume", run->ckpt.resume);
    if (run->apr.on) {
        const tf_cp_apr_opts *p = &run->apr.opts;
        cli_agree_u64(a, "-i/--iters (apr)", p->max_iters);
        cli_agree_double(a, "--tol (apr)", p->stoptol);
        cli_agree_u64(a, "--inner", p->max_inner);
        cli_agree_double(a, "--kappa", p->kappa);
        cli_agree_u64(a, "--apr-algorithm", (uint64_t)p->algorithm);
    }
    if (run->gcp.on) { /* every rank draws the same samples and takes the same steps */
        const tf_gcp_opts *g = &run->gcp.opts;
        cli_agree_u64(a, "--loss", (uint64_t)g->loss);
        cli_agree_u64(a, "--samples (non-zeros)", g->gnz);
        cli_agree_u64(a, "--samples (zeros)", g->gz);
        cli_agree_u64(a, "--fsamples (non-zeros)", g->fnz);
        cli_agree_u64(a, "--fsamples (zeros)", g->fz);
        cli_agree_u64(a, "--epoch-iters", g->epoch_iters);
        cli_agree_u64(a, "--epochs", g->max_epochs);
        cli_agree_double(a, "--rate", g->rate);
        cli_agree_double(a, "--decay", g->decay);
        cli_agree_u64(a, "--fails", g->max_fails);
        cli_agree_u64(a, "--dense-loss", (uint64_t)g->dense);
        cli_agree_u64(a, "--sampling", (uint64_t)g->sampling);
    }
}

static int cmd_cpd_ranks(int argc, char **argv, int rank, int size, double t_start);

/* --method apr: tf_cp_apr with the run's rank, start and context. */
static tf_status run_apr(cpd_run *run)
{
    tf_cp_apr_opts *p = &run->apr.opts;
    p->init = run->opts.init;
    p->context = run->opts.context;
    p->distributed_input = run->opts.distributed_input;
    p->checkpoint = run->opts.checkpoint;
    p->callback = cpd_apr_on_iteration;
    p->user = &run->apr;
    return tf_cp_apr(&run->t, p, &run->k, &run->apr.rep);
}

/* --method gcp: tf_gcp with the run's rank, start and context (one GPU,
 * several GPUs, GPU ranks, or the CPU of one process or of MPI ranks). */
static tf_status run_gcp(cpd_run *run)
{
    tf_gcp_opts *p = &run->gcp.opts;
    p->init = run->opts.init;
    p->context = run->opts.context;
    p->distributed_input = run->opts.distributed_input;
    p->checkpoint = run->opts.checkpoint;
    p->callback = cpd_gcp_on_epoch;
    p->user = &run->gcp;
    return tf_gcp(&run->t, p, &run->k, &run->gcp.rep);
}

/* Under mpirun with several ranks: every rank reads its part of the input
 * and runs its shards; rank 0 alone prints and writes. A failure on one rank ends
 * them all (the others would wait in a collective). */
int cmd_cpd(int argc, char **argv)
{
    double t_start = tf_wtime();
    int rank = 0, size = 1;
    int rc = cli_ranks_start(&argc, &argv, &rank, &size);
    if (rc) return rc;
    return cli_ranks_end(cmd_cpd_ranks(argc, argv, rank, size, t_start), size);
}

static int cmd_cpd_ranks(int argc, char **argv, int rank, int size, double t_start)
{
    cpd_run run;
    cpd_run_init(&run);
    tf_context *ctx = NULL;
    cli_args a;
    int rc = parse(argc, argv, &run, &a);
    if (size > 1) { /* first of all, CPU or GPU ranks: the same command and options everywhere */
        tf_agree ag;
        agree_record(&ag, &run, rc);
        const int arc = cli_ranks_agree(&ag, size);
        if (arc) {
            cpd_run_free(&run);
            return arc;
        }
        if (rc >= 0) return cli_alike(rc); /* --help or a usage error on every rank */
    }
    if (rc >= 0) return rc;
    if (size > 1) { /* from here on every rank has the same options: a failure of them is every rank's */
        if (!strcmp(run.path, "-")) {
            cpd_run_free(&run);
            return cli_fail_all("cpd: reading standard input ('-') is not possible on MPI ranks: ranks 1..%d get "
                                "none (mpirun passes it to rank 0 alone); convert it to a file first (tenfold "
                                "convert - FILE.bin)", size - 1);
        }
        if (run.gpus.n > 1 || run.gpus.all) {
            cpd_run_free(&run);
            return cli_fail_all("cpd: --gpus: a run on %d MPI ranks takes one GPU per rank (--device gpu)", size);
        }
        if (run.opts.backend != TF_BACKEND_GPU && run.opts.precision == TF_SINGLE) {
            cpd_run_free(&run);
            return cli_fail_all("cpd: --precision single on %d MPI ranks needs --device gpu (CPU ranks run in "
                                "double precision)", size);
        }
        if (run.opts.start == TF_START_NVECS) {
            cpd_run_free(&run);
            return cli_fail_all("cpd: --init nvecs is not available on MPI ranks yet (each rank reads only its "
                                "part of the tensor); use --init random or --init STEM");
        }
        if (run.opts.backend != TF_BACKEND_GPU) run.opts.backend = TF_BACKEND_CPU;
        if (rank != 0) { /* rank 0 alone prints and writes */
            cli_verbosity = CLI_QUIET;
            run.nowrite = 1;
            run.json_path = NULL;
        }
    }
    if ((rc = cpd_check_outputs(&run))) return rc; /* before the (long) work */
    if ((rc = cpd_init_read(&run.init, run.init.stem, &run.opts.rank))) goto done; /* before the tensor */

    if (run.cons.any && run.cons.method == CPD_METHOD_HALS &&
        (run.opts.backend == TF_BACKEND_GPU || run.gpus.n || run.gpus.all)) { /* costs no read */
        rc = cli_fail_all("cpd: HALS is not available on %s yet (AO-ADMM is: --nonneg-method admm; or the CPU: "
                          "--device cpu)",
                          run.gpus.n > 1 || run.gpus.all ? "several GPUs" : size > 1 ? "GPUs of MPI ranks" : "the GPU");
        goto done;
    }
    if (run.gcp.on && run.gcp.opts.dense && (run.gpus.n || run.opts.backend == TF_BACKEND_GPU)) {
        rc = cli_fail_all("gcp: --dense-loss runs on the CPU only (--device cpu; its tensors have at most 2^26 "
                          "entries)"); /* costs no read */
        goto done;
    }
    if (run.gcp.on && size > 1 && run.gcp.opts.dense) {
        rc = cli_fail_all("gcp: --dense-loss is not available on MPI ranks (its tensors have at most 2^26 entries: "
                          "run it in one process)"); /* costs no read */
        goto done;
    }
    if ((rc = cli_gpu_precheck(run.opts.backend, size > 1 ? 0 : run.opts.device, &run.gpus, "--device")))
        goto done; /* a missing GPU costs no read */
    /* several ranks: each reads its part of the non-zeros, and the ranks
     * send each other every mode's rows (tf_cpd_opts.distributed_input) */
    if ((rc = cli_load_part("cpd", run.path, run.opts.threads, run.base, (uint64_t)rank, (uint64_t)size, &run.t,
                            &run.info)))
        goto done;
    /* before any collective of the computation (and any NCCL set-up): the same tensor on every rank */
    if ((rc = cli_ranks_agree_input(&run.t, &run.info, run.opts.threads, size))) goto done;
    run.opts.distributed_input = size > 1;
    if ((rc = cpd_init_check(&run.init, &run.t))) goto done;
    if (run.init.stem) run.opts.init = &run.init.k;
    if ((rc = cpd_constraints_apply(&run.cons, run.t.order))) goto done;
    if (run.cons.any) run.opts.update = &run.cons.update;
    if (!cli_quiet()) {
        cli_print_problem(stdout, run.path, &run.t, &run.info);
        cli_print_fixes(stdout, &run.t, &run.info);
    }
    if (cli_verbose()) cli_print_read(stdout, &run.info);
    tf_cpd_opts *o = &run.opts;
    if (!run.apr.on && !run.gcp.on) warn_rank(&run.t, o->rank);
    if (run.gpus.n || run.gpus.all) o->backend = TF_BACKEND_GPU;
    choose_device(o);
    if (run.apr.on) run.apr.opts.backend = o->backend; /* the GPU(s) or the CPU (the plan line says which) */
    if (run.gcp.on) run.gcp.opts.backend = o->backend; /* the GPU(s) or the CPU (the plan line says which) */
    if ((rc = cli_run_context_ranks(o->backend, o->device, &run.gpus, o->threads, run.memory_limit, size > 1,
                                    "--device", &ctx)))
        goto done;
    char each[64] = ""; /* CPU ranks: every rank's team */
    if (size > 1 && o->backend != TF_BACKEND_GPU && (rc = cli_rank_threads(o->threads, rank, size, each, sizeof each)))
        goto done;
    if (size > 1 && !cli_quiet())
        printf("ranks: %d (MPI), %s%s\n", size, o->backend == TF_BACKEND_GPU ? "one GPU each" : "the CPU backend on each",
               each);
    o->context = ctx;
    char nthreads[128];
    cli_threads_text(o->threads, nthreads, sizeof nthreads);
    char start[2200];
    if (run.init.stem)
        snprintf(start, sizeof start, "start %s.mode{1..%u}.mat%s", run.init.stem, run.t.order,
                 run.init.has_lambda ? " + lambda" : "");
    else if (o->start == TF_START_NVECS)
        snprintf(start, sizeof start, "start nvecs (leading singular vectors of modes 2..%u)", run.t.order);
    else
        snprintf(start, sizeof start, "seed %llu", (unsigned long long)o->seed);
    if (run.apr.on) {
        run.apr.opts.rank = o->rank; /* --init STEM: the files' column count */
        if (!cli_quiet()) cpd_apr_print_start(&run.apr, start, nthreads);
    } else if (run.gcp.on) {
        run.gcp.opts.rank = o->rank;
        if (!cli_quiet()) cpd_gcp_print_start(&run.gcp, start, nthreads);
    } else if (!cli_quiet())
        printf("cpd: rank %llu, max %u iteration%s, tol %g, %s, %s, format %s, precision %s\n",
               (unsigned long long)o->rank, o->max_iters, cli_s(o->max_iters), o->tol, start, nthreads,
               tf_format_name(o->format), precision_names[o->precision == TF_SINGLE]);
    if (run.cons.any && !cli_quiet()) { /* the library decides the same way (tf_cpd_update_choose) */
        char what[1024], why[128];
        cpd_constraints_describe(&run.cons, run.t.order, what, sizeof what);
        tf_tensor whole = run.t; /* a rank's part: the choice is the whole tensor's */
        if (run.info.total_nnz > whole.nnz) whole.nnz = run.info.total_nnz;
        const tf_backend where =
            o->backend == TF_BACKEND_GPU || run.gpus.n || run.gpus.all ? TF_BACKEND_GPU : o->backend;
        const tf_cpd_update_kind k = tf_cpd_update_choose(&whole, o->rank, o->update, where, why, sizeof why);
        char chosen[160] = "";
        if (run.cons.method == CPD_METHOD_AUTO) snprintf(chosen, sizeof chosen, "; --nonneg-method auto: %s", why);
        if (k == TF_CPD_UPDATE_HALS)
            printf("update: HALS (%s), at most %u column sweeps, tol %g%s\n", what, o->update->hals_max_inner,
                   o->update->hals_tol, chosen);
        else
            printf("update: AO-ADMM (%s), at most %u inner iterations, tol %g%s\n", what, o->update->max_inner,
                   o->update->inner_tol, chosen);
    }
    if (run.ckpt.path || run.ckpt.resume) {
        o->checkpoint = &run.ckpt;
        char line[4400];
        cli_checkpoint_describe(&run.ckpt, line, sizeof line);
        if (!cli_quiet()) printf("checkpoints: %s\n", line);
    }
    if (cli_verbose() && o->backend == TF_BACKEND_CPU) {
        char line[1024];
        tf_threads_describe(o->threads, &run.t, o->rank, line, sizeof line);
        printf("threads: %s\n", line);
    }
    cli_flush_stdout();
    o->callback = on_iteration;
    o->user = &run;
    o->progress = cli_progress_fn(); /* a progress line for a long plan build */
    o->progress_user = (void *)"cpd";
    const tf_status st = run.apr.on ? run_apr(&run) : run.gcp.on ? run_gcp(&run) : tf_cpd(&run.t, o, &run.k, &run.rep);
    if (st == TF_ERR_NUMERIC && run.init.stem) { /* diverged: the start is the first suspect */
        fprintf(stderr, "tenfold: %s (the run started from --init %s: its factors are the likely cause; rescale "
                        "them, or start without --init)\n", tf_last_error(), run.init.stem);
        rc = CLI_FAIL;
        goto done;
    }
    if (st != TF_OK) {
        rc = cli_fail();
        goto done;
    }
    if ((rc = cpd_write_factors(&run))) goto done;
    run.wall = tf_wtime() - t_start; /* the factor files included */
    if ((rc = cpd_write_json(&run))) goto done; /* before the switch: its failure keeps the old set */
    if ((rc = cpd_switch(&run))) goto done;
    if (!cli_quiet() && run.apr.on) cpd_apr_print_summary(&run.apr, run.info.seconds, run.t_write, run.wall);
    else if (!cli_quiet() && run.gcp.on) cpd_gcp_print_summary(&run.gcp, run.info.seconds, run.t_write, run.wall);
    else if (!cli_quiet()) print_summary(&run);
    cpd_print_json_written(&run);
done:
    cpd_run_free(&run);
    tf_context_free(ctx);
    return rc;
}
