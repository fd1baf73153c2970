/* SPDX-License-Identifier: BSD-3-Clause */
/* Output targets (src/io/output.c): "-" and /dev/fd names, symlink chains,
 * dangling links, FIFOs, directories; writes through a symlink keep it;
 * permissions kept; sets of files all or nothing; tf_output_check; the
 * registry of temporaries that tf_output_cleanup empties; temporary names
 * within NAME_MAX; path identities; factor sets (io/factor_set.c): the
 * manifest switch seen whole by the reader when the writer is killed at
 * every step of the commit, the next writer finishing it and removing what
 * was left, a signal handler during the commit, the lock, files of the
 * previous set dropped, foreign STEM.set / STEM.lock files refused. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "test_paths.h"
#include "io/output.h"
#include "io/writer.h"
#include "tenfold.h"

#define TMP TF_TEST_TMP "/output"

static char *path_of(const char *name) { return tt_path(TMP, name); }

static void put(const char *name, const char *text)
{
    FILE *f = fopen(path_of(name), "w");
    if (f) fputs(text, f), fclose(f);
}

/* The file's text (static buffer), "" when missing. */
static const char *text_of(const char *path)
{
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int count_tmp(void)
{
    DIR *d = opendir(TMP);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) n += strstr(e->d_name, ".tmp") != NULL;
    if (d) closedir(d);
    return n;
}

