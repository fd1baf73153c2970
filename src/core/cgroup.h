/* SPDX-License-Identifier: BSD-3-Clause */
/* This process's cgroup (v2), for the limits read on the way up from it
 * (parallel.c's CPU quota, host_memory.c's memory room). */
#ifndef TF_CORE_CGROUP_H
#define TF_CORE_CGROUP_H
#include <stddef.h>

/* The group's path under /sys/fs/cgroup ("/a/b"; "" for the root or where
 * /proc/self/cgroup has no v2 line). */
void tf_cgroup_self(char *dir, size_t len);
/* Its parent's path, in place; 0 when dir was the root already. */
int tf_cgroup_up(char *dir);
#endif
