/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU SpTTM with F-COO (Liu et al., "A unified optimization approach for
 * sparse tensor operations on GPUs", section IV): the non-zeros in fibre
 * order (sorted by the index modes, i.e. every mode but n) keep only their
 * product-mode index and value; a bit flag per non-zero marks where a new
 * fibre starts, packed 32 to a word, and each 32-non-zero chunk records the
 * fibre of its first element (the start-flag role). The grid is 2-D:
 * x over chunks, y over groups of C columns of U (rank-wise), so any R works.
 * A group of C lanes (C = min(32, pow2 >= R)) walks one chunk, every lane
 * owning one column r: it accumulates value * U(i, r) and, at each flag,
 * flushes the finished fibre (segmented reduction). A fibre that lies
 * wholly inside the chunk is stored; one that crosses a chunk boundary is
 * added atomically into Y, which is zeroed first. */
#include <string.h>

#include <algorithm>

#include "gpu/runtime/gpu_dev.cuh"
#include "gpu/runtime/timing.cuh"
#include "seams/cuda_module.h"
extern "C" {
#include "seams/spttm_backends.h"
#include "core/alloc.h"
#include "fmt/spttm_fcoo.h"
}

#define TF_SPTTM_THREADS 256
#define TF_SPTTM_CHUNK TF_FCOO_CHUNK

namespace {

template <typename T>
__global__ void __launch_bounds__(TF_SPTTM_THREADS)
    spttm_fcoo_kernel(const uint32_t *__restrict__ idx, const T *__restrict__ val, const uint32_t *__restrict__ flags,
                      const uint32_t *__restrict__ chunk_fibre, const T *__restrict__ U, T *__restrict__ Y,
                      uint64_t nnz, uint64_t nchunks, uint32_t R, uint32_t C)
{
    const uint32_t G = 32 / C, lane = threadIdx.x & 31, g = lane / C, c = lane % C;
    const uint64_t chunk = ((uint64_t)blockIdx.x * (TF_SPTTM_THREADS / 32) + threadIdx.x / 32) * G + g;
    const uint32_t r = blockIdx.y * C + c;
    if (chunk >= nchunks || r >= R) return; /* no warp-wide operations follow */
    const uint64_t k0 = chunk * TF_SPTTM_CHUNK;
    const uint32_t n = nnz - k0 < TF_SPTTM_CHUNK ? (uint32_t)(nnz - k0) : TF_SPTTM_CHUNK;
    const uint32_t word = flags[chunk];
    const bool ends_at_chunk_end = chunk + 1 == nchunks || (flags[chunk + 1] & 1u);
    uint64_t fid = chunk_fibre[chunk];
    bool started_here = word & 1u;
    T acc = 0;
    for (uint32_t j = 0; j < n; ++j) {
        if (j > 0 && ((word >> j) & 1u)) {
            T *y = Y + fid * R + r;
            if (started_here) *y = acc;
            else atomicAdd(y, acc);
            ++fid;
            acc = 0;
            started_here = true;
        }
        acc += val[k0 + j] * __ldg(U + (uint64_t)idx[k0 + j] * R + r);
    }
    T *y = Y + fid * R + r;
    if (started_here && ends_at_chunk_end) *y = acc;
    else atomicAdd(y, acc);
}

/* F-COO (fmt/spttm_fcoo.h) on the device. */
template <typename T>
struct dev_fcoo {
    tf_dev_array<uint32_t> idx, flags, chunk_fibre;
    tf_dev_array<T> val;
    uint64_t nchunks = 0;
};

template <typename T>
tf_status upload_fcoo(const tf_tensor *X, const tf_fibres *F, cudaStream_t stream, dev_fcoo<T> *d)
{
    tf_spttm_fcoo h;
    TF_TRY(tf_spttm_fcoo_build(X, F, &h));
    d->nchunks = h.nchunks;
    tf_status s = d->idx.upload(h.idx, h.nnz, "F-COO indices");
    if (s == TF_OK) s = d->flags.upload(h.flags, h.nchunks, "F-COO bit flags");
    if (s == TF_OK) s = d->chunk_fibre.upload(h.chunk_fibre, h.nchunks, "F-COO chunk fibres");
    if (s == TF_OK) s = d->val.alloc(h.nnz, "F-COO values");
    if (s == TF_OK) s = tf_gpu_put_values<T>(d->val.p, h.val, h.nnz, stream);
    tf_spttm_fcoo_free(&h);
    return s;
}

template <typename T>
tf_status run(tf_gpu_dev &ctx, const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, double *Yh, int warmup,
              int reps, double *times_ms)
{
    const uint32_t R = (uint32_t)U->cols;
    dev_fcoo<T> d;
    TF_TRY(upload_fcoo<T>(X, F, ctx.stream, &d));
    tf_dev_array<T> dU, dY;
    TF_TRY(dU.alloc(U->rows * (uint64_t)R, "SpTTM U"));
    TF_TRY(tf_gpu_put_values<T>(dU.p, U->data, U->rows * (uint64_t)R, ctx.stream));
    const uint64_t ny = F->nfibers * (uint64_t)R;
    TF_TRY(dY.alloc(ny, "SpTTM output"));
    uint32_t C = 1;
    while (C < R && C < 32) C <<= 1;
    const uint64_t chunks_per_block = (TF_SPTTM_THREADS / 32) * (32 / C);
    const uint64_t gx = (d.nchunks + chunks_per_block - 1) / chunks_per_block, gy = (R + C - 1) / C;
    if (gx > (uint64_t)INT32_MAX || gy > 65535)
        return tf_fail(TF_ERR_RANGE, "SpTTM grid %llu x %llu exceeds the device limits", (unsigned long long)gx,
                       (unsigned long long)gy);
    TF_TRY(tf_gpu_time_runs(ctx.stream, warmup, reps, times_ms, [&]() -> tf_status {
        TF_CU(cudaMemsetAsync(dY.p, 0, ny * sizeof(T), ctx.stream));
        spttm_fcoo_kernel<T><<<dim3((unsigned)gx, (unsigned)gy), TF_SPTTM_THREADS, 0, ctx.stream>>>(
            d.idx.p, d.val.p, d.flags.p, d.chunk_fibre.p, dU.p, dY.p, F->nnz, d.nchunks, R, C);
        TF_CU_LAUNCH("spttm_fcoo_kernel");
        return TF_OK;
    }));
    return tf_gpu_get_values<T>(Yh, dY.p, ny, ctx.stream);
}

} // namespace

extern "C" tf_status tf_cuda_spttm_impl(const tf_tensor *X, const tf_fibres *F, const tf_matrix *U,
                                   const tf_spttm_opts *o, double *Y, int warmup, int reps, double *times_ms)
{
    tf_gpu_dev *c = nullptr; /* the context's GPU (borrowed) */
    TF_TRY(tf_gpu_dev_of(o->context, &c));
    if (o->precision == TF_SINGLE) return run<float>(*c, X, F, U, Y, warmup, reps, times_ms);
    return run<double>(*c, X, F, U, Y, warmup, reps, times_ms);
}
