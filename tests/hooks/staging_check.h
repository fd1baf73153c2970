/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the device context's pinned staging (internal; tests
 * only). Without the CUDA backend it fails with TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_STAGING_CHECK_H
#define TF_TESTS_HOOKS_STAGING_CHECK_H
#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* On a fresh device context of GPU 0 whose staging buffers hold
 * slot_bytes each (0: the default) and whose tuning.gpu_staging is
 * `staging`, with the ring made first when `premake` (tf_gpu_stage_ready;
 * else the copies make it if they are large enough): copies n elements of a random host array (bytes, or with
 * `floats` doubles stored as floats: tf_gpu_h2d_staged_floats) into a
 * poisoned device buffer, one byte past an aligned address for bytes, in
 * `calls` consecutive calls over the array's pieces alternating the work
 * and side streams; overwrites the host array as soon as each call
 * returns (it may be reused then); then reads everything back. diff gets
 * "" when the device holds the original values and the poison around them
 * is intact, else the first difference. *ring: 1 when the pinned ring was
 * used, 0 not made, -1 could not be made (the plain-copy fallback). */
tf_status tf_gpu_check_staged_copy(uint64_t n, size_t slot_bytes, int staging, int premake, int floats, int calls,
                                   int *ring, char *diff, size_t len);

#ifdef __cplusplus
}
#endif
#endif
