/* SPDX-License-Identifier: BSD-3-Clause */
/* The CP-APR test entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/apr_check.h"

tf_status tf_gpu_check_apr_phi(const tf_tensor *X, const tf_ktensor *K, uint32_t mode, double eps, double *phi,
                               double *kkt)
{
    (void)X;
    (void)K;
    (void)mode;
    (void)eps;
    (void)phi;
    (void)kkt;
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU CP-APR kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_apr_streamed(const tf_tensor *X, const tf_cp_apr_opts *o, uint64_t batch, tf_ktensor *out,
                                    tf_cp_apr_report *rep)
{
    (void)X;
    (void)o;
    (void)batch;
    (void)out;
    (void)rep;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU CP-APR needs the CUDA backend, which this build lacks");
}
