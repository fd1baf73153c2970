/* The run context behind the public tf_context (see tenfold.h): options,
 * the resolved backend, and the GPU's device context (streams, handles,
 * properties), made on first use by the CUDA backend and kept. */
#ifndef TF_CORE_CONTEXT_H
#define TF_CORE_CONTEXT_H
#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tf_context {
    tf_context_opts opts;
    tf_backend backend; /* TF_BACKEND_CPU or TF_BACKEND_GPU */
    void *gpu;          /* the device context (a tf_cuda_ctx), NULL until first use */
};

/* The context a call runs in: `given` if non-NULL, else a new default one
 * returned in *own as well (the caller frees *own when done; NULL when
 * nothing was made). `backend` and `device` of the call's own options
 * apply to a private context. */
tf_status tf_context_for_call(tf_context *given, tf_backend backend, int device, int threads,
                              tf_context **use, tf_context **own);

/* CUDA backend hooks (src/cuda/context.cu; stubs in CPU-only builds):
 * the device context's teardown, and the memory budget of the GPU. */
void tf_cuda_context_release(void *gpu);
tf_status tf_cuda_context_budget(tf_context *c, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
