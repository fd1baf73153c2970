/* SPDX-License-Identifier: BSD-3-Clause */
#include "core/parallel.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/cgroup.h"
#include "core/environment.h"
#include "tenfold.h"

/* 4 per online CPU, at least 64: far more than helps, far fewer than break
 * things. libgomp starts a team with an alloca of its threads' start data
 * on the caller's stack (a million threads overflowed it: a crash in
 * GOMP_parallel), then a thread each with the default stack, and tenfold's
 * kernels keep per-thread buffers. */
int tf_thread_limit(void)
{
    static int limit; /* computed once; a racing second computation writes the same */
    int l = __atomic_load_n(&limit, __ATOMIC_RELAXED);
    if (l) return l;
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const long want = cpus > 0 ? 4 * cpus : 64;
    l = want < 64 ? 64 : want > 1 << 20 ? 1 << 20 : (int)want;
    __atomic_store_n(&limit, l, __ATOMIC_RELAXED);
    return l;
}

/* ------------------------------------------------------------ CPU quota */

/* quota / period of a cpu.max ("max 100000" or "200000 100000") or of
 * cgroup v1's two files; 0 if unlimited or unreadable. */
static double read_quota_v2(const char *dir)
{
    char path[4300], q[32] = "";
    double period = 0.0;
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0.0;
    int n = fscanf(f, "%31s %lf", q, &period);
    fclose(f);
    if (n != 2 || !strcmp(q, "max") || period <= 0.0) return 0.0;
    return atof(q) / period;
}

static double read_quota_v1(void)
{
    double quota = -1.0, period = 0.0;
    FILE *f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", "r");
    if (f) { if (fscanf(f, "%lf", &quota) != 1) quota = -1.0; fclose(f); }
    f = fopen("/sys/fs/cgroup/cpu/cpu.cfs_period_us", "r");
    if (f) { if (fscanf(f, "%lf", &period) != 1) period = 0.0; fclose(f); }
    return quota > 0.0 && period > 0.0 ? quota / period : 0.0;
}

/* The smallest cpu.max on the path from this process's cgroup (v2) up to
 * the root, else cgroup v1's quota. */
static double read_quota(void)
{
    char dir[4200];
    tf_cgroup_self(dir, sizeof dir);
    double best = 0.0;
    do { /* "/a/b", then "/a", then "" (the root) */
        const double q = read_quota_v2(dir);
        if (q > 0.0 && (best == 0.0 || q < best)) best = q;
    } while (tf_cgroup_up(dir));
    return best > 0.0 ? best : read_quota_v1();
}

static int quota_cpus;
static void find_quota(void)
{
    const double q = read_quota();
    quota_cpus = q > 0.0 ? (int)(q + 0.999) : 0;
    if (q > 0.0 && quota_cpus < 1) quota_cpus = 1;
}

int tf_cpu_quota(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_quota);
    return quota_cpus;
}

/* -------------------------------------------------------------- threads */

/* This rank's share of CPUs it shares with ranks of its host (0: none),
 * the CPUs and the ranks; fixed by the first call of tf_threads_share_fix. */
static int share_fixed, share_team, share_cpus, share_ranks;

