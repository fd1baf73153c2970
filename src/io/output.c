/* SPDX-License-Identifier: BSD-3-Clause */
/* Output targets, the registry of live temporary files, sets of files
 * renamed together, and the public tf_output_* / tf_path_id_* calls. */
#include "io/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

#define MAX_LINKS 40
#define REG_SLOTS 96
#define REG_GROUPS 16
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

/* Static storage only: tf_output_cleanup reads it from a signal handler.
 *
 * A slot is a temporary (renamed into place on commit, removed otherwise),
 * a drop (a file removed by a set's commit) or a lock file (removed by the
 * cleanup after everything else). The slots of one tf_out_set share a
 * group; the group's state is the one decision between the thread that
 * commits the set and a signal handler: the commit CASes OPEN ->
 * COMMITTING and only then touches a file; the handler CASes OPEN ->
 * ABORTED (and then removes the temporaries) or, finding COMMITTING,
 * finishes the commit itself in the same order (head, drops, files). */
enum { SLOT_FREE = 0, SLOT_CLAIMED, SLOT_LIVE, SLOT_COMMITTING };
enum { KIND_TEMP = 0, KIND_DROP, KIND_LOCK };
enum { STEP_HEAD = 0, STEP_DROP, STEP_FILE };
enum { GROUP_FREE = 0, GROUP_OPEN, GROUP_COMMITTING, GROUP_ABORTED };

static struct {
    int state, kind, group, step;
    char tmp[REG_PATH];   /* TEMP: the temporary; DROP: the file to remove; LOCK: the lock */
    char final[REG_PATH]; /* TEMP: where it goes */
} reg[REG_SLOTS];
static int groups[REG_GROUPS];

static unsigned tmp_counter;

void (*tf_out_test_commit_step)(int step);

#define LOAD(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define STORE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELEASE)

