/* SPDX-License-Identifier: BSD-3-Clause */
/* The BLAS library's own threads. The dense steps call BLAS on row blocks
 * from inside tenfold's OpenMP loops (the team does the parallel work, each
 * call is sequential), so a BLAS with threads of its own only competes with
 * the OpenMP workers (seen: 24x slower dense steps with OpenBLAS's
 * pthreads). OpenBLAS is found at run time, so a build linked against one
 * BLAS and run with another (Debian's alternatives) is still right. */
#ifndef TF_CPU_BLAS_THREADS_H
#define TF_CPU_BLAS_THREADS_H

typedef struct tf_blas_threads_info {
    const char *name;  /* "OpenBLAS", or "" for another BLAS (no threads known) */
    const char *kind;  /* OpenBLAS's threading: "pthreads", "OpenMP", "sequential" */
    int threads;       /* its thread count now (1 without threads of its own)      */
    int pinned;        /* 1 if CP-ALS runs hold it to one thread                    */
} tf_blas_threads_info;
void tf_blas_threads_query(tf_blas_threads_info *out);
/* 1 if the BLAS in use is OpenBLAS (looked up once). */
int tf_blas_is_openblas(void);

/* OpenBLAS with pthreads: one thread until tf_blas_threads_restore, which
 * gives back the count returned (0: nothing to give back). OpenBLAS with
 * OpenMP is left alone: its calls from an active parallel region run on one
 * thread anyway, and its openblas_set_num_threads would set tenfold's own
 * OpenMP default (omp_set_num_threads). Other libraries: a no-op. */
int tf_blas_threads_pin_single(void);
void tf_blas_threads_restore(int previous);
/* OpenBLAS with pthreads, its count not set by OPENBLAS_NUM_THREADS: at
 * most `most` threads from now on (an MPI rank's share of its host's CPUs,
 * so that its eigensolvers do not take every CPU of the host); else a
 * no-op. */
void tf_blas_threads_cap(int most);
#endif
