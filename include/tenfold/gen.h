/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/gen.h — synthetic sparse tensors (power-law skew, planted models,
 * counts). */
#ifndef TENFOLD_GEN_H
#define TENFOLD_GEN_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tf_gen_opts {
    uint32_t order;
    uint64_t dims[TF_MAX_ORDER];
    uint64_t nnz;                   /* exact number of distinct non-zeros   */
    double alpha[TF_MAX_ORDER];     /* per-mode power-law skew in [0, 1); 0 = uniform */
    uint64_t seed;
    uint64_t rank;                  /* >0: values from a planted rank-R model */
    double noise;                   /* relative Gaussian noise on planted values */
    int threads;                    /* 0 = default (OpenMP); the output does not depend on it */
    double counts;                  /* 0 (default): real values as above; >= 1: counts
                                       (integers, for CP-APR) of mean `counts`: 1 +
                                       Poisson(counts - 1), or with a planted model 1 +
                                       Poisson((counts - 1) m / mean(m)), m the model's
                                       value there (so larger where the model is);
                                       counts = 1: every value 1. Not with noise */
} tf_gen_opts;

/* Index of mode d: perm_d[floor(d * u^(1/(1-alpha)))], u ~ U[0,1), perm_d a
 * fixed random permutation; the tensor holds the first nnz distinct
 * coordinates of the sequence of draws (duplicates rejected), sorted.
 * Deterministic for a given seed, whatever the thread count; parallel
 * (OpenMP, o->threads). Peak memory about 24 bytes per draw (coordinates
 * of up to 64 bits), then 16 per draw plus the COO. */
tf_status tf_generate(const tf_gen_opts *o, tf_tensor *out);

/* What tf_generate_part reports. */
typedef struct tf_gen_info {
    uint64_t first;      /* the part's first non-zero in the whole tensor  */
    uint64_t total_nnz;  /* the whole tensor's non-zeros (o->nnz)          */
    uint64_t peak_bytes; /* host memory this process's generator held at most */
    double seconds;      /* wall time                                       */
} tf_gen_info;

/* Part `part` of `parts` of tf_generate's tensor: its non-zeros [nnz part /
 * parts, nnz (part + 1) / parts), equal bit for bit to the whole's there
 * (tf_tensor_keep_part of it). parts = 1: tf_generate. parts >= 2: the
 * parts are the ranks of MPI_COMM_WORLD (MPI started by tf_mpi_start; part
 * = this rank, parts = their number), which call this together; no rank
 * builds the whole: the ranks draw the candidate sequence between them,
 * each candidate goes to the rank of its range of coordinates, which keeps
 * the distinct ones; the ranks find the whole's cut together, then move the
 * kept non-zeros to their parts. Peak memory about the whole's over parts.
 * info (may be NULL) gets the figures. */
tf_status tf_generate_part(const tf_gen_opts *o, uint64_t part, uint64_t parts, tf_tensor *out, tf_gen_info *info);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_GEN_H */
