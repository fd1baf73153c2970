/* SPDX-License-Identifier: BSD-3-Clause */
/* Which GPU each rank of a node takes (src/ranks/local.c), as the launchers
 * lay ranks out: mpirun and srun (block and cyclic) with every GPU seen by
 * every rank -> 0, 1, 2, ... per host (OMPI_COMM_WORLD_LOCAL_RANK's and
 * SLURM_LOCALID's numbers); srun --gpus-per-task=1 / --gpu-bind (each rank
 * sees its own GPU) -> 0 everywhere; two ranks seeing one GPU -> 0 and 1 (the
 * context then refuses the second); CUDA_VISIBLE_DEVICES unset against set;
 * long host names and lists cut, not overrun; and the environment accessor.
 * Then the CPUs the keys carry: which ranks of a host share CPUs (mpirun
 * --bind-to none: all; --bind-to core: none; partial overlaps; other GPUs
 * seen or not), the GPU index untouched by them, and the split of a host's
 * CPUs among the ranks that share them. */
#include <stdlib.h>

#include "check.h"
#include "core/environment.h"
#include "ranks/local.h"

#define HOST_WIDTH 256 /* MPI_MAX_PROCESSOR_NAME of Open MPI and MPICH */

/* Fills keys for n ranks (host[r], visible[r]) and writes each rank's index
 * into got[r]. */
static char *layout(int n, const char *const *host, const char *const *visible, int *got)
{
    const size_t w = tf_local_key_width(HOST_WIDTH);
    char *keys = malloc((size_t)n * w);
    if (!keys) abort();
    memset(keys, 'X', (size_t)n * w); /* poisoned: the key must fill its width */
    for (int r = 0; r < n; ++r) tf_local_key(keys + (size_t)r * w, w, host[r], visible ? visible[r] : NULL);
    for (int r = 0; r < n; ++r) got[r] = tf_local_index(keys, w, r);
    return keys;
}

static int same(const int *got, const int *want, int n)
{
    for (int r = 0; r < n; ++r)
        if (got[r] != want[r]) return 0;
    return 1;
}

/* Keys of n ranks on host[r] seeing visible[r] (NULL: all unset) with the
 * CPUs lo[r]..hi[r] (hi < lo: none); each rank's sharers and index. */
static char *cpu_layout(int n, const char *const *host, const char *const *visible, const long *lo, const long *hi,
                        int *sharers, int *index)
{
    const size_t w = tf_local_key_width(HOST_WIDTH);
    char *keys = malloc((size_t)n * w);
    if (!keys) abort();
    memset(keys, 'X', (size_t)n * w);
    for (int r = 0; r < n; ++r) {
        tf_local_key(keys + (size_t)r * w, w, host[r], visible ? visible[r] : NULL);
        for (long c = lo[r]; c <= hi[r]; ++c) tf_local_key_cpu(keys + (size_t)r * w, w, c);
    }
    for (int r = 0; r < n; ++r) sharers[r] = tf_local_cpu_sharers(keys, w, n, r, &index[r]);
    return keys;
}

