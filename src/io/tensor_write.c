/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_write_tensor: FROSTT .tns, ParTI header, Tensor Toolbox sptensor,
 * Matrix Market and tenfold binary, all through the atomic writer. Text
 * lines are formatted in parallel with hand-written integer formatting. */
#include <string.h>
#include <strings.h>

#include "core/check_args.h"
#include "core/error.h"
#include "io/bin_format.h"
#include "io/num_format.h"
#include "io/writer.h"

/* "i_1 ... i_N value\n", 1-based. */
static size_t format_entry(const void *ctx, uint64_t k, char *dst)
{
    const tf_tensor *t = ctx;
    char *p = dst;
    for (uint32_t m = 0; m < t->order; ++m) {
        p = tf_format_u64(p, (uint64_t)t->ind[m][k] + 1);
        *p++ = ' ';
    }
    p = tf_format_value(p, t->vals[k]);
    *p++ = '\n';
    return (size_t)(p - dst);
}

static void put_dims(tf_writer *w, const tf_tensor *t)
{
    char line[TF_MAX_ORDER * 12 + 2], *p = line;
    for (uint32_t m = 0; m < t->order; ++m) {
        if (m) *p++ = ' ';
        p = tf_format_u64(p, t->dims[m]);
    }
    *p++ = '\n';
    tf_writer_put(w, line, (size_t)(p - line));
}

static int has_ext(const char *path, const char *ext)
{
    size_t n = strlen(path), e = strlen(ext);
    return n > e && strcasecmp(path + n - e, ext) == 0;
}

static tf_file_format format_for(const char *path)
{
    if (has_ext(path, ".bin") || has_ext(path, ".tfb")) return TF_FILE_BIN;
    if (has_ext(path, ".mtx")) return TF_FILE_MTX;
    return TF_FILE_TNS;
}

/* AUTO: by extension; a plain .tns that would lose dims (a mode longer
 * than its largest index + 1) becomes the ParTI header form. */
tf_file_format tf_write_format(const char *path, const tf_tensor *t, tf_file_format fmt)
{
    if (fmt != TF_FILE_AUTO || !path) return fmt;
    fmt = format_for(path);
    if (fmt == TF_FILE_TNS && t && t->order >= TF_MIN_ORDER && t->order <= TF_MAX_ORDER &&
        tf_tensor_implied_dims(t, NULL) > 0)
        fmt = TF_FILE_TNS_HEADER;
    return fmt;
}

tf_status tf_write_tensor(const char *path, const tf_tensor *t, tf_file_format fmt)
{
    TF_ARG_NOT_NULL("tf_write_tensor", path);
    if (!*path) return tf_fail(TF_ERR_ARG, "no output file given");
    if (has_ext(path, ".xz") || has_ext(path, ".gz"))
        return tf_fail(TF_ERR_UNAVAILABLE, "%s: compressed output is not supported "
                       "(write the plain file and compress it)", path);
    TF_ARG_NOT_NULL("tf_write_tensor", t);
    if (fmt == TF_FILE_AUTO) {
        if (format_for(path) == TF_FILE_TNS) TF_TRY(tf_tensor_validate(t)); /* before reading indices */
        fmt = tf_write_format(path, t, fmt);
    }
    if (fmt < TF_FILE_AUTO || fmt > TF_FILE_MTX)
        return tf_fail(TF_ERR_ARG, "%s: unknown output format %d", path, (int)fmt);
    if (fmt == TF_FILE_BIN) return tf_bin_write(path, t);
    TF_TRY(tf_tensor_validate(t));
    if (fmt == TF_FILE_MTX && t->order != 2)
        return tf_fail(TF_ERR_ARG, "%s: Matrix Market holds order-2 tensors, this one has order %u",
                       path, t->order);
    tf_writer w;
    TF_TRY(tf_writer_open(&w, path));
    switch (fmt) {
    case TF_FILE_TNS_HEADER:
        tf_writer_printf(&w, "%u\n", t->order);
        put_dims(&w, t);
        break;
    case TF_FILE_SPTENSOR:
        tf_writer_printf(&w, "sptensor\n%u\n", t->order);
        put_dims(&w, t);
        tf_writer_printf(&w, "%llu\n", (unsigned long long)t->nnz);
        break;
    case TF_FILE_MTX:
        tf_writer_printf(&w, "%%%%MatrixMarket matrix coordinate real general\n%llu %llu %llu\n",
                         (unsigned long long)t->dims[0], (unsigned long long)t->dims[1],
                         (unsigned long long)t->nnz);
        break;
    default:
        break;
    }
    tf_writer_records(&w, t->nnz, (size_t)t->order * 11 + TF_VALUE_MAX_CHARS + 2, format_entry, t,
                      0);
    return tf_writer_commit(&w);
}
