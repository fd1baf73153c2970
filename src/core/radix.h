/* SPDX-License-Identifier: BSD-3-Clause */
/* Parallel LSD radix sort of COO non-zeros by several modes. */
#ifndef TF_CORE_RADIX_H
#define TF_CORE_RADIX_H
#include "tenfold.h"

/* *perm (allocated, nnz entries) lists non-zero positions in the stable
 * lexicographic order of modes mo[0..nmodes-1] (mo[0] most significant). */
tf_status tf_radix_order(const tf_tensor *t, const uint32_t *mo, uint32_t nmodes, uint64_t **perm);
/* Reorders every index array and the values so that new k = old perm[k]. */
tf_status tf_apply_permutation(tf_tensor *t, const uint64_t *perm);
/* Stable sort of n (key, value) pairs by the low key_bits bits of the keys,
 * through buffers of n entries each; the pointers are swapped so that
 * *keys, *vals hold the result. */
tf_status tf_radix_sort_pairs(uint64_t **keys, uint64_t **vals, uint64_t **kbuf, uint64_t **vbuf, uint64_t n,
                              int key_bits);
/* The non-zeros of t in the stable lexicographic order of modes
 * mo[0..nkey-1], written as columns: dst[j][k] = t->ind[mo[j]][perm[k]]
 * and, when vals is not NULL, vals[k] = t->vals[perm[k]] (perm as
 * tf_radix_order's). The same output for every thread count (0: the
 * default). Needs no permutation array: a scatter by the top key bits
 * into dst, then each bucket sorted in cache; scratch is a few buckets'
 * worth per thread (a bucket holding a large share of the non-zeros, a
 * heavy slice, takes that many 40-byte records once). When t is in the
 * canonical order (sorted by modes 0..order-1, as the readers and the
 * generator leave it; one pass finds out), only the shortest prefix of
 * the key that decides the order is sorted: the output mode alone for an
 * F-COO key (mode, the others ascending), nothing for the key 0..order-1. */
tf_status tf_radix_sort_into(const tf_tensor *t, const uint32_t *mo, uint32_t nkey, uint32_t **dst,
                             double *vals, int threads);
/* For measurements (bench_build --bucket-bits): tf_radix_sort_into's
 * scatter into at most 2^bits buckets (1..16; anything else: the default,
 * 12). Not thread-safe: set it before sorting. */
void tf_radix_set_bucket_bits(int bits);
#endif
