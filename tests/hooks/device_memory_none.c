/* SPDX-License-Identifier: BSD-3-Clause */
/* The user-side GPU memory entry when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/device_memory.h"

static tf_status none(void)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU memory needs the CUDA backend, which this build lacks");
}

tf_status tf_test_gpu_set_device(int device)
{
    (void)device;
    return none();
}

tf_status tf_test_gpu_alloc(void **p, size_t bytes, tf_test_mem kind)
{
    (void)bytes, (void)kind;
    *p = NULL;
    return none();
}
void tf_test_gpu_free(void *p, tf_test_mem kind) { (void)p, (void)kind; }
tf_status tf_test_gpu_put(void *dst, const void *src, size_t bytes) { (void)dst, (void)src, (void)bytes; return none(); }
tf_status tf_test_gpu_get(void *dst, const void *src, size_t bytes) { (void)dst, (void)src, (void)bytes; return none(); }
tf_status tf_test_gpu_fill(void *dst, int byte, size_t bytes) { (void)dst, (void)byte, (void)bytes; return none(); }
tf_status tf_test_gpu_stream(void **stream)
{
    *stream = NULL;
    return none();
}
tf_status tf_test_gpu_stream_wait(void *stream) { (void)stream; return none(); }
void tf_test_gpu_stream_free(void *stream) { (void)stream; }
