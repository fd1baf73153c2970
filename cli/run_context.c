/* SPDX-License-Identifier: BSD-3-Clause */
/* One tf_context per command run. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include "run_context.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "gen_spec.h"
#include "report.h"
#include "verbosity.h"

int cli_parse_gpus(const char *cmd, const char *s, cli_gpus *g)
{
    memset(g, 0, sizeof *g);
    if (!s) return CLI_OK;
    if (!strcmp(s, "all")) {
        g->all = 1;
        return CLI_OK;
    }
    uint64_t v[TF_MAX_GPUS];
    int n = 0;
    /* "3," is a list of one, GPU 3 (the comma says list, not count): one
     * trailing comma ends a list */
    char trimmed[256];
    const size_t len = strlen(s);
    const char *list = s;
    if (len > 1 && len < sizeof trimmed && s[len - 1] == ',' && s[len - 2] != ',') {
        memcpy(trimmed, s, len - 1);
        trimmed[len - 1] = '\0';
        list = trimmed;
    }
    int rc = cli_u64_list(cmd, "--gpus", list, 0, 1023, v, TF_MAX_GPUS, &n);
    if (rc) return rc;
    if (!strchr(s, ',')) { /* a count: GPUs 0..N-1 */
        if (v[0] < 1 || v[0] > TF_MAX_GPUS)
            return cli_usage(cmd, "--gpus: expected a count 1..%d, all, or a list of GPU numbers (0,1), got '%s'",
                             TF_MAX_GPUS, s);
        g->n = (int)v[0];
        for (int i = 0; i < g->n; ++i) g->dev[i] = i;
        return CLI_OK;
    }
    g->n = n;
    for (int i = 0; i < n; ++i) {
        g->dev[i] = (int)v[i];
        for (int j = 0; j < i; ++j)
            if (g->dev[j] == g->dev[i]) return cli_usage(cmd, "--gpus: GPU %d is listed twice", g->dev[i]);
    }
    return CLI_OK;
}

int cli_run_context(tf_backend backend, int device, int threads, uint64_t memory_limit, const char *opt,
                    tf_context **out)
{
    return cli_run_context_ranks(backend, device, NULL, threads, memory_limit, 0, opt, out);
}

int cli_run_context_ranks(tf_backend backend, int device, const cli_gpus *gpus, int threads, uint64_t memory_limit,
                          int distributed, const char *opt, tf_context **out)
{
    tf_context_opts o;
    tf_context_opts_default(&o);
    o.distributed = distributed;
    o.backend = backend;
    o.device = device;
    o.threads = threads;
    o.memory_limit = memory_limit;
    if (gpus && (gpus->all || gpus->n)) {
        char why[512];
        const tf_cuda_module_state st = tf_cuda_module(1, why, sizeof why);
        if (st != TF_CUDA_MODULE_LOADED) { /* no CUDA backend: GPUs are not available, whatever the count */
            fprintf(stderr, "tenfold: --gpus: not available: %s%s\n",
                    st == TF_CUDA_MODULE_NONE ? "" : "no CUDA backend: its module ", why);
            return CLI_FAIL;
        }
        o.ndevices = gpus->all ? tf_gpu_count() : gpus->n;
        if (gpus->all && o.ndevices == 0) {
            fprintf(stderr, "tenfold: --gpus all: no CUDA device is present\n");
            return CLI_FAIL;
        }
        if (o.ndevices > TF_MAX_GPUS) o.ndevices = TF_MAX_GPUS;
        for (int i = 0; i < o.ndevices; ++i) o.devices[i] = gpus->all ? i : gpus->dev[i];
        if (o.ndevices == 1) o.device = o.devices[0];
        if (o.backend == TF_BACKEND_AUTO) o.backend = TF_BACKEND_GPU;
        opt = "--gpus";
    }
    tf_tuning tuning;
    tf_tuning_default(&tuning);
    tf_tuning_from_env(&tuning); /* TF_FCOO_MINB=4 etc. stay usable for measurements */
    o.tuning = &tuning;
    if (tf_context_create(&o, out) != TF_OK) {
        fprintf(stderr, "tenfold: %s: %s\n", opt, tf_last_error());
        return CLI_FAIL;
    }
    /* the limit is of GPU memory: a run on the CPU says it has none to keep */
    static int noted;
    if (memory_limit && !noted && !cli_quiet() && tf_context_backend(*out) == TF_BACKEND_CPU) {
        fprintf(stderr, "tenfold: note: --memory-limit limits GPU memory; this run is on the CPU, which ignores it\n");
        noted = 1;
    }
    return CLI_OK;
}