static int cas(int *p, int from, int to)
{
    return __atomic_compare_exchange_n(p, &from, to, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static int reg_claim(const char *path, int kind)
{
    size_t n = strlen(path);
    if (n >= REG_PATH) return -1;
    for (int i = 0; i < REG_SLOTS; ++i) {
        if (!cas(&reg[i].state, SLOT_FREE, SLOT_CLAIMED)) continue;
        memcpy(reg[i].tmp, path, n + 1);
        reg[i].final[0] = '\0';
        STORE(reg[i].kind, kind);
        STORE(reg[i].group, -1);
        STORE(reg[i].step, STEP_FILE);
        STORE(reg[i].state, SLOT_LIVE);
        return i;
    }
    return -1; /* full: the file works, a signal just leaves it behind */
}

void tf_out_temp_release(int slot)
{
    if (slot >= 0 && slot < REG_SLOTS) STORE(reg[slot].state, SLOT_FREE);
}

void tf_out_temp_committing(int slot, const char *final)
{
    if (slot < 0 || slot >= REG_SLOTS) return;
    size_t n = strlen(final);
    if (n >= REG_PATH) return; /* stays LIVE: a signal removes it instead */
    memcpy(reg[slot].final, final, n + 1);
    STORE(reg[slot].state, SLOT_COMMITTING);
}

int tf_out_temp_live(void)
{
    int n = 0;
    for (int i = 0; i < REG_SLOTS; ++i) n += LOAD(reg[i].state) != SLOT_FREE;
    return n;
}

int tf_out_reg_lock(const char *path) { return reg_claim(path, KIND_LOCK); }

static int group_state(int g) { return g >= 0 && g < REG_GROUPS ? LOAD(groups[g]) : GROUP_FREE; }

int tf_output_cleanup(void)
{
    /* Async-signal-safe: atomics, rename and unlink only. */
    const int saved_errno = errno;
    int finished = 0, removed = 0;
    for (int g = 0; g < REG_GROUPS; ++g) (void)cas(&groups[g], GROUP_OPEN, GROUP_ABORTED);
    /* sets whose commit began: finished, in the commit's order */
    for (int g = 0; g < REG_GROUPS; ++g) {
        if (group_state(g) != GROUP_COMMITTING) continue;
        int ok = 1;
        for (int step = STEP_HEAD; step <= STEP_FILE; ++step)
            for (int i = 0; i < REG_SLOTS; ++i) {
                const int s = LOAD(reg[i].state);
                if ((s != SLOT_LIVE && s != SLOT_COMMITTING) || LOAD(reg[i].group) != g ||
                    LOAD(reg[i].step) != step)
                    continue;
                const int kind = LOAD(reg[i].kind);
                if (kind == KIND_TEMP) {
                    if (!ok) {
                        unlink(reg[i].tmp);
                        removed = 1;
                    } else if (rename(reg[i].tmp, reg[i].final) != 0 && errno != ENOENT && step == STEP_HEAD) {
                        ok = 0; /* the head cannot go in: nothing is switched, all is removed */
                        unlink(reg[i].tmp);
                        removed = 1;
                    }
                } else if (kind == KIND_DROP && ok) {
                    unlink(reg[i].tmp);
                } else if (kind == KIND_LOCK) {
                    continue;
                }
                STORE(reg[i].state, SLOT_FREE);
            }
        finished |= ok;
    }
    /* the rest: live temporaries removed, a lone one being renamed finished */
    for (int i = 0; i < REG_SLOTS; ++i) {
        const int s = LOAD(reg[i].state);
        if (s != SLOT_LIVE && s != SLOT_COMMITTING) continue;
        const int kind = LOAD(reg[i].kind);
        if (kind == KIND_LOCK) continue;
        if (kind == KIND_TEMP) {
            if (s == SLOT_COMMITTING) {
                rename(reg[i].tmp, reg[i].final);
                finished = 1;
            } else {
                unlink(reg[i].tmp);
                removed = 1;
            }
        }
        STORE(reg[i].state, SLOT_FREE);
    }
    /* lock files last: the outputs are settled when the next writer comes */
    for (int i = 0; i < REG_SLOTS; ++i)
        if (LOAD(reg[i].state) == SLOT_LIVE && LOAD(reg[i].kind) == KIND_LOCK) {
            unlink(reg[i].tmp);
            STORE(reg[i].state, SLOT_FREE);
        }
    errno = saved_errno;
    return finished && !removed;
}

/* ------------------------------------------------------ temporary names */

/* Length of the directory part of p ("" -> "."), without the last slash
 * (but "/" for "/x"). */
static size_t dir_len(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? (size_t)(slash - p) + (slash == p) : 0;
}

/* Offset of the file name in p. */
static size_t base_off(const char *p)
{
    const char *slash = strrchr(p, '/');
    return slash ? (size_t)(slash - p) + 1 : 0;
}

static uint32_t fnv1a(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) h = (h ^ *p) * 16777619u;
    return h;
}

/* The longest file name the directory of p takes (255 when unknown). */
static size_t name_max(const char *p)
{
    char dir[REG_PATH];
    size_t n = dir_len(p);
    if (n >= sizeof dir) return 255;
    if (n) memcpy(dir, p, n);
    else dir[n++] = '.';
    dir[n] = '\0';
    long m = pathconf(dir, _PC_NAME_MAX);
    return m >= 32 && m < REG_PATH ? (size_t)m : 255;
}

int tf_out_temp_name(const char *final, long pid, unsigned n, char *buf, size_t len)
{
    const size_t d = base_off(final);
    const char *base = final + d;
    char suffix[48];
    const size_t sl = (size_t)snprintf(suffix, sizeof suffix, ".tmp.%ld.%u", pid, n);
    const size_t bl = strlen(base), nm = name_max(final);
    int r;
    if (bl + sl <= nm) {
        r = snprintf(buf, len, "%.*s%s%s", (int)d, final, base, suffix);
    } else { /* "<prefix>~<hash>.tmp.<pid>.<n>" within NAME_MAX */
        size_t keep = nm > sl + 10 ? nm - sl - 9 : 1;
        if (keep > bl) keep = bl;
        while (keep > 1 && ((unsigned char)base[keep] & 0xC0) == 0x80) --keep; /* whole UTF-8 characters */
        r = snprintf(buf, len, "%.*s%.*s~%08x%s", (int)d, final, (int)keep, base, (unsigned)fnv1a(base), suffix);
    }
    return r < 0 || (size_t)r >= len ? -1 : r;
}

/* p is "<digits>.<digits>" and nothing more. */
static int pid_n_tail(const char *p)
{
    for (int part = 0; part < 2; ++part) {
        if (*p < '0' || *p > '9') return 0;
        while (*p >= '0' && *p <= '9') ++p;
        if (part == 0 && *p++ != '.') return 0;
    }
    return *p == '\0';
}

int tf_out_temp_matches(const char *tmp_base, const char *final_base)
{
    const size_t fl = strlen(final_base);
    if (!strncmp(tmp_base, final_base, fl) && !strncmp(tmp_base + fl, ".tmp.", 5) && pid_n_tail(tmp_base + fl + 5))
        return 1;
    char mark[24];
    const int ml = snprintf(mark, sizeof mark, "~%08x.tmp.", (unsigned)fnv1a(final_base));
    for (const char *m = strstr(tmp_base, mark); m; m = strstr(m + 1, mark)) {
        const size_t k = (size_t)(m - tmp_base);
        if (k >= 1 && k <= fl && !strncmp(tmp_base, final_base, k) && pid_n_tail(m + ml)) return 1;
    }
    return 0;
}

char *tf_out_enc(const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p) n += *p <= ' ' || *p == 0x7f || *p == '%' ? 3 : 1;
    char *out = malloc(n + 1), *q = out;
    if (!out) return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p)
        if (*p <= ' ' || *p == 0x7f || *p == '%') q += sprintf(q, "%%%02X", *p);
        else *q++ = (char)*p;
    *q = '\0';
    return out;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int tf_out_dec(char *s)
{
    char *q = s;
    for (char *p = s; *p; ++p) {
        if (*p != '%') { *q++ = *p; continue; }
        const int hi = hexval(p[1]), lo = hi < 0 ? -1 : hexval(p[2]);
        if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) return -1;
        *q++ = (char)(hi * 16 + lo);
        p += 2;
    }
    *q = '\0';
    return 0;
}

