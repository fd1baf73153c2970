/* SPDX-License-Identifier: BSD-3-Clause */
/* The CUDA backend of a CUDA build, as libtenfold sees it: the entry points
 * of the seams (src/backend) and the public device queries, forwarded to
 * the module libtenfold_cuda.so, which is loaded on the first call that
 * needs it, once per process (backend/cuda_module.h). Until then nothing of
 * CUDA is in the process: `tenfold --version` or a run on the CPU stays as
 * light as in a CPU-only build. Without the module every entry point
 * answers like src/gpu/none, naming the reason. A program that links the
 * CUDA objects itself (the GPU tests) defines tf_cuda_api_table, which is
 * used instead, so the process never holds two copies of the backend. */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/cuda_module.h"
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

/* ---- the entry points ---- */

int tf_have_cuda(void) { return cuda() != NULL; }

int tf_gpu_count(void)
{
    if (!tf_cuda_driver_visible()) return 0; /* nothing to find, nothing to load */
    const tf_cuda_api *a = cuda();
    return a ? a->tf_gpu_count() : 0;
}

/* A device argument of fn: 0 .. the GPUs present - 1 (with none present, a
 * device >= 0 goes on to say why there is none). */
static tf_status device_arg(const char *fn, int device)
{
    if (device < 0) return tf_fail(TF_ERR_ARG, "%s: device %d is negative", fn, device);
    const int n = tf_gpu_count();
    if (n > 0 && device >= n) return tf_fail(TF_ERR_ARG, "%s: GPU %d does not exist (GPUs 0..%d)", fn, device, n - 1);
    return TF_OK;
}

tf_status tf_gpu_describe(int device, char *buf, size_t len)
{
    if (!buf && len) return tf_fail(TF_ERR_ARG, "tf_gpu_describe: buf is NULL (len %zu)", len);
    if (buf && len) snprintf(buf, len, "none");
    TF_TRY(device_arg("tf_gpu_describe", device));
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_gpu_describe(device, buf, len);
    if (buf && len) snprintf(buf, len, "none");
    return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA backend: its module %s", why_not);
}

tf_status tf_gpu_copy_bandwidth(int device, double *bytes_per_s)
{
    if (!bytes_per_s) return tf_fail(TF_ERR_ARG, "tf_gpu_copy_bandwidth: bytes_per_s is NULL");
    *bytes_per_s = 0.0;
    TF_TRY(device_arg("tf_gpu_copy_bandwidth", device));
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_gpu_copy_bandwidth(device, bytes_per_s);
    if (bytes_per_s) *bytes_per_s = 0.0;
    return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA backend: its module %s", why_not);
}

tf_status tf_gpu_h2d_bandwidth(int device, double *bytes_per_s)
{
    if (!bytes_per_s) return tf_fail(TF_ERR_ARG, "tf_gpu_h2d_bandwidth: bytes_per_s is NULL");
    *bytes_per_s = 0.0;
    TF_TRY(device_arg("tf_gpu_h2d_bandwidth", device));
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_gpu_h2d_bandwidth(device, bytes_per_s);
    if (bytes_per_s) *bytes_per_s = 0.0;
    return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA backend: its module %s", why_not);
}

tf_status tf_cuda_plan_build(const tf_tensor *X, const tf_plan_opts *o, tf_plan *p)
{
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_cuda_plan_build(X, o, p);
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU plans need the CUDA backend, whose module %s", why_not);
}

tf_status tf_cuda_plan_build_multi(const tf_tensor *X, const tf_plan_opts *o, const tf_shards *sh, tf_plan *p)
{
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_cuda_plan_build_multi(X, o, sh, p);
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU plans need the CUDA backend, whose module %s", why_not);
}

tf_status tf_cuda_cpd_backend_create(const tf_tensor *X, const tf_cpd_opts *o, tf_cpd_backend *out)
{
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_cuda_cpd_backend_create(X, o, out);
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU CP-ALS needs the CUDA backend, whose module %s", why_not);
}

tf_status tf_cuda_cpd_backend_create_multi(const tf_tensor *X, const tf_cpd_opts *o, const tf_shards *sh,
                                           tf_cpd_backend *out)
{
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_cuda_cpd_backend_create_multi(X, o, sh, out);
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU CP-ALS needs the CUDA backend, whose module %s", why_not);
}

void tf_gpu_links(char *buf, size_t len)
{
    if (!buf || !len) return;
    const tf_cuda_api *a = tf_cuda_driver_visible() ? cuda() : NULL;
    if (a) a->tf_gpu_links(buf, len);
    else buf[0] = 0;
}

void tf_cuda_context_release(void *gpu)
{
    if (gpu) cuda()->tf_cuda_context_release(gpu); /* made by the module, so it is loaded */
}

tf_status tf_cuda_context_budget(tf_context *c, uint64_t *bytes)
{
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_cuda_context_budget(c, bytes);
    if (bytes) *bytes = 0;
    return tf_fail(TF_ERR_UNAVAILABLE, "no CUDA backend: its module %s", why_not);
}

void tf_cuda_versions(int *runtime, int *driver)
{
    const tf_cuda_api *a = cuda();
    if (a) {
        a->tf_cuda_versions(runtime, driver);
    } else {
        *runtime = 0;
        *driver = 0;
    }
}

tf_status tf_cuda_sddmm_plan_build(const tf_csr *S, uint64_t K, const tf_sddmm_opts *o, uint32_t npanels,
                                   tf_sddmm_panel *panels, tf_sddmm_gpu **out)
{
    const tf_cuda_api *a = cuda();
    *out = NULL;
    if (a) return a->tf_cuda_sddmm_plan_build(S, K, o, npanels, panels, out);
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU SDDMM needs the CUDA backend, whose module %s", why_not);
}

/* A plan exists only when the module made it, so it is loaded. */
tf_status tf_cuda_sddmm_plan_run(tf_sddmm_gpu *g, const tf_sddmm_part_operands *ops, int given_parts,
                                 const tf_sddmm_run_opts *ro)
{
    return api->tf_cuda_sddmm_plan_run(g, ops, given_parts, ro);
}

tf_status tf_cuda_sddmm_plan_time(tf_sddmm_gpu *g, const tf_sddmm_part_operands *ops, int given_parts, int warmup,
                                  int reps, double *times_ms, double *part_ms)
{
    return api->tf_cuda_sddmm_plan_time(g, ops, given_parts, warmup, reps, times_ms, part_ms);
}

void tf_cuda_sddmm_plan_free(tf_sddmm_gpu *g)
{
    if (g) api->tf_cuda_sddmm_plan_free(g);
}

/* Never loads the module: without it there is no tenfold GPU memory to ask about. */
int tf_cuda_memory_of(const void *p, int *device)
{
    if (!__atomic_load_n(&loaded, __ATOMIC_ACQUIRE) || !api) {
        if (device) *device = -1;
        return TF_CUDA_PTR_HOST;
    }
    return api->tf_cuda_memory_of(p, device);
}

tf_status tf_cuda_spttm(const tf_tensor *X, const tf_fibres *F, const tf_matrix *U, const tf_spttm_opts *o,
                        double *Y, int warmup, int reps, double *times_ms)
{
    const tf_cuda_api *a = cuda();
    if (a) return a->tf_cuda_spttm(X, F, U, o, Y, warmup, reps, times_ms);
    return tf_fail(TF_ERR_UNAVAILABLE, "GPU SpTTM needs the CUDA backend, whose module %s", why_not);
}
