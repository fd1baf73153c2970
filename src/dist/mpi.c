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
    if (buf && len) snprintf(buf, len, "%.*s", (int)line, v);
}

tf_status tf_mpi_start(int *argc, char ***argv, int *rank, int *size)
{
    if (!rank) return tf_fail(TF_ERR_ARG, "tf_mpi_start: rank is NULL");
    if (!size) return tf_fail(TF_ERR_ARG, "tf_mpi_start: size is NULL");
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

static tf_status allreduce_sum(double *x, uint64_t n);

tf_status tf_mpi_allreduce_sum(double *x, uint64_t n)
{
    if (!x && n) return tf_fail(TF_ERR_ARG, "tf_mpi_allreduce_sum: x is NULL (%llu values)", (unsigned long long)n);
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin) return TF_OK; /* one process: the sum is x */
    return allreduce_sum(x, n);
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

/* Items of item_bytes a rank sends a peer per round: round_bytes (0: 256
 * MiB) worth, at least one, at most `cap`. */
static uint64_t round_items(uint64_t round_bytes, uint64_t item_bytes, uint64_t cap)
{
    const uint64_t per = (round_bytes ? round_bytes : (uint64_t)256 << 20) / item_bytes;
    return per < 1 ? 1 : per > cap ? cap : per;
}

/* The round starting at item `lo` of every rank's block (block r: n[r]
 * items from item at[r] of one buffer), at most per items of each: cnt[r],
 * and disp[r] from *base, the round's first item (0 when the round is
 * empty). A displacement past an int is TF_ERR_RANGE. */
static tf_status round_piece(int size, const uint64_t *n, const uint64_t *at, uint64_t lo, uint64_t per, int *cnt,
                             int *disp, uint64_t *base)
{
    *base = UINT64_MAX;
    for (int r = 0; r < size; ++r) {
        cnt[r] = n[r] > lo ? (int)(n[r] - lo < per ? n[r] - lo : per) : 0;
        if (cnt[r] && at[r] + lo < *base) *base = at[r] + lo;
    }
    if (*base == UINT64_MAX) *base = 0; /* nothing this round */
    for (int r = 0; r < size; ++r) {
        const uint64_t d = cnt[r] ? at[r] + lo - *base : 0;
        if (d > INT_MAX)
            return tf_fail(TF_ERR_RANGE, "MPI: rank %d's block starts %llu items after the round's first, more than "
                                         "an int's count (use more ranks)", r, (unsigned long long)d);
        disp[r] = (int)d;
    }
    return TF_OK;
}

/* In rounds (round_piece): every rank knows every rank's count (row_lo is
 * the same everywhere), so all take part in the same rounds; each round
 * gathers the next piece of every rank's rows in place. */
static tf_status allgather_rows(double *a, const uint64_t *row_lo, uint64_t cols, uint64_t round_bytes)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const uint64_t per = round_items(round_bytes, sizeof(double), INT_MAX);
    uint64_t most = 0, *n = NULL, *at = NULL;
    int *cnt = NULL, *disp = NULL;
    tf_status s = TF_ALLOC(cnt, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(disp, (uint64_t)size, "MPI displacements");
    if (s == TF_OK) s = TF_ALLOC(n, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(at, (uint64_t)size, "MPI displacements");
    for (int r = 0; s == TF_OK && r < size; ++r) {
        n[r] = (row_lo[r + 1] - row_lo[r]) * cols;
        at[r] = row_lo[r] * cols;
        if (n[r] > most) most = n[r];
    }
    for (uint64_t lo = 0; s == TF_OK && lo < most; lo += per) {
        uint64_t base = 0;
        s = round_piece(size, n, at, lo, per, cnt, disp, &base);
        if (s != TF_OK) break;
        const int rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a + base, cnt, disp, MPI_DOUBLE,
                                      MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) s = mpi_fail("MPI_Allgatherv of rows", rc);
    }
    tf_free(cnt);
    tf_free(disp);
    tf_free(n);
    tf_free(at);
    return s;
}

static tf_status allreduce_sum(double *x, uint64_t n)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_RANGE, "MPI all-reduce of %llu values", (unsigned long long)n);
    const int rc = MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? TF_OK : mpi_fail("MPI_Allreduce", rc);
}