static void cpu_sharing(void)
{
    int got[8], idx[8];
    const size_t w = tf_local_key_width(HOST_WIDTH);
    /* --bind-to none, 2 hosts x 2 ranks: each pair shares its host's 32 CPUs */
    {
        const char *h[] = {"n1", "n1", "n2", "n2"};
        const long lo[] = {0, 0, 0, 0}, hi[] = {31, 31, 31, 31};
        const int want[] = {2, 2, 2, 2}, want_idx[] = {0, 1, 0, 1};
        free(cpu_layout(4, h, NULL, lo, hi, got, idx));
        CHECK(same(got, want, 4) && same(idx, want_idx, 4));
    }
    /* --bind-to core / socket: CPUs of their own, whatever the mask's size;
     * the host's ranks by name alone count all three (and those of n2 theirs) */
    {
        const char *h[] = {"n1", "n1", "n1"};
        const long lo[] = {0, 1, 16}, hi[] = {0, 15, 31};
        const int want[] = {1, 1, 1}, want_idx[] = {0, 0, 0};
        char *keys = cpu_layout(3, h, NULL, lo, hi, got, idx);
        CHECK(tf_local_host_ranks(keys, w, 3, 0) == 3 && tf_local_host_ranks(keys, w, 3, 2) == 3);
        free(keys);
        const char *h2[] = {"n1", "n2", "n1", "n2", "n2"};
        const char *v2[] = {"0", "1", "2", "3", "0"};
        const long lo2[] = {0, 0, 0, 0, 0}, hi2[] = {0, 0, 0, 0, 0};
        int sh[5], ix[5];
        keys = cpu_layout(5, h2, v2, lo2, hi2, sh, ix);
        CHECK(tf_local_host_ranks(keys, w, 5, 0) == 2 && tf_local_host_ranks(keys, w, 5, 2) == 2 &&
              tf_local_host_ranks(keys, w, 5, 1) == 3 && tf_local_host_ranks(keys, w, 5, 4) == 3);
        free(keys);
        CHECK(same(got, want, 3) && same(idx, want_idx, 3));
    }
    /* overlaps in part: each counts the ranks that meet its own CPUs */
    {
        const char *h[] = {"n1", "n1", "n1"};
        const long lo[] = {0, 0, 16}, hi[] = {15, 31, 31};
        const int want[] = {2, 3, 2}, want_idx[] = {0, 1, 1};
        free(cpu_layout(3, h, NULL, lo, hi, got, idx));
        CHECK(same(got, want, 3) && same(idx, want_idx, 3));
    }
    /* GPUs of their own on one host: the CPUs are still shared, each its own GPU 0 */
    {
        const char *h[] = {"n1", "n1"}, *v[] = {"0", "1"};
        const long lo[] = {0, 0}, hi[] = {7, 7};
        const int want[] = {2, 2}, want_idx[] = {0, 1}, want_gpu[] = {0, 0};
        char *keys = cpu_layout(2, h, v, lo, hi, got, idx);
        CHECK(same(got, want, 2) && same(idx, want_idx, 2));
        for (int r = 0; r < 2; ++r) got[r] = tf_local_index(keys, w, r);
        CHECK(same(got, want_gpu, 2));
        free(keys);
    }
    /* CPUs of their own, GPUs shared: the GPU index counts them as before */
    {
        const char *h[] = {"n1", "n1"};
        const long lo[] = {0, 1}, hi[] = {0, 1};
        const int want[] = {1, 1}, want_gpu[] = {0, 1};
        char *keys = cpu_layout(2, h, NULL, lo, hi, got, idx);
        CHECK(same(got, want, 2));
        for (int r = 0; r < 2; ++r) got[r] = tf_local_index(keys, w, r);
        CHECK(same(got, want_gpu, 2));
        free(keys);
    }
    /* another host by a suffix; CPUs unknown (none written): no sharing */
    {
        const char *h[] = {"n1", "n10", "n1"};
        const long lo[] = {0, 0, 1}, hi[] = {3, 3, 0};
        const int want[] = {1, 1, 1};
        free(cpu_layout(3, h, NULL, lo, hi, got, idx));
        CHECK(same(got, want, 3));
    }
    /* a CPU past the bits takes the bit of its number modulo them */
    {
        const char *h[] = {"n1", "n1"};
        const long lo[] = {5, TF_LOCAL_CPU_BITS + 5}, hi[] = {5, TF_LOCAL_CPU_BITS + 5};
        const int want[] = {2, 2};
        free(cpu_layout(2, h, NULL, lo, hi, got, idx));
        CHECK(same(got, want, 2));
    }
    /* the split: the remainder to the lowest, at least 1, the CPUs all used */
    CHECK(tf_local_cpu_share(32, 2, 0) == 16 && tf_local_cpu_share(32, 2, 1) == 16);
    CHECK(tf_local_cpu_share(33, 2, 0) == 17 && tf_local_cpu_share(33, 2, 1) == 16);
    CHECK(tf_local_cpu_share(7, 3, 0) == 3 && tf_local_cpu_share(7, 3, 1) == 2 && tf_local_cpu_share(7, 3, 2) == 2);
    CHECK(tf_local_cpu_share(2, 3, 0) == 1 && tf_local_cpu_share(2, 3, 2) == 1);
    CHECK(tf_local_cpu_share(0, 2, 0) == 1 && tf_local_cpu_share(5, 1, 0) == 5 && tf_local_cpu_share(5, 0, 0) == 5);
    int bad = 0;
    for (int c = 1; c <= 130; ++c)
        for (int l = 1; l <= c; ++l) {
            int sum = 0, prev = c + 1;
            for (int i = 0; i < l; ++i) {
                const int t = tf_local_cpu_share(c, l, i);
                bad += t > prev || t < c / l || t > c / l + 1;
                sum += t;
                prev = t;
            }
            bad += sum != c;
        }
    CHECKF(bad == 0, "%d splits break the rule", bad);
}

