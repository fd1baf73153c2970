/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/parallel.h"

#include <string.h>
#include <unistd.h>

#include "tenfold.h"

/* 4 per online CPU, at least 64: far more than helps, far fewer than break
 * things. libgomp starts a team with an alloca of its threads' start data
 * on the caller's stack (a million threads overflowed it: a crash in
 * GOMP_parallel), then a thread each with the default stack, and tenfold's
 * kernels keep per-thread buffers. */
int tf_thread_limit(void)
{
    static int limit; /* computed once; a racing second computation writes the same */
    int l = __atomic_load_n(&limit, __ATOMIC_RELAXED);
    if (l) return l;
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const long want = cpus > 0 ? 4 * cpus : 64;
    l = want < 64 ? 64 : want > 1 << 20 ? 1 << 20 : (int)want;
    __atomic_store_n(&limit, l, __ATOMIC_RELAXED);
    return l;
}

int tf_default_threads(void)
{
#ifdef _OPENMP
    const int n = omp_get_max_threads(), cap = tf_thread_limit(); /* OMP_NUM_THREADS=65536 */
    return n < 1 ? 1 : n > cap ? cap : n;
#else
    return 1;
#endif
}

int tf_resolve_threads(int requested)
{
    if (requested <= 0) return tf_default_threads();
    const int cap = tf_thread_limit();
    return requested > cap ? cap : requested;
}

void tf_doubles_to_floats(const double *src, float *dst, uint64_t n)
{
    const int64_t nn = (int64_t)n;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) if (nn > 65536)
    for (int64_t k = 0; k < nn; ++k) dst[k] = (float)src[k];
}

void tf_floats_to_doubles(const float *src, double *dst, uint64_t n)
{
    const int64_t nn = (int64_t)n;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) if (nn > 65536)
    for (int64_t k = 0; k < nn; ++k) dst[k] = src[k];
}

void tf_copy_bytes(void *dst, const void *src, uint64_t n)
{
    enum { PIECE = 1 << 17 }; /* 128 KiB a piece: a 2 MiB staging buffer keeps 16 threads busy */
    const int64_t np = (int64_t)((n + PIECE - 1) / PIECE);
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) if (np > 2)
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
