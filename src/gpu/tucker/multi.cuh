/* SPDX-License-Identifier: BSD-3-Clause */
/* The several-GPU Tucker backend (src/gpu/tucker/multi.cu), made by the
 * entry point (backend.cu) when o->context has more than one device. */
#ifndef TF_GPU_TUCKER_MULTI_CUH
#define TF_GPU_TUCKER_MULTI_CUH
extern "C" {
#include "seams/tucker.h"
}

/* HOOI over the context's devices (o->context->opts.ndevices >= 2): per
 * mode each GPU owns a range of rows of Y_(n). TF_ERR_NOMEM / _UNAVAILABLE
 * as the one-GPU backend. */
tf_status tf_gpu_tucker_multi_create(const tf_tensor *X, const tf_tucker_opts *o, tf_tucker_backend *out);
#endif
