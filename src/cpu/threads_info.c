/* SPDX-License-Identifier: BSD-3-Clause */
/* tf_threads_describe and tf_threads_placement: which threads the CPU
 * backend uses and where they run (tenfold cpd -v, tenfold info --threads). */
#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/environment.h"
#include "core/parallel.h"
#include "cpu/blas_threads.h"
#include "cpu/dense.h"
#include "tenfold.h"

/* Appends to buf (always terminated; a full buffer ends the text). */
static void add(char *buf, size_t len, const char *fmt, ...)
{
    const size_t at = strlen(buf);
    if (at + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + at, len - at, fmt, ap);
    va_end(ap);
}

/* "0-3,8" of a set; returns its CPU count. */
static int cpu_list(const cpu_set_t *set, size_t size, char *out, size_t len)
{
    out[0] = 0;
    const int top = (int)(size * 8);
    int count = 0;
    for (int c = 0; c < top; ++c) {
        if (!CPU_ISSET_S(c, size, set)) continue;
        int e = c;
        while (e + 1 < top && CPU_ISSET_S(e + 1, size, set)) ++e;
        add(out, len, e > c ? "%s%d-%d" : "%s%d", out[0] ? "," : "", c, e);
        count += e - c + 1;
        c = e;
    }
    return count;
}

static const char *blas_file(void)
{
    Dl_info dl; /* the shared object of a BLAS entry point */
    if (!dladdr((void *)dgemm_, &dl) || !dl.dli_fname) return "linked statically";
    const char *slash = strrchr(dl.dli_fname, '/');
    return slash ? slash + 1 : dl.dli_fname;
}

static void describe_blas(int team, char *buf, size_t len)
{
    tf_blas_threads_info b;
    tf_blas_threads_query(&b);
    const char *env = tf_env_openblas_num_threads();
    if (!b.name[0]) {
        add(buf, len, "BLAS %s, on the calling thread", blas_file());
        return;
    }
    add(buf, len, "BLAS %s (%s", b.name, b.kind);
    if (env) add(buf, len, ", OPENBLAS_NUM_THREADS=%s", env);
    add(buf, len, ")");
    if (b.pinned) add(buf, len, " %d threads, held to 1 during CP-ALS", b.threads);
    else if (!strcmp(b.kind, "OpenMP")) add(buf, len, " 1 thread per call in the team, %d outside", team);
    else add(buf, len, " %d thread%s", b.threads, b.threads == 1 ? "" : "s");
}

static void describe_binding(char *buf, size_t len)
{
#ifdef _OPENMP
    static const char *const names[] = {"none", "true", "primary", "close", "spread"};
    const int bind = (int)omp_get_proc_bind();
    const char *places = tf_env_omp_places();
    if (bind == 0) add(buf, len, "binding none");
    else
        add(buf, len, "binding %s, %d place%s%s%.40s%s", bind >= 0 && bind <= 4 ? names[bind] : "?",
            omp_get_num_places(), omp_get_num_places() == 1 ? "" : "s", places ? " (OMP_PLACES=" : "",
            places ? places : "", places ? ")" : "");
#else
    add(buf, len, "no OpenMP");
#endif
    const char *wait = tf_env_omp_wait_policy(), *spin = tf_env_gomp_spincount();
    add(buf, len, "; wait %.20s", wait ? wait : spin ? "spin count " : "default");
    if (!wait && spin) add(buf, len, "%.20s", spin);
}

static void describe_cpus(char *buf, size_t len)
{
    size_t size = 0;
    cpu_set_t *set = tf_process_cpus(&size);
    char list[512] = "?";
    const int n = set ? cpu_list(set, size, list, sizeof list) : 0;
    if (set) CPU_FREE(set);
    add(buf, len, "; CPUs %.80s%s (%d of %ld online", list, strlen(list) > 80 ? "..." : "", n,
        sysconf(_SC_NPROCESSORS_ONLN));
    if (tf_cpu_quota() > 0) add(buf, len, ", cgroup quota %d", tf_cpu_quota());
    add(buf, len, ")");
}

void tf_threads_describe(int threads, const tf_tensor *X, uint64_t rank, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
    const int team = tf_resolve_threads(threads);
    if (X && rank) {
        uint64_t longest = 0;
        for (uint32_t m = 0; m < X->order; ++m) longest = X->dims[m] > longest ? X->dims[m] : longest;
        /* the dense steps as they run in CP-ALS: after an MTTKRP, whose team they may keep */
        const int mttkrp = tf_mttkrp_team(team, X->nnz, rank, X->order);
        const int noted = tf_team_note(mttkrp);
        const int dense = tf_dense_team(longest, rank, team);
        tf_team_note(noted);
        add(buf, len, "MTTKRP %d of %d (OpenMP), dense steps up to %d; ", mttkrp, team, dense);
    } else {
        add(buf, len, "OpenMP %d; ", team);
    }
    describe_blas(team, buf, len);
    add(buf, len, "; ");
    describe_binding(buf, len);
    describe_cpus(buf, len);
}

/* ------------------------------------------------------------ placement */

/* Cpus_allowed_list of thread `tid` of this process, into out. */
static void task_cpus(long tid, char *out, size_t len)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/self/task/%ld/status", tid);
    snprintf(out, len, "?");
    FILE *f = fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "Cpus_allowed_list:", 18)) {
            const char *v = line + 18 + strspn(line + 18, " \t");
            snprintf(out, len, "%.*s", (int)strcspn(v, "\n"), v);
        }
    fclose(f);
}

void tf_threads_placement(int threads, char *buf, size_t len)
{
    if (!len) return;
    buf[0] = 0;
    const int nt = tf_resolve_threads(threads);
    long *tids = calloc((size_t)nt, sizeof *tids);
    if (!tids) return;
    int got = 1;
    tids[0] = (long)syscall(SYS_gettid);
#pragma omp parallel num_threads(nt)
    {
        const int t = tf_thread_id();
        if (t < nt) tids[t] = (long)syscall(SYS_gettid);
        if (t == 0) got = tf_thread_count();
    }
    add(buf, len, "team:");
    for (int t = 0; t < got; ++t) {
        char cpus[256];
        task_cpus(tids[t], cpus, sizeof cpus);
        add(buf, len, " [%s]", cpus);
    }
    add(buf, len, "\nothers:");
    int others = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const long tid = atol(e->d_name);
        int mine = tid <= 0;
        for (int t = 0; t < got && !mine; ++t) mine = tids[t] == tid;
        if (mine) continue;
        char cpus[256];
        task_cpus(tid, cpus, sizeof cpus);
        add(buf, len, " [%s]", cpus);
        ++others;
    }
    if (d) closedir(d);
    if (!others) add(buf, len, " (none)");
    free(tids);
}
