/* SPDX-License-Identifier: BSD-3-Clause */
/* MPI for runs over several processes (built when CMake finds MPI): start
 * and stop, and the collectives of seams/dist.h over MPI_COMM_WORLD.
 * Every collective is a non-blocking one waited for with a bound
 * (wait_for): a rank that stopped (SIGSTOP, a hang, a crash the launcher
 * missed) fails the others after the process's bound (tf_mpi_set_timeout:
 * the tool's TF_MPI_TIMEOUT, a distributed context's tuning.mpi_timeout),
 * naming it, where a blocking MPI call would wait forever. */
#include <limits.h>
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seams/dist.h"
#include "core/alloc.h"
#include "core/environment.h"
#include "core/error.h"
#include "core/parallel.h"
#include "ranks/local.h"
#include "ranks/launch.h"

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
static tf_status agree(const tf_agree *mine);

/* 1 while MPI runs (started, not finalized). */
static int running(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    return init && !fin;
}

tf_status tf_mpi_allreduce_sum(double *x, uint64_t n)
{
    if (!x && n) return tf_fail(TF_ERR_ARG, "tf_mpi_allreduce_sum: x is NULL (%llu values)", (unsigned long long)n);
    if (!running()) return TF_OK; /* one process: the sum is x */
    return allreduce_sum(x, n);
}

