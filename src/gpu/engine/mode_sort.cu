/* SPDX-License-Identifier: BSD-3-Clause */
/* Copies of the non-zeros sorted by one mode's index, on the device
 * (mode_sort.cuh). */
#include <algorithm>

#include <cub/device/device_radix_sort.cuh>

#include "gpu/engine/mode_sort.cuh"

namespace {

__global__ void mode_sort_iota_kernel(uint32_t *x, uint64_t n)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (uint64_t)gridDim.x * blockDim.x)
        x[e] = (uint32_t)e;
}

template <class T> __global__ void mode_sort_gather_kernel(T *out, const T *in, const uint32_t *perm, uint64_t n, T shift)
{
    for (uint64_t e = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; e < n; e += (uint64_t)gridDim.x * blockDim.x)
        out[e] = shift ? (T)(in[perm[e]] + shift) : in[perm[e]]; /* no + 0.0: -0.0 stays */
}

__global__ void mode_sort_chunk_ends_kernel(const uint32_t *key, uint64_t nnz, uint32_t L, uint64_t nchunks,
                                            uint32_t *head, uint32_t *tail)
{
    for (uint64_t b = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; b < nchunks;
         b += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t end = (b + 1) * L < nnz ? (b + 1) * L : nnz;
        head[b] = key[b * L];
        tail[b] = key[end - 1];
    }
}

unsigned grid_of(const tf_gpu_dev *dev, uint64_t n)
{
    const uint64_t b = (n + 255) / 256, cap = (uint64_t)dev->sm_count * 16;
    return (unsigned)std::max<uint64_t>(1, std::min(b, cap));
}

tf_status cub_bytes(const tf_gpu_dev *dev, uint64_t n, size_t *bytes)
{
    *bytes = 0;
    TF_CU(cub::DeviceRadixSort::SortPairs(nullptr, *bytes, (const uint32_t *)nullptr, (uint32_t *)nullptr,
                                          (const uint32_t *)nullptr, (uint32_t *)nullptr, (uint32_t)n, 0, 32,
                                          dev->stream));
    return TF_OK;
}

} // namespace

void tf_gpu_mode_sort::release()
{
    if (dev) tf_gpu_dev_use(dev);
    for (uint32_t k = 0; k < TF_GPU_MAX_ORDER; ++k) {
        tf_gpu_free(ind[k]);
        ind[k] = nullptr;
    }
    tf_gpu_free(vals);
    tf_gpu_free(keys);
    tf_gpu_free(perm[0]);
    tf_gpu_free(perm[1]);
    tf_gpu_free(tmp);
    vals = nullptr;
    keys = perm[0] = perm[1] = nullptr;
    tmp = nullptr;
    tmp_bytes = 0;
    first = count = 0;
    src = nullptr;
    nnz = 0;
    order = 0;
}

tf_status tf_gpu_mode_sort_bytes(const tf_gpu_dev *dev, uint32_t order, uint64_t nnz, uint64_t *bytes)
{
    size_t tmp = 0;
    TF_TRY(cub_bytes(dev, nnz, &tmp));
    *bytes = nnz * (order * sizeof(uint32_t) + sizeof(double)) + 3 * nnz * sizeof(uint32_t) + tmp;
    return TF_OK;
}

tf_status tf_gpu_mode_sort_put(tf_gpu_mode_sort &u, tf_gpu_dev *dev, const tf_tensor *X)
{
    u.release();
    if (X->nnz > UINT32_MAX)
        return tf_fail(TF_ERR_ARG, "GPU sort by mode: %llu non-zeros on one GPU (at most %u)",
                       (unsigned long long)X->nnz, UINT32_MAX);
    u.dev = dev;
    TF_TRY(tf_gpu_dev_use(dev));
    const cudaStream_t st = dev->stream;
    const uint64_t n = X->nnz;
    u.order = X->order;
    for (uint32_t k = 0; k < X->order; ++k) {
        TF_TRY(tf_gpu_alloc(&u.ind[k], n, "entries to sort by a mode"));
        if (n) TF_TRY(tf_gpu_h2d_staged(dev, u.ind[k], X->ind[k], n * sizeof(uint32_t), st));
    }
    TF_TRY(tf_gpu_alloc(&u.vals, n, "entries to sort by a mode"));
    if (n) TF_TRY(tf_gpu_h2d_staged(dev, u.vals, X->vals, n * sizeof(double), st));
    TF_TRY(tf_gpu_alloc(&u.keys, n, "sort keys"));
    TF_TRY(tf_gpu_alloc(&u.perm[0], n, "sort order"));
    TF_TRY(tf_gpu_alloc(&u.perm[1], n, "sort order"));
    TF_TRY(cub_bytes(dev, n, &u.tmp_bytes));
    TF_TRY(tf_gpu_alloc_bytes(&u.tmp, std::max<size_t>(u.tmp_bytes, 1), "sort scratch"));
    u.nnz = n;
    u.first = 0;
    u.count = n;
    u.src = X;
    return TF_OK;
}

