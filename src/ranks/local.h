/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank's index among the ranks that share its GPUs (src/ranks/local.c):
 * the GPU a node's ranks each take under mpirun, srun or any launcher; and
 * its share of the CPUs it shares with ranks of its host. */
#ifndef TF_RANKS_LOCAL_H
#define TF_RANKS_LOCAL_H
#include <stddef.h>

/* Width of a rank's key: its host name (up to `host_width`) then, after a
 * newline, the GPUs it sees (CUDA_VISIBLE_DEVICES, up to 511 bytes), then
 * the CPUs it may use, a bit each for CPUs 0..TF_LOCAL_CPU_BITS-1 (a CPU
 * past them takes the bit of its number modulo TF_LOCAL_CPU_BITS: at worst
 * two ranks seem to share a CPU). */
#define TF_LOCAL_VISIBLE_WIDTH 512
#define TF_LOCAL_CPU_BITS 1024
size_t tf_local_key_width(size_t host_width);

/* Writes the key of a rank on `host` that sees the GPUs `visible` (NULL:
 * the variable unset, every GPU of the host) and no CPU yet into
 * key[0..width), zero-padded. */
void tf_local_key(char *key, size_t width, const char *host, const char *visible);
/* Adds CPU `cpu` to the key's CPUs. */
void tf_local_key_cpu(char *key, size_t width, long cpu);

/* The index of rank `me` among ranks 0..me whose keys (nranks keys of
 * `width` bytes each, in rank order) have its host and GPUs (not CPUs):
 * the ranks of one host that see the same GPUs count 0, 1, 2, ... in rank
 * order. */
int tf_local_index(const char *keys, size_t width, int me);
/* The ranks of rank me's host (by name alone, whatever GPUs and CPUs they
 * see), itself included. */
int tf_local_host_ranks(const char *keys, size_t width, int nranks, int me);
/* The ranks of rank me's host (by name alone, whatever GPUs they see) whose
 * CPUs overlap its own, itself included; *index gets how many of them come
 * before it. 1 for a rank whose CPUs are its own (or none were written). */
int tf_local_cpu_sharers(const char *keys, size_t width, int nranks, int me, int *index);
/* The threads of the rank `index` of `ranks` that share `cpus` CPUs:
 * cpus / ranks, one more for the first cpus % ranks of them, at least 1. */
int tf_local_cpu_share(int cpus, int ranks, int index);
#endif
