/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_dense_host: a host tf_matrix as the tf_dense view that plan runs take
 * (SDDMM, MTTKRP with dense operands). */
#include <string.h>

#include "tenfold.h"

tf_dense tf_dense_host(const tf_matrix *m)
{
    tf_dense d;
    memset(&d, 0, sizeof d);
    if (!m) return d;
    d.data = m->data;
    d.rows = m->rows;
    d.cols = m->cols;
    d.ld = m->cols;
    d.precision = TF_DOUBLE;
    d.memory = TF_MEMORY_HOST;
    return d;
}
