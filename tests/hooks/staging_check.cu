/* SPDX-License-Identifier: BSD-3-Clause */
/* Test entry to the pinned staging of the device context; see staging_check.h. */
#include "hooks/staging_check.h"

#include <stdio.h>
#include <string.h>

#include <vector>

#include "gpu/runtime/gpu_dev.cuh"

namespace {

const unsigned char POISON = 0xa5;
const size_t GUARD = 64; /* poisoned bytes on each side of the copy */

struct dev_buf {
    unsigned char *p = nullptr;
    ~dev_buf() { tf_gpu_free(p); }
};

tf_status run(tf_gpu_dev *ctx, uint64_t n, int floats, int calls, char *diff, size_t len)
{
    const size_t in = floats ? sizeof(double) : 1, out = floats ? sizeof(float) : 1;
    const size_t off = floats ? 0 : 1; /* bytes land one past an aligned address */
    const size_t total = GUARD + off + n * out + GUARD;
    dev_buf d;
    TF_TRY(tf_gpu_alloc_bytes((void **)&d.p, total, "staging check"));
    TF_CU(cudaMemset(d.p, POISON, total));
    /* the legacy stream's memset does not order with the context's
     * non-blocking streams: finish it before the copies start */
    TF_CU(cudaDeviceSynchronize());
    std::vector<unsigned char> src(n * in + 1), want(n * out);
    uint64_t x = 0x9e3779b97f4a7c15ULL ^ n;
    for (uint64_t k = 0; k < n; ++k) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        if (floats) {
            const double v = (double)(int64_t)(x >> 11) * 0x1p-40; /* not all exact in float */
            memcpy(&src[k * in], &v, sizeof v);
            const float f = (float)v;
            memcpy(&want[k * out], &f, sizeof f);
        } else {
            src[k] = want[k] = (unsigned char)(x >> 56);
        }
    }
    unsigned char *dst = d.p + GUARD + off;
    const int nc = calls > 0 ? calls : 1;
    for (int c = 0; c < nc; ++c) {
        const uint64_t lo = n * (uint64_t)c / nc, hi = n * (uint64_t)(c + 1) / nc;
        cudaStream_t s = c % 2 ? ctx->side : ctx->stream;
        if (floats)
            TF_TRY(tf_gpu_h2d_staged_floats(ctx, (float *)dst + lo, (const double *)src.data() + lo, hi - lo, s));
        else TF_TRY(tf_gpu_h2d_staged(ctx, dst + lo, src.data() + lo, hi - lo, s));
        memset(src.data() + lo * in, 0x3c, (hi - lo) * in); /* may be reused now */
    }
    TF_CU(cudaStreamSynchronize(ctx->stream));
    TF_CU(cudaStreamSynchronize(ctx->side));
    std::vector<unsigned char> got(total);
    TF_CU(cudaMemcpy(got.data(), d.p, total, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < total; ++k) {
        const bool inside = k >= GUARD + off && k < GUARD + off + n * out;
        const unsigned char w = inside ? want[k - GUARD - off] : POISON;
        if (got[k] != w) {
            if (inside)
                snprintf(diff, len, "byte %llu of %llu: %02x vs %02x", (unsigned long long)(k - GUARD - off),
                         (unsigned long long)(n * out), got[k], w);
            else snprintf(diff, len, "poison at offset %lld from the copy overwritten (%02x)",
                          k < GUARD + off ? (long long)k - (long long)(GUARD + off)
                                          : (long long)(k - GUARD - off - n * out), got[k]);
            return TF_OK;
        }
    }
    return TF_OK;
}

} // namespace

tf_status tf_gpu_check_staged_copy(uint64_t n, size_t slot_bytes, int staging, int premake, int floats, int calls,
                                   int *ring, char *diff, size_t len)
{
    if (len) diff[0] = 0;
    *ring = 0;
    tf_gpu_dev ctx;
    tf_status s = tf_gpu_dev_init(&ctx, 0);
    tf_tuning_default(&ctx.tune);
    ctx.tune.gpu_staging = staging;
    ctx.stage_bytes = slot_bytes;
    if (s == TF_OK) s = tf_gpu_dev_use(&ctx);
    if (s == TF_OK && premake) tf_gpu_stage_ready(&ctx);
    if (s == TF_OK) s = run(&ctx, n, floats, calls, diff, len);
    *ring = ctx.stage_state;
    tf_gpu_dev_destroy(&ctx);
    return s;
}
