/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI for runs over several processes (built when CMake finds MPI): start
 * and stop, and the collectives of backend/dist.h over MPI_COMM_WORLD. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/dist.h"
#include "core/alloc.h"
#include "core/error.h"
#include "dist/launch.h"

static int started; /* 1 when tf_mpi_start called MPI_Init */

int tf_have_mpi(void) { return 1; }

void tf_mpi_describe(char *buf, size_t len)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    if (MPI_Get_library_version(v, &n) != MPI_SUCCESS) n = 0;
    v[n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1] = 0;
    const size_t line = strcspn(v, ",\n"); /* up to the first comma or line end */
    if (len) snprintf(buf, len, "%.*s", (int)line, v);
}

tf_status tf_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
    *rank = 0;
    *size = 1;
    int init = 0;
    MPI_Initialized(&init);
    if (!init && !tf_launched_with_ranks()) return TF_OK; /* one process: no MPI at all */
    if (!init) {
        int provided = 0;
        if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
            return tf_fail(TF_ERR_UNAVAILABLE, "MPI_Init_thread failed");
        started = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return TF_OK;
}

void tf_mpi_stop(void)
{
    int fin = 0;
    if (!started) return;
    MPI_Finalized(&fin);
    if (!fin) MPI_Finalize();
    started = 0;
}

void tf_mpi_abort(int code)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Abort(MPI_COMM_WORLD, code);
    exit(code);
}

static tf_status mpi_fail(const char *what, int rc)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
    msg[len] = 0;
    return tf_fail(TF_ERR_IO, "%s failed: %s", what, msg);
}

static tf_status allgather_rows(double *a, const uint64_t *row_lo, uint64_t cols)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *cnt = NULL, *disp = NULL;
    tf_status s = TF_ALLOC(cnt, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(disp, (uint64_t)size, "MPI displacements");
    for (int r = 0; s == TF_OK && r < size; ++r) {
        const uint64_t n = (row_lo[r + 1] - row_lo[r]) * cols, at = row_lo[r] * cols;
        if (n > INT_MAX || at > INT_MAX)
            s = tf_fail(TF_ERR_RANGE, "MPI all-gather: %llu values from rank %d exceed an int's count",
                        (unsigned long long)n, r);
        else {
            cnt[r] = (int)n;
            disp[r] = (int)at;
        }
    }
    if (s == TF_OK) {
        const int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a, cnt, disp, MPI_DOUBLE, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) s = mpi_fail("MPI_Allgatherv of factor rows", rc);
    }
    tf_free(cnt);
    tf_free(disp);
    return s;
}

static tf_status allreduce_sum(double *x, uint64_t n)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_RANGE, "MPI all-reduce of %llu values", (unsigned long long)n);
    const int rc = MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? TF_OK : mpi_fail("MPI_Allreduce", rc);
}

static tf_status bcast_bytes(void *buf, uint64_t n)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_ARG, "MPI broadcast of %llu bytes", (unsigned long long)n);
    const int rc = MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? TF_OK : mpi_fail("MPI_Bcast", rc);
}

/* This rank's place among the ranks that share its node. */
static int node_rank(void)
{
    MPI_Comm node;
    int r = 0;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS) return 0;
    MPI_Comm_rank(node, &r);
    MPI_Comm_free(&node);
    return r;
}

tf_status tf_dist_world(tf_dist *d)
{
    int init = 0;
    MPI_Initialized(&init);
    if (!init) return tf_fail(TF_ERR_ARG, "a distributed context needs MPI started first (tf_mpi_start)");
    MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &d->size);
    d->allgather_rows = allgather_rows;
    d->allreduce_sum = allreduce_sum;
    d->bcast_bytes = bcast_bytes;
    d->local_rank = node_rank();
    return TF_OK;
}
