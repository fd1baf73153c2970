/* SPDX-License-Identifier: BSD-3-Clause */
/* Factor sets: STEM.mode<N>.mat, STEM.lambda.mat, STEM.ktensor switched in
 * one step.
 *
 * Why a manifest: the files people and other tools read are the plain
 * STEM.mode<N>.mat (pyttb, Matlab, SPLATT read them by name), so they stay
 * regular files under their names. Several renames can never be one atomic
 * step, so the switch is one more file, STEM.set, written last: it names
 * the temporaries that hold the new files, and its rename is the commit.
 * After it the temporaries are renamed over the files one by one; a reader
 * that goes through the manifest reads a named temporary while it exists,
 * the file once it has been renamed, and so sees the new set whole from the
 * commit on -- also when the writer was killed between two renames -- and
 * the old one whole before it (the old files are not touched before the
 * commit). A reader reads the manifest again at the end and starts over
 * when it changed (a later switch began meanwhile).
 *
 * Why not one directory per generation behind a symlink switched with one
 * rename: the visible files would become symlinks into a hidden directory,
 * and `mv run1.* elsewhere/` or `tar c run1.*` -- what people do with a
 * set -- would carry links that dangle. With the manifest the set is just
 * its files plus STEM.set, and copying them together keeps it whole.
 *
 * The lock: STEM.lock, an flock held by the writer from tf_ktensor_out_open
 * to the end of the commit (the CLI opens before computing, so a second
 * run fails before its work). The protocol removes the file when done: the
 * holder unlinks it before closing; a taker checks after flock that the
 * path still names the file it locked, and otherwise starts over. Before
 * it creates a temporary, the writer appends its name to the lock file (the
 * journal): the next writer of the stem, holding the lock, first finishes a
 * switch the manifest says was begun (rolls it forward), then removes the
 * temporaries the journal names that still exist -- only names of our own
 * temporary pattern for the file recorded with it.
 *
 * Manifest lines (paths tf_out_enc'oded; a path without '/' is relative to
 * the stem's directory):
 *   tenfold-factor-set 1
 *   generation <seconds>.<nanoseconds>-<pid>-<n>
 *   file <suffix> <final> <temporary>   (suffix: mode<N>.mat, lambda.mat, ktensor, core.tensor)
 *   extra <final> <temporary>           (a file switched with the set: the report)
 *   drop <suffix>                       (a file of the previous set removed)
 *   end */
#include "io/factor_set.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/check_args.h"
#include "core/error.h"
#include "io/input.h"
#include "io/matrix_parse.h"
#include "io/writer.h"

#define MANIFEST_MAGIC "tenfold-factor-set 1"
#define MAX_ENTRIES (TF_MAX_ORDER + 8)
#define READ_ATTEMPTS 50
#define SET_TTENSOR 0x100u /* tf_ktensor_out flags: a Tucker tensor's set */

/* ------------------------------------------------------------- helpers */

static char *strf(const char *fmt, ...) TF_PRINTF(1, 2);
static char *strf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return NULL;
    char *p = malloc((size_t)n + 1);
    if (!p) return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

static const char *base_of(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* A growing text. */
typedef struct text {
    char *p;
    size_t len, cap;
    int bad;
} text;

static void put(text *t, const char *fmt, ...) TF_PRINTF(2, 3);
static void put(text *t, const char *fmt, ...)
{
    if (t->bad) return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) { t->bad = 1; return; }
    if (t->len + (size_t)n + 1 > t->cap) {
        size_t cap = (t->cap ? 2 * t->cap : 1024) + (size_t)n;
        char *q = realloc(t->p, cap);
        if (!q) { t->bad = 1; return; }
        t->p = q;
        t->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(t->p + t->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    t->len += (size_t)n;
}

/* Reads a small file whole (NUL-terminated). *missing = 1 and TF_OK when it
 * does not exist. */
static tf_status load_small(const char *path, char **out, size_t *len, int *missing)
{
    *out = NULL;
    *len = 0;
    *missing = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) { *missing = 1; return TF_OK; }
        return tf_fail(TF_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    }
    text t = {0};
    char buf[4096];
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            int err = errno;
            close(fd);
            free(t.p);
            return tf_fail(TF_ERR_IO, "%s: cannot read: %s", path, strerror(err));
        }
        if (n == 0) break;
        put(&t, "%.*s", (int)n, buf);
        if (memchr(buf, '\0', (size_t)n)) t.bad = 2;
    }
    close(fd);
    if (t.bad == 1) { free(t.p); return tf_fail(TF_ERR_NOMEM, "out of memory reading %s", path); }
    if (!t.p && !(t.p = calloc(1, 1))) return tf_fail(TF_ERR_NOMEM, "out of memory reading %s", path);
    *out = t.p;
    *len = t.bad == 2 ? (size_t)-1 : t.len; /* a NUL byte: not a text of ours */
    return TF_OK;
}

/* mode<N>.mat (N = 1..TF_MAX_ORDER): N; lambda.mat: -1; ktensor: -2; a
 * Tucker set's core.tensor: -3; else 0. */
static int suffix_kind(const char *s)
{
    if (!strcmp(s, "lambda.mat")) return -1;
    if (!strcmp(s, "ktensor")) return -2;
    if (!strcmp(s, "core.tensor")) return -3;
    unsigned n = 0;
    int used = 0;
    if (sscanf(s, "mode%u.mat%n", &n, &used) == 1 && (size_t)used == strlen(s) && n >= 1 && n <= TF_MAX_ORDER &&
        s[4] != '0' && s[4] != '+')
        return (int)n;
    return 0;
}

