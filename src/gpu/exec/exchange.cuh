/* SPDX-License-Identifier: BSD-3-Clause */
/* The exchange: the one module that moves factor rows among the GPUs of a
 * run (exec/devset.cuh owns one per run). Three transports:
 *   - peer copies (exchange_peer.cu): one process whose GPUs all reach each
 *     other; GPU to GPU on the copy engines (cudaMemcpyPeerAsync, no SMs
 *     taken from the kernels beside it, no NCCL needed);
 *   - NCCL (exchange.cu), opened on first use (dlopen of libnccl.so.2), so a
 *     single-GPU run, or a machine without NCCL, never needs it; without
 *     it, or in a build made without nccl.h, the NCCL calls fail with
 *     TF_ERR_UNAVAILABLE naming the reason;
 *   - host staging (exchange_host.cu): each GPU's rows to pinned host
 *     memory, all-gathered over the ranks' MPI (tf_dist.allgather_bytes;
 *     within one process a copy), and the others' rows back to each GPU;
 *     needs neither NCCL nor distinct GPUs (two ranks on one GPU).
 * The choice (tuning.gpu_exchange, the tool's TF_EXCHANGE): auto (0) takes
 * peer copies in one process where every pair reaches each other; across
 * MPI ranks NCCL where it loads on every rank and every rank's GPU is
 * another device (their UUIDs compared, one all-gather); else host
 * staging. 1 (nccl) NCCL always; 2 (host) host staging always. (Host rows
 * of CPU ranks go through MPI: tf_dist.allgather_rows, src/ranks/mpi.c.)
 *
 * An NCCL exchange is one communicator per GPU of this process, over
 * `nranks` GPUs in all (one process driving them all: ncclCommInitAll; one
 * GPU per MPI rank: ncclCommInitRank with an id that rank 0 makes and MPI
 * hands out). An exchange with no transport (n GPUs, neither peer nor
 * communicators) still bounds waits. Every wait on another GPU is bounded
 * (tf_exchange_wait): a peer that stops answering aborts the exchange and
 * fails the run, never hangs it. */
#ifndef TF_GPU_EXEC_EXCHANGE_CUH
#define TF_GPU_EXEC_EXCHANGE_CUH
#include "gpu/runtime/gpu_dev.cuh"
extern "C" {
#include "seams/dist.h"
}

#define TF_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

struct tf_exchange {
    int n = 0;                         /* GPUs of this process in the group */
    int nranks = 0;                    /* GPUs of the whole group (all processes) */
    int first = 0;                     /* group rank of this process's first GPU */
    tf_gpu_dev *gpu[TF_MAX_GPUS] = {nullptr}; /* borrowed */
    void *comm[TF_MAX_GPUS] = {nullptr};       /* ncclComm_t */
    double timeout_s = 600.0;          /* bound on every wait (the first GPU's tuning.nccl_timeout) */
    /* the copy-engine transport (one process): no communicators; per GPU
     * an event marking its stream ready for the others' rows and one
     * marking its own rows sent */
    bool peer = false;
    cudaEvent_t ready[TF_MAX_GPUS] = {nullptr}, sent[TF_MAX_GPUS] = {nullptr};
    /* the host-staging transport: the ranks' MPI (NULL: one process), one
     * pinned buffer grown to the largest exchange (reused), and the group
     * ranks 0, 1, ..., nranks (the rows of a sum's all-gather) */
    bool host = false;
    const tf_dist *dist = nullptr;
    void *stage = nullptr;
    size_t stage_bytes = 0;
    uint64_t *unit = nullptr;
    /* why this transport, short (plan lines hold 95 characters):
     * "TF_EXCHANGE" (asked for), "shared GPU" (two ranks' GPUs have one
     * UUID), "no NCCL" (it does not load, here or on another rank); "" the
     * default choice */
    char why[32] = "";
};

/* NCCL's version ("2.28.9") or why it is not there; never fails. */
void tf_nccl_describe(char *buf, size_t len);
/* An id for tf_exchange_init_rank (made by one rank, sent to all). */
tf_status tf_nccl_unique_id(unsigned char id[TF_NCCL_ID_BYTES]);
/* One process, n GPUs: peer copies where every pair of gpu[0..n) has peer
 * access (and gpu[0]'s tuning does not ask for NCCL), else communicators
 * over them. */
tf_status tf_exchange_init_all(tf_exchange *g, tf_gpu_dev *const *gpu, int n);
/* One GPU of a group of nranks spread over processes: this one is `rank`. */
tf_status tf_exchange_init_rank(tf_exchange *g, tf_gpu_dev *gpu, int nranks, int rank,
                                  const unsigned char id[TF_NCCL_ID_BYTES]);
/* One GPU per MPI rank (d: the ranks, nranks of them; this is `rank`): the
 * transport chosen as tuning.gpu_exchange says (above), the same on every
 * rank (a collective: every rank calls it); NCCL's id made by rank 0 and
 * handed out over d. */
