/* SPDX-License-Identifier: BSD-3-Clause */
/* A GPU's shards cut on the GPU itself (docs/DESIGN.md, "The device-set
 * executor"): X's COO, in the caller's labels on the host, is copied once
 * per mode into a ring of pinned chunks that every GPU of the process
 * reads (tf_shard_feed: the host's only work), each GPU moves each chunk
 * into its own buffers, and the non-zeros of its rows of the mode are
 * compacted there -- every index mapped into the run's labels (the
 * partition's relabel maps, uploaded once), the mode's index shifted down
 * by the part's first row -- in X's order (a scan per chunk, chunk after
 * chunk), so the shard is the front end's tf_partition_split's bit for
 * bit. With pairs the non-zeros whose previous mode's index lies in the
 * part's rows of that mode go to the front of the one allocation, the
 * others to its back (reversed there, then turned round in place): both
 * exactly sized, from the front end's count of the part's non-zeros. No
 * shard of the tensor is ever made on the host. The F-COO copy is then
 * sorted from the device COO by the one device builder
 * (engine/fcoo_build.cu, tf_gpu_fcoo_create_from_device). */
#ifndef TF_GPU_EXEC_SHARD_CUT_CUH
#define TF_GPU_EXEC_SHARD_CUT_CUH
#include <condition_variable>
#include <mutex>

#include "gpu/engine/fcoo_build.cuh"

/* One GPU's shard of one mode as an operation gets it: the front end's
 * split on the host (host), or cut on the GPU (dev, and shape its order,
 * dims and nnz, without host arrays). tf_gpu_engine_create_shard takes
 * either. */
struct tf_gpu_shard {
    const tf_tensor *host = nullptr;
    tf_tensor shape = {};
    const tf_fcoo_dcoo *dev = nullptr;
    const tf_tensor *tensor() const { return host ? host : &shape; }
    uint64_t nnz() const { return tensor()->nnz; }
};

#define TF_FEED_SLOTS 3

/* X's COO in pinned chunks, copied from X once and read by every GPU of the
 * process: a ring of TF_FEED_SLOTS slots of `chunk` non-zeros (the indices
 * of every mode, then the values). The first GPU thread to need chunk c
 * copies it into slot c mod TF_FEED_SLOTS (tf_copy_bytes: all cores) once
 * every reader has released the chunk held there before; each reader
 * releases a chunk when its copy to the device is done. A reader that fails
 * aborts the feed, so that no other waits for it; every wait is bounded. */
struct tf_shard_feed {
    const tf_tensor *X = nullptr;
    int readers = 0;
    uint64_t chunk = 0, nchunks = 0;
    char *pinned = nullptr;
    size_t slot_bytes = 0;
    int64_t held[TF_FEED_SLOTS] = {0};  /* the chunk in each slot, -1 none */
    int pending[TF_FEED_SLOTS] = {0};   /* readers that have not released it */
    bool filling[TF_FEED_SLOTS] = {false};
    bool aborted = false;
    char why[256] = "";                 /* the first failure, for the others' messages */
    double timeout = 600.0;             /* seconds a reader waits at most */
    std::mutex mu;
    std::condition_variable cv;

    tf_shard_feed() = default;
    tf_shard_feed(const tf_shard_feed &) = delete;
    tf_shard_feed &operator=(const tf_shard_feed &) = delete;
    ~tf_shard_feed() { close(); }

    /* The slots for X's chunks of `chunk` non-zeros (0: the default; made
     * a multiple of 64), read by `readers` GPUs (a GPU context must be
     * current). */
    tf_status open(const tf_tensor *X, int readers, uint64_t chunk);
    /* Before a pass over the chunks (no reader inside one). */
    void restart();
    /* Chunk c filled in *slot (for this reader to release). */
    tf_status acquire(uint64_t c, int *slot);
    const uint32_t *ind(int slot, uint32_t m) const
    {
        return (const uint32_t *)(pinned + slot * slot_bytes + m * chunk * sizeof(uint32_t));
    }
    const double *vals(int slot) const
    {
        return (const double *)(pinned + slot * slot_bytes + X->order * chunk * sizeof(uint32_t));
    }
    void release(int slot);
    /* A reader failed (why: its message): every wait ends with an error. */
    void abort(const char *why);
    void close();
};

