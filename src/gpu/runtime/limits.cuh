/* SPDX-License-Identifier: BSD-3-Clause */
/* Limits every GPU kernel shares. */
#ifndef TF_GPU_RUNTIME_LIMITS_CUH
#define TF_GPU_RUNTIME_LIMITS_CUH

/* Orders the GPU kernels handle (index decoding, kernel parameters). */
#define TF_GPU_MAX_ORDER 8
#endif
