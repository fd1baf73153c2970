/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_nvecs's internals that tests reach (the public call is in tenfold.h). */
#ifndef TF_ALGO_NVECS_H
#define TF_ALGO_NVECS_H
#include <stdint.h>

/* The sparse operator's memory limits, in doubles: the fused product's
 * partials (0: never fused, always W = X^T V then X W) and W's blocks (0:
 * the default). For tests; not thread-safe. */
void tf_nvecs_set_blocks(uint64_t fused, uint64_t w_block);
#endif