int cli_memory_limit(const char *cmd, const char *s, uint64_t *out)
{
    const int rc = cli_size(cmd, "--memory-limit", s, out);
    if (rc == CLI_OK && s && *out == 0)
        return cli_usage(cmd, "--memory-limit: 0 would mean no limit, which is the default: leave the option out "
                              "for that, or give a size such as 512M");
    return rc;
}

int cli_gpu_precheck(tf_backend backend, int device, const cli_gpus *gpus, const char *opt)
{
    const int listed = gpus && (gpus->all || gpus->n);
    if (backend != TF_BACKEND_GPU && !listed) return CLI_OK;
    if (listed) opt = "--gpus";
    char why[512];
    const tf_cuda_module_state st = tf_cuda_module(1, why, sizeof why);
    if (st != TF_CUDA_MODULE_LOADED) {
        fprintf(stderr, "tenfold: %s: not available: %s%s\n", opt,
                st == TF_CUDA_MODULE_NONE ? "" : "no CUDA backend: its module ", why);
        return CLI_FAIL;
    }
    const int n = tf_gpu_count();
    if (n == 0) {
        fprintf(stderr, "tenfold: %s: no usable NVIDIA GPU: this machine has 0 (the CUDA backend is built, but CUDA "
                        "finds no device): run with --device cpu or auto\n", opt);
        return CLI_FAIL;
    }
    for (int i = 0; gpus && !gpus->all && i < gpus->n; ++i)
        if (gpus->dev[i] >= n) {
            fprintf(stderr, "tenfold: --gpus: there is no GPU %d: this machine has %d (0..%d)\n", gpus->dev[i], n,
                    n - 1);
            return CLI_FAIL;
        }
    if (!listed && device >= n) {
        fprintf(stderr, "tenfold: %s: there is no GPU %d: this machine has %d (0..%d)\n", opt, device, n, n - 1);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* A rank held to one CPU where the machine has CPUs to spare (at least two
 * per rank; OpenMPI binds each rank to a core when it starts two or fewer):
 * its OpenMP threads share that core, and reading or generating a large
 * input takes many times as long. Said once, by rank 0, on stderr; not when
 * OMP_NUM_THREADS asks for one thread anyway. */
static void warn_one_cpu(int rank, int size)
{
    cpu_set_t set;
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const char *omp = getenv("OMP_NUM_THREADS");
    if (rank != 0 || online < 2L * size || (omp && atoi(omp) == 1) || sched_getaffinity(0, sizeof set, &set) != 0 ||
        CPU_COUNT(&set) != 1)
        return;
    fprintf(stderr, "tenfold: note: this rank may use 1 of the %ld CPUs (its CPU affinity: OpenMPI binds each of "
                    "2 or fewer ranks to one core); to give the ranks more, start them with `mpirun --bind-to none` "
                    "or `--map-by slot:PE=N`\n", online);
}

void cli_threads_text(int threads, char *buf, size_t len)
{
    const int n = threads ? threads : tf_default_threads();
    int cpus = 0, ranks = 0;
    const int shared = !threads && tf_default_threads_shared(&cpus, &ranks);
    if (shared)
        snprintf(buf, len, "%d thread%s (%d CPU%s shared by %d ranks on this host)", n, cli_s((uint64_t)n), cpus,
                 cli_s((uint64_t)cpus), ranks);
    else
        snprintf(buf, len, "%d thread%s", n, cli_s((uint64_t)n));
}

int cli_rank_threads(int threads, int rank, int size, char *buf, size_t len)
{
    buf[0] = 0;
    if (size < 2) return CLI_OK;
    double *t = calloc((size_t)size, sizeof *t); /* each rank's team in its slot, summed: gathered */
    if (!t) {
        fprintf(stderr, "tenfold: out of memory gathering the ranks' threads\n");
        return CLI_FAIL;
    }
    t[rank] = threads ? threads : tf_default_threads();
    if (tf_mpi_allreduce_sum(t, (uint64_t)size) != TF_OK) {
        free(t);
        return cli_fail();
    }
    double lo = t[0], hi = t[0];
    for (int r = 1; r < size; ++r) {
        lo = t[r] < lo ? t[r] : lo;
        hi = t[r] > hi ? t[r] : hi;
    }
    free(t);
    if (lo == hi) snprintf(buf, len, ", %.0f thread%s each", lo, lo == 1 ? "" : "s");
    else snprintf(buf, len, ", %.0f-%.0f threads each", lo, hi);
    return CLI_OK;
}

int cli_ranks_start(int *argc, char ***argv, int *rank, int *size)
{
    if (tf_mpi_start(argc, argv, rank, size) != TF_OK) return cli_fail();
    /* TF_MPI_TIMEOUT bounds every wait of the ranks, the first agreement and
     * the reading included (before any context exists) */
    tf_tuning env;
    tf_tuning_default(&env);
    tf_tuning_from_env(&env);
    tf_mpi_set_timeout(env.mpi_timeout);
    cli_set_rank(*rank);
    if (*size > 1) warn_one_cpu(*rank, *size);
    return CLI_OK;
}

int cli_ranks_end(int rc, int size)
{
    /* a failure on some ranks: the others may wait in a collective. One
     * every rank reached alike: all end here, as after a success */
    if (size > 1 && rc != CLI_OK && !cli_failed_together()) {
        cli_flush_stdout();
        fflush(stderr);
        tf_mpi_abort(rc);
    }
    tf_mpi_stop();
    return rc;
}

void cli_agree_begin(tf_agree *a, const char *cmd, int parse_rc, const char *path)
{
    memset(a, 0, sizeof *a);
    tf_agree_add(a, "command", cmd);
    tf_agree_add(a, "options", parse_rc < 0 ? "valid" : parse_rc == 0 ? "--help" : "a usage error (above)");
    if (parse_rc >= 0) return; /* nothing more was parsed */
    const char *spec = cli_generated(path);
    char what[1100];
    if (spec) snprintf(what, sizeof what, "generated: --gen %s", spec);
    else snprintf(what, sizeof what, "%s", strcmp(path, "-") ? "a file" : "standard input ('-')");
    tf_agree_add(a, "input", what);
}

void cli_agree_str(tf_agree *a, const char *name, const char *value)
{
    tf_agree_add(a, name, value ? value : "(none)");
}

void cli_agree_u64(tf_agree *a, const char *name, uint64_t value)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)value);
    tf_agree_add(a, name, buf);
}

