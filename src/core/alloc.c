/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#define usable_size(p) malloc_usable_size(p)
#else
#define usable_size(p) ((size_t)0)
#endif

#include "core/error.h"

/* Live and peak bytes: relaxed atomics, a few per large allocation. */
static int64_t live_bytes, peak_bytes; /* signed: a block freed here but not made here */

static void count(void *p, int sign)
{
    if (!p) return;
    const int64_t b = (int64_t)usable_size(p);
    if (sign < 0) {
        __atomic_fetch_sub(&live_bytes, b, __ATOMIC_RELAXED);
        return;
    }
    const int64_t now = __atomic_add_fetch(&live_bytes, b, __ATOMIC_RELAXED);
    int64_t pk = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    while (now > pk && !__atomic_compare_exchange_n(&peak_bytes, &pk, now, 1, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
    }
}

static uint64_t clamp(int64_t v) { return v > 0 ? (uint64_t)v : 0; }

uint64_t tf_alloc_live(void) { return clamp(__atomic_load_n(&live_bytes, __ATOMIC_RELAXED)); }

uint64_t tf_alloc_peak_reset(void)
{
    const int64_t now = __atomic_load_n(&live_bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&peak_bytes, now, __ATOMIC_RELAXED);
    return clamp(now);
}

uint64_t tf_alloc_peak(void) { return clamp(__atomic_load_n(&peak_bytes, __ATOMIC_RELAXED)); }

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
    count(p, 1);
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
    const int64_t old = *p ? (int64_t)usable_size(*p) : 0;
    void *q = realloc(*p, bytes);
    if (!q) return tf_fail(TF_ERR_NOMEM, "out of memory growing %s to %zu bytes", what, bytes);
    __atomic_fetch_sub(&live_bytes, old, __ATOMIC_RELAXED);
    count(q, 1);
    *p = q;
    return TF_OK;
}

void tf_free(void *p)
{
    count(p, -1);
    free(p);
}
