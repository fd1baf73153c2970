/* SPDX-License-Identifier: BSD-3-Clause */
/* Where an output goes: the one place that turns an output path into a
 * target (used by the writer, tf_output_check and so by the CLI), the
 * registry of live temporary files that tf_output_cleanup removes, and sets
 * of files renamed into place together.
 *
 *   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
 *                      -> TF_OUT_FD: that open descriptor, written directly
 *   FIFO, character or block device, socket
 *                      -> TF_OUT_DEVICE: opened and written directly
 *   symlink            -> followed (chains too, at most 40 links; the target
 *                         of a dangling link is created), then as below
 *   regular file or a name that does not exist
 *                      -> TF_OUT_FILE: written to a temporary file in the
 *                         file's directory (tf_out_temp_name), fsynced,
 *                         renamed over it
 *   directory          -> error naming the path */
#ifndef TF_IO_OUTPUT_H
#define TF_IO_OUTPUT_H

#include <stddef.h>
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

/* The temporary file of `final` (a path): "<final>.tmp.<pid>.<n>" in the
 * same directory when that name fits the file system's NAME_MAX, else the
 * name cut short and marked with a hash of the whole name,
 * "<first bytes of the name>~<8 hex digits>.tmp.<pid>.<n>" (so an output
 * name of up to NAME_MAX bytes can be written). Returns the length, or -1
 * when buf is too small. */
int tf_out_temp_name(const char *final, long pid, unsigned n, char *buf, size_t len);
/* 1 when the file name tmp_base (no directory) is a temporary name that
 * tf_out_temp_name gives for a file named final_base, for some pid and n. */
int tf_out_temp_matches(const char *tmp_base, const char *final_base);

/* A temporary name (no directory) that a manifest still names: when it has
 * this process's pid (a pid reused since its writer ran), the names this
 * process makes from now on skip it, so they never look like that older
 * temporary to a reader of the manifest. */
void tf_out_temp_avoid(const char *tmp_base);
/* Creates the temporary file of a TF_OUT_FILE target (O_EXCL, mode 0666 &
 * ~umask, or the existing file's mode) and registers it for
 * tf_output_cleanup. journal_fd >= 0: a line "temp <absolute temporary>
 * <final's name>" (tf_out_enc) is appended there before the file is
 * created, so a later run can remove what a killed one left (see
 * io/factor_set.c). Returns the descriptor and sets *tmp (malloc'd) and
 * *slot (registry slot or -1); on failure -1 with errno set. */
int tf_out_temp_create(const tf_out_target *t, int journal_fd, char **tmp, int *slot);
/* The temporary of this slot (not in a set) is about to be renamed into
 * place: from now on tf_output_cleanup finishes the rename instead of
 * removing it. */
void tf_out_temp_committing(int slot, const char *final);
/* Forgets the slot (after the rename or unlink). -1 is ignored. */
void tf_out_temp_release(int slot);
/* Live registry slots (for tests). */
int tf_out_temp_live(void);
/* Registers a lock file that tf_output_cleanup removes (after everything
 * else; the lock dies with the process). Returns the slot or -1. */
int tf_out_reg_lock(const char *path);

/* A set of finished temporaries renamed into place together.
 *
 * Commit: when the set has a head (the manifest of a factor set), the
 * directories of the temporaries are fsynced, the head is renamed first --
 * the commit point --, then the drops are removed and the other files
 * renamed. From the moment the commit begins a signal handler's
 * tf_output_cleanup finishes it (head, drops, renames) instead of removing
 * the temporaries; before it, the handler removes them and the commit
 * never starts (one atomic decision, see output.c). */
#define TF_OUT_SET_MAX (TF_MAX_ORDER + 8)
typedef struct tf_out_set {
    int n;
    struct {
        char *tmp, *final, *name; /* name: the path as given, for messages */
        int slot;
    } f[TF_OUT_SET_MAX];
    int head;                     /* index of the entry renamed first, -1: none */
    int ndrop;
    struct {
        char *path;               /* removed after the head's rename */
        int slot;
    } drop[TF_OUT_SET_MAX];
    int group;                    /* registry group (signal handling), -1: none */
    int journal_fd;               /* see tf_out_temp_create; -1: none */
} tf_out_set;

void tf_out_set_init(tf_out_set *s);
/* Takes ownership of tmp, final and name (malloc'd). Fails (and removes
 * the temporary) when the set is full. */
tf_status tf_out_set_add(tf_out_set *s, char *tmp, char *final, char *name, int slot);
/* The entry added last is the head (renamed before the others). */
void tf_out_set_head_last(tf_out_set *s);
/* path is removed right after the head's rename (a file of the previous
 * set that the new one does not have). */
tf_status tf_out_set_drop(tf_out_set *s, const char *path);
/* Commits (see above); then the set is empty. On an error before the head
 * (or the first rename) nothing is touched and the temporaries are
 * removed. */
tf_status tf_out_set_commit(tf_out_set *s);
/* Removes every temporary; the files are untouched. */
void tf_out_set_abort(tf_out_set *s);

/* fsyncs the directory of path (best effort). */
void tf_out_sync_dir(const char *path);

/* Percent-encoding of a path for the one-line records of manifests and
 * journals: bytes <= ' ', 0x7f and '%' become %XX. Returns the malloc'd
 * text (NULL: out of memory). tf_out_dec decodes in place; -1 on a bad
 * escape. */
char *tf_out_enc(const char *s);
int tf_out_dec(char *s);

/* Test hook (tests only; never set by the library or the tool): called
 * with 0, 1, 2, ... before each rename or removal of a set's commit. */
extern void (*tf_out_test_commit_step)(int step);
#endif
