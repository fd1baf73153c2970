/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the xz / gzip input path (liblzma, zlib, then the
 * reader of whatever comes out) through tf_parse_tensor. Input: one flag
 * byte (bit 0: gzip, else xz), then the stream; a stream without that
 * format's magic gets it put in front, so every input reaches the
 * decoder. Truncated and corrupt streams must fail cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tenfold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    static const unsigned char xz[6] = {0xFD, '7', 'z', 'X', 'Z', 0x00}, gz[2] = {0x1F, 0x8B};
    const int use_gz = data[0] & 1;
    const unsigned char *magic = use_gz ? gz : xz;
    const size_t nm = use_gz ? sizeof gz : sizeof xz;
    ++data, --size;
    const size_t pre = size >= nm && memcmp(data, magic, nm) == 0 ? 0 : nm;
    char *buf = malloc(pre + size);
    if (!buf) return 0;
    memcpy(buf, magic, pre);
    if (size) memcpy(buf + pre, data, size);
    tf_tensor t;
    tf_read_info info;
    if (tf_parse_tensor("fuzz.tns.xz", buf, pre + size, 1, &t, &info) == TF_OK) {
        if (!info.compressed || tf_tensor_validate(&t) != TF_OK) __builtin_trap();
        tf_tensor_free(&t);
    }
    free(buf);
    return 0;
}
