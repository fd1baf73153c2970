/* SPDX-License-Identifier: BSD-3-Clause */
/* Length-R row operations of the MTTKRP kernels. They are always inlined, so
 * a caller that passes a constant R (8, 16, ...) gets fixed-length loops that
 * the compiler unrolls and vectorises, and a runtime R gets a generic loop. */
#ifndef TF_CPU_ROWOPS_H
#define TF_CPU_ROWOPS_H
#include <stdint.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define TF_ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define TF_ALWAYS_INLINE static inline
#endif

/* Kernels built once per x86-64 ISA level (baseline SSE2, v3 = AVX2+FMA,
 * v4 = AVX-512) and picked at load time by the CPU's features, so a portable
 * build still uses wide vectors. (Not "arch=haswell" & co: those clones are
 * chosen by CPU model and never run on AMD processors.) */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12 && defined(__x86_64__) && \
    !defined(TF_NO_CLONES)
#define TF_KERNEL_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define TF_KERNEL_CLONES
#endif

/* The rows never overlap, but after inlining the compiler cannot always
 * see that (two accumulators of one scratch block), so say so. */
#if defined(_OPENMP)
#define TF_SIMD _Pragma("omp simd")
#else
#define TF_SIMD
#endif

TF_ALWAYS_INLINE void tf_row_zero(double *restrict a, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] = 0.0;
}

TF_ALWAYS_INLINE void tf_row_copy(double *restrict a, const double *restrict x, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] = x[r];
}

/* a += x */
TF_ALWAYS_INLINE void tf_row_add(double *restrict a, const double *restrict x, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] += x[r];
}

/* a += v * x */
TF_ALWAYS_INLINE void tf_row_axpy(double *restrict a, double v, const double *restrict x, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] += v * x[r];
}

/* a += x .* y */
TF_ALWAYS_INLINE void tf_row_hadd(double *restrict a, const double *restrict x,
                                  const double *restrict y, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] += x[r] * y[r];
}

/* a *= x */
TF_ALWAYS_INLINE void tf_row_mul(double *restrict a, const double *restrict x, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] *= x[r];
}

/* a = v * x */
TF_ALWAYS_INLINE void tf_row_scale(double *restrict a, double v, const double *restrict x, uint64_t R)
{
    TF_SIMD
    for (uint64_t r = 0; r < R; ++r) a[r] = v * x[r];
}
/* a = x with non-temporal stores where possible: for output rows written
 * once, which need not displace the factor rows from the caches. Callers
 * finish with tf_stream_fence(). */
TF_ALWAYS_INLINE void tf_row_stream(double *restrict a, const double *restrict x, uint64_t R)
{
#if defined(__SSE2__)
    if (R % 2 == 0 && ((uintptr_t)a & 15) == 0) {
        for (uint64_t r = 0; r < R; r += 2) _mm_stream_pd(a + r, _mm_loadu_pd(x + r));
        return;
    }
#endif
    tf_row_copy(a, x, R);
}

TF_ALWAYS_INLINE void tf_stream_fence(void)
{
#if defined(__SSE2__)
    _mm_sfence();
#endif
}
#endif