static int is_link(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static void test_resolve(void)
{
    tf_out_target t;
    CHECK_OK(tf_out_resolve("-", &t));
    CHECK(t.kind == TF_OUT_FD && t.fd == 1);
    CHECK_OK(tf_out_resolve("/dev/stdout", &t));
    CHECK(t.kind == TF_OUT_FD && t.fd == 1);
    CHECK_OK(tf_out_resolve("/dev/stderr", &t));
    CHECK(t.kind == TF_OUT_FD && t.fd == 2);
    CHECK_OK(tf_out_resolve("/dev/fd/7", &t));
    CHECK(t.kind == TF_OUT_FD && t.fd == 7);
    CHECK_OK(tf_out_resolve("/proc/self/fd/12", &t));
    CHECK(t.kind == TF_OUT_FD && t.fd == 12);

    put("plain", "x");
    CHECK_OK(tf_out_resolve(path_of("plain"), &t));
    CHECK(t.kind == TF_OUT_FILE && t.exists && !strcmp(t.path, path_of("plain")));
    tf_out_target_free(&t);
    CHECK_OK(tf_out_resolve(path_of("new"), &t));
    CHECK(t.kind == TF_OUT_FILE && !t.exists && !strcmp(t.path, path_of("new")));
    tf_out_target_free(&t);

    /* a chain: l1 -> l2 (relative) -> sub/target (relative to l2's directory) */
    mkdir(path_of("sub"), 0755);
    put("sub/target", "old");
    CHECK(symlink("sub/l2", path_of("l1")) == 0);
    CHECK(symlink("target", path_of("sub/l2")) == 0);
    CHECK_OK(tf_out_resolve(path_of("l1"), &t));
    CHECK(t.kind == TF_OUT_FILE && t.exists);
    CHECKF(t.path && !strcmp(t.path, path_of("sub/target")), "resolved to %s", t.path);
    tf_out_target_free(&t);
    /* dangling: the target is created */
    CHECK(symlink("sub/missing", path_of("dangling")) == 0);
    CHECK_OK(tf_out_resolve(path_of("dangling"), &t));
    CHECK(t.kind == TF_OUT_FILE && !t.exists && t.path && !strcmp(t.path, path_of("sub/missing")));
    tf_out_target_free(&t);
    /* a link to /dev/stdout is standard output, not a file to replace */
    CHECK(symlink("/dev/stdout", path_of("out_link")) == 0);
    CHECK_OK(tf_out_resolve(path_of("out_link"), &t));
    CHECK(t.kind == TF_OUT_FD && t.fd == 1);
    /* loops, directories */
    CHECK(symlink("loop_b", path_of("loop_a")) == 0);
    CHECK(symlink("loop_a", path_of("loop_b")) == 0);
    CHECK(tf_out_resolve(path_of("loop_a"), &t) != TF_OK);
    CHECKF(strstr(tf_last_error(), "loop_a") != NULL, "%s", tf_last_error());
    CHECK(tf_out_resolve(path_of("sub"), &t) != TF_OK);
    CHECKF(strstr(tf_last_error(), "is a directory") && strstr(tf_last_error(), "sub"), "%s", tf_last_error());
    CHECK(symlink("sub", path_of("dirlink")) == 0);
    CHECK(tf_out_resolve(path_of("dirlink"), &t) != TF_OK);
    /* FIFO: written directly */
    CHECK(mkfifo(path_of("fifo"), 0644) == 0);
    CHECK_OK(tf_out_resolve(path_of("fifo"), &t));
    CHECK(t.kind == TF_OUT_DEVICE);
    tf_out_target_free(&t);
    CHECK_OK(tf_out_resolve("/dev/null", &t));
    CHECK(t.kind == TF_OUT_DEVICE);
    tf_out_target_free(&t);
}

static void test_writes(void)
{
    /* through a symlink chain: links kept, target replaced */
    CHECK_OK(tf_write_file(path_of("l1"), "new\n", 4));
    CHECK(is_link(path_of("l1")) && is_link(path_of("sub/l2")));
    CHECK(!strcmp(text_of(path_of("sub/target")), "new\n"));
    CHECK_OK(tf_write_file(path_of("dangling"), "made\n", 5));
    CHECK(is_link(path_of("dangling")) && !strcmp(text_of(path_of("sub/missing")), "made\n"));
    /* permissions of a replaced file are kept */
    put("private", "p");
    chmod(path_of("private"), 0600);
    CHECK_OK(tf_write_file(path_of("private"), "q", 1));
    struct stat st;
    CHECK(stat(path_of("private"), &st) == 0 && (st.st_mode & 0777) == 0600);
    /* a directory is refused */
    CHECK(tf_write_file(path_of("sub"), "x", 1) != TF_OK);
    /* a pipe through /dev/fd/N: written directly, the descriptor stays open */
    int p[2];
    CHECK(pipe(p) == 0);
    char name[64], got[16] = {0};
    snprintf(name, sizeof name, "/dev/fd/%d", p[1]);
    CHECK_OK(tf_write_file(name, "piped", 5));
    CHECK(read(p[0], got, sizeof got) == 5 && !memcmp(got, "piped", 5));
    CHECK(fcntl(p[1], F_GETFD) >= 0);
    close(p[0]), close(p[1]);
    /* a FIFO with a reader */
    int r = open(path_of("fifo"), O_RDONLY | O_NONBLOCK);
    CHECK(r >= 0);
    CHECK_OK(tf_write_file(path_of("fifo"), "fifo!", 5));
    memset(got, 0, sizeof got);
    CHECK(read(r, got, sizeof got) == 5 && !memcmp(got, "fifo!", 5));
    close(r);
    struct stat fs;
    CHECK(lstat(path_of("fifo"), &fs) == 0 && S_ISFIFO(fs.st_mode));
    CHECK(count_tmp() == 0 && tf_out_temp_live() == 0);
}

static void test_check(void)
{
    int out = -1;
    CHECK_OK(tf_output_check(path_of("probe.txt"), &out));
    CHECK(out == 0 && access(path_of("probe.txt"), F_OK) != 0 && count_tmp() == 0);
    CHECK_OK(tf_output_check("-", &out));
    CHECK(out == 1);
    CHECK_OK(tf_output_check(path_of("out_link"), &out));
    CHECK(out == 1);
    CHECK(tf_output_check(path_of("nodir/x.json"), &out) != TF_OK);
    CHECKF(strstr(tf_last_error(), "nodir: cannot write there") != NULL, "%s", tf_last_error());
    CHECK(tf_output_check(path_of("sub"), NULL) != TF_OK);
    CHECK(tf_out_temp_live() == 0);
}

static void fill_ktensor(tf_ktensor *k, double v)
{
    for (uint64_t r = 0; r < k->rank; ++r) k->lambda[r] = v + (double)r;
    for (uint32_t m = 0; m < k->order; ++m)
        for (uint64_t i = 0; i < k->dims[m] * k->rank; ++i) k->factors[m].data[i] = v + (double)i;
}

static void test_sets(void)
{
    const uint64_t dims[3] = {4, 3, 2};
    tf_ktensor k;
    CHECK_OK(tf_ktensor_alloc(&k, 3, dims, 2));
    fill_ktensor(&k, 1);
    CHECK_OK(tf_ktensor_write(path_of("kt"), &k, TF_KTENSOR_ALL));
    char old[6][4096];
    const char *names[6] = {"kt.mode1.mat", "kt.mode2.mat", "kt.mode3.mat", "kt.lambda.mat", "kt.ktensor", NULL};
    for (int i = 0; names[i]; ++i) snprintf(old[i], sizeof old[i], "%s", text_of(path_of(names[i])));
    CHECK(strncmp(old[4], "ktensor", 7) == 0 && old[3][0]);

    /* a directory in the way of .ktensor: the whole set fails, nothing changes */
    fill_ktensor(&k, 100);
    CHECK(rename(path_of("kt.ktensor"), path_of("kt.ktensor.keep")) == 0);
    mkdir(path_of("kt.ktensor"), 0755);
    CHECK(tf_ktensor_write(path_of("kt"), &k, TF_KTENSOR_ALL) != TF_OK);
    CHECKF(strstr(tf_last_error(), "kt.ktensor") != NULL, "%s", tf_last_error());
    for (int i = 0; i < 4; ++i) CHECKF(!strcmp(text_of(path_of(names[i])), old[i]), "%s changed", names[i]);
    CHECK(count_tmp() == 0 && tf_out_temp_live() == 0);
    rmdir(path_of("kt.ktensor"));
    CHECK(rename(path_of("kt.ktensor.keep"), path_of("kt.ktensor")) == 0);
    /* without TTB: the previous set's .ktensor is dropped by the switch (it
     * would no longer match the .mat files) */
    CHECK_OK(tf_ktensor_write(path_of("kt"), &k, TF_KTENSOR_SPLATT));
    CHECK(strcmp(text_of(path_of("kt.mode1.mat")), old[0]) != 0);
    CHECK(access(path_of("kt.ktensor"), F_OK) != 0);
    CHECK(strstr(text_of(path_of("kt.set")), "\ndrop ktensor\n") != NULL);
    /* a lower order drops the modes beyond it; a file the manifest never
     * named is left alone */
    const uint64_t dims2[2] = {4, 3};
    tf_ktensor k2;
    CHECK_OK(tf_ktensor_alloc(&k2, 2, dims2, 2));
    fill_ktensor(&k2, 7);
    put("kt.mode9.mat", "1 2\n");
    CHECK_OK(tf_ktensor_write(path_of("kt"), &k2, TF_KTENSOR_ALL));
    CHECK(access(path_of("kt.mode3.mat"), F_OK) != 0 && access(path_of("kt.mode2.mat"), F_OK) == 0);
    CHECK(access(path_of("kt.ktensor"), F_OK) == 0 && access(path_of("kt.mode9.mat"), F_OK) == 0);
    tf_ktensor r;
    int has_lambda = 0;
    CHECK_OK(tf_ktensor_read(path_of("kt"), &r, &has_lambda));
    CHECK(r.order == 2 && r.rank == 2 && r.dims[0] == 4 && r.dims[1] == 3 && has_lambda && r.lambda[1] == 8);
    tf_ktensor_free(&r);
    tf_ktensor_free(&k2);
    CHECK(tf_ktensor_write(path_of("kt"), &k, 0) != TF_OK);
    /* the old entry points still work */
    CHECK_OK(tf_ktensor_write_ttb(path_of("alone.ktensor"), &k));
    CHECK(access(path_of("alone.ktensor"), F_OK) == 0 && access(path_of("alone.mode1.mat"), F_OK) != 0);
    CHECK_OK(tf_ktensor_write_splatt(path_of("kt2"), &k));
    CHECK(access(path_of("kt2.lambda.mat"), F_OK) == 0 && access(path_of("kt2.ktensor"), F_OK) != 0);
    CHECK(count_tmp() == 0 && tf_out_temp_live() == 0);
    tf_ktensor_free(&k);
}

static void test_cleanup(void)
{
    /* a live temporary is removed; the target is untouched */
    put("victim", "before");
    tf_writer w;
    CHECK_OK(tf_writer_open(&w, path_of("victim")));
    tf_writer_put(&w, "after", 5);
    CHECK(count_tmp() == 1 && tf_out_temp_live() == 1);
    tf_output_cleanup();
    CHECK(count_tmp() == 0 && tf_out_temp_live() == 0);
    tf_writer_abort(&w);
    CHECK(!strcmp(text_of(path_of("victim")), "before"));

    /* a set being renamed is finished instead */
    tf_out_set set;
    tf_out_set_init(&set);
    CHECK_OK(tf_writer_open(&w, path_of("victim")));
    tf_writer_put(&w, "after", 5);
    CHECK_OK(tf_writer_finish(&w, &set));
    CHECK(set.n == 1 && count_tmp() == 1);
    tf_out_temp_committing(set.f[0].slot, set.f[0].final);
    tf_output_cleanup();
    CHECK(!strcmp(text_of(path_of("victim")), "after") && count_tmp() == 0);
    tf_out_set_abort(&set); /* the temporary is gone already: frees only */
    CHECK(!strcmp(text_of(path_of("victim")), "after") && tf_out_temp_live() == 0);
}

/* ------------------------------------------------------------ factor sets */

static int exists(const char *name) { return access(path_of(name), F_OK) == 0; }

/* 1 when k holds fill_ktensor(v)'s values for dims 4 x 3 x 2, rank 2. */
static int holds(const tf_ktensor *k, double v)
{
    if (k->order != 3 || k->rank != 2) return 0;
    for (uint64_t r = 0; r < k->rank; ++r)
        if (k->lambda[r] != v + (double)r) return 0;
    for (uint32_t m = 0; m < k->order; ++m)
        for (uint64_t i = 0; i < k->dims[m] * k->rank; ++i)
            if (k->factors[m].data[i] != v + (double)i) return 0;
    return 1;
}

/* The set tf_ktensor_read sees: 1 the old one (values 1), 2 the new one
 * (100), 0 a mix, -1 an error. */
static int seen(const char *stem)
{
    tf_ktensor k;
    if (tf_ktensor_read(path_of(stem), &k, NULL) != TF_OK) return -1;
    const int r = holds(&k, 1) ? 1 : holds(&k, 100) ? 2 : 0;
    tf_ktensor_free(&k);
    return r;
}

/* The visible files of stem hold the same text as those of ref. */
static int same_files(const char *stem, const char *ref)
{
    static const char *const sfx[] = {"mode1.mat", "mode2.mat", "mode3.mat", "lambda.mat", "ktensor"};
    for (int i = 0; i < 5; ++i) {
        char a[64], b[64], ta[4096];
        snprintf(a, sizeof a, "%s.%s", stem, sfx[i]);
        snprintf(b, sizeof b, "%s.%s", ref, sfx[i]);
        snprintf(ta, sizeof ta, "%s", text_of(path_of(a)));
        if (!ta[0] || strcmp(ta, text_of(path_of(b)))) return 0;
    }
    return 1;
}

static int hook_at = -1;
static void hook_kill(int step)
{
    if (step == hook_at) raise(SIGKILL); /* the writer dies right before this rename */
}
static void hook_signal(int step)
{
    if (step == hook_at) _exit(tf_output_cleanup() ? 50 : 51); /* as the CLI's SIGTERM handler */
}

/* Forks a writer of `stem` with values 100 whose commit meets hook at
 * step `at`; returns its wait status. */
static int child_write(const char *stem, const tf_ktensor *k, void (*hook)(int), int at)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        hook_at = at;
        tf_out_test_commit_step = hook;
        _exit(tf_ktensor_write(path_of(stem), k, TF_KTENSOR_ALL) == TF_OK ? 0 : 1);
    }
    int st = -1;
    if (pid > 0) waitpid(pid, &st, 0);
    return st;
}

