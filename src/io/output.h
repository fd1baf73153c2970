/* SPDX-License-Identifier: BSD-3-Clause */
/* Where an output goes: the one place that turns an output path into a
 * target (used by the writer, tf_output_check and so by the CLI), and the
 * registry of live temporary files that tf_output_cleanup removes.
 *
 *   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
 *                      -> TF_OUT_FD: that open descriptor, written directly
 *   FIFO, character or block device, socket
 *                      -> TF_OUT_DEVICE: opened and written directly
 *   symlink            -> followed (chains too, at most 40 links; the target
 *                         of a dangling link is created), then as below
 *   regular file or a name that does not exist
 *                      -> TF_OUT_FILE: written to "<file>.tmp.<pid>.<n>" in
 *                         the file's directory, fsynced, renamed over it
 *   directory          -> error naming the path */
#ifndef TF_IO_OUTPUT_H
#define TF_IO_OUTPUT_H

#include <sys/types.h>

#include "tenfold.h"

typedef enum tf_out_kind { TF_OUT_FILE = 0, TF_OUT_DEVICE, TF_OUT_FD } tf_out_kind;

typedef struct tf_out_target {
    tf_out_kind kind;
    int fd;        /* TF_OUT_FD: the descriptor                                */
    char *path;    /* FILE: the file to create or replace (links resolved);
                      DEVICE: the path to open; FD: NULL                       */
    int exists;    /* FILE: the file exists (its permissions are kept)          */
    mode_t mode;   /* FILE: its permission bits when it exists                  */
} tf_out_target;

/* Resolves path (see above). Fails with a message naming path. */
tf_status tf_out_resolve(const char *path, tf_out_target *t);
void tf_out_target_free(tf_out_target *t);

/* Creates the temporary file of a TF_OUT_FILE target (O_EXCL, mode 0666 &
 * ~umask, or the existing file's mode) and registers it for
 * tf_output_cleanup. Returns the descriptor and sets *tmp (malloc'd) and
 * *slot (registry slot or -1); on failure -1 with errno set. */
int tf_out_temp_create(const tf_out_target *t, char **tmp, int *slot);
/* The temporary of this slot is about to be renamed into place: from now
 * on tf_output_cleanup finishes the rename instead of removing it. */
void tf_out_temp_committing(int slot, const char *final);
/* Forgets the slot (after the rename or unlink). -1 is ignored. */
void tf_out_temp_release(int slot);
/* Live registry slots (for tests). */
int tf_out_temp_live(void);

/* A set of finished temporaries renamed into place together. */
#define TF_OUT_SET_MAX (TF_MAX_ORDER + 8)
typedef struct tf_out_set {
    int n;
    struct {
        char *tmp, *final, *name; /* name: the path as given, for messages */
        int slot;
    } f[TF_OUT_SET_MAX];
} tf_out_set;

void tf_out_set_init(tf_out_set *s);
/* Takes ownership of tmp, final and name (malloc'd). Fails (and removes
 * the temporary) when the set is full. */
tf_status tf_out_set_add(tf_out_set *s, char *tmp, char *final, char *name, int slot);
/* Renames every temporary over its file, fsyncs the directories; a signal
 * handler's tf_output_cleanup during the renames finishes them. */
tf_status tf_out_set_commit(tf_out_set *s);
/* Removes every temporary; the files are untouched. */
void tf_out_set_abort(tf_out_set *s);
#endif
