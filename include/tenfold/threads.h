/* SPDX-License-Identifier: BSD-3-Clause */
/* tenfold/threads.h — the CPU backend's threads: the default count, the
 * limit, and descriptions of the teams and where they run. */
#ifndef TENFOLD_THREADS_H
#define TENFOLD_THREADS_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Number of threads the CPU backend uses when an option says 0: OpenMP's
 * (OMP_NUM_THREADS, omp_set_num_threads), at most tf_thread_limit().
 * Without OMP_NUM_THREADS it is also held to a cgroup CPU quota, and on MPI
 * ranks of one host whose CPUs overlap (mpirun --bind-to none) to this
 * rank's share of them: its CPUs over those ranks, the remainder to the
 * lowest ranks, at least 1 -- fixed when the ranks first meet (a
 * distributed context, a read or generation in parts), before their work.
 * Ranks bound to CPUs of their own keep them. */
int tf_default_threads(void);
/* When the default is this rank's share of its host's CPUs: returns it and
 * sets *cpus (the CPUs shared) and *ranks (the ranks that share them); else
 * 0 and both 0 (one process, OMP_NUM_THREADS set, CPUs of its own). Either
 * pointer may be NULL. */
int tf_default_threads_shared(int *cpus, int *ranks);
/* The most threads the CPU backend starts: 4 per online CPU, at least 64.
 * A larger thread count -- an option's threads, OMP_NUM_THREADS -- is
 * clamped to it (not an error; the tenfold tool says so in a note). */
int tf_thread_limit(void);
/* The CPU threads in one line (tenfold cpd -v, tenfold info --threads): the
 * OpenMP team of `threads` (0 = the default); with X (NULL: none) and rank,
 * the teams of that problem's MTTKRP and dense steps (fewer threads where
 * the work is small); the BLAS library's threads; the OpenMP binding and
 * wait policy in force; the CPUs the process may use. */
void tf_threads_describe(int threads, const tf_tensor *X, uint64_t rank, char *buf, size_t len);
/* Where the threads run, as CPU lists in /proc's form (0-3,8):
 * "team: [..] [..]" for each thread of a parallel region of `threads` (0 =
 * the default), then "\nothers: [..] ..." for the process's other threads
 * (the BLAS library's own, ...; "(none)"). */
void tf_threads_placement(int threads, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* TENFOLD_THREADS_H */