void tf_threads_share_fix(int team, int cpus, int ranks)
{
    int expect = 0;
    if (!__atomic_compare_exchange_n(&share_fixed, &expect, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
    if (team < 1 || ranks < 2) return;
    __atomic_store_n(&share_cpus, cpus, __ATOMIC_RELAXED);
    __atomic_store_n(&share_ranks, ranks, __ATOMIC_RELAXED);
    __atomic_store_n(&share_team, team, __ATOMIC_RELEASE);
}

int tf_default_threads(void)
{
#ifdef _OPENMP
    int n = omp_get_max_threads();
    /* OpenMP counts the CPUs of the mask; a quota (containers) gives fewer,
     * and a team larger than it only waits on the scheduler; so does one
     * of all the CPUs that other ranks of the host run teams on too */
    if (!tf_env_omp_num_threads_set()) {
        const int q = tf_cpu_quota(), s = __atomic_load_n(&share_team, __ATOMIC_ACQUIRE);
        if (q > 0 && q < n) n = q;
        if (s > 0 && s < n) n = s;
    }
    const int cap = tf_thread_limit(); /* OMP_NUM_THREADS=65536 */
    return n < 1 ? 1 : n > cap ? cap : n;
#else
    return 1;
#endif
}

int tf_default_threads_shared(int *cpus, int *ranks)
{
    if (cpus) *cpus = 0;
    if (ranks) *ranks = 0;
#ifdef _OPENMP
    const int s = __atomic_load_n(&share_team, __ATOMIC_ACQUIRE);
    if (s < 1 || tf_default_threads() != s) return 0; /* OMP_NUM_THREADS, or fewer asked of OpenMP */
    if (cpus) *cpus = __atomic_load_n(&share_cpus, __ATOMIC_RELAXED);
    if (ranks) *ranks = __atomic_load_n(&share_ranks, __ATOMIC_RELAXED);
    return s;
#else
    return 0;
#endif
}

int tf_resolve_threads(int requested)
{
    if (requested <= 0) return tf_default_threads();
    const int cap = tf_thread_limit();
    return requested > cap ? cap : requested;
}

/* floor(sqrt(q)) */
static uint64_t isqrt(uint64_t q)
{
    uint64_t b = (uint64_t)sqrt((double)q);
    while (b > 0 && b > q / b) --b; /* the double's rounding, either way */
    while ((b + 1) <= q / (b + 1)) ++b;
    return b;
}

int tf_team_best(uint64_t work)
{
    const uint64_t b = isqrt(work / TF_TEAM_WAKE_WORK);
    return b < 1 ? 1 : b > (1u << 20) ? 1 << 20 : (int)b;
}

static int team_cpus;
static void count_team_cpus(void)
{
    size_t size = 0;
    cpu_set_t *set = tf_process_cpus(&size);
    int n = set ? CPU_COUNT_S(size, set) : 0;
    if (set) CPU_FREE(set);
    if (n < 1) {
        const long online = sysconf(_SC_NPROCESSORS_ONLN);
        n = online > 0 ? (int)(online > (1 << 20) ? 1 << 20 : online) : 1;
    }
    const int q = tf_cpu_quota();
    team_cpus = q > 0 && q < n ? q : n;
}

int tf_team_cpus(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, count_team_cpus);
    return team_cpus;
}

/* The team of the calling thread's last MTTKRP (0: none), per thread as
 * libgomp keeps one set of threads per thread that starts teams. */
static _Thread_local int noted_team;

static int in_parallel(void)
{
#ifdef _OPENMP
    return omp_get_level() > 0;
#else
    return 0;
#endif
}

int tf_team_note(int team)
{
    const int before = noted_team;
    if (!in_parallel()) noted_team = team > 1 ? team : 0;
    return before;
}

/* The most threads a team of the caller may have: the request (0: the
 * default) and the CPUs. */
static uint64_t team_cap(int threads)
{
    const uint64_t t = (uint64_t)tf_resolve_threads(threads), c = (uint64_t)tf_team_cpus();
    return t < c ? t : c;
}

double tf_team_cost(uint64_t work, uint64_t units, uint64_t T, uint64_t pool)
{
    if (T <= 1) return (double)work;
    const uint64_t busy = T < units ? T : units;
    double c = (double)work / (double)busy + (double)T * (double)TF_TEAM_WAKE_WORK;
    if (pool > 1) c += (double)(T > pool ? T - pool : pool - T) * (double)TF_TEAM_SPAWN_WORK;
    return c;
}

int tf_team_choose(uint64_t cap, uint64_t units, uint64_t work, uint64_t pool)
{
    /* The cost is convex in T on 2..M (M = min(cap, units)): W / T + T * WAKE
     * without a pool; with one, falling up to the pool's size (a thread less
     * saves a wake-up but costs a creation) and W / T + T * (WAKE + SPAWN)
     * past it. So the least is at 2, M, the pool's size, or next to the
     * stationary point of its piece; and at the pool's size when the units
     * hold fewer. Ties go to the smaller team (one thread: no region). */
    const uint64_t M = cap < units ? cap : units;
    uint64_t cand[8];
    int n = 0;
    cand[n++] = 2;
    cand[n++] = M;
    if (pool > 1) {
        const uint64_t s = isqrt(work / (TF_TEAM_WAKE_WORK + TF_TEAM_SPAWN_WORK));
        cand[n++] = pool;
        cand[n++] = s > pool ? s : pool;
        cand[n++] = s + 1 > pool ? s + 1 : pool;
    } else {
        const uint64_t s = isqrt(work / TF_TEAM_WAKE_WORK);
        cand[n++] = s;
        cand[n++] = s + 1;
    }
    uint64_t team = 1;
    double cost = (double)work;
    for (int i = 0; i < n; ++i) {
        uint64_t T = cand[i];
        if (!(pool > 1 && T == pool && T <= cap)) T = T < 2 ? 2 : T > M ? M : T; /* the pool's size may pass the units */
        if (T < 2 || T > cap) continue;
        const double c = tf_team_cost(work, units, T, pool);
        if (c < cost || (c == cost && T < team)) {
            team = T;
            cost = c;
        }
    }
    return (int)team;
}

int tf_team_for_work(int threads, uint64_t units, uint64_t work)
{
    return tf_team_choose(team_cap(threads), units, work, in_parallel() ? 0 : (uint64_t)noted_team);
}

int tf_mttkrp_team(int threads, uint64_t nnz, uint64_t R, uint32_t order)
{
    return tf_team_choose(team_cap(threads), nnz, nnz * R * order, 0);
}

/* The calling thread's mask (a CPU_ALLOC set), or NULL. */
static cpu_set_t *own_mask(size_t *size)
{
    for (int cpus = 1024; cpus <= (1 << 16); cpus *= 2) {
        cpu_set_t *set = CPU_ALLOC(cpus);
        if (!set) break;
        *size = CPU_ALLOC_SIZE(cpus);
        if (sched_getaffinity(0, *size, set) == 0) return set;
        CPU_FREE(set);
    }
    *size = 0;
    return NULL;
}

void *tf_process_cpus(size_t *size)
{
    *size = 0;
#ifdef _OPENMP
    if (omp_get_proc_bind() != omp_proc_bind_false && omp_get_num_places() > 0) {
        const int np = omp_get_num_places();
        int top = 0, ids[1024];
        for (int p = 0; p < np; ++p) {
            const int n = omp_get_place_num_procs(p);
            if (n > 1024) return own_mask(size);
            omp_get_place_proc_ids(p, ids);
            for (int k = 0; k < n; ++k) top = ids[k] > top ? ids[k] : top;
        }
        cpu_set_t *set = CPU_ALLOC(top + 1);
        if (!set) return NULL;
        *size = CPU_ALLOC_SIZE(top + 1);
        CPU_ZERO_S(*size, set);
        for (int p = 0; p < np; ++p) {
            const int n = omp_get_place_num_procs(p);
            omp_get_place_proc_ids(p, ids);
            for (int k = 0; k < n; ++k) CPU_SET_S(ids[k], *size, set);
        }
        return set;
    }
#endif
    return own_mask(size);
}

void *tf_unbind_begin(size_t *size)
{
    size_t nall = 0, nmine = 0;
    cpu_set_t *all = tf_process_cpus(&nall);
    cpu_set_t *mine = all ? own_mask(&nmine) : NULL;
    void *saved = NULL;
    if (mine && CPU_COUNT_S(nmine, mine) < CPU_COUNT_S(nall, all) &&
        pthread_setaffinity_np(pthread_self(), nall, all) == 0) {
        saved = mine;
        *size = nmine;
    } else if (mine) {
        CPU_FREE(mine);
    }
    if (all) CPU_FREE(all);
    return saved;
}

void tf_unbind_end(void *saved, size_t size)
{
    if (!saved) return;
    pthread_setaffinity_np(pthread_self(), size, saved);
    CPU_FREE(saved);
}

void tf_unbind_self(void)
{
    size_t size = 0;
    void *saved = tf_unbind_begin(&size);
    if (saved) CPU_FREE(saved);
}

void tf_doubles_to_floats(const double *src, float *dst, uint64_t n)
{
    const int64_t nn = (int64_t)n;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) if (nn > 65536)
    for (int64_t k = 0; k < nn; ++k) dst[k] = (float)src[k];
}