tf_status tf_mpi_agree(const tf_agree *a)
{
    if (!a) return tf_fail(TF_ERR_ARG, "tf_mpi_agree: no record");
    if (!running()) return TF_OK; /* one process agrees with itself */
    return agree(a);
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

/* ---- bounded waits */

#define TAG_ROLL 0x7E01 /* a wait near its bound asks: "are you there?" */
#define TAG_HERE 0x7E02 /* the answer */

/* The bound on every wait, seconds: tf_mpi_set_timeout's (the tool's
 * TF_MPI_TIMEOUT, a distributed context's tuning.mpi_timeout), default 600
 * (the sibling of tuning.nccl_timeout). Waits are for the slowest rank's
 * step, so the bound must exceed the longest imbalance between ranks
 * (reading or building), not the whole step. */
static double bound_s; /* 0: the default */

void tf_mpi_set_timeout(double seconds) { bound_s = seconds > 0 ? seconds : 0; }

static double timeout_s(void) { return bound_s > 0 ? bound_s : 600.0; }

/* Answers every roll call that came in (a rank whose wait is running out
 * asks who is still there): any rank waiting in a collective answers,
 * echoing the call's number. */
static void answer_roll_call(void)
{
    static int echo[64]; /* the answers' buffers, reused in turn (their requests are let go at once) */
    static unsigned next;
    for (;;) {
        int flag = 0;
        MPI_Status st;
        if (MPI_Iprobe(MPI_ANY_SOURCE, TAG_ROLL, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag) return;
        int *e = &echo[next++ % 64];
        MPI_Recv(e, 1, MPI_INT, st.MPI_SOURCE, TAG_ROLL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request r;
        if (MPI_Isend(e, 1, MPI_INT, st.MPI_SOURCE, TAG_HERE, MPI_COMM_WORLD, &r) == MPI_SUCCESS) MPI_Request_free(&r);
    }
}

/* A roll call: every other rank asked, and whether it answered. */
typedef struct roll {
    int size, me, call; /* call: this roll call's number, echoed by the answers */
    MPI_Request *rq;
    int *got, *ans;
} roll;

static int roll_start(roll *c)
{
    static int calls;
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->me);
    c->call = ++calls;
    c->rq = calloc((size_t)c->size, sizeof *c->rq);
    c->got = calloc((size_t)c->size, sizeof *c->got);
    c->ans = calloc((size_t)c->size, sizeof *c->ans);
    if (!c->rq || !c->got || !c->ans) {
        free(c->rq), free(c->got), free(c->ans);
        return 0;
    }
    for (int r = 0; r < c->size; ++r) {
        c->rq[r] = MPI_REQUEST_NULL;
        c->got[r] = r == c->me;
        if (r == c->me) continue;
        MPI_Request s;
        if (MPI_Isend(&c->call, 1, MPI_INT, r, TAG_ROLL, MPI_COMM_WORLD, &s) == MPI_SUCCESS) MPI_Request_free(&s);
        MPI_Irecv(&c->ans[r], 1, MPI_INT, r, TAG_HERE, MPI_COMM_WORLD, &c->rq[r]);
    }
    return 1;
}

/* Takes the answers that came; one to an earlier call is dropped. */
static void roll_poll(roll *c)
{
    for (int r = 0; r < c->size; ++r) {
        if (c->got[r]) continue;
        int done = 0;
        MPI_Test(&c->rq[r], &done, MPI_STATUS_IGNORE);
        if (!done) continue;
        if (c->ans[r] == c->call) c->got[r] = 1;
        else MPI_Irecv(&c->ans[r], 1, MPI_INT, r, TAG_HERE, MPI_COMM_WORLD, &c->rq[r]);
    }
}

/* The first rank that has not answered (-1: all did), *more the others;
 * the roll call's receives are withdrawn. */
static int roll_end(roll *c, int *more)
{
    int missing = -1;
    *more = 0;
    for (int r = 0; c->rq && c->got && r < c->size; ++r) {
        if (c->got[r]) continue;
        if (missing < 0) missing = r;
        else ++*more;
        if (c->rq[r] != MPI_REQUEST_NULL) {
            MPI_Cancel(&c->rq[r]);
            MPI_Request_free(&c->rq[r]);
        }
    }
    free(c->rq), free(c->got), free(c->ans);
    c->rq = NULL, c->got = c->ans = NULL;
    return missing;
}

/* Waits for a non-blocking collective, at most timeout_s() seconds:
 * MPI_Test drives it (as a blocking call would, spinning), yielding the
 * core after the first spins (ranks may share cores), and answering roll
 * calls meanwhile. When the bound is near (its last two seconds, or half of
 * a short one) this rank calls the roll itself; past it, the first rank
 * that did not answer is named. */
static tf_status wait_for(MPI_Request *req, const char *what)
{
    const double limit = timeout_s(), grace = limit < 4.0 ? limit / 2 : 2.0;
    double t0 = 0;
    roll call = {0};
    int calling = 0;
    for (unsigned spin = 0;; ++spin) {
        int done = 0;
        const int e = MPI_Test(req, &done, MPI_STATUS_IGNORE);
        if (e != MPI_SUCCESS || done) {
            int more;
            if (calling) roll_end(&call, &more);
            return e != MPI_SUCCESS ? mpi_fail(what, e) : TF_OK;
        }
        if (spin < 256) continue; /* a collective of ranks in step: no clock, no probe */
        if (spin == 256) t0 = MPI_Wtime();
        answer_roll_call();
        const double waited = MPI_Wtime() - t0;
        if (!calling && waited > limit - grace) calling = roll_start(&call) ? 1 : -1;
        if (calling > 0) roll_poll(&call);
        if (waited > limit) break;
        sched_yield();
    }
    int more = 0;
    const int missing = calling > 0 ? roll_end(&call, &more) : -1;
    if (missing < 0)
        return tf_fail(TF_ERR_IO, "MPI: %s did not complete within %g s%s; the run is stopped (the bound: "
                                  "TF_MPI_TIMEOUT, tf_mpi_set_timeout)", what, limit,
                       calling > 0 ? " though every rank answers (are the ranks at different steps?)" : "");
    char others[48] = "";
    if (more) snprintf(others, sizeof others, " (and %d other%s)", more, more == 1 ? "" : "s");
    return tf_fail(TF_ERR_IO, "MPI: rank %d%s did not answer within %g s (stopped, hung, or still busy elsewhere) "
                              "while the others waited in %s; the run is stopped (the bound: TF_MPI_TIMEOUT, "
                              "tf_mpi_set_timeout)",
                   missing, others, limit, what);
}

/* Starts a collective (rc from its MPI_I* call) and waits for it. */
static tf_status run(int rc, MPI_Request *req, const char *what)
{
    if (rc != MPI_SUCCESS) return mpi_fail(what, rc);
    return wait_for(req, what);
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
 * gathers the next piece of every rank's rows in place. Items of
 * item_bytes (type), per_row of them a row. */
static tf_status allgather_items(unsigned char *a, const uint64_t *row_lo, uint64_t per_row, uint64_t item_bytes,
                                 MPI_Datatype type, uint64_t round_bytes)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const uint64_t per = round_items(round_bytes, item_bytes, INT_MAX);
    uint64_t most = 0, *n = NULL, *at = NULL;
    int *cnt = NULL, *disp = NULL;
    tf_status s = TF_ALLOC(cnt, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(disp, (uint64_t)size, "MPI displacements");
    if (s == TF_OK) s = TF_ALLOC(n, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(at, (uint64_t)size, "MPI displacements");
    for (int r = 0; s == TF_OK && r < size; ++r) {
        n[r] = (row_lo[r + 1] - row_lo[r]) * per_row;
        at[r] = row_lo[r] * per_row;
        if (n[r] > most) most = n[r];
    }
    for (uint64_t lo = 0; s == TF_OK && lo < most; lo += per) {
        uint64_t base = 0;
        s = round_piece(size, n, at, lo, per, cnt, disp, &base);
        if (s != TF_OK) break;
        MPI_Request req;
        s = run(MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a + base * item_bytes, cnt, disp, type,
                                MPI_COMM_WORLD, &req),
                &req, "the all-gather of rows (MPI_Iallgatherv)");
    }
    tf_free(cnt);
    tf_free(disp);
    tf_free(n);
    tf_free(at);
    return s;
}

static tf_status allgather_rows(double *a, const uint64_t *row_lo, uint64_t cols, uint64_t round_bytes)
{
    return allgather_items((unsigned char *)a, row_lo, cols, sizeof(double), MPI_DOUBLE, round_bytes);
}

/* Rows of row_bytes as items of one MPI type each (so displacements count
 * rows, not bytes). */
static tf_status allgather_bytes(void *a, const uint64_t *row_lo, uint64_t row_bytes, uint64_t round_bytes)
{
    if (!row_bytes || row_bytes > INT_MAX)
        return tf_fail(TF_ERR_RANGE, "MPI all-gather of rows of %llu bytes", (unsigned long long)row_bytes);
    MPI_Datatype type = MPI_DATATYPE_NULL;
    int e = MPI_Type_contiguous((int)row_bytes, MPI_BYTE, &type);
    if (e == MPI_SUCCESS) e = MPI_Type_commit(&type);
    if (e != MPI_SUCCESS) return mpi_fail("MPI_Type_contiguous", e);
    const tf_status s = allgather_items((unsigned char *)a, row_lo, 1, row_bytes, type, round_bytes);
    MPI_Type_free(&type);
    return s;
}

static tf_status allreduce(void *x, uint64_t n, MPI_Datatype type, MPI_Op op)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_RANGE, "MPI all-reduce of %llu values", (unsigned long long)n);
    MPI_Request req;
    return run(MPI_Iallreduce(MPI_IN_PLACE, x, (int)n, type, op, MPI_COMM_WORLD, &req), &req,
               "an all-reduce (MPI_Iallreduce)");
}

static tf_status allreduce_sum(double *x, uint64_t n) { return allreduce(x, n, MPI_DOUBLE, MPI_SUM); }

static tf_status allreduce_max(double *x, uint64_t n) { return allreduce(x, n, MPI_DOUBLE, MPI_MAX); }

static tf_status reduce_sum(double *x, uint64_t n, int root)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_RANGE, "MPI reduction of %llu values", (unsigned long long)n);
    int me = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Request req;
    return run(MPI_Ireduce(me == root ? MPI_IN_PLACE : x, me == root ? x : NULL, (int)n, MPI_DOUBLE, MPI_SUM, root,
                           MPI_COMM_WORLD, &req),
               &req, "a reduction (MPI_Ireduce)");
}

