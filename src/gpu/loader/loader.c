/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend of a CUDA build, as libtenfold finds it: the module
 * libtenfold_cuda.so, loaded on the first call that needs it, once per
 * process (seams/cuda_module.h); the entry points of the seams
 * (src/seams) and the public device queries reach it through
 * tf_cuda_backend (their front ends: src/gpu/entry). Until then nothing of
 * CUDA is in the process: `tenfold --version` or a run on the CPU stays as
 * light as in a CPU-only build. Without the module every entry point
 * answers as in a CPU-only build, naming the reason. A program that links
 * the CUDA objects itself (the GPU tests) defines tf_cuda_api_table, which
 * is used instead, so the process never holds two copies of the backend. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seams/cuda_module.h"
#include "core/build_config.h"
#include "core/environment.h"
#include "core/error.h"

#pragma weak tf_cuda_api_table

#define TF_LINKED_IN "linked into the program"

static const tf_cuda_core_api core_api = {
    sizeof(tf_cuda_core_api),
    TF_VERSION_STRING,
    TF_BUILD_COMMIT,
    TF_CUDA_ABI_SIZES,
    tf_fail,
#define TF_CORE_PTR_(ret, name, params, args) name,
    TF_CUDA_CORE(TF_CORE_PTR_) TF_CUDA_CORE_VOID(TF_CORE_PTR_)
#undef TF_CORE_PTR_
};

static pthread_once_t find_once = PTHREAD_ONCE_INIT, load_once = PTHREAD_ONCE_INIT;
static int found;              /* the module file exists (or is linked in)            */
static char module_path[PATH_MAX + 64];
static char why_not[PATH_MAX + 512]; /* why there is no backend: where we looked, dlerror */
static const tf_cuda_api *api; /* set once by load_module                              */
static int loaded;             /* load_module has run (atomic)                          */

/* The directory of the shared object or program that holds this code. */
static int own_dir(char *dir, size_t len)
{
    char path[PATH_MAX];
    Dl_info info;
    struct link_map *map = NULL;
    if (dladdr1((void *)(uintptr_t)&own_dir, &info, (void **)&map, RTLD_DL_LINKMAP) && map && map->l_name &&
        map->l_name[0]) {
        if (!realpath(map->l_name, path)) return 0;
    } else { /* the program itself */
        const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n <= 0) return 0;
        path[n] = '\0';
    }
    char *slash = strrchr(path, '/');
    if (!slash) return 0;
    *slash = '\0';
    return snprintf(dir, len, "%s", path[0] ? path : "/") < (int)len;
}

static void find_module(void)
{
    if (tf_cuda_api_table) {
        found = 1;
        snprintf(module_path, sizeof module_path, TF_LINKED_IN);
        return;
    }
    const char *env = tf_env_cuda_module();
    if (env) {
        found = access(env, F_OK) == 0; /* dlopen gets the full path: no library search */
        if (!found || !realpath(env, module_path)) snprintf(module_path, sizeof module_path, "%s", env);
        if (!found) snprintf(why_not, sizeof why_not, "TF_CUDA_MODULE=%s does not exist", env);
        return;
    }
    /* build tree: beside; installed library: LIBDIR/tenfold; installed tool:
     * BINDIR/../lib/tenfold; a program linking libtenfold.a: the prefix's */
    static const char *const rel[] = {"", "/tenfold", "/" TF_BINDIR_TO_LIBDIR "/tenfold"};
    char dir[PATH_MAX], cand[PATH_MAX + 64];
    size_t used = 0;
    char looked[sizeof why_not - 128] = "";
    const int have_dir = own_dir(dir, sizeof dir);
    for (int i = 0; i < 4; ++i) {
        if (i < 3 && !have_dir) continue;
        if (i < 3) snprintf(cand, sizeof cand, "%s%s/" TF_CUDA_MODULE_FILE, dir, rel[i]);
        else snprintf(cand, sizeof cand, "%s/tenfold/" TF_CUDA_MODULE_FILE, TF_INSTALL_LIBDIR);
        if (access(cand, F_OK) == 0) {
            if (!realpath(cand, module_path)) snprintf(module_path, sizeof module_path, "%s", cand);
            found = 1;
            return;
        }
        const char *slash = strrchr(cand, '/');
        const int n = snprintf(looked + used, sizeof looked - used, "%s%.*s", used ? ", " : "", (int)(slash - cand),
                               cand);
        if (n > 0 && (size_t)n < sizeof looked - used) used += (size_t)n;
    }
    snprintf(why_not, sizeof why_not, TF_CUDA_MODULE_FILE " was not found (looked in %s)",
             used ? looked : "no place: the library's own path is unknown");
}

static void load_module(void)
{
    pthread_once(&find_once, find_module);
    if (tf_cuda_api_table) {
        api = tf_cuda_api_table();
    } else if (found) {
        void *h = dlopen(module_path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            const char *e = dlerror();
            snprintf(why_not, sizeof why_not, "%s did not load: %s", module_path,
                     e ? e : "unknown error");
        } else {
            tf_cuda_module_entry_fn entry;
            void *sym = dlsym(h, TF_CUDA_MODULE_ENTRY);
            memcpy(&entry, &sym, sizeof entry);
            char why[512] = "";
            const tf_cuda_api *a = sym ? entry(&core_api, why, sizeof why) : NULL;
            if (a && a->size == sizeof *a) {
                api = a;
            } else {
                snprintf(why_not, sizeof why_not, "%s does not fit this library: %s",
                         module_path, !sym ? "it has no " TF_CUDA_MODULE_ENTRY : why[0] ? why : "its table differs");
                dlclose(h);
            }
        }
    }
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

/* The backend, loading it on first use; NULL when there is none. */
static const tf_cuda_api *cuda(void)
{
    pthread_once(&load_once, load_module);
    return api;
}

int tf_have_cuda(void) { return cuda() != NULL; }

tf_cuda_module_state tf_cuda_module(int load, char *where, size_t len)
{
    if (load) pthread_once(&load_once, load_module);
    pthread_once(&find_once, find_module);
    tf_cuda_module_state st;
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE))
        st = api ? TF_CUDA_MODULE_LOADED : found ? TF_CUDA_MODULE_FAILED : TF_CUDA_MODULE_MISSING;
    else
        st = found ? TF_CUDA_MODULE_FOUND : TF_CUDA_MODULE_MISSING;
    if (where && len)
        snprintf(where, len, "%s", st == TF_CUDA_MODULE_LOADED || st == TF_CUDA_MODULE_FOUND ? module_path : why_not);
    return st;
}

int tf_cuda_driver_visible(void)
{
    static const char *const paths[] = {"/dev/nvidiactl", "/dev/nvidia0", "/dev/dxg" /* WSL */,
                                        "/proc/driver/nvidia/version", "/usr/bin/nvidia-modprobe"};
    for (size_t i = 0; i < sizeof paths / sizeof *paths; ++i)
        if (access(paths[i], F_OK) == 0) return 1;
    return 0;
}

/* ---- what the entry points (src/gpu/entry) call ---- */

const tf_cuda_api *tf_cuda_backend(int load)
{
    if (load) return cuda();
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE) ? api : NULL;
}

tf_status tf_cuda_unavailable(const char *what)
{
    /* not loaded yet: an entry that never loads it was called first */
    const char *why = __atomic_load_n(&loaded, __ATOMIC_ACQUIRE) ? why_not : "is not loaded";
    if (!what) return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA backend: its module %s", why);
    return tf_fail(TF_ERR_UNAVAILABLE, "%s the CUDA backend, whose module %s", what, why);
}
