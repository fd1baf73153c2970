/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread-count helpers for the OpenMP CPU backend (work without OpenMP too). */
#ifndef TF_CORE_PARALLEL_H
#define TF_CORE_PARALLEL_H
#include <stddef.h>
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
 * most tf_thread_limit(), as the default is. The default is OpenMP's
 * (OMP_NUM_THREADS, else the CPUs of the process's mask), held to a cgroup
 * CPU quota when OMP_NUM_THREADS is not set. Every OpenMP region of the
 * library names its team size (num_threads) through here or through
 * tf_default_threads(), never the bare OMP_NUM_THREADS. */
int tf_resolve_threads(int requested);
/* CPUs a cgroup quota (cpu.max, cpu.cfs_quota_us) allows, rounded up; 0 if
 * there is none (read once). */
int tf_cpu_quota(void);

/* Work (about one multiply-add on cached data each; a streamed element
 * counts as several) that makes another thread worth waking: a thread's
 * share below it takes less than the fork and join of a passively waiting
 * team, and more threads are slower (uber-apr14 on 32 cores: 8 threads 4.4
 * ms per iteration, 32 threads 6.0). About 0.2 ms on one core. */
#define TF_TEAM_MIN_WORK (1ull << 21)
/* Threads for a step of `work` units (see TF_TEAM_MIN_WORK) split into
 * `units` independent pieces: at most threads, units and work /
 * TF_TEAM_MIN_WORK, at least 1. threads 0 = the default. */
int tf_team_for_work(int threads, uint64_t units, uint64_t work);
/* Threads of an MTTKRP of nnz non-zeros, rank R, order N on the CPU: work
 * nnz * R * N (a non-zero's N-1 row products and its add, per column). */
int tf_mttkrp_team(int threads, uint64_t nnz, uint64_t R, uint32_t order);

/* The CPUs this process may use: under OpenMP binding (OMP_PROC_BIND,
 * OMP_PLACES) the CPUs of all its places, since the calling thread is bound
 * to one place; else the calling thread's mask. Returns a CPU_ALLOC set
 * (free with CPU_FREE) and its size in bytes, or NULL. */
void *tf_process_cpus(size_t *size);
/* Lets the calling thread run on all of tf_process_cpus: for helper threads
 * (the text reader's read-ahead), not OpenMP ones. A thread inherits its creator's
 * mask, and under binding that is the OpenMP master's one place: the helper,
 * and the threads it creates in turn (liblzma's decoders), would share the
 * master's CPU. */
void tf_unbind_self(void);
/* The same for a while, for a bound thread about to make threads it does not
 * control (liblzma's decoders start on its first calls): returns the old
 * mask (NULL: it was not narrower), which tf_unbind_end puts back. */
void *tf_unbind_begin(size_t *size);
void tf_unbind_end(void *saved, size_t size);
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
