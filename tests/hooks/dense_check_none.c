/* SPDX-License-Identifier: BSD-3-Clause */
/* The dense-kernel test entries when the library has no CUDA backend. */
#include "core/error.h"
#include "hooks/dense_check.h"

tf_status tf_gpu_check_apply_gram(tf_precision prec, const double *M, uint64_t I, const double *W, int norm,
                                  double *A, double *lambda, double *s, double *G, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_gram(tf_precision prec, const double *A, uint64_t I, uint32_t R, int norm, const double *s_in,
                            double *lambda, double *s, double *G, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_small_solve(tf_precision prec, const double *G, const double *scales, uint32_t n,
                                   uint32_t skip, uint32_t R, double rcond, double *V, double *W, int *info,
                                   unsigned *pinv, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_gram_solve(tf_precision prec, const double *A, uint64_t I, uint32_t g, int norm, const double *G,
                                  const double *scales, uint32_t n, uint32_t skip, uint32_t R, double rcond,
                                  double *lambda, double *s, double *Gg, double *V, double *W, int *info,
                                  unsigned *pinv, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_small_apply(tf_precision prec, const double *M, uint64_t I, uint32_t R, const double *W,
                                   double *A)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_fit_terms(tf_precision prec, const double *A, const double *B, uint64_t I, uint32_t R,
                                 const double *w, const double *scales, const double *G, uint32_t n, double *inner,
                                 double *knorm2, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_gram_fit(tf_precision prec, const double *A, const double *M, uint64_t I, uint32_t R, int norm,
                                const double *scales, const double *G, uint32_t n, double *lambda, double *s,
                                double *Gn, double *inner, double *knorm2, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}

tf_status tf_gpu_check_apply_gram_fit(tf_precision prec, const double *M, uint64_t I, const double *W, int norm,
                                      const double *scales, const double *G, uint32_t n, double *A, double *lambda,
                                      double *s, double *Gn, double *inner, double *knorm2, int *nonfinite)
{
    return tf_fail(TF_ERR_UNAVAILABLE, "the GPU dense kernels need the CUDA backend, which this build lacks");
}