/* ------------------------------------------------------------ manifest */

typedef struct entry {
    char *suffix; /* file: the suffix; extra: NULL */
    char *final, *tmp; /* as written in the manifest (decoded) */
} entry;

typedef struct manifest {
    char *buf; /* the text, cut into the fields below */
    int n;
    entry e[MAX_ENTRIES];
    int ndrop;
    char *drop[MAX_ENTRIES];
} manifest;

/* Parses text (modified in place; m points into it). */
static tf_status parse_manifest(const char *path, char *textp, size_t len, manifest *m)
{
    memset(m, 0, sizeof *m);
    m->buf = textp;
    int line_no = 0, ended = 0, magic = 0;
    if (len == (size_t)-1) return tf_fail(TF_ERR_PARSE, "%s: not a tenfold factor set manifest", path);
    for (char *line = textp, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = '\0';
        ++line_no;
        if (line[0] == '#' || !line[0]) continue;
        char *f[5] = {0};
        int nf = 0;
        for (char *tok = strtok(line, " "); tok && nf < 5; tok = strtok(NULL, " ")) f[nf++] = tok;
        int ok = 1;
        if (!magic) {
            ok = nf == 2 && !strcmp(f[0], "tenfold-factor-set") && !strcmp(f[1], "1");
            magic = ok;
        } else if (ended) {
            ok = 0;
        } else if (!strcmp(f[0], "generation")) {
            ok = nf == 2;
        } else if (!strcmp(f[0], "file") || !strcmp(f[0], "extra")) {
            const int file = f[0][0] == 'f';
            ok = nf == (file ? 4 : 3) && m->n < MAX_ENTRIES;
            if (ok) {
                entry *e = &m->e[m->n++];
                e->suffix = file ? f[1] : NULL;
                e->final = f[file ? 2 : 1];
                e->tmp = f[file ? 3 : 2];
                ok = (!file || suffix_kind(e->suffix)) && !tf_out_dec(e->final) && !tf_out_dec(e->tmp) &&
                     *e->final && *e->tmp;
            }
        } else if (!strcmp(f[0], "drop")) {
            ok = nf == 2 && m->ndrop < MAX_ENTRIES && suffix_kind(f[1]);
            if (ok) m->drop[m->ndrop++] = f[1];
        } else if (!strcmp(f[0], "end")) {
            ok = nf == 1;
            ended = 1;
        } else {
            ok = 0;
        }
        if (!ok) {
            return magic ? tf_fail(TF_ERR_PARSE, "%s:%d: not a line of a tenfold factor set manifest", path, line_no)
                         : tf_fail(TF_ERR_PARSE, "%s: not a tenfold factor set manifest (no '" MANIFEST_MAGIC
                                   "' line)", path);
        }
    }
    if (!magic) return tf_fail(TF_ERR_PARSE, "%s: not a tenfold factor set manifest", path);
    if (!ended) return tf_fail(TF_ERR_PARSE, "%s: the manifest is cut short (no 'end' line)", path);
    return TF_OK;
}

/* A manifest path as a path to open: relative ones are in the stem's
 * directory (dirp: "" or "dir/"). NULL: out of memory or not a path of
 * ours ("dir/x" relative). */
static char *mpath(const char *dirp, const char *p)
{
    if (p[0] == '/') return strdup(p);
    if (strchr(p, '/')) return NULL;
    return strf("%s%s", dirp, p);
}

/* How a path is written in the manifest: its name when it is in the stem's
 * directory, else absolute (the directory's realpath). */
static char *mname(const char *dirp, const char *p)
{
    const size_t dl = strlen(dirp);
    char *plain = NULL;
    if (!strncmp(p, dirp, dl) && !strchr(p + dl, '/')) {
        plain = strdup(p + dl);
    } else if (p[0] == '/') {
        plain = strdup(p);
    } else {
        const char *b = base_of(p);
        char *dir = b == p ? strdup(".") : strf("%.*s", (int)(b - p), p);
        char abs[PATH_MAX];
        if (dir && realpath(dir, abs)) plain = strf("%s%s%s", abs, abs[strlen(abs) - 1] == '/' ? "" : "/", b);
        free(dir);
    }
    if (!plain) return NULL;
    char *e = tf_out_enc(plain);
    free(plain);
    return e;
}

/* ------------------------------------------------------------ the writer */

struct tf_ktensor_out {
    char *stem;
    char *dirp;           /* the stem's directory with its slash ("" for none) */
    unsigned flags;
    char *lock_path, *set_path;
    int lock_fd, lock_slot;
    char *old;            /* the previous manifest's text (for drops); NULL: none */
    tf_out_set set;
    int nfiles;           /* set entries 0..nfiles-1: the factor files */
    char *suffix[MAX_ENTRIES];
    int put;
};

static void lock_release(tf_ktensor_out *o)
{
    if (o->lock_fd < 0) return;
    unlink(o->lock_path); /* while held: a taker that opened it sees it is gone */
    tf_out_temp_release(o->lock_slot);
    o->lock_slot = -1;
    close(o->lock_fd);
    o->lock_fd = -1;
}

static void out_free(tf_ktensor_out *o)
{
    if (!o) return;
    tf_out_set_abort(&o->set);
    lock_release(o);
    for (int i = 0; i < MAX_ENTRIES; ++i) free(o->suffix[i]);
    free(o->old);
    free(o->stem);
    free(o->dirp);
    free(o->lock_path);
    free(o->set_path);
    free(o);
}

