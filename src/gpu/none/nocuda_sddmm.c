/* SPDX-License-Identifier: BSD-3-Clause */
/* SDDMM and SpTTM GPU entry points when the library is built without the
 * CUDA backend. */
#include "backend/sddmm_backends.h"
#include "backend/spttm_backends.h"
#include "core/error.h"

static const char no_cuda[] = "GPU SDDMM needs the CUDA backend, which this build of tenfold does not have";

tf_status tf_cuda_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, uint32_t npanels,
                                   tf_sddmm_panel *panels, tf_sddmm_gpu **out)
{
    *out = NULL;
    return tf_fail(TF_ERR_UNAVAILABLE, "%s", no_cuda);
}

tf_status tf_cuda_sddmm_plan_run(tf_sddmm_gpu *g, const tf_sddmm_part_operands *ops, int given_parts,
                                 const tf_sddmm_run_opts *ro)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "%s", no_cuda);
}

tf_status tf_cuda_sddmm_plan_time(tf_sddmm_gpu *g, const tf_sddmm_part_operands *ops, int given_parts, int warmup,
                                  int reps, double *times_ms, double *part_ms)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "%s", no_cuda);
}

void tf_cuda_sddmm_plan_free(tf_sddmm_gpu *g) { (void)g; }

int tf_cuda_memory_of(const void *p, int *device)
{
    (void)p;
    if (device) *device = -1;
    return TF_CUDA_PTR_HOST;
}

tf_status tf_cuda_spttm(const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o,
                        double *Y, int warmup, int reps, double *times_ms)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU SpTTM needs the CUDA backend, which this build of tenfold does not have");
}
