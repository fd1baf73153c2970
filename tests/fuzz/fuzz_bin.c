/* SPDX-License-Identifier: BSD-3-Clause */
/* libFuzzer target: the tenfold binary (.bin) reader, on both of its code
 * paths -- from memory (tf_parse_tensor: decompressed or in-memory images)
 * and from a file (tf_read_tensor: parallel pread straight into the
 * arrays) -- which must agree on every input.
 *
 * Input: one flag byte, then the file. Inputs without the magic get
 * "TENFOLD\0" and version 1 put in front. Flag bit 0 recomputes the header
 * checksum and bit 1 sets nnz from the payload length first, so mutated
 * headers and payloads get past those checks to the field and index
 * checks behind them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/bin_format.h"
#include "io/checksum.h"
#include "tenfold.h"

static char tmp_path[64];

static void cleanup(void)
{
    if (tmp_path[0]) unlink(tmp_path);
}

/* Makes the header of buf[0..n) consistent where the flags ask for it. */
static void fix_header(unsigned char *buf, size_t n, unsigned flags)
{
    if (n < TF_BIN_FIXED_BYTES) return;
    uint32_t order;
    memcpy(&order, buf + 12, 4);
    if (order < TF_MIN_ORDER || order > TF_MAX_ORDER) return;
    const uint64_t hb = tf_bin_header_bytes(order), per = 4ull * order + 8;
    if (n < hb) return;
    uint64_t nnz;
    memcpy(&nnz, buf + 24, 8);
    if (flags & 2) {
        nnz = (n - hb) / per;
        memcpy(buf + 24, &nnz, 8);
    }
    if ((flags & 1) && nnz <= (n - hb) / per) {
        uint64_t h = tf_checksum(buf, hb - 8, 0, 1);
        for (uint32_t m = 0; m < order; ++m) h = tf_checksum(buf + hb + m * nnz * 4, nnz * 4, h, 1);
        h = tf_checksum(buf + hb + order * nnz * 4, nnz * 8, h, 1);
        memcpy(buf + hb - 8, &h, 8);
    }
}

static int same_tensor(const tf_tensor *a, const tf_tensor *b)
{
    if (a->order != b->order || a->nnz != b->nnz) return 0;
    for (uint32_t m = 0; m < a->order; ++m)
        if (a->dims[m] != b->dims[m] || memcmp(a->ind[m], b->ind[m], a->nnz * 4)) return 0;
    return memcmp(a->vals, b->vals, a->nnz * 8) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    const unsigned flags = data[0];
    ++data, --size;
    static const unsigned char head[12] = {'T', 'E', 'N', 'F', 'O', 'L', 'D', 0, 1, 0, 0, 0};
    const int has_magic = size >= TF_BIN_MAGIC_LEN && memcmp(data, head, TF_BIN_MAGIC_LEN) == 0;
    const size_t pre = has_magic ? 0 : sizeof head, n = pre + size;
    unsigned char *buf = malloc(n ? n : 1);
    if (!buf) return 0;
    memcpy(buf, head, pre);
    if (size) memcpy(buf + pre, data, size);
    fix_header(buf, n, flags);

    tf_tensor a, b;
    tf_read_info ia, ib;
    tf_status sa = tf_parse_tensor("fuzz.bin", (const char *)buf, n, 1, &a, &ia);
    if (sa == TF_OK && tf_tensor_validate(&a) != TF_OK) __builtin_trap();

    if (!tmp_path[0]) {
        snprintf(tmp_path, sizeof tmp_path, "/tmp/fuzz_bin.%d.bin", (int)getpid());
        atexit(cleanup);
    }
    FILE *f = fopen(tmp_path, "wb");
    if (f) {
        const int ok = fwrite(buf, 1, n, f) == n;
        if (fclose(f) == 0 && ok) {
            tf_status sb = tf_read_tensor(tmp_path, 1, &b, &ib);
            if ((sa == TF_OK) != (sb == TF_OK)) __builtin_trap(); /* the two paths disagree */
            if (sb == TF_OK) {
                if (!same_tensor(&a, &b)) __builtin_trap();
                tf_tensor_free(&b);
            }
        }
    }
    if (sa == TF_OK) tf_tensor_free(&a);
    free(buf);
    return 0;
}
