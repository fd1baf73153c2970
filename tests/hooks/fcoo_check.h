/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the device F-COO builder (internal; tests only). Without
 * the CUDA backend it fails with TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_FCOO_CHECK_H
#define TF_TESTS_HOOKS_FCOO_CHECK_H
#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Builds mode `mode` of X's F-COO copy on GPU 0 (fcoo_build.cu, values in
 * precision prec) and on the host (tf_fcoo_build, tf_fcoo_repartition,
 * tf_fcoo_zero_rows), cut into partitions of each of parts[0..np), and
 * compares every array. diff gets "" when all are equal, else the first
 * difference ("mode 2, part 64: part_seg[17] 5 vs 6"). Device arrays are
 * read back whole; the device's spare words past the last bit must be
 * zero like the host's. */
tf_status tf_gpu_check_fcoo_build(const tf_tensor *X, uint32_t mode, tf_precision prec, const uint32_t *parts,
                                  int np, char *diff, size_t len);

#ifdef __cplusplus
}
#endif
#endif
