/* SPDX-License-Identifier: BSD-3-Clause */
/* F-COO copies built on the device. The host builder (fmt/fcoo.c) sorts
 * each mode on the CPU: 1-2.7 s for the 20M-non-zero skewed tensor, ~300
 * MTTKRPs' worth on an H100. Here the COO is uploaded once; each mode is
 * sorted by CUB's radix sort on (output index, product indices
 * ascending), gathered, and its head bits, segments, partition starts and
 * rows to clear come from kernels and scans. The arrays are those of
 * tf_fcoo_build / tf_fcoo_repartition / tf_fcoo_zero_rows bit for bit
 * (tests/hooks/fcoo_check.cu compares them). */
#ifndef TF_GPU_ENGINE_FCOO_BUILD_CUH
#define TF_GPU_ENGINE_FCOO_BUILD_CUH
#include "gpu/runtime/gpu_dev.cuh"

/* The COO on the device and the sort's scratch, shared by every mode's
 * build. Needs nnz < 2^32 (32-bit permutation). */
struct tf_fcoo_dsrc {
    uint32_t order = 0;
    uint64_t nnz = 0;
    uint64_t dims[TF_MAX_ORDER] = {0};
    uint32_t *ind[TF_MAX_ORDER] = {nullptr};
    void *vals = nullptr;      /* value_bytes each: the copies' type (fp32 uploads half the bytes) */
    uint32_t value_bytes = 8;
    /* The values are uploaded by the first tf_fcoo_dbuild_mode, on the
     * side stream while that mode's sort runs (vals_ready orders them
     * before its gather): until then host_vals is X's. */
    const double *host_vals = nullptr;
    cudaEvent_t vals_ready = nullptr;
    uint64_t *key[2] = {nullptr, nullptr};  /* sort keys (double buffer)  */
    uint32_t *perm[2] = {nullptr, nullptr}; /* permutation (double buffer) */
    uint32_t *wpre = nullptr;  /* head-bit word prefix of the last built mode (nwords + 1) */
    uint32_t *wcnt = nullptr;  /* its per-word counts */
    uint32_t *rows[2] = {nullptr, nullptr}; /* row marks / flags of the cuts (rows_len each) */
    uint64_t rows_len = 0;
    void *tmp = nullptr;       /* CUB scratch */
    size_t tmp_bytes = 0;
    bool borrowed = false;     /* ind and vals are the caller's (tf_fcoo_dsrc_adopt): not freed here */
};

/* A COO already on the device (a shard cut there: exec/shard_cut.cuh):
 * order index arrays and the values, value_bytes each. Borrowed. */
struct tf_fcoo_dcoo {
    uint32_t *ind[TF_MAX_ORDER] = {nullptr};
    void *vals = nullptr;
    uint32_t value_bytes = 8;
};

/* Device bytes tf_fcoo_dsrc_create would hold for X, without CUB's
 * scratch (a few MiB; the caller keeps a margin). */
uint64_t tf_fcoo_dsrc_bytes(const tf_tensor *X, uint32_t value_bytes);
/* Uploads X's indices (through ctx's pinned staging) and allocates the
 * values (value_bytes each: 4 float, 8 double) and the scratch. X's
 * values must stay until the first tf_fcoo_dbuild_mode has returned,
 * which uploads them. */
tf_status tf_fcoo_dsrc_create(tf_gpu_dev *ctx, const tf_tensor *X, uint32_t value_bytes, tf_fcoo_dsrc *s);
/* The same from a COO on the device with X's shape (X->order, dims, nnz;
 * its host arrays unused): coo's arrays are borrowed (kept by the caller
 * until s is freed), only the scratch is allocated. */
tf_status tf_fcoo_dsrc_adopt(tf_gpu_dev *ctx, const tf_tensor *X, const tf_fcoo_dcoo *coo, tf_fcoo_dsrc *s);
void tf_fcoo_dsrc_free(tf_fcoo_dsrc *s);

/* One mode's sorted copy (sizeof(T) must be s->value_bytes; allocated here, the caller frees them with
 * tf_gpu_free): pind[0..order-2] of the product modes pmodes (ascending),
 * vals, head bits (ceil(nnz/32) words), seg_row (nseg). Leaves the head
 * bits' word prefix in s for tf_fcoo_dcut. */
struct tf_phase_clock;
template <typename T>
tf_status tf_fcoo_dbuild_mode(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, uint32_t *pmodes,
                              uint32_t **pind, T **vals, uint32_t **head, uint32_t **seg_row,
                              uint64_t *nseg, tf_phase_clock *clock = nullptr);

/* One partitioning of the mode last built in s, of part_nnz non-zeros
 * per partition (a multiple of 32): start flags (ceil(nparts/32) words),
 * partition segments (nparts), and the rows to clear before a run
 * (zrows, increasing, when they are at most a quarter of the mode's
 * length; otherwise *clear_all and no list). */
struct tf_fcoo_dcut_out {
    uint64_t nparts = 0;
    uint32_t *start = nullptr, *part_seg = nullptr, *zrows = nullptr;
    uint64_t nzero = 0;
    bool clear_all = true;
};
tf_status tf_fcoo_dcut(tf_gpu_dev *ctx, tf_fcoo_dsrc *s, uint32_t mode, const uint32_t *head,
                       const uint32_t *seg_row, uint64_t nseg, uint32_t part_nnz, tf_fcoo_dcut_out *out);
#endif
