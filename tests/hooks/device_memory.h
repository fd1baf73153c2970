/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU memory as a user's program holds it -- cudaMalloc, cudaMallocManaged,
 * cudaHostAlloc and its own streams, outside tenfold's ledger -- for the
 * tests of SDDMM plans that read and write arrays in GPU memory (tests
 * only). Without the CUDA backend every call fails with TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_DEVICE_MEMORY_H
#define TF_TESTS_HOOKS_DEVICE_MEMORY_H
#include <stddef.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tf_test_mem { TF_TEST_DEVICE = 0, TF_TEST_MANAGED, TF_TEST_PINNED } tf_test_mem;

/* Makes `device` the calling thread's current GPU (cudaSetDevice): where
 * tf_test_gpu_alloc allocates and streams are made (tests of several GPUs;
 * tenfold's own calls change it too, so set it before each use). */
tf_status tf_test_gpu_set_device(int device);
/* bytes of `kind` memory on the current GPU (device 0 unless set). */
tf_status tf_test_gpu_alloc(void **p, size_t bytes, tf_test_mem kind);
void tf_test_gpu_free(void *p, tf_test_mem kind);
/* Synchronous copies (cudaMemcpy, then the whole device waited for). */
tf_status tf_test_gpu_put(void *dst, const void *src, size_t bytes);
tf_status tf_test_gpu_get(void *dst, const void *src, size_t bytes);
/* Every byte of dst (GPU memory) set to `byte`, and waited for. */
tf_status tf_test_gpu_fill(void *dst, int byte, size_t bytes);
/* A stream of the program's own (non-blocking), waiting, freeing. */
tf_status tf_test_gpu_stream(void **stream);
tf_status tf_test_gpu_stream_wait(void *stream);
void tf_test_gpu_stream_free(void *stream);

#ifdef __cplusplus
}
#endif
#endif
