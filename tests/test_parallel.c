/* SPDX-License-Identifier: BSD-3-Clause */
/* The CPU team-size rule (src/core/parallel.c): the model's best team,
 * monotone in the work; the chosen team bounded by the threads asked for,
 * the CPUs, a cgroup quota and OMP_NUM_THREADS; the modelled time never
 * worse with more threads; the noted MTTKRP team kept by the dense steps
 * (no libgomp thread created and ended between them), per thread and not
 * inside a parallel region; a rank's share of its host's CPUs as the
 * default, fixed once, not over OMP_NUM_THREADS nor a request; the
 * parallel in-place move down. */
#include <stdlib.h>
#include <pthread.h>
#include <sched.h>

#include "check.h"
#include "core/parallel.h"
#include "tenfold.h"

#define WAKE TF_TEAM_WAKE_WORK

static void best_team(void)
{
    CHECK(tf_team_best(0) == 1);
    CHECK(tf_team_best(4 * WAKE - 1) == 1);
    CHECK(tf_team_best(4 * WAKE) == 2);
    CHECK(tf_team_best(9 * WAKE - 1) == 2);
    CHECK(tf_team_best(9 * WAKE) == 3);
    CHECK(tf_team_best(1024 * WAKE) == 32);
    CHECK(tf_team_best(UINT64_MAX) >= 1);
    /* floor(sqrt(W / WAKE)) and non-decreasing, over squares and between them */
    int prev = 1, bad = 0;
    for (uint64_t w = 1; w < (1ull << 44); w += w / 7 + 1) {
        const int b = tf_team_best(w);
        const uint64_t q = w / WAKE;
        if (b < prev || (q >= 1 && !((uint64_t)b * (uint64_t)b <= q && (uint64_t)(b + 1) * (uint64_t)(b + 1) > q)))
            ++bad;
        prev = b;
    }
    CHECKF(bad == 0, "%d works break floor(sqrt(W / 2^18)) or its order", bad);
    /* the examples of parallel.h: nycflights13 and uber at rank 16, a 20M-non-zero 3-mode tensor */
    CHECK(tf_team_best(318818ull * 16 * 5) == 9);
    CHECK(tf_team_best(416744ull * 16 * 4) == 10);
    CHECK(tf_team_best(20000000ull * 16 * 3) == 60);
}

