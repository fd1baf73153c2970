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
 * mpirun starts, which would put them all on GPU 0.
 * The same keys carry each rank's CPUs: ranks of one host whose CPUs
 * overlap (mpirun --bind-to none: all of them) split them between their
 * OpenMP teams, where a team each of every CPU would oversubscribe the host
 * as many times as it has ranks (src/ranks/mpi.c). */
#include "ranks/local.h"

#include <string.h>

#define CPU_BYTES (TF_LOCAL_CPU_BITS / 8)

/* the CPUs' bits end the key: host and GPUs (at most width - CPU_BYTES - 1
 * bytes) never reach them */
size_t tf_local_key_width(size_t host_width) { return host_width + 1 + TF_LOCAL_VISIBLE_WIDTH + CPU_BYTES; }

static size_t host_width_of(size_t width) { return width - 1 - TF_LOCAL_VISIBLE_WIDTH - CPU_BYTES; }

void tf_local_key(char *key, size_t width, const char *host, const char *visible)
{
    memset(key, 0, width);
    const size_t host_width = host_width_of(width);
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

void tf_local_key_cpu(char *key, size_t width, long cpu)
{
    if (cpu < 0) return;
    const size_t bit = (size_t)cpu % TF_LOCAL_CPU_BITS;
    unsigned char *bits = (unsigned char *)key + width - CPU_BYTES;
    bits[bit / 8] |= (unsigned char)(1u << (bit % 8));
}

int tf_local_index(const char *keys, size_t width, int me)
{
    const char *mine = keys + (size_t)me * width;
    int n = 0;
    for (int r = 0; r < me; ++r) n += !memcmp(keys + (size_t)r * width, mine, width - CPU_BYTES);
    return n;
}

/* The same host name: the bytes up to the newline that ends it. */
static int same_host(const char *a, const char *b, size_t width)
{
    const char *nl = memchr(a, '\n', host_width_of(width));
    const size_t n = nl ? (size_t)(nl - a) + 1 : host_width_of(width);
    return !memcmp(a, b, n);
}

static int cpus_meet(const char *a, const char *b, size_t width)
{
    const unsigned char *x = (const unsigned char *)a + width - CPU_BYTES;
    const unsigned char *y = (const unsigned char *)b + width - CPU_BYTES;
    for (size_t i = 0; i < CPU_BYTES; ++i)
        if (x[i] & y[i]) return 1;
    return 0;
}

int tf_local_host_ranks(const char *keys, size_t width, int nranks, int me)
{
    int n = 0;
    for (int r = 0; r < nranks; ++r) n += r == me || same_host(keys + (size_t)me * width, keys + (size_t)r * width, width);
    return n;
}

int tf_local_cpu_sharers(const char *keys, size_t width, int nranks, int me, int *index)
{
    const char *mine = keys + (size_t)me * width;
    int n = 0;
    *index = 0;
    for (int r = 0; r < nranks; ++r) {
        const char *k = keys + (size_t)r * width;
        if (r != me && !(same_host(mine, k, width) && cpus_meet(mine, k, width))) continue;
        ++n;
        if (r < me) ++*index;
    }
    return n;
}

int tf_local_cpu_share(int cpus, int ranks, int index)
{
    if (ranks < 1) ranks = 1;
    const int t = cpus / ranks + (index >= 0 && index < cpus % ranks);
    return t < 1 ? 1 : t;
}
