/* SPDX-License-Identifier: BSD-3-Clause */
/* Holds most of a GPU's memory, for the memory-pressure checks
 * (scripts/gpu-pressure, issue 26): another process's allocations, which
 * tenfold sees only as less free memory.
 *
 *   gpu_hog LEAVE_MIB [SECONDS]   device 0: allocate all but LEAVE_MIB of the
 *                                 free memory, print "holding ..." and wait
 *                                 SECONDS (default 600) or until killed */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: gpu_hog LEAVE_MIB [SECONDS]\n");
        return 2;
    }
    const size_t leave = (size_t)strtoull(argv[1], NULL, 10) << 20;
    const int secs = argc > 2 ? atoi(argv[2]) : 600;
    size_t fr = 0, tot = 0;
    if (cudaMemGetInfo(&fr, &tot) != cudaSuccess) {
        fprintf(stderr, "gpu_hog: no CUDA device\n");
        return 1;
    }
    /* in 256 MiB pieces, then smaller, until what is left is about `leave` */
    size_t held = 0;
    for (size_t piece = (size_t)256 << 20; piece >= ((size_t)1 << 20); piece /= 2) {
        for (;;) {
            cudaMemGetInfo(&fr, &tot);
            if (fr < leave + piece) break;
            void *p = NULL;
            if (cudaMalloc(&p, piece) != cudaSuccess) {
                cudaGetLastError();
                break;
            }
            held += piece;
        }
    }
    cudaMemGetInfo(&fr, &tot);
    printf("gpu_hog: holding %.1f MiB, %.1f MiB free\n", held / 1048576.0, fr / 1048576.0);
    fflush(stdout);
    sleep((unsigned)secs);
    return 0;
}
