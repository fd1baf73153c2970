/* SPDX-License-Identifier: BSD-3-Clause */
/* GPU test of the device context's pinned staging (tf_gpu_h2d_staged and
 * its double -> float variant, src/gpu/runtime/gpu_dev.cu): copies of 0
 * and 1 element, sizes just under, at and over one staging buffer, many
 * buffers (the ring wraps several times), several calls alternating two
 * streams, into poisoned device memory, with the host array overwritten as
 * soon as a call returns; the ring made only by a large copy (or on
 * request); the plain-copy fallback forced by the tuning field and by a
 * pinning that fails. Skips without a GPU. */
#include "check.h"
#include "hooks/staging_check.h"

static void one(uint64_t n, size_t slot, int staging, int premake, int floats, int calls, int want_ring,
                const char *what)
{
    char diff[256];
    int ring = 0;
    tf_status s = tf_gpu_check_staged_copy(n, slot, staging, premake, floats, calls, &ring, diff, sizeof diff);
    CHECKF(s == TF_OK, "%s: %s", what, tf_last_error());
    CHECKF(s != TF_OK || !diff[0], "%s (%llu %s, buffers of %zu bytes, %d calls): %s", what, (unsigned long long)n,
           floats ? "doubles as floats" : "bytes", slot, calls, diff);
    CHECKF(ring == want_ring, "%s: ring state %d, expected %d", what, ring, want_ring);
    printf("  %s: %llu %s, %d call(s): done\n", what, (unsigned long long)n, floats ? "values" : "bytes", calls);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (tf_gpu_count() == 0) return tf_test_skip("test_gpu_staging", "no CUDA device");
    const size_t B = 4096; /* small buffers: many of them per copy */
    for (int f = 0; f < 2; ++f) {
        const uint64_t per = f ? B / sizeof(float) : B; /* elements a buffer holds */
        one(0, B, 1, 1, f, 1, 1, "nothing to copy");
        one(1, B, 1, 1, f, 1, 1, "one element");
        one(per - 1, B, 1, 1, f, 1, 1, "one buffer less one");
        one(per, B, 1, 1, f, 1, 1, "one buffer");
        one(per + 1, B, 1, 1, f, 1, 1, "one buffer and one");
        one(10 * per + 17, B, 1, 1, f, 1, 1, "many buffers");
        one(10 * per + 17, B, 1, 1, f, 7, 1, "many buffers, 7 calls on two streams");
        one(3 * per, B, 1, 1, f, 3 * (int)per, 1, "one element a call");
        /* without tf_gpu_stage_ready: only a copy of 4 rings (16 buffers) or more makes the ring */
        one(per + 1, B, 1, 0, f, 1, 0, "small copy, no ring made");
        one(16 * per - 1, B, 1, 0, f, 1, 0, "just under 4 rings, no ring made");
        one(16 * per, B, 1, 0, f, 1, 1, "4 rings make the ring");
        one(100 * per + 3, B, 1, 0, f, 5, 1, "the first of 5 calls makes the ring");
        one((f ? 20 : 80) * (1u << 20) + 5, 0, 1, 0, f, 2, 1, "the default buffers, calls of 40 MiB");
        one(10 * per + 17, B, 0, 1, f, 3, 0, "fallback: tuning.gpu_staging = 0");
        one(1, B, 0, 1, f, 1, 0, "fallback, one element");
        one(5000, (size_t)1 << 50, 1, 1, f, 2, -1, "fallback: pinning fails");
    }
    return tf_test_finish("test_gpu_staging");
}
