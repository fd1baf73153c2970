/* SPDX-License-Identifier: BSD-3-Clause */
/* The one reader of the process environment in the library: named
 * accessors for the variables it describes or obeys (the CUDA module's
 * path, the launchers' rank counts, OpenMP's and OpenBLAS's settings), and
 * tf_tuning_from_env, the TF_* overrides of the tuning policy, read only
 * when a caller asks (the tenfold tool and the benchmarks do). Nothing else
 * in src/ calls getenv (scripts/check-source). */
#include "core/environment.h"

#include <stdlib.h>
#include <string.h>

#include "core/tuning.h"
#include "tenfold.h"

/* The variable's value, or NULL when it is not set. */
static const char *var(const char *name) { return getenv(name); }

const char *tf_env_cuda_module(void)
{
    const char *v = var("TF_CUDA_MODULE");
    return v && *v ? v : NULL;
}

int tf_env_launcher_ranks(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS",
                                       "SLURM_NTASKS"};
    int most = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; ++i) {
        const char *v = var(vars[i]);
        const int n = v ? atoi(v) : 0;
        if (n > most) most = n;
    }
    return most;
}

const char *tf_env_cuda_visible_devices(void) { return var("CUDA_VISIBLE_DEVICES"); }

int tf_env_omp_num_threads_set(void) { return var("OMP_NUM_THREADS") != NULL; }
const char *tf_env_openblas_num_threads(void) { return var("OPENBLAS_NUM_THREADS"); }
const char *tf_env_omp_places(void) { return var("OMP_PLACES"); }
const char *tf_env_omp_wait_policy(void) { return var("OMP_WAIT_POLICY"); }
const char *tf_env_gomp_spincount(void) { return var("GOMP_SPINCOUNT"); }

int tf_env_gen_ranks_draw(void)
{
    const char *v = var("TF_GEN_RANKS_DRAW");
    return !v ? -1 : !strcmp(v, "share") ? 0 : !strcmp(v, "whole") ? 1 : -1;
}

int tf_env_test_gpus(void)
{
    const char *s = var("TF_TEST_GPUS");
    char *end = NULL;
    const long v = s ? strtol(s, &end, 10) : 0;
    return s && end != s && *end == '\0' && v >= 1 && v <= TF_MAX_GPUS ? (int)v : 0;
}

/* ---- the tuning policy's overrides */

/* 1 if the variable is set to exactly `want`. */
static int env_is(const char *name, const char *want)
{
    const char *v = var(name);
    return v && !strcmp(v, want);
}

int tf_env_build_report(void) { return env_is("TF_BUILD_REPORT", "1"); }

/* The variable as an integer, if set to one; else *out is unchanged. */
static int env_ll(const char *name, long long *out)
{
    const char *v = var(name);
    if (!v || !*v) return 0;
    char *end = NULL;
    long long x = strtoll(v, &end, 10);
    if (*end) return 0;
    *out = x;
    return 1;
}

/* The variable as a number of seconds above 0, if set to one. */
static int env_seconds(const char *name, double *out)
{
    const char *v = var(name);
    if (!v || !*v) return 0;
    char *end = NULL;
    const double x = strtod(v, &end);
    if (*end || !(x > 0)) return 0;
    *out = x;
    return 1;
}

