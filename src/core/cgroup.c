/* SPDX-License-Identifier: BSD-3-Clause */
/* This process's cgroup (cgroup.h). */
#include "core/cgroup.h"

#include <stdio.h>
#include <string.h>

void tf_cgroup_self(char *dir, size_t len)
{
    char line[4200];
    if (!len) return;
    dir[0] = 0;
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f) {
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "0::", 3)) {
                snprintf(dir, len, "%s", line + 3);
                dir[strcspn(dir, "\n")] = 0;
            }
        fclose(f);
    }
    if (!strcmp(dir, "/")) dir[0] = 0;
}

int tf_cgroup_up(char *dir)
{
    char *slash = strrchr(dir, '/');
    if (!slash) return 0;
    *slash = 0;
    return 1;
}