static tf_status lock_take(tf_ktensor_out *o, char **journal, size_t *jlen)
{
    for (int tries = 0; tries < 20; ++tries) {
        int fd = open(o->lock_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0666);
        if (fd < 0)
            return tf_fail(TF_ERR_IO, "%s: cannot create the lock file %s: %s", o->stem, o->lock_path,
                           strerror(errno));
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            const int err = errno;
            char buf[64] = {0};
            long pid = 0;
            if (pread(fd, buf, sizeof buf - 1, 0) > 0) (void)sscanf(buf, "pid %ld", &pid);
            close(fd);
            if (err == EWOULDBLOCK && pid > 0)
                return tf_fail(TF_ERR_IO, "%s: another tenfold run is writing this factor set (pid %ld)", o->stem,
                               pid);
            if (err == EWOULDBLOCK)
                return tf_fail(TF_ERR_IO, "%s: another tenfold run is writing this factor set", o->stem);
            return tf_fail(TF_ERR_IO, "%s: cannot lock %s: %s", o->stem, o->lock_path, strerror(err));
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && stat(o->lock_path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
            o->lock_fd = fd;
            o->lock_slot = tf_out_reg_lock(o->lock_path);
            int missing;
            tf_status s = load_small(o->lock_path, journal, jlen, &missing);
            if (s == TF_OK && *jlen && (*jlen == (size_t)-1 || strncmp(*journal, "pid ", 4) != 0)) {
                free(*journal);
                *journal = NULL;
                o->lock_slot = (tf_out_temp_release(o->lock_slot), -1);
                close(fd);
                o->lock_fd = -1; /* not ours: left as it is */
                return tf_fail(TF_ERR_IO, "%s: exists and is not a tenfold lock file (remove it or choose another "
                               "stem)", o->lock_path);
            }
            return s;
        }
        close(fd); /* its holder removed it as we opened it: take the new one */
    }
    return tf_fail(TF_ERR_IO, "%s: cannot take the lock %s (it keeps changing)", o->stem, o->lock_path);
}

/* The visible file of suffix: <stem>.<suffix>. */
static char *visible(const tf_ktensor_out *o, const char *suffix) { return strf("%s.%s", o->stem, suffix); }

/* A temporary named in a manifest or journal may be removed or renamed: its
 * name is one of ours for the file it goes to (so a damaged or foreign
 * manifest never moves other files). */
static int our_temp(const char *tmp, const char *final)
{
    return tf_out_temp_matches(base_of(tmp), base_of(final));
}

