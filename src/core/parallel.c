/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/parallel.h"

#include <string.h>

#include "tenfold.h"

int tf_default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int tf_resolve_threads(int requested)
{
    if (requested <= 0) return tf_default_threads();
    return requested;
}

void tf_doubles_to_floats(const double *src, float *dst, uint64_t n)
{
    const int64_t nn = (int64_t)n;
#pragma omp parallel for schedule(static) if (nn > 65536)
    for (int64_t k = 0; k < nn; ++k) dst[k] = (float)src[k];
}

void tf_floats_to_doubles(const float *src, double *dst, uint64_t n)
{
    const int64_t nn = (int64_t)n;
#pragma omp parallel for schedule(static) if (nn > 65536)
    for (int64_t k = 0; k < nn; ++k) dst[k] = src[k];
}

void tf_copy_bytes(void *dst, const void *src, uint64_t n)
{
    enum { PIECE = 1 << 17 }; /* 128 KiB a piece: a 2 MiB staging buffer keeps 16 threads busy */
    const int64_t np = (int64_t)((n + PIECE - 1) / PIECE);
#pragma omp parallel for schedule(static) if (np > 2)
    for (int64_t k = 0; k < np; ++k) {
        const uint64_t at = (uint64_t)k * PIECE, len = n - at < PIECE ? n - at : PIECE;
        memcpy((char *)dst + at, (const char *)src + at, len);
    }
}

uint64_t tf_bucket_offsets_strided(uint64_t *hist, uint64_t stride, uint64_t *start, uint64_t nb, int nt)
{
    uint64_t run = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        start[b] = run;
        for (int u = 0; u < nt; ++u) {
            const uint64_t c = hist[(uint64_t)u * stride + b];
            hist[(uint64_t)u * stride + b] = run;
            run += c;
        }
    }
    return run;
}

uint64_t tf_bucket_offsets(uint64_t *hist, uint64_t *start, uint64_t nb, int nt)
{
    return tf_bucket_offsets_strided(hist, nb, start, nb, nt);
}
