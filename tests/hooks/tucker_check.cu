/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the GPU TTMc of sparse Tucker; see tucker_check.h. */
#include "hooks/tucker_check.h"

#include "gpu/tucker/ttmc.cuh"
#include "seams/cuda_module.h"

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
    if (s == TF_OK) s = tf_gpu_ttmc_once(dev, X, mode, U, Y, true, edge_rows);
    tf_context_free(ctx);
    return s;
}