void tf_tuning_from_env(tf_tuning *caller)
{
    if (!caller) return;
    tf_tuning w; /* the whole policy: the caller's as far as its size reaches, defaults beyond */
    if (tf_tuning_take(&w, caller, "tf_tuning_from_env") != TF_OK) return;
    tf_tuning *t = &w;
    long long v = 0;
    double s = 0;
    /* F-COO */
    if (env_is("TF_AUTO_COST", "0")) t->auto_cost = 0;
    if (env_is("TF_FCOO_TUNE", "0")) t->fcoo_tune = 0;
    if (env_is("TF_FCOO_TUNE", "full")) t->fcoo_tune = 2;
    if (env_ll("TF_FCOO_TUNE_NNZ", &v) && v >= 1) t->fcoo_tune_nnz = (uint64_t)v;
    if (env_is("TF_FCOO_KERNEL", "scan")) t->fcoo_kernel = 1;
    if (env_is("TF_FCOO_KERNEL", "seg")) t->fcoo_kernel = 2;
    if (env_is("TF_FCOO_MINB", "pipe")) t->fcoo_variant = 5;
    else if (env_ll("TF_FCOO_MINB", &v) && v >= 2 && v <= 4) t->fcoo_variant = v;
    if (env_ll("TF_FCOO_PART", &v) && v >= 32 && v <= 65536 && v % 32 == 0) t->fcoo_part = (uint64_t)v;
    if (env_ll("TF_FCOO_SEG_PART", &v) && v >= 32 && v <= 65536 && v % 32 == 0) t->fcoo_seg_part = (uint64_t)v;
    if (env_ll("TF_FCOO_SLICE", &v) && (v == 16 || v == 32)) t->fcoo_slice = (uint64_t)v;
    if (env_is("TF_FCOO_VEC", "0")) t->fcoo_vec = 0;
    if (env_is("TF_FCOO_BUILD", "host")) t->fcoo_build = 1;
    if (env_is("TF_FCOO_BUILD", "device")) t->fcoo_build = 2;
    /* streamed F-COO */
    /* several GPUs or ranks: the cut of the rows */
    if (env_is("TF_GPU_SHARDS", "host")) t->gpu_shards = 1;
    if (env_is("TF_GPU_SHARDS", "device")) t->gpu_shards = 2;
    if (env_is("TF_GPU_SHARDS", "feed")) t->gpu_shards = 3;
    if (env_is("TF_PARTITION", "contiguous")) t->partition = TF_PARTITION_CONTIGUOUS;
    if (env_is("TF_PARTITION", "longest")) t->partition = TF_PARTITION_LONGEST_FIRST;
    if (env_is("TF_STREAM", "always")) t->stream = 1;
    if (env_is("TF_STREAM", "never")) t->stream = 2;
    if (env_ll("TF_STREAM_CHUNK", &v) && v >= 1) t->stream_chunk = (uint64_t)v;
    if (env_ll("TF_STREAM_RESIDENT", &v) && v >= 0 && v <= 100) t->stream_resident = v;
    if (env_is("TF_STREAM_PACK", "0")) t->stream_pack = 0;
    if (env_is("TF_STREAM_PACK", "keys")) t->stream_pack = 2; /* keys only, values as T */
    /* BLCO */
    if (env_is("TF_BLCO_RESOLUTION", "register")) t->blco_resolution = 1;
    if (env_is("TF_BLCO_RESOLUTION", "hierarchical")) t->blco_resolution = 2;
    if (env_is("TF_BLCO_HOT", "0")) t->blco_hot = 0;
    /* CP-ALS */
    if (var("TF_GPU_CUSOLVER")) t->cpd_cusolver = 1;
    if (env_is("TF_GPU_GRAPH", "0")) t->cpd_graph = 0;
    if (env_is("TF_GPU_OVERLAP", "0")) t->cpd_overlap = 0;
    /* the GPUs' factor-row exchange (TF_GPU_EXCHANGE=nccl: its older spelling) */
    if (env_is("TF_GPU_EXCHANGE", "nccl")) t->gpu_exchange = 1;
    if (env_is("TF_EXCHANGE", "auto")) t->gpu_exchange = 0;
    if (env_is("TF_EXCHANGE", "nccl")) t->gpu_exchange = 1;
    if (env_is("TF_EXCHANGE", "host")) t->gpu_exchange = 2;
    if (env_is("TF_GPU_APPLY", "custom")) t->cpd_apply = 1;
    if (env_is("TF_GPU_APPLY", "cublas")) t->cpd_apply = 2;
    if (env_is("TF_GPU_GRAM", "syrk")) t->cpd_gram_syrk = 1;
    if (env_is("TF_GPU_ADMM_FUSED", "0")) t->admm_fused = 0;
    if (env_is("TF_GPU_APPLY_GRAM", "0")) t->cpd_apply_gram = 0;
    if (env_is("TF_GPU_APPLY_GRAM", "1")) t->cpd_apply_gram = 1;
    if (env_ll("TF_GPU_GRAM_SOLVE", &v)) t->cpd_gram_solve_rows = v < 0 ? 0 : v;
    /* MPI ranks */
    if (env_ll("TF_MPI_ROUND", &v) && v >= 1) t->mpi_round_bytes = (uint64_t)v;
    /* SDDMM */
    if (env_ll("TF_SDDMM_ROW_GRID", &v) && v > 0 && v <= 0x7fffffff) t->sddmm_row_grid = (uint64_t)v;
    /* GCP */
    if (env_ll("TF_GCP_SMEM", &v) && v >= 0) t->gcp_smem = v;
    /* uploads, tests, measurements */
    if (env_is("TF_GPU_STAGING", "0")) t->gpu_staging = 0;
    if (env_is("TF_GPU_POISON", "1")) t->gpu_poison = 1;
    if (tf_env_build_report()) t->build_report = 1;
    /* the bounds of the waits on other ranks and GPUs */
    if (env_seconds("TF_MPI_TIMEOUT", &s)) t->mpi_timeout = s;
    if (env_seconds("TF_NCCL_TIMEOUT", &s)) t->nccl_timeout = s;
    tf_tuning_give(caller, &w);
}
