/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the dense matrix (.mat) reader behind tf_matrix_read,
 * through its in-memory parser (the file is read whole, decompressed and
 * given a final '\n' before parsing; the harness adds the '\n'). A parsed
 * matrix must be rows x cols of finite values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/matrix_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    size_t len = size;
    if (len == 0 || text[len - 1] != '\n') text[len++] = '\n';
    tf_matrix m;
    if (tf_matrix_parse("fuzz.mat", text, len, &m) == TF_OK) {
        if (m.rows == 0 || m.cols == 0 || !m.data) __builtin_trap();
        for (uint64_t i = 0; i < m.rows * m.cols; ++i)
            if (!isfinite(m.data[i])) __builtin_trap();
        tf_matrix_free(&m);
    }
    free(text);
    return 0;
}
