/* SPDX-License-Identifier: BSD-3-Clause */
/* Output targets, the registry of live temporary files, sets of files
 * renamed together, and the public tf_output_* / tf_write_file calls. */
#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

#define MAX_LINKS 40
#define REG_SLOTS 64
#define REG_PATH 4096

/* ------------------------------------------------------------ targets */

/* "/dev/stdout", "/dev/stderr", "/dev/fd/N", "/proc/self/fd/N": sets *fd. */
static int special_fd(const char *p, int *fd)
{
    if (!strcmp(p, "/dev/stdout")) return *fd = 1, 1;
    if (!strcmp(p, "/dev/stderr")) return *fd = 2, 1;
    static const char *const dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; ++i) {
        size_t n = strlen(dirs[i]);
        if (strncmp(p, dirs[i], n) != 0) continue;
        const char *d = p + n;
        long v = 0;
        if (!*d) return 0;
        for (; *d; ++d) {
            if (*d < '0' || *d > '9' || v > INT_MAX / 10) return 0;
            v = v * 10 + (*d - '0');
        }
        if (v > INT_MAX) return 0;
        return *fd = (int)v, 1;
    }
    return 0;
}

/* The link target read from link `cur`, relative to cur's directory. */
static char *follow(const char *cur, const char *target)
{
    const char *slash = strrchr(cur, '/');
    if (target[0] == '/' || !slash) return strdup(target);
    size_t d = (size_t)(slash - cur) + 1, n = strlen(target);
    char *p = malloc(d + n + 1);
    if (!p) return NULL;
    memcpy(p, cur, d);
    memcpy(p + d, target, n + 1);
    return p;
}

tf_status tf_out_resolve(const char *path, tf_out_target *t)
{
    memset(t, 0, sizeof *t);
    t->fd = -1;
    if (!path || !*path) return tf_fail(TF_ERR_ARG, "no output file given");
    if (!strcmp(path, "-")) {
        t->kind = TF_OUT_FD;
        t->fd = 1;
        return TF_OK;
    }
    char *cur = strdup(path);
    if (!cur) return tf_fail(TF_ERR_NOMEM, "out of memory");
    for (int links = 0;; ++links) {
        int fd;
        if (special_fd(cur, &fd)) {
            free(cur);
            t->kind = TF_OUT_FD;
            t->fd = fd;
            return TF_OK;
        }
        struct stat st;
        if (lstat(cur, &st) != 0) {
            int err = errno;
            if (err == ENOENT) { /* a new file (or the target of a dangling link) */
                t->kind = TF_OUT_FILE;
                t->path = cur;
                return TF_OK;
            }
            tf_status s = tf_fail(TF_ERR_IO, "%s: cannot write there: %s", cur, strerror(err));
            free(cur);
            return s;
        }
        if (S_ISLNK(st.st_mode)) {
            char buf[REG_PATH];
            ssize_t n = links < MAX_LINKS ? readlink(cur, buf, sizeof buf) : -1;
            if (n < 0 || (size_t)n >= sizeof buf) {
                int err = links >= MAX_LINKS ? ELOOP : n < 0 ? errno : ENAMETOOLONG;
                tf_status s = tf_fail(TF_ERR_IO, "%s: cannot follow the symbolic link: %s", path,
                                      strerror(err));
                free(cur);
                return s;
            }
            buf[n] = '\0';
            char *next = follow(cur, buf);
            free(cur);
            if (!next) return tf_fail(TF_ERR_NOMEM, "out of memory");
            cur = next;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            tf_status s = strcmp(cur, path)
                              ? tf_fail(TF_ERR_IO, "%s: is a directory (%s), not a file", path, cur)
                              : tf_fail(TF_ERR_IO, "%s: is a directory, not a file", path);
            free(cur);
            return s;
        }
        t->path = cur;
        if (S_ISREG(st.st_mode)) {
            t->kind = TF_OUT_FILE;
            t->exists = 1;
            t->mode = st.st_mode & 07777;
        } else {
            t->kind = TF_OUT_DEVICE; /* FIFO, character or block device, socket */
        }
        return TF_OK;
    }
}