/* "temp <absolute temporary> <final's name>" appended to the journal. */
static void journal_temp(int fd, const char *tmp, const char *final)
{
    char dir[REG_PATH], abs[PATH_MAX];
    size_t n = dir_len(tmp);
    if (n >= sizeof dir) return;
    if (n) memcpy(dir, tmp, n);
    else dir[n++] = '.';
    dir[n] = '\0';
    char *full = NULL;
    if (realpath(dir, abs)) {
        size_t al = strlen(abs), bl = strlen(tmp + base_off(tmp));
        full = malloc(al + bl + 2);
        if (full) snprintf(full, al + bl + 2, "%s%s%s", abs, al && abs[al - 1] == '/' ? "" : "/", tmp + base_off(tmp));
    }
    char *a = tf_out_enc(full ? full : tmp), *b = tf_out_enc(final + base_off(final));
    free(full);
    if (a && b) {
        size_t len = strlen(a) + strlen(b) + 8;
        char *line = malloc(len);
        if (line) {
            int k = snprintf(line, len, "temp %s %s\n", a, b);
            if (k > 0) (void)!write(fd, line, (size_t)k); /* O_APPEND: one record per write */
            free(line);
        }
    }
    free(a);
    free(b);
}

void tf_out_temp_avoid(const char *tmp_base)
{
    const char *p = strstr(tmp_base, ".tmp."), *last = NULL;
    for (; p; p = strstr(p + 1, ".tmp.")) last = p;
    if (!last || !pid_n_tail(last + 5)) return;
    char *end;
    const long pid = strtol(last + 5, &end, 10);
    const unsigned long n = strtoul(end + 1, NULL, 10);
    if (pid != (long)getpid() || n >= 0xFFFFFFF0ul) return;
    unsigned cur = __atomic_load_n(&tmp_counter, __ATOMIC_RELAXED);
    while (cur <= n && !__atomic_compare_exchange_n(&tmp_counter, &cur, (unsigned)n + 1, 0, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)) {
    }
}

