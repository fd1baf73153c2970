/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/checksum.h"

#include <string.h>

#include "core/parallel.h"
#include "tenfold.h"

#define BLOCK_BYTES TF_CHECKSUM_BLOCK
#define GROUP_BLOCKS 256
#define K1 0x9E3779B97F4A7C15ULL
#define K2 0xC2B2AE3D27D4EB4FULL

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8); /* little-endian hosts only, see bin_format.h */
    return w;
}

static inline uint64_t lane_step(uint64_t h, uint64_t w)
{
    h = (h ^ w) * K1;
    return h ^ (h >> 29);
}

static inline uint64_t fmix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= K2;
    return x ^ (x >> 33);
}

/* Hash of one block (< 2^32 bytes); seed separates blocks. */
static uint64_t block_hash(const unsigned char *p, uint64_t n, uint64_t seed)
{
    uint64_t h[4] = {seed ^ K2, seed + K1, ~seed, seed * K2 + 1};
    uint64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        h[0] = lane_step(h[0], load64(p + i));
        h[1] = lane_step(h[1], load64(p + i + 8));
        h[2] = lane_step(h[2], load64(p + i + 16));
        h[3] = lane_step(h[3], load64(p + i + 24));
    }
    for (int l = 0; i + 8 <= n; i += 8, ++l) h[l] = lane_step(h[l], load64(p + i));
    if (i < n) {
        unsigned char tail[8] = {0};
        memcpy(tail, p + i, (size_t)(n - i));
        h[3] = lane_step(h[3], load64(tail));
    }
    return fmix(h[0] ^ fmix(h[1] + K1) ^ fmix(h[2] + K2) ^ fmix(h[3] ^ n));
}

uint64_t tf_checksum_block(const void *p, uint64_t n, uint64_t b) { return block_hash(p, n, b); }

uint64_t tf_checksum_start(uint64_t seed, uint64_t n) { return fmix(seed ^ (n * K1)); }

uint64_t tf_checksum_fold(uint64_t h, uint64_t block_hash) { return fmix(h ^ block_hash) + K1; }

uint64_t tf_checksum_fill(void *data, uint64_t n, uint64_t seed, int threads, tf_fill_fn fill,
                          const void *ctx, int *err)
{
    unsigned char *p = data;
    const uint64_t nblocks = (n + BLOCK_BYTES - 1) / BLOCK_BYTES;
    uint64_t h = tf_checksum_start(seed, n);
    const int T = nblocks > 1 ? tf_resolve_threads(threads) : 1;
    int failed = 0;
    for (uint64_t g = 0; g < nblocks; g += GROUP_BLOCKS) {
        uint64_t bh[GROUP_BLOCKS];
        const int64_t cnt = (int64_t)(nblocks - g < GROUP_BLOCKS ? nblocks - g : GROUP_BLOCKS);
#pragma omp parallel for num_threads(T) schedule(static) if (T > 1)
        for (int64_t i = 0; i < cnt; ++i) {
            uint64_t b = g + (uint64_t)i, lo = b * BLOCK_BYTES;
            uint64_t len = n - lo < BLOCK_BYTES ? n - lo : BLOCK_BYTES;
            int e = fill ? fill(ctx, lo, p + lo, len) : 0; /* load the block, hash it while hot */
            if (e) {
#pragma omp atomic write
                failed = e;
            }
            bh[i] = block_hash(p + lo, len, b);
        }
        for (int64_t i = 0; i < cnt; ++i) h = tf_checksum_fold(h, bh[i]);
    }
    if (err) *err = failed;
    return h;
}

uint64_t tf_checksum(const void *data, uint64_t n, uint64_t seed, int threads)
{
    return tf_checksum_fill((void *)data, n, seed, threads, NULL, NULL, NULL);
}

uint64_t tf_checksum_bytes(const void *data, uint64_t n, uint64_t seed, int threads)
{
    return tf_checksum(data, n, seed, threads);
}