/* One GPU's cutter, kept over the modes of a build: the relabel maps and
 * the chunk buffers on the device, the last cut's COO. */
struct tf_shard_cutter {
    tf_gpu_dev *ctx = nullptr;
    const tf_tensor *X = nullptr;                 /* open()'s */
    uint32_t order = 0;
    uint64_t chunk = 0;                           /* non-zeros per chunk (the feed's) */
    uint32_t *map[TF_MAX_ORDER] = {nullptr};      /* run label of each caller's row; NULL: the same */
    uint32_t *cind[TF_MAX_ORDER] = {nullptr};     /* a chunk of X's indices */
    double *cvals = nullptr;                      /* and of its values */
    uint64_t *cnt = nullptr, *pos = nullptr;      /* per non-zero of the chunk: 1 local, 2^32 remote, 0 not here; its scan */
    uint64_t *base = nullptr;                     /* local and remote non-zeros written so far */
    void *tmp = nullptr;                          /* the scan's scratch */
    size_t tmp_bytes = 0;
    cudaEvent_t copied = nullptr;                 /* a chunk's copy from the feed done */
    tf_fcoo_dcoo coo[2];                          /* the last cut: local, remote (one allocation, coo[0]'s) */
    /* X kept on the GPU (keep()): the first cut after keep() copies each
     * chunk there instead of into cind / cvals; once it has read them all
     * (filled), cuts read X from there and never touch the feed, so the
     * host copies X into the feed once per build, not once per mode */
    uint32_t *kind[TF_MAX_ORDER] = {nullptr};
    double *kvals = nullptr;
    bool filled = false;

    tf_shard_cutter() = default;
    tf_shard_cutter(const tf_shard_cutter &) = delete;
    tf_shard_cutter &operator=(const tf_shard_cutter &) = delete;
    ~tf_shard_cutter() { close(); }

    /* The chunk of a feed opened for X with the default (want 0), or
     * want rounded as the feed does. */
    static uint64_t chunk_for(const tf_tensor *X, uint64_t want = 0);
    /* Device bytes open() takes for X (the maps and the chunk buffers). */
    static uint64_t bytes(const tf_tensor *X, const uint32_t *const *relabel, uint64_t chunk);
    /* Uploads the relabel maps of X's modes (relabel[m] NULL: none) and
     * allocates buffers for chunks of `chunk` non-zeros on ctx (current on
     * this thread). */
    tf_status open(tf_gpu_dev *ctx, const tf_tensor *X, const uint32_t *const *relabel, uint64_t chunk);
    /* The non-zeros of X (feed's) whose (run's) index of `mode` lies in
     * [lo, hi), that index less lo, every index in the run's labels, values
     * as value_bytes (4: float, 8: double), in X's order; n: how many (the
     * front end's count; a different count fails). Without pairs out[0]
     * holds them all; with pairs out[0] those whose previous mode's index
     * lies in [prev_lo, prev_hi) (the part's rows of that mode), out[1] the
     * others. Reads every chunk of the feed once (none once X is kept and
     * filled: feed may then be NULL); aborts the feed on failure. The
     * shards stay valid until the next cut or drop(). */
    tf_status cut(tf_shard_feed *feed, uint32_t mode, uint64_t lo, uint64_t hi, bool pairs, uint64_t prev_lo,
                  uint64_t prev_hi, uint64_t n, uint32_t value_bytes, tf_gpu_shard out[2]);
    /* Device bytes keep() takes for X. */
    static uint64_t kept_bytes(const tf_tensor *X) { return X->nnz * (X->order * sizeof(uint32_t) + sizeof(double)); }
    /* Room on the GPU for X itself, filled by the next cut (after open()). */
    tf_status keep();
    bool kept() const { return kvals != nullptr; }
    /* X's copy freed (later cuts read the feed again). */
    void unkeep();
    /* Frees the last cut's COO. */
    void drop();
    void close();
};
#endif
