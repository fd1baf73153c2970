/* SPDX-License-Identifier: BSD-3-Clause */
/* Without MPI (CMake did not find it): one process. */
#include <stdio.h>
#include <stdlib.h>

#include "seams/dist.h"
#include "core/error.h"
#include "ranks/launch.h"

int tf_have_mpi(void) { return 0; }

void tf_mpi_describe(char *buf, size_t len)
{
    if (buf && len) snprintf(buf, len, "none");
}

tf_status tf_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
    (void)argc;
    (void)argv;
    if (!rank) return tf_fail(TF_ERR_ARG, "tf_mpi_start: rank is NULL");
    if (!size) return tf_fail(TF_ERR_ARG, "tf_mpi_start: size is NULL");
    *rank = 0;
    *size = 1;
    if (tf_launched_with_ranks()) /* each rank would run the whole job and write the same files */
        return tf_fail(TF_ERR_UNAVAILABLE, "started as one of several MPI ranks, but this build of tenfold "
                                           "has no MPI (install OpenMPI and rebuild)");
    return TF_OK;
}

void tf_mpi_stop(void) {}

void tf_mpi_set_timeout(double seconds) { (void)seconds; }

void tf_mpi_abort(int code) { exit(code); }

tf_status tf_mpi_allreduce_sum(double *x, uint64_t n)
{
    if (!x && n) return tf_fail(TF_ERR_ARG, "tf_mpi_allreduce_sum: x is NULL (%llu values)", (unsigned long long)n);
    return TF_OK; /* one process: the sum is x */
}

tf_status tf_mpi_agree(const tf_agree *a)
{
    (void)a;
    return TF_OK; /* one process agrees with itself */
}

tf_status tf_dist_world(tf_dist *d)
{
    (void)d;
    return tf_fail(TF_ERR_UNAVAILABLE, "this build of tenfold has no MPI (install OpenMPI and rebuild)");
}