static tf_status allreduce_u64(uint64_t *x, uint64_t n, tf_dist_op op)
{
    return allreduce(x, n, MPI_UINT64_T, op == TF_RANKS_MIN ? MPI_MIN : op == TF_RANKS_MAX ? MPI_MAX : MPI_BXOR);
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
    uint64_t all = (most + round_records - 1) / round_records;
    TF_TRY(allreduce_u64(&all, 1, TF_RANKS_MAX)); /* the exchange's rounds */
    int e = MPI_SUCCESS, *sc = NULL, *sd = NULL, *rc_ = NULL, *rd = NULL;
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
    for (uint64_t k = 0; s == TF_OK && k < all; ++k) {
        /* this round's piece of every pair, packed */
        uint64_t base_s = 0, base_r = 0;
        s = round_piece(size, send_n, sd64, k * round_records, round_records, sc, sd, &base_s);
        if (s == TF_OK) s = round_piece(size, rn, rd64, k * round_records, round_records, rc_, rd, &base_r);
        if (s != TF_OK) break;
        MPI_Request req;
        s = run(MPI_Ialltoallv((void *)(send + base_s * rec), sc, sd, type, recv + base_r * rec, rc_, rd, type,
                               MPI_COMM_WORLD, &req),
                &req, "the exchange of non-zeros (MPI_Ialltoallv)");
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
        MPI_Request req;
        s = run(MPI_Ialltoall((void *)send_n, 1, MPI_UINT64_T, rn, 1, MPI_UINT64_T, MPI_COMM_WORLD, &req), &req,
                "the exchange of record counts (MPI_Ialltoall)");
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

/* At most this many arrays move together in alltoall_arrays (an order-16
 * tensor's indices and values are 17). */
#define ARRAYS_MAX 32

/* Starts one round's all-to-all of every array (the pieces at item `lo`
 * of each pair's block, at most per items; sn/rn without this rank's own)
 * and waits for them all. */
static tf_status arrays_round(int arrays, const void *const *send, void *const *recv, const uint32_t *item_bytes,
                              const MPI_Datatype *type, const uint64_t *sn, const uint64_t *send_at, const uint64_t *rn,
                              const uint64_t *recv_at, uint64_t lo, uint64_t per, int size, int *cnt)
{
    int *sc = cnt, *sd = cnt + size, *rc = cnt + 2 * size, *rd = cnt + 3 * size;
    uint64_t bs = 0, br = 0;
    TF_TRY(round_piece(size, sn, send_at, lo, per, sc, sd, &bs));
    TF_TRY(round_piece(size, rn, recv_at, lo, per, rc, rd, &br));
    MPI_Request req[ARRAYS_MAX];
    tf_status s = TF_OK;
    int posted = 0;
    for (; posted < arrays; ++posted) { /* all at once: one wait drives them together */
        const uint64_t b = item_bytes[posted];
        const int e = MPI_Ialltoallv((const unsigned char *)send[posted] + bs * b, sc, sd, type[posted],
                                     (unsigned char *)recv[posted] + br * b, rc, rd, type[posted], MPI_COMM_WORLD,
                                     &req[posted]);
        if (e != MPI_SUCCESS) {
            s = mpi_fail("the exchange of arrays (MPI_Ialltoallv)", e);
            break;
        }
    }
    for (int a = 0; a < posted && s == TF_OK; ++a)
        s = wait_for(&req[a], "the exchange of non-zeros (MPI_Ialltoallv)");
    return s;
}

static tf_status alltoall_arrays(int arrays, const void *const *send, void *const *recv, const uint32_t *item_bytes,
                                 const uint64_t *send_n, const uint64_t *send_at, const uint64_t *recv_n,
                                 const uint64_t *recv_at, uint64_t round_bytes)
{
    if (arrays < 1 || arrays > ARRAYS_MAX)
        return tf_fail(TF_ERR_ARG, "MPI exchange of %d arrays (1..%d at once)", arrays, ARRAYS_MAX);
    uint64_t item = 0;
    for (int a = 0; a < arrays; ++a) {
        if (!item_bytes[a] || item_bytes[a] > INT_MAX)
            return tf_fail(TF_ERR_ARG, "MPI exchange of items of %u bytes", item_bytes[a]);
        item += item_bytes[a];
    }
    int size = 1, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    const uint64_t per = round_items(round_bytes, item, INT_MAX);
    uint64_t *sn = NULL, *rn = NULL, most = 0;
    int *cnt = NULL, made = 0;
    MPI_Datatype type[ARRAYS_MAX];
    tf_status s = TF_ALLOC(sn, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(rn, (uint64_t)size, "MPI counts");
    if (s == TF_OK) s = TF_ALLOC(cnt, 4 * (uint64_t)size, "MPI counts");
    for (int r = 0; s == TF_OK && r < size; ++r) { /* this rank's own block stays where it is */
        sn[r] = r == me ? 0 : send_n[r];
        rn[r] = r == me ? 0 : recv_n[r];
        if (sn[r] > most) most = sn[r];
        if (rn[r] > most) most = rn[r];
    }
    uint64_t rounds = (most + per - 1) / per;
    if (s == TF_OK) s = allreduce_u64(&rounds, 1, TF_RANKS_MAX); /* every rank takes part in every round */
    while (s == TF_OK && made < arrays) {
        int e = MPI_Type_contiguous((int)item_bytes[made], MPI_BYTE, &type[made]);
        if (e != MPI_SUCCESS) s = mpi_fail("MPI_Type_contiguous", e);
        else ++made; /* made: the types to free */
        if (e == MPI_SUCCESS) e = MPI_Type_commit(&type[made - 1]);
        if (e != MPI_SUCCESS && s == TF_OK) s = mpi_fail("MPI_Type_commit", e);
    }
    for (uint64_t k = 0; s == TF_OK && k < rounds; ++k)
        s = arrays_round(arrays, send, recv, item_bytes, type, sn, send_at, rn, recv_at, k * per, per, size, cnt);
    for (int a = 0; a < made; ++a) MPI_Type_free(&type[a]);
    tf_free(sn);
    tf_free(rn);
    tf_free(cnt);
    return s;
}

static tf_status bcast_from(void *buf, uint64_t n, int root)
{
    if (n > INT_MAX) return tf_fail(TF_ERR_ARG, "MPI broadcast of %llu bytes", (unsigned long long)n);
    MPI_Request req;
    return run(MPI_Ibcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD, &req), &req, "a broadcast (MPI_Ibcast)");
}

static tf_status bcast_bytes(void *buf, uint64_t n) { return bcast_from(buf, n, 0); }

/* The first field where a differs from b (the fields, not the padding);
 * TF_AGREE_FIELDS if none. */
static uint32_t first_difference(const tf_agree *a, const tf_agree *b)
{
    const uint32_t na = a->n < TF_AGREE_FIELDS ? a->n : TF_AGREE_FIELDS;
    const uint32_t nb = b->n < TF_AGREE_FIELDS ? b->n : TF_AGREE_FIELDS;
    for (uint32_t f = 0; f < na || f < nb; ++f) {
        if (f >= na || f >= nb) return f;
        const tf_agree_field *x = &a->field[f], *y = &b->field[f];
        if (x->hash != y->hash || strncmp(x->name, y->name, sizeof x->name)) return f;
    }
    return TF_AGREE_FIELDS;
}

/* Field f of a as "NAME TEXT" (the name left out when same_name), or
 * "no NAME" where a has fewer fields. */
static void say_field(char *buf, size_t len, const tf_agree *a, uint32_t f, const char *other_name, int same_name)
{
    if (f >= a->n) {
        snprintf(buf, len, "no %.*s", (int)sizeof a->field[0].name, other_name);
        return;
    }
    const tf_agree_field *x = &a->field[f];
    if (same_name) snprintf(buf, len, "%.*s", (int)sizeof x->text, x->text);
    else snprintf(buf, len, "%.*s %.*s", (int)sizeof x->name, x->name, (int)sizeof x->text, x->text);
}

/* Rank 0's record goes to every rank; each finds its first field that
 * differs; the least (field, rank) over the ranks is the difference said,
 * and that rank's record goes to every rank: all fail with the same line.
 * Records are of one size whatever they hold, so ranks that disagree on
 * everything still take part in the same collectives. */
static tf_status agree(const tf_agree *mine)
{
    int size = 1, me = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (size == 1) return TF_OK;
    tf_agree *root = malloc(sizeof *root), *other = malloc(sizeof *other);
    if (!root || !other) {
        free(root), free(other);
        return tf_fail(TF_ERR_NOMEM, "out of memory comparing the ranks");
    }
    *root = *mine;
    tf_status s = bcast_from(root, sizeof *root, 0);
    uint64_t key = UINT64_MAX;
    if (s == TF_OK) {
        const uint32_t f = first_difference(mine, root);
        if (f < TF_AGREE_FIELDS) key = (uint64_t)f * (uint64_t)size + (uint64_t)me;
        s = allreduce_u64(&key, 1, TF_RANKS_MIN);
    }
    if (s == TF_OK && key != UINT64_MAX) {
        const uint32_t f = (uint32_t)(key / (uint64_t)size);
        const int r = (int)(key % (uint64_t)size);
        *other = *mine;
        s = bcast_from(other, sizeof *other, r);
        if (s == TF_OK) {
            for (uint32_t i = 0; i < TF_AGREE_FIELDS; ++i) { /* whatever came, strings end */
                other->field[i].name[sizeof other->field[i].name - 1] = 0;
                other->field[i].text[sizeof other->field[i].text - 1] = 0;
                root->field[i].name[sizeof root->field[i].name - 1] = 0;
                root->field[i].text[sizeof root->field[i].text - 1] = 0;
            }
            const char *name_r = f < other->n ? other->field[f].name : root->field[f].name;
            const char *name_0 = f < root->n ? root->field[f].name : other->field[f].name;
            const int same = !strcmp(name_r, name_0);
            char a[128], b[128];
            say_field(a, sizeof a, other, f, name_0, 0);
            say_field(b, sizeof b, root, f, name_r, same);
            s = tf_fail_shared(TF_ERR_ARG, "ranks disagree: rank %d has %s, rank 0 has %s", r, a, b);
        }
    }
    free(root);
    free(other);
    return s;
}

/* The CPUs this process may use into its key; how many (0: unknown). */
static int mark_cpus(char *key, size_t width)
{
    size_t bytes = 0;
    cpu_set_t *set = tf_process_cpus(&bytes);
    if (!set) return 0;
    const int n = CPU_COUNT_S(bytes, set);
    for (long c = 0; c < (long)bytes * 8; ++c)
        if (CPU_ISSET_S((size_t)c, bytes, set)) tf_local_key_cpu(key, width, c);
    CPU_FREE(set);
    return n;
}

/* Ranks of one host whose CPUs overlap split them (src/ranks/local.c): the
 * default team of each, fixed by the first roll of the process -- before
 * any parallel region of the run, as a context, a read or generation in
 * parts rolls first. They share the host's quota too. */
static void share_cpus(const char *keys, size_t width, int size, int me, int cpus)
{
    int index = 0;
    const int ranks = tf_local_cpu_sharers(keys, width, size, me, &index), q = tf_cpu_quota();
    if (q > 0 && q < cpus) cpus = q;
    tf_threads_share_fix(cpus > 0 && ranks > 1 ? tf_local_cpu_share(cpus, ranks, index) : 0, cpus, ranks);
}

/* This rank's place among the ranks that share its node (by processor
 * name: an all-gather with a bounded wait, where MPI_Comm_split_type would
 * block). */
/* The rank's index among the ranks of its host that see the same GPUs
 * (src/ranks/local.c): the GPU it takes; and its share of the CPUs it
 * shares with ranks of its host. */
static tf_status node_rank(int *local, int *host_ranks)
{
    int size = 1, me = 0, len = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    *local = 0;
    const size_t width = tf_local_key_width(MPI_MAX_PROCESSOR_NAME);
    if (width > INT_MAX) return tf_fail(TF_ERR_ARG, "the ranks' node names are too long");
    char *keys = calloc((size_t)size, width);
    char host[MPI_MAX_PROCESSOR_NAME];
    if (!keys) return tf_fail(TF_ERR_NOMEM, "out of memory naming the ranks' nodes");
    if (MPI_Get_processor_name(host, &len) != MPI_SUCCESS) len = 0;
    host[len < MPI_MAX_PROCESSOR_NAME ? len : MPI_MAX_PROCESSOR_NAME - 1] = 0;
    tf_local_key(keys + (size_t)me * width, width, host, tf_env_cuda_visible_devices());
    const int cpus = mark_cpus(keys + (size_t)me * width, width);
    MPI_Request req;
    tf_status s = run(MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, keys, (int)width, MPI_CHAR,
                                     MPI_COMM_WORLD, &req),
                      &req, "the roll of the ranks' nodes (MPI_Iallgather)");
    if (s == TF_OK) {
        *local = tf_local_index(keys, width, me);
        *host_ranks = tf_local_host_ranks(keys, width, size, me);
        share_cpus(keys, width, size, me, cpus);
    }
    free(keys);
    return s;
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
    d->allreduce_u64 = allreduce_u64;
    d->bcast_from = bcast_from;
    d->agree = agree;
    d->reduce_sum = reduce_sum;
    d->allgather_bytes = allgather_bytes;
    d->alltoall_arrays = alltoall_arrays;
    return node_rank(&d->local_rank, &d->host_ranks);
}