void tf_floats_to_doubles(const float *src, double *dst, uint64_t n)
{
    const int64_t nn = (int64_t)n;
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) if (nn > 65536)
    for (int64_t k = 0; k < nn; ++k) dst[k] = src[k];
}

void tf_copy_bytes(void *dst, const void *src, uint64_t n)
{
    enum { PIECE = 1 << 17 }; /* 128 KiB a piece: a 2 MiB staging buffer keeps 16 threads busy */
    const int64_t np = (int64_t)((n + PIECE - 1) / PIECE);
#pragma omp parallel for num_threads(tf_default_threads()) schedule(static) if (np > 2)
    for (int64_t k = 0; k < np; ++k) {
        const uint64_t at = (uint64_t)k * PIECE, len = n - at < PIECE ? n - at : PIECE;
        memcpy((char *)dst + at, (const char *)src + at, len);
    }
}

uint64_t tf_bucket_offsets_strided(uint64_t *hist, uint64_t stride, uint64_t *start, uint64_t nb, int nt)
{
    uint64_t run = 0;
    for (uint64_t b = 0; b < nb; ++b) {
        start[b] = run;
        for (int u = 0; u < nt; ++u) {
            const uint64_t c = hist[(uint64_t)u * stride + b];
            hist[(uint64_t)u * stride + b] = run;
            run += c;
        }
    }
    return run;
}

