/* SPDX-License-Identifier: BSD-3-Clause */
/* The exchange group (exchange.cuh): NCCL, opened on first use, the choice
 * of transport, and the transport-independent calls. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/exec/exchange.cuh"
extern "C" {
#include "core/alloc.h"
}

#ifdef TF_HAVE_NCCL
#include <nccl.h>

namespace {

/* The calls tenfold makes, resolved from libnccl.so.2. */
struct nccl_api {
    ncclResult_t (*GetVersion)(int *);
    const char *(*GetErrorString)(ncclResult_t);
    ncclResult_t (*GetUniqueId)(ncclUniqueId *);
    ncclResult_t (*CommInitAll)(ncclComm_t *, int, const int *);
    ncclResult_t (*CommInitRank)(ncclComm_t *, int, ncclUniqueId, int);
    ncclResult_t (*CommDestroy)(ncclComm_t);
    ncclResult_t (*CommAbort)(ncclComm_t);
    ncclResult_t (*CommGetAsyncError)(ncclComm_t, ncclResult_t *);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
    ncclResult_t (*Broadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t);
    ncclResult_t (*AllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t, cudaStream_t);
};

nccl_api api;
bool api_ok = false;
char api_why[512];
pthread_once_t api_once = PTHREAD_ONCE_INIT;

void open_nccl()
{
    void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libnccl.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(api_why, sizeof api_why, "NCCL is not installed (libnccl.so.2: %s)", dlerror());
        return;
    }
#define TF_NCCL_SYM(field, name)                                                            \
    do {                                                                                    \
        *(void **)&api.field = dlsym(h, name);                                              \
        if (!api.field) {                                                                   \
            snprintf(api_why, sizeof api_why, "libnccl.so.2 has no %s (NCCL too old?)", name); \
            return;                                                                         \
        }                                                                                   \
    } while (0)
    TF_NCCL_SYM(GetVersion, "ncclGetVersion");
    TF_NCCL_SYM(GetErrorString, "ncclGetErrorString");
    TF_NCCL_SYM(GetUniqueId, "ncclGetUniqueId");
    TF_NCCL_SYM(CommInitAll, "ncclCommInitAll");
    TF_NCCL_SYM(CommInitRank, "ncclCommInitRank");
    TF_NCCL_SYM(CommDestroy, "ncclCommDestroy");
    TF_NCCL_SYM(CommAbort, "ncclCommAbort");
    TF_NCCL_SYM(CommGetAsyncError, "ncclCommGetAsyncError");
    TF_NCCL_SYM(GroupStart, "ncclGroupStart");
    TF_NCCL_SYM(GroupEnd, "ncclGroupEnd");
    TF_NCCL_SYM(Broadcast, "ncclBroadcast");
    TF_NCCL_SYM(AllReduce, "ncclAllReduce");
#undef TF_NCCL_SYM
    api_ok = true; /* the handle stays open for the process */
}

tf_status need_api()
{
    pthread_once(&api_once, open_nccl);
    return api_ok ? TF_OK : tf_fail(TF_ERR_UNAVAILABLE, "several GPUs need NCCL: %s", api_why);
}

tf_status nccl_fail(const char *what, ncclResult_t r)
{
    return tf_fail(TF_ERR_DEVICE, "NCCL %s failed: %s", what, api.GetErrorString(r));
}

#define TF_NCCL(what, call)                                 \
    do {                                                    \
        ncclResult_t tf_nc_r_ = (call);                     \
        if (tf_nc_r_ != ncclSuccess) return nccl_fail(what, tf_nc_r_); \
    } while (0)

bool in_progress(ncclResult_t r)
{
#if NCCL_VERSION_CODE >= 21400
    return r == ncclInProgress;
#else
    (void)r;
    return false;
#endif
}

} // namespace

