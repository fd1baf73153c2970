/* SPDX-License-Identifier: BSD-3-Clause */
/* The Tucker test entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/tucker_check.h"

tf_status tf_gpu_check_ttmc(const tf_tensor *X, uint32_t mode, const tf_matrix *U, double *Y, uint64_t *edge_rows)
{
    (void)X;
    (void)mode;
    (void)U;
    (void)Y;
    (void)edge_rows;
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU TTMc needs the CUDA backend, which this build lacks");
}
