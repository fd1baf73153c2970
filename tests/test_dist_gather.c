/* SPDX-License-Identifier: BSD-3-Clause */
/* The ranks' all-gathers (src/ranks/mpi.c, seams/dist.h): allgather_bytes
 * (rows of any byte width, moved as they are: the GPU exchange's host
 * staging sends fp32 rows and device UUIDs through it) and allgather_rows
 * (doubles), on 3 ranks with unequal row ranges (one rank with none),
 * widths 4 (an fp32 row of one column), 12, 16 and 40 bytes, and rounds of
 * 1 byte (one row a round), 64 bytes and the default; every row not the
 * rank's own poisoned beforehand, every byte checked after; and the
 * all-to-all of several arrays (alltoall_arrays). Run plainly it
 * starts itself on 3 ranks (mpirun); skipped (77) without MPI in the build
 * or without mpirun. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/environment.h"
#include "mpi_self.h"
#include "seams/dist.h"

/* byte b of row i: a function of both, never the poison */
static unsigned char want(uint64_t i, uint64_t b) { return (unsigned char)(1 + (i * 31 + b * 7) % 250); }

static void bytes_case(const tf_dist *d, uint64_t row_bytes, uint64_t round_bytes)
{
    const uint64_t row_lo[4] = {0, 5, 5, 12}; /* rank 1 owns no rows */
    const uint64_t rows = row_lo[d->size];
    unsigned char *a = malloc((size_t)(rows * row_bytes));
    memset(a, 0xEE, (size_t)(rows * row_bytes)); /* poison */
    for (uint64_t i = row_lo[d->rank]; i < row_lo[d->rank + 1]; ++i)
        for (uint64_t b = 0; b < row_bytes; ++b) a[i * row_bytes + b] = want(i, b);
    CHECK_OK(d->allgather_bytes(a, row_lo, row_bytes, round_bytes));
    uint64_t bad = 0;
    for (uint64_t i = 0; i < rows; ++i)
        for (uint64_t b = 0; b < row_bytes; ++b) bad += a[i * row_bytes + b] != want(i, b);
    CHECKF(bad == 0, "rank %d: rows of %llu bytes, rounds of %llu: %llu bytes wrong", d->rank,
           (unsigned long long)row_bytes, (unsigned long long)round_bytes, (unsigned long long)bad);
    free(a);
}

static void rows_case(const tf_dist *d, uint64_t round_bytes)
{
    const uint64_t row_lo[4] = {0, 2, 9, 9}, cols = 3; /* rank 2 owns no rows */
    double a[27];
    for (int k = 0; k < 27; ++k) a[k] = -1e300;
    for (uint64_t i = row_lo[d->rank]; i < row_lo[d->rank + 1]; ++i)
        for (uint64_t c = 0; c < cols; ++c) a[i * cols + c] = (double)(i * 10 + c) + 0.25;
    CHECK_OK(d->allgather_rows(a, row_lo, cols, round_bytes));
    int bad = 0;
    for (uint64_t i = 0; i < 9; ++i)
        for (uint64_t c = 0; c < cols; ++c) bad += a[i * cols + c] != (double)(i * 10 + c) + 0.25;
    CHECKF(bad == 0, "rank %d: allgather_rows, rounds of %llu bytes: %d values wrong", d->rank,
           (unsigned long long)round_bytes, bad);
}

/* alltoall_arrays: three arrays (8-, 4- and 2-byte items) moved alike;
 * rank s sends rank r (s + 2r) % 4 items (some pairs none), the receiver's
 * blocks in rank order with its own left in place (poisoned: must stay so),
 * in rounds of one item, 20 bytes and the default. */
static uint64_t pair_n(int s, int r) { return (uint64_t)(s + 2 * r) % 4; }
static uint64_t item(int s, int r, uint64_t k, int a) { return 1 + (uint64_t)s * 1000 + (uint64_t)r * 100 + k * 10 + a; }

