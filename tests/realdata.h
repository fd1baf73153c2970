/* SPDX-License-Identifier: BSD-3-Clause */
/* The walk over the real-data directory shared by the tests that run on
 * every real tensor or matrix: $TF_TEST_DATA when set (the GPU machine
 * points it at its own copy), else TF_SHARED_DATA. Files are visited in
 * sorted name order, so a run is the same on every file system. */
#ifndef TF_TESTS_REALDATA_H
#define TF_TESTS_REALDATA_H
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "tenfold.h"

/* Called once per file read; X belongs to the walk (do not free it). */
typedef void (*tf_data_fn)(const char *name, const char *path, tf_tensor *X, void *user);

static inline const char *tf_test_data_dir(void)
{
    const char *env = getenv("TF_TEST_DATA");
    return env && *env ? env : TF_SHARED_DATA;
}

static inline int tf_data_name_matches(const char *name, const char *const *suffixes)
{
    const size_t n = strlen(name);
    for (; *suffixes; ++suffixes) {
        const size_t s = strlen(*suffixes);
        if (n > s && !strcmp(name + n - s, *suffixes)) return 1;
    }
    return 0;
}

static inline int tf_data_cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted, malloc'd names of the entries of dir that end in one of suffixes;
 * NULL when dir cannot be opened. Running out of memory is a failed check
 * (the names listed so far are kept). */
static inline char **tf_data_list(const char *dir, const char *const *suffixes, size_t *count)
{
    DIR *d = opendir(dir);
    if (!d) return NULL;
    size_t n = 0, cap = 16;
    char **names = malloc(cap * sizeof *names);
    int oom = names == NULL;
    for (struct dirent *e; !oom && (e = readdir(d));) {
        if (!tf_data_name_matches(e->d_name, suffixes)) continue;
        if (n == cap) {
            char **grown = realloc(names, 2 * cap * sizeof *names);
            if (!grown) { oom = 1; break; }
            names = grown;
            cap *= 2;
        }
        const size_t len = strlen(e->d_name) + 1;
        if (!(names[n] = malloc(len))) { oom = 1; break; }
        memcpy(names[n++], e->d_name, len);
    }
    closedir(d);
    if (oom) CHECKF(0, "%s: out of memory listing the directory", dir);
    if (!names) names = calloc(1, sizeof *names); /* nothing listed; NULL only if that fails too */
    if (names) qsort(names, n, sizeof *names, tf_data_cmp_names);
    *count = n;
    return names;
}

/* Visits, in sorted name order, every file of the real-data directory whose
 * name ends in one of `suffixes` (NULL-terminated): reads it (a read that
 * fails is a failed check naming the path and tf_last_error()), calls fn and
 * frees the tensor. Returns the number of files read and visited, or -1 after
 * printing "<test>: <dir> not found: real-data part skipped". */
static inline int tf_for_each_data_file(const char *test, const char *const *suffixes, tf_data_fn fn,
                                        void *user)
{
    const char *dir = tf_test_data_dir();
    size_t n = 0;
    char **names = tf_data_list(dir, suffixes, &n);
    if (!names) {
        printf("%s: %s not found: real-data part skipped\n", test, dir);
        return -1;
    }
    int visited = 0;
    for (size_t i = 0; i < n; ++i) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        tf_tensor X;
        memset(&X, 0, sizeof X);
        const tf_status s = tf_read_tensor(path, 0, &X, NULL);
        CHECKF(s == TF_OK, "%s: %s", path, tf_last_error());
        if (s == TF_OK) {
            fn(names[i], path, &X, user);
            tf_tensor_free(&X);
            ++visited;
        }
        free(names[i]);
    }
    free(names);
    return visited;
}
#endif