/* tf_team_choose over caps, units, pools and works: bounds, and its order */
static void choose(void)
{
    static const uint64_t caps[] = {1, 2, 3, 4, 8, 16, 32, 64, 128};
    static const uint64_t units[] = {1, 2, 5, 64, 1ull << 40};
    static const uint64_t pools[] = {0, 1, 2, 4, 9, 16, 32, 64, 200};
    int out_of_bounds = 0, not_monotone = 0, slower = 0, cases = 0;
    for (size_t u = 0; u < sizeof units / sizeof *units; ++u)
        for (size_t p = 0; p < sizeof pools / sizeof *pools; ++p) {
            const uint64_t pool = pools[p];
            for (size_t c = 0; c < sizeof caps / sizeof *caps; ++c) {
                const uint64_t cap = caps[c];
                int prev = 1;
                for (uint64_t w = 0; w < (1ull << 40); w += w / 5 + 1) {
                    const int T = tf_team_choose(cap, units[u], w, pool);
                    ++cases;
                    /* at most cap; at most the units unless it keeps the pool's team */
                    if (T < 1 || (uint64_t)T > cap || ((uint64_t)T > units[u] && (uint64_t)T != pool)) ++out_of_bounds;
                    if (T < prev) ++not_monotone;
                    prev = T;
                    /* more threads allowed: the modelled cost of the choice is never higher */
                    if (c > 0) {
                        const int Tless = tf_team_choose(caps[c - 1], units[u], w, pool);
                        const double now = tf_team_cost(w, units[u], (uint64_t)T, pool);
                        const double before = tf_team_cost(w, units[u], (uint64_t)Tless, pool);
                        if (now > before * (1 + 1e-12)) ++slower;
                    }
                }
            }
        }
    CHECKF(out_of_bounds == 0, "%d of %d choices outside 1..cap (or past the units)", out_of_bounds, cases);
    CHECKF(not_monotone == 0, "%d of %d choices smaller than for less work", not_monotone, cases);
    CHECKF(slower == 0, "%d of %d choices cost more than with fewer threads allowed", slower, cases);

    /* small work runs serially whatever the pool */
    CHECK(tf_team_choose(32, 1ull << 40, TF_TEAM_MIN_WORK - 1, 0) == 1);
    CHECK(tf_team_choose(32, 1ull << 40, TF_TEAM_MIN_WORK - 1, 32) == 1);
    CHECK(tf_team_choose(32, 1ull << 40, TF_TEAM_MIN_WORK, 0) == 1); /* a tie: W/2 + 2 WAKE = W */
    CHECK(tf_team_choose(32, 1ull << 40, TF_TEAM_MIN_WORK + 2, 0) == 2);
    /* no pool: the model's best, capped */
    CHECK(tf_team_choose(32, 1ull << 40, 100 * WAKE, 0) == 10);
    CHECK(tf_team_choose(4, 1ull << 40, 100 * WAKE, 0) == 4);
    CHECK(tf_team_choose(32, 3, 100 * WAKE, 0) == 3);
    /* a step whose own best is a third of the MTTKRP's 32 threads keeps them */
    CHECK(tf_team_choose(32, 1ull << 40, 120 * WAKE, 32) == 32);
    /* a much larger one grows past the pool only where the creations pay:
     * W / T + T (WAKE + SPAWN) is least at sqrt(W / (WAKE + SPAWN)) */
    CHECK(tf_team_choose(64, 1ull << 40, 64 * 64 * WAKE, 9) == 29); /* sqrt(4096 / 5) = 28.6 */
    CHECK(tf_team_choose(64, 1ull << 40, 1ull << 50, 9) == 64);
    /* the pool's team is kept where the units are fewer (its threads are alive) */
    CHECK(tf_team_choose(32, 4, 1000 * WAKE, 16) == 16);
    /* a pool past the cap is not used */
    CHECK(tf_team_choose(8, 1ull << 40, 1000 * WAKE, 32) == 8);
}

/* The rule's bounds in the process: threads asked for, CPUs, the quota, OMP_NUM_THREADS. */
static void bounds(void)
{
    const int cpus = tf_team_cpus();
    cpu_set_t set;
    CPU_ZERO(&set);
    int mask = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0) mask = CPU_COUNT(&set);
    CHECKF(cpus >= 1 && (mask == 0 || cpus <= mask), "team CPUs %d, mask %d", cpus, mask);
    if (tf_cpu_quota() > 0) CHECKF(cpus <= tf_cpu_quota(), "team CPUs %d over the quota %d", cpus, tf_cpu_quota());
    const uint64_t huge = 1ull << 50;
    tf_team_note(0);
    for (int t = 1; t <= 64; t *= 2) {
        const int want = t < cpus ? t : cpus;
        CHECKF(tf_team_for_work(t, huge, huge) == want, "threads %d: team %d, expected %d", t,
               tf_team_for_work(t, huge, huge), want);
        CHECKF(tf_mttkrp_team(t, huge, 16, 3) == want, "threads %d: MTTKRP team %d", t, tf_mttkrp_team(t, huge, 16, 3));
        CHECK(tf_mttkrp_team(t, 1, 16, 3) == 1);            /* one non-zero */
        CHECK(tf_team_for_work(t, huge, 1000) == 1);         /* little work */
    }
#ifdef _OPENMP
    /* the default (threads 0) follows OpenMP's count, as OMP_NUM_THREADS sets it */
    const int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    CHECK(tf_team_for_work(0, huge, huge) == 1);
    CHECK(tf_mttkrp_team(0, huge, 16, 3) == 1);
    omp_set_num_threads(2);
    CHECK(tf_team_for_work(0, huge, huge) == (cpus < 2 ? cpus : 2));
    omp_set_num_threads(saved);
#endif
}

static void *other_thread(void *arg)
{
    *(int *)arg = tf_team_note(0); /* this thread's own note: none */
    return NULL;
}