static void arrays_case(const tf_dist *d, uint64_t round_bytes)
{
    const int P = d->size, me = d->rank;
    uint64_t sn[3], sa[3], rn[3], ra[3], ns = 0, nr = 0;
    for (int r = 0; r < P; ++r) {
        sn[r] = pair_n(me, r), sa[r] = ns, ns += sn[r];
        rn[r] = pair_n(r, me), ra[r] = nr, nr += rn[r];
    }
    uint64_t s64[12], r64[12];
    uint32_t s32[12], r32[12];
    uint16_t s16[12], r16[12];
    for (int r = 0; r < P; ++r)
        for (uint64_t k = 0; k < sn[r]; ++k) {
            s64[sa[r] + k] = item(me, r, k, 0);
            s32[sa[r] + k] = (uint32_t)item(me, r, k, 1);
            s16[sa[r] + k] = (uint16_t)item(me, r, k, 2);
        }
    memset(r64, 0xEE, sizeof r64), memset(r32, 0xEE, sizeof r32), memset(r16, 0xEE, sizeof r16);
    const void *send[3] = {s64, s32, s16};
    void *recv[3] = {r64, r32, r16};
    const uint32_t bytes[3] = {8, 4, 2};
    CHECK_OK(d->alltoall_arrays(3, send, recv, bytes, sn, sa, rn, ra, round_bytes));
    int bad = 0;
    for (int r = 0; r < P; ++r)
        for (uint64_t k = 0; k < rn[r]; ++k) {
            const uint64_t at = ra[r] + k;
            if (r == me) { /* not moved */
                bad += r64[at] != 0xEEEEEEEEEEEEEEEEull || r32[at] != 0xEEEEEEEEu || r16[at] != 0xEEEE;
                continue;
            }
            bad += r64[at] != item(r, me, k, 0) || r32[at] != (uint32_t)item(r, me, k, 1) ||
                   r16[at] != (uint16_t)item(r, me, k, 2);
        }
    CHECKF(bad == 0, "rank %d: alltoall_arrays, rounds of %llu bytes: %d items wrong", me,
           (unsigned long long)round_bytes, bad);
}

static int on_ranks(int argc, char **argv)
{
    int rank = 0, size = 1;
    CHECK_OK(tf_mpi_start(&argc, &argv, &rank, &size));
    if (size != 3) {
        tf_mpi_stop();
        return tf_test_skip("test_dist_gather", "needs 3 ranks");
    }
    tf_dist d;
    memset(&d, 0, sizeof d);
    CHECK_OK(tf_dist_world(&d));
    CHECKF(d.allgather_bytes != NULL, "the MPI table has no allgather_bytes");
    if (d.allgather_bytes) {
        const uint64_t widths[] = {4, 12, 16, 40}, rounds[] = {1, 64, 0};
        for (size_t w = 0; w < sizeof widths / sizeof widths[0]; ++w)
            for (size_t r = 0; r < sizeof rounds / sizeof rounds[0]; ++r) bytes_case(&d, widths[w], rounds[r]);
        CHECK_FAILS(d.allgather_bytes(NULL, (const uint64_t[]){0, 0, 0, 0}, 0, 0), TF_ERR_RANGE, "rows of 0 bytes");
    }
    rows_case(&d, 8);
    rows_case(&d, 0);
    CHECKF(d.alltoall_arrays != NULL, "the MPI table has no alltoall_arrays");
    if (d.alltoall_arrays) {
        arrays_case(&d, 1);
        arrays_case(&d, 20);
        arrays_case(&d, 0);
        CHECK_FAILS(d.alltoall_arrays(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0), TF_ERR_ARG, "0 arrays");
    }
    char name[64];
    snprintf(name, sizeof name, "test_dist_gather (rank %d)", rank);
    const int rc = tf_test_finish(name);
    tf_mpi_stop();
    return rc;
}

int main(int argc, char **argv)
{
    if (tf_env_launcher_ranks() > 0) return on_ranks(argc, argv);
    return tf_test_mpi_self("test_dist_gather", argv[0], 3, 120);
}
