/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_version and what the core knows of the build: the version, the
 * configured commit, compiler and CUDA toolkit, and, found at run time, the
 * BLAS/LAPACK library. The CUDA runtime and driver versions come from the
 * backend, which the front end asks (src/front/build_info.c): the core calls
 * nothing above it. */
#include "core/build_info.h"

#include <dlfcn.h>
#include <string.h>

#include "core/build_config.h"

/* Fortran BLAS entry point whose shared object names the BLAS in use. */
void dgemm_(void);

const char *tf_version(void) { return TF_VERSION_STRING; }

void tf_build_info_core(tf_build_info *out)
{
    memset(out, 0, sizeof *out);
    out->version = tf_version();
    out->commit = TF_BUILD_COMMIT;
    out->compiler = TF_BUILD_COMPILER;
    out->cuda_toolkit = TF_BUILD_CUDA_TOOLKIT;
    Dl_info dl;
    out->blas_lapack = dladdr((void *)dgemm_, &dl) && dl.dli_fname ? dl.dli_fname : "linked statically";
}
