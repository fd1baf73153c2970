/* SPDX-License-Identifier: BSD-3-Clause */
/* A tensor read by the ranks of MPI_COMM_WORLD together
 * (tf_read_opts.collective, read_ranks.c), and the checks of read.c it
 * shares. */
#ifndef TF_IO_READ_RANKS_H
#define TF_IO_READ_RANKS_H

#include "io/readers.h"
#include "tenfold.h"

/* The first non-zero (0-based) whose value is not finite or whose index
 * is past its dim, UINT64_MAX if none; *canonical: 1 if the non-zeros are
 * strictly sorted and none is zero. */
uint64_t tf_scan_nonzeros(const tf_tensor *t, int threads, int *canonical);
/* The failure naming non-zero k of t (tf_scan_nonzeros), numbered as the
 * file's non-zero first + k + 1 (first: where t starts in the file). */
tf_status tf_bad_nonzero(const char *name, const tf_tensor *t, uint64_t k, uint64_t first);
/* The canonical form of a tensor read whole (canonical: 1 it is, 0 it is
 * not, -1 unknown: checked first), duplicates and zeros counted in info,
 * sums of duplicates checked finite (org: where each entry came from, for
 * the message); no non-zeros left is a failure (shared: every rank reached
 * it). t is freed on failure. */
tf_status tf_read_finish(const char *name, tf_tensor *t, const tf_read_opts *o, int canonical, int shared,
                         tf_read_info *info, const tf_origin *org);

/* The ranks meet before a read in parts (every rank calls it): the first
 * roll fixes each rank's default team (src/ranks/mpi.c) before the read's
 * threads start; a part that is not this rank's fails. */
tf_status tf_read_ranks_meet(const tf_read_opts *o);
/* A tenfold .bin of `size` bytes open on fd, read by every rank at its
 * part's offsets (o->part = rank, o->parts = ranks), with the checks one
 * process makes of the whole file made together; t gets the part. */
tf_status tf_read_bin_ranks(const char *name, int fd, uint64_t size, const tf_read_opts *o, tf_tensor *t,
                            tf_read_info *info);
/* t read whole and canonical on every rank: the ranks check they read the
 * same tensor, then each keeps its part. */
tf_status tf_read_whole_ranks(const char *name, const tf_read_opts *o, tf_tensor *t, tf_read_info *info);
#endif
