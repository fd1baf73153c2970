/* SPDX-License-Identifier: BSD-3-Clause */
#include <string.h>

#include "core/error.h"
#include "io/bin_format.h"
#include "io/checksum.h"
#include "io/writer.h"

uint64_t tf_bin_checksum(const unsigned char *hdr, const tf_tensor *t, int threads)
{
    uint64_t h = tf_checksum(hdr, TF_BIN_FIXED_BYTES + 8ull * t->order, 0, 1);
    for (uint32_t m = 0; m < t->order; ++m)
        h = tf_checksum(t->ind[m], t->nnz * sizeof(uint32_t), h, threads);
    return tf_checksum(t->vals, t->nnz * sizeof(double), h, threads);
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }

/* The header of t's file but its checksum. */
static void put_header(unsigned char *hdr, const tf_tensor *t)
{
    memcpy(hdr, TF_BIN_MAGIC, TF_BIN_MAGIC_LEN);
    put32(hdr + 8, TF_BIN_VERSION);
    put32(hdr + 12, t->order);
    put32(hdr + 16, (uint32_t)sizeof(uint32_t));
    put32(hdr + 20, (uint32_t)sizeof(double));
    put64(hdr + 24, t->nnz);
    for (uint32_t m = 0; m < t->order; ++m) put64(hdr + TF_BIN_FIXED_BYTES + 8 * m, t->dims[m]);
}

uint64_t tf_tensor_checksum(const tf_tensor *t, int threads)
{
    unsigned char hdr[TF_BIN_HEADER_MAX];
    if (!t || t->order > TF_MAX_ORDER) return 0;
    put_header(hdr, t);
    return tf_bin_checksum(hdr, t, threads);
}

tf_status tf_bin_write(const char *path, const tf_tensor *t)
{
    TF_TRY(tf_tensor_validate(t));
    unsigned char hdr[TF_BIN_HEADER_MAX];
    put_header(hdr, t);
    const uint64_t hbytes = tf_bin_header_bytes(t->order);
    put64(hdr + hbytes - 8, tf_bin_checksum(hdr, t, 0));

    tf_writer w;
    TF_TRY(tf_writer_open(&w, path));
    tf_writer_put(&w, hdr, (size_t)hbytes);
    for (uint32_t m = 0; m < t->order; ++m)
        tf_writer_put(&w, t->ind[m], (size_t)t->nnz * sizeof(uint32_t));
    tf_writer_put(&w, t->vals, (size_t)t->nnz * sizeof(double));
    return tf_writer_commit(&w);
}