static void test_set_switch(void)
{
    const uint64_t dims[3] = {4, 3, 2};
    tf_ktensor a, b;
    CHECK_OK(tf_ktensor_alloc(&a, 3, dims, 2));
    CHECK_OK(tf_ktensor_alloc(&b, 3, dims, 2));
    fill_ktensor(&a, 1);
    fill_ktensor(&b, 100);
    CHECK_OK(tf_ktensor_write(path_of("ref_old"), &a, TF_KTENSOR_ALL));
    CHECK_OK(tf_ktensor_write(path_of("ref_new"), &b, TF_KTENSOR_ALL));
    CHECK(seen("ref_old") == 1 && seen("ref_new") == 2);

    /* SIGKILL right before each rename of the commit: step 0 is the
     * manifest's (the switch), 1..5 the five files'. The reader sees the
     * old set before the switch and the new one from it on, whole. */
    for (int step = 0; step <= 6; ++step) {
        CHECK_OK(tf_ktensor_write(path_of("sw"), &a, TF_KTENSOR_ALL)); /* the old set */
        CHECK(count_tmp() == 0 && !exists("sw.lock") && seen("sw") == 1);
        const int st = child_write("sw", &b, hook_kill, step);
        const int killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
        CHECKF(killed == (step <= 5), "step %d: status %d", step, st);
        const int want = step == 0 ? 1 : 2;
        CHECKF(seen("sw") == want, "killed before rename %d: the reader sees %d, expected %d", step, seen("sw"), want);
        if (killed) CHECKF(count_tmp() > 0 && exists("sw.lock"), "step %d: what the killed writer left", step);
        /* the next writer (here one that writes nothing) finishes the
         * switch and removes the killed one's temporaries and lock */
        tf_ktensor_out *o = NULL;
        CHECK_OK(tf_ktensor_out_open(path_of("sw"), TF_KTENSOR_ALL, &o));
        if (o) tf_ktensor_out_abort(o);
        CHECKF(count_tmp() == 0 && !exists("sw.lock"), "step %d: %d temporaries left", step, count_tmp());
        CHECKF(same_files("sw", want == 1 ? "ref_old" : "ref_new"), "step %d: the files after recovery", step);
        CHECK(seen("sw") == want);
    }

    /* a signal handler (tf_output_cleanup) at each step of the commit
     * finishes it: the new set, nothing left, "complete" (exit 0) */
    for (int step = 0; step <= 5; ++step) {
        CHECK_OK(tf_ktensor_write(path_of("sig"), &a, TF_KTENSOR_ALL));
        const int st = child_write("sig", &b, hook_signal, step);
        CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 50, "step %d: status %d", step, st);
        CHECKF(same_files("sig", "ref_new") && count_tmp() == 0 && !exists("sig.lock"), "step %d", step);
    }
    /* ... and before the commit it removes everything: the old set stays */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        tf_ktensor_out *o;
        if (tf_ktensor_out_open(path_of("sig"), TF_KTENSOR_ALL, &o) != TF_OK || tf_ktensor_out_put(o, &b) != TF_OK ||
            tf_ktensor_out_add(o, path_of("sig_report.json"), "{}\n", 3) != TF_OK)
            _exit(2);
        _exit(tf_output_cleanup() ? 50 : 51);
    }
    int st = -1;
    waitpid(pid, &st, 0);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 51, "status %d", st);
    CHECK(same_files("sig", "ref_new") && count_tmp() == 0 && !exists("sig.lock") && !exists("sig_report.json"));

    /* a report switched with the set; one that cannot be written (a full
     * device, written at once) fails before the switch */
    tf_ktensor_out *o = NULL;
    CHECK_OK(tf_ktensor_write(path_of("rep"), &a, TF_KTENSOR_ALL));
    CHECK_OK(tf_ktensor_out_open(path_of("rep"), TF_KTENSOR_ALL, &o));
    CHECK_OK(tf_ktensor_out_put(o, &b));
    CHECK_OK(tf_ktensor_out_add(o, path_of("rep.json"), "{}\n", 3));
    CHECK(!exists("rep.json") && seen("rep") == 1);
    CHECK_FAILS(tf_ktensor_out_add(o, path_of("rep.mode2.mat"), "x", 1), TF_ERR_ARG, "rep.mode2.mat");
    CHECK_FAILS(tf_ktensor_out_add(o, path_of("rep.mode7.mat"), "x", 1), TF_ERR_ARG, "factor set");
    CHECK_OK(tf_ktensor_out_commit(o));
    CHECK(seen("rep") == 2 && !strcmp(text_of(path_of("rep.json")), "{}\n") && count_tmp() == 0);
    CHECK(strstr(text_of(path_of("rep.set")), "\nextra rep.json rep.json.tmp.") != NULL);
    if (access("/dev/full", W_OK) == 0) {
        CHECK_OK(tf_ktensor_out_open(path_of("rep"), TF_KTENSOR_ALL, &o));
        CHECK_OK(tf_ktensor_out_put(o, &a));
        CHECK(tf_ktensor_out_add(o, "/dev/full", "{}\n", 3) != TF_OK);
        tf_ktensor_out_abort(o);
        CHECK(seen("rep") == 2 && count_tmp() == 0 && !exists("rep.lock"));
    }

    /* the lock: a second writer, in another process or this one, fails at
     * once naming the holder */
    CHECK_OK(tf_ktensor_out_open(path_of("lk"), TF_KTENSOR_ALL, &o));
    CHECK(exists("lk.lock"));
    char want[128];
    snprintf(want, sizeof want, "another tenfold run is writing this factor set (pid %ld)", (long)getpid());
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        const tf_status s = tf_ktensor_write(path_of("lk"), &b, TF_KTENSOR_ALL);
        _exit(s != TF_OK && strstr(tf_last_error(), want) ? 0 : 1);
    }
    waitpid(pid, &st, 0);
    CHECKF(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the second writer: status %d", st);
    CHECK_FAILS(tf_ktensor_write(path_of("lk"), &b, TF_KTENSOR_ALL), TF_ERR_IO, want);
    CHECK_OK(tf_ktensor_out_put(o, &a));
    CHECK_OK(tf_ktensor_out_commit(o));
    CHECK(!exists("lk.lock") && seen("lk") == 1);

    /* a stale lock file's journal: our temporaries it names are removed,
     * anything else it names is not */
    char dir[PATH_MAX], journal[4 * PATH_MAX];
    CHECK(realpath(TMP, dir) != NULL);
    put("lk.mode2.mat.tmp.999999.4", "stale");
    put("victim.txt", "keep me");
    snprintf(journal, sizeof journal, "pid 999999\ntemp %s/lk.mode2.mat.tmp.999999.4 lk.mode2.mat\n"
             "temp %s/victim.txt lk.mode2.mat\ntemp %s/lk.mode2.mat.tmp.999999.5", dir, dir, dir);
    put("lk.lock", journal);
    CHECK_OK(tf_ktensor_write(path_of("lk"), &b, TF_KTENSOR_ALL));
    CHECK(!exists("lk.mode2.mat.tmp.999999.4") && !strcmp(text_of(path_of("victim.txt")), "keep me"));
    CHECK(!exists("lk.lock") && seen("lk") == 2);

    /* STEM.set or STEM.lock that tenfold did not write: refused, untouched */
    put("own.set", "my notes\n");
    CHECK_FAILS(tf_ktensor_write(path_of("own"), &a, TF_KTENSOR_ALL), TF_ERR_IO, "remove it or choose another stem");
    CHECK(!strcmp(text_of(path_of("own.set")), "my notes\n") && !exists("own.mode1.mat") && !exists("own.lock"));
    put("mine.lock", "precious\n");
    CHECK_FAILS(tf_ktensor_write(path_of("mine"), &a, TF_KTENSOR_ALL), TF_ERR_IO, "not a tenfold lock file");
    CHECK(!strcmp(text_of(path_of("mine.lock")), "precious\n") && !exists("mine.mode1.mat"));
    CHECK(count_tmp() == 0);

    /* without a manifest (files from elsewhere): read as they are */
    CHECK(rename(path_of("ref_new.set"), path_of("ref_new.set.bak")) == 0);
    CHECK(seen("ref_new") == 2);
    tf_ktensor_free(&a);
    tf_ktensor_free(&b);
}

