/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread-count helpers for the OpenMP CPU backend (work without OpenMP too). */
#ifndef TF_CORE_PARALLEL_H
#define TF_CORE_PARALLEL_H
#include <stdint.h>
#ifdef _OPENMP
#include <omp.h>
#define tf_thread_id() omp_get_thread_num()
#define tf_thread_count() omp_get_num_threads()
#else
#define tf_thread_id() 0
#define tf_thread_count() 1
#endif
/* Resolves a user thread request: 0 -> default, otherwise at least 1; at
 * most tf_thread_limit(), as the default is. Every OpenMP region of the
 * library names its team size (num_threads) through here or through
 * tf_default_threads(), never the bare OMP_NUM_THREADS. */
int tf_resolve_threads(int requested);
/* dst[k] = (float)src[k], k < n, on the default threads (the GPU's fp32
 * uploads convert through it: serially, 20M values took ~30 ms). */
void tf_doubles_to_floats(const double *src, float *dst, uint64_t n);
/* dst[k] = src[k], k < n, likewise (fp32 downloads). */
void tf_floats_to_doubles(const float *src, double *dst, uint64_t n);
/* memcpy of n bytes on the default threads (the GPU's pinned staging:
 * one thread copies pageable memory at a fraction of the DMA's rate). */
void tf_copy_bytes(void *dst, const void *src, uint64_t n);
/* A parallel bucket scatter's offsets: hist[t*nb + b] (thread t's count of
 * bucket b) becomes thread t's first slot in bucket b (buckets in order,
 * threads in order within one, so the scatter is stable); start[b] gets
 * bucket b's first slot. Returns the total. Called by one thread. */
uint64_t tf_bucket_offsets(uint64_t *hist, uint64_t *start, uint64_t nb, int nt);
/* The same with thread t's counts at hist[t*stride + b] (stride >= nb: rows
 * padded to cache lines, so threads counting few buckets share none). */
uint64_t tf_bucket_offsets_strided(uint64_t *hist, uint64_t stride, uint64_t *start, uint64_t nb, int nt);
#endif
