#ifndef TF_ALGO_MTTKRP_CHECK_H
#define TF_ALGO_MTTKRP_CHECK_H
#include "tenfold.h"
/* Validates MTTKRP arguments against a tensor shape (used by every entry point). */
tf_status tf_check_mttkrp_args(uint32_t order, const uint64_t *dims, uint32_t mode,
                               const tf_matrix *factors, const tf_matrix *out);
#endif
