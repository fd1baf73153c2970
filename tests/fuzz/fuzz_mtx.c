/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the Matrix Market reader. Inputs that do not start
 * with a banner get "%%MatrixMarket matrix coordinate " put in front, so
 * most inputs reach the field/symmetry words, size line and entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tenfold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char banner[] = "%%MatrixMarket matrix coordinate ";
    const size_t nb = sizeof banner - 1;
    int has_banner = size >= 14 && memcmp(data, banner, 14) == 0;
    char *text = malloc(size + nb + 1);
    if (!text) return 0;
    size_t len = 0;
    if (!has_banner) { memcpy(text, banner, nb); len = nb; }
    if (size) memcpy(text + len, data, size);
    len += size;
    tf_tensor t;
    tf_read_info info;
    if (tf_parse_tensor("fuzz.mtx", text, len, 1, &t, &info) == TF_OK) {
        if (t.order != 2 || tf_tensor_validate(&t) != TF_OK) __builtin_trap();
        tf_tensor_free(&t);
    }
    free(text);
    return 0;
}
