/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenMP threads wait passively (sleep instead of spinning) unless the user
 * chose a policy: on a loaded 2-core machine, `-t 2` took 1.1-2.3 s against
 * 0.72 s for `-t 1` with the default spinning, and 0.53-0.60 s passive.
 * libgomp reads OMP_WAIT_POLICY / GOMP_SPINCOUNT once, in its library
 * constructor, which runs before main: a setenv in main comes too late, and
 * one in the executable's pre-initialisation function is lost (libc sets its
 * environment pointer after it). So the variable is set and the tool
 * re-executes itself once (/proc/self/exe, same arguments, descriptors and
 * process id); the child finds the variable and goes on. If the exec fails,
 * the run goes on with the runtime's default. Only the tool does this; the
 * library never touches the environment.
 *
 * The exec keeps the calling thread's CPU mask, and under OMP_PROC_BIND /
 * OMP_PLACES libgomp's constructor has already bound that thread to the
 * first place (one CPU with OMP_PLACES=threads). The new image then saw a
 * one-CPU process: its places were that CPU alone, every OpenMP thread was
 * bound to it and OpenBLAS started no threads (issue 48: 3-13x slower on 32
 * cores). So the mask the process started with is saved before any
 * library's constructor runs and put back before the exec.
 *
 * The same way, under an address-space limit (ulimit -v) OpenBLAS is kept
 * to the calling thread (OPENBLAS_NUM_THREADS=1, unless the user set it):
 * its constructor starts a worker thread per core, each of which maps a
 * 128 MiB work buffer first thing, and where the limit leaves no room for
 * it, retries forever -- a process at 100 % CPU that then hangs at exit
 * joining the worker. tenfold never runs BLAS on OpenBLAS's threads (its
 * CP-ALS calls BLAS from its own OpenMP threads, src/cpu/dense.c), so
 * nothing is lost. */
#include "wait_policy.h"

#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

/* 8192 CPUs: the kernel fails sched_getaffinity on a smaller buffer than
 * its own mask, and cpu_set_t holds only 1024. */
static unsigned long start_mask[8192 / (8 * sizeof(unsigned long))];
static int start_known;

static void save_start_cpus(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    (void)envp;
    start_known = sched_getaffinity(0, sizeof start_mask, (cpu_set_t *)start_mask) == 0;
}

/* The dynamic linker runs the executable's pre-initialisation functions
 * before the constructor of any library (libgomp's included). */
__attribute__((section(".preinit_array"), used)) static void (*const save_start_cpus_at_start)(int, char **,
                                                                                              char **) =
    save_start_cpus;

const cpu_set_t *cli_start_cpus(size_t *size)
{
    *size = sizeof start_mask;
    return start_known ? (const cpu_set_t *)start_mask : NULL;
}

void cli_prepare_environment(char **argv)
{
    const int wait = !getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT");
    struct rlimit as;
    const int blas = !getenv("OPENBLAS_NUM_THREADS") && getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY;
    if (!wait && !blas) return;
    /* without the starting mask, no exec: the child could be held to one CPU */
    if (!start_known || sched_setaffinity(0, sizeof start_mask, (const cpu_set_t *)start_mask) != 0) return;
    if (wait && setenv("OMP_WAIT_POLICY", "PASSIVE", 1) != 0) return;
    if (blas && setenv("OPENBLAS_NUM_THREADS", "1", 1) != 0) return;
    execv("/proc/self/exe", argv);
}
