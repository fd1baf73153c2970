/* SPDX-License-Identifier: BSD-3-Clause */
/* The entry of the CUDA module libtenfold_cuda.so (seams/cuda_module.h),
 * and the core functions its CUDA code calls, each a shim calling the
 * library that loaded it. Only in the module: programs that link the CUDA
 * objects directly call the core itself. The module's link exports the
 * entry alone (cmake/tenfold_cuda.map), so these shims bind the module's
 * own calls and never stand in for the library's functions. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "seams/cuda_module.h"
#include "core/build_config.h"
#include "core/error.h"

static const tf_cuda_core_api *core;

const tf_cuda_api *tf_cuda_module_v1(const tf_cuda_core_api *c, char *why, size_t why_len);

const tf_cuda_api *tf_cuda_module_v1(const tf_cuda_core_api *c, char *why, size_t why_len)
{
    static const size_t abi[TF_CUDA_ABI_NSIZES] = TF_CUDA_ABI_SIZES;
    const char *bad = NULL;
    if (!c || c->size != sizeof *c) bad = "its table of core functions differs";
    else if (strcmp(c->version, TF_VERSION_STRING) || strcmp(c->commit, TF_BUILD_COMMIT)) bad = "";
    else if (memcmp(c->abi, abi, sizeof abi)) bad = "its structures differ in size";
    if (bad) {
        if (why && why_len) {
            if (*bad || !c) snprintf(why, why_len, "the module was built for another libtenfold (%s)", bad);
            else
                snprintf(why, why_len, "the module is tenfold %s (commit %s), the library %s (commit %s)",
                         TF_VERSION_STRING, TF_BUILD_COMMIT, c->version, c->commit);
        }
        return NULL;
    }
    core = c;
    return tf_cuda_api_table();
}

/* One line is what tf_fail keeps anyway (core/error.c's buffer is as long). */
tf_status tf_fail(tf_status s, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return core->tf_fail(s, "%s", msg);
}

#define TF_SHIM_(ret, name, params, args) \
    ret name params { return core->name args; }
#define TF_SHIM_VOID_(ret, name, params, args) \
    ret name params { core->name args; }
TF_CUDA_CORE(TF_SHIM_)
TF_CUDA_CORE_VOID(TF_SHIM_VOID_)