/* tf_team_note: per thread, ignored inside a parallel region; dense steps keep the noted team */
static void noted_team(void)
{
    tf_team_note(0);
    CHECK(tf_team_note(7) == 0);
    CHECK(tf_team_note(5) == 7);
    CHECK(tf_team_note(1) == 5); /* a team of one is no pool */
    CHECK(tf_team_note(0) == 0);
    tf_team_note(6);
    int seen = -1;
    pthread_t th;
    if (pthread_create(&th, NULL, other_thread, &seen) == 0) {
        pthread_join(th, NULL);
        CHECK(seen == 0);
    }
    CHECK(tf_team_note(6) == 6);
    int inside = -1;
#pragma omp parallel num_threads(1)
    inside = tf_team_note(3); /* no effect in a region */
    CHECK(inside == 6);
    CHECK(tf_team_note(0) == 6);

    /* with 2 CPUs or more: a step whose own best is 2 keeps a noted team of 2 */
    if (tf_team_cpus() >= 2) {
        tf_team_note(2);
        CHECK(tf_team_for_work(2, 1ull << 40, 5 * WAKE) == 2);
        tf_team_note(0);
    }
}

/* tf_threads_share_fix (the ranks' first roll, src/ranks/mpi.c): last, as
 * it holds the process's default from then on */
static void rank_share(void)
{
    int cpus = -1, ranks = -1;
    CHECK(unsetenv("OMP_NUM_THREADS") == 0);
    CHECK(tf_default_threads_shared(&cpus, &ranks) == 0 && cpus == 0 && ranks == 0);
#ifdef _OPENMP
    const uint64_t huge = 1ull << 50;
    omp_set_num_threads(4);
    tf_threads_share_fix(1, 8, 2);
    tf_threads_share_fix(3, 6, 2); /* the first decides */
    CHECK(tf_default_threads() == 1 && tf_resolve_threads(0) == 1);
    CHECK(tf_default_threads_shared(&cpus, &ranks) == 1 && cpus == 8 && ranks == 2);
    CHECK(tf_team_for_work(0, huge, huge) == 1);
    CHECK(tf_resolve_threads(3) == 3); /* a request is not held to it */
    CHECK(tf_team_for_work(2, huge, huge) == (tf_team_cpus() < 2 ? tf_team_cpus() : 2));
    /* OMP_NUM_THREADS: OpenMP's count, no share said */
    CHECK(setenv("OMP_NUM_THREADS", "4", 1) == 0);
    CHECK(tf_default_threads() == 4);
    CHECK(tf_default_threads_shared(&cpus, &ranks) == 0 && cpus == 0 && ranks == 0);
    CHECK(unsetenv("OMP_NUM_THREADS") == 0);
    CHECK(tf_default_threads() == 1);
#else
    tf_threads_share_fix(1, 8, 2);
    CHECK(tf_default_threads() == 1 && tf_default_threads_shared(NULL, NULL) == 0);
#endif
}

/* tf_move_down_parallel equals memmove(base, base + shift, bytes): parts on
 * 4 threads (arrays of >= 64 MiB a part), shifts unaligned, within a part,
 * past one (the serial fallback), and none. */
static void move_down(void)
{
    const size_t bytes = (size_t)257 << 20, most = (size_t)100 << 20;
    unsigned char *a = malloc(bytes + most), *b = malloc(bytes + most);
    if (!a || !b) {
        CHECK(!"no memory for the move test");
        free(a);
        free(b);
        return;
    }
    const size_t shifts[] = {0, 1, 12345, (size_t)40 << 20, most};
    for (size_t i = 0; i < sizeof shifts / sizeof *shifts; ++i) {
        for (size_t k = 0; k < bytes + most; ++k) a[k] = b[k] = (unsigned char)((k * 2654435761u) >> 13);
        tf_move_down_parallel(a, shifts[i], bytes, 4);
        memmove(b, b + shifts[i], bytes);
        CHECK(memcmp(a, b, bytes + most) == 0);
    }
    free(a);
    free(b);
}

int main(void)
{
    move_down();
    best_team();
    choose();
    bounds();
    noted_team();
    rank_share();
    return tf_test_finish("test_parallel");
}
