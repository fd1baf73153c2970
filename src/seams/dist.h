/* SPDX-License-Identifier: BSD-3-Clause */
/* The collectives of a run over several processes (src/ranks/mpi.c with MPI,
 * src/ranks/nompi.c without): the front end hands them to the CPU backend,
 * which never calls MPI itself. Results are the same on every rank. New
 * members go at the end (the CUDA module is built against this layout). */
#ifndef TF_SEAMS_DIST_H
#define TF_SEAMS_DIST_H
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "tenfold.h"

typedef enum tf_dist_op { TF_RANKS_MIN, TF_RANKS_MAX, TF_RANKS_XOR } tf_dist_op;

typedef struct tf_dist {
    int rank, size;
    int local_rank; /* rank among the ranks of this node that see the same GPUs: its GPU (ranks/local.c) */
    /* Every rank's rows [row_lo[r], row_lo[r+1]) of the row-major matrix a
     * (cols columns) to every rank, in place; at most round_bytes (0: 256
     * MiB) from each rank per round, as alltoall_records. */
    tf_status (*allgather_rows)(double *a, const uint64_t *row_lo, uint64_t cols, uint64_t round_bytes);
    /* x[0..n) summed over the ranks, the same on every rank. */
    tf_status (*allreduce_sum)(double *x, uint64_t n);
    /* n bytes of rank 0's buf to every rank (the NCCL id of GPU ranks). */
    tf_status (*bcast_bytes)(void *buf, uint64_t n);
    /* x[0..n) the largest over the ranks, the same on every rank. */
    tf_status (*allreduce_max)(double *x, uint64_t n);
    /* Records of rec bytes: send[rank r's block] (blocks in rank order,
     * send_n[r] records to rank r) to their ranks; *recv (allocated with
     * tf_alloc, freed by the caller) gets every rank's block for this one
     * in rank order, *recv_total records in all. At most round_bytes (0:
     * 256 MiB) go between two ranks per round: messages of several GB in
     * one piece stall some MPI transports (a billion non-zeros over two
     * ranks is 5 GB a pair). */
    tf_status (*alltoall_records)(const void *send, const uint64_t *send_n, uint32_t rec, uint64_t round_bytes,
                                  void **recv, uint64_t *recv_total);
    uint64_t round_bytes; /* for the two above: the context's tuning.mpi_round_bytes */
    /* x[0..n) combined over the ranks by op, the same on every rank. */
    tf_status (*allreduce_u64)(uint64_t *x, uint64_t n, tf_dist_op op);
    /* n bytes of rank root's buf to every rank. */
    tf_status (*bcast_from)(void *buf, uint64_t n, int root);
    /* tf_mpi_agree over these ranks: TF_OK when every rank's record equals
     * rank 0's, else the same shared failure on every rank. */
    tf_status (*agree)(const tf_agree *a);
    /* x[0..n) summed over the ranks into rank root's x (the others' x
     * unchanged); may be NULL (a table made before it: allreduce_sum). */
    tf_status (*reduce_sum)(double *x, uint64_t n, int root);
    /* As allgather_rows for rows of row_bytes bytes each, moved as they are
     * (fp32 factor rows, device UUIDs: the GPU exchange's host staging,
     * src/gpu/exec/exchange_host.cu); may be NULL (a table made before it). */
    tf_status (*allgather_bytes)(void *a, const uint64_t *row_lo, uint64_t row_bytes, uint64_t round_bytes);
    /* `arrays` arrays of items moved alike (an SoA tensor's index and value
     * arrays), array a's items of item_bytes[a]: send_n[r] items of each
     * from send[a] + send_at[r] items to rank r, and recv_n[r] items from
     * rank r into recv[a] + recv_at[r] items, straight into the caller's
     * arrays (recv_n[r]: what rank r's send_n said; this rank's own block,
     * send_n[rank] and recv_n[rank], is not moved: the caller copies it). At
     * most round_bytes (0: 256 MiB) of all the arrays between two ranks per
     * round. May be NULL (a table made before it). */
    tf_status (*alltoall_arrays)(int arrays, const void *const *send, void *const *recv, const uint32_t *item_bytes,
                                 const uint64_t *send_n, const uint64_t *send_at, const uint64_t *recv_n,
                                 const uint64_t *recv_at, uint64_t round_bytes);
    /* The most bytes of non-zeros a rank packs for the others at once in
     * the exchange of a distributed input's shards (tf_partition_exchange:
     * it packs and sends its part in rounds of this much); 0: 32 MiB. */
    uint64_t pack_bytes;
    /* The ranks on this rank's host, itself included (by host name): size
     * when the ranks share one host and talk through its memory. 0: not
     * known (a table made before it). */
    int host_ranks;
} tf_dist;

/* The ranks of MPI_COMM_WORLD (MPI started by tf_mpi_start);
 * TF_ERR_UNAVAILABLE in a build without MPI. Every wait of these
 * collectives is bounded (tf_mpi_set_timeout, default 600 s): past it the
 * call fails naming a rank that did not answer (a stopped or hung rank),
 * instead of waiting forever. */
tf_status tf_dist_world(tf_dist *d);

/* s, this rank's status, made every rank's: TF_OK when no rank failed,
 * else the lowest failing rank's status and message on every rank
 * (tf_fail_shared: rank 0 alone says it). d NULL: s itself. */
static inline tf_status tf_dist_shared(const tf_dist *d, tf_status s)
{
    if (!d) return s;
    struct {
        int32_t status;
        char msg[508];
    } what;
    memset(&what, 0, sizeof what);
    uint64_t holder = s != TF_OK ? (uint64_t)d->rank : UINT64_MAX;
    if (s != TF_OK) {
        what.status = (int32_t)s;
        snprintf(what.msg, sizeof what.msg, "%s", tf_last_error());
    }
    TF_TRY(d->allreduce_u64(&holder, 1, TF_RANKS_MIN));
    if (holder == UINT64_MAX) return TF_OK;
    TF_TRY(d->bcast_from(&what, sizeof what, (int)holder));
    return tf_fail_shared((tf_status)what.status, "%s", what.msg);
}
#endif
