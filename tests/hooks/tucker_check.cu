/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the GPU TTMc of sparse Tucker; see tucker_check.h. */
#include "hooks/tucker_check.h"

#include <string.h>

#include "gpu/tucker/ttmc.cuh"
#include "seams/cuda_module.h"

namespace {

tf_status run(tf_gpu_dev *dev, const tf_tensor *X, uint32_t mode, const tf_matrix *U, double *Y, uint64_t *edge_rows)
{
    uint64_t ranks[TF_GPU_MAX_ORDER];
    int want[TF_GPU_MAX_ORDER] = {0};
    uint64_t C = 1;
    for (uint32_t k = 0; k < X->order; ++k) {
        ranks[k] = k == mode ? 1 : U[k].cols;
        if (k != mode) C *= U[k].cols;
    }
    want[mode] = 1;
    tf_gpu_ttmc p;
    TF_TRY(tf_gpu_ttmc_build(dev, X, ranks, want, 0, &p));
    *edge_rows = p.md[mode].ncross;
    tf_dev_array<double> dU[TF_GPU_MAX_ORDER], dY;
    const double *Us[TF_GPU_MAX_ORDER] = {nullptr};
    const cudaStream_t st = dev->stream;
    for (uint32_t k = 0; k < X->order; ++k) {
        if (k == mode) continue;
        TF_TRY(dU[k].alloc(X->dims[k] * U[k].cols, "test factor"));
        TF_TRY(tf_gpu_put_values<double>(dU[k].p, U[k].data, X->dims[k] * U[k].cols, st));
        Us[k] = dU[k].p;
    }
    const uint64_t n = X->dims[mode] * C;
    TF_TRY(dY.alloc(n, "test Y"));
    TF_CU(cudaMemsetAsync(dY.p, 0xff, n * sizeof(double), st)); /* all ones: NaN */
    if (p.edges) TF_CU(cudaMemsetAsync(p.edges, 0xff, p.edge_doubles * sizeof(double), st));
    TF_TRY(tf_gpu_ttmc_run(&p, mode, Us, dY.p));
    return tf_gpu_get_values<double>(Y, dY.p, n, st);
}

} // namespace

extern "C" tf_status tf_gpu_check_ttmc(const tf_tensor *X, uint32_t mode, const tf_matrix *U, double *Y,
                                       uint64_t *edge_rows)
{
    *edge_rows = 0;
    if (!X || !U || !Y || mode >= X->order) return tf_fail(TF_ERR_ARG, "tf_gpu_check_ttmc: bad arguments");
    tf_context_opts co;
    tf_context_opts_default(&co);
    co.backend = TF_BACKEND_GPU;
    tf_context *ctx = NULL;
    TF_TRY(tf_context_create(&co, &ctx));
    tf_gpu_dev *dev = NULL;
    tf_status s = tf_gpu_dev_of(ctx, &dev);
    if (s == TF_OK) s = tf_gpu_dev_use(dev);
    if (s == TF_OK) s = run(dev, X, mode, U, Y, edge_rows);
    tf_context_free(ctx);
    return s;
}
