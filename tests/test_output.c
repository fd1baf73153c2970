/* SPDX-License-Identifier: BSD-3-Clause */
/* Output targets (src/io/output.c): "-" and /dev/fd names, symlink chains,
 * dangling links, FIFOs, directories; writes through a symlink keep it;
 * permissions kept; sets of files all or nothing; tf_output_check; the
 * registry of temporaries that tf_output_cleanup empties. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
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
    /* without TTB: no .ktensor touched */
    CHECK_OK(tf_ktensor_write(path_of("kt"), &k, TF_KTENSOR_SPLATT));
    CHECK(strcmp(text_of(path_of("kt.mode1.mat")), old[0]) != 0);
    CHECK(!strcmp(text_of(path_of("kt.ktensor")), old[4]));
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

int main(void)
{
    if (system("rm -rf " TMP) != 0 || mkdir(TMP, 0755) != 0) return tf_test_skip("test_output", "no scratch dir");
    test_resolve();
    test_writes();
    test_check();
    test_sets();
    test_cleanup();
    return tf_test_finish("test_output");
}
