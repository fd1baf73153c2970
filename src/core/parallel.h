/* SPDX-License-Identifier: BSD-3-Clause */
/* Thread-count helpers for the OpenMP CPU backend (work without OpenMP too). */
#ifndef TF_CORE_PARALLEL_H
#define TF_CORE_PARALLEL_H
#ifdef _OPENMP
#include <omp.h>
#define tf_thread_id() omp_get_thread_num()
#define tf_thread_count() omp_get_num_threads()
#else
#define tf_thread_id() 0
#define tf_thread_count() 1
#endif
/* Resolves a user thread request: 0 -> default, otherwise at least 1. */
int tf_resolve_threads(int requested);
#endif