void tf_nccl_describe(char *buf, size_t len)
{
    if (need_api() != TF_OK) {
        tf_clear_error();
        snprintf(buf, len, "not available (%s)", api_why);
        return;
    }
    int v = 0;
    api.GetVersion(&v);
    /* 2.9 and later: major * 10000 + minor * 100 + patch */
    snprintf(buf, len, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
}

bool tf_nccl_loads(char *why, size_t len)
{
    if (need_api() == TF_OK) return true;
    tf_clear_error();
    if (why && len) snprintf(why, len, "%s", api_why);
    return false;
}

tf_status tf_nccl_unique_id(unsigned char id[TF_NCCL_ID_BYTES])
{
    static_assert(sizeof(ncclUniqueId) == TF_NCCL_ID_BYTES, "NCCL unique id size");
    TF_TRY(need_api());
    ncclUniqueId u;
    TF_NCCL("ncclGetUniqueId", api.GetUniqueId(&u));
    memcpy(id, &u, sizeof u);
    return TF_OK;
}

namespace {

tf_status nccl_init_all(tf_exchange *g, tf_gpu_dev *const *gpu, int n)
{
    TF_TRY(need_api());
    if (n < 1 || n > TF_MAX_GPUS) return tf_fail(TF_ERR_ARG, "NCCL group of %d GPUs (1..%d)", n, TF_MAX_GPUS);
    g->n = g->nranks = n;
    g->first = 0;
    g->timeout_s = tf_group_timeout(gpu[0]);
    int dev[TF_MAX_GPUS];
    for (int i = 0; i < n; ++i) {
        g->gpu[i] = gpu[i];
        dev[i] = gpu[i]->device;
    }
    ncclComm_t c[TF_MAX_GPUS] = {nullptr};
    TF_NCCL("ncclCommInitAll", api.CommInitAll(c, n, dev));
    for (int i = 0; i < n; ++i) g->comm[i] = c[i];
    return TF_OK;
}

} // namespace

tf_status tf_exchange_init_rank(tf_exchange *g, tf_gpu_dev *gpu, int nranks, int rank,
                                  const unsigned char id[TF_NCCL_ID_BYTES])
{
    TF_TRY(need_api());
    g->n = 1;
    g->nranks = nranks;
    g->first = rank;
    g->gpu[0] = gpu;
    g->timeout_s = tf_group_timeout(gpu);
    TF_TRY(tf_gpu_dev_use(gpu));
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    ncclComm_t c = nullptr;
    TF_NCCL("ncclCommInitRank", api.CommInitRank(&c, nranks, u, rank));
    g->comm[0] = c;
    return TF_OK;
}

namespace {

void nccl_free(tf_exchange *g, bool abort)
{
    for (int i = 0; i < g->n; ++i) {
        if (!g->comm[i]) continue;
        cudaSetDevice(g->gpu[i]->device);
        if (abort) api.CommAbort((ncclComm_t)g->comm[i]);
        else api.CommDestroy((ncclComm_t)g->comm[i]);
        g->comm[i] = nullptr;
    }
}

tf_status nccl_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                          uint32_t value_bytes, const cudaStream_t *streams)
{
    TF_TRY(need_api());
    const ncclDataType_t type = value_bytes == 4 ? ncclFloat32 : ncclFloat64;
    /* one broadcast per owner, all in one group: NCCL runs them together;
     * in place (the owner's send buffer is its receive buffer) */
    TF_NCCL("ncclGroupStart", api.GroupStart());
    tf_status s = TF_OK;
    for (int i = 0; i < g->n && s == TF_OK; ++i) {
        for (int r = 0; r < g->nranks; ++r) {
            const uint64_t rows = row_lo[r + 1] - row_lo[r];
            if (!rows) continue;
            char *p = (char *)a[i] + row_lo[r] * cols * value_bytes;
            const ncclResult_t e = api.Broadcast(p, p, (size_t)(rows * cols), type, r, (ncclComm_t)g->comm[i],
                                                 streams ? streams[i] : g->gpu[i]->stream);
            if (e != ncclSuccess) {
                s = nccl_fail("ncclBroadcast", e);
                break;
            }
        }
    }
    const ncclResult_t e = api.GroupEnd();
    if (s == TF_OK && e != ncclSuccess) s = nccl_fail("ncclGroupEnd", e);
    return s;
}

/* Every GPU's a[i] summed over the group, in place (tf_exchange_sum). */
tf_status nccl_sum(tf_exchange *g, double *const *a, uint64_t count, const cudaStream_t *streams)
{
    TF_TRY(need_api());
    TF_NCCL("ncclGroupStart", api.GroupStart());
    tf_status s = TF_OK;
    for (int i = 0; i < g->n && count; ++i) {
        const ncclResult_t e = api.AllReduce(a[i], a[i], (size_t)count, ncclFloat64, ncclSum, (ncclComm_t)g->comm[i],
                                             streams ? streams[i] : g->gpu[i]->stream);
        if (e != ncclSuccess) {
            s = nccl_fail("ncclAllReduce", e);
            break;
        }
    }
    const ncclResult_t e = api.GroupEnd();
    if (s == TF_OK && e != ncclSuccess) s = nccl_fail("ncclGroupEnd", e);
    return s;
}

/* GPU i's communicator reports an asynchronous error: the failure (the
 * caller aborts the group). */
tf_status nccl_async_error(tf_exchange *g, int i)
{
    if (!g->comm[i]) return TF_OK;
    ncclResult_t ae = ncclSuccess;
    if (api.CommGetAsyncError((ncclComm_t)g->comm[i], &ae) == ncclSuccess && ae != ncclSuccess && !in_progress(ae))
        return tf_fail(TF_ERR_DEVICE, "GPU %d: NCCL reports %s; the run is stopped", g->gpu[i]->device,
                       api.GetErrorString(ae));
    return TF_OK;
}

} // namespace

