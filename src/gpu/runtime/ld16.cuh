/* SPDX-License-Identifier: BSD-3-Clause */
/* One 16-byte read-only load (float4 / double2) of 16 / sizeof(T) values:
 * the factor-row pieces of the F-COO kernels and the M fragments of the
 * fused apply + Gram pass. */
#ifndef TF_GPU_RUNTIME_LD16_CUH
#define TF_GPU_RUNTIME_LD16_CUH
#include <type_traits>

/* x[0 .. 16 / sizeof(T) - 1] = p[...]; p 16-byte aligned, read-only for
 * the kernel's lifetime (loaded through the non-coherent path). */
template <typename T>
__device__ __forceinline__ void tf_ld16(const T *p, T (&x)[16 / sizeof(T)])
{
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "float or double");
    using W = typename std::conditional<sizeof(T) == 4, float4, double2>::type;
    const W w = __ldg(reinterpret_cast<const W *>(p));
    const T *t = reinterpret_cast<const T *>(&w);
#pragma unroll
    for (int k = 0; k < (int)(16 / sizeof(T)); ++k) x[k] = t[k];
}
#endif
