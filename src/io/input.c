/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/input.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "io/decompress.h"

/* Appends '\n' unless the text already ends with one. */
static tf_status end_with_newline(char **buf, size_t *len)
{
    if (*len > 0 && (*buf)[*len - 1] == '\n') return TF_OK;
    TF_TRY(tf_realloc((void **)buf, *len + 1, 1, "input"));
    (*buf)[(*len)++] = '\n';
    return TF_OK;
}

tf_status tf_open_input(const char *path, int *fd, const char **name, int *is_stdin)
{
    const int in = !strcmp(path, "-");
    if (is_stdin) *is_stdin = in;
    *name = in ? TF_STDIN_NAME : path;
    *fd = in ? fcntl(0, F_DUPFD_CLOEXEC, 0) : open(path, O_RDONLY | O_CLOEXEC);
    if (*fd >= 0) return TF_OK;
    if (in) return tf_fail(TF_ERR_IO, "standard input ('-'): cannot read it: %s", strerror(errno));
    return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
}

tf_status tf_load_text(const char *path, int threads, char **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    int fd = -1;
    TF_TRY(tf_open_input(path, &fd, &path, NULL));
    tf_decoder *dec = NULL;
    tf_status s = tf_decoder_open_fd(path, fd, threads, &dec, NULL);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    while (s == TF_OK) { /* the whole (decompressed) text, in a buffer that doubles */
        if (n == cap) {
            cap = cap ? 2 * cap : (size_t)1 << 16;
            s = buf ? tf_realloc((void **)&buf, cap, 1, "input") : tf_alloc((void **)&buf, cap, 1, "input");
            if (s != TF_OK) break;
        }
        size_t got = 0;
        s = tf_decoder_read(dec, buf + n, cap - n, &got);
        if (s != TF_OK || got == 0) break;
        n += got;
    }
    if (dec) tf_decoder_close(dec);
    close(fd);
    if (s == TF_OK) s = end_with_newline(&buf, &n);
    if (s != TF_OK) {
        tf_free(buf);
        return s;
    }
    *out = buf;
    *len = n;
    return TF_OK;
}
