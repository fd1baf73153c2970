/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold info: version, build options, threads and GPUs. */
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"

static const char help[] =
    "usage: tenfold info [--threads]\n"
    "\n"
    "Prints the version, the git commit and compiler of the build, the\n"
    "BLAS/LAPACK library in use, whether the CUDA backend is built in (with\n"
    "the toolkit, runtime and driver versions) and where its module\n"
    "libtenfold_cuda.so was loaded from (or why it was not: TF_CUDA_MODULE\n"
    "names the file to load), the default number of CPU threads\n"
    "(OMP_NUM_THREADS overrides it), the GPUs found, and for several GPUs\n"
    "NCCL's version and which GPUs reach each other directly (peer access),\n"
    "and how factor rows go among GPUs and GPU ranks (TF_EXCHANGE=auto|nccl|host).\n"
    "\n"
    "      --threads  only the CPU threads: the OpenMP team, the BLAS library's\n"
    "                 threads, the OpenMP binding (OMP_PROC_BIND, OMP_PLACES) and\n"
    "                 wait policy in force and the CPUs the process may use (as\n"
    "                 cpd -v prints it), then the CPUs each thread of a parallel\n"
    "                 region may run on ('team:') and those of the process's\n"
    "                 other threads, such as the BLAS library's ('others:')\n";

/* 13000 -> "13.0" */
static const char *cuda_version(int v, char *buf, size_t len)
{
    if (v <= 0) snprintf(buf, len, "none");
    else snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
    return buf;
}

int cmd_info(int argc, char **argv)
{
    cli_args a;
    int threads_only = 0;
    const cli_opt opts[] = {{"threads", 0, NULL, &threads_only}, {0}};
    int rc = cli_parse(&a, "info", help, argc, argv, opts, 0, 0, "");
    if (rc >= 0) return rc;
    if (threads_only) {
        char line[1024], where[8192];
        tf_threads_describe(0, NULL, 0, line, sizeof line);
        tf_threads_placement(0, where, sizeof where);
        printf("threads: %s\n%s\n", line, where);
        return 0;
    }
    tf_build_info b;
    tf_get_build_info(&b);
    char rt[16], drv[16];
    printf("tenfold %s\n", b.version);
    printf("commit:  %s\n", b.commit);
    printf("compiler: %s\n", b.compiler);
    printf("blas:    %s\n", b.blas_lapack);
    char where[1024]; /* the GPU part: loads the CUDA module */
    const tf_cuda_module_state st = tf_cuda_module(1, where, sizeof where);
    if (st == TF_CUDA_MODULE_LOADED && b.cuda_driver <= 0)
        printf("build:   CUDA backend yes (toolkit %s, runtime %s); no NVIDIA driver on this machine, so no GPU "
               "can be used: commands run on the CPU\n", b.cuda_toolkit, cuda_version(b.cuda_runtime, rt, sizeof rt));
    else if (st == TF_CUDA_MODULE_LOADED)
        printf("build:   CUDA backend yes (toolkit %s, runtime %s, driver up to CUDA %s)\n", b.cuda_toolkit,
               cuda_version(b.cuda_runtime, rt, sizeof rt), cuda_version(b.cuda_driver, drv, sizeof drv));
    else if (st == TF_CUDA_MODULE_NONE)
        printf("build:   CUDA backend no\n");
    else
        printf("build:   CUDA backend yes (toolkit %s), not available\n", b.cuda_toolkit);
    if (st != TF_CUDA_MODULE_NONE)
        printf("module:  %s%s\n", st == TF_CUDA_MODULE_LOADED ? "loaded " : "", where);
    char mpi[256];
    tf_mpi_describe(mpi, sizeof mpi);
    if (tf_have_mpi()) printf("mpi:     yes, %s (mpirun -np P tenfold cpd ...: CPU or GPU ranks)\n", mpi);
    else printf("mpi:     no\n");
    printf("threads: %d (CPU backend default)\n", tf_default_threads());
    int n = tf_gpu_count();
    printf("gpus:    %d found%s\n", n,
           n > 0 && getenv("TF_TEST_GPUS") ? " (TF_TEST_GPUS test mode: GPU i is physical GPU i mod the count)" : "");
    for (int d = 0; d < n; ++d) {
        char desc[256];
        if (tf_gpu_describe(d, desc, sizeof desc) == TF_OK) printf("  gpu %d: %s\n", d, desc);
        else printf("  gpu %d: (%s)\n", d, tf_last_error());
    }
    if (n > 0) {
        char links[512];
        tf_gpu_links(links, sizeof links);
        printf("links:   %s\n", links);
    }
    if (st == TF_CUDA_MODULE_LOADED) { /* how factor rows go among GPUs: TF_EXCHANGE (tf_tuning_from_env) */
        tf_tuning t;
        tf_tuning_default(&t);
        tf_tuning_from_env(&t);
        if (t.gpu_exchange == 1) printf("exchange: nccl (TF_EXCHANGE=nccl: NCCL among GPUs and GPU ranks)\n");
        else if (t.gpu_exchange == 2)
            printf("exchange: host (TF_EXCHANGE=host: factor rows staged through pinned host memory, MPI between "
                   "GPU ranks)\n");
        else
            printf("exchange: auto (one process: peer copies where the GPUs reach each other, else NCCL, else the "
                   "host; GPU ranks: NCCL where it loads on every rank and their GPUs are distinct, else host "
                   "staging over MPI; TF_EXCHANGE=auto|nccl|host)\n");
    }
    return 0;
}
