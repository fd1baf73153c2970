/* SPDX-License-Identifier: BSD-3-Clause */
/* Checked allocation: failures and size overflows become TF_ERR_NOMEM with a message. */
#ifndef TF_CORE_ALLOC_H
#define TF_CORE_ALLOC_H
#include <stddef.h>
#include <stdint.h>
#include "tenfold.h"

/* Allocates n*size bytes (64-byte aligned); *out = NULL and an error on failure.
 * what names the object for the message ("tensor indices"). */
tf_status tf_alloc(void **out, uint64_t n, uint64_t size, const char *what);
/* Same, zero-filled. */
tf_status tf_calloc(void **out, uint64_t n, uint64_t size, const char *what);
/* Resizes a tf_alloc block (contents kept up to the smaller size). */
tf_status tf_realloc(void **p, uint64_t n, uint64_t size, const char *what);
void tf_free(void *p);
/* Host bytes held through these calls now, process-wide (the allocator's
 * usable sizes; 0 where the C library cannot tell them). */
uint64_t tf_alloc_live(void);
/* Sets the high-water mark to what is held now and returns that; the
 * mark then follows the allocations until tf_alloc_peak reads it. Used to
 * tell a plan build's peak (other threads allocating at the same time
 * count too). */
uint64_t tf_alloc_peak_reset(void);
uint64_t tf_alloc_peak(void);

#define TF_ALLOC(ptr, n, what) tf_alloc((void **)&(ptr), (n), sizeof(*(ptr)), (what))
#define TF_CALLOC(ptr, n, what) tf_calloc((void **)&(ptr), (n), sizeof(*(ptr)), (what))
#define TF_REALLOC(ptr, n, what) tf_realloc((void **)&(ptr), (n), sizeof(*(ptr)), (what))
#endif
