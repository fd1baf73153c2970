/* SPDX-License-Identifier: BSD-3-Clause */
/* Output files. The target is resolved by io/output.h: a regular file (or
 * a new name, or the target of a symlink) is written to a temporary file in
 * its directory, which commit flushes, fsyncs and renames over it; any
 * failure (including one recorded by a put) unlinks the temporary file, so
 * a failed run never leaves a partial or clobbered output. Standard
 * output, FIFOs and devices are written directly. Errors are sticky: after
 * the first, puts do nothing and commit reports it. */
#ifndef TF_IO_WRITER_H
#define TF_IO_WRITER_H

#include <stddef.h>

#include "core/error.h"
#include "io/output.h"
#include "tenfold.h"

typedef struct tf_writer {
    int fd;
    char *path;     /* the name as given (messages) */
    char *final;    /* the file the temporary replaces (symlinks resolved) */
    char *tmp;      /* temporary name */
    int created;    /* the temporary file exists and is ours to remove */
    int slot;       /* its slot in the registry of temporaries, or -1 */
    int direct;     /* 1: fd is the output itself (stdout, FIFO, device) */
    char *buf;
    size_t len, cap;
    tf_status status;
    char err[256];  /* message of the first failure */
} tf_writer;

tf_status tf_writer_open(tf_writer *w, const char *path);
/* The same for a file that goes into set (tf_writer_finish): its temporary
 * is recorded in set->journal_fd first. require_file: the path must be a
 * regular file or a new name (a set is switched by renaming; standard
 * output, a FIFO or a device is an error). */
tf_status tf_writer_open_for(tf_writer *w, const char *path, const tf_out_set *set, int require_file);
void tf_writer_put(tf_writer *w, const void *data, size_t n);
void tf_writer_printf(tf_writer *w, const char *fmt, ...) TF_PRINTF(2, 3);
/* Flush, fsync, close, rename. Returns the first error (temp file removed). */
tf_status tf_writer_commit(tf_writer *w);
/* Flush, fsync, close, and hand the temporary to set (renamed by
 * tf_out_set_commit with the others). Returns the first error (temp file
 * removed; the set is left to the caller to abort). */
tf_status tf_writer_finish(tf_writer *w, tf_out_set *set);
/* Drops the output (temp file removed). Safe after a failed open. */
void tf_writer_abort(tf_writer *w);

/* Writes n records in parallel: fn formats record k into dst (at most
 * max_len bytes) and returns its length; threads format blocks of records
 * into their own buffers, which are written in order. */
typedef size_t (*tf_record_fn)(const void *ctx, uint64_t k, char *dst);
void tf_writer_records(tf_writer *w, uint64_t n, size_t max_len, tf_record_fn fn, const void *ctx,
                       int threads);
#endif
