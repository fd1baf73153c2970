/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the .tns readers (FROSTT, ParTI, sptensor) and, by
 * content detection, the binary and Matrix Market readers, through
 * tf_parse_tensor on the raw bytes. Any status is fine; crashes, leaks,
 * hangs and sanitizer reports are findings. */
#include <stddef.h>
#include <stdint.h>

#include "tenfold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tf_tensor t;
    tf_read_info info;
    if (tf_parse_tensor("fuzz.tns", (const char *)data, size, 1, &t, &info) == TF_OK) {
        if (tf_tensor_validate(&t) != TF_OK)
            __builtin_trap(); /* readers must return valid tensors */
        tf_tensor_free(&t);
    }
    return 0;
}