tf_status tf_gpu_mode_sort_by(tf_gpu_mode_sort &u, uint32_t m, uint64_t limit, uint32_t shift,
                              uint32_t *const *ind_out, double *vals_out)
{
    if (m >= u.order) return tf_fail(TF_ERR_ARG, "GPU sort by mode: mode %u of %u", m + 1, u.order);
    if (u.first > u.nnz || u.count > u.nnz - u.first)
        return tf_fail(TF_ERR_ARG, "GPU sort by mode: entries %llu..+%llu of %llu", (unsigned long long)u.first,
                       (unsigned long long)u.count, (unsigned long long)u.nnz);
    TF_TRY(tf_gpu_dev_use(u.dev));
    const cudaStream_t st = u.dev->stream;
    const uint64_t n = u.nnz;
    if (!n) return TF_OK;
    int bits = 1;
    while (bits < 32 && limit > 1 && (limit - 1) >> bits) ++bits;
    mode_sort_iota_kernel<<<grid_of(u.dev, n), 256, 0, st>>>(u.perm[0], n);
    TF_CU_LAUNCH("mode_sort_iota_kernel");
    size_t bytes = u.tmp_bytes;
    TF_CU(cub::DeviceRadixSort::SortPairs(u.tmp, bytes, u.ind[m], u.keys, u.perm[0], u.perm[1], (uint32_t)n, 0, bits,
                                          st));
    const uint64_t c = u.count;
    if (!c) return TF_OK;
    const uint32_t *order = u.perm[1] + u.first;
    for (uint32_t k = 0; k < u.order; ++k) {
        mode_sort_gather_kernel<uint32_t>
            <<<grid_of(u.dev, c), 256, 0, st>>>(ind_out[k], u.ind[k], order, c, k == m ? shift : 0u);
        TF_CU_LAUNCH("mode_sort_gather_kernel");
    }
    mode_sort_gather_kernel<double><<<grid_of(u.dev, c), 256, 0, st>>>(vals_out, u.vals, order, c, 0.0);
    TF_CU_LAUNCH("mode_sort_gather_kernel");
    return TF_OK;
}

tf_status tf_gpu_mode_sort_chunk_ends(tf_gpu_mode_sort &u, uint32_t L, std::vector<uint32_t> &head,
                                      std::vector<uint32_t> &tail)
{
    const uint64_t n = u.count, nchunks = (n + L - 1) / L;
    head.assign(nchunks, 0);
    tail.assign(nchunks, 0);
    if (!nchunks) return TF_OK;
    TF_TRY(tf_gpu_dev_use(u.dev));
    const cudaStream_t st = u.dev->stream;
    uint32_t *ends = u.perm[0]; /* free after the sort: 2 nchunks <= nnz entries */
    uint32_t *scratch = nullptr;
    if (2 * nchunks > u.nnz) {
        TF_TRY(tf_gpu_alloc(&scratch, 2 * nchunks, "chunk ends"));
        ends = scratch;
    }
    const tf_status s = [&]() -> tf_status {
        mode_sort_chunk_ends_kernel<<<grid_of(u.dev, nchunks), 256, 0, st>>>(u.keys + u.first, n, L, nchunks,
                                                                           ends, ends + nchunks);
        TF_CU_LAUNCH("mode_sort_chunk_ends_kernel");
        TF_CU(cudaMemcpyAsync(head.data(), ends, nchunks * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
        TF_CU(cudaMemcpyAsync(tail.data(), ends + nchunks, nchunks * sizeof(uint32_t), cudaMemcpyDeviceToHost, st));
        TF_CU(cudaStreamSynchronize(st));
        return TF_OK;
    }();
    tf_gpu_free(scratch);
    return s;
}

void tf_host_sort_by_mode(const tf_tensor *X, uint32_t m, std::vector<uint64_t> &perm)
{
    const uint64_t nnz = X->nnz, I = X->dims[m];
    const uint32_t *key = X->ind[m];
    perm.resize(nnz);
    if (I <= 4 * nnz + 1024) {
        std::vector<uint64_t> at(I + 1, 0);
        for (uint64_t k = 0; k < nnz; ++k) ++at[key[k] + 1];
        for (uint64_t i = 0; i < I; ++i) at[i + 1] += at[i];
        for (uint64_t k = 0; k < nnz; ++k) perm[at[key[k]]++] = k;
    } else {
        for (uint64_t k = 0; k < nnz; ++k) perm[k] = k;
        std::stable_sort(perm.begin(), perm.end(), [key](uint64_t x, uint64_t y) { return key[x] < key[y]; });
    }
}

void tf_host_chunk_ends(const uint32_t *keys, uint64_t nnz, uint32_t L, std::vector<uint32_t> &head,
                        std::vector<uint32_t> &tail)
{
    const uint64_t nchunks = (nnz + L - 1) / L;
    head.resize(nchunks);
    tail.resize(nchunks);
    for (uint64_t b = 0; b < nchunks; ++b) {
        head[b] = keys[b * L];
        tail[b] = keys[std::min<uint64_t>((b + 1) * L, nnz) - 1];
    }
}