tf_status tf_exchange_init_ranks(tf_exchange *g, tf_gpu_dev *gpu, const tf_dist *d, int nranks, int rank);
/* On ranks (d), s agreed by every rank (a collective): TF_OK where every
 * rank's is; else the lowest failing rank's status and message, on every
 * rank (tf_devset::agree). d NULL: s. */
tf_status tf_exchange_agree(const tf_dist *d, tf_status s);
/* The transport's name for a plan line: "peer copies", "NCCL" or "host
 * staging", with g->why where it was chosen for a reason ("host staging
 * (shared GPU)"): at most 26 characters. */
void tf_exchange_describe(const tf_exchange *g, char *buf, size_t len);
/* Whether libnccl.so.2 loads here (never fails; why: the reason if not). */
bool tf_nccl_loads(char *why, size_t len);
/* Communicators destroyed (aborted when `abort`: after a failure, so no
 * call waits on a peer). */
void tf_exchange_free(tf_exchange *g, bool abort);

/* Rows of a row-major matrix, the same on every GPU: group rank r owns rows
 * [row_lo[r], row_lo[r+1]) and sends them to all others (in place: a[g] is
 * this process's g-th GPU's copy, cols columns of value_bytes 4 or 8).
 * Queued on streams[g] (NULL: each GPU's work stream) after the work
 * already there. */
tf_status tf_exchange_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                             uint32_t value_bytes, const cudaStream_t *streams);
/* The sum over the group's GPUs (all processes) of a vector each holds its
 * own of: a[g] (this process's g-th GPU's, count doubles) becomes, on every
 * GPU, the sum of every GPU's, the same bits on all of them. Peer copies:
 * GPU i owns part i of the vector (entries [count i / n, count (i + 1) /
 * n)), pulls that part of every other GPU's vector into scratch[i]
 * (tf_exchange_sum_scratch doubles; NULL for NCCL), adds the parts in GPU
 * order (GPU 0's + GPU 1's + ...: the same bits every run), and the parts
 * then go to every GPU (share_rows); NCCL: ncclAllReduce in place (its
 * order fixed for a fixed group). Queued on streams[g] (NULL: the work
 * streams) after the work already there. */
uint64_t tf_exchange_sum_scratch(const tf_exchange *g, uint64_t count);
tf_status tf_exchange_sum(tf_exchange *g, double *const *a, double *const *scratch, uint64_t count,
                          const cudaStream_t *streams);
/* GPU `from` (the current device) may read and write GPU `to`'s memory:
 * cudaDeviceEnablePeerAccess once per ordered pair for the process's life
 * (enabling it again is an API error, which compute-sanitizer reports). */
tf_status tf_peer_enable(int from, int to);
/* Every ordered pair of gpu[0..n) that can reach each other directly does
 * (operands read across GPUs then go GPU to GPU; else the runtime routes
 * them through the host). */
tf_status tf_peer_enable_reachable(tf_gpu_dev *const *gpu, int n);
/* The copy-engine transport (exchange_peer.cu), behind the calls above. */
bool tf_peer_usable(tf_gpu_dev *const *gpu, int n);
tf_status tf_peer_exchange_init(tf_exchange *g, tf_gpu_dev *const *gpu, int n);
tf_status tf_peer_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                             uint32_t value_bytes, const cudaStream_t *streams);
tf_status tf_peer_sum(tf_exchange *g, double *const *a, double *const *scratch, uint64_t count,
                      const cudaStream_t *streams);
void tf_peer_exchange_free(tf_exchange *g);
/* The host-staging transport (exchange_host.cu), behind the calls above: n
 * GPUs of this process, group ranks first.. of nranks; d the ranks' MPI
 * (then n is 1, nranks d->size and first d->rank), NULL in one process. */
tf_status tf_host_exchange_init(tf_exchange *g, tf_gpu_dev *const *gpu, int n, const tf_dist *d, int nranks,
                                int first);
tf_status tf_host_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                             uint32_t value_bytes, const cudaStream_t *streams);
tf_status tf_host_sum(tf_exchange *g, double *const *a, uint64_t count, const cudaStream_t *streams);
void tf_host_exchange_free(tf_exchange *g);
/* Monotonic seconds, and the bound on waits: the context's tuning.nccl_timeout
 * (the tool's TF_NCCL_TIMEOUT), default 600. */
double tf_group_now();
double tf_group_timeout(const tf_gpu_dev *gpu);

/* Waits until every GPU's work stream is idle, at most g->timeout_s; a
 * communicator's asynchronous error or the timeout aborts the group and
 * fails naming the GPU. */
tf_status tf_exchange_wait(tf_exchange *g);
/* The same for the streams st[0..n) of this process's GPUs (NULL: the work
 * streams). */
tf_status tf_exchange_wait_on(tf_exchange *g, const cudaStream_t *st);
#endif
