/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/mpi.h — runs over several processes (MPI ranks): start and stop,
 * the agreement of the ranks before they work together, and sums of reports. */
#ifndef TENFOLD_MPI_H
#define TENFOLD_MPI_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 if this build has MPI (several processes: `mpirun -np P tenfold cpd ...`). */
int tf_have_mpi(void);
/* The MPI library's name and version ("Open MPI v4.1.4, ..."; "none" without MPI). */
void tf_mpi_describe(char *buf, size_t len);
/* Starts MPI when mpirun / mpiexec / srun started this process as one of
 * several ranks (else nothing: *rank = 0, *size = 1). A build without MPI
 * started as one of several ranks fails (TF_ERR_UNAVAILABLE), so no rank
 * runs the whole job alone. */
tf_status tf_mpi_start(int *argc, char ***argv, int *rank, int *size);
/* Ends MPI if tf_mpi_start started it. */
void tf_mpi_stop(void);
/* Ends every rank with `code` (MPI_Abort) after a failure on this one, so no
 * rank waits in a collective for it; exit(code) without MPI. */
void tf_mpi_abort(int code);
/* The bound on every wait of tenfold's MPI collectives, in seconds, for the
 * whole process (MPI_COMM_WORLD is one): a rank that does not answer within
 * it fails the waiting ranks' call, naming it, instead of hanging them --
 * tf_mpi_agree, collective reads, and the collectives of distributed
 * contexts. 0 (or less): the default, 600. A context created with
 * distributed = 1 and a tuning whose mpi_timeout is not 0 sets it too. The
 * tenfold tool sets it from TF_MPI_TIMEOUT (tf_tuning_from_env) after
 * tf_mpi_start. Nothing in a build without MPI. */
void tf_mpi_set_timeout(double seconds);
/* x[0..n) summed over the ranks, the same on every rank (reports that
 * gather each rank's figures); x as it is when MPI was not started. */
tf_status tf_mpi_allreduce_sum(double *x, uint64_t n);

/* What the ranks of a run must agree on before they work together: named
 * fields (the command, each option that must match, the input's order,
 * dims, non-zeros and checksum), compared by value across the ranks. One
 * fixed size, so ranks that disagree on everything still exchange records
 * of one size. Zero it, then add fields in the same order on every rank. */
#define TF_AGREE_FIELDS 40
typedef struct tf_agree_field {
    char name[24];  /* "command", "-i/--iters", "dims", ...                 */
    char text[48];  /* the value as said in a message (cut with "..." when
                       longer)                                              */
    uint64_t hash;  /* of the whole value: what is compared                 */
} tf_agree_field;
typedef struct tf_agree {
    uint32_t n;
    tf_agree_field field[TF_AGREE_FIELDS];
} tf_agree;
/* Appends field `name` with its value as text (past TF_AGREE_FIELDS the
 * last field takes the rest: named "more", their values hashed together). */
void tf_agree_add(tf_agree *a, const char *name, const char *value);
/* Every rank of MPI_COMM_WORLD with its record (a collective): TF_OK when
 * all are equal; else TF_ERR_ARG on every rank with the same message,
 * "ranks disagree: rank R has NAME VALUE, rank 0 has VALUE" for the first
 * field where a rank differs from rank 0 and the lowest such rank, and
 * tf_last_error_shared() = 1. Like every collective of tenfold's ranks, a
 * rank that does not answer within the process's bound (tf_mpi_set_timeout,
 * default 600 s) fails the call, naming it. TF_OK with one process. */
tf_status tf_mpi_agree(const tf_agree *a);
/* 1 when the calling thread's last failure was reached by every rank of
 * MPI_COMM_WORLD together, with the same message (tf_mpi_agree; a file the
 * ranks read in parts that they refuse together): no rank waits for another,
 * so a program may say it once (rank 0) and end with tf_mpi_stop instead of
 * tf_mpi_abort. 0 otherwise: then the other ranks may be waiting. */
int tf_last_error_shared(void);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_MPI_H */