void cli_agree_double(tf_agree *a, const char *name, double value)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", value);
    tf_agree_add(a, name, buf);
}

void cli_agree_gpus(tf_agree *a, const cli_gpus *g)
{
    char buf[TF_MAX_GPUS * 6 + 8] = "(none)", *at = buf;
    if (g->all) snprintf(buf, sizeof buf, "all");
    for (int i = 0; !g->all && i < g->n; ++i)
        at += snprintf(at, sizeof buf - (size_t)(at - buf), "%s%d", i ? "," : "", g->dev[i]);
    tf_agree_add(a, "--gpus", buf);
}

int cli_ranks_agree(const tf_agree *a, int size)
{
    if (size < 2) return CLI_OK;
    return tf_mpi_agree(a) == TF_OK ? CLI_OK : cli_fail();
}

int cli_ranks_agree_input(const tf_tensor *t, const tf_read_info *info, int threads, int size)
{
    if (size < 2) return CLI_OK;
    char dims[TF_MAX_ORDER * 24];
    tf_agree a;
    memset(&a, 0, sizeof a);
    cli_agree_u64(&a, "order", t->order);
    tf_agree_add(&a, "dims", cli_dims(dims, sizeof dims, t->order, t->dims));
    cli_agree_u64(&a, "non-zeros", info->total_nnz > t->nnz ? info->total_nnz : t->nnz);
    /* a part read (cli_load_part) brings the whole tensor's; a whole one is hashed here */
    const uint64_t sum = info->checksum ? info->checksum : tf_tensor_checksum(t, threads);
    char hex[24];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)sum);
    tf_agree_add(&a, "checksum", hex);
    return cli_ranks_agree(&a, size);
}

int cli_ranks_same_command(int *argc, char ***argv, const char *cmd)
{
    int rank = 0, size = 1;
    if (!tf_have_mpi()) return CLI_OK; /* each rank runs the command alone, as ever */
    if (tf_mpi_start(argc, argv, &rank, &size) != TF_OK) return cli_fail();
    cli_set_rank(rank);
    int rc = CLI_OK;
    if (size > 1) {
        tf_agree a;
        memset(&a, 0, sizeof a);
        tf_agree_add(&a, "command", cmd);
        rc = cli_ranks_agree(&a, size);
    }
    return cli_ranks_end(rc, size);
}
