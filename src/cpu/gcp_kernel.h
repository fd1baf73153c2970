/* SPDX-License-Identifier: BSD-3-Clause */
/* GCP's one pass over a sample (cpu/gcp_sample.h) on the host: the model m
 * at every sampled entry, the weighted loss sum w f(x, m), and (optional)
 * the gradient G_n = the MTTKRP of the sampled entries with values
 * w df/dm(x, m) (the non-zeros of a semi-stratified sample: w (f(x, m) -
 * f(0, m)) and w (df/dm(x, m) - df/dm(0, m))), fused: per entry the row products of the factors once,
 * then every mode's row of G gets y times the product of the other modes'
 * rows (prefix and suffix products). */
#ifndef TF_CPU_GCP_KERNEL_H
#define TF_CPU_GCP_KERNEL_H
#include "cpu/gcp_sample.h"

/* Entries per block of a pass: the loss's block sums are added in block
 * order; the gradient's per-thread copies in thread order (modes summed by
 * entry: row by row in entry order). */
#define TF_GCP_BLOCK 2048u

/* Buffers a caller keeps between passes (grown, never shrunk; zeroed to
 * start; tf_cpu_gcp_pass_ws_free): new pages every pass, the per-thread
 * copies and the by-entry rows, cost more than the pass on large gradients. */
typedef struct tf_gcp_pass_ws {
    void *buf[9];
    uint64_t bytes[9];
} tf_gcp_pass_ws;
void tf_cpu_gcp_pass_ws_free(tf_gcp_pass_ws *ws);

typedef struct tf_gcp_pass_in {
    const tf_gcp_samples *s;
    const double *const *A; /* order factors, dims[n] x R row-major (model lambda = 1) */
    const uint64_t *dims;
    uint64_t rank;
    int loss;               /* tf_gcp_loss */
    int threads;            /* 0 = default */
    int want_f;             /* with G: also the loss sum (else *f = 0); without
                               G it is always computed */
    /* NULL: s holds the entries. Else the pass draws them (tf_gcp_draw_range
     * of stream `stream`), a block at a time, and s gives only their count
     * and weights (tf_gcp_draw_setup): sampling and gradient fused */
    const tf_gcp_nzset *draw;
    uint64_t seed, stream;
    tf_gcp_pass_ws *ws;     /* NULL: the pass allocates and frees its own */
} tf_gcp_pass_in;

/* *f = sum over the sample of w f(x, m); with G (order arrays of dims[n] x
 * R, overwritten) the gradient. */
tf_status tf_cpu_gcp_pass(const tf_gcp_pass_in *in, double *const *G, double *f);
/* Tests: every mode's gradient by entry (on = 1; the rows summed after a
 * sort of the entries by row), instead of the choice from the sizes (0). */
void tf_cpu_gcp_pass_force_by_sample(int on);
#endif