#else /* built without nccl.h */

static tf_status no_nccl()
{
    return tf_fail(TF_ERR_UNAVAILABLE, "several GPUs need NCCL here, and this build of tenfold was made without it "
                                       "(nccl.h was not found)");
}
void tf_nccl_describe(char *buf, size_t len) { snprintf(buf, len, "not built (nccl.h was not found)"); }
bool tf_nccl_loads(char *why, size_t len)
{
    if (why && len) snprintf(why, len, "this build of tenfold was made without NCCL (nccl.h was not found)");
    return false;
}
tf_status tf_nccl_unique_id(unsigned char *) { return no_nccl(); }
tf_status tf_exchange_init_rank(tf_exchange *, tf_gpu_dev *, int, int, const unsigned char *) { return no_nccl(); }
namespace {
tf_status nccl_init_all(tf_exchange *, tf_gpu_dev *const *, int) { return no_nccl(); }
void nccl_free(tf_exchange *, bool) {}
tf_status nccl_share_rows(tf_exchange *, void *const *, const uint64_t *, uint64_t, uint32_t, const cudaStream_t *)
{
    return no_nccl();
}
tf_status nccl_sum(tf_exchange *, double *const *, uint64_t, const cudaStream_t *) { return no_nccl(); }
tf_status nccl_async_error(tf_exchange *, int) { return TF_OK; }
} // namespace
#endif

/* ---- the group, whichever transport it has */

