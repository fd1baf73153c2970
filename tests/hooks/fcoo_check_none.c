/* SPDX-License-Identifier: BSD-3-Clause */
/* The F-COO builder's test entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/fcoo_check.h"

tf_status tf_gpu_check_fcoo_build(const tf_tensor *X, uint32_t mode, tf_precision prec, const uint32_t *parts,
                                  int np, char *diff, size_t len)
{
    (void)X, (void)mode, (void)prec, (void)parts, (void)np, (void)diff, (void)len;
    return tf_fail(TF_ERR_UNAVAILABLE, "the device F-COO builder needs the CUDA backend, which this build lacks");
}
