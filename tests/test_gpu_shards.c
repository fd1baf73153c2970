/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU test of the shards cut on the GPUs (src/gpu/exec/shard_cut.cu): for
 * every mode and part, the shard compacted on the device from the COO
 * streamed through it equals the front end's host split
 * (tf_partition_split) bit for bit -- counts, dims, every index in the
 * run's labels, every value (fp64, and as fp32) -- contiguous and
 * longest-first (relabeled) partitions, with and without pairs (the split
 * by the previous mode), 2 and 3 parts, chunks of the default size and of
 * 320 and 1024 non-zeros (many chunks through the 3 pinned slots, the last
 * one part full), a heavy row, a mode
 * shorter than the parts (empty parts), orders 2-5, and the real tensors.
 * Outputs are poisoned first. The pinned feed's protocol (readers taking
 * chunks in turn, one failing half way) runs on the host first, GPU or
 * not. Skips the rest without a GPU. */
#include "check.h"
#include "gpu_test_tensors.h"
#include "hooks/shard_check.h"
#include "realdata.h"

static int relabeled_seen;

static void one(const tf_tensor *X, const char *what, int parts, int schedule, int pairs, tf_precision prec,
                uint64_t chunk)
{
    char diff[256];
    int rel = 0;
    const tf_status s = tf_gpu_check_shards(X, parts, schedule, pairs, prec, chunk, &rel, diff, sizeof diff);
    CHECKF(s == TF_OK, "%s, %d parts: %s", what, parts, tf_last_error());
    CHECKF(s != TF_OK || !diff[0], "%s (%d parts, schedule %d, pairs %d, %s, chunk %llu): %s", what, parts, schedule,
           pairs, prec == TF_SINGLE ? "fp32" : "fp64", (unsigned long long)chunk, diff);
    relabeled_seen |= rel;
}

static void all_ways(const tf_tensor *X, const char *what, int quick)
{
    for (int parts = 2; parts <= 3; ++parts)
        for (int sched = TF_PARTITION_CONTIGUOUS; sched <= TF_PARTITION_LONGEST_FIRST; ++sched)
            for (int pairs = 0; pairs < 2; ++pairs) {
                one(X, what, parts, sched, pairs, TF_DOUBLE, 320);
                if (quick) continue;
                one(X, what, parts, sched, pairs, TF_DOUBLE, 0);
                one(X, what, parts, sched, pairs, TF_SINGLE, 1024);
            }
    printf("  %s (%llu non-zeros): done\n", what, (unsigned long long)X->nnz);
}

static void random_case(tt_spec sp, const char *what, int quick)
{
    tf_tensor X;
    memset(&X, 0, sizeof X);
    CHECK_OK(tt_random(&sp, &X));
    all_ways(&X, what, quick);
    tf_tensor_free(&X);
}

static void real_tensor(const char *name, const char *path, tf_tensor *X, void *user)
{
    (void)path, (void)user;
    if (X->nnz >= (1ull << 32)) return;
    for (int pairs = 0; pairs < 2; ++pairs) {
        one(X, name, 2, TF_PARTITION_LONGEST_FIRST, pairs, TF_DOUBLE, 0);
        one(X, name, 3, TF_PARTITION_AUTO, pairs, TF_SINGLE, 0);
    }
    printf("  %s: done\n", name);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const int quick = tf_test_quick(argc, argv);
    for (int readers = 1; readers <= 4; ++readers) { /* the pinned feed's protocol: no GPU needed */
        char diff[256];
        const tf_status s = tf_gpu_check_feed(readers, 200, diff, sizeof diff);
        if (s == TF_ERR_UNAVAILABLE) break; /* no CUDA backend */
        CHECKF(s == TF_OK && !diff[0], "feed: %s", s == TF_OK ? diff : tf_last_error());
    }
    if (tf_gpu_count() == 0) {
        if (tf_t_fail) return tf_test_finish("test_gpu_shards");
        return tf_test_skip("test_gpu_shards", tf_t_pass ? "no CUDA device (the feed's protocol passed)"
                                                          : "no CUDA device");
    }
    const uint64_t d3[] = {50, 60, 70};
    random_case(tt_spec_make(3, d3, 3000, 1), "3-mode", quick);
    random_case(tt_spec_make(3, d3, 1, 2), "one non-zero", quick);
    tt_spec hot = tt_spec_make(3, (const uint64_t[]){300, 200, 100}, 6000, 4);
    hot.hot_mode = 0;
    hot.hot_row = 149;
    hot.hot_share = 0.45;
    hot.sparse_mode = 2;
    random_case(hot, "heavy row at the middle, even indices only", quick);
    const uint64_t shortm[] = {1, 2, 131, 500};
    random_case(tt_spec_make(4, shortm, 4000, 5), "modes of length 1 and 2 (empty parts)", quick);
    const uint64_t d2[] = {1000, 800};
    random_case(tt_spec_make(2, d2, 5000, 7), "2-mode", quick);
    const uint64_t d5[] = {5, 6, 7, 8, 9};
    random_case(tt_spec_make(5, d5, 2000, 3), "5-mode", quick);
    const uint64_t larger[] = {50000, 4000, 3000};
    if (!quick) random_case(tt_spec_make(3, larger, 3000000, 12), "3-mode, 3M non-zeros", quick);
    CHECKF(relabeled_seen, "no case had a relabeled mode (longest-first untested)");
    static const char *const tensors[] = {".tns.xz", ".tns", NULL};
    if (!quick) tf_for_each_data_file("test_gpu_shards", tensors, real_tensor, NULL);
    return tf_test_finish("test_gpu_shards");
}
