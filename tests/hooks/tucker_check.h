/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the GPU TTMc of sparse Tucker (internal; tests only): host
 * doubles in, host doubles out, the pass's device output (Y and its edge
 * rows) poisoned (NaN) before it runs. Without the CUDA backend it fails
 * with TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_TUCKER_CHECK_H
#define TF_TESTS_HOOKS_TUCKER_CHECK_H
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Y (dims[mode] x C, row-major, C the product of U[k].cols, k != mode) =
 * the TTMc of mode `mode` of X with the factors U[k] (host, dims[k] x R_k;
 * U[mode] not read) on the GPU of a default context; *edge_rows gets the
 * pass's edge rows of the mode (rows of Y that cross its chunks), so a
 * test can see that it covered some. */
tf_status tf_gpu_check_ttmc(const tf_tensor *X, uint32_t mode, const tf_matrix *U, double *Y, uint64_t *edge_rows);

#ifdef __cplusplus
}
#endif
#endif
