/* Device queries when the library is built without the CUDA backend. */
#include <stdio.h>

#include "core/error.h"

int tf_have_cuda(void) { return 0; }
int tf_gpu_count(void) { return 0; }

tf_status tf_gpu_describe(int device, char *buf, size_t len)
{
    if (buf && len) snprintf(buf, len, "none");
    return tf_fail(TF_ERR_UNAVAILABLE, "this build of tenfold has no CUDA backend (nvcc was not found at build time)");
}
