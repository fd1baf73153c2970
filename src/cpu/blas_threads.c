/* SPDX-License-Identifier: BSD-3-Clause */
/* OpenBLAS's thread controls, looked up at run time. See blas_threads.h. */
#include "cpu/blas_threads.h"

#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "core/environment.h"

/* weak: a static link resolves them, any BLAS links */
extern int openblas_get_num_threads(void) __attribute__((weak));
extern void openblas_set_num_threads(int) __attribute__((weak));
extern int openblas_get_parallel(void) __attribute__((weak));

typedef struct openblas_api {
    int (*get)(void);
    void (*set)(int);
    int (*parallel)(void); /* 0 sequential, 1 pthreads, 2 OpenMP */
} openblas_api;

static int find(openblas_api *a)
{
    a->get = openblas_get_num_threads;
    a->set = openblas_set_num_threads;
    a->parallel = openblas_get_parallel;
    /* a dynamic OpenBLAS behind a generic libblas.so.3 (the weak references
     * were bound at link time, to whatever was there then) */
    void *s;
    if (!a->get && (s = dlsym(RTLD_DEFAULT, "openblas_get_num_threads"))) memcpy(&a->get, &s, sizeof s);
    if (!a->set && (s = dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) memcpy(&a->set, &s, sizeof s);
    if (!a->parallel && (s = dlsym(RTLD_DEFAULT, "openblas_get_parallel"))) memcpy(&a->parallel, &s, sizeof s);
    return a->get && a->set;
}

/* 1 if OpenBLAS runs its own pthreads (or says nothing of its threading) */
static int own_pthreads(const openblas_api *a) { return !a->parallel || a->parallel() == 1; }

int tf_blas_is_openblas(void)
{
    static int known = -1; /* a racing second look finds the same */
    int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
    if (k < 0) {
        openblas_api a;
        k = find(&a);
        __atomic_store_n(&known, k, __ATOMIC_RELAXED);
    }
    return k;
}

void tf_blas_threads_query(tf_blas_threads_info *out)
{
    openblas_api a;
    memset(out, 0, sizeof *out);
    out->name = "";
    out->kind = "";
    out->threads = 1;
    if (!find(&a)) return;
    static const char *const kinds[] = {"sequential", "pthreads", "OpenMP"};
    const int p = a.parallel ? a.parallel() : 1;
    out->name = "OpenBLAS";
    out->kind = p >= 0 && p <= 2 ? kinds[p] : "";
    out->threads = a.get();
    out->pinned = own_pthreads(&a) && out->threads > 1;
}

int tf_blas_threads_pin_single(void)
{
    openblas_api a;
    if (!find(&a) || !own_pthreads(&a)) return 0;
    const int previous = a.get();
    if (previous != 1) a.set(1);
    return previous;
}

void tf_blas_threads_restore(int previous)
{
    openblas_api a;
    if (previous > 1 && find(&a)) a.set(previous);
}

void tf_blas_threads_cap(int most)
{
    openblas_api a;
    if (most < 1 || tf_env_openblas_num_threads() || !find(&a) || !own_pthreads(&a)) return;
    if (a.get() > most) a.set(most);
}