static tf_status allreduce_max(double *x, uint64_t n)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_RANGE, "MPI all-reduce of %llu values", (unsigned long long)n);
    const int rc = MPI_Allreduce(MPI_IN_PLACE, x, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return rc == MPI_SUCCESS ? TF_OK : mpi_fail("MPI_Allreduce", rc);
}

/* Records of rec bytes to their ranks (tf_dist.alltoall_records), in rounds
 * of at most round_records records a pair (round_piece): every rank takes
 * part in every round (the count is agreed by an all-reduce). */
static tf_status alltoall_rounds(const unsigned char *send, const uint64_t *send_n, const uint64_t *sd64,
                                 const uint64_t *rn, const uint64_t *rd64, uint32_t rec, uint64_t round_records,
                                 unsigned char *recv, int size)
{
    uint64_t most = 0;
    for (int r = 0; r < size; ++r) {
        if (send_n[r] > most) most = send_n[r];
        if (rn[r] > most) most = rn[r];
    }
    unsigned long long rounds = (unsigned long long)((most + round_records - 1) / round_records), all = 0;
    int e = MPI_Allreduce(&rounds, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (e != MPI_SUCCESS) return mpi_fail("MPI_Allreduce of the exchange's rounds", e);
    int *sc = NULL, *sd = NULL, *rc_ = NULL, *rd = NULL;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    tf_status s = TF_ALLOC(sc, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(sd, (uint64_t)size, "MPI displacements");
    if (s == TF_OK) s = TF_ALLOC(rc_, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(rd, (uint64_t)size, "MPI displacements");
    if (s == TF_OK) {
        e = MPI_Type_contiguous((int)rec, MPI_BYTE, &type);
        if (e == MPI_SUCCESS) e = MPI_Type_commit(&type);
        if (e != MPI_SUCCESS) s = mpi_fail("MPI_Type_contiguous", e);
    }
    for (unsigned long long k = 0; s == TF_OK && k < all; ++k) {
        /* this round's piece of every pair, packed */
        uint64_t base_s = 0, base_r = 0;
        s = round_piece(size, send_n, sd64, k * round_records, round_records, sc, sd, &base_s);
        if (s == TF_OK) s = round_piece(size, rn, rd64, k * round_records, round_records, rc_, rd, &base_r);
        if (s != TF_OK) break;
        e = MPI_Alltoallv((void *)(send + base_s * rec), sc, sd, type, recv + base_r * rec, rc_, rd, type,
                          MPI_COMM_WORLD);
        if (e != MPI_SUCCESS) s = mpi_fail("MPI_Alltoallv of non-zeros", e);
    }
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    tf_free(sc);
    tf_free(sd);
    tf_free(rc_);
    tf_free(rd);
    return s;
}

static tf_status alltoall_records(const void *send, const uint64_t *send_n, uint32_t rec, uint64_t round_bytes,
                                  void **recv, uint64_t *recv_total)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *recv = NULL;
    *recv_total = 0;
    uint64_t *rn = NULL, *sd = NULL, *rd = NULL;
    tf_status s = TF_ALLOC(rn, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(sd, (uint64_t)size, "MPI displacements");
    if (s == TF_OK) s = TF_ALLOC(rd, (uint64_t)size, "MPI displacements");
    if (s == TF_OK) {
        const int e = MPI_Alltoall((void *)send_n, 1, MPI_UINT64_T, rn, 1, MPI_UINT64_T, MPI_COMM_WORLD);
        if (e != MPI_SUCCESS) s = mpi_fail("MPI_Alltoall of record counts", e);
    }
    uint64_t at = 0, rat = 0;
    for (int r = 0; s == TF_OK && r < size; ++r) {
        sd[r] = at;
        rd[r] = rat;
        at += send_n[r];
        rat += rn[r];
    }
    if (s == TF_OK) s = tf_alloc(recv, rat ? rat : 1, rec, "received non-zeros");
    if (s == TF_OK) {
        s = alltoall_rounds((const unsigned char *)send, send_n, sd, rn, rd, rec, round_items(round_bytes, rec, INT_MAX),
                            (unsigned char *)*recv, size);
    }
    if (s == TF_OK) *recv_total = rat;
    else {
        tf_free(*recv);
        *recv = NULL;
    }
    tf_free(rn);
    tf_free(sd);
    tf_free(rd);
    return s;
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
    d->allreduce_max = allreduce_max;
    d->alltoall_records = alltoall_records;
    d->local_rank = node_rank();
    return TF_OK;
}