static int exists_file(const char *p)
{
    struct stat st;
    return lstat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* Finishes a switch the manifest says was begun (a temporary it names is
 * still there): drops, then renames, as the commit does. */
static tf_status roll_forward(tf_ktensor_out *o, manifest *m)
{
    char *tmp[MAX_ENTRIES] = {0}, *fin[MAX_ENTRIES] = {0};
    int pending = 0;
    tf_status s = TF_OK;
    for (int i = 0; i < m->n && s == TF_OK; ++i) {
        tmp[i] = mpath(o->dirp, m->e[i].tmp);
        fin[i] = mpath(o->dirp, m->e[i].final);
        if (!tmp[i] || !fin[i] || !our_temp(tmp[i], fin[i]) || !exists_file(tmp[i])) {
            free(tmp[i]), free(fin[i]);
            tmp[i] = fin[i] = NULL;
            continue;
        }
        if (m->e[i].suffix) { /* a factor file goes where <stem>.<suffix> leads now, nowhere else */
            char *v = visible(o, m->e[i].suffix);
            tf_path_id a, b;
            if (v) tf_path_id_get(v, 1, &a);
            tf_path_id_get(fin[i], 1, &b);
            const int same = v && tf_path_id_same(&a, &b);
            free(v);
            if (!same) {
                free(tmp[i]), free(fin[i]);
                tmp[i] = fin[i] = NULL;
                continue;
            }
        }
        pending = 1;
    }
    if (pending) {
        for (int d = 0; d < m->ndrop; ++d) {
            char *v = visible(o, m->drop[d]);
            if (v) (void)unlink(v);
            free(v);
        }
        for (int i = 0; i < m->n && s == TF_OK; ++i)
            if (tmp[i] && rename(tmp[i], fin[i]) != 0)
                s = tf_fail(TF_ERR_IO, "%s: cannot finish the interrupted switch of the set (%s -> %s): %s", o->stem,
                            tmp[i], fin[i], strerror(errno));
        for (int i = 0; i < m->n; ++i)
            if (fin[i]) tf_out_sync_dir(fin[i]);
    }
    for (int i = 0; i < m->n; ++i) free(tmp[i]), free(fin[i]);
    return s;
}

/* Removes the temporaries a killed writer recorded in the lock file. */
static void clean_journal(char *j)
{
    for (char *line = j, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (!next) break; /* a record cut short: the writer died writing it, before the file existed */
        *next++ = '\0';
        if (strncmp(line, "temp ", 5) != 0) continue;
        char *tmp = line + 5, *sp = strchr(tmp, ' ');
        if (!sp) continue;
        *sp = '\0';
        char *fin = sp + 1;
        if (tf_out_dec(tmp) || tf_out_dec(fin) || tmp[0] != '/' || strchr(fin, '/')) continue;
        if (tf_out_temp_matches(base_of(tmp), fin) && exists_file(tmp)) (void)unlink(tmp);
    }
}

static tf_status set_open(const char *stem, unsigned flags, tf_ktensor_out **out);

tf_status tf_ktensor_out_open(const char *stem, unsigned flags, tf_ktensor_out **out)
{
    TF_ARG_NOT_NULL("tf_ktensor_out_open", out);
    *out = NULL;
    if (!stem || !*stem) return tf_fail(TF_ERR_ARG, "no output stem given");
    if (!(flags & (TF_KTENSOR_SPLATT | TF_KTENSOR_TTB)) || (flags & ~(unsigned)TF_KTENSOR_ALL))
        return tf_fail(TF_ERR_ARG, "%s: flags 0x%x name no Kruskal tensor files", stem, flags);
    return set_open(stem, flags, out);
}

tf_status tf_ttensor_out_open(const char *stem, tf_ktensor_out **out)
{
    TF_ARG_NOT_NULL("tf_ttensor_out_open", out);
    *out = NULL;
    if (!stem || !*stem) return tf_fail(TF_ERR_ARG, "no output stem given");
    return set_open(stem, SET_TTENSOR, out);
}

static tf_status set_open(const char *stem, unsigned flags, tf_ktensor_out **out)
{
    const char *b = base_of(stem);
    if (!*b) return tf_fail(TF_ERR_ARG, "%s: the stem names a directory, not files in it", stem);
    tf_ktensor_out *o = calloc(1, sizeof *o);
    if (!o) return tf_fail(TF_ERR_NOMEM, "out of memory");
    tf_out_set_init(&o->set);
    o->lock_fd = o->lock_slot = -1;
    o->flags = flags;
    o->stem = strdup(stem);
    o->dirp = strf("%.*s", (int)(b - stem), stem);
    o->lock_path = strf("%s.lock", stem);
    o->set_path = strf("%s.set", stem);
    if (!o->stem || !o->dirp || !o->lock_path || !o->set_path) {
        out_free(o);
        return tf_fail(TF_ERR_NOMEM, "out of memory");
    }
    /* the places, before anything is taken or computed */
    const char *sfx[4] = {"mode1.mat", flags & TF_KTENSOR_SPLATT ? "lambda.mat" : NULL,
                          flags & TF_KTENSOR_TTB ? "ktensor" : flags & SET_TTENSOR ? "core.tensor" : NULL, "set"};
    tf_status s = TF_OK;
    for (int i = 0; i < 4 && s == TF_OK; ++i) {
        if (!sfx[i]) continue;
        char *p = visible(o, sfx[i]);
        if (!p) { s = tf_fail(TF_ERR_NOMEM, "out of memory"); break; }
        s = tf_output_check(p, NULL);
        tf_out_target t;
        if (s == TF_OK && tf_out_resolve(p, &t) == TF_OK) {
            if (t.kind != TF_OUT_FILE)
                s = tf_fail(TF_ERR_IO, "%s: a file of a factor set must be a regular file or a new name (the set is "
                            "switched by renaming), not a FIFO, device or descriptor", p);
            tf_out_target_free(&t);
        }
        free(p);
    }
    char *journal = NULL;
    size_t jlen = 0;
    if (s == TF_OK) s = lock_take(o, &journal, &jlen);
    /* the previous manifest: finish its switch if it was interrupted */
    if (s == TF_OK) {
        int missing;
        size_t len;
        s = load_small(o->set_path, &o->old, &len, &missing);
        if (s == TF_OK && !missing) {
            char *copy = len == (size_t)-1 ? NULL : strdup(o->old);
            manifest m;
            s = len != (size_t)-1 && !copy ? tf_fail(TF_ERR_NOMEM, "out of memory")
                                           : parse_manifest(o->set_path, copy, len, &m);
            if (s != TF_OK && s != TF_ERR_NOMEM) {
                char msg[512];
                snprintf(msg, sizeof msg, "%s", tf_last_error());
                s = tf_fail(TF_ERR_IO, "%s (it would be replaced: remove it or choose another stem)", msg);
            }
            if (s == TF_OK) s = roll_forward(o, &m);
            for (int i = 0; s == TF_OK && i < m.n; ++i) tf_out_temp_avoid(base_of(m.e[i].tmp));
            free(copy);
        }
    }
    if (s == TF_OK && journal) clean_journal(journal);
    free(journal);
    if (s == TF_OK) { /* the journal starts again: our pid for a second writer's message */
        if (ftruncate(o->lock_fd, 0) != 0) s = tf_fail(TF_ERR_IO, "%s: %s", o->lock_path, strerror(errno));
        else dprintf(o->lock_fd, "pid %ld\n", (long)getpid());
        o->set.journal_fd = o->lock_fd;
    }
    if (s != TF_OK) {
        out_free(o);
        return s;
    }
    *out = o;
    return TF_OK;
}

tf_status tf_ktensor_out_put(tf_ktensor_out *o, const tf_ktensor *k)
{
    TF_ARG_NOT_NULL("tf_ktensor_out_put", o);
    TF_ARG_NOT_NULL("tf_ktensor_out_put", k);
    if (o->put) return tf_fail(TF_ERR_ARG, "%s: the factors were given already", o->stem);
    if (o->flags & SET_TTENSOR)
        return tf_fail(TF_ERR_ARG, "%s: a Tucker tensor's set (tf_ttensor_out_open) takes tf_ttensor_out_put", o->stem);
    TF_TRY(tf_ktensor_check(o->stem, k));
    const int before = o->set.n;
    if (before) return tf_fail(TF_ERR_ARG, "%s: give the factors before other files", o->stem);
    tf_status s = tf_ktensor_put_files(&o->set, o->stem, k, o->flags, 1);
    if (s != TF_OK) {
        tf_out_set_abort(&o->set);
        return s;
    }
    o->put = 1;
    o->nfiles = o->set.n;
    int i = 0;
    if (o->flags & TF_KTENSOR_SPLATT) {
        for (uint32_t m = 0; m < k->order; ++m) o->suffix[i++] = strf("mode%u.mat", m + 1);
        o->suffix[i++] = strdup("lambda.mat");
    }
    if (o->flags & TF_KTENSOR_TTB) o->suffix[i++] = strdup("ktensor");
    for (int j = 0; j < i; ++j)
        if (!o->suffix[j]) return tf_fail(TF_ERR_NOMEM, "out of memory");
    return TF_OK;
}

tf_status tf_ttensor_out_put(tf_ktensor_out *o, const tf_ttensor *t)
{
    TF_ARG_NOT_NULL("tf_ttensor_out_put", o);
    TF_ARG_NOT_NULL("tf_ttensor_out_put", t);
    if (o->put) return tf_fail(TF_ERR_ARG, "%s: the factors were given already", o->stem);
    if (!(o->flags & SET_TTENSOR))
        return tf_fail(TF_ERR_ARG, "%s: a Kruskal tensor's set (tf_ktensor_out_open) takes tf_ktensor_out_put", o->stem);
    TF_TRY(tf_ttensor_check(o->stem, t));
    if (o->set.n) return tf_fail(TF_ERR_ARG, "%s: give the factors before other files", o->stem);
    tf_status s = tf_ttensor_put_files(&o->set, o->stem, t, 1);
    if (s != TF_OK) {
        tf_out_set_abort(&o->set);
        return s;
    }
    o->put = 1;
    o->nfiles = o->set.n;
    int i = 0;
    for (uint32_t m = 0; m < t->order; ++m) o->suffix[i++] = strf("mode%u.mat", m + 1);
    o->suffix[i++] = strdup("core.tensor");
    for (int j = 0; j < i; ++j)
        if (!o->suffix[j]) return tf_fail(TF_ERR_NOMEM, "out of memory");
    return TF_OK;
}

tf_status tf_ttensor_write(const char *stem, const tf_ttensor *t)
{
    TF_ARG_NOT_NULL("tf_ttensor_write", stem);
    TF_ARG_NOT_NULL("tf_ttensor_write", t);
    TF_TRY(tf_ttensor_check(stem, t)); /* before any file is written */
    tf_ktensor_out *o;
    TF_TRY(tf_ttensor_out_open(stem, &o));
    tf_status s = tf_ttensor_out_put(o, t);
    if (s != TF_OK) {
        tf_ktensor_out_abort(o);
        return s;
    }
    return tf_ktensor_out_commit(o);
}

/* 1 when path is, or would be written as, a file of the set's names. */
static int names_set_file(const tf_ktensor_out *o, const tf_path_id *id)
{
    static const char *const fixed[] = {"lambda.mat", "ktensor", "set", "lock", "core.tensor"};
    for (int i = 0; i < TF_MAX_ORDER + 5; ++i) {
        char *p = i < TF_MAX_ORDER ? strf("%s.mode%d.mat", o->stem, i + 1) : visible(o, fixed[i - TF_MAX_ORDER]);
        tf_path_id other;
        if (p) tf_path_id_get(p, 1, &other);
        free(p);
        if (p && tf_path_id_same(id, &other)) return 1;
    }
    return 0;
}

tf_status tf_ktensor_out_add(tf_ktensor_out *o, const char *path, const void *data, size_t len)
{
    TF_ARG_NOT_NULL("tf_ktensor_out_add", o);
    if (len && !data) return tf_fail(TF_ERR_ARG, "tf_ktensor_out_add: data is NULL");
    if (!path || !*path) return tf_fail(TF_ERR_ARG, "no output file given");
    tf_out_target t;
    TF_TRY(tf_out_resolve(path, &t));
    const int direct = t.kind != TF_OUT_FILE;
    tf_out_target_free(&t);
    if (direct) return tf_write_file(path, data, len); /* now: before the switch */
    tf_path_id id;
    tf_path_id_get(path, 1, &id);
    if (names_set_file(o, &id))
        return tf_fail(TF_ERR_ARG, "%s: is a file of the factor set %s, written by the same switch", path, o->stem);
    for (int i = o->nfiles; i < o->set.n; ++i) {
        tf_path_id other;
        tf_path_id_get(o->set.f[i].name, 1, &other);
        if (tf_path_id_same(&id, &other))
            return tf_fail(TF_ERR_ARG, "%s: is already an output of this switch", path);
    }
    tf_writer w;
    TF_TRY(tf_writer_open_for(&w, path, &o->set, 1));
    tf_writer_put(&w, data, len);
    return tf_writer_finish(&w, &o->set);
}

tf_status tf_ktensor_out_commit(tf_ktensor_out *o)
{
    TF_ARG_NOT_NULL("tf_ktensor_out_commit", o);
    if (!o->put) {
        tf_status s = tf_fail(TF_ERR_ARG, "%s: no factors to write", o->stem);
        out_free(o);
        return s;
    }
    static unsigned gen_counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    text m = {0};
    put(&m, "# tenfold factor set %s: the files of this set (read them through this manifest to see the set\n"
            "# whole while it is replaced; see the tenfold README, \"Outputs\")\n" MANIFEST_MAGIC "\n"
            "generation %lld.%09ld-%ld-%u\n", base_of(o->stem), (long long)ts.tv_sec, (long)ts.tv_nsec,
        (long)getpid(), __atomic_fetch_add(&gen_counter, 1, __ATOMIC_RELAXED));
    for (int i = 0; i < o->set.n; ++i) {
        char *fin = mname(o->dirp, o->set.f[i].final), *tmp = mname(o->dirp, o->set.f[i].tmp);
        if (!fin || !tmp) m.bad = 1;
        else if (i < o->nfiles) put(&m, "file %s %s %s\n", o->suffix[i], fin, tmp);
        else put(&m, "extra %s %s\n", fin, tmp);
        free(fin), free(tmp);
    }
    /* files of the previous set that this one does not have */
    tf_status s = TF_OK;
    if (o->old) {
        char *copy = strdup(o->old);
        manifest old;
        if (copy && parse_manifest(o->set_path, copy, strlen(copy), &old) == TF_OK) {
            for (int i = 0; i < old.n && s == TF_OK; ++i) {
                if (!old.e[i].suffix) continue;
                int kept = 0;
                for (int j = 0; j < o->nfiles && !kept; ++j) kept = !strcmp(o->suffix[j], old.e[i].suffix);
                if (kept) continue;
                char *v = visible(o, old.e[i].suffix);
                put(&m, "drop %s\n", old.e[i].suffix);
                s = v ? tf_out_set_drop(&o->set, v) : tf_fail(TF_ERR_NOMEM, "out of memory");
                free(v);
            }
        }
        tf_clear_error();
        free(copy);
    }
    put(&m, "end\n");
    if (s == TF_OK && m.bad) s = tf_fail(TF_ERR_NOMEM, "%s: out of memory for the manifest", o->set_path);
    tf_writer w;
    if (s == TF_OK) s = tf_writer_open_for(&w, o->set_path, &o->set, 1);
    if (s == TF_OK) {
        tf_writer_put(&w, m.p, m.len);
        s = tf_writer_finish(&w, &o->set);
    }
    free(m.p);
    if (s == TF_OK) {
        tf_out_set_head_last(&o->set);
        s = tf_out_set_commit(&o->set);
    }
    out_free(o); /* aborts what is left, releases the lock */
    return s;
}

void tf_ktensor_out_abort(tf_ktensor_out *o) { out_free(o); }

tf_status tf_ktensor_write(const char *stem, const tf_ktensor *k, unsigned flags)
{
    TF_ARG_NOT_NULL("tf_ktensor_write", stem);
    TF_ARG_NOT_NULL("tf_ktensor_write", k);
    if (!stem || !*stem) return tf_fail(TF_ERR_ARG, "no output stem given");
    if (!(flags & (TF_KTENSOR_SPLATT | TF_KTENSOR_TTB)) || (flags & ~(unsigned)TF_KTENSOR_ALL))
        return tf_fail(TF_ERR_ARG, "%s: flags 0x%x name no Kruskal tensor files", stem, flags);
    TF_TRY(tf_ktensor_check(stem, k)); /* before any file is written */
    tf_ktensor_out *o;
    TF_TRY(tf_ktensor_out_open(stem, flags, &o));
    tf_status s = tf_ktensor_out_put(o, k);
    if (s != TF_OK) {
        tf_ktensor_out_abort(o);
        return s;
    }
    return tf_ktensor_out_commit(o);
}

/* ------------------------------------------------------------ the reader */

/* Reads one matrix: the temporary while it exists (a switch in progress),
 * else the file; messages name the file. */
static tf_status read_one(const char *tmp, const char *file, tf_matrix *out)
{
    memset(out, 0, sizeof *out);
    if (tmp) {
        const tf_status ls = tf_matrix_read_as(tmp, file, out);
        if (ls == TF_OK || access(tmp, F_OK) == 0) return ls;
        tf_clear_error(); /* renamed into place meanwhile: the file has it */
    }
    return tf_matrix_read_as(file, NULL, out);
}

/* Where a read puts the files: a Kruskal tensor (k), or the factor
 * matrices as they are (raw, *nraw; tf_factor_files_read). */
typedef struct sink {
    tf_ktensor *k;
    int *has_lambda;
    tf_matrix *raw;
    uint32_t *nraw;
    const char *extra; /* NULL, or the suffix of a file switched with the set (<stem>.<extra>) ... */
    char **text;       /* ... read whole into *text (NULL: the set has none) */
} sink;

static tf_status to_ktensor(const char *stem, tf_matrix *f, uint32_t n, tf_matrix *lambda, tf_ktensor *k,
                            int *has_lambda);

/* The matrices read -> the sink (taken from f and lambda). */
static tf_status to_sink(const char *stem, tf_matrix *f, uint32_t n, tf_matrix *lambda, const sink *out)
{
    if (out->k) return to_ktensor(stem, f, n, lambda, out->k, out->has_lambda);
    for (uint32_t m = 0; m < n; ++m) {
        out->raw[m] = f[m];
        memset(&f[m], 0, sizeof f[m]);
    }
    *out->nraw = n;
    return TF_OK;
}

static void sink_free(const sink *out)
{
    if (out->text) {
        free(*out->text);
        *out->text = NULL;
    }
    if (out->k) {
        tf_ktensor_free(out->k);
        return;
    }
    for (uint32_t m = 0; m < *out->nraw; ++m) tf_matrix_free(&out->raw[m]);
    *out->nraw = 0;
}

/* The matrices read (factors 0..n-1, lambda) -> k, checked. */
static tf_status to_ktensor(const char *stem, tf_matrix *f, uint32_t n, tf_matrix *lambda, tf_ktensor *k,
                            int *has_lambda)
{
    const uint64_t R = f[0].cols;
    for (uint32_t m = 1; m < n; ++m)
        if (f[m].cols != R)
            return tf_fail(TF_ERR_PARSE, "%s.mode%u.mat has %llu column%s, %s.mode1.mat %llu (one column per "
                           "component in every file)", stem, m + 1, (unsigned long long)f[m].cols,
                           f[m].cols == 1 ? "" : "s", stem, (unsigned long long)R);
    if (lambda->data && !((lambda->cols == 1 && lambda->rows == R) || (lambda->rows == 1 && lambda->cols == R)))
        return tf_fail(TF_ERR_PARSE, "%s.lambda.mat holds %llu x %llu values, expected %llu (one per component, as "
                       "the factor files have columns)", stem, (unsigned long long)lambda->rows,
                       (unsigned long long)lambda->cols, (unsigned long long)R);
    double *l = lambda->data;
    if (!l) {
        TF_TRY(TF_ALLOC(l, R, "lambda"));
        for (uint64_t r = 0; r < R; ++r) l[r] = 1.0;
    }
    memset(k, 0, sizeof *k);
    k->order = n;
    k->rank = R;
    for (uint32_t m = 0; m < n; ++m) {
        k->dims[m] = f[m].rows;
        k->factors[m] = f[m];
        memset(&f[m], 0, sizeof f[m]);
    }
    if (has_lambda) *has_lambda = lambda->data != NULL;
    k->lambda = l;
    memset(lambda, 0, sizeof *lambda);
    return TF_OK;
}

static void free_mats(tf_matrix *f, uint32_t n, tf_matrix *lambda)
{
    for (uint32_t m = 0; m < n; ++m) tf_matrix_free(&f[m]);
    tf_matrix_free(lambda);
}

static int path_exists(const char *p) { return access(p, F_OK) == 0 || errno != ENOENT; }

/* <stem>.<out->extra> into *out->text: the temporary tmp while it exists
 * (a switch in progress), else the file; absent: NULL. */
static tf_status read_extra(const char *stem, const char *tmp, const sink *out)
{
    char *file = strf("%s.%s", stem, out->extra), *text = NULL;
    if (!file) return tf_fail(TF_ERR_NOMEM, "out of memory");
    size_t len = 0;
    int missing = 1;
    tf_status s = tmp ? load_small(tmp, &text, &len, &missing) : TF_OK;
    if (s == TF_OK && missing) s = load_small(file, &text, &len, &missing);
    if (s == TF_OK && len == (size_t)-1) s = tf_fail(TF_ERR_PARSE, "%s: holds a NUL byte: not a text file", file);
    free(file);
    if (s != TF_OK) {
        free(text);
        return s;
    }
    *out->text = missing ? NULL : text;
    if (missing) free(text);
    return TF_OK;
}

/* No manifest: the files that are there, as tenfold always read them. */
static tf_status read_plain(const char *stem, const sink *out)
{
    tf_matrix f[TF_MAX_ORDER] = {{0}}, lambda = {0};
    uint32_t n = 0;
    tf_status s = TF_OK;
    for (uint32_t m = 1; s == TF_OK; ++m) {
        char *p = strf("%s.mode%u.mat", stem, m);
        if (!p) { s = tf_fail(TF_ERR_NOMEM, "out of memory"); break; }
        if (m > 1 && !path_exists(p)) { free(p); break; } /* the first must be there: its read says why not */
        if (m > TF_MAX_ORDER)
            s = tf_fail(TF_ERR_ARG, "%s exists: more factor files than the %d modes a tensor can have", p,
                        TF_MAX_ORDER);
        else if ((s = read_one(NULL, p, &f[m - 1])) == TF_OK)
            n = m;
        free(p);
    }
    char *lp = s == TF_OK && out->k ? strf("%s.lambda.mat", stem) : NULL;
    if (s == TF_OK && out->k && !lp) s = tf_fail(TF_ERR_NOMEM, "out of memory");
    if (s == TF_OK && lp && path_exists(lp)) s = read_one(NULL, lp, &lambda);
    free(lp);
    if (s == TF_OK && out->extra) s = read_extra(stem, NULL, out);
    if (s == TF_OK) s = to_sink(stem, f, n, &lambda, out);
    free_mats(f, n, &lambda);
    return s;
}

/* The files the manifest names (m parsed from it). */
static tf_status read_listed(const char *stem, const char *dirp, const char *set_path, manifest *m, const sink *out)
{
    const entry *mode[TF_MAX_ORDER] = {0}, *lam = NULL;
    uint32_t n = 0;
    for (int i = 0; i < m->n; ++i) {
        if (!m->e[i].suffix) continue;
        const int kind = suffix_kind(m->e[i].suffix);
        if (kind > 0) {
            mode[kind - 1] = &m->e[i];
            if ((uint32_t)kind > n) n = (uint32_t)kind;
        } else if (kind == -1 && out->k) {
            lam = &m->e[i];
        }
    }
    if (n == 0) return tf_fail(TF_ERR_ARG, "%s: the set has no factor files (%s.mode1.mat ...)", set_path, stem);
    for (uint32_t i = 0; i < n; ++i)
        if (!mode[i])
            return tf_fail(TF_ERR_PARSE, "%s: names mode%u.mat but not mode%u.mat", set_path, n, i + 1);
    tf_matrix f[TF_MAX_ORDER] = {{0}}, lambda = {0};
    tf_status s = TF_OK;
    uint32_t got = 0;
    for (uint32_t i = 0; i <= n && s == TF_OK; ++i) {
        const entry *e = i < n ? mode[i] : lam;
        if (!e) break;
        char *file = strf("%s.%s", stem, e->suffix), *tmp = mpath(dirp, e->tmp), *fin = mpath(dirp, e->final);
        if (!file) {
            s = tf_fail(TF_ERR_NOMEM, "out of memory");
        } else {
            /* the temporary counts only where it is ours for the file <stem>.<suffix> leads to (not
             * another stem's, after a set was renamed) */
            int ours = tmp && fin && our_temp(tmp, fin);
            if (ours) {
                tf_path_id a, b;
                tf_path_id_get(file, 1, &a);
                tf_path_id_get(fin, 1, &b);
                ours = tf_path_id_same(&a, &b);
            }
            const char *t = ours ? tmp : NULL;
            if (!(i == n && !(t && path_exists(t)) && !path_exists(file))) /* lambda removed: ones */
                s = read_one(t, file, i < n ? &f[i] : &lambda);
        }
        if (s == TF_OK && i < n) got = i + 1;
        free(file), free(tmp), free(fin);
    }
    if (s == TF_OK && out->extra) { /* the extra file of this generation, where the manifest names one */
        char *want = strf("%s.%s", stem, out->extra);
        tf_path_id a, b;
        const char *t = NULL;
        char *tmp = NULL;
        if (!want) s = tf_fail(TF_ERR_NOMEM, "out of memory");
        else tf_path_id_get(want, 1, &a);
        for (int i = 0; s == TF_OK && i < m->n && !t; ++i) {
            if (m->e[i].suffix) continue;
            char *fin = mpath(dirp, m->e[i].final);
            tmp = mpath(dirp, m->e[i].tmp);
            if (fin && tmp && our_temp(tmp, fin)) {
                tf_path_id_get(fin, 1, &b);
                if (tf_path_id_same(&a, &b)) t = tmp;
            }
            free(fin);
            if (!t) free(tmp), tmp = NULL;
        }
        if (s == TF_OK) s = read_extra(stem, t, out);
        free(tmp);
        free(want);
    }
    if (s == TF_OK) s = to_sink(stem, f, n, &lambda, out);
    free_mats(f, got, &lambda);
    return s;
}

static tf_status read_set(const char *stem, const sink *out);

tf_status tf_ktensor_read(const char *stem, tf_ktensor *k, int *has_lambda)
{
    TF_ARG_NOT_NULL("tf_ktensor_read", k);
    memset(k, 0, sizeof *k);
    if (has_lambda) *has_lambda = 0;
    const sink out = {k, has_lambda, NULL, NULL, NULL, NULL};
    return read_set(stem, &out);
}

tf_status tf_factor_files_read(const char *stem, tf_matrix *factors, uint32_t *order)
{
    TF_ARG_NOT_NULL("tf_factor_files_read", factors);
    TF_ARG_NOT_NULL("tf_factor_files_read", order);
    memset(factors, 0, TF_MAX_ORDER * sizeof *factors);
    *order = 0;
    const sink out = {NULL, NULL, factors, order, NULL, NULL};
    return read_set(stem, &out);
}

tf_status tf_factor_set_read_with(const char *stem, const char *extra, tf_ktensor *k, tf_matrix *factors,
                                  uint32_t *order, char **text)
{
    TF_ARG_NOT_NULL("tf_factor_set_read_with", text);
    *text = NULL;
    if (k) {
        memset(k, 0, sizeof *k);
    } else {
        memset(factors, 0, TF_MAX_ORDER * sizeof *factors);
        *order = 0;
    }
    const sink out = {k, NULL, k ? NULL : factors, k ? NULL : order, extra, text};
    return read_set(stem, &out);
}

static tf_status read_set(const char *stem, const sink *out)
{
    if (!stem || !*stem) return tf_fail(TF_ERR_ARG, "no factor set stem given");
    const char *b = base_of(stem);
    char *dirp = strf("%.*s", (int)(b - stem), stem), *set_path = strf("%s.set", stem);
    tf_status s = !dirp || !set_path ? tf_fail(TF_ERR_NOMEM, "out of memory") : TF_OK;
    int done = 0;
    for (int attempt = 0; s == TF_OK && !done && attempt < READ_ATTEMPTS; ++attempt) {
        char *m1 = NULL, *m2 = NULL;
        size_t l1 = 0, l2 = 0;
        int missing = 0, missing2 = 0;
        if ((s = load_small(set_path, &m1, &l1, &missing)) != TF_OK) break;
        if (missing) {
            s = read_plain(stem, out);
            done = 1;
            break;
        }
        char *copy = l1 == (size_t)-1 ? NULL : strdup(m1);
        manifest m;
        s = l1 != (size_t)-1 && !copy ? tf_fail(TF_ERR_NOMEM, "out of memory") : parse_manifest(set_path, copy, l1, &m);
        tf_status r = s == TF_OK ? read_listed(stem, dirp, set_path, &m, out) : s;
        /* the same manifest after the reads: nothing was switched meanwhile */
        tf_status s2 = load_small(set_path, &m2, &l2, &missing2);
        const int same = s2 == TF_OK && !missing2 && l2 == l1 && !memcmp(m1, m2, l1 == (size_t)-1 ? 0 : l1);
        free(m1), free(m2), free(copy);
        if (same || s2 != TF_OK) {
            s = s2 != TF_OK ? s2 : r;
            if (s == TF_OK && r != TF_OK) s = r;
            done = 1;
            if (s != TF_OK) sink_free(out);
            break;
        }
        sink_free(out); /* switched while we read: again */
        tf_clear_error();
        s = TF_OK;
    }
    if (s == TF_OK && !done)
        s = tf_fail(TF_ERR_IO, "%s: the set kept changing while it was read (%d tries)", stem, READ_ATTEMPTS);
    free(dirp);
    free(set_path);
    return s;
}
