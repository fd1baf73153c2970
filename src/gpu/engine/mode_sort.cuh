/* SPDX-License-Identifier: BSD-3-Clause */
/* The non-zeros of a tensor (or of one GPU's part of it) on one GPU in
 * their given order, and the scratch to sort them by one mode's index at a
 * time on the device (CUB's stable radix sort of the index with the
 * positions, then one gather per index array and the values): the copies
 * "by a mode's rows" that CP-APR and completion keep, built at the GPU's
 * rate instead of a host counting sort and gathers (1B non-zeros: 258 s on
 * the host for CP-APR's three copies). Stable, so the copies equal a stable
 * host sort's entry for entry. */
#ifndef TF_GPU_ENGINE_MODE_SORT_CUH
#define TF_GPU_ENGINE_MODE_SORT_CUH
#include <vector>

extern "C" {
#include "core/error.h"
#include "tenfold.h"
}
#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/limits.cuh"

struct tf_gpu_mode_sort {
    tf_gpu_dev *dev = nullptr; /* borrowed */
    const tf_tensor *src = nullptr; /* what put() uploaded (so one upload serves every mode) */
    uint32_t order = 0;
    uint64_t nnz = 0;
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    uint32_t *keys = nullptr;            /* after sort_by: the mode's index, sorted */
    uint32_t *perm[2] = {nullptr, nullptr}; /* after sort_by: perm[1], the sorted order */
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    /* the part of the sorted order sort_by gathers and chunk_ends reads:
     * entries [first, first + count) (put: all of them) -- one GPU's rows
     * of the mode, which a stable sort by it makes one range */
    uint64_t first = 0, count = 0;
    tf_gpu_mode_sort() = default;
    tf_gpu_mode_sort(const tf_gpu_mode_sort &) = delete;
    tf_gpu_mode_sort &operator=(const tf_gpu_mode_sort &) = delete;
    ~tf_gpu_mode_sort() { release(); }
    void release(); /* every buffer freed; empty again */
};

/* Device bytes put() takes for nnz non-zeros of `order` modes: the entries,
 * the sort's keys and two orders, CUB's scratch. */
tf_status tf_gpu_mode_sort_bytes(const tf_gpu_dev *dev, uint32_t order, uint64_t nnz, uint64_t *bytes);
/* X's entries up to dev (u released first; fewer than 2^32 non-zeros). */
tf_status tf_gpu_mode_sort_put(tf_gpu_mode_sort &u, tf_gpu_dev *dev, const tf_tensor *X);
/* The entries stably sorted by mode m's index (every index below 2^bits of
 * `limit`), entries [u.first, u.first + u.count) of that order gathered
 * into ind_out[0..order) (mode m's shifted by `shift`) and vals_out,
 * device arrays of u.count entries. Queued on dev's stream;
 * u.keys / u.perm[1] hold the sorted index / order until the next call. */
tf_status tf_gpu_mode_sort_by(tf_gpu_mode_sort &u, uint32_t m, uint64_t limit, uint32_t shift,
                              uint32_t *const *ind_out, double *vals_out);
/* Each chunk of L entries of the sorted index left by the last sort_by
 * (of its window [u.first, u.first + u.count)):
 * its first and last index, head[b] and tail[b] (b < ceil(nnz / L); only
 * these come down from the device). */
tf_status tf_gpu_mode_sort_chunk_ends(tf_gpu_mode_sort &u, uint32_t L, std::vector<uint32_t> &head,
                                      std::vector<uint32_t> &tail);

/* The host's way, where the device has no room for the sort: perm <- X's
 * non-zeros stably sorted by mode m's index (a counting sort where the mode
 * is not much longer than X has non-zeros), and the chunk ends of a sorted
 * index on the host. */
void tf_host_sort_by_mode(const tf_tensor *X, uint32_t m, std::vector<uint64_t> &perm);
void tf_host_chunk_ends(const uint32_t *keys, uint64_t nnz, uint32_t L, std::vector<uint32_t> &head,
                        std::vector<uint32_t> &tail);

#endif
