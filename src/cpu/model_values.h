/* SPDX-License-Identifier: BSD-3-Clause */
/* The model of a Kruskal tensor at the non-zeros of a sparse tensor, the
 * kernel of tf_model_values and tf_ktensor_innerprod, for callers that have
 * checked their arguments already (CP-APR and GCP iterations). */
#ifndef TF_CPU_MODEL_VALUES_H
#define TF_CPU_MODEL_VALUES_H
#include "tenfold.h"

/* Non-zeros per block of a pass: a block's partial sums are added in block
 * order, so sums do not depend on the thread count. */
#define TF_MODEL_BLOCK 4096u

/* m_j = sum_r lambda_r prod_n A_n(i_jn, r) for every non-zero j of X
 * (lambda NULL: all ones). out (may be NULL) gets m_j; dot (may be NULL)
 * gets sum_j x_j m_j. X valid and K's factors matching X's dims: not
 * checked here. threads 0 = default. */
tf_status tf_cpu_model_values(const tf_tensor *X, const tf_ktensor *K, int threads, double *out, double *dot);
/* *sse = sum_j (x_j - m_j)^2 over the non-zeros of X (completion's error
 * on observed entries), in the same blocks: the same bits for any thread
 * count. X's indices inside K's dims: not checked here (X's dims are not
 * read). */
tf_status tf_cpu_model_sse(const tf_tensor *X, const tf_ktensor *K, int threads, double *sse);
#endif