double tf_group_now()
{
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double tf_group_timeout(const tf_gpu_dev *gpu)
{
    const double t = gpu ? gpu->tune.nccl_timeout : 0.0;
    return t > 0.0 ? t : 600.0;
}

tf_status tf_exchange_init_all(tf_exchange *g, tf_gpu_dev *const *gpu, int n)
{
    if (n < 1 || n > TF_MAX_GPUS) return tf_fail(TF_ERR_ARG, "GPU group of %d GPUs (1..%d)", n, TF_MAX_GPUS);
    const int64_t want = gpu[0]->tune.gpu_exchange; /* 0 auto, 1 NCCL, 2 host staging */
    if (want == 2) {
        TF_TRY(tf_host_exchange_init(g, gpu, n, nullptr, n, 0));
        snprintf(g->why, sizeof g->why, "TF_EXCHANGE");
        return TF_OK;
    }
    if (want != 1 && tf_peer_usable(gpu, n)) {
        if (tf_peer_exchange_init(g, gpu, n) == TF_OK) return TF_OK;
        /* peer access refused after all (e.g. too many peers for a GPU): NCCL instead */
        tf_peer_exchange_free(g);
        g->n = 0;
        tf_clear_error();
    }
    if (want != 1 && !tf_nccl_loads(nullptr, 0)) { /* auto without NCCL: through the host */
        TF_TRY(tf_host_exchange_init(g, gpu, n, nullptr, n, 0));
        snprintf(g->why, sizeof g->why, "no NCCL");
        return TF_OK;
    }
    TF_TRY(nccl_init_all(g, gpu, n));
    if (want == 1) snprintf(g->why, sizeof g->why, "TF_EXCHANGE");
    return TF_OK;
}

namespace {

/* auto on ranks: whether NCCL serves them, and if not why (the same answer
 * on every rank: the NCCL test combined over the ranks, every rank's GPU
 * UUID gathered to every rank). */
tf_status ranks_want_nccl(tf_gpu_dev *gpu, const tf_dist *d, int nranks, bool *nccl, char *why, size_t len)
{
    uint64_t loads = tf_nccl_loads(nullptr, 0) ? 1 : 0;
    TF_TRY(d->allreduce_u64(&loads, 1, TF_RANKS_MIN));
    bool shared = false; /* two ranks on one GPU */
    if (d->allgather_bytes) {
        unsigned char *ids = nullptr;
        uint64_t *lo = nullptr;
        tf_status s = TF_ALLOC(ids, (uint64_t)nranks * 16, "the ranks' GPU UUIDs");
        if (s == TF_OK) s = TF_ALLOC(lo, (uint64_t)nranks + 1, "the ranks' GPU UUIDs");
        if (s == TF_OK) {
            for (int r = 0; r <= nranks; ++r) lo[r] = (uint64_t)r;
            cudaDeviceProp p;
            memset(ids, 0, (size_t)nranks * 16);
            if (cudaGetDeviceProperties(&p, gpu->device) == cudaSuccess) memcpy(ids + (size_t)d->rank * 16, &p.uuid, 16);
            else cudaGetLastError(); /* no UUID: all zeros, alike on every rank that has none */
            s = d->allgather_bytes(ids, lo, 16, d->round_bytes);
        }
        for (int i = 0; s == TF_OK && i < nranks && !shared; ++i)
            for (int j = i + 1; j < nranks && !shared; ++j)
                shared = !memcmp(ids + (size_t)i * 16, ids + (size_t)j * 16, 16);
        tf_free(ids);
        tf_free(lo);
        TF_TRY(s);
    }
    *nccl = loads && !shared;
    if (!loads) snprintf(why, len, "no NCCL");
    else if (shared) snprintf(why, len, "shared GPU");
    return TF_OK;
}

} // namespace

tf_status tf_exchange_init_ranks(tf_exchange *g, tf_gpu_dev *gpu, const tf_dist *d, int nranks, int rank)
{
    if (!d || !gpu) return tf_fail(TF_ERR_ARG, "GPU ranks' exchange: no ranks or no GPU");
    const int64_t want = gpu->tune.gpu_exchange; /* 0 auto, 1 NCCL, 2 host staging */
    bool nccl = want == 1;
    char why[128] = "";
    if (want == 1 || want == 2) snprintf(why, sizeof why, "TF_EXCHANGE");
    else TF_TRY(ranks_want_nccl(gpu, d, nranks, &nccl, why, sizeof why));
    if (!nccl) {
        TF_TRY(tf_host_exchange_init(g, &gpu, 1, d, nranks, rank));
        snprintf(g->why, sizeof g->why, "%s", why);
        return TF_OK;
    }
    unsigned char id[TF_NCCL_ID_BYTES] = {0};
    /* rank 0's failure to make the id is every rank's (no rank left waiting for it) */
    TF_TRY(tf_exchange_agree(d, d->rank == 0 ? tf_nccl_unique_id(id) : TF_OK));
    TF_TRY(d->bcast_bytes(id, sizeof id));
    TF_TRY(tf_exchange_init_rank(g, gpu, nranks, rank, id));
    snprintf(g->why, sizeof g->why, "%s", why);
    return TF_OK;
}

tf_status tf_exchange_agree(const tf_dist *d, tf_status s)
{
    if (!d) return s;
    uint64_t holder = s != TF_OK ? (uint64_t)d->rank : UINT64_MAX;
    TF_TRY(d->allreduce_u64(&holder, 1, TF_RANKS_MIN));
    if (holder == UINT64_MAX) return TF_OK;
    struct {
        int32_t status;
        char what[500];
    } msg;
    memset(&msg, 0, sizeof msg);
    if ((uint64_t)d->rank == holder) {
        msg.status = (int32_t)s;
        snprintf(msg.what, sizeof msg.what, "%s", tf_last_error());
    }
    TF_TRY(d->bcast_from(&msg, sizeof msg, (int)holder));
    return tf_fail((tf_status)msg.status, "%s", msg.what);
}

void tf_exchange_describe(const tf_exchange *g, char *buf, size_t len)
{
    const char *name = g->host ? "host staging" : g->peer ? "peer copies" : "NCCL";
    if (g->why[0]) snprintf(buf, len, "%s (%s)", name, g->why);
    else snprintf(buf, len, "%s", name);
}

void tf_exchange_free(tf_exchange *g, bool abort)
{
    if (g->host) tf_host_exchange_free(g);
    else if (g->peer) tf_peer_exchange_free(g);
    else nccl_free(g, abort);
    g->n = 0;
}

tf_status tf_exchange_share_rows(tf_exchange *g, void *const *a, const uint64_t *row_lo, uint64_t cols,
                             uint32_t value_bytes, const cudaStream_t *streams)
{
    if (g->host) return tf_host_share_rows(g, a, row_lo, cols, value_bytes, streams);
    if (g->peer) return tf_peer_share_rows(g, a, row_lo, cols, value_bytes, streams);
    return nccl_share_rows(g, a, row_lo, cols, value_bytes, streams);
}

uint64_t tf_exchange_sum_scratch(const tf_exchange *g, uint64_t count)
{
    if (!g->peer || g->n < 2) return 0;
    return (uint64_t)g->n * ((count + (uint64_t)g->n - 1) / (uint64_t)g->n); /* n parts of the largest */
}

tf_status tf_exchange_sum(tf_exchange *g, double *const *a, double *const *scratch, uint64_t count,
                          const cudaStream_t *streams)
{
    if (g->nranks < 2) return TF_OK; /* one GPU: its vector is the sum */
    if (g->host) return tf_host_sum(g, a, count, streams);
    if (g->peer) return tf_peer_sum(g, a, scratch, count, streams);
    return nccl_sum(g, a, count, streams);
}

tf_status tf_exchange_wait(tf_exchange *g) { return tf_exchange_wait_on(g, nullptr); }

tf_status tf_exchange_wait_on(tf_exchange *g, const cudaStream_t *st)
{
    const double t0 = tf_group_now();
    bool idle[TF_MAX_GPUS] = {false};
    for (unsigned spin = 0;; ++spin) {
        bool all = true;
        for (int i = 0; i < g->n; ++i) {
            if (idle[i]) continue;
            const cudaError_t e = cudaStreamQuery(st ? st[i] : g->gpu[i]->stream);
            if (e == cudaSuccess) {
                idle[i] = true;
                continue;
            }
            all = false;
            if (e != cudaErrorNotReady) {
                const tf_status s = tf_gpu_fail(__FILE__, __LINE__, "cudaStreamQuery", e);
                tf_exchange_free(g, true);
                return s;
            }
            if (!g->peer && !g->host) {
                const tf_status s = nccl_async_error(g, i);
                if (s != TF_OK) {
                    tf_exchange_free(g, true);
                    return s;
                }
            }
        }
        if (all) return TF_OK;
        if (tf_group_now() - t0 > g->timeout_s) {
            int dev = -1;
            for (int i = 0; i < g->n && dev < 0; ++i)
                if (!idle[i]) dev = g->gpu[i]->device;
            tf_exchange_free(g, true);
            return tf_fail(TF_ERR_DEVICE, "GPU %d did not finish its step within %.0f s (a peer GPU or rank "
                                          "stopped answering?); the run is stopped (the bound: TF_NCCL_TIMEOUT, "
                                          "tuning.nccl_timeout)",
                           dev, g->timeout_s);
        }
        if (spin > 64) { /* past the first tens of microseconds, give the core back */
            timespec ts = {0, 20000};
            nanosleep(&ts, nullptr);
        }
    }
}