int tf_out_temp_create(const tf_out_target *t, int journal_fd, char **tmp, int *slot)
{
    *tmp = NULL;
    *slot = -1;
    size_t n = strlen(t->path) + 64;
    char *p = malloc(n);
    if (!p) {
        errno = ENOMEM;
        return -1;
    }
    int fd = -1, err = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
        unsigned id = __atomic_fetch_add(&tmp_counter, 1, __ATOMIC_RELAXED);
        if (tf_out_temp_name(t->path, (long)getpid(), id, p, n) < 0) {
            err = ENAMETOOLONG;
            break;
        }
        if (journal_fd >= 0) journal_temp(journal_fd, p, t->path); /* before the file exists */
        *slot = reg_claim(p, KIND_TEMP); /* before the file exists: a signal never misses it */
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

void tf_out_set_init(tf_out_set *s)
{
    memset(s, 0, sizeof *s);
    s->head = -1;
    s->group = -1;
    s->journal_fd = -1;
}

static int group_claim(tf_out_set *s)
{
    if (s->group >= 0) return s->group;
    for (int g = 0; g < REG_GROUPS; ++g)
        if (cas(&groups[g], GROUP_FREE, GROUP_OPEN)) return s->group = g;
    return -1; /* none free: each file is finished or removed on its own, as a lone temporary */
}

static void group_release(tf_out_set *s)
{
    if (s->group >= 0) STORE(groups[s->group], GROUP_FREE);
    s->group = -1;
}

static void drop_file(tf_out_set *s, int i, int remove)
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
    const int g = group_claim(s);
    if (slot >= 0 && g >= 0) {
        size_t n = strlen(final);
        if (n < REG_PATH) {
            memcpy(reg[slot].final, final, n + 1);
            STORE(reg[slot].step, STEP_FILE);
            STORE(reg[slot].group, g);
        }
    }
    s->f[s->n].tmp = tmp;
    s->f[s->n].final = final;
    s->f[s->n].name = name;
    s->f[s->n].slot = slot;
    ++s->n;
    return TF_OK;
}

void tf_out_set_head_last(tf_out_set *s)
{
    if (s->n == 0) return;
    s->head = s->n - 1;
    const int slot = s->f[s->head].slot;
    if (slot >= 0) STORE(reg[slot].step, STEP_HEAD);
}

tf_status tf_out_set_drop(tf_out_set *s, const char *path)
{
    if (s->ndrop == TF_OUT_SET_MAX) return tf_fail(TF_ERR_ARG, "%s: too many files in one output set", path);
    char *p = strdup(path);
    if (!p) return tf_fail(TF_ERR_NOMEM, "out of memory");
    const int g = group_claim(s);
    int slot = g >= 0 ? reg_claim(p, KIND_DROP) : -1;
    if (slot >= 0) {
        STORE(reg[slot].step, STEP_DROP);
        STORE(reg[slot].group, g);
    }
    s->drop[s->ndrop].path = p;
    s->drop[s->ndrop].slot = slot;
    ++s->ndrop;
    return TF_OK;
}

static void free_drops(tf_out_set *s)
{
    for (int i = 0; i < s->ndrop; ++i) {
        tf_out_temp_release(s->drop[i].slot);
        free(s->drop[i].path);
    }
    s->ndrop = 0;
}

void tf_out_set_abort(tf_out_set *s)
{
    if (s->group >= 0) STORE(groups[s->group], GROUP_ABORTED); /* a signal now removes, never commits */
    for (int i = 0; i < s->n; ++i) drop_file(s, i, 1);
    s->n = 0;
    s->head = -1;
    free_drops(s);
    group_release(s);
}

void tf_out_sync_dir(const char *file)
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

/* fsyncs each directory of the paths (tmp or final of the entries) once. */
static void sync_dirs(const tf_out_set *s, int finals, const int *done)
{
    for (int j = 0; j < s->n; ++j) {
        if (done && !done[j]) continue;
        const char *pj = finals ? s->f[j].final : s->f[j].tmp;
        int seen = 0;
        for (int k = 0; k < j && !seen; ++k) {
            if (done && !done[k]) continue;
            const char *pk = finals ? s->f[k].final : s->f[k].tmp;
            seen = dir_len(pk) == dir_len(pj) && !strncmp(pk, pj, dir_len(pj));
        }
        if (!seen) tf_out_sync_dir(pj);
    }
}

static void step_hook(int *step)
{
    if (tf_out_test_commit_step) tf_out_test_commit_step(*step);
    ++*step;
}

