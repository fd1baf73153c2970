/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_version and tf_get_build_info: the version, the configured commit and
 * compiler, and, found at run time, the BLAS/LAPACK library and the CUDA
 * runtime and driver versions. */
#include <dlfcn.h>
#include <string.h>

#include "backend/context.h"
#include "core/build_config.h"
#include "tenfold.h"

/* Fortran BLAS entry point whose shared object names the BLAS in use. */
void dgemm_(void);

const char *tf_version(void) { return TF_VERSION_STRING; }

void tf_get_build_info(tf_build_info *out)
{
    if (!out) return;
    memset(out, 0, sizeof *out);
    out->version = tf_version();
    out->commit = TF_BUILD_COMMIT;
    out->compiler = TF_BUILD_COMPILER;
    out->cuda_toolkit = TF_BUILD_CUDA_TOOLKIT;
    Dl_info dl;
    out->blas_lapack = dladdr((void *)dgemm_, &dl) && dl.dli_fname ? dl.dli_fname : "linked statically";
    tf_cuda_versions(&out->cuda_runtime, &out->cuda_driver);
}
