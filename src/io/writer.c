/* SPDX-License-Identifier: BSD-3-Clause */
#include "io/writer.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/parallel.h"

#define BUF_BYTES (1u << 20)
#define RECORD_BUF_BYTES (4u << 20)

static void record_error(tf_writer *w, tf_status s, const char *what, int err)
{
    if (w->status != TF_OK) return;
    w->status = s;
    snprintf(w->err, sizeof w->err, "%s: %s%s%s", w->path ? w->path : "(output)", what,
             err ? ": " : "", err ? strerror(err) : "");
}

tf_status tf_writer_open(tf_writer *w, const char *path) { return tf_writer_open_for(w, path, NULL, 0); }

tf_status tf_writer_open_for(tf_writer *w, const char *path, const tf_out_set *set, int require_file)
{
    memset(w, 0, sizeof *w);
    w->fd = -1;
    w->slot = -1;
    if (!path || !*path) return tf_fail(TF_ERR_ARG, "output path is empty");
    w->path = strdup(path);
    w->buf = malloc(BUF_BYTES);
    if (!w->path || !w->buf) {
        tf_writer_abort(w);
        return tf_fail(TF_ERR_NOMEM, "out of memory opening %s", path);
    }
    w->cap = BUF_BYTES;
    tf_out_target t;
    tf_status s = tf_out_resolve(path, &t);
    if (s != TF_OK) {
        tf_writer_abort(w);
        return s;
    }
    if (require_file && t.kind != TF_OUT_FILE) {
        s = tf_fail(TF_ERR_IO, "%s: a file of a set must be a regular file or a new name (the set is switched by "
                    "renaming), not %s", path, t.kind == TF_OUT_FD ? "an open descriptor" : "a FIFO or device");
        tf_out_target_free(&t);
        tf_writer_abort(w);
        return s;
    }
    if (t.kind == TF_OUT_FD) { /* our own descriptor, so closing it leaves stdout open */
        w->direct = 1;
        w->fd = fcntl(t.fd, F_DUPFD_CLOEXEC, 3);
    } else if (t.kind == TF_OUT_DEVICE) {
        w->direct = 1;
        w->fd = open(t.path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    } else {
        w->fd = tf_out_temp_create(&t, set ? set->journal_fd : -1, &w->tmp, &w->slot);
        w->created = w->fd >= 0;
        w->final = t.path;
        t.path = NULL;
    }
    int err = errno;
    tf_out_target_free(&t);
    if (w->fd < 0) {
        s = tf_fail(TF_ERR_IO, "%s: cannot %s: %s", path,
                    w->direct ? "open it for writing" : "create a file there", strerror(err));
        tf_writer_abort(w);
        return s;
    }
    return TF_OK;
}

static void write_all(tf_writer *w, const char *p, size_t n)
{
    while (n > 0 && w->status == TF_OK) {
        ssize_t k = write(w->fd, p, n > (1u << 30) ? (1u << 30) : n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) { record_error(w, TF_ERR_IO, "write failed", k < 0 ? errno : EIO); return; }
        p += k;
        n -= (size_t)k;
    }
}

static void flush(tf_writer *w)
{
    write_all(w, w->buf, w->len);
    w->len = 0;
}

void tf_writer_put(tf_writer *w, const void *data, size_t n)
{
    if (w->status != TF_OK) return;
    if (w->len + n > w->cap) {
        flush(w);
        if (n >= w->cap) { write_all(w, data, n); return; }
    }
    memcpy(w->buf + w->len, data, n);
    w->len += n;
}

void tf_writer_printf(tf_writer *w, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof line) {
        record_error(w, TF_ERR_ARG, "header line too long", 0);
        return;
    }
    tf_writer_put(w, line, (size_t)n);
}

void tf_writer_records(tf_writer *w, uint64_t n, size_t max_len, tf_record_fn fn, const void *ctx,
                       int threads)
{
    if (w->status != TF_OK || n == 0) return;
    const int T = n < 4096 ? 1 : tf_resolve_threads(threads);
    const uint64_t per = RECORD_BUF_BYTES / max_len ? RECORD_BUF_BYTES / max_len : 1;
    const size_t bytes = (size_t)per * max_len;
    char *bufs = NULL;
    size_t *used = NULL;
    if (tf_alloc((void **)&bufs, (uint64_t)T, bytes, "output buffers") != TF_OK ||
        TF_ALLOC(used, (uint64_t)T, "output buffer sizes") != TF_OK) {
        tf_free(bufs);
        record_error(w, TF_ERR_NOMEM, "out of memory for output buffers", 0);
        return;
    }
    for (uint64_t base = 0; base < n && w->status == TF_OK; base += per * (uint64_t)T) {
#pragma omp parallel for num_threads(T) schedule(static, 1)
        for (int t = 0; t < T; ++t) {
            uint64_t lo = base + (uint64_t)t * per, hi = lo + per < n ? lo + per : n;
            char *d = bufs + (size_t)t * bytes;
            size_t u = 0;
            for (uint64_t k = lo; k < hi; ++k) u += fn(ctx, k, d + u);
            used[t] = lo < n ? u : 0;
        }
        flush(w);
        for (int t = 0; t < T; ++t) write_all(w, bufs + (size_t)t * bytes, used[t]);
    }
    tf_free(used);
    tf_free(bufs);
}

static void release(tf_writer *w)
{
    if (w->fd >= 0) close(w->fd);
    w->fd = -1;
    if (w->created) unlink(w->tmp);
    w->created = 0;
    tf_out_temp_release(w->slot);
    w->slot = -1;
    free(w->tmp);
    free(w->final);
    free(w->path);
    free(w->buf);
    w->tmp = w->final = w->path = w->buf = NULL;
}

tf_status tf_writer_finish(tf_writer *w, tf_out_set *set)
{
    flush(w);
    if (w->status == TF_OK && !w->direct && fsync(w->fd) != 0)
        record_error(w, TF_ERR_IO, "fsync failed", errno);
    if (w->fd >= 0) {
        int rc = close(w->fd);
        w->fd = -1;
        if (rc != 0) record_error(w, TF_ERR_IO, "close failed", errno);
    }
    tf_status s = w->status;
    if (s != TF_OK) {
        tf_fail(s, "%s", w->err);
    } else if (!w->direct) { /* the set owns the temporary now */
        s = tf_out_set_add(set, w->tmp, w->final, w->path, w->slot);
        w->tmp = w->final = w->path = NULL;
        w->created = 0;
        w->slot = -1;
    }
    release(w);
    return s;
}

tf_status tf_writer_commit(tf_writer *w)
{
    tf_out_set set;
    tf_out_set_init(&set);
    TF_TRY(tf_writer_finish(w, &set));
    return tf_out_set_commit(&set);
}

void tf_writer_abort(tf_writer *w) { release(w); }

tf_status tf_write_file(const char *path, const void *data, size_t len)
{
    if (!path) return tf_fail(TF_ERR_ARG, "tf_write_file: path is NULL");
    if (!data && len) return tf_fail(TF_ERR_ARG, "tf_write_file: data is NULL (%zu bytes to write)", len);
    tf_writer w;
    TF_TRY(tf_writer_open(&w, path));
    if (len) tf_writer_put(&w, data, len);
    return tf_writer_commit(&w);
}