tf_status tf_out_set_commit(tf_out_set *s)
{
    if (s->n == 0) {
        free_drops(s);
        group_release(s);
        return TF_OK;
    }
    /* the temporaries' names reach the disk before the head names them */
    if (s->head >= 0) sync_dirs(s, 0, NULL);
    const int g = s->group;
    if (g >= 0) {
        if (!cas(&groups[g], GROUP_OPEN, GROUP_COMMITTING)) { /* a signal handler came first */
            tf_status st = tf_fail(TF_ERR_IO, "%s: interrupted before the files were switched", s->f[0].name);
            tf_out_set_abort(s);
            return st;
        }
    } else {
        for (int i = 0; i < s->n; ++i) tf_out_temp_committing(s->f[i].slot, s->f[i].final);
    }
    int done[TF_OUT_SET_MAX] = {0}, step = 0;
    tf_status st = TF_OK;
    if (s->head >= 0) { /* the commit point */
        const int h = s->head;
        step_hook(&step);
        if (rename(s->f[h].tmp, s->f[h].final) != 0 && errno != ENOENT) {
            st = tf_fail(TF_ERR_IO, "%s: cannot rename the temporary file into place: %s", s->f[h].name,
                         strerror(errno));
            tf_out_set_abort(s);
            return st;
        }
        done[h] = 1;
        for (int i = 0; i < s->ndrop; ++i) {
            step_hook(&step);
            (void)unlink(s->drop[i].path); /* best effort: the head no longer names it */
        }
    }
    int stop = 0;
    for (int i = 0; i < s->n && !stop; ++i) {
        if (done[i]) continue;
        step_hook(&step);
        if (rename(s->f[i].tmp, s->f[i].final) == 0 || errno == ENOENT) { /* ENOENT: a handler did it */
            done[i] = 1;
            continue;
        }
        if (st == TF_OK)
            st = tf_fail(TF_ERR_IO, "%s: cannot rename the temporary file into place: %s%s", s->f[i].name,
                         strerror(errno),
                         s->head >= 0 ? " (the set is switched: its readers read the temporary; the next "
                                        "write of the set finishes the switch)"
                                      : "");
        if (s->head < 0) stop = 1; /* no head: the rest stays as it was */
    }
    sync_dirs(s, 1, done);
    for (int j = 0; j < s->n; ++j) {
        if (!done[j] && s->head >= 0) { /* switched: the head names this temporary, it stays */
            tf_out_temp_release(s->f[j].slot);
            free(s->f[j].tmp), free(s->f[j].final), free(s->f[j].name);
        } else {
            drop_file(s, j, !done[j]);
        }
    }
    s->n = 0;
    s->head = -1;
    free_drops(s);
    group_release(s);
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
    } else if (strlen(t.path + base_off(t.path)) > name_max(t.path)) {
        s = tf_fail(TF_ERR_IO, "%s: cannot write there: %s", path, strerror(ENAMETOOLONG));
    } else {
        char *tmp;
        int slot, fd = tf_out_temp_create(&t, -1, &tmp, &slot);
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

/* ---------------------------------------------------------- path identity */

static void id_of_stat(const struct stat *st, tf_path_id *id)
{
    if (S_ISCHR(st->st_mode)) return; /* /dev/null, a terminal: never clobbered */
    id->kind = 1;
    id->dev = (unsigned long long)st->st_dev;
    id->ino = (unsigned long long)st->st_ino;
}

void tf_path_id_get(const char *path, int output, tf_path_id *id)
{
    if (!id) return; /* nothing to fill (a void call: NULL is a no-op) */
    memset(id, 0, sizeof *id);
    if (!path || !*path) return;
    struct stat st;
    if (!output) {
        if (!strcmp(path, "-") ? fstat(0, &st) == 0 : stat(path, &st) == 0) id_of_stat(&st, id);
        return;
    }
    tf_out_target t;
    if (tf_out_resolve(path, &t) != TF_OK) {
        tf_clear_error(); /* the output's own check says what is wrong */
        return;
    }
    if (t.kind == TF_OUT_FD) {
        if (fstat(t.fd, &st) == 0) id_of_stat(&st, id);
    } else if (t.kind == TF_OUT_DEVICE || t.exists) {
        if (stat(t.path, &st) == 0) id_of_stat(&st, id);
    } else { /* a new name: its directory and the name */
        char dir[REG_PATH];
        const char *base = t.path + base_off(t.path);
        dir_of(t.path, dir, sizeof dir);
        if (strlen(base) < sizeof id->name && stat(dir, &st) == 0) {
            id->kind = 2;
            id->dev = (unsigned long long)st.st_dev;
            id->ino = (unsigned long long)st.st_ino;
            memcpy(id->name, base, strlen(base) + 1);
        }
    }
    tf_out_target_free(&t);
}

int tf_path_id_same(const tf_path_id *a, const tf_path_id *b)
{
    if (!a || !b) return 0;
    return a->kind && a->kind == b->kind && a->dev == b->dev && a->ino == b->ino &&
           (a->kind != 2 || !strcmp(a->name, b->name));
}
