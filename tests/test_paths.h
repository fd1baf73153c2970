/* SPDX-License-Identifier: BSD-3-Clause */
/* Scratch file paths of a test: "dir/name" in one of eight rotating
 * buffers, so a few can be live at once (dir under TF_TEST_TMP). */
#ifndef TF_TESTS_TEST_PATHS_H
#define TF_TESTS_TEST_PATHS_H
#include <stdio.h>

static inline char *tt_path(const char *dir, const char *name)
{
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}
#endif
