/* SPDX-License-Identifier: BSD-3-Clause */
/* TTMc on one GPU (src/gpu/tucker/ttmc.cu): per mode a copy of the
 * non-zeros sorted by the mode's index, and the segmented pass that writes
 * Y_(n) = X_(n) (U_N kron ... kron U_1, skipping n), I_n x C row-major, in
 * tf_ttmc's column layout (column c = sum_k r_k s_k, the lowest mode
 * fastest). Deterministic: the same bits on every run. */
#ifndef TF_GPU_TUCKER_TTMC_CUH
#define TF_GPU_TUCKER_TTMC_CUH
#include <stdint.h>

#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/limits.cuh"

extern "C" {
#include "tenfold.h"
}

/* A row of Y that crosses chunks of the pass: its partial sums are the
 * edge rows slot .. slot + count - 1 (the tail of the chunk it starts in,
 * then the heads of the chunks it runs through, in order). */
struct tf_ttmc_cross {
    uint64_t row, slot, count;
};

/* One mode's sorted copy and the pass's cut of it. */
struct tf_ttmc_mode {
    uint32_t *ind[TF_GPU_MAX_ORDER] = {nullptr};
    double *vals = nullptr;
    int64_t *slot = nullptr;         /* 2 per chunk: its head's, its tail's edge row (-1: none) */
    tf_ttmc_cross *cross = nullptr;
    uint64_t nnz = 0;                /* the copy's entries */
    uint64_t ncross = 0, nslots = 0, nchunks = 0;
    uint64_t C = 0;                  /* the columns of Y_(n) */
    uint32_t L = 0;                  /* non-zeros per chunk   */
    uint32_t W = 0;                  /* lanes per chunk (a power of two <= the block) */
    bool built = false;
};

struct tf_gpu_ttmc {
    tf_gpu_dev *dev = nullptr; /* borrowed */
    uint32_t order = 0;
    uint64_t nnz = 0;
    uint64_t dims[TF_GPU_MAX_ORDER] = {0}, ranks[TF_GPU_MAX_ORDER] = {0};
    tf_ttmc_mode md[TF_GPU_MAX_ORDER];
    double *edges = nullptr; /* the largest mode's nslots x C */
    uint64_t edge_doubles = 0;
    uint64_t copy_bytes = 0; /* the sorted copies on the device */
    ~tf_gpu_ttmc();
};

/* Bytes the sorted copies of the modes with want[m] (NULL: all) take on
 * the device (indices, values, the chunk slots), without the edge rows;
 * count[m] entries in mode m's copy (NULL: X->nnz). */
uint64_t tf_gpu_ttmc_copy_bytes(const tf_tensor *X, const uint64_t *ranks, const int *want, const uint64_t *count);
/* The copies of the modes with want[m] != 0 (NULL: every mode) for the
 * ranks (R_k = ranks[k]) on dev, checked against dev's budget (TF_ERR_NOMEM
 * naming the bytes) beside `other_bytes` the caller will hold. first /
 * count (NULL: the whole order): mode m's copy holds entries [first[m],
 * first[m] + count[m]) of X stably sorted by mode m -- a GPU's rows of the
 * mode, one range of that order (several GPUs: one upload of X per GPU
 * serves every mode). */
tf_status tf_gpu_ttmc_build(tf_gpu_dev *dev, const tf_tensor *X, const uint64_t *ranks, const int *want,
                            uint64_t other_bytes, const uint64_t *first, const uint64_t *count, tf_gpu_ttmc *p);
/* Y (device, `rows` x C from row row_lo of Y_(mode) on, every entry
 * written) = TTMc of mode with the device factors U[k] (dims[k] x ranks[k]
 * row-major), k != mode; the copy's non-zeros must lie in those rows (the
 * whole tensor: 0, dims[mode]; a GPU's part of several). Queued on the
 * device's work stream. */
tf_status tf_gpu_ttmc_run(tf_gpu_ttmc *p, uint32_t mode, const double *const *U, double *Y, uint64_t row_lo,
                          uint64_t rows);
/* One TTMc from host to host: the copy of `mode`, the factors U[k] (host,
 * dims[k] x U[k].cols, k != mode) uploaded, Y (host, dims[mode] x C) the
 * result. poison: Y and the edge rows on the device set to NaN first (the
 * tests'); *edge_rows (may be NULL) the rows across chunks of the pass. */
tf_status tf_gpu_ttmc_once(tf_gpu_dev *dev, const tf_tensor *X, uint32_t mode, const tf_matrix *U, double *Y,
                           bool poison, uint64_t *edge_rows);
#endif
