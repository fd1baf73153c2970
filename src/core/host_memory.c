/* SPDX-License-Identifier: BSD-3-Clause */
/* Host memory still free to this process (host_memory.h). */
#include "core/host_memory.h"

#include "core/cgroup.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static uint64_t min_known(uint64_t a, uint64_t b) { return a == 0 ? b : b == 0 ? a : a < b ? a : b; }

/* MemAvailable of /proc/meminfo in bytes, 0 if unreadable. */
static uint64_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return (uint64_t)kb * 1024u;
}

/* A cgroup v2 file's number; 0 if absent, unreadable or "max". */
static uint64_t cgroup_value(const char *dir, const char *name)
{
    char path[4400];
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    const int n = fscanf(f, "%llu", &v);
    fclose(f);
    return n == 1 ? (uint64_t)v : 0;
}

/* The least room memory.max - memory.current on the path from this
 * process's cgroup up to the root; 0 if none is limited. */
static uint64_t cgroup_room(void)
{
    char dir[4200];
    tf_cgroup_self(dir, sizeof dir);
    uint64_t best = 0;
    do { /* "/a/b", then "/a", then "" (the root) */
        const uint64_t max = cgroup_value(dir, "memory.max"), cur = cgroup_value(dir, "memory.current");
        if (max) best = min_known(best, max > cur ? max - cur : 1);
    } while (tf_cgroup_up(dir));
    return best;
}

uint64_t tf_host_memory_free(void)
{
    uint64_t room = min_known(meminfo_available(), cgroup_room());
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        /* what the address space still holds: the limit less this process's size */
        unsigned long long pages = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (f) {
            if (fscanf(f, "%llu", &pages) != 1) pages = 0;
            fclose(f);
        }
        const long page = sysconf(_SC_PAGESIZE);
        const uint64_t used = (uint64_t)pages * (uint64_t)(page > 0 ? page : 4096), lim = (uint64_t)rl.rlim_cur;
        room = min_known(room, lim > used ? lim - used : 1);
    }
    return room;
}