int main(void)
{
    int got[8];
    /* mpirun / srun --distribution=block, 2 nodes x 4 ranks, all GPUs seen */
    {
        const char *h[] = {"n1", "n1", "n1", "n1", "n2", "n2", "n2", "n2"};
        const int want[] = {0, 1, 2, 3, 0, 1, 2, 3};
        free(layout(8, h, NULL, got));
        CHECK(same(got, want, 8));
        const char *v[] = {"0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3", "0,1,2,3"};
        free(layout(8, h, v, got));
        CHECK(same(got, want, 8));
    }
    /* srun --distribution=cyclic: ranks alternate nodes */
    {
        const char *h[] = {"n1", "n2", "n1", "n2", "n1", "n2"};
        const int want[] = {0, 0, 1, 1, 2, 2};
        free(layout(6, h, NULL, got));
        CHECK(same(got, want, 6));
    }
    /* srun --gpus-per-task=1 (Slurm sets CUDA_VISIBLE_DEVICES per task): each rank's GPU 0 */
    {
        const char *h[] = {"n1", "n1", "n1", "n1", "n2", "n2"};
        const char *v[] = {"0", "1", "2", "3", "0", "1"};
        const int want[] = {0, 0, 0, 0, 0, 0};
        free(layout(6, h, v, got));
        CHECK(same(got, want, 6));
    }
    /* two GPUs a task (--gpus-per-task=2): still the first of its own */
    {
        const char *h[] = {"n1", "n1"};
        const char *v[] = {"0,1", "2,3"};
        const int want[] = {0, 0};
        free(layout(2, h, v, got));
        CHECK(same(got, want, 2));
    }
    /* two ranks that see the same one GPU: 0 and 1 (one too many for it) */
    {
        const char *h[] = {"n1", "n1", "n1"};
        const char *v[] = {"0", "0", "1"};
        const int want[] = {0, 1, 0};
        free(layout(3, h, v, got));
        CHECK(same(got, want, 3));
    }
    /* unset and set to a list are different views; host names differ by a suffix */
    {
        const char *h[] = {"n1", "n1", "n10", "n1"};
        const char *v[] = {NULL, "0,1", NULL, NULL};
        const int want[] = {0, 0, 0, 1};
        free(layout(4, h, v, got));
        CHECK(same(got, want, 4));
    }
    /* long names and lists are cut inside the key, never past it */
    {
        char longhost[600], longlist[2000];
        memset(longhost, 'h', sizeof longhost - 1);
        longhost[sizeof longhost - 1] = 0;
        memset(longlist, '7', sizeof longlist - 1);
        longlist[sizeof longlist - 1] = 0;
        const size_t w = tf_local_key_width(HOST_WIDTH);
        CHECK(w == HOST_WIDTH + 1 + TF_LOCAL_VISIBLE_WIDTH + TF_LOCAL_CPU_BITS / 8);
        char *k = malloc(w + 16);
        if (!k) abort();
        memset(k, 'Z', w + 16);
        tf_local_key(k, w, longhost, longlist);
        int tail = 1;
        for (size_t i = w; i < w + 16; ++i) tail &= k[i] == 'Z';
        CHECK(tail);
        CHECK(k[w - 1] == 0);
        CHECK(memchr(k, '\n', w) != NULL);
        tf_local_key(k, w, NULL, NULL);
        CHECK(k[0] == '\n' && k[1] == 0);
        free(k);
    }
    cpu_sharing();
    /* the accessor reads the variable (src/core/environment.c alone calls getenv) */
    CHECK(setenv("CUDA_VISIBLE_DEVICES", "3,1", 1) == 0);
    CHECK(tf_env_cuda_visible_devices() && !strcmp(tf_env_cuda_visible_devices(), "3,1"));
    CHECK(unsetenv("CUDA_VISIBLE_DEVICES") == 0);
    CHECK(tf_env_cuda_visible_devices() == NULL);
    return tf_test_finish("test_ranks_local");
}
