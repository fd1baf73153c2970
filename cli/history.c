/* SPDX-License-Identifier: BSD-3-Clause */
#include "history.h"

#include <stdlib.h>
#include <string.h>

void cli_history_add(void **items, uint32_t *n, uint32_t *cap, size_t size, const void *item, int *lost)
{
    if (*n == *cap) {
        const uint32_t c = *cap ? 2 * *cap : 64;
        void *p = realloc(*items, (size_t)c * size);
        if (!p) {
            *lost = 1;
            return;
        }
        *items = p;
        *cap = c;
    }
    memcpy((char *)*items + (size_t)*n * size, item, size);
    ++*n;
}
