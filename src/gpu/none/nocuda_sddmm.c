/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM and SpTTM GPU entry points when the library is built without the
 * CUDA backend. */
#include "backend/sddmm_backends.h"
#include "backend/spttm_backends.h"
#include "core/error.h"

tf_status tf_cuda_sddmm(const tf_csr *S, const tf_matrix *A, const tf_matrix *B, const tf_sddmm_opts *o,
                        double *P, int warmup, int reps, double *times_ms, tf_sddmm_info *info)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU SDDMM needs the CUDA backend, which this build of tenfold does not have");
}

tf_status tf_cuda_spttm(const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o,
                        double *Y, int warmup, int reps, double *times_ms)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU SpTTM needs the CUDA backend, which this build of tenfold does not have");
}