void tf_out_target_free(tf_out_target *t)
{
    free(t->path);
    t->path = NULL;
}

/* ----------------------------------------------- registry of temporaries */

enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_LIVE, SLOT_COMMITTING };

/* Static storage only: tf_output_cleanup reads it from a signal handler. */
static struct {
    int state;
    char tmp[REG_PATH];
    char final[REG_PATH];
} reg[REG_SLOTS];

static unsigned tmp_counter;

static int reg_claim(const char *tmp)
{
    size_t n = strlen(tmp);
    if (n >= REG_PATH) return -1;
    for (int i = 0; i < REG_SLOTS; ++i) {
        int expect = SLOT_FREE;
        if (!__atomic_compare_exchange_n(&reg[i].state, &expect, SLOT_CLAIMED, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            continue;
        memcpy(reg[i].tmp, tmp, n + 1);
        __atomic_store_n(&reg[i].state, SLOT_LIVE, __ATOMIC_RELEASE);
        return i;
    }
    return -1; /* full: the file works, a signal just leaves it behind */
}

void tf_out_temp_release(int slot)
{
    if (slot >= 0 && slot < REG_SLOTS) __atomic_store_n(&reg[slot].state, SLOT_FREE, __ATOMIC_RELEASE);
}

void tf_out_temp_committing(int slot, const char *final)
{
    if (slot < 0 || slot >= REG_SLOTS) return;
    size_t n = strlen(final);
    if (n >= REG_PATH) return; /* stays LIVE: a signal removes it instead */
    memcpy(reg[slot].final, final, n + 1);
    __atomic_store_n(&reg[slot].state, SLOT_COMMITTING, __ATOMIC_RELEASE);
}

int tf_out_temp_live(void)
{
    int n = 0;
    for (int i = 0; i < REG_SLOTS; ++i) n += __atomic_load_n(&reg[i].state, __ATOMIC_ACQUIRE) != SLOT_FREE;
    return n;
}

void tf_output_cleanup(void)
{
    /* Async-signal-safe: atomics, unlink and rename only. */
    for (int i = 0; i < REG_SLOTS; ++i) {
        int s = __atomic_load_n(&reg[i].state, __ATOMIC_ACQUIRE);
        if (s == SLOT_LIVE) unlink(reg[i].tmp);
        else if (s == SLOT_COMMITTING) rename(reg[i].tmp, reg[i].final);
        else continue;
        __atomic_store_n(&reg[i].state, SLOT_FREE, __ATOMIC_RELEASE);
    }
}

int tf_out_temp_create(const tf_out_target *t, char **tmp, int *slot)
{
    *tmp = NULL;
    *slot = -1;
    size_t n = strlen(t->path) + 48;
    char *p = malloc(n);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    int fd = -1, err = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
        unsigned id = __atomic_fetch_add(&tmp_counter, 1, __ATOMIC_RELAXED);
        snprintf(p, n, "%s.tmp.%ld.%u", t->path, (long)getpid(), id);
        *slot = reg_claim(p); /* before the file exists: a signal never misses it */
        fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0) break;
        err = errno;
        tf_out_temp_release(*slot);
        *slot = -1;
        if (err != EEXIST) break;
    }
    if (fd < 0) {
        free(p);
        errno = err;
        return -1;
    }
    if (t->exists) (void)fchmod(fd, t->mode); /* a replaced file keeps its permissions */
    *tmp = p;
    return fd;
}

/* ------------------------------------------------------------------ sets */

void tf_out_set_init(tf_out_set *s) { memset(s, 0, sizeof *s); }

static void drop(tf_out_set *s, int i, int remove)
{
    if (remove) unlink(s->f[i].tmp);
    tf_out_temp_release(s->f[i].slot);
    free(s->f[i].tmp);
    free(s->f[i].final);
    free(s->f[i].name);
}

