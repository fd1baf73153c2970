/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "core/error.h"

static tf_status size_of(uint64_t n, uint64_t size, const char *what, size_t *bytes)
{
    if (size != 0 && n > (uint64_t)SIZE_MAX / size)
        return tf_fail(TF_ERR_NOMEM, "allocation of %llu x %llu bytes for %s overflows",
                       (unsigned long long)n, (unsigned long long)size, what);
    *bytes = (size_t)(n * size);
    if (*bytes == 0) *bytes = 1;
    return TF_OK;
}

/* Large blocks ask for transparent huge pages where the kernel leaves it
 * to the program (THP "madvise"): first touching a big array then takes
 * 512 times fewer page faults, which otherwise cost threads filling
 * gigabytes in parallel more than the writing itself. */
static void advise_huge(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t page = 4096, lo = ((uintptr_t)p + page - 1) & ~(page - 1),
                    hi = ((uintptr_t)p + bytes) & ~(page - 1);
    if (bytes >= ((size_t)64 << 20) && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

tf_status tf_alloc(void **out, uint64_t n, uint64_t size, const char *what)
{
    size_t bytes = 0;
    *out = NULL;
    TF_TRY(size_of(n, size, what, &bytes));
    void *p = NULL;
    size_t rounded = (bytes + 63) & ~(size_t)63;
    if (rounded < bytes || posix_memalign(&p, 64, rounded) != 0 || !p)
        return tf_fail(TF_ERR_NOMEM, "out of memory allocating %zu bytes for %s", bytes, what);
    advise_huge(p, rounded);
    *out = p;
    return TF_OK;
}

tf_status tf_calloc(void **out, uint64_t n, uint64_t size, const char *what)
{
    TF_TRY(tf_alloc(out, n, size, what));
    memset(*out, 0, (size_t)(n * size));
    return TF_OK;
}

tf_status tf_realloc(void **p, uint64_t n, uint64_t size, const char *what)
{
    size_t bytes = 0;
    TF_TRY(size_of(n, size, what, &bytes));
    void *q = realloc(*p, bytes);
    if (!q) return tf_fail(TF_ERR_NOMEM, "out of memory growing %s to %zu bytes", what, bytes);
    *p = q;
    return TF_OK;
}

void tf_free(void *p) { free(p); }
