/* SPDX-License-Identifier: BSD-3-Clause */
/* The GCP test entries when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/gcp_check.h"

tf_status tf_gpu_check_gcp_draw(const tf_tensor *X, const tf_gcp_opts *o, uint64_t iter, uint32_t *const *ind,
                                double *vals, uint64_t *n, uint64_t *nz, double *w_nz, double *w_z)
{
    (void)X;
    (void)o;
    (void)iter;
    (void)ind;
    (void)vals;
    (void)n;
    (void)nz;
    (void)w_nz;
    (void)w_z;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU GCP needs the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_gcp_step(const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K, uint64_t iter,
                                double *f, double *g)
{
    (void)X;
    (void)o;
    (void)K;
    (void)iter;
    (void)f;
    (void)g;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU GCP needs the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_gcp_step_multi(const tf_tensor *X, const tf_gcp_opts *o, const tf_ktensor *K, uint64_t iter,
                                      int gpus, double *f, double *g, char plan[96])
{
    (void)X;
    (void)o;
    (void)K;
    (void)iter;
    (void)gpus;
    (void)f;
    (void)g;
    (void)plan;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU GCP needs the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_gcp_observed_step(const tf_tensor *X, const tf_gcp_opts *o, double l2, const tf_ktensor *K,
                                         uint64_t iter, int gpus, double adam_step, double *f, double *g, double *u,
                                         char plan[96])
{
    (void)X;
    (void)o;
    (void)l2;
    (void)K;
    (void)iter;
    (void)gpus;
    (void)adam_step;
    (void)f;
    (void)g;
    (void)u;
    (void)plan;
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU GCP needs the CUDA backend, which this build lacks");
}