tf_status tf_out_set_add(tf_out_set *s, char *tmp, char *final, char *name, int slot)
{
    if (s->n == TF_OUT_SET_MAX) {
        tf_status st = tf_fail(TF_ERR_ARG, "%s: too many files in one output set", name);
        unlink(tmp);
        tf_out_temp_release(slot);
        free(tmp), free(final), free(name);
        return st;
    }
    s->f[s->n].tmp = tmp;
    s->f[s->n].final = final;
    s->f[s->n].name = name;
    s->f[s->n].slot = slot;
    ++s->n;
    return TF_OK;
}

void tf_out_set_abort(tf_out_set *s)
{
    for (int i = 0; i < s->n; ++i) drop(s, i, 1);
    s->n = 0;
}

/* Length of the directory part of p ("" -> "."). */
static size_t dir_len(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? (size_t)(slash - p) + (slash == p) : 0;
}

static void sync_dir(const char *file)
{
    size_t n = dir_len(file);
    char buf[REG_PATH];
    if (n >= sizeof buf) return;
    if (n) memcpy(buf, file, n);
    else buf[n++] = '.';
    buf[n] = '\0';
    int fd = open(buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd); /* best effort: the renames are done either way */
    close(fd);
}

tf_status tf_out_set_commit(tf_out_set *s)
{
    for (int i = 0; i < s->n; ++i) tf_out_temp_committing(s->f[i].slot, s->f[i].final);
    tf_status st = TF_OK;
    int i = 0;
    for (; i < s->n; ++i)
        if (rename(s->f[i].tmp, s->f[i].final) != 0) {
            int err = errno;
            st = tf_fail(TF_ERR_IO, "%s: cannot rename the temporary file into place: %s", s->f[i].name,
                         strerror(err));
            break;
        }
    for (int j = 0; j < s->n; ++j) {
        int done = j < i, same = 0;
        for (int k = 0; k < j && done; ++k)
            same |= dir_len(s->f[k].final) == dir_len(s->f[j].final) &&
                    !strncmp(s->f[k].final, s->f[j].final, dir_len(s->f[j].final));
        if (done && !same) sync_dir(s->f[j].final);
    }
    for (int j = 0; j < s->n; ++j) drop(s, j, j >= i);
    s->n = 0;
    return st;
}

/* ------------------------------------------------------------ public API */

static size_t dir_of(const char *p, char *buf, size_t len)
{
    size_t n = dir_len(p);
    if (n == 0) return (size_t)snprintf(buf, len, ".");
    return (size_t)snprintf(buf, len, "%.*s", (int)n, p);
}

tf_status tf_output_check(const char *path, int *to_stdout)
{
    if (to_stdout) *to_stdout = 0;
    if (!path) return tf_fail(TF_ERR_ARG, "tf_output_check: path is NULL");
    tf_out_target t;
    TF_TRY(tf_out_resolve(path, &t));
    tf_status s = TF_OK;
    if (t.kind == TF_OUT_FD) {
        int fl = fcntl(t.fd, F_GETFL);
        if (fl < 0) s = tf_fail(TF_ERR_IO, "%s: cannot write there: %s", path, strerror(errno));
        else if ((fl & O_ACCMODE) == O_RDONLY)
            s = tf_fail(TF_ERR_IO, "%s: cannot write there: descriptor %d is open for reading only",
                        path, t.fd);
        else if (to_stdout) *to_stdout = t.fd == 1;
    } else if (t.kind == TF_OUT_DEVICE) {
        if (access(t.path, W_OK) != 0)
            s = tf_fail(TF_ERR_IO, "%s: cannot write there: %s", path, strerror(errno));
    } else {
        char *tmp;
        int slot, fd = tf_out_temp_create(&t, &tmp, &slot);
        if (fd < 0) {
            int err = errno;
            char dir[REG_PATH];
            dir_of(t.path, dir, sizeof dir);
            s = tf_fail(TF_ERR_IO, "%s: cannot write there: %s (writing %s)", dir, strerror(err), path);
        } else {
            close(fd);
            unlink(tmp);
            tf_out_temp_release(slot);
            free(tmp);
        }
    }
    tf_out_target_free(&t);
    return s;
}