/* Temporary names within NAME_MAX; path identities. */
static void test_names(void)
{
    char name[300], tmp[400];
    memset(name, 'n', 255);
    name[255] = '\0';
    for (int len = 240; len <= 255; len += 5) {
        name[len] = '\0';
        CHECKF(tf_write_file(path_of(name), "x\n", 2) == TF_OK, "%d bytes: %s", len, tf_last_error());
        CHECK(!strcmp(text_of(path_of(name)), "x\n"));
        CHECK(tf_out_temp_name(path_of(name), 4194304, 4000000000u, tmp, sizeof tmp) > 0);
        const char *b = strrchr(tmp, '/') + 1;
        CHECKF(strlen(b) <= 255 && tf_out_temp_matches(b, name), "%s", b);
        name[len] = 'n';
    }
    CHECK(count_tmp() == 0);
    CHECK(tf_out_temp_name("d/x.mat", 12, 3, tmp, sizeof tmp) > 0 && !strcmp(tmp, "d/x.mat.tmp.12.3"));
    CHECK(tf_out_temp_matches("x.mat.tmp.12.3", "x.mat") && !tf_out_temp_matches("x.mat.tmp.12.3", "y.mat"));
    CHECK(!tf_out_temp_matches("x.mat.tmp.12.3x", "x.mat") && !tf_out_temp_matches("x.mat.tmp.12", "x.mat"));
    CHECK(!tf_out_temp_matches("x.mat", "x.mat") && !tf_out_temp_matches("notes.txt", "x.mat"));
    /* a temporary a manifest names with this pid (reused): later names skip it */
    snprintf(tmp, sizeof tmp, "x.mat.tmp.%ld.5000", (long)getpid());
    tf_out_temp_avoid(tmp);
    tf_writer w;
    CHECK_OK(tf_writer_open(&w, path_of("avoid.txt")));
    unsigned long n = 0;
    CHECKF(w.tmp && sscanf(strrchr(w.tmp, '.') + 1, "%lu", &n) == 1 && n > 5000, "%s", w.tmp);
    tf_writer_abort(&w);

    tf_path_id p, q;
    put("idfile", "x");
    tf_path_id_get(path_of("idfile"), 0, &p);
    tf_path_id_get(path_of("./idfile"), 1, &q);
    CHECK(p.kind == 1 && tf_path_id_same(&p, &q));
    CHECK(link(path_of("idfile"), path_of("idhard")) == 0);
    tf_path_id_get(path_of("idhard"), 1, &q);
    CHECK(tf_path_id_same(&p, &q));
    tf_path_id_get(path_of("l1"), 1, &p); /* l1 -> sub/l2 -> sub/target */
    tf_path_id_get(path_of("sub/target"), 0, &q);
    CHECK(tf_path_id_same(&p, &q));
    tf_path_id_get(path_of("idnew"), 1, &p);
    tf_path_id_get(path_of("sub/../idnew"), 1, &q);
    CHECK(p.kind == 2 && tf_path_id_same(&p, &q));
    tf_path_id_get(path_of("idnew2"), 1, &q);
    CHECK(!tf_path_id_same(&p, &q));
    tf_path_id_get("/dev/null", 1, &p);
    tf_path_id_get("/dev/null", 1, &q);
    CHECK(p.kind == 0 && !tf_path_id_same(&p, &q));
    tf_path_id_get(path_of("missing-input"), 0, &p);
    CHECK(p.kind == 0);
}

int main(void)
{
    if (system("rm -rf " TMP) != 0 || mkdir(TMP, 0755) != 0) return tf_test_skip("test_output", "no scratch dir");
    test_resolve();
    test_writes();
    test_check();
    test_sets();
    test_cleanup();
    test_set_switch();
    test_names();
    return tf_test_finish("test_output");
}
