/* SPDX-License-Identifier: BSD-3-Clause */
/* Validates MTTKRP arguments against a tensor shape: the check every
 * MTTKRP entry point (plans, the reference) shares. */
#ifndef TF_CORE_MTTKRP_ARGS_H
#define TF_CORE_MTTKRP_ARGS_H
#include "tenfold.h"

tf_status tf_check_mttkrp_args(const char *who, uint32_t order, const uint64_t *dims, uint32_t mode,
                               const tf_matrix *factors, const tf_matrix *out);
#endif
