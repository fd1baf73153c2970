/* SPDX-License-Identifier: BSD-3-Clause */
/* A C test that runs itself on MPI ranks: main, when not launched by mpirun
 * (tf_env_launcher_ranks() == 0), calls tf_test_mpi_self to start `np`
 * copies of the program under mpirun, as tests/cli/lib/mpi.bash does for
 * the CLI: no remote launcher, no cross-process memory attach, one thread
 * a rank, and in a sanitizer build what MPI_Init keeps to the end not
 * counted as our leak. */
#ifndef TF_TESTS_MPI_SELF_H
#define TF_TESTS_MPI_SELF_H
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "tenfold.h"

/* Skips (no MPI, no mpirun) or runs argv0 on nps[0], then nps[1], ...
 * ranks (n runs), each within timeout_s; returns the test's exit status. */
static inline int tf_test_mpi_selves(const char *name, const char *argv0, const int *nps, int n, int timeout_s)
{
    if (!tf_have_mpi()) return tf_test_skip(name, "no MPI in this build");
    if (system("command -v mpirun >/dev/null 2>&1") != 0) return tf_test_skip(name, "no mpirun");
    setenv("OMPI_MCA_plm", "isolated", 0);
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
    setenv("OMP_NUM_THREADS", "1", 1);
    char supp[512];
    snprintf(supp, sizeof supp, "%s/%s.lsan", TF_TEST_TMP, name);
    FILE *f = fopen(supp, "w");
    if (f) {
        fputs("leak:MPI_Init_thread\nleak:MPI_Finalize\nleak:libmpi.so\nleak:libopen-pal.so\nleak:libopen-rte.so\n"
              "leak:libevent\n",
              f);
        fclose(f);
        char opt[1024];
        const char *old = getenv("LSAN_OPTIONS");
        snprintf(opt, sizeof opt, "%s%ssuppressions=%s:print_suppressions=0", old ? old : "", old ? ":" : "", supp);
        setenv("LSAN_OPTIONS", opt, 1);
        const char *asan = getenv("ASAN_OPTIONS"); /* full stacks, so the suppressions see the MPI frames */
        snprintf(opt, sizeof opt, "%s%sfast_unwind_on_malloc=0", asan ? asan : "", asan ? ":" : "");
        setenv("ASAN_OPTIONS", opt, 1);
    }
    for (int i = 0; i < n; ++i) {
        char cmd[4096];
        snprintf(cmd, sizeof cmd, "timeout %d mpirun --allow-run-as-root --oversubscribe -np %d '%s'", timeout_s,
                 nps[i], argv0);
        const int rc = system(cmd);
        CHECKF(rc == 0, "%d ranks of %s: exit status %d", nps[i], argv0, rc);
    }
    return tf_test_finish(name);
}

/* Skips (no MPI, no mpirun) or runs argv0 on np ranks within timeout_s;
 * returns the test's exit status. */
static inline int tf_test_mpi_self(const char *name, const char *argv0, int np, int timeout_s)
{
    return tf_test_mpi_selves(name, argv0, &np, 1, timeout_s);
}
#endif
