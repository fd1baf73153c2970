/* SPDX-License-Identifier: BSD-3-Clause */
/* The process environment, read in one place (src/core/environment.c: the
 * only file of src/ that calls getenv; scripts/check-source checks it). Each
 * variable the library looks at has an accessor named for it; the tuning
 * policy's TF_* overrides are read by tf_tuning_from_env (public), only
 * when a caller asks. */
#ifndef TF_CORE_ENVIRONMENT_H
#define TF_CORE_ENVIRONMENT_H

/* TF_CUDA_MODULE: the CUDA module's file, when set and not empty (the
 * loader then looks nowhere else); else NULL. */
const char *tf_env_cuda_module(void);
/* The most ranks a launcher's variables say this process is one of
 * (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE, MPI_LOCALNRANKS, SLURM_NTASKS);
 * 0 when none is set. */
int tf_env_launcher_ranks(void);
/* CUDA_VISIBLE_DEVICES as set (NULL when unset): the GPUs this process
 * sees, which tells the ranks of a node that a launcher bound to GPUs of
 * their own (src/ranks/local.c). */
const char *tf_env_cuda_visible_devices(void);
/* 1 when OMP_NUM_THREADS is set (the user chose the thread count: no cgroup
 * quota applies). */
int tf_env_omp_num_threads_set(void);
/* The variables `tenfold info --threads` and `cpd -v` describe, as set (NULL
 * when unset): OPENBLAS_NUM_THREADS, OMP_PLACES, OMP_WAIT_POLICY,
 * GOMP_SPINCOUNT. */
const char *tf_env_openblas_num_threads(void);
const char *tf_env_omp_places(void);
const char *tf_env_omp_wait_policy(void);
const char *tf_env_gomp_spincount(void);
/* TF_TEST_GPUS=k (1..TF_MAX_GPUS): the test mode's count of logical GPUs
 * (src/gpu/runtime/device.cu, docs/DESIGN.md "Several GPUs on one"); 0
 * when unset or not such a number. */
int tf_env_test_gpus(void);
/* TF_BUILD_REPORT=1: the builders' phase lines on stderr (the generator on
 * ranks reads it here; the tuning's build_report is the same variable). */
int tf_env_build_report(void);
/* TF_GEN_RANKS_DRAW: how the ranks of a rank-local --gen draw the candidate
 * sequence (src/io/gen_ranks.c): "share" 0 (each draws a share and sends
 * every candidate to the rank of its key), "whole" 1 (each draws all of it
 * and keeps its keys: no candidate moves), unset or anything else -1 (the
 * generator decides). */
int tf_env_gen_ranks_draw(void);
#endif