uint64_t tf_bucket_offsets(uint64_t *hist, uint64_t *start, uint64_t nb, int nt)
{
    return tf_bucket_offsets_strided(hist, nb, start, nb, nt);
}

#define COPY_PART_MIN ((size_t)64 << 20)

void tf_move_down_parallel(void *base, size_t shift, size_t bytes, int threads)
{
    char *b = base;
    int T = tf_resolve_threads(threads);
    if ((size_t)T > bytes / COPY_PART_MIN) T = (int)(bytes / COPY_PART_MIN);
    const size_t part = T > 0 ? (bytes + (size_t)T - 1) / (size_t)T : bytes;
    char *keep = NULL;
    if (T >= 2 && shift && bytes - (size_t)(T - 1) * part >= shift) keep = malloc((size_t)T * shift);
    if (!keep) {
        if (bytes && shift) memmove(b, b + shift, bytes);
        return;
    }
    int whole_team = 1;
#pragma omp parallel num_threads(T)
    if (tf_thread_count() != T) { /* a smaller team than asked (nested): one move */
#pragma omp single
        whole_team = 0;
    } else {
        const int t = tf_thread_id();
        const size_t lo = (size_t)t * part, hi = lo + part < bytes ? lo + part : bytes;
        memcpy(keep + (size_t)t * shift, b + hi, shift); /* the next part's head, before it is written */
#pragma omp barrier
        memmove(b + lo, b + lo + shift, hi - lo - shift);
        memcpy(b + hi - shift, keep + (size_t)t * shift, shift);
    }
    free(keep);
    if (!whole_team) memmove(b, b + shift, bytes);
}

void tf_copy_parallel(void *dst, const void *src, size_t bytes, int threads)
{
    int T = tf_resolve_threads(threads);
    if ((size_t)T > bytes / COPY_PART_MIN) T = (int)(bytes / COPY_PART_MIN);
    if (T < 2) {
        if (bytes) memcpy(dst, src, bytes);
        return;
    }
    const size_t part = (bytes + (size_t)T - 1) / (size_t)T;
#pragma omp parallel for num_threads(T) schedule(static, 1)
    for (int t = 0; t < T; ++t) {
        const size_t lo = (size_t)t * part, hi = lo + part < bytes ? lo + part : bytes;
        if (lo < hi) memcpy((char *)dst + lo, (const char *)src + lo, hi - lo);
    }
}
