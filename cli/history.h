/* SPDX-License-Identifier: BSD-3-Clause */
/* A report's list of iterations (or epochs) that grows as the run's
 * callback hands them over: 64 entries, then doubling. */
#ifndef TF_CLI_HISTORY_H
#define TF_CLI_HISTORY_H
#include <stddef.h>
#include <stdint.h>

/* Appends the `size` bytes at item to *items (n entries, room for cap);
 * where the list cannot grow it keeps what it has and sets *lost (the
 * report then says some iterations are missing). */
void cli_history_add(void **items, uint32_t *n, uint32_t *cap, size_t size, const void *item, int *lost);

#endif
