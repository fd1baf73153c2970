/* SPDX-License-Identifier: BSD-3-Clause */
/* Which GPU each rank of a node takes. A rank's local index counts the
 * lower ranks on its host (MPI_Get_processor_name) that see the same GPUs
 * (CUDA_VISIBLE_DEVICES): under mpirun, and srun without GPU binding, every
 * rank of a node sees all its GPUs and takes GPU `index` (the same number as
 * OMPI_COMM_WORLD_LOCAL_RANK / SLURM_LOCALID, block or cyclic distribution);
 * under `srun --gpus-per-task=1` or `--gpu-bind=single:1`/`map_gpu` (or a
 * wrapper that sets CUDA_VISIBLE_DEVICES per rank) each rank sees its own GPU
 * and takes index 0 of it. The launchers' variables are not read: inside a
 * Slurm allocation a batch step's SLURM_LOCALID=0 is inherited by every rank
 * mpirun starts, which would put them all on GPU 0. */
#include "ranks/local.h"

#include <string.h>

size_t tf_local_key_width(size_t host_width) { return host_width + 1 + TF_LOCAL_VISIBLE_WIDTH; }

void tf_local_key(char *key, size_t width, const char *host, const char *visible)
{
    memset(key, 0, width);
    const size_t host_width = width - 1 - TF_LOCAL_VISIBLE_WIDTH;
    const size_t h = host ? strnlen(host, host_width - 1) : 0;
    if (h) memcpy(key, host, h);
    key[h] = '\n';
    /* unset and set to every GPU are told apart: "\n" against "\n0,1" */
    if (visible) {
        key[h + 1] = '=';
        const size_t v = strnlen(visible, TF_LOCAL_VISIBLE_WIDTH - 2);
        memcpy(key + h + 2, visible, v);
    }
}

int tf_local_index(const char *keys, size_t width, int me)
{
    const char *mine = keys + (size_t)me * width;
    int n = 0;
    for (int r = 0; r < me; ++r) n += !memcmp(keys + (size_t)r * width, mine, width);
    return n;
}
