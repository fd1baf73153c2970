/* SPDX-License-Identifier: BSD-3-Clause */
/* The flop and byte models of one MTTKRP, shared by `tenfold bench mttkrp`
 * (cli/cmd_bench.c) and bench/bench_gpu_mttkrp.c. Header-only: the bench
 * programs link only the library.
 *
 * Mode n, order N, nnz non-zeros, rank R, value size s (8 double, 4 single),
 * I_m the length of mode m:
 *   flops = nnz * R * N: per non-zero and column, N-1 multiplications (the
 *           value times the N-1 factor rows) and one addition.
 *   GPU plans, the compulsory traffic (a run at the device copy bandwidth
 *   would move it in bytes / bandwidth):
 *     bytes = T_n + sum_{m != n} I_m * R * s + I_n * R * s
 *     T_n: the format's bytes read for mode n: tf_plan_bytes for coo and
 *     blco (one structure serves every mode), tf_plan_bytes / N for fcoo
 *     (one copy per mode); every factor read once; the output written once.
 *   CPU plans, streaming (one factor row fetched per non-zero and other
 *   mode, as if the cache held nothing):
 *     bytes = nnz * (4N + s) + nnz * (N-1) * R * s + I_n * R * s
 *     (indices and values once, the factor rows, the output once). Formats
 *     that compress fibres (csf) read fewer factor rows than this counts. */
#ifndef TF_CLI_MTTKRP_MODEL_H
#define TF_CLI_MTTKRP_MODEL_H
#include "tenfold.h"

/* The models in words, for help texts and JSON reports. */
#define CLI_MTTKRP_FLOPS_MODEL "nnz * R * order"
#define CLI_MTTKRP_GPU_BYTES_MODEL \
    "T_mode + sum_m dims[m] * R * s (T_mode: tf_plan_bytes, divided by order for fcoo)"
#define CLI_MTTKRP_CPU_BYTES_MODEL \
    "nnz * (4 * order + s) + nnz * (order - 1) * R * s + dims[mode] * R * s"

/* s: bytes of one value in precision p. */
static inline double cli_mttkrp_value_bytes(tf_precision p) { return p == TF_SINGLE ? 4.0 : 8.0; }

static inline double cli_mttkrp_flops(const tf_tensor *X, uint64_t R)
{
    return (double)X->nnz * (double)R * (double)X->order;
}

/* T_n of a GPU plan: the bytes of its format read by one MTTKRP of any mode. */
static inline double cli_mttkrp_stream_bytes(const tf_plan *p, uint32_t order)
{
    const double all = (double)tf_plan_bytes(p);
    return tf_plan_format(p) == TF_FORMAT_FCOO ? all / (double)order : all;
}

/* Bytes moved by one MTTKRP of `mode` with plan p (X the tensor it was built
 * from, prec its precision), by the model of p's backend. */
static inline double cli_mttkrp_bytes(const tf_tensor *X, const tf_plan *p, uint32_t mode, uint64_t R,
                                      tf_precision prec)
{
    const double s = cli_mttkrp_value_bytes(prec), r = (double)R, nnz = (double)X->nnz, N = X->order;
    if (tf_plan_backend(p) == TF_BACKEND_GPU) {
        double dense = 0;
        for (uint32_t m = 0; m < X->order; ++m) dense += (double)X->dims[m] * r * s;
        return cli_mttkrp_stream_bytes(p, X->order) + dense;
    }
    return nnz * (4.0 * N + s) + nnz * (N - 1) * r * s + (double)X->dims[mode] * r * s;
}
#endif
