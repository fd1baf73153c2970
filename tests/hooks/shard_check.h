/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the shards cut on the GPU (src/gpu/exec/shard_cut.cu;
 * internal; tests only). Without the CUDA backend it fails with
 * TF_ERR_UNAVAILABLE. */
#ifndef TF_TESTS_HOOKS_SHARD_CHECK_H
#define TF_TESTS_HOOKS_SHARD_CHECK_H
#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Cuts X over `parts` parts by `schedule` (tf_partition_schedule, the
 * front end's tf_partition_make), then every part's shards of every mode
 * on GPU 0 -- two contexts there reading one pinned feed from two threads,
 * as two GPUs of a run do (chunk non-zeros per chunk, rounded up to 64; 0:
 * the default; values in precision prec; with pairs split by the previous
 * mode; once so, once with X kept on the GPU after the first pass) -- and
 * on the host (tf_partition_split), and compares them: dims, non-zero counts, every
 * index and every value (the host's as prec). Device outputs are poisoned
 * first. diff gets "" when all are equal, else the first difference
 * ("mode 2, part 1, remote: ind[0][17] 5 vs 6"); *relabeled 1 when a mode
 * of the partition was relabeled. */
tf_status tf_gpu_check_shards(const tf_tensor *X, int parts, int schedule, int pairs, tf_precision prec,
                              uint64_t chunk, int *relabeled, char *diff, size_t len);

/* The pinned feed's protocol alone, on the host (no GPU needed; plain
 * memory in place of the pinned slots): `readers` threads take `chunks`
 * chunks of a random tensor each, in order, holding each a random while
 * before releasing it; every chunk must hold X's non-zeros when taken.
 * Then the same with reader 0 failing (aborting the feed) half way: the
 * others must return an error within the wait bound instead of hanging.
 * diff gets "" or the first fault. */
tf_status tf_gpu_check_feed(int readers, uint64_t chunks, char *diff, size_t len);

#ifdef __cplusplus
}
#endif
#endif
