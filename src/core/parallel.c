/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/parallel.h"

#include "tenfold.h"

int tf_default_threads(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

int tf_resolve_threads(int requested)
{
    if (requested <= 0) return tf_default_threads();
    return requested;
}
