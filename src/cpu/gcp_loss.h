/* SPDX-License-Identifier: BSD-3-Clause */
/* The GCP losses as element-function pairs (tenfold/gcp.h lists them):
 * the value f(x, m) and the derivative df/dm of every loss, in this one
 * place, for every backend's kernels (host code, and CUDA's __host__
 * __device__ when nvcc compiles it: the GPU backend, src/gpu/gcp).
 * Definitions as pyttb's gcp/handles.py, eps = TF_GCP_EPS. */
#ifndef TF_CPU_GCP_LOSS_H
#define TF_CPU_GCP_LOSS_H
#include <math.h>

#include "tenfold.h"

#ifndef TF_GCP_FN
#ifdef __CUDACC__
#define TF_GCP_FN static inline __host__ __device__
#else
#define TF_GCP_FN static inline
#endif
#endif
#define TF_GCP_EPS 1e-10

/* f(x, m) */
TF_GCP_FN double tf_gcp_f(int loss, double x, double m)
{
    switch (loss) {
    case TF_GCP_GAUSSIAN: return (m - x) * (m - x);
    case TF_GCP_POISSON: return m - x * log(m + TF_GCP_EPS);
    case TF_GCP_POISSON_LOG: return exp(m) - x * m;
    case TF_GCP_BERNOULLI_ODDS: return log(m + 1.0) - x * log(m + TF_GCP_EPS);
    case TF_GCP_BERNOULLI_LOGIT: /* log(e^m + 1) - x m, without overflow for large m */
        return (m > 0.0 ? m + log1p(exp(-m)) : log1p(exp(m))) - x * m;
    case TF_GCP_GAMMA: return x / (m + TF_GCP_EPS) + log(m + TF_GCP_EPS);
    case TF_GCP_RAYLEIGH: {
        const double q = x / (m + TF_GCP_EPS);
        return 2.0 * log(m + TF_GCP_EPS) + 0.78539816339744830962 * q * q;
    }
    default: return NAN;
    }
}

/* df/dm (x, m) */
TF_GCP_FN double tf_gcp_df(int loss, double x, double m)
{
    switch (loss) {
    case TF_GCP_GAUSSIAN: return 2.0 * (m - x);
    case TF_GCP_POISSON: return 1.0 - x / (m + TF_GCP_EPS);
    case TF_GCP_POISSON_LOG: return exp(m) - x;
    case TF_GCP_BERNOULLI_ODDS: return 1.0 / (m + 1.0) - x / (m + TF_GCP_EPS);
    case TF_GCP_BERNOULLI_LOGIT: { /* e^m / (e^m + 1) - x, finite for any m */
        if (m > 0.0) return 1.0 / (1.0 + exp(-m)) - x;
        const double e = exp(m);
        return e / (e + 1.0) - x;
    }
    case TF_GCP_GAMMA: {
        const double d = m + TF_GCP_EPS;
        return -x / (d * d) + 1.0 / d;
    }
    case TF_GCP_RAYLEIGH: {
        const double d = m + TF_GCP_EPS;
        return 2.0 / d - 1.57079632679489661923 * x * x / (d * d * d);
    }
    default: return NAN;
    }
}
#endif
