/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/decompress.h"

tf_status tf_slurp_fd(const char *name, int fd, char **out, size_t *len)
{
    size_t cap = 1u << 16, n = 0;
    char *buf = NULL;
    *out = NULL;
    *len = 0;
    TF_TRY(tf_alloc((void **)&buf, cap, 1, "input"));
    for (;;) {
        if (n == cap) {
            tf_status s = tf_realloc((void **)&buf, cap * 2, 1, "input");
            if (s != TF_OK) { tf_free(buf); return s; }
            cap *= 2;
        }
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) {
            int e = errno;
            tf_free(buf);
            return tf_fail(TF_ERR_IO, "%s: read failed: %s", name, strerror(e));
        }
        if (k == 0) break;
        n += (size_t)k;
    }
    *out = buf;
    *len = n;
    return TF_OK;
}

/* Appends '\n' unless the text already ends with one. */
static tf_status end_with_newline(char **buf, size_t *len)
{
    if (*len > 0 && (*buf)[*len - 1] == '\n') return TF_OK;
    TF_TRY(tf_realloc((void **)buf, *len + 1, 1, "input"));
    (*buf)[(*len)++] = '\n';
    return TF_OK;
}

tf_status tf_load_text(const char *path, int threads, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *raw = NULL;
    size_t n = 0;
    tf_status s = tf_slurp_fd(path, fd, &raw, &n);
    close(fd);
    if (s != TF_OK) return s;
    char *plain = NULL;
    size_t plain_len = 0;
    int kind = 0;
    s = tf_decompress_any(path, raw, n, threads, &plain, &plain_len, &kind);
    if (s != TF_OK || kind) {
        tf_free(raw);
        if (s != TF_OK) return s;
        raw = plain;
        n = plain_len;
    }
    s = end_with_newline(&raw, &n);
    if (s != TF_OK) { tf_free(raw); return s; }
    *out = raw;
    *len = n;
    return TF_OK;
}
