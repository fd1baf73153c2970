/* SPDX-License-Identifier: BSD-3-Clause */
/* What the core knows of the build (src/core/build_info.c); the front end's
 * tf_get_build_info adds what the CUDA backend reports (src/front/build_info.c). */
#ifndef TF_CORE_BUILD_INFO_H
#define TF_CORE_BUILD_INFO_H
#include "tenfold.h"

/* Fills `out` with the version, the configured commit, compiler and CUDA
 * toolkit, and the BLAS / LAPACK library found at run time; the CUDA
 * runtime and driver versions are left 0. */
void tf_build_info_core(tf_build_info *out);
#endif
