/* SPDX-License-Identifier: BSD-3-Clause */
/* A rank's index among the ranks that share its GPUs (src/ranks/local.c):
 * the GPU a node's ranks each take under mpirun, srun or any launcher. */
#ifndef TF_RANKS_LOCAL_H
#define TF_RANKS_LOCAL_H
#include <stddef.h>

/* Width of a rank's key: its host name (up to `host_width`) then, after a
 * newline, the GPUs it sees (CUDA_VISIBLE_DEVICES, up to 511 bytes). */
#define TF_LOCAL_VISIBLE_WIDTH 512
size_t tf_local_key_width(size_t host_width);

/* Writes the key of a rank on `host` that sees the GPUs `visible` (NULL:
 * the variable unset, every GPU of the host) into key[0..width), zero-padded. */
void tf_local_key(char *key, size_t width, const char *host, const char *visible);

/* The index of rank `me` among ranks 0..me whose keys (nranks keys of
 * `width` bytes each, in rank order) equal its own: the ranks of one host
 * that see the same GPUs count 0, 1, 2, ... in rank order. */
int tf_local_index(const char *keys, size_t width, int me);
#endif
